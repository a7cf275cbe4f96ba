# The log marginal likelihood of rff_gp() and its gradient, for the random
# feature (sparse-spectrum) GP and the exact GP, on log parameters.
#
# A problem P holds the scaled inputs x (n x d), the standardised response
# y, the kind ("standard": a kernel of one length scale per input or one
# for all, "sm": a spectral mixture), and for the random features the fixed
# standard draws eps (d x D): the frequencies are functions of the
# parameters and eps, so the objective is a smooth function of them.
#   standard: theta = (log l (1 or d), log s_f, log s_n); w_j = eps_j / l,
#             every frequency's cos/sin pair scaled by s_f / sqrt(D);
#   sm:       theta = (log w (Q), mu (Q x d), log l (Q x d), log s_n); the
#             frequencies are split among the components (comp, D_q each):
#             w_j = 2 pi mu_q + eps_j / l_q, pairs scaled by sqrt(w_q / D_q).

gp_theta_names <- function(P) {
  if (P$kind == "sm") {
    Q <- P$Q
    idx <- paste0(rep(seq_len(Q), P$d), ",", rep(seq_len(P$d), each = Q))
    return(c(paste0("log_weight", seq_len(Q)), paste0("mean[", idx, "]"),
             paste0("log_scale[", idx, "]"), "log_noise"))
  }
  nl <- if (P$ard) P$d else 1L
  c(if (nl == 1L) "log_lengthscale" else paste0("log_lengthscale", seq_len(nl)),
    "log_signal", "log_noise")
}

# The parameters of theta on their own scales.
gp_unpack <- function(theta, P) {
  nt <- length(theta)
  sn <- exp(theta[nt])
  if (P$kind == "sm") {
    Q <- P$Q
    d <- P$d
    w <- exp(theta[seq_len(Q)])
    mu <- matrix(theta[Q + seq_len(Q * d)], Q, d)
    ell <- matrix(exp(theta[Q + Q * d + seq_len(Q * d)]), Q, d)
    return(list(weights = w, means = mu, scales = ell, noise = sn))
  }
  nl <- nt - 2L
  list(lengthscale = rep(exp(theta[seq_len(nl)]), length.out = P$d),
       signal = exp(theta[nl + 1L]), noise = sn)
}

# Frequencies (d x D) and amplitudes (D) of the feature map at theta.
gp_features_at <- function(theta, P) {
  h <- gp_unpack(theta, P)
  if (P$kind == "sm") {
    cq <- P$comp
    omega <- 2 * pi * t(h$means[cq, , drop = FALSE]) + P$eps / t(h$scales[cq, , drop = FALSE])
    amp <- sqrt(h$weights[cq] / P$Dq[cq])
  } else {
    omega <- P$eps / h$lengthscale
    amp <- rep(h$signal / sqrt(ncol(P$eps)), ncol(P$eps))
  }
  list(omega = omega, amp = amp, hyper = h)
}

# The posterior of the feature weights at theta: A = Z'Z + s_n^2 I = R'R,
# alpha = A^-1 Z'y, and the log marginal likelihood
#   L = -(y'y - alpha'Z'y) / (2 s_n^2) - (n - m) log s_n - sum log diag R - n/2 log 2 pi.
# NULL when A is not numerically positive definite.
gp_rff_posterior <- function(theta, P) {
  f <- gp_features_at(theta, P)
  st <- gp_rows_stats(P, f)
  m <- length(st[[2L]])
  s2 <- f$hyper$noise^2
  A <- st[[1L]]
  diag(A) <- diag(A) + s2
  ch <- .Call(C_gp_chol, A, P$nthreads)
  if (is.null(ch)) return(NULL)
  rinv <- ch[[2L]]
  ainv <- .Call(C_matprod, rinv, t(rinv), P$nthreads)
  zy <- st[[2L]]
  alpha <- drop(.Call(C_matprod, ainv, matrix(zy), P$nthreads))
  yy <- st[[3L]]
  logdet <- 2 * sum(log(diag(ch[[1L]])))
  # y'y - alpha'Z'y = |y - Z alpha|^2 + s2 |alpha|^2 cancels: in single precision Z'y's
  # float rounding (1e-7 of y'y) would reach L divided by s2, so the residual comes from
  # a pass over the rows in double, where an error in alpha enters to second order
  rss <- if (isTRUE(P$single) && is.null(P$H)) gp_rows_rss(P, f, alpha)
  fit_term <- if (is.null(rss)) yy - sum(alpha * zy) else c(rss) + s2 * sum(alpha^2)
  # (with case weights, y and Z are the rows scaled by sqrt(w): the noise
  # variance of row i is s_n^2 / w_i, and log p(y) = log p(sqrt(w) y) + sum(log w) / 2)
  L <- -fit_term / (2 * s2) - (P$n - m) * log(f$hyper$noise) - logdet / 2 -
    P$n / 2 * log(2 * pi) + if (is.null(P$half_log_w)) 0 else P$half_log_w
  post <- list(value = L, alpha = alpha, rinv = rinv, ainv = ainv, zz = st[[1L]], zy = zy,
               yy = yy, rss = rss, features = f, m = m)
  if (is.null(P$H)) post else gp_basis_primal(post, P)
}

