# falkon's held-out slice: its rows, the scores and errors on them that
# choose lambda and the iteration count, and the calibration of the
# probabilities fitted on them (R/fit-falkon-fit.R runs the fits).

# The held-out rows: scaled x, targets Y (one-hot for classes), weights and
# classes (integer codes, or NULL for regression); NULL without any.
falkon_heldout <- function(xs, resp, w, valid) {
  if (length(valid) == 0L) return(NULL)
  list(x = xs[valid, , drop = FALSE], Y = resp$Y[valid, , drop = FALSE], w = w[valid],
       cls = falkon_classes(resp, valid))
}

# The classes of rows 'rows' as integer codes, NULL for a regression.
falkon_classes <- function(resp, rows = seq_along(resp$y)) {
  if (resp$type != "regression") as.integer(resp$y[rows])
}

# The calibration of a classification's probabilities on the held-out rows
# (softmax_calibration()): their scores come from the fit kept, which never
# saw them.  NULL for regression or without a held-out slice.
falkon_calibrate <- function(res, val, levels) {
  if (is.null(val) || is.null(val$cls) || is.null(res$valid_scores)) return(NULL)
  softmax_calibration(res$valid_scores, val$cls, val$w, levels)
}

# Without a held-out slice (lambda and iter both given, or a slice of
# under 10 rows on a large set) the squared loss's scores are calibrated on the
# training rows' own, as rff_svm()'s and rff_ridge()'s defaults are: the
# softmax is then optimistic where the fit nearly interpolates (a small
# lambda), but every classification fit gives probabilities.  At most
# calibration_rows training rows, evenly spread (calibration_subset());
# rows(idx) returns the scaled training rows at those positions and their
# classes, in memory or fetched from the chunks, and their scores come from
# predict()'s own C product, so both fits calibrate on the same numbers.
# Weights wt are the training rows'.  The logistic loss keeps its own.
falkon_calibrate_training <- function(res, ntr, rows, wt, levels, nthreads) {
  keep <- calibration_subset(ntr)
  got <- rows(keep)
  prep <- list(centres = res$prep$centres, code = kernel_code(res$prep$kernel),
               par = kernel_parameters(res$prep$kernel))
  f <- falkon_kernel_predict(prep, got$x, res$alpha, nthreads)
  f <- sweep(f, 2L, res$offset, "+", check.margin = FALSE)
  cal <- softmax_calibration(f, got$cls, wt[keep], levels)
  cal$source <- "training"
  cal
}

# Each held-out row's loss under the fit's own criterion, weighted (mean
# weight 1), from its held-out scores f (offset included): the squared
# error (regression), whether it is misclassified (classes, squared loss)
# or its log-loss (logistic loss).  NULL without a held-out slice.
falkon_heldout_losses <- function(f, val, loss) {
  if (is.null(val) || is.null(f)) return(NULL)
  l <- if (loss == "logistic") {
    falkon_logloss_rows(f, falkon_logistic_targets(val$Y, val$w)$Y)
  } else if (is.null(val$cls)) {
    rowSums((f - val$Y)^2)
  } else {
    as.double(max.col(f, ties.method = "first") != val$cls)
  }
  l * (val$w / mean(val$w))
}

# Weights rescaled to mean 1 (NULL when all are 1, so the C passes skip
# them).
falkon_unit_weights <- function(w) {
  w <- w * (length(w) / sum(w))
  if (all(w == 1)) NULL else w
}

# k(X_val, C) for the held-out rows.
falkon_heldout_kernel <- function(prep, val, nthreads) {
  .Call(C_kernel_matrix, prep$code, prep$par, val$x, prep$centres, nthreads)
}

# Whether the centres are many for the memory budget: as many as make the
# factors of two candidate lambdas (or of the default candidates) too large
# to hold at once (falkon_sequential()).
falkon_lean <- function(m, control) {
  falkon_sequential(m, max(2L, length(control$lambdas)), control)
}

# The held-out scores k(X_val, C) alpha as a function of alpha: from
# k(X_val, C) held (nval x m), or with many centres (falkon_lean()) by
# evaluating the kernel on the held-out rows each time, which costs a small
# fraction of a pass over the training rows (nval of them) and saves the
# nval x m block (160 MB at m = 10^4).
falkon_heldout_scorer <- function(prep, val, control, nthreads) {
  if (falkon_lean(prep$m, control)) {
    return(function(alpha) falkon_kernel_predict(prep, val$x, alpha, nthreads))
  }
  Kv <- falkon_heldout_kernel(prep, val, nthreads)
  function(alpha) .Call(C_matprod, Kv, alpha, nthreads)
}

# The held-out error of scores f (nv x k): the weighted squared error for
# regression; for classes, the error rate plus a millionth of the squared
# error to break ties.  The squared error and the error rate are attributes
# "mse" and "rate", for falkon_progress().
falkon_heldout_error <- function(f, val) {
  mse <- sum(val$w * rowSums((f - val$Y)^2)) / sum(val$w)
  if (is.null(val$cls)) return(structure(mse, mse = mse, rate = Inf))
  wrong <- max.col(f, ties.method = "first") != val$cls
  rate <- sum(val$w * wrong) / sum(val$w)
  structure(rate + 1e-6 * mse, mse = mse, rate = rate)
}
