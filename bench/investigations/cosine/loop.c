/* Loops for bench/cosine.R: the package's vectorised cosine (src/fastmath.c,
 * with its run-time dispatch) on a buffer that stays in cache, so the
 * timing is the arithmetic alone: no allocation, no page faults, no .Call
 * overhead per block.  Compiled by bench/cosine.R with R CMD SHLIB. */
#include "bochner.h"
#include <math.h>

void loop_cos_affine(double *x, int *n, int *reps, double *y)
{
    for (int r = 0; r < *reps; r++) bochner_cos_affine(y, x, *n, 0.25, 0.5);
}

void loop_sincos(double *x, int *n, int *reps, double *c, double *s)
{
    for (int r = 0; r < *reps; r++) bochner_sincos_scaled(c, s, x, *n, 0.5);
}

void loop_libm_cos(double *x, int *n, int *reps, double *y)
{
    for (int r = 0; r < *reps; r++)
        for (int i = 0; i < *n; i++) y[i] = 0.5 * cos(x[i] + 0.25);
}
