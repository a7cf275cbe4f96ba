#' Threads used by bochner
#'
#' The C routines run on `nthreads` OpenMP threads.  The default comes from
#' `getOption("bochner.threads")`; when that is unset, half the available
#' cores (at least one).  Requests are capped by the cores and by
#' `OMP_THREAD_LIMIT`.  Results never depend on the thread count: the work is
#' cut into the same blocks whatever the number of threads.
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
  max(1L, .Call(C_max_threads) %/% 2L)
}

check_threads <- function(nthreads) check_count(nthreads, "nthreads")
