# Progress bars for long fits and transforms.
#
# Base R's utils::txtProgressBar rather than cli or progress: it needs no
# new dependency (utils ships with R), it writes plain text that reads the
# same in a console, an Rscript log and a knitr chunk, and what cli adds
# (the delay before showing, throttling) is a few lines here.  A bar
# appears only once its work has run for `bochner.progress_delay` seconds
# (2 by default), so short calls print nothing, and it goes to stderr (a
# message stream, as R's own progress output), never into results.
#
# The internal API, for any loop of the package:
#   p <- progress_start(total, "what is being done")   # NULL when disabled
#   progress_tick(p, by = 1)                            # after each step
#   progress_done(p)                                     # completes and closes
# All three accept p = NULL, so callers need no tests of their own.

#' Progress bars
#'
#' Fits and transforms that run for more than a few seconds can show a text
#' progress bar (on the standard error stream): the normal equations of
#' [rff_ridge()] (one step per block of rows), and [predict()] on a
#' [random_features()] map for large data (computed in blocks of rows when
#' the bar is on; the features are the same).  The bar appears only after
#' the work has run for `getOption("bochner.progress_delay", 2)` seconds.
#'
#' Set `options(bochner.progress = TRUE)` to show bars, `FALSE` to never
#' show them.  Unset (the default), bars are shown in interactive sessions
#' only, so scripts, R CMD check and knitr output stay silent.
#'
#' @name bochner_progress
#' @examples
#' old <- options(bochner.progress = TRUE, bochner.progress_delay = 0)
#' x <- matrix(rnorm(20000), 10000, 2)
#' fit <- rff_ridge(x, x[, 1]^2, D = 256, seed = 1)   # a bar on stderr
#' options(old)
NULL

progress_enabled <- function() {
  opt <- getOption("bochner.progress")
  if (is.null(opt)) interactive() else isTRUE(opt)
}

progress_start <- function(total, what = "working") {
  if (!progress_enabled() || !(total >= 1)) return(NULL)
  delay <- getOption("bochner.progress_delay", 2)
  p <- new.env(parent = emptyenv())
  p$total <- as.double(total)
  p$done <- 0
  p$what <- what
  p$start <- proc.time()[["elapsed"]]
  p$delay <- if (is.numeric(delay) && length(delay) == 1L && !is.na(delay)) delay else 2
  p$bar <- NULL
  p
}

progress_tick <- function(p, by = 1) {
  if (is.null(p)) return(invisible(NULL))
  p$done <- min(p$total, p$done + by)
  if (is.null(p$bar)) {
    if (proc.time()[["elapsed"]] - p$start < p$delay) return(invisible(NULL))
    cat(p$what, "\n", sep = "", file = stderr())
    p$bar <- utils::txtProgressBar(min = 0, max = p$total, style = 3, file = stderr())
  }
  utils::setTxtProgressBar(p$bar, p$done)
  invisible(NULL)
}

progress_done <- function(p) {
  if (is.null(p) || is.null(p$bar)) return(invisible(NULL))
  utils::setTxtProgressBar(p$bar, p$total)
  close(p$bar)
  p$bar <- NULL
  invisible(NULL)
}

# Z = predict(map, x): in one call, or, when a progress bar may be wanted
# for a large transform (16 M entries or more: a second or more), in about
# 100 blocks of rows with a tick after each.  Every row's features depend
# on that row only, so the blocks give the same Z.
transform_with_progress <- function(map, x, nthreads) {
  n <- nrow(x)
  nf <- map$n_features
  p <- if (as.double(n) * nf >= 2^24 && n >= 512L) {
    progress_start(n, sprintf("Random features: %d x %d", n, nf))
  }
  if (is.null(p)) return(transform_features(map, x, nthreads))
  on.exit(progress_done(p))
  Z <- matrix(0, n, nf)
  # (sparse x: the frequencies transposed once for all blocks, R/sparse.R)
  with_sparse_frequencies(map, x, {
    for (idx in row_blocks(n, max(256L, ceiling(n / 100)))) {
      Z[idx, ] <- transform_features(map, x[idx, , drop = FALSE], nthreads)
      progress_tick(p, length(idx))
    }
  })
  Z
}
