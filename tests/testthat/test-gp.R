# rff_gp against plain-R Bayesian linear regression and GP formulas.

gp_data <- function(n = 80, d = 1, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(n * d, -2, 2), n, d)
  y <- sin(2 * x[, 1]) + rnorm(n, sd = 0.2)
  list(x = x, y = y)
}

# the pair-map features of a fit, in plain R, on the standardised inputs
ref_gp_features <- function(fit, xs) {
  p <- xs %*% fit$omega
  Z <- matrix(0, nrow(xs), 2 * ncol(p))
  Z[, c(TRUE, FALSE)] <- cos(p)
  Z[, c(FALSE, TRUE)] <- sin(p)
  sweep(Z, 2, rep(fit$amp, each = 2), "*")
}

std <- function(fit, x) sweep(sweep(x, 2, fit$scaling$center), 2, fit$scaling$scale, "/")

test_that("rff predictive mean and variance are Bayesian linear regression on the features", {
  dat <- gp_data()
  fit <- rff_gp(dat$x, dat$y, kernel = gaussian_kernel(0.7), D = 40, optimize = FALSE,
                signal = 1.2, noise = 0.3, seed = 1)
  new <- matrix(c(-1.5, 0, 0.4, 1.9), ncol = 1)
  Z <- ref_gp_features(fit, std(fit, dat$x))
  Zs <- ref_gp_features(fit, std(fit, new))
  ys <- (dat$y - mean(dat$y)) / sd(dat$y)
  s2 <- (0.3 / sd(dat$y))^2
  A <- crossprod(Z) + s2 * diag(ncol(Z))
  mean_ref <- mean(dat$y) + sd(dat$y) * drop(Zs %*% solve(A, crossprod(Z, ys)))
  se_ref <- sd(dat$y) * sqrt(s2 * rowSums((Zs %*% solve(A)) * Zs))
  p <- predict(fit, new, se.fit = TRUE)
  expect_equal(unname(p$fit), mean_ref, tolerance = 1e-8)
  expect_equal(unname(p$se.fit), se_ref, tolerance = 1e-8)
  expect_equal(p$residual.scale, 0.3)
  # the amplitudes are signal / sqrt(D) on the standardised response
  expect_equal(fit$amp, rep(1.2 / sd(dat$y) / sqrt(40), 40))
  # intervals as predict.lm, with normal quantiles
  ci <- predict(fit, new, interval = "confidence", level = 0.9)
  pr <- predict(fit, new, interval = "prediction", level = 0.9)
  expect_equal(colnames(ci), c("fit", "lwr", "upr"))
  expect_equal(unname(ci[, "upr"] - ci[, "fit"]), qnorm(0.95) * se_ref, tolerance = 1e-8)
  expect_equal(unname(pr[, "upr"] - pr[, "fit"]), qnorm(0.95) * sqrt(se_ref^2 + 0.09),
               tolerance = 1e-8)
  # the log marginal likelihood, from the n x n covariance
  C <- tcrossprod(Z) + s2 * diag(nrow(Z))
  L <- -0.5 * sum(ys * solve(C, ys)) - 0.5 * determinant(C)$modulus - 40 * log(2 * pi) -
    length(ys) * log(sd(dat$y))
  expect_equal(as.numeric(logLik(fit)), as.numeric(L), tolerance = 1e-8)
})

test_that("the exact method is the GP of the formulas", {
  dat <- gp_data(n = 50, d = 2)
  fit <- rff_gp(dat$x, dat$y, kernel = gaussian_kernel(0.8), method = "exact",
                optimize = FALSE, signal = 0.9, noise = 0.25)
  new <- matrix(c(-1, 0.5, 1, -0.3), 2, 2)
  xs <- std(fit, dat$x); ns <- std(fit, new)
  sf2 <- (0.9 / sd(dat$y))^2; sn2 <- (0.25 / sd(dat$y))^2
  k <- function(a, b) sf2 * exp(-as.matrix(dist(rbind(a, b)))^2 / (2 * 0.8^2))[
    seq_len(nrow(a)), nrow(a) + seq_len(nrow(b)), drop = FALSE]
  K <- k(xs, xs) + sn2 * diag(50)
  ys <- (dat$y - mean(dat$y)) / sd(dat$y)
  Ks <- k(ns, xs)
  m <- mean(dat$y) + sd(dat$y) * drop(Ks %*% solve(K, ys))
  v <- sf2 - rowSums((Ks %*% solve(K)) * Ks)
  p <- predict(fit, new, se.fit = TRUE)
  expect_equal(unname(p$fit), unname(m), tolerance = 1e-8)
  expect_equal(unname(p$se.fit), unname(sd(dat$y) * sqrt(v)), tolerance = 1e-7)
  L <- -0.5 * sum(ys * solve(K, ys)) - 0.5 * determinant(K)$modulus - 25 * log(2 * pi) -
    50 * log(sd(dat$y))
  expect_equal(as.numeric(logLik(fit)), as.numeric(L), tolerance = 1e-8)
})

