# rff_ridge()'s choice of lambda: a whole path from one tridiagonal
# reduction of the regularised system (src/ridge_path.c, on the package's
# own product: no LAPACK, the same under any BLAS), scored by generalised
# cross-validation or by exact leave-one-out, and the leave-one-out decision
# values at one lambda that calibrate its probabilities.
#
# Notation: Zs = W^(1/2) Zc and Ys = W^(1/2) Yc are the weighted, centred
# features and targets; A = Zs'Zs (primal) or K = Zs Zs' (dual) is reduced
# to T = Q'AQ (tridiagonal, Q kept as its Householder reflectors).  The
# eigenvalues e of T (those of A) and c = V'B (V the eigenvectors, B = Zs'Ys
# or Ys) come from QL on T without any eigenvector; GCV needs nothing else.
# Leave-one-out works on the rows u_i = Q'z_i (primal) or q_i = Q'e_i
# (dual) with (T + lambda I)^-1 by its LDL' factorisation: O(D) a row and
# lambda.

# lambda: "auto", one positive number, or a vector of them (a path).
ridge_check_lambda <- function(lambda) {
  if (is.character(lambda)) {
    if (length(lambda) != 1L || !identical(lambda, "auto")) {
      stop_arg("lambda", "must be \"auto\", a positive number, or a vector of them")
    }
    return(lambda)
  }
  if (!is.numeric(lambda) || length(lambda) < 1L || anyNA(lambda) ||
      any(!is.finite(lambda)) || any(lambda <= 0)) {
    stop_arg("lambda", "must be \"auto\", a positive number, or a vector of them")
  }
  if (length(lambda) == 1L) return(as.double(lambda))
  sort(unique(as.double(lambda)), decreasing = TRUE)
}

# The spectrum of the smaller side: eigenvalues e (decreasing, clipped at
# zero), c (primal: V'Zs'Ys; dual: diag(sqrt(e)) V'Ys, as P'Ys with
# P = V diag(sqrt(e))), and the reduction (T and Q's reflectors) that
# leave-one-out needs.
ridge_spectrum <- function(sys, nthreads = 1L) {
  primal <- sys$side == "primal"
  r <- .Call(C_ridge_spectrum, if (primal) sys$zz else sys$K, if (primal) sys$zy else sys$Ys,
             nthreads)
  e <- pmax(r$values, 0)
  r$e_off <- r$e          # T's off-diagonal; e is the spectrum from here on
  r$e <- e
  r$c <- if (primal) r$c else r$c * sqrt(e)
  r$values <- NULL
  r
}

# The default grid: from the trace of Zs'Zs (at least the largest
# eigenvalue: an almost constant fit) down to 1e-10 of it (almost
# interpolation), four values a decade.  The trace comes from the package's
# own products, not from LAPACK, so the grid, and with it the chosen
# lambda, is the same under any BLAS.
ridge_default_grid <- function(sys) {
  top <- if (sys$side == "primal") sum(diag(sys$zz)) else sum(diag(sys$K))
  grid <- max(top, .Machine$double.eps) * 10^seq(0, -10, by = -0.25)
  if (isTRUE(sys$single)) grid <- grid[grid >= ridge_floor(top, TRUE)]
  grid
}

# The smallest lambda the spectrum resolves (see ridge_extend_path()), for e_max (or a
# bound on it): 1e6 eps e_max in double; in single precision (?feature_precision) Z'Z's
# entries carry errors of about 2^-23 of their scale, and below 1e3 times that a float
# Z'Z + lambda I can lose its positive definiteness (a Cholesky failure at 4e-11 of the
# trace on tests/testthat/test-ridge-precision.R's data).
ridge_floor <- function(emax, single) {
  max(emax, .Machine$double.xmin) * if (single) 1e3 * 2^-23 else 1e6 * .Machine$double.eps
}

