# The objectives falkon(tune = ) minimises (R/fit-falkon-tune.R) and their
# analytic gradients in log lambda and the log length scales: the held-out
# squared error of the Nystrom solution on a fold (falkon_tune_fold()), the
# generalised cross-validation on its own rows (falkon_tune_gcv()) or the
# Nystrom Gaussian process's marginal likelihood (falkon_tune_ml()), for
# the Gaussian and Matern kernels on the package's own kernel blocks,
# products and Cholesky solves.

# The objective and its gradient in (log lambda, log sigma_1..p) at length
# scales exp(theta) (p = 1: one for all inputs) and lambda, for the kernel
# 'shape' (tune_shape(): Gaussian or Matern, its length scale aside).
falkon_tune_eval <- function(theta, probs, p, d, lam, nthreads,
                             shape = tune_gaussian) {
  s <- rep_len(exp(theta), d)
  value <- 0
  grad <- numeric(1L + d)
  objective <- switch(if (is.null(probs$objective)) "heldout" else probs$objective,
                      heldout = falkon_tune_fold, gcv = falkon_tune_gcv, ml = falkon_tune_ml)
  for (pr in probs$folds) {
    g <- objective(pr, s, lam, nthreads, shape)
    value <- value + g$value
    grad <- grad + g$gradient
  }
  grad <- grad / probs$nv
  if (p == 1L) grad <- c(grad[1L], sum(grad[-1L]))
  list(value = value / probs$nv, gradient = unname(grad))
}

# One fold: the held-out sum of squares and its gradient (unnormalised).
# With R = K_vm alpha - y_v, W = A^-1 K_vm' R and F = K_nm alpha, for a
# change dK of the kernel matrices, d(sum R^2) / 2 = <dK_vm, R alpha'> +
# <dK_nm, (y - F) W' - K_nm W alpha'> - lambda n <dK_mm, W alpha'>, and for
# log lambda -lambda n <K_mm, W alpha'>.  For a radial kernel k(r),
# r = ||(a - b) / sigma||, dK/dlog sigma_j = D o (a_j - b_j)^2 / sigma_j^2
# with D = -k'(r) / r (tune_kernels(); the Gaussian's D is K itself), whose
# sums over j are ard_gradient_terms().
falkon_tune_fold <- function(pr, s, lam, nthreads, shape) {
  sys <- tune_system(pr, s, lam, nthreads, shape)
  u <- sys$u
  z <- sys$z
  v <- sweep(pr$v, 2L, s, "/")
  mp <- function(a, b) .Call(C_matprod, a, b, nthreads)
  Knm <- sys$Knm
  Kmm <- sys$Kmm
  Kvm <- tune_kernels(v, z, shape, nthreads)
  n <- nrow(u)
  alpha <- sys$alpha
  res <- mp(Kvm$K, alpha) - pr$yv
  W <- sys$solveA(t(mp(t(res), Kvm$K)))
  ta <- t(alpha)
  Mv <- mp(res, ta)
  Mn <- mp(pr$y - mp(Knm$K, alpha), t(W)) - mp(mp(Knm$K, W), ta)
  Mm <- mp(W, ta)
  g_s <- ard_gradient_terms(Kvm$D * Mv, v, z, nthreads) +
    ard_gradient_terms(Knm$D * Mn, u, z, nthreads) -
    lam * n * ard_gradient_terms(Kmm$D * Mm, z, z, nthreads)
  g_lam <- -lam * n * sum(Kmm$K * Mm)
  list(value = sum(res^2), gradient = 2 * c(g_lam, g_s))
}

# A problem's fitting rows u and centres z at length scales s, and their
# kernel matrices (tune_kernels()): what every objective starts from.
tune_blocks <- function(pr, s, nthreads, shape) {
  u <- sweep(pr$x, 2L, s, "/")
  z <- sweep(pr$z, 2L, s, "/")
  list(u = u, z = z, Knm = tune_kernels(u, z, shape, nthreads),
       Kmm = tune_kernels(z, NULL, shape, nthreads))
}

# The Nystrom system the held-out and GCV objectives solve on a problem's
# fitting rows, at length scales s and lambda: tune_blocks(), lambda n,
# solveA(B) = A^-1 B with A = K_nm'K_nm + lambda n K_mm (one factor; the
# package's products, t(a) %*% b as t(t(b) %*% a), whose transposed copies
# are of the thin side), and alpha.
tune_system <- function(pr, s, lam, nthreads, shape) {
  sys <- tune_blocks(pr, s, nthreads, shape)
  n <- nrow(sys$u)
  A <- .Call(C_crossprod, sys$Knm$K, nthreads) + lam * n * sys$Kmm$K
  R <- .Call(C_cholesky, A, 1e-10 * n, nthreads)
  solveA <- function(B) .Call(C_cholesky_solve, R, B)
  alpha <- solveA(t(.Call(C_matprod, t(pr$y), sys$Knm$K, nthreads)))
  c(sys, list(ln = lam * n, solveA = solveA, alpha = alpha))
}

