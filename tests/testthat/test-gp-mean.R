# rff_gp(mean = ) : explicit basis functions with a vague prior (Rasmussen
# and Williams sec. 2.7) against plain-R formulas.

# (as in test-gp.R: this file runs on its own)
cdiff <- function(f, th, h = 1e-5) {
  vapply(seq_along(th), function(i) {
    e <- h * (seq_along(th) == i)
    (f(th + e) - f(th - e)) / (2 * h)
  }, 0)
}

fit_scaled <- function(fit, x) sweep(sweep(x, 2, fit$scaling$center), 2, fit$scaling$scale, "/")

fit_features <- function(fit, xs) {
  p <- xs %*% fit$omega
  Z <- matrix(0, nrow(xs), 2 * ncol(p))
  Z[, c(TRUE, FALSE)] <- cos(p)
  Z[, c(FALSE, TRUE)] <- sin(p)
  sweep(Z, 2, rep(fit$amp, each = 2), "*")
}

mean_data <- function(n = 40, seed = 1) {
  set.seed(seed)
  x <- cbind(runif(n, 0, 5), runif(n))
  list(x = x, y = 2 + 0.8 * x[, 1] + sin(2 * x[, 1]) + rnorm(n, sd = 0.2))
}

# log p(y), predictive mean and sd from the restricted likelihood of R&W eq.
# 2.45 (vague limit) and eq. 2.42, for covariance K + s2 I and basis H.
ref_basis_gp <- function(K, Ks, kss, s2, H, Hn, y) {
  n <- length(y)
  Ci <- solve(K + s2 * diag(n))
  S <- t(H) %*% Ci %*% H
  bh <- solve(S, t(H) %*% Ci %*% y)
  yr <- y - H %*% bh
  L <- -0.5 * sum(yr * (Ci %*% yr)) + 0.5 * as.numeric(determinant(Ci)$modulus) -
    0.5 * as.numeric(determinant(S)$modulus) - (n - ncol(H)) / 2 * log(2 * pi)
  R <- t(Hn) - t(H) %*% Ci %*% t(Ks)
  list(L = L, mean = drop(Ks %*% Ci %*% yr + Hn %*% bh),
       sd = sqrt(kss - rowSums((Ks %*% Ci) * Ks) + colSums(R * solve(S, R))))
}

test_that("mean = 'linear' and 'constant' match the plain-R GP with basis functions", {
  dat <- mean_data()
  x <- dat$x
  xn <- cbind(c(5.5, 6, 7), c(0.2, 0.5, 0.9))
  for (mean in c("linear", "constant")) {
    for (form in c("primal", "dual", "exact")) {
      fit <- rff_gp(x, dat$y, kernel = gaussian_kernel(sigma = 0.8),
                    D = if (form == "primal") 10 else 30, optimize = FALSE,
                    method = if (form == "exact") "exact" else "rff", signal = 1.5,
                    noise = 0.3, mean = mean, seed = 1)
      expect_equal(is.null(fit$dual), form != "dual")
      xs <- fit_scaled(fit, x)
      xsn <- fit_scaled(fit, xn)
      ys <- (dat$y - fit$y_center) / fit$y_scale
      if (form == "exact") {
        v <- 1.5^2 / fit$y_scale^2
        kf <- function(a, b) v * exp(-outer(rowSums(a^2), rowSums(b^2), "+") / 1.28 +
                                       a %*% t(b) / 0.64)
        K <- kf(xs, xs); Ks <- kf(xsn, xs); kss <- rep(v, 3)
      } else {
        Z <- fit_features(fit, xs); Zn <- fit_features(fit, xsn)
        K <- Z %*% t(Z); Ks <- Zn %*% t(Z); kss <- rowSums(Zn^2)
      }
      # our basis columns are standardised: log|S| shifts by 2 sum(log sd)
      H <- if (mean == "linear") cbind(1, xs) else matrix(1, 40, 1)
      Hn <- if (mean == "linear") cbind(1, xsn) else matrix(1, 3, 1)
      ref <- ref_basis_gp(K, Ks, kss, (0.3 / fit$y_scale)^2, H, Hn, ys)
      p <- ncol(H)
      shift <- if (mean == "linear") sum(log(apply(xs, 2, sd))) else 0
      expect_equal(fit$logLik, ref$L + shift - (40 - p) * log(fit$y_scale), tolerance = 1e-9)
      pr <- predict(fit, xn, se.fit = TRUE)
      expect_equal(unname(pr$fit), fit$y_center + fit$y_scale * ref$mean, tolerance = 1e-9)
      expect_equal(unname(pr$se.fit), fit$y_scale * ref$sd, tolerance = 1e-8)
      # far from the data the trend's uncertainty widens the band
      far <- predict(fit, cbind(c(10, 20), 0.5), se.fit = TRUE)$se.fit
      if (mean == "linear") expect_gt(far[2], far[1])
    }
  }
})

