# Explicit basis functions for the mean of rff_gp() (Rasmussen and
# Williams, 2006, sec. 2.7): y = f(x) + h(x)'b + e with a vague prior on b.
# In the limit of an infinite prior variance the likelihood is the
# restricted one (their eq. 2.45 in the limit),
#   L = -y_r'C^-1 y_r / 2 - log|C| / 2 - log|S| / 2 - (n - p) / 2 log 2 pi,
# S = H'C^-1 H, b_hat = S^-1 H'C^-1 y, y_r = y - H b_hat, and the
# coefficients' uncertainty enters the predictive variance exactly:
#   var = var_0(x) + r'S^-1 r,  r = h(x) - H'C^-1 k(x).
# With random features this is Bayesian linear regression on [Z, H] with
# the prior N(0, I) on Z's weights and a flat one on H's.

# The basis: NULL ("centred": the response centred on its mean, no basis),
# a constant, or a constant and one standardised column per input (the
# centring and scaling on the training rows change neither the fit nor the
# likelihood's optimum, but keep H'H well conditioned, e.g. inputs in years).
gp_basis_spec <- function(mean, xs) {
  if (mean == "centred") return(NULL)
  if (mean == "constant") return(list(type = "constant", p = 1L))
  sc <- apply(xs, 2L, stats::sd)
  sc[!(sc > 0)] <- 1
  list(type = mean, p = ncol(xs) * (1L + (mean == "quadratic")) + 1L, center = colMeans(xs),
       scale = sc)
}

gp_basis <- function(spec, xs) {
  if (spec$type == "constant") return(matrix(1, nrow(xs), 1L))
  z <- sweep(sweep(xs, 2L, spec$center, check.margin = FALSE), 2L, spec$scale, "/",
             check.margin = FALSE)
  if (spec$type == "quadratic") cbind(1, z, z^2) else cbind(1, z)
}

# Upper Cholesky factor and its inverse of a small p x p matrix.
gp_small_chol <- function(S, nthreads) .Call(C_gp_chol, S, nthreads)

# The restricted likelihood from the n x n form: cinv = C^-1, logdet_c =
# log|C|; y and H as the form sees them.  Returns the GLS coefficients, u =
# C^-1 y_r, the projected precision C^-1 - C^-1 H S^-1 H'C^-1 (for the
# gradient) and the likelihood.  NULL when S is not positive definite.
gp_basis_dual <- function(cinv, logdet_c, y, H, n, nthreads) {
  CH <- .Call(C_matprod, cinv, H, nthreads)
  sch <- gp_small_chol(gp_tcross(H, CH), nthreads)
  if (is.null(sch)) return(NULL)
  Sinv <- sch[[2L]] %*% t(sch[[2L]])
  beta <- drop(Sinv %*% gp_tcross(CH, matrix(y)))
  yr <- y - drop(H %*% beta)
  u <- drop(.Call(C_matprod, cinv, matrix(yr), nthreads))
  Pm <- cinv - .Call(C_matprod, CH, Sinv %*% t(CH), nthreads)
  p <- ncol(H)
  L <- -sum(yr * u) / 2 - logdet_c / 2 - sum(log(diag(sch[[1L]]))) - (n - p) / 2 * log(2 * pi)
  list(value = L, u = u, Pm = Pm, beta = beta, CH = CH, srinv = sch[[2L]])
}

gp_tcross <- function(a, b) t(a) %*% b   # p columns: O(n p^2), off the hot path

# The same from the m x m form (A = Z'Z + s_n^2 I, ainv = A^-1, alpha0 =
# A^-1 Z'y): with ZH = Z'H, B = A^-1 Z'H and S = (H'H - ZH'B) / s_n^2,
# b_hat = S^-1 (H'y - ZH'alpha0) / s_n^2, alpha = alpha0 - B b_hat, and
# L = L_0(y_r) - log|S| / 2 + p / 2 log 2 pi, where L_0(y_r) is the
# zero-mean likelihood of the residual response.
gp_basis_primal <- function(post, P) {
  H <- P$H
  s2 <- post$features$hyper$noise^2
  # Z'H for the posterior and Z'(H o x_k) for the gradient, in one pass
  p <- ncol(H)
  V <- do.call(cbind, c(list(H), lapply(seq_len(P$d), function(k) H * P$x[, k])))
  ZHV <- gp_feature_cross(post$features, P, V)
  ZH <- ZHV[, seq_len(p), drop = FALSE]
  B <- .Call(C_matprod, post$ainv, ZH, P$nthreads)
  S <- (gp_tcross(H, H) - gp_tcross(ZH, B)) / s2
  sch <- gp_small_chol((S + t(S)) / 2, P$nthreads)
  if (is.null(sch)) return(NULL)
  Sinv <- sch[[2L]] %*% t(sch[[2L]])
  beta <- drop(Sinv %*% (gp_tcross(H, matrix(P$y)) - gp_tcross(ZH, matrix(post$alpha))) / s2)
  yr <- P$y - drop(H %*% beta)
  zy <- post$zy - drop(ZH %*% beta)
  alpha <- post$alpha - drop(B %*% beta)
  yy <- sum(yr^2)
  dq <- (sum(P$y^2) - sum(post$alpha * post$zy)) - (yy - sum(alpha * zy))
  post$value <- post$value + dq / (2 * s2) - sum(log(diag(sch[[1L]]))) + p / 2 * log(2 * pi)
  post[c("alpha", "zy", "yy", "yr")] <- list(alpha, zy, yy, yr)
  post$basis <- list(beta = beta, B = B, ZH = ZH, ZV = ZHV[, -seq_len(p), drop = FALSE],
                     Sinv = Sinv, srinv = sch[[2L]])
  post
}