# Z'Z, Z'y and y'y of the rows: in memory, or from a pass over the chunks
# (P$rows, R/fit-gp-chunks.R); with P$single, Z'Z and Z'y of the features
# rounded to float (src/gp.c, ?feature_precision).
gp_rows_stats <- function(P, f) {
  if (!is.null(P$rows)) return(P$rows$stats(f, isTRUE(P$single)))
  st <- .Call(C_gp_stats, P$x, f$omega, f$amp, P$y, P$sw, isTRUE(P$single), P$nthreads)
  list(st[[1L]], st[[2L]], sum(P$y^2))
}

# |y - Z alpha|^2 over the rows (weighted: both scaled by sqrt(w)), in double: in
# memory (with the rows' means Z alpha, unweighted, as attribute "means": the fitted
# values), or from a pass over the chunks.
gp_rows_rss <- function(P, f, alpha) {
  if (!is.null(P$rows)) return(P$rows$rss(f, alpha))
  beta <- matrix(alpha * rep(f$amp, each = 2L))
  fz <- drop(.Call(C_rff_decision, P$x, f$omega, NULL, 1, beta, 0, P$nthreads))
  structure(sum((P$y - if (is.null(P$sw)) fz else P$sw * fz)^2), means = fz)
}

# dL/dtheta at a posterior from gp_rff_posterior(): one pass for
# M = X'(Zc o Gs - Zs o Gc) and the column sums of Z o G (src/gp.c).
gp_rff_gradient <- function(theta, P, post) {
  f <- post$features
  s2 <- f$hyper$noise^2
  b <- post$basis
  ex <- if (!is.null(b)) gp_basis_gradient_extra(post, P)
  g <- if (!is.null(P$rows)) P$rows$gradient(f, post$alpha, post$ainv, s2)
       else .Call(C_gp_gradient, P$x, f$omega, f$amp, if (is.null(b)) P$y else post$yr, P$sw,
                  post$alpha, if (is.null(b)) post$ainv else post$ainv + ex$BE, s2, P$nthreads)
  M <- g[[1L]]
  csum <- g[[2L]]
  a <- post$alpha
  uu <- if (!is.null(post$rss)) c(post$rss) / s2^2
        else (post$yy - 2 * sum(a * post$zy) +
              sum(a * drop(.Call(C_matprod, post$zz, matrix(a), P$nthreads)))) / s2^2
  g_noise <- s2 * uu - (P$n - post$m + s2 * sum(diag(post$ainv)))
  if (!is.null(b)) {
    # the restricted likelihood: tr(P) = tr(C^-1) - tr(S^-1 H'C^-2 H)
    M <- M + ex$M
    csum <- csum + ex$csum
    hc2h <- gp_tcross(P$H, P$H) - 2 * gp_tcross(b$ZH, b$B) +
      gp_tcross(b$B, .Call(C_matprod, post$zz, b$B, P$nthreads))
    g_noise <- g_noise + sum(b$Sinv * hc2h) / s2
  }
  gp_gradient_from(f, P, M, csum, g_noise)
}

# dL/dtheta from M = X'(Zc o Gs - Zs o Gc), the column sums of Z o G and the
# noise's derivative, for both forms.
gp_gradient_from <- function(f, P, M, csum, g_noise) {
  if (P$kind == "sm") {
    Q <- P$Q
    cq <- P$comp
    pair <- csum[c(TRUE, FALSE)] + csum[c(FALSE, TRUE)]      # per frequency
    g_w <- 0.5 * as.vector(tapply(pair, factor(cq, levels = seq_len(Q)), sum))
    g_w[is.na(g_w)] <- 0
    Mt <- t(M)                                               # D x d
    g_mu <- 2 * pi * rowsum(Mt, cq, reorder = TRUE)
    shift <- t(f$omega) - 2 * pi * f$hyper$means[cq, , drop = FALSE]
    g_ell <- -rowsum(shift * Mt, cq, reorder = TRUE)
    full <- function(v) {               # components without frequencies: 0
      out <- matrix(0, Q, P$d)
      out[sort(unique(cq)), ] <- v
      out
    }
    return(c(g_w, full(g_mu), full(g_ell), g_noise))
  }
  g_ell <- -rowSums(f$omega * M)
  if (!P$ard) g_ell <- sum(g_ell)
  c(g_ell, sum(csum), g_noise)
}