num_grad <- function(f, th, h = 1e-5) {
  sapply(seq_along(th), function(i) {
    e <- h * (seq_along(th) == i)
    (f(th + e) - f(th - e)) / (2 * h)
  })
}

test_that("the analytic gradients match finite differences", {
  dat <- gp_data(n = 60, d = 2, seed = 3)
  xs <- scale(dat$x); ys <- drop(scale(dat$y))
  P <- list(x = unname(xs[, ]), y = ys, n = 60, d = 2L, method = "rff", kind = "standard",
            ard = TRUE, nthreads = 1L)
  set.seed(1)
  P$eps <- matrix(rnorm(2 * 30), 2, 30)
  th <- c(log(0.7), log(1.3), log(1.1), log(0.4))
  post <- bochner:::gp_rff_posterior(th, P)
  g <- bochner:::gp_rff_gradient(th, P, post)
  f <- function(t) bochner:::gp_rff_posterior(t, P)$value
  # central differences err by O(h^2) times third derivatives of order L itself
  expect_equal(g, num_grad(f, th), tolerance = 1e-6)
  # spectral mixture: weights, means, length scales, noise
  Q <- 2L
  P$kind <- "sm"; P$Q <- Q; P$ard <- FALSE
  P$comp <- sort(rep_len(1:2, 30)); P$Dq <- tabulate(P$comp, 2)
  th <- c(log(c(0.6, 0.4)), c(0.1, 0.3, -0.2, 0.5), log(c(0.5, 1, 2, 0.8)), log(0.3))
  post <- bochner:::gp_rff_posterior(th, P)
  expect_equal(bochner:::gp_rff_gradient(th, P, post), num_grad(f, th), tolerance = 1e-6)
  # exact Gaussian GP
  P <- list(x = unname(xs[, ]), y = ys, n = 60, d = 2L, method = "exact", kind = "standard",
            ard = TRUE, nthreads = 1L, code = 1L, par = 1)
  th <- c(log(0.7), log(1.3), log(1.1), log(0.4))
  post <- bochner:::gp_exact_posterior(th, P)
  fe <- function(t) bochner:::gp_exact_posterior(t, P)$value
  expect_equal(bochner:::gp_exact_gradient(th, P, post), num_grad(fe, th), tolerance = 1e-6)
})

test_that("with the same hyperparameters the rff GP converges to the exact GP like 1/sqrt(D)", {
  dat <- gp_data(n = 60, seed = 4)
  new <- matrix(seq(-2, 2, length.out = 25))
  args <- list(dat$x, dat$y, kernel = gaussian_kernel(0.6), optimize = FALSE,
               signal = 1, noise = 0.3)
  ex <- predict(do.call(rff_gp, c(args, method = "exact")), new, se.fit = TRUE)
  err <- sapply(c(16, 256), function(D) {
    # the error of a single map is random: average its square over maps
    e <- sapply(1:6, function(s) {
      p <- predict(do.call(rff_gp, c(args, D = D, seed = s)), new, se.fit = TRUE)
      c(mean((p$fit - ex$fit)^2), mean((p$se.fit^2 - ex$se.fit^2)^2))
    })
    sqrt(rowMeans(e))
  })
  # 16 times the features: errors 4 times smaller in expectation; with six
  # maps per size the ratio stays well above 2
  expect_gt(err[1, 1] / err[1, 2], 2)
  expect_gt(err[2, 1] / err[2, 2], 2)
  expect_lt(err[1, 2], 0.05 * sd(dat$y))
})

