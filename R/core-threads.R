#' Threads used by bochner
#'
#' The C routines run on OpenMP threads.  Every function that computes takes
#' `nthreads`, whose default is `bochner_threads()`: the option
#' `bochner.threads` when set, otherwise every core this R process may use.
#' That is the number of cores, capped by the environment variables
#' `OMP_THREAD_LIMIT` and `OMP_NUM_THREADS` when they are set, and by 2 under
#' `R CMD check` (which sets `_R_CHECK_LIMIT_CORES_`, as CRAN asks).
#'
#' Each parallel region then takes at most one thread per unit of work worth
#' starting a thread for (about 50 microseconds of arithmetic), so small jobs,
#' such as predicting a few rows, run on the calling thread alone.  Results
#' never depend on the thread count: the work is cut into the same blocks
#' whatever the number of threads, and every sum runs in a fixed order.
#' Heavy products use the package's own kernel, never R's BLAS, so a
#' threaded BLAS (OpenBLAS, MKL) neither changes the results nor competes
#' with bochner's threads.
#'
#' @return The default number of threads, an integer.
#' @examples
#' bochner_threads()
#' old <- options(bochner.threads = 1)
#' bochner_threads()
#' options(old)
#' @export
bochner_threads <- function() {
  opt <- getOption("bochner.threads")
  if (!is.null(opt)) return(check_count(opt, "options(bochner.threads)"))
  .Call(C_max_threads)
}

check_threads <- function(nthreads) check_count(nthreads, "nthreads")
