/* .Call wrappers: the machine as R's threads and memory guard see it: the address-space limit
 * (memory.c's old wrapper) and the cores OpenMP may use (threads.c's).
 * Each checks and converts R arguments, allocates its result and calls the core
 * (bochner.h); the arithmetic is the core's. */
#include "api.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

/* .Call(C_address_space_limit): the process's soft limit on its address
 * space (ulimit -v) in bytes, Inf where there is none.  The memory guard
 * (R/checks.R) counts it with the memory the system has available: under a
 * lower limit an allocation fails long before the machine runs out. */
SEXP bochner_address_space_limit_call(void)
{
    double limit = R_PosInf;
#if (defined(__unix__) || defined(__APPLE__)) && defined(RLIMIT_AS)
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        limit = (double) rl.rlim_cur;
#endif
    return ScalarReal(limit);
}

/* The cores R may use here: OpenMP's view (the cores, OMP_THREAD_LIMIT,
 * OMP_NUM_THREADS when set), and 2 under R CMD check's
 * _R_CHECK_LIMIT_CORES_ (CRAN's policy for checks). */
SEXP bochner_max_threads(void)
{
    int n = 1;
#ifdef _OPENMP
    int limit = omp_get_thread_limit(), procs = omp_get_num_procs();
    n = limit < procs ? limit : procs;
    const char *env = getenv("OMP_NUM_THREADS");
    if (env && *env) {
        int m = omp_get_max_threads();
        if (m >= 1 && m < n) n = m;
    }
    const char *check = getenv("_R_CHECK_LIMIT_CORES_");
    if (check && *check && strcmp(check, "false") != 0 && strcmp(check, "FALSE") != 0 && n > 2)
        n = 2;
#endif
    return ScalarInteger(n);
}