test_that("learned hyperparameters agree with the exact GP's maximum likelihood", {
  dat <- gp_data(n = 150, seed = 5)
  ex <- rff_gp(dat$x, dat$y, method = "exact")
  rf <- rff_gp(dat$x, dat$y, D = 100, seed = 1)
  expect_equal(rf$hyper$noise, ex$hyper$noise, tolerance = 0.1)
  expect_equal(rf$hyper$lengthscale, ex$hyper$lengthscale, tolerance = 0.15)
  expect_equal(ex$optim$convergence, 0L)
  # the noise sd used to simulate is 0.2
  expect_equal(ex$hyper$noise, 0.2, tolerance = 0.2)
})

test_that("ARD finds the relevant input", {
  set.seed(6)
  x <- matrix(runif(300), 150, 2)
  y <- sin(6 * x[, 1]) + rnorm(150, sd = 0.1)
  fit <- rff_gp(x, y, D = 100, ard = TRUE, seed = 2)
  expect_length(fit$hyper$lengthscale, 2L)
  expect_gt(fit$hyper$lengthscale[2] / fit$hyper$lengthscale[1], 5)
})

test_that("simulate draws posterior functions whose spread matches the standard errors", {
  dat <- gp_data(n = 40, seed = 7)
  fit <- rff_gp(dat$x, dat$y, D = 60, seed = 1)
  new <- matrix(c(-1, 0, 1))
  s <- simulate(fit, nsim = 4000, seed = 9, newdata = new)
  expect_equal(dim(s), c(3L, 4000L))
  expect_equal(attr(s, "seed"), 9)
  expect_identical(s, simulate(fit, nsim = 4000, seed = 9, newdata = new))
  p <- predict(fit, new, se.fit = TRUE)
  # mean within 4 standard errors of 4000 draws, sd within 5 %
  expect_lt(max(abs(rowMeans(s) - p$fit) / (p$se.fit / sqrt(4000))), 4)
  expect_equal(unname(apply(s, 1, sd)), unname(p$se.fit), tolerance = 0.05)
  fe <- rff_gp(dat$x, dat$y, method = "exact")
  se <- simulate(fe, nsim = 4000, seed = 9, newdata = new)
  pe <- predict(fe, new, se.fit = TRUE)
  expect_equal(unname(apply(se, 1, sd)), unname(pe$se.fit), tolerance = 0.05)
  expect_equal(nrow(simulate(fit, 1, seed = 1)), 40L)
})

test_that("fits are reproducible and the same for any thread count", {
  dat <- gp_data(n = 100, d = 2, seed = 8)
  set.seed(3); a <- rff_gp(dat$x, dat$y, D = 50, nthreads = 1)
  set.seed(3); b <- rff_gp(dat$x, dat$y, D = 50, nthreads = 2)
  expect_identical(a$theta, b$theta)
  expect_identical(predict(a, dat$x, se.fit = TRUE, nthreads = 1),
                   predict(b, dat$x, se.fit = TRUE, nthreads = 2))
  c1 <- rff_gp(dat$x, dat$y, D = 50, seed = 11)
  c2 <- rff_gp(dat$x, dat$y, D = 50, seed = 11)
  expect_identical(c1$theta, c2$theta)
})

test_that("the formula method follows the package's modelling conventions", {
  df <- data.frame(a = seq(0, 3, length.out = 60), b = rnorm(60))
  df$y <- cos(2 * df$a) + 0.1 * df$b
  df$a[3] <- NA
  fit <- rff_gp(y ~ a, data = df, D = 40, seed = 1, subset = b > -2)
  expect_equal(nobs(fit), sum(df$b > -2 & !is.na(df$a)))
  expect_equal(formula(fit), y ~ a)
  expect_length(predict(fit, df[1:5, ]), 5L)
  expect_true(is.na(predict(fit, df[1:5, ])[3]))
  up <- update(fit, D = 20)
  expect_equal(up$D, 20)
  expect_output(print(fit), "log marginal likelihood")
  expect_output(print(summary(fit)), "R-squared")
  expect_s3_class(logLik(fit), "logLik")
  pdf(NULL); on.exit(dev.off())
  expect_silent(plot(fit))
})

