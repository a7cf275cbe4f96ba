# Case weights of rff_gp(): row i has noise variance s_n^2 / w_i.

wdat <- function(n = 60, seed = 11) {
  set.seed(seed)
  x <- matrix(runif(2 * n, -2, 2), n, 2)
  w <- rep(c(0.5, 1, 4), length.out = n)
  y <- sin(2 * x[, 1]) + 0.5 * x[, 2] + rnorm(n, sd = 0.3 / sqrt(w))
  list(x = x, y = y, w = w)
}

# the exact weighted GP in plain R, on the fit's standardised inputs (on
# the rows of positive weight) and response
ref_weighted_gp <- function(x, y, w, new, ell, sf, sn) {
  keep <- w > 0
  ctr <- colMeans(x[keep, ]); scl <- apply(x[keep, ], 2, sd)
  xs <- sweep(sweep(x, 2, ctr), 2, scl, "/"); ns <- sweep(sweep(new, 2, ctr), 2, scl, "/")
  xs <- xs[keep, , drop = FALSE]
  mu <- sum(w * y) / sum(w); s <- sd(y[keep])
  ys <- (y[keep] - mu) / s
  sf2 <- (sf / s)^2; sn2 <- (sn / s)^2
  k <- function(a, b) {
    d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * a %*% t(b)
    sf2 * exp(-pmax(d2, 0) / (2 * ell^2))
  }
  C <- k(xs, xs) + diag(sn2 / w[keep])
  Ks <- k(ns, xs)
  list(fit = mu + s * drop(Ks %*% solve(C, ys)),
       se = s * sqrt(sf2 - rowSums((Ks %*% solve(C)) * Ks)),
       logLik = -0.5 * sum(ys * solve(C, ys)) - 0.5 * as.numeric(determinant(C)$modulus) -
         sum(keep) / 2 * log(2 * pi) - sum(keep) * log(s))
}

test_that("weighted fits are the exact weighted GP, and the rff one converges to it", {
  dat <- wdat()
  new <- matrix(c(-1, 0.5, 1.5, 0.2, -0.7, 1), 3, 2)
  ref <- ref_weighted_gp(dat$x, dat$y, dat$w, new, ell = 0.8, sf = 1, sn = 0.3)
  args <- list(dat$x, dat$y, kernel = gaussian_kernel(0.8), optimize = FALSE, signal = 1,
               noise = 0.3, weights = dat$w)
  ex <- do.call(rff_gp, c(args, method = "exact"))
  p <- predict(ex, new, se.fit = TRUE)
  expect_equal(unname(p$fit), ref$fit, tolerance = 1e-8)
  expect_equal(unname(p$se.fit), ref$se, tolerance = 1e-7)
  expect_equal(as.numeric(logLik(ex)), ref$logLik, tolerance = 1e-8)
  # random features: the same model up to the features' error, O(1/sqrt(D))
  rf <- do.call(rff_gp, c(args, D = 2000, seed = 1))
  pr <- predict(rf, new, se.fit = TRUE)
  expect_lt(max(abs(pr$fit - ref$fit)), 0.05)
  expect_lt(max(abs(pr$se.fit - ref$se)), 0.03)
  expect_equal(as.numeric(logLik(rf)), ref$logLik, tolerance = 0.02)
  # unit weights are no weights; weights change the fit
  one <- do.call(rff_gp, c(utils::modifyList(args, list(weights = rep(1, 60))), D = 50, seed = 2))
  none <- do.call(rff_gp, c(utils::modifyList(args, list(weights = NULL)), D = 50, seed = 2))
  expect_equal(fitted(one), fitted(none))
  expect_false(isTRUE(all.equal(fitted(do.call(rff_gp, c(args, D = 50, seed = 2))), fitted(none))))
})