# The path: for each lambda the effective degrees of freedom (the trace of
# the hat matrix, the unpenalised intercept included) and the criterion,
# the chosen index as attribute "chosen".
# criterion "auto": GCV where it is reliable, leave-one-out where not.  GCV
# replaces each leverage h_ii by their mean df / n; near interpolation
# (df close to n, as with fewer rows than features) RSS and (1 - df/n)^2
# vanish together and GCV wrongly favours lambda -> 0.  So when GCV's choice
# has df above n / 10, the exact leave-one-out decides.
# 'lambda' and the path's lambdas are per row (see ridge_rows()); the
# system is scored at rows * lambda.  'loo' gives the leave-one-out sums of
# a grid: ridge_loo_source() in memory, a pass over the chunks on them.
ridge_path <- function(spec, sys, lambda, criterion, loo, weights, rows, who = ridge_who) {
  auto <- is.character(lambda)
  at <- function(grid, criterion) ridge_path_at(spec, sys, grid, criterion, loo, weights)
  path <- at(if (auto) ridge_default_grid(sys) else lambda * rows, criterion)
  if (auto) path <- ridge_extend_path(path, spec, function(grid) at(grid, names(path)[3L]),
                                      isTRUE(sys$single))
  path$lambda <- if (auto) path$lambda / rows else lambda   # a given grid exactly as given
  ridge_warn_edge(path, auto, who)
  path
}

# lambda is on the scale of a mean over the rows, as falkon's and glmnet's:
# the normal equations hold sums of squares over 'rows' rows (the total case
# weight), so the penalty they take is rows * lambda.
ridge_rows <- function(n, weights) if (is.null(weights)) n else sum(weights)

# lambda (per row): the one given, or the path's choice; the path, or NULL
# (always = TRUE: a path even of one given lambda, for its criterion).
# 'who' names the caller and its features in the warnings (ridge_warn_edge()).
ridge_choose <- function(sys, lambda, criterion, loo, weights, nthreads, rows, who = ridge_who,
                         always = FALSE) {
  if (!always && length(lambda) == 1L && !is.character(lambda)) {
    return(list(lambda = lambda, path = NULL))
  }
  spec <- ridge_spectrum(sys, nthreads)
  path <- ridge_path(spec, sys, lambda, criterion, loo, weights, rows, who)
  list(lambda = path$lambda[attr(path, "chosen")], path = path, spec = spec)
}

ridge_path_at <- function(spec, sys, grid, criterion, loo, weights) {
  df <- 1 + vapply(grid, function(l) sum(spec$e / (spec$e + l)), 0)
  if (criterion != "loo") {
    score <- ridge_gcv(spec, sys, grid, df, weights)
    nr <- if (is.null(weights)) sys$rows else sum(weights > 0)
    if (criterion == "auto") criterion <- if (df[which.min(score)] <= nr / 10) "gcv" else "loo"
  }
  if (criterion == "loo") score <- loo(spec, grid) / sys$n
  path <- data.frame(lambda = grid, df = df, score = score)
  names(path)[3L] <- criterion
  attr(path, "chosen") <- which.min(score)
  path
}

# The default grid extends itself, a decade (four values) at a time, while
# its choice sits at an edge.  Downwards only to the floor the spectrum
# resolves: the eigenvalues carry an absolute error of about eps times the
# largest (src/ridge_path.c), so a lambda below 1e6 eps e_max (2e-10 of it)
# weighs those errors by more than 1e-6 in (e + lambda)^-1, and the
# leave-one-out residuals, ratios of two vanishing quantities near
# interpolation, lose every digit: at 1e3 eps e_max they scored 1e-11 where
# the brute-force leave-one-out error was 0.06 (d = 10, n = 50).
# Upwards (a choice at the trace: an almost constant fit) two decades at
# most: beyond them the fit is the constant.  'more' scores a grid with the
# criterion already chosen.
ridge_extend_path <- function(path, spec, more, single = FALSE) {
  floor <- ridge_floor(max(spec$e), single)
  top <- path$lambda[1L]
  step <- 10^-(1:4 / 4)
  repeat {
    k <- attr(path, "chosen")
    n <- nrow(path)
    if (k == n && path$lambda[n] * step[4L] >= floor) {
      extra <- more(path$lambda[n] * step)
      path <- rbind(path, extra)
    } else if (k == 1L && path$lambda[1L] < 100 * top) {
      extra <- more(rev(path$lambda[1L] / step))
      path <- rbind(extra, path)
    } else {
      break
    }
    rownames(path) <- NULL
    attr(path, "chosen") <- which.min(path[[3L]])
  }
  path
}

