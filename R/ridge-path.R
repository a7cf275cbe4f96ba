# rff_ridge()'s choice of lambda: a whole path from one eigendecomposition
# of the regularised system, scored by generalised cross-validation or by
# exact leave-one-out, and the leave-one-out decision values at one lambda
# that calibrate its probabilities.
#
# Notation: Zs = W^(1/2) Zc and Ys = W^(1/2) Yc are the weighted, centred
# features and targets; A = Zs'Zs = V diag(e) V' (primal) or
# K = Zs Zs' = U diag(e) U' (dual) share their non-zero eigenvalues e.
# With P = Zs V (primal) or U diag(sqrt(e)) (dual), P'P = diag(e), and at
# penalty lambda the fitted Ys are P diag(1 / (e + lambda)) c, c = P'Ys.

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

# The eigendecomposition of the smaller side, by LAPACK: it only chooses
# lambda from a grid (the fit itself is then solved by the package's
# Cholesky, the same for any BLAS).
ridge_spectrum <- function(sys) {
  if (sys$side == "primal") {
    ev <- eigen(sys$zz, symmetric = TRUE)
    e <- pmax(ev$values, 0)
    list(e = e, V = ev$vectors, c = crossprod(ev$vectors, sys$zy))
  } else {
    ev <- eigen(sys$K, symmetric = TRUE)
    e <- pmax(ev$values, 0)
    P <- ev$vectors * rep(sqrt(e), each = nrow(ev$vectors))
    list(e = e, P = P, c = crossprod(P, sys$Ys))
  }
}

# The default grid: from the trace of Zs'Zs (at least the largest
# eigenvalue: an almost constant fit) down to 1e-10 of it (almost
# interpolation), four values a decade.  The trace comes from the package's
# own products, not from LAPACK, so the grid, and with it the chosen
# lambda, is the same under any BLAS.
ridge_default_grid <- function(sys) {
  top <- if (sys$side == "primal") sum(diag(sys$zz)) else sum(diag(sys$K))
  max(top, .Machine$double.eps) * 10^seq(0, -10, by = -0.25)
}

# The path: for each lambda the effective degrees of freedom (the trace of
# the hat matrix, the unpenalised intercept included) and the criterion,
# the chosen index as attribute "chosen".
# criterion "auto": GCV where it is reliable, leave-one-out where not.  GCV
# replaces each leverage h_ii by their mean df / n; near interpolation
# (df close to n, as with fewer rows than features) RSS and (1 - df/n)^2
# vanish together and GCV wrongly favours lambda -> 0.  So when GCV's choice
# has df above n / 10, the exact leave-one-out decides.
ridge_path <- function(spec, sys, lambda, criterion, map, xs, Y, weights, nthreads) {
  grid <- if (is.character(lambda)) ridge_default_grid(sys) else lambda
  df <- 1 + vapply(grid, function(l) sum(spec$e / (spec$e + l)), 0)
  if (criterion != "loo") {
    score <- ridge_gcv(spec, sys, grid, df, weights)
    nr <- if (is.null(weights)) sys$rows else sum(weights > 0)
    if (criterion == "auto") criterion <- if (df[which.min(score)] <= nr / 10) "gcv" else "loo"
  }
  if (criterion == "loo") score <- ridge_loo_path(spec, sys, grid, map, xs, Y, weights, nthreads)
  path <- data.frame(lambda = grid, df = df, score = score)
  names(path)[3L] <- criterion
  attr(path, "chosen") <- which.min(score)
  path
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
# the data (primal: the rows of P a block at a time; dual: P itself).
ridge_loo_path <- function(spec, sys, grid, map, xs, Y, weights, nthreads) {
  total <- numeric(length(grid))
  inv <- outer(spec$e, grid, function(e, l) 1 / (e + l))
  # products on the package's kernel (R's %*% with the reference BLAS is
  # ~30 times slower)
  mm <- function(a, b) .Call(C_matprod, a, b, nthreads)
  coef <- do.call(cbind, lapply(seq_along(grid), function(i) spec$c * inv[, i]))
  m <- ncol(spec$c)
  add_block <- function(P, Ys, w) {
    H <- mm(P^2, inv) + w / sys$n
    fitted_all <- mm(P, coef)
    for (i in seq_along(grid)) {
      fitted <- fitted_all[, (i - 1L) * m + seq_len(m), drop = FALSE]
      keep <- w > 0
      r <- (Ys - fitted)[keep, , drop = FALSE] / (1 - H[keep, i])
      total[i] <<- total[i] + sum(r^2)
    }
  }
  if (sys$side == "dual") {
    w <- if (is.null(weights)) rep(1, nrow(sys$Ys)) else weights
    add_block(spec$P, sys$Ys, w)
  } else {
    for (idx in row_blocks(nrow(xs), ridge_block_rows(nrow(xs), map$n_features))) {
      w <- if (is.null(weights)) rep(1, length(idx)) else weights[idx]
      Zs <- ridge_scaled_block(map, xs, idx, sys$zbar, w, nthreads)
      Ys <- sweep(Y[idx, , drop = FALSE], 2L, sys$ybar, check.margin = FALSE) * sqrt(w)
      add_block(mm(Zs, spec$V), Ys, w)
    }
  }
  total / sys$n
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