# The generalised cross-validation of the fit on a problem's own rows (Craven
# and Wahba; one of the objectives of Meanti et al.), GCV = n RSS / (n -
# tr H)^2 with the hat matrix H = K_nm A^-1 K_nm', A = K_nm'K_nm + lambda n
# K_mm, tr H = m - lambda n tr(A^-1 K_mm): an estimate of the held-out
# squared error from every row, none held out.  Returned as n GCV (the
# held-out folds' sum of squares, divided by probs$nv = n) with its
# gradient.  With R = K_nm alpha - y and W = A^-1 K_nm'R, d(RSS) / 2 is the
# held-out fold's formula with the held-out rows the fitting rows:
# <dK_nm, R alpha' - R W' - K_nm W alpha'> - lambda n <dK_mm, W alpha'>;
# with P = A^-1 K_mm A^-1, d tr H = -lambda n (<dK_mm, A^-1 - lambda n P> -
# 2 <dK_nm, K_nm P>), and in log lambda -lambda n tr(A^-1 K_mm) + (lambda
# n)^2 tr(P K_mm).  d log GCV = d RSS / RSS + 2 d tr H / (n - tr H).
falkon_tune_gcv <- function(pr, s, lam, nthreads, shape) {
  sys <- tune_system(pr, s, lam, nthreads, shape)
  u <- sys$u
  z <- sys$z
  Knm <- sys$Knm
  Kmm <- sys$Kmm
  ln <- sys$ln
  n <- nrow(u)
  mp <- function(a, b) .Call(C_matprod, a, b, nthreads)
  alpha <- sys$alpha
  res <- mp(Knm$K, alpha) - pr$y
  W <- sys$solveA(t(mp(t(res), Knm$K)))
  Ai <- sys$solveA(diag(nrow(z)))
  P <- mp(mp(Ai, Kmm$K), Ai)
  ta <- t(alpha)
  Mn <- mp(res, ta - t(W)) - mp(mp(Knm$K, W), ta)
  Mm <- mp(W, ta)
  rss <- sum(res^2)
  tr_aik <- sum(Ai * Kmm$K)
  den <- n - (nrow(z) - ln * tr_aik)
  g_rss <- 2 * c(-ln * sum(Kmm$K * Mm),
                 ard_gradient_terms(Knm$D * Mn, u, z, nthreads) -
                   ln * ard_gradient_terms(Kmm$D * Mm, z, z, nthreads))
  g_tr <- c(-ln * tr_aik + ln^2 * sum(P * Kmm$K),
            -ln * (ard_gradient_terms(Kmm$D * (Ai - ln * P), z, z, nthreads) -
                     2 * ard_gradient_terms(Knm$D * mp(Knm$K, P), u, z, nthreads)))
  value <- n^2 * rss / den^2
  list(value = value, gradient = value * (g_rss / rss + 2 * g_tr / den))
}

# The kernels the tuning learns, by their shape at unit length scale:
# list(name, nu), nu for the Matern kernel; tune_gaussian is the Gaussian's
# (the default kernel, and the workers' default shape).
tune_shape <- function(kernel) list(name = kernel$name, nu = kernel$nu)
tune_gaussian <- list(name = "gaussian", nu = NULL)

# The unit kernel 'shape' between the rows of a and b (b NULL: a against
# itself, exactly symmetric): list(K, D).  K is the kernel matrix on the
# package's kernel blocks (the fit's own values; at the tuning's sizes they
# also beat R's BLAS product with its elementwise exp); D = -k'(r) / r,
# the Gaussian's K itself.  The Matern kernel's, with z = sqrt(2 nu) r and
# k = c_nu z^nu K_nu(z), c_nu = 2^(1 - nu) / Gamma(nu), is
# 2 nu c_nu z^(nu - 1) K_(nu - 1)(z).  For nu > 1 that is nu / (nu - 1)
# times the Matern kernel of smoothness nu - 1 at length scale
# sqrt((nu - 1) / nu) (c_nu / c_(nu - 1) = 1 / (2 (nu - 1))), on the same
# kernel blocks, which keep its Bessel function in range for any nu (R's
# gamma() and besselK() overflow from nu = 170): 3 exp(-sqrt(3) r) at
# 3/2.  For nu <= 1 it is infinite at r = 0, where it multiplies
# (a_j - b_j)^2 = 0: 0 there.  At nu = 1/2, exp(-r) / r = k / r with
# r = -log k; below 1 otherwise, with r from the unit Gaussian kernel g,
# r^2 = -2 log g (the blocks clamp r^2 at 0, so g <= 1; where g underflows
# to 0, r over 38, so does D).
tune_kernels <- function(a, b, shape, nthreads) {
  unit <- function(name, par) {
    .Call(C_kernel_matrix, kernel_table[[name]]$code, par, a, b, nthreads)
  }
  if (shape$name == "gaussian") {
    g <- unit("gaussian", 1)
    return(list(K = g, D = g))
  }
  nu <- shape$nu
  K <- unit("matern", c(1, nu))
  if (nu > 1) {
    return(list(K = K, D = nu / (nu - 1) * unit("matern", c(sqrt(1 - 1 / nu), nu - 1))))
  }
  if (nu == 0.5) {
    D <- K / -log(K)
    D[K == 1] <- 0
    return(list(K = K, D = D))
  }
  z <- sqrt(-4 * nu * log(unit("gaussian", 1)))
  D <- 2 * nu * 2^(1 - nu) / gamma(nu) * z^(nu - 1) *
    besselK(z, 1 - nu, expon.scaled = TRUE) * exp(-z)
  D[z == 0 | z == Inf] <- 0
  dim(D) <- dim(K)
  list(K = K, D = D)
}

