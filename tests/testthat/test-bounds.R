test_that("pointwise figures follow Hoeffding with the right constants", {
  r <- rff_dimension(eps = 0.1, delta = 0.05)
  expect_equal(r$pointwise_pair, ceiling(2 * log(2 / 0.05) / 0.01))
  expect_equal(r$pointwise_phase, ceiling(8 * log(2 / 0.05) / 0.01))
  expect_null(r$uniform)
})

test_that("the uniform figure follows Rahimi-Recht with sigma_p^2 = E||w||^2", {
  r <- rff_dimension(0.1, 0.01, kernel = gaussian_kernel(2), d = 5, diameter = 3)
  sigma_p <- sqrt(5 / 4)
  expect_equal(r$sigma_p, sigma_p)
  expect_equal(r$uniform, ceiling(4 * 7 / 0.01 * log(2^8 * (sigma_p * 3 / 0.1)^2 / 0.01)))
  # with D = uniform, the bound on the failure probability is delta
  bound <- 2^8 * (sigma_p * 3 / 0.1)^2 * exp(-r$uniform * 0.01 / (4 * 7))
  expect_lte(bound, 0.01)
  expect_gt(2^8 * (sigma_p * 3 / 0.1)^2 * exp(-(r$uniform - 1) * 0.01 / 28), 0.01 * 0.999)
  expect_equal(rff_dimension(0.1, 0.01, cauchy_kernel(1), d = 2, diameter = 1)$sigma_p, 2)
  expect_equal(rff_dimension(0.1, 0.01, matern_kernel(1, 2), d = 1, diameter = 1)$sigma_p, sqrt(2))
})

test_that("sigma_p^2 matches the second moment of spectral samples", {
  set.seed(30)
  for (k in list(gaussian_kernel(0.7), cauchy_kernel(1.5), matern_kernel(1, 3))) {
    w <- spectral_sample(k, 2e5, 2)
    r <- rff_dimension(0.1, 0.1, kernel = k, d = 2, diameter = 1)
    expect_equal(mean(rowSums(w^2)), r$sigma_p^2, tolerance = 0.05, label = k$name)
  }
})

test_that("d and the diameter can come from data", {
  set.seed(31)
  x <- matrix(rnorm(30), 10, 3)
  r <- rff_dimension(0.1, 0.05, gaussian_kernel("median"), x = x)
  expect_equal(r$d, 3L)
  expect_equal(r$diameter, max(dist(x)))
  expect_equal(r$kernel$sigma, median(dist(x)))
  big <- matrix(rnorm(6000), 3000, 2)
  expect_gte(rff_dimension(0.1, 0.05, gaussian_kernel(1), x = big)$diameter, max(dist(big[1:1500, ])))
  expect_output(print(r), "uniform")
})

test_that("an infinite second moment is an error, not a number", {
  expect_error(rff_dimension(0.1, 0.05, laplace_kernel(1), d = 2, diameter = 1), "infinite")
  expect_error(rff_dimension(0.1, 0.05, matern_kernel(1, 0.5), d = 2, diameter = 1), "nu <= 1")
  expect_s3_class(rff_dimension(0.1, 0.05, laplace_kernel(1)), "rff_dimension")
})

test_that("bad arguments are refused, naming them", {
  expect_error(rff_dimension(0), "'eps'")
  expect_error(rff_dimension(1.5), "'eps'")
  expect_error(rff_dimension(NA), "'eps'")
  expect_error(rff_dimension(0.1, delta = 0), "'delta'")
  expect_error(rff_dimension(0.1, delta = 1), "'delta'")
  expect_error(rff_dimension(0.1, d = 2), "both")
  expect_error(rff_dimension(0.1, d = 0, diameter = 1), "'d'")
  expect_error(rff_dimension(0.1, d = 2, diameter = -1), "'diameter'")
  expect_error(rff_dimension(0.1, kernel = polynomial_kernel(), d = 2, diameter = 1), "shift-invariant")
  expect_error(rff_dimension(0.1, kernel = gaussian_kernel("median"), d = 2, diameter = 1), "median")
})

test_that("bochner_threads reads the option and refuses nonsense", {
  old <- options(bochner.threads = 2)
  on.exit(options(old))
  expect_equal(bochner_threads(), 2L)
  options(bochner.threads = 0)
  expect_error(bochner_threads(), "bochner.threads")
  options(bochner.threads = NULL)
  expect_gte(bochner_threads(), 1L)
})
