# The n x n (dual) form of the random-feature GP, used when 2D >= n, and the
# default number of frequencies for small n.

dual_problem <- function(n = 50, D = 40, w = NULL, seed = 21) {
  set.seed(seed)
  x <- matrix(runif(2 * n, -2, 2), n, 2)
  y <- sin(2 * x[, 1]) + 0.3 * x[, 2] + rnorm(n, sd = 0.3)
  P <- list(x = unname(scale(x)[, ]), y = drop(scale(y)), n = n, d = 2L, method = "rff",
            kind = "standard", ard = TRUE, nthreads = 1L, eps = matrix(rnorm(2 * D), 2, D))
  if (!is.null(w)) {
    P$sw <- sqrt(w)
    P$y <- P$sw * P$y
    P$half_log_w <- sum(log(w)) / 2
  }
  list(x = x, y = y, P = P)
}

test_that("the dual form has the primal's likelihood, gradient and posterior mean", {
  for (w in list(NULL, seq(0.5, 2, length.out = 50))) {
    P <- dual_problem(w = w)$P
    Pd <- P
    Pd$dual <- TRUE
    th <- log(c(0.7, 1.2, 1.1, 0.4))
    a <- bochner:::gp_rff_posterior(th, P)
    b <- bochner:::gp_dual_posterior(th, Pd)
    expect_equal(b$value, a$value, tolerance = 1e-10)
    expect_equal(b$alpha, a$alpha, tolerance = 1e-9)
    expect_equal(bochner:::gp_dual_gradient(th, Pd, b), bochner:::gp_rff_gradient(th, P, a),
                 tolerance = 1e-9)
  }
})

test_that("dual fits predict as primal fits at the same frequencies and hyperparameters", {
  dat <- dual_problem(n = 50)
  new <- matrix(c(-1, 0.3, 1.2, 0.5, -0.5, 0), 3, 2)
  args <- list(dat$x, dat$y, kernel = gaussian_kernel(0.8), optimize = FALSE, signal = 1,
               noise = 0.3, seed = 4)
  du <- do.call(rff_gp, c(args, D = 30))              # 60 features >= 50 rows: dual
  expect_false(is.null(du$dual))
  # against the Bayesian linear regression formulas of the primal form
  xs <- sweep(sweep(dat$x, 2, du$scaling$center), 2, du$scaling$scale, "/")
  ns <- sweep(sweep(new, 2, du$scaling$center), 2, du$scaling$scale, "/")
  feat <- function(z) {
    p <- z %*% du$omega
    Z <- matrix(0, nrow(z), 2 * ncol(p))
    Z[, c(TRUE, FALSE)] <- cos(p); Z[, c(FALSE, TRUE)] <- sin(p)
    sweep(Z, 2, rep(du$amp, each = 2), "*")
  }
  Z <- feat(xs); Zs <- feat(ns)
  s <- sd(dat$y); ys <- (dat$y - mean(dat$y)) / s; s2 <- (0.3 / s)^2
  A <- crossprod(Z) + s2 * diag(60)
  p <- predict(du, new, se.fit = TRUE)
  expect_equal(unname(p$fit), mean(dat$y) + s * drop(Zs %*% solve(A, crossprod(Z, ys))),
               tolerance = 1e-8)
  expect_equal(unname(p$se.fit), s * sqrt(s2 * rowSums((Zs %*% solve(A)) * Zs)),
               tolerance = 1e-7)
  expect_equal(unname(fitted(du)), mean(dat$y) + s * drop(Z %*% solve(A, crossprod(Z, ys))),
               tolerance = 1e-8)
  # posterior draws (pathwise) have the predictive mean and standard error:
  # with 4000 draws the sample mean errs by se / sqrt(4000), the sd by ~1.1 %
  sims <- simulate(du, nsim = 4000, seed = 3, newdata = new)
  expect_equal(unname(rowMeans(sims)), unname(p$fit), tolerance = 4 * max(p$se.fit) / sqrt(4000))
  expect_equal(unname(apply(sims, 1, sd)), unname(p$se.fit), tolerance = 0.05)
})

test_that("with the default D, learned hyperparameters are within 10 % of exact ML", {
  # Friedman 1 on 5 inputs, n = 150: the default is 4096 frequencies, in the
  # n x n form (bench/investigations/gp.md: n = 500, d = 10)
  set.seed(7)
  n <- 150
  x <- matrix(runif(n * 5), n, 5)
  y <- 10 * sin(pi * x[, 1] * x[, 2]) + 20 * (x[, 3] - 0.5)^2 + 10 * x[, 4] + 5 * x[, 5] +
    rnorm(n)
  ex <- rff_gp(x, y, method = "exact")
  for (s in 1:2) {
    rf <- rff_gp(x, y, seed = s)
    expect_equal(rf$D, 4096L)
    expect_equal(unlist(rf$hyper), unlist(ex$hyper), tolerance = 0.1)
  }
  # a few frequencies are biased towards more noise
  few <- rff_gp(x, y, D = 20, seed = 1)
  expect_gt(few$hyper$noise, 1.1 * ex$hyper$noise)
  expect_identical(bochner:::gp_default_D(500), 4096L)
  expect_identical(bochner:::gp_default_D(1e5), 256L)
})

test_that("orthogonal and qmc draws are accepted where they are valid", {
  dat <- dual_problem(n = 40)
  f <- rff_gp(dat$x, dat$y, D = 16, sampling = "orthogonal", seed = 1, optimize = FALSE)
  # blocks of d = 2 orthogonal directions
  eps <- f$omega * f$kernel$sigma
  expect_equal(sum(eps[, 1] * eps[, 2]), 0, tolerance = 1e-12)
  expect_s3_class(rff_gp(dat$x, dat$y, D = 16, sampling = "qmc", seed = 1, optimize = FALSE,
                         kernel = laplace_kernel(1)), "rff_gp")
  expect_error(rff_gp(dat$x, dat$y, D = 16, sampling = "orthogonal", kernel = laplace_kernel(1)),
               "sampling")
  expect_error(rff_gp(dat$x, dat$y, sampling = "sobol"), "sampling")
})