# sum_il B_il (a_ij - b_lj)^2 for each column j: the derivative in log
# sigma_j of <K, M> for a radial kernel on a = x / sigma, b = z / sigma,
# with B = D o M (tune_kernels()).
ard_gradient_terms <- function(B, a, b, nthreads) {
  colSums(a^2 * rowSums(B)) + colSums(b^2 * colSums(B)) -
    2 * colSums(a * .Call(C_matprod, B, b, nthreads))
}

# The negative log marginal likelihood of the Nystrom Gaussian process (the
# subset of regressors) on a problem's own rows, its signal variance
# profiled out: each target column y ~ N(0, s^2 Sigma), Sigma = Q + ln I,
# Q = K_nm K_mm^-1 K_mn, ln = lambda n, whose posterior mean is the Nystrom
# KRR solution at lambda: the criterion by which rff_gp() learns its length
# scales, on the fit's own centres (measured against the held-out error in
# bench/investigations/falkon-ml.md: better on regressions, worse on several
# classes; the default for regressions).  Per column n/2 log(2 pi q / n) + n/2 +
# log|Sigma| / 2 with q = y' Sigma^-1 y.  Whitened by the factor of K_mm
# (R_m'R_m = K_mm + falkon_ml_jitter I, part of the model): V = K_nm R_m^-1,
# B = I + V'V / ln = R_B'R_B (eigenvalues at least one), log|Sigma| = n log
# ln + log|B|, q = (y'y - ||R_B^-T V'y||^2 / ln) / ln; no inverse of the
# ill-conditioned A = K_mn K_nm + ln K_mm is formed (one was, at first, and
# at lambda 1e-9 its rounding moved the objective by up to 0.5 a row).  With
# alpha = A^-1 K_mn y = R_m^-1 B^-1 V'y / ln and beta = Sigma^-1 y = (y - V
# B^-1 V'y / ln) / ln, by Sigma^-1 K_nm K_mm^-1 = K_nm A^-1: dq = -2
# <dK_nm, beta alpha'> + <dK_mm, alpha alpha'> - dln beta'beta, and dlog|Sigma|
# = 2 <dK_nm, K_nm A^-1> - <dK_mm, R_m^-1 (I - B^-1) R_m^-T> + dln (n - m +
# tr B^-1) / ln.
falkon_ml_jitter <- 1e-6
falkon_tune_ml <- function(pr, s, lam, nthreads, shape) {
  blk <- tune_blocks(pr, s, nthreads, shape)
  u <- blk$u
  z <- blk$z
  Knm <- blk$Knm
  Kmm <- blk$Kmm
  n <- nrow(u)
  m <- nrow(z)
  k <- ncol(pr$y)
  ln <- lam * n
  mp <- function(a, b) .Call(C_matprod, a, b, nthreads)
  tri <- function(R, B, op) .Call(C_triangular_solve, R, B, op, nthreads)
  Rm <- .Call(C_cholesky, Kmm$K, falkon_ml_jitter, nthreads)
  V <- tri(Rm, Knm$K, "right")
  RB <- .Call(C_cholesky, .Call(C_crossprod, V, nthreads) / ln, 1, nthreads)
  Vy <- t(mp(t(pr$y), V))
  e <- tri(RB, Vy, "left_t")
  q <- (colSums(pr$y^2) - colSums(e^2) / ln) / ln
  BVy <- tri(RB, e, "left")
  alpha <- tri(Rm, BVy, "left") / ln
  beta <- (pr$y - mp(V, BVy) / ln) / ln
  Bi <- tri(RB, tri(RB, diag(m), "left_t"), "left")
  w <- n / (2 * q)
  # K_nm A^-1 = V (R_m^-1 B^-1)' / ln: the solve on m columns, not on n
  Mn <- -2 * mp(sweep(beta, 2L, w, "*"), t(alpha)) +
    k / ln * mp(V, t(tri(Rm, Bi, "left")))
  Mm <- mp(sweep(alpha, 2L, w, "*"), t(alpha)) -
    k / 2 * tri(Rm, t(tri(Rm, diag(m) - Bi, "left")), "left")
  g_s <- ard_gradient_terms(Knm$D * Mn, u, z, nthreads) +
    ard_gradient_terms(Kmm$D * Mm, z, z, nthreads)
  g_lam <- -ln * sum(w * colSums(beta^2)) + k / 2 * (n - m + sum(diag(Bi)))
  logdet <- n * log(ln) + 2 * sum(log(diag(RB)))
  value <- sum(n / 2 * log(2 * pi * q / n) + n / 2) + k / 2 * logdet
  list(value = value, gradient = c(g_lam, g_s))
}
