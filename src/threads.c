/* Thread count: what R asked for, capped by what OpenMP allows here. */
#include "bochner.h"
#ifdef _OPENMP
#include <omp.h>
#endif

int bochner_nthreads(int requested)
{
    int n = requested < 1 ? 1 : requested;
#ifdef _OPENMP
    int limit = omp_get_thread_limit();
    int procs = omp_get_num_procs();
    if (n > limit) n = limit;
    if (n > procs) n = procs;
#else
    n = 1;
#endif
    return n;
}

SEXP bochner_max_threads(void)
{
#ifdef _OPENMP
    int limit = omp_get_thread_limit(), procs = omp_get_num_procs();
    return ScalarInteger(limit < procs ? limit : procs);
#else
    return ScalarInteger(1);
#endif
}