basis_problem <- function(w = NULL) {
  dat <- mean_data(n = 50, seed = 4)
  P <- list(x = unname(scale(dat$x)[, ]), y = drop(scale(dat$y)), n = 50, d = 2L,
            method = "rff", kind = "standard", ard = TRUE, nthreads = 1L)
  set.seed(2)
  P$eps <- matrix(rnorm(2 * 20), 2, 20)
  P$H <- cbind(1, P$x)
  if (!is.null(w)) {
    P$sw <- sqrt(w)
    P$y <- P$sw * P$y
    P$H <- P$sw * P$H
    P$half_log_w <- sum(log(w)) / 2
  }
  P
}

test_that("the restricted likelihood's gradients match finite differences in every form", {
  for (w in list(NULL, seq(0.5, 2, length.out = 50))) {
    P <- basis_problem(w)
    th <- log(c(0.7, 1.2, 1.1, 0.4))
    f <- function(t) bochner:::gp_rff_posterior(t, P)$value
    a <- bochner:::gp_rff_posterior(th, P)
    expect_equal(bochner:::gp_rff_gradient(th, P, a), cdiff(f, th), tolerance = 1e-6)
    Pd <- P
    Pd$dual <- TRUE
    b <- bochner:::gp_dual_posterior(th, Pd)
    expect_equal(b$value, a$value, tolerance = 1e-10)
    expect_equal(b$alpha, a$alpha, tolerance = 1e-9)
    expect_equal(bochner:::gp_dual_gradient(th, Pd, b), bochner:::gp_rff_gradient(th, P, a),
                 tolerance = 1e-8)
  }
  # spectral mixture (two components) in the m x m form
  P <- basis_problem()
  P$kind <- "sm"; P$Q <- 2L; P$ard <- FALSE
  P$comp <- sort(rep_len(1:2, 20)); P$Dq <- tabulate(P$comp, 2)
  th <- c(log(c(0.6, 0.4)), c(0.1, 0.3, -0.2, 0.5), log(c(0.5, 1, 2, 0.8)), log(0.3))
  f <- function(t) bochner:::gp_rff_posterior(t, P)$value
  a <- bochner:::gp_rff_posterior(th, P)
  expect_equal(bochner:::gp_rff_gradient(th, P, a), cdiff(f, th), tolerance = 1e-6)
  # exact Gaussian GP
  Pe <- utils::modifyList(basis_problem(), list(method = "exact", code = 1L, par = 1))
  th <- log(c(0.7, 1.2, 1.1, 0.4))
  fe <- function(t) bochner:::gp_exact_posterior(t, Pe)$value
  e <- bochner:::gp_exact_posterior(th, Pe)
  expect_equal(bochner:::gp_exact_gradient(th, Pe, e), cdiff(fe, th), tolerance = 1e-6)
})

test_that("posterior draws with a basis have the predictive mean and variance", {
  dat <- mean_data(n = 40, seed = 6)
  xn <- cbind(c(1, 5.5, 8), c(0.5, 0.2, 0.9))
  for (form in c("primal", "dual", "exact")) {
    fit <- rff_gp(dat$x, dat$y, kernel = gaussian_kernel(sigma = 0.8),
                  D = if (form == "primal") 10 else 30, optimize = FALSE,
                  method = if (form == "exact") "exact" else "rff", signal = 1.5,
                  noise = 0.3, mean = "linear", seed = 1)
    p <- predict(fit, xn, se.fit = TRUE)
    sims <- as.matrix(simulate(fit, nsim = 4000, seed = 2, newdata = xn))
    # Monte Carlo: the mean errs by about se / sqrt(4000), the sd by se / sqrt(8000)
    expect_lt(max(abs(rowMeans(sims) - p$fit) / p$se.fit), 5 / sqrt(4000))
    expect_lt(max(abs(apply(sims, 1, sd) / p$se.fit - 1)), 5 / sqrt(8000))
  }
})

test_that("a quadratic basis is learned with the rest; bad 'mean' is refused", {
  set.seed(8)
  x <- seq(0, 4, length.out = 60)
  y <- 1 + 0.5 * x^2 + 0.3 * sin(6 * x) + rnorm(60, sd = 0.05)
  fit <- rff_gp(x, y, D = 100, mean = "quadratic", seed = 1)
  expect_equal(fit$basis$type, "quadratic")
  expect_length(fit$basis$coefficients, 3)
  # beyond the data the quadratic goes on: the centred fit returns to the mean
  far <- predict(fit, 6, interval = "confidence")
  expect_true(far[, "lwr"] < 1 + 0.5 * 36 && 1 + 0.5 * 36 < far[, "upr"])
  expect_lt(predict(rff_gp(x, y, D = 100, seed = 1), 6), far[, "lwr"])
  expect_output(print(fit), "quadratic basis")
  expect_error(rff_gp(x, y, mean = "cubic"), "mean")
  expect_error(rff_gp(x[1:2], y[1:2], mean = "quadratic", D = 10), "mean")
})
