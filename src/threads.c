/* One thread policy for every parallel region of the package.
 *
 * R decides the request (bochner_threads(): the option bochner.threads, or
 * every core R may use).  Here it is capped by what OpenMP allows in this
 * process (OMP_THREAD_LIMIT, the cores) and by the amount of work: a region
 * gets at most one thread per BOCHNER_MIN_WORK units of work (about
 * multiply-adds), so small work, such as predicting one row, runs on the
 * calling thread and starts no threads.  Blocks never call R or a BLAS.
 *
 * bochner_parallel_blocks() is the one parallel loop of the package: blocks
 * of independent work, each done by exactly one thread; between its own
 * blocks R's thread (and it alone) checks for a user interrupt without
 * jumping (R_ToplevelExec()).  Blocks write disjoint outputs and each
 * block's arithmetic does not depend on the thread running it, so results
 * do not depend on the number of threads. */
#include "bochner.h"
#include <stdlib.h>
#include <string.h>
#include <R_ext/GraphicsEngine.h>   /* R_interrupts_pending */
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

#ifdef _OPENMP
static void check_interrupt(void *unused)
{
    (void) unused;
    R_CheckUserInterrupt();
}

/* Whether the user pressed Ctrl-C: R_CheckUserInterrupt() under R_ToplevelExec(), which
 * returns instead of jumping (no jump may leave a parallel region).  Main thread only. */
static int interrupt_pending(void)
{
    return R_ToplevelExec(check_interrupt, NULL) == FALSE;
}

/* The interrupt interrupt_pending() took, raised again after the region: pending once more
 * (R_interrupts_pending, from R's graphics-device header), so that R_CheckUserInterrupt()
 * signals the same condition of class "interrupt" as Ctrl-C on one thread does, which
 * tryCatch(interrupt = ) catches. */
static void stop_interrupted(void)
{
    R_interrupts_pending = 1;
    R_CheckUserInterrupt();
    error("interrupted by the user");     /* interrupts suspended: not reached otherwise */
}
#endif

void bochner_parallel_blocks(R_xlen_t nblocks, int nthreads, int per_check,
                             bochner_block_fn fn, void *ctx)
{
    if (nthreads > nblocks) nthreads = nblocks > 0 ? (int) nblocks : 1;
    if (per_check < 1) per_check = 1;
#ifdef _OPENMP
    if (nthreads > 1 && !omp_in_parallel()) {
        /* One region, the blocks handed out one at a time: a barrier every group of
         * blocks (for the interrupt check) left a thread idle for up to a block at each,
         * 6-8 % of a 2000 x 2000 product's 81 tiles on two threads.  The calling thread
         * (thread 0, R's) looks for an interrupt every per_check of its blocks; the
         * others stop taking blocks once it has seen one. */
        R_xlen_t next = 0;
        int stop = 0;
#pragma omp parallel num_threads(nthreads)
        {
            const int th = omp_get_thread_num();
            int since = 0;
            for (;;) {
                R_xlen_t b;
                int halt;
#pragma omp atomic capture
                b = next++;
#pragma omp atomic read
                halt = stop;
                if (b >= nblocks || halt) break;
                fn(ctx, b, th);
                if (th == 0 && ++since >= per_check) {
                    since = 0;
                    if (interrupt_pending()) {
#pragma omp atomic write
                        stop = 1;
                    }
                }
            }
        }
        if (stop) stop_interrupted();
        return;
    }
    const int main_thread = !omp_in_parallel();   /* R's own thread, not a region's */
#else
    const int main_thread = 1;
#endif
    for (R_xlen_t b = 0; b < nblocks; b++) {
        fn(ctx, b, 0);
        if (main_thread && (b + 1) % per_check == 0) R_CheckUserInterrupt();
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
