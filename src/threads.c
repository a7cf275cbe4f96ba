/* One thread policy for every parallel region of the package.
 *
 * R decides the request (bochner_threads(): the option bochner.threads, or
 * every core R may use).  Here it is capped by what OpenMP allows in this
 * process (OMP_THREAD_LIMIT, the cores) and by the amount of work: a region
 * gets at most one thread per BOCHNER_MIN_WORK units of work (about
 * multiply-adds), so small work, such as predicting one row, runs on the
 * calling thread and starts no threads.  Regions never call R or a BLAS.
 *
 * bochner_parallel_blocks() is the one parallel loop of the package: blocks
 * of independent work, each done by exactly one thread, with a user-interrupt
 * check between groups of blocks (outside the parallel region).  Blocks
 * write disjoint outputs and each block's arithmetic does not depend on the
 * thread running it, so results do not depend on the number of threads. */
#include "bochner.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* About 50 microseconds of arithmetic: more than starting a thread costs. */
#define BOCHNER_MIN_WORK 131072.0

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

int bochner_threads_for(int nthreads, double work)
{
    double most = work / BOCHNER_MIN_WORK;
    if (most < 1.0) return 1;
    return most < (double) nthreads ? (int) most : nthreads;
}

void bochner_parallel_blocks(R_xlen_t nblocks, int nthreads, int per_check,
                             bochner_block_fn fn, void *ctx)
{
    if (nthreads > nblocks) nthreads = nblocks > 0 ? (int) nblocks : 1;
    if (per_check < 1) per_check = 1;
    R_xlen_t group = (R_xlen_t) per_check * nthreads;
    for (R_xlen_t g0 = 0; g0 < nblocks; g0 += group) {
        R_xlen_t g1 = nblocks - g0 < group ? nblocks : g0 + group;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic) if(nthreads > 1)
        for (R_xlen_t b = g0; b < g1; b++) fn(ctx, b, omp_get_thread_num());
#else
        for (R_xlen_t b = g0; b < g1; b++) fn(ctx, b, 0);
#endif
        R_CheckUserInterrupt();
    }
}

/* FALKON's thread choice (falkon.c, falkon_factor.c): a pass or solve under about 5 ms of arithmetic (2^24 multiply-adds) runs
 * on the calling thread: it opens several parallel regions, and each costs
 * a wake-up that such small work cannot repay (on a loaded machine, a wait
 * for the other thread's time slice: Vehicle's fit took 9 times its
 * one-thread CPU time on two threads). */
#define FALKON_MIN_THREADED_WORK 16777216.0
int bochner_falkon_threads(int nthreads, double work)
{
    return work < FALKON_MIN_THREADED_WORK ? 1 : nthreads;
}