test_that("a spectral mixture is learned and extrapolates a periodic signal", {
  set.seed(10)
  x <- seq(0, 10, length.out = 120)
  y <- sin(2 * pi * x / 2.5) + 0.1 * rnorm(120)
  tr <- x < 8
  sm <- rff_gp(x[tr], y[tr], kernel = spectral_mixture_kernel(q = 3), D = 30, seed = 1,
               scale = FALSE, control = list(maxit = 100))
  ga <- rff_gp(x[tr], y[tr], D = 30, seed = 1, scale = FALSE)
  rmse <- function(f) sqrt(mean((predict(f, x[!tr]) - y[!tr])^2))
  expect_lt(rmse(sm), 0.3)
  expect_lt(rmse(sm), rmse(ga))
  # the learned mean frequency of the heaviest periodic component: 1 / 2.5
  h <- sm$hyper
  q <- which.max(h$weights * (abs(h$means[, 1]) > 0.1))
  expect_equal(abs(h$means[q, 1]), 0.4, tolerance = 0.05)
  expect_output(print(sm), "spectral mixture, 3 components")
})

test_that("rff_gp refuses bad input, naming the argument", {
  dat <- gp_data(n = 30)
  expect_error(rff_gp(dat$x, factor(rep(1:2, 15))), "'y'")
  expect_error(rff_gp(dat$x, dat$y[-1]), "'y'")
  expect_error(rff_gp(dat$x, rep(1, 30)), "'y' is constant")
  expect_error(rff_gp(dat$x, dat$y, D = 0), "'D'")
  expect_error(rff_gp(dat$x, dat$y, kernel = polynomial_kernel()), "'kernel'")
  expect_error(rff_gp(dat$x, dat$y, method = "nystrom"), "'method'")
  expect_error(rff_gp(dat$x, dat$y, noise = -1), "'noise'")
  expect_error(rff_gp(dat$x, dat$y, signal = 0), "'signal'")
  expect_error(rff_gp(dat$x, dat$y, ard = NA), "'ard'")
  expect_error(rff_gp(dat$x, dat$y, optimize = "yes"), "'optimize'")
  expect_error(rff_gp(dat$x, dat$y, control = 1), "'control'")
  expect_error(rff_gp(dat$x, dat$y, kernel = spectral_mixture_kernel(q = 5), D = 4), "'D'")
  expect_error(rff_gp(dat$x, dat$y, bogus = 1), "bogus")
  big <- matrix(0, 5001, 1)
  expect_error(rff_gp(big, rnorm(5001), method = "exact"), "'method'")
  fit <- rff_gp(dat$x, dat$y, D = 20, optimize = FALSE, noise = 0.2)
  expect_error(predict(fit, matrix(0, 2, 2)), "'newdata'")
  expect_error(predict(fit, 0, interval = "both"), "'interval'")
  expect_error(predict(fit, 0, level = 1), "'level'")
  expect_error(simulate(fit, nsim = 0), "'nsim'")
  expect_error(plot(rff_gp(matrix(rnorm(40), 20), rnorm(20), D = 10)), "'x'")
})

test_that("on many rows the search starts from an evenly spaced pilot's optimum", {
  # the pilot problem: the same frequencies, the rows evenly spaced, the
  # weights' scaling restricted to them
  set.seed(41)
  n <- 9001L
  P <- list(x = matrix(rnorm(2 * n), n), y = rnorm(n), n = n, d = 2L, w = runif(n) + 0.5,
            H = cbind(1, rnorm(n)), eps = matrix(rnorm(2 * 64), 2), dual = FALSE)
  P$sw <- sqrt(P$w)
  P$half_log_w <- sum(log(P$w)) / 2
  Q <- bochner:::gp_pilot_problem(P, 4000L)
  i <- round(seq(1, n, length.out = 4000L))
  expect_identical(Q$n, 4000L)
  expect_identical(Q$x, P$x[i, ])
  expect_identical(Q$y, P$y[i])
  expect_identical(Q$H, P$H[i, ])
  expect_identical(Q$sw, P$sw[i])
  expect_equal(Q$half_log_w, sum(log(P$w[i])) / 2)
  expect_identical(Q$eps, P$eps)
  # a fit on 6000 rows: the pilot's evaluations are reported, and the
  # search on all rows converges from its optimum to a fit of the function
  # within the noise
  x <- matrix(runif(6000, -3, 3))
  y <- sin(2 * x[, 1]) + rnorm(6000, sd = 0.2)
  fit <- rff_gp(x, y, D = 64, seed = 1)
  expect_equal(fit$optim$pilot[["rows"]], 4000)
  expect_identical(fit$optim$convergence, 0L)
  expect_output(print(fit), "on a 4000-row pilot")
  expect_lt(sqrt(mean((predict(fit, x) - sin(2 * x[, 1]))^2)), 0.05)
})