# Z'V for the fit's features Z (rows scaled by sqrt(w) as the form has them),
# a block of rows at a time: the m x ncol(V) cross-product.
gp_feature_cross <- function(f, P, V) {
  n <- nrow(P$x)
  m <- 2L * ncol(f$omega)
  out <- matrix(0, m, ncol(V))
  rows <- rff_block_rows(n, m)
  for (idx in row_blocks(n, rows)) {
    tz <- .Call(C_rff_transform, P$x[idx, , drop = FALSE], f$omega, NULL, 1, TRUE, P$nthreads)
    tz <- tz * rep(f$amp, each = 2L)
    if (!is.null(P$sw)) tz <- tz * rep(P$sw[idx], each = m)
    out <- out + .Call(C_matprod, tz, V[idx, , drop = FALSE], P$nthreads)
  }
  out
}

# The gradient's part from the basis in the m x m form: dL/dZ = u alpha' -
# Z (A^-1 + B E) + H E with E = S^-1 B' / s_n^2.  The first two terms are
# what src/gp.c computes (with alpha of y_r, and A^-1 + B E for A^-1); the
# last one's contributions to M and to the column sums of Z o G come from
# Z'H and ZV = Z'(H o x_k), of the posterior's pass.
gp_basis_gradient_extra <- function(post, P) {
  f <- post$features
  s2 <- f$hyper$noise^2
  b <- post$basis
  E <- b$Sinv %*% t(b$B) / s2                                # p x m
  p <- ncol(P$H)
  d <- P$d
  ZV <- b$ZV                                                 # m x (p d)
  csum <- rowSums(b$ZH * t(E))
  D <- ncol(f$omega)
  cs <- 2L * seq_len(D) - 1L
  M <- matrix(0, d, D)
  for (k in seq_len(d)) {
    Zk <- ZV[, (k - 1L) * p + seq_len(p), drop = FALSE]       # m x p: sum_i x_ik Z_ij H_il
    # sum_i x_ik (Zc_ij (HE)_i,sj - Zs_ij (HE)_i,cj)
    M[k, ] <- rowSums(Zk[cs, , drop = FALSE] * t(E[, cs + 1L, drop = FALSE])) -
      rowSums(Zk[cs + 1L, , drop = FALSE] * t(E[, cs, drop = FALSE]))
  }
  list(M = M, csum = csum, BE = b$B %*% E)
}

# What predictions need of the basis: the coefficients, the inverse factor
# of S, and the map from a row's features (or, exact, kernel row) to
# H'C^-1 k(x): B (m x p) or C^-1 H (n x p).
gp_basis_fit <- function(spec, post, P, y_scale) {
  b <- post$basis
  spec$beta <- b$beta
  spec$srinv <- b$srinv
  spec$B <- if (P$method == "exact") b$CH else b$B
  spec$coefficients <- b$beta * y_scale
  spec
}

# The basis' part of the predictive mean and variance (standardised units)
# at the scaled rows xs, added to those of the zero-mean GP.
gp_basis_moments <- function(object, xs, nthreads, var) {
  b <- object$basis
  nf <- if (object$method == "exact") nrow(object$x_train) else 2L * ncol(object$omega)
  transform_in_blocks(xs, nf, 2L, function(xb) {
    hb <- gp_basis(b, xb)
    m <- drop(hb %*% b$beta)
    if (!var) return(cbind(m, 0))
    cbind(m, rowSums((gp_basis_residual(object, xb, hb, nthreads) %*% b$srinv)^2))
  })
}

# r = h(x) - H'C^-1 k(x), a row per row of xb.
gp_basis_residual <- function(object, xb, hb, nthreads) {
  if (object$method == "exact") {
    P <- c(object$P, list(nthreads = nthreads))
    Ks <- gp_exact_gram(gp_unpack(object$theta, P), P, xb, object$x_train)
    return(hb - .Call(C_matprod, Ks, object$basis$B, nthreads))
  }
  hb - .Call(C_matprod, gp_feature_matrix(object, xb, nthreads), object$basis$B, nthreads)
}

# Draws of the basis coefficients from their posterior N(b_hat, S^-1), p x nsim.
gp_basis_draws <- function(object, nsim) {
  b <- object$basis
  xi <- matrix(stats::rnorm(length(b$beta) * nsim), ncol = nsim)
  b$beta + b$srinv %*% xi
}

# The least-squares residual of y on the basis (y itself for "centred"), to
# start a spectral mixture from (a p-column fit, once per model).
gp_basis_residual_ls <- function(mean, xs, y) {
  spec <- gp_basis_spec(mean, xs)
  if (is.null(spec)) return(y)
  H <- gp_basis(spec, xs)
  y - drop(H %*% solve(gp_tcross(H, H), gp_tcross(H, matrix(y))))
}