test_that("weighted rff likelihood: exact formula and analytic gradient", {
  dat <- wdat(n = 40, seed = 12)
  fit <- rff_gp(dat$x, dat$y, kernel = gaussian_kernel(0.7), D = 30, optimize = FALSE,
                signal = 1.1, noise = 0.4, weights = dat$w, seed = 3)
  xs <- sweep(sweep(dat$x, 2, fit$scaling$center), 2, fit$scaling$scale, "/")
  p <- xs %*% fit$omega
  Z <- matrix(0, 40, 60)
  Z[, c(TRUE, FALSE)] <- cos(p); Z[, c(FALSE, TRUE)] <- sin(p)
  Z <- sweep(Z, 2, rep(fit$amp, each = 2), "*")
  s <- sd(dat$y); ys <- (dat$y - sum(dat$w * dat$y) / sum(dat$w)) / s
  C <- tcrossprod(Z) + diag((0.4 / s)^2 / dat$w)
  L <- -0.5 * sum(ys * solve(C, ys)) - 0.5 * as.numeric(determinant(C)$modulus) - 20 * log(2 * pi) -
    40 * log(s)
  expect_equal(as.numeric(logLik(fit)), L, tolerance = 1e-8)
  # gradients of the weighted objectives against central differences
  P <- list(x = unname(xs), y = sqrt(dat$w) * ys, sw = sqrt(dat$w), w = dat$w,
            half_log_w = sum(log(dat$w)) / 2, n = 40, d = 2L, method = "rff",
            kind = "standard", ard = TRUE, nthreads = 1L, eps = fit$omega * 0.7)
  th <- c(log(0.7), log(1.2), log(1.1), log(0.4))
  f <- function(t) bochner:::gp_rff_posterior(t, P)$value
  g <- bochner:::gp_rff_gradient(th, P, bochner:::gp_rff_posterior(th, P))
  h <- 1e-5
  num <- sapply(1:4, function(i) (f(th + h * (1:4 == i)) - f(th - h * (1:4 == i))) / (2 * h))
  expect_equal(g, num, tolerance = 1e-6)
  Pe <- utils::modifyList(P, list(y = ys, method = "exact", code = 1L, par = 1))
  fe <- function(t) bochner:::gp_exact_posterior(t, Pe)$value
  ge <- bochner:::gp_exact_gradient(th, Pe, bochner:::gp_exact_posterior(th, Pe))
  nume <- sapply(1:4, function(i) (fe(th + h * (1:4 == i)) - fe(th - h * (1:4 == i))) / (2 * h))
  expect_equal(ge, nume, tolerance = 1e-6)
})

test_that("zero weights drop rows; the formula method takes weights as lm does", {
  dat <- wdat(n = 50, seed = 13)
  w0 <- dat$w
  w0[c(3, 10)] <- 0
  args <- list(kernel = gaussian_kernel(0.8), optimize = FALSE, signal = 1, noise = 0.3,
               method = "exact")
  a <- do.call(rff_gp, c(list(dat$x, dat$y, weights = w0), args))
  b <- do.call(rff_gp, c(list(dat$x[-c(3, 10), ], dat$y[-c(3, 10)], weights = w0[-c(3, 10)],
                              scale = FALSE), args))
  new <- matrix(c(0.1, -0.4), 1, 2)
  # b's inputs are unscaled: compare with the reference on a's standardisation
  ref <- ref_weighted_gp(dat$x, dat$y, w0, new, ell = 0.8, sf = 1, sn = 0.3)
  expect_equal(unname(predict(a, new)), ref$fit, tolerance = 1e-8)
  expect_equal(length(fitted(a)), 50L)
  expect_equal(a$n, 50L)
  expect_true(is.finite(logLik(b)))
  df <- data.frame(y = dat$y, a = dat$x[, 1], b = dat$x[, 2], wt = dat$w)
  ff <- rff_gp(y ~ a + b, data = df, weights = wt, D = 40, seed = 1, optimize = FALSE)
  fd <- rff_gp(dat$x, dat$y, weights = dat$w, D = 40, seed = 1, optimize = FALSE)
  expect_equal(unname(fitted(ff)), unname(fitted(fd)))
  expect_error(rff_gp(dat$x, dat$y, weights = -dat$w), "weights")
  expect_error(rff_gp(dat$x, dat$y, weights = dat$w[-1]), "weights")
  expect_error(rff_gp(dat$x, dat$y, weights = c(1, rep(0, 49))), "weights")
})

test_that("prediction intervals take the new observations' weights, as predict.lm", {
  dat <- wdat(n = 40, seed = 14)
  fit <- rff_gp(dat$x, dat$y, D = 30, seed = 1, optimize = FALSE, noise = 0.3,
                weights = dat$w)
  new <- dat$x[1:3, ]
  p <- predict(fit, new, se.fit = TRUE)
  pw <- predict(fit, new, interval = "prediction", weights = c(1, 4, 0.25))
  expect_equal(unname(pw[, "upr"] - pw[, "fit"]),
               qnorm(0.975) * sqrt(unname(p$se.fit)^2 + 0.09 / c(1, 4, 0.25)), tolerance = 1e-10)
  expect_equal(predict(fit, new, interval = "prediction", weights = 1),
               predict(fit, new, interval = "prediction"))
  expect_error(predict(fit, new, interval = "prediction", weights = c(1, 2)), "weights")
  expect_error(predict(fit, new, interval = "prediction", weights = 0), "weights")
})