# A choice at an edge of the path is a choice the path could not make:
# say so, with what to change.  who: the function, and what makes its
# features (falkon_fit_loo() fits the path on its centres' features).
ridge_who <- c(fun = "rff_ridge", size = "fewer features (D)")
ridge_warn_edge <- function(path, auto, who = ridge_who) {
  k <- attr(path, "chosen")
  n <- nrow(path)
  if (n < 2L || (k != 1L && k != n)) return(invisible())
  lam <- format(path$lambda[k], digits = 3)
  if (!auto) {
    # falkon's leave-one-out grid is control$lambdas, its lambda already "auto"
    given <- "grid" %in% names(who)
    warning(sprintf("%s: lambda = %s, the %s value of %s, was chosen: ", who[["fun"]], lam,
                    if (k == 1L) "largest" else "smallest", if (given) who[["grid"]] else "'lambda'"),
            "the best lambda may lie beyond the grid; extend it",
            if (!given) " or use lambda = \"auto\"", call. = FALSE)
  } else if (k == n) {
    warning(sprintf("%s: lambda = %s, the smallest the features resolve, was chosen: ",
                    who[["fun"]], lam),
            "the fit interpolates the training data; a wider bandwidth (a larger sigma), ",
            who[["size"]], " or more rows usually predict better", call. = FALSE)
  } else {
    warning(sprintf("%s: lambda = %s, the largest of the path, was chosen: ", who[["fun"]], lam),
            "the features explain almost none of the response; try a narrower bandwidth ",
            "(a smaller sigma) or another kernel", call. = FALSE)
  }
  invisible()
}

# GCV: the weighted residual sum of squares over the total weight, divided
# by (1 - df / n)^2, n the rows of positive weight, summed over the target
# columns.  RSS(lambda) = yy - sum_j c_j^2 (e_j + 2 lambda) / (e_j + lambda)^2.
ridge_gcv <- function(spec, sys, grid, df, weights) {
  nr <- if (is.null(weights)) sys$rows else sum(weights > 0)
  c2 <- rowSums(spec$c^2)
  vapply(seq_along(grid), function(i) {
    l <- grid[i]
    rss <- max(sum(sys$yy) - sum(c2 * (spec$e + 2 * l) / (spec$e + l)^2), 0)
    if (df[i] >= nr) return(Inf)
    (rss / sys$n) / (1 - df[i] / nr)^2
  }, 0)
}

# Exact leave-one-out: sum_i w_i (r_i / (1 - h_ii))^2 / sum(w) over the rows
# of positive weight, for every lambda of the grid, from one more pass over
# the data.  Primal: the rows u_i = Q'z_i a block at a time, h_ii =
# u_i'(T + lambda I)^-1 u_i + w_i / n and fitted u_i'(T + lambda I)^-1 Q'Zs'Ys.
# Dual: the rows q_i of Q, H = K (K + lambda I)^-1, so that
# 1 - h_ii = lambda q_i'(T + lambda I)^-1 q_i - w_i / n and the residual is
# lambda q_i'(T + lambda I)^-1 Q'Ys.
# The sums over the rows (not yet divided by n) are what a pass returns:
# ridge_loo_rows() over the rows in memory, and over each chunk's rows on
# data_chunks(), added in chunk order.
ridge_loo_rows <- function(spec, sys, grid, map, xs, Y, weights, nthreads) {
  if (sys$side == "dual") {
    w <- if (is.null(weights)) rep(1, nrow(sys$Ys)) else weights
    return(ridge_loo_block(spec, sys, grid, diag(nrow(sys$Ys)), sys$Ys, w, nthreads))
  }
  total <- numeric(length(grid))
  ridge_loo_each_block(sys, map, xs, Y, weights, nthreads, function(idx, Zs, Ys, w) {
    total <<- total + ridge_loo_block(spec, sys, grid, Zs, Ys, w, nthreads)
  })
  total
}

# f(idx, Zs, Ys, w) for each block of rows idx of the primal system, with
# its weighted, centred features Zs and targets Ys and its weights w.
ridge_loo_each_block <- function(sys, map, xs, Y, weights, nthreads, f) {
  for (idx in row_blocks(nrow(xs), ridge_block_rows(nrow(xs), map$n_features))) {
    w <- if (is.null(weights)) rep(1, length(idx)) else weights[idx]
    Zs <- ridge_scaled_block(map, xs, idx, sys$zbar, w, nthreads)
    Ys <- sweep(Y[idx, , drop = FALSE], 2L, sys$ybar, check.margin = FALSE) * sqrt(w)
    f(idx, Zs, Ys, w)
  }
}