# The exact GP: C = s_f^2 k_l(X, X) + s_n^2 W^-1 (or the spectral mixture's
# K + s_n^2 W^-1; W the case weights, I without) = R'R; alpha = C^-1 y; L = -y'alpha/2 - sum log diag R - n/2 log 2 pi.
gp_exact_gram <- function(h, P, x1, x2 = NULL) {
  if (P$kind == "sm") {
    par <- c(P$Q, h$weights, h$means, h$scales)
    return(.Call(C_kernel_matrix, 8L, par, x1, x2, P$nthreads))
  }
  s <- function(x) if (is.null(x)) NULL else sweep(x, 2L, h$lengthscale, "/", check.margin = FALSE)
  h$signal^2 * .Call(C_kernel_matrix, P$code, P$par, s(x1), s(x2), P$nthreads)
}

gp_exact_posterior <- function(theta, P) {
  h <- gp_unpack(theta, P)
  K <- gp_exact_gram(h, P, P$x)
  C <- K
  diag(C) <- diag(C) + h$noise^2 / if (is.null(P$w)) 1 else P$w
  ch <- .Call(C_gp_chol, C, P$nthreads)
  if (is.null(ch)) return(NULL)
  rinv <- ch[[2L]]
  cinv <- .Call(C_matprod, rinv, t(rinv), P$nthreads)
  alpha <- drop(.Call(C_matprod, cinv, matrix(P$y), P$nthreads))
  L <- -sum(P$y * alpha) / 2 - sum(log(diag(ch[[1L]]))) - P$n / 2 * log(2 * pi)
  post <- list(value = L, alpha = alpha, rinv = rinv, cinv = cinv, K = K, hyper = h)
  if (is.null(P$H)) return(post)
  bd <- gp_basis_dual(cinv, 2 * sum(log(diag(ch[[1L]]))), P$y, P$H, P$n, P$nthreads)
  if (is.null(bd)) return(NULL)
  # the gradient below takes the projected precision for C^-1
  post[c("value", "alpha", "cinv", "basis")] <- list(bd$value, bd$u, bd$Pm, bd)
  post
}

# Analytic gradient of the exact GP for the Gaussian kernel:
# dL/dtheta = tr((alpha alpha' - C^-1) dC/dtheta) / 2, with
# dC/dlog l_p = K o (x_ip - x_jp)^2 / l_p^2, dC/dlog s_f = 2 K, dC/dlog s_n = 2 s_n^2 W^-1.
gp_exact_gradient <- function(theta, P, post) {
  W <- outer(post$alpha, post$alpha) - post$cinv
  B <- W * post$K
  rs <- rowSums(B)
  h <- post$hyper
  a <- sweep(P$x, 2L, h$lengthscale, "/", check.margin = FALSE)
  g_ell <- colSums(a^2 * rs) - colSums(a * .Call(C_matprod, B, a, P$nthreads))
  if (!P$ard) g_ell <- sum(g_ell)
  c(g_ell, sum(B), h$noise^2 * sum(diag(W) / if (is.null(P$w)) 1 else P$w))
}

# Maximise L over theta by L-BFGS-B (minimising -L), with the value and the
# gradient of one evaluation shared (optim asks for them separately).
# factr = 1e10 stops when an iteration gains less than 2.2e-6 of max(|L|, n)
# (optim()'s test on L / n, fnscale): on the 30 splits of
# bench/investigations/gp-ard.md 1e9 took 10 % more evaluations with one
# length scale and 30 % more with one per input (99 against 70 on
# BostonHousing), for test RMSEs within 0.5 % with one length scale and log
# likelihoods within 2 of 1e9's on the three ARD fits compared (diamonds,
# 4800 rows: one ended 2 higher); at 10^5 rows (d = 20) ARD took 36 full
# evaluations instead of 142, 46 s instead of 146, for the same test RMSE.
# The spectral mixtures' search used it already (gp_multistart()).
gp_optimise <- function(theta0, P, lower, upper, control) {
  exact <- P$method == "exact"
  analytic <- !exact || (P$kind == "standard" && P$code == 1L)
  cache <- new.env()
  ctrl <- utils::modifyList(list(maxit = 200L, factr = 1e10, fnscale = P$n), control)
  # one tick per evaluation of the likelihood; the bar's end is the
  # iteration limit, which a converging search does not reach
  bar <- progress_start(ctrl$maxit, "rff_gp(): maximising the marginal likelihood")
  on.exit(progress_done(bar))
  evaluate <- function(theta) {
    if (!identical(cache$theta, theta)) {
      progress_tick(bar)
      post <- gp_posterior(theta, P)
      cache$theta <- theta
      cache$post <- post
      cache$grad <- NULL
    }
    cache$post
  }
  fn <- function(theta) {
    post <- evaluate(theta)
    if (is.null(post)) return(1e100)
    -post$value
  }
  gr <- function(theta) {
    post <- evaluate(theta)
    if (is.null(post)) return(rep(0, length(theta)))
    if (is.null(cache$grad)) {
      cache$grad <- gp_gradient(theta, P, post)
    }
    -cache$grad
  }
  # fnscale: the value per observation: the gradient of -L grows with n, and
  # L-BFGS-B's first step, of the gradient's size, would jump to the bounds
  stats::optim(theta0, fn, if (analytic) gr, method = "L-BFGS-B", lower = lower,
               upper = upper, control = ctrl)
}

