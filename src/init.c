/* Registration of the .Call entry points (exact argument counts). */
#include "bochner.h"
#include <R_ext/Rdynload.h>

#define CALLDEF(name, fun, n) {name, (DL_FUNC) &fun, n}

static const R_CallMethodDef call_methods[] = {
    CALLDEF("kernel_matrix", bochner_kernel_matrix_call, 5),
    CALLDEF("spectral_sample", bochner_spectral_sample_call, 4),
    CALLDEF("rff_transform", bochner_rff_transform_call, 5),
    CALLDEF("fast_sincos", bochner_fast_sincos, 1),
    CALLDEF("max_threads", bochner_max_threads, 0),
    CALLDEF("fft", bochner_fft_call, 2),
    CALLDEF("projection_transform", bochner_projection_transform_call, 7),
    CALLDEF("tensorsketch_transform", bochner_tensorsketch_transform_call, 7),
    CALLDEF("min_transform", bochner_min_transform_call, 5),
    {NULL, NULL, 0}
};

void R_init_bochner(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