# The in-memory fit's leave-one-out sums: a function of the spectrum and
# the grid, for ridge_path().
ridge_loo_source <- function(sys, map, xs, Y, weights, nthreads) {
  function(spec, grid) ridge_loo_rows(spec, sys, grid, map, xs, Y, weights, nthreads)
}

# One block's leave-one-out residuals (weighted, of the centred targets), a
# matrix for each lambda of the grid: X holds the block's weighted, centred
# features Zs (primal) or the identity's columns (dual).
ridge_loo_residuals <- function(spec, sys, grid, X, Ys, w, nthreads) {
  dual <- sys$side == "dual"
  U <- .Call(C_ridge_q_rows, X, spec$V, spec$T, nthreads)
  rows <- .Call(C_ridge_path_rows, spec$d, spec$e_off, grid, U, spec$g, nthreads)
  m <- ncol(Ys)
  lapply(seq_along(grid), function(i) {
    cross <- rows$cross[, (i - 1L) * m + seq_len(m), drop = FALSE]
    if (dual) grid[i] * cross / (grid[i] * rows$quad[, i] - w / sys$n)
    else (Ys - cross) / (1 - rows$quad[, i] - w / sys$n)
  })
}

# One block's sums of squared leave-one-out residuals over its rows of
# positive weight, per lambda of the grid.
ridge_loo_block <- function(spec, sys, grid, X, Ys, w, nthreads) {
  keep <- w > 0
  vapply(ridge_loo_residuals(spec, sys, grid, X, Ys, w, nthreads),
         function(r) sum(r[keep, , drop = FALSE]^2), 0)
}

# The leave-one-out decision values at one penalty (rows * lambda) from the
# path's spectrum, in the primal: Y - e, e the leave-one-out residuals that
# ridge_loo_block() sums (no m x m inverse: O(m^2) a row, as the path).  NA
# for rows of zero weight.
ridge_loo_values <- function(spec, sys, penalty, map, xs, Y, weights, nthreads) {
  out <- matrix(NA_real_, nrow(xs), ncol(Y))
  ridge_loo_each_block(sys, map, xs, Y, weights, nthreads, function(idx, Zs, Ys, w) {
    r <- ridge_loo_residuals(spec, sys, penalty, Zs, Ys, w, nthreads)[[1L]]
    out[idx, ] <<- Y[idx, , drop = FALSE] - r / sqrt(w)
  })
  w <- if (is.null(weights)) rep(1, nrow(xs)) else weights
  out[w == 0, ] <- NA_real_
  out
}

# W^(1/2) (Z - zbar) for the rows idx.
ridge_scaled_block <- function(map, xs, idx, zbar, w, nthreads) {
  Z <- transform_features(map, xs[idx, , drop = FALSE], nthreads)
  sweep(Z, 2L, zbar, check.margin = FALSE) * sqrt(w)
}

# The leave-one-out decision values at one lambda, from the fitted ones:
# y_i - (y_i - fitted_i) / (1 - h_ii), with the leverages h_ii of the
# weighted hat matrix (the intercept's w_i / sum(w) included), computed on
# the package's Cholesky and products.  NA for rows of zero weight.
ridge_loo_scores <- function(sys, lambda, fitted, Y, map, xs, weights, nthreads) {
  n <- nrow(xs)
  w <- if (is.null(weights)) rep(1, n) else weights
  h <- if (sys$side == "dual") {
    diag(ridge_cholesky_solve(sys$K, sys$K, lambda, nthreads))
  } else {
    M <- ridge_cholesky_solve(sys$zz, diag(nrow(sys$zz)), lambda, nthreads)
    unlist(lapply(row_blocks(n, ridge_block_rows(n, map$n_features)), function(idx) {
      Zs <- ridge_scaled_block(map, xs, idx, sys$zbar, w[idx], nthreads)
      rowSums(.Call(C_matprod, Zs, M, nthreads) * Zs)
    }))
  }
  h <- h + w / sys$n
  loo <- Y - (Y - fitted) / (1 - h)
  loo[w == 0, ] <- NA_real_
  loo
}