# The dual (n x n) form of the random-feature likelihood, for 2D >= n: with
# C = Z Z' + s_n^2 I = R'R the same L costs O(n^2 m + n^3) instead of
# O(n m^2 + m^3), so that small data sets can afford many frequencies.
# tz = t(Z) (m x n), rows scaled by the amplitudes and columns by sqrt(w).
gp_dual_features <- function(f, P) {
  tz <- .Call(C_rff_transform, P$x, f$omega, NULL, 1, TRUE, P$nthreads)
  tz <- tz * rep(f$amp, each = 2L)
  if (!is.null(P$sw)) tz <- tz * rep(P$sw, each = nrow(tz))
  tz
}

gp_dual_posterior <- function(theta, P) {
  f <- gp_features_at(theta, P)
  tz <- gp_dual_features(f, P)
  C <- .Call(C_crossprod, tz, P$nthreads)
  diag(C) <- diag(C) + f$hyper$noise^2
  ch <- .Call(C_gp_chol, C, P$nthreads)
  if (is.null(ch)) return(NULL)
  cinv <- .Call(C_matprod, ch[[2L]], t(ch[[2L]]), P$nthreads)
  u <- drop(.Call(C_matprod, cinv, matrix(P$y), P$nthreads))
  L <- -sum(P$y * u) / 2 - sum(log(diag(ch[[1L]]))) - P$n / 2 * log(2 * pi)
  basis <- NULL
  if (!is.null(P$H)) {
    basis <- gp_basis_dual(cinv, 2 * sum(log(diag(ch[[1L]]))), P$y, P$H, P$n, P$nthreads)
    if (is.null(basis)) return(NULL)
    L <- basis$value
    u <- basis$u
    cinv <- basis$Pm       # the gradient takes the projected precision for C^-1
    basis$B <- .Call(C_matprod, tz, basis$CH, P$nthreads)
  }
  L <- L + if (is.null(P$half_log_w)) 0 else P$half_log_w
  list(value = L, u = u, cinv = cinv, rinv = ch[[2L]], tz = tz, features = f, basis = basis,
       alpha = drop(.Call(C_matprod, tz, matrix(u), P$nthreads)))
}

# The posterior and the gradient of the form P asks for.
gp_posterior <- function(theta, P) {
  if (P$method == "exact") gp_exact_posterior(theta, P)
  else if (isTRUE(P$dual)) gp_dual_posterior(theta, P)
  else gp_rff_posterior(theta, P)
}

gp_gradient <- function(theta, P, post) {
  if (P$method == "exact") gp_exact_gradient(theta, P, post)
  else if (isTRUE(P$dual)) gp_dual_gradient(theta, P, post)
  else gp_rff_gradient(theta, P, post)
}

# dL/dtheta in the dual form: dL/dZ = G = (u u' - C^-1) Z, then as in
# gp_rff_gradient (the noise: s_n^2 (u'u - tr C^-1)).
gp_dual_gradient <- function(theta, P, post) {
  f <- post$features
  W <- outer(post$u, post$u) - post$cinv
  tg <- .Call(C_matprod, post$tz, W, P$nthreads)                    # t(G), m x n
  tz <- post$tz
  cs <- c(TRUE, FALSE)
  H <- tz[cs, , drop = FALSE] * tg[!cs, , drop = FALSE] -
    tz[!cs, , drop = FALSE] * tg[cs, , drop = FALSE]                # D x n
  M <- t(.Call(C_matprod, H, P$x, P$nthreads))                      # d x D
  csum <- rowSums(tz * tg)
  g_noise <- f$hyper$noise^2 * sum(diag(W))
  gp_gradient_from(f, P, M, csum, g_noise)
}
