# falkon() on small training sets: lambda by exact leave-one-out over all
# the rows, the system solved exactly, no held-out slice.
#
# A held-out slice of 10 % chooses lambda and the iteration count on large
# sets; on small ones it is tens of rows, and its choice is noise (on
# BreastCancer's 200 rows a slice of 20 whose error rate did not move for
# three iterations stopped CG after the first: 27 % test error against 4 %),
# besides leaving those rows out of the fit.  Without any slice (fewer than
# 10 rows to hold out) the fit used to take 1e-6 and interpolate.  On at
# most control$loo_rows rows the Nystrom system is small (m <= 1118 centres
# by default), and with the centres' features Z = K_nm N, for any N with
# N N' = K_mm^-1 (falkon_loo_map(): T^-1 of the fit's own Cholesky factor),
# FALKON's estimator alpha = (K_nm' W K_nm + n lambda K_mm)^-1 K_nm' W y is
# ridge regression on Z with penalty n lambda, alpha = N beta: rff_ridge()'s
# exact leave-one-out path chooses lambda on every row, and the
# leave-one-out scores at it calibrate the class probabilities, as the
# held-out slice's scores do.  The one difference from the CG fit is the
# intercept, unpenalised in feature space (offset ybar - zbar' beta).
# Evidence: bench/investigations/falkon-small.md.

# Whether falkon_fit_loo() fits: the squared loss with lambda and iter to
# choose, on at most control$loo_rows rows, or on too few to hold a slice
# out (up to falkon_loo_max_rows; beyond, with a tiny control$validation or
# max_validation, the fixed fallback lambda stays).  A learned kernel
# (tune) is then learned on every row and judged against the rule's by the
# two fits' leave-one-out errors (falkon_keep_better()).  In memory and on
# chunks alike.
falkon_loo_applies <- function(n, loss, lambda, iter, control) {
  nv <- falkon_validation_rows(n, control)
  few <- (nv < falkon_min_validation || n - nv < falkon_min_validation) &&
    n <= falkon_loo_max_rows
  loss == "squared" && identical(lambda, "auto") &&
    identical(iter, "auto") && (few || n <= control$loo_rows)
}
falkon_loo_max_rows <- 2000

# The leave-one-out fit's candidate lambdas: rff_ridge()'s grid (41 values
# or more, extended past an edge) in place of falkon_control()'s three
# default candidates, which suit a held-out CG path; candidates the user
# gave are the grid as given.  Read from the user's control once, at the
# entry (falkon_control_list()): a tuned fit's control$lambdas is the
# learned lambda, and the fit at the learned kernel still chooses its own
# by leave-one-out, as the rule's fit it is judged against does.
falkon_loo_grid <- function(control) {
  if (isTRUE(all.equal(control$lambdas, sort(eval(formals(falkon_control)$lambdas),
                                            decreasing = TRUE)))) "auto"
  else control$lambdas
}

# The fit on rows xs (scaled, in memory) with targets Y (n x k), classes
# cls (integer codes, or NULL), weights w (mean 1), at m centres (a count,
# drawn by the landmark rule from the current random stream, or a matrix of
# scaled centres) of a resolved kernel, lambda from 'grid' (falkon_loo_grid()):
# the 'out' list of falkon_fit_memory().
falkon_fit_loo <- function(xs, Y, cls, w, levels, m, kernel, landmarks, scaling, grid,
                           nthreads) {
  n <- nrow(xs)
  mc <- if (is.matrix(m)) nrow(m) else min(m, n)
  check_memory(list("the centres' factor, its inverse and their copies" = c(4 * mc, mc),
                    "the normal equations and their reduction" = c(3 * mc, mc),
                    "the features of the rows, and a block's copy" = c(2 * n, mc),
                    "the scaled data and the scores" = c(n, ncol(xs) + 3 * ncol(Y))),
               "falkon()", "m", advice = "use fewer centres")
  centres <- falkon_centres(m, xs, kernel, landmarks, scaling, nthreads)
  map <- falkon_loo_map(kernel, centres, landmarks, nthreads)
  # the features once (n x m, at most loo_rows x m), for the normal equations, the
  # path, the scores and the leave-one-out values alike
  Z <- transform_features(map, xs, nthreads)
  held <- held_features(map$n_features)
  weights <- if (all(w == 1)) NULL else w
  sys <- if (n >= map$n_features) ridge_primal_system(held, Z, Y, weights, nthreads)
         else ridge_dual_system(held, Z, Y, weights, nthreads)
  rows <- ridge_rows(n, weights)
  chosen <- ridge_choose(sys, grid, "loo", ridge_loo_source(sys, held, Z, Y, weights, nthreads),
                         weights, nthreads, rows,
                         who = c(fun = "falkon", size = "fewer centres (m)",
                                 grid = "control$lambdas"), always = TRUE)
  sol <- ridge_solve(sys, rows * chosen$lambda, nthreads)
  scores <- feature_decision(held, Z, sol$beta, sol$intercept, nthreads)
  calibration <- if (!is.null(cls)) {
    penalty <- rows * chosen$lambda
    # more centres given than rows: the dual system, whose leverages come from its n x n
    # inverse (rff_ridge()'s way)
    loo <- if (sys$side == "primal") {
      ridge_loo_values(chosen$spec, sys, penalty, held, Z, Y, weights, nthreads)
    } else ridge_loo_scores(sys, penalty, scores, Y, held, Z, weights, nthreads)
    softmax_calibration(loo, cls, w, levels)
  }
  list(alpha = .Call(C_matprod, map$normalization, sol$beta, nthreads),
       offset = sol$intercept,
       prep = list(centres = centres, kernel = kernel, m = nrow(centres)),
       lambda = chosen$lambda, iter = NA_integer_, steps = NULL, validation = chosen$path,
       n_train = n, scores = scores, calibration = calibration,
       # the mean squared leave-one-out residual at the chosen lambda: what
       # falkon_keep_better() compares between a learned kernel and the rule's
       heldout_loss = chosen$path$loo[attr(chosen$path, "chosen")])
}

# Whether a fit's validation path is falkon_fit_loo()'s (lambda, df, loo).
falkon_loo_path <- function(v) "loo" %in% names(v)

# The centres' features k(x, C) T^-1, T'T = K_mm + shift I the fit's own
# factor (falkon_prepare(): the package's threaded Cholesky, the shift
# raised until it succeeds, so duplicated centres need no care): any R with
# R R' = K_mm^-1 gives the same ridge fit, and this one costs m^3 / 3
# instead of an eigendecomposition (0.96 of a 3.1 s fit on 2000 of spam's
# rows, 1118 centres).  The rows are divided by an ARD kernel's length
# scales already (folded into the scaling): the map takes the unit kernel.
falkon_loo_map <- function(kernel, centres, landmarks, nthreads) {
  m <- nrow(centres)
  prep <- falkon_prepare(kernel, centres, nthreads)
  structure(list(kernel = kernel_unit(kernel), m = m, landmarks = centres,
                 normalization = factor_solve(prep$F, diag(m), 0L, FALSE, nthreads),
                 rank = m, method = landmarks, tol = 0, n_features = as.integer(m)),
            class = c("nystrom_features", "random_features"))
}
