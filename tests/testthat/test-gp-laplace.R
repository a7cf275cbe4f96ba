# rff_gp(laplace = TRUE): the hyperparameters' uncertainty in the predictive
# variance (Laplace and the delta method) against plain-R second differences.

lap_data <- function() {
  set.seed(5)
  x <- runif(30, -2, 2)
  list(x = x, y = sin(2 * x) + 0.5 * x + rnorm(30, sd = 0.2), new = c(-1, 0.5, 2.5, 3.5))
}

# J H^-1 J' from a log likelihood ll(theta) and a predictive mean mu(theta),
# by central differences (errors O(h^2))
lap_reference <- function(ll, mu, th, h = 1e-3) {
  k <- length(th)
  E <- diag(h, k)
  Hm <- matrix(0, k, k)
  for (i in 1:k) for (j in 1:k) {
    Hm[i, j] <- -(ll(th + E[, i] + E[, j]) - ll(th + E[, i] - E[, j]) -
                    ll(th - E[, i] + E[, j]) + ll(th - E[, i] - E[, j])) / (4 * h^2)
  }
  J <- sapply(1:k, function(i) (mu(th + E[, i]) - mu(th - E[, i])) / (2 * h))
  rowSums((J %*% solve(Hm)) * J)
}

test_that("laplace = TRUE adds J H^-1 J' to the variance: exact, n x n and m x m forms", {
  dat <- lap_data()
  n <- 30
  for (form in c("exact", "dual", "primal")) {
    args <- list(dat$x, dat$y, seed = 1, method = if (form == "exact") "exact" else "rff",
                 D = if (form == "primal") 10 else 20)
    fit0 <- do.call(rff_gp, args)
    fit <- do.call(rff_gp, c(args, laplace = TRUE))
    expect_equal(fit$theta, fit0$theta)
    expect_equal(is.null(fit$dual), form != "dual")
    extra <- predict(fit, dat$new, se.fit = TRUE)$se.fit^2 -
      predict(fit0, dat$new, se.fit = TRUE)$se.fit^2
    xs <- (dat$x - fit$scaling$center) / fit$scaling$scale
    xsn <- (dat$new - fit$scaling$center) / fit$scaling$scale
    ys <- (dat$y - fit$y_center) / fit$y_scale
    th <- unname(fit$theta)
    if (form == "exact") {
      kern <- function(a, b, th) exp(2 * th[2]) * exp(-outer(a, b, "-")^2 / (2 * exp(2 * th[1])))
    } else {
      eps <- drop(fit$omega) * exp(th[1])          # the fixed standard draws
      feat <- function(a, th) {
        w <- eps / exp(th[1])
        cbind(cos(outer(a, w)), sin(outer(a, w))) * exp(th[2]) / sqrt(length(w))
      }
      kern <- function(a, b, th) feat(a, th) %*% t(feat(b, th))
    }
    cov <- function(th) kern(xs, xs, th) + exp(2 * th[3]) * diag(n)
    ll <- function(th) {
      C <- cov(th)
      -0.5 * sum(ys * solve(C, ys)) - 0.5 * as.numeric(determinant(C)$modulus)
    }
    mu <- function(th) drop(kern(xsn, xs, th) %*% solve(cov(th), ys))
    ref <- lap_reference(ll, mu, th) * fit$y_scale^2
    expect_equal(unname(extra), ref, tolerance = 1e-4)
    expect_true(all(extra > 0))
  }
})

test_that("laplace = TRUE works with a basis and a spectral mixture; bad use is refused", {
  dat <- lap_data()
  fit <- rff_gp(dat$x, dat$y, kernel = spectral_mixture_kernel(q = 2), D = 20, seed = 1,
                mean = "linear", laplace = TRUE)
  fit0 <- rff_gp(dat$x, dat$y, kernel = spectral_mixture_kernel(q = 2), D = 20, seed = 1,
                 mean = "linear")
  p <- predict(fit, dat$new, se.fit = TRUE)
  p0 <- predict(fit0, dat$new, se.fit = TRUE)
  expect_equal(p$fit, p0$fit)
  expect_true(all(p$se.fit >= p0$se.fit))
  expect_output(print(fit), "Laplace")
  expect_error(rff_gp(dat$x, dat$y, optimize = FALSE, laplace = TRUE), "laplace")
  expect_error(rff_gp(dat$x, dat$y, method = "exact", kernel = laplace_kernel(1),
                      laplace = TRUE), "laplace")
  expect_error(rff_gp(dat$x, dat$y, laplace = NA), "laplace")
})
