# falkon() on too few rows for a held-out slice: lambda by exact
# leave-one-out over all the rows, the system solved exactly.
#
# With fewer than 10 rows to hold out (control$validation of n; falkon_split())
# the fit used to take falkon_fallback_lambda, 1e-6, and CG to convergence:
# with m = n centres that interpolates the training rows (airquality's 83
# complete training rows: test RMSE 34 against rff_ridge's 16).  On so few rows the Nystrom system is small (m <= n < 100 by
# default), and with the centres' features Z = K_nm N, N = K_mm^(-1/2)
# (nystrom_map()), FALKON's estimator alpha = (K_nm' W K_nm + n lambda
# K_mm)^-1 K_nm' W y is ridge regression on Z with penalty n lambda,
# alpha = N beta: rff_ridge()'s exact leave-one-out path over its grid
# chooses lambda on every row, and its leave-one-out scores calibrate the
# class probabilities the held-out slice would have.  The one difference
# from the CG fit is the intercept, unpenalised in feature space here (the
# offset is ybar - zbar' beta, not ybar).

# Whether falkon_fit_loo() fits: the squared loss with lambda and iter to
# choose, no held-out slice, and rows few enough for an n x m feature
# matrix (with control$validation = 0 on many rows, the fallback stays).
falkon_loo_applies <- function(n, loss, lambda, iter, control) {
  nv <- falkon_validation_rows(n, control)
  loss == "squared" && identical(lambda, "auto") && identical(iter, "auto") &&
    (nv < falkon_min_validation || n - nv < falkon_min_validation) && n <= falkon_loo_max_rows
}
falkon_loo_max_rows <- 2000

# The fit on rows xs (scaled, in memory) with targets Y (n x k), classes
# cls (integer codes, or NULL), weights w (mean 1), at m centres (a count,
# drawn by the landmark rule from the current random stream, or a matrix of
# scaled centres) of a resolved kernel: the 'out' list of falkon_fit_memory().
falkon_fit_loo <- function(xs, Y, cls, w, levels, m, kernel, landmarks, scaling, nthreads) {
  n <- nrow(xs)
  mc <- if (is.matrix(m)) nrow(m) else min(m, n)
  check_memory(list("the centres' Gram matrix, its eigenvectors and N" = c(4 * mc, mc),
                    "the normal equations and their reduction" = c(3 * mc, mc),
                    "the features of a block of rows" = c(ridge_block_rows(n, mc), mc),
                    "the scaled data and the scores" = c(n, ncol(xs) + 3 * ncol(Y))),
               "falkon()", "m", advice = "use fewer centres")
  centres <- falkon_centres(m, xs, seq_len(n), kernel, landmarks, scaling, nthreads)
  # the rows are divided by an ARD kernel's length scales already (folded
  # into the scaling, falkon_fit_kernel()): the map takes the unit kernel
  map <- nystrom_map(kernel_unit(kernel), centres, landmarks, 1e-10, nthreads)
  weights <- if (all(w == 1)) NULL else w
  sys <- if (n >= map$n_features) ridge_primal_system(map, xs, Y, weights, nthreads)
         else ridge_dual_system(map, xs, Y, weights, nthreads)
  rows <- ridge_rows(n, weights)
  chosen <- ridge_choose(sys, "auto", "loo", ridge_loo_source(sys, map, xs, Y, weights, nthreads),
                         weights, nthreads, rows,
                         who = c(fun = "falkon", size = "fewer centres (m)"))
  sol <- ridge_solve(sys, rows * chosen$lambda, nthreads)
  scores <- feature_decision(map, xs, sol$beta, sol$intercept, nthreads)
  calibration <- if (!is.null(cls)) {
    loo <- ridge_loo_scores(sys, rows * chosen$lambda, scores, Y, map, xs, weights, nthreads)
    softmax_calibration(loo, cls, w, levels)
  }
  list(alpha = .Call(C_matprod, map$normalization, sol$beta, nthreads),
       offset = sol$intercept,
       prep = list(centres = centres, kernel = kernel, m = nrow(centres)),
       lambda = chosen$lambda, iter = NA_integer_, steps = NULL, validation = chosen$path,
       n_train = n, scores = scores, calibration = calibration)
}

# Whether a fit's validation path is falkon_fit_loo()'s (lambda, df, loo).
falkon_loo_path <- function(v) "loo" %in% names(v)
