test_that("Gaussian and Laplace-kernel frequencies are R's rnorm and rcauchy draws", {
  set.seed(10)
  w <- spectral_sample(gaussian_kernel(2), 7, 3)
  set.seed(10)
  expect_identical(w, matrix(rnorm(21, 0, 1 / 2), 7, 3))
  set.seed(11)
  w <- spectral_sample(laplace_kernel(0.5), 4, 2)
  set.seed(11)
  expect_identical(w, matrix(rcauchy(8, 0, 2), 4, 2))
})

test_that("Cauchy-kernel frequencies are Laplace draws by inversion", {
  set.seed(12)
  w <- spectral_sample(cauchy_kernel(4), 6, 2)
  set.seed(12)
  u <- runif(12)
  ref <- ifelse(u < 0.5, log(2 * u), -log(2 * (1 - u))) / 4
  expect_equal(w, matrix(ref, 6, 2), tolerance = 1e-15)
})

test_that("Matern frequencies are multivariate t draws, one chi-square per row", {
  set.seed(13)
  w <- spectral_sample(matern_kernel(2, 1.5), 3, 2)
  set.seed(13)
  ref <- matrix(0, 3, 2)
  for (i in 1:3) {
    u <- rchisq(1, 3)
    ref[i, ] <- rnorm(2) / (2 * sqrt(u / 3))
  }
  expect_equal(w, ref, tolerance = 1e-15)
})

pcauchy_laplace <- function(q, b) ifelse(q < 0, 0.5 * exp(q / b), 1 - 0.5 * exp(-q / b))

test_that("marginals follow their distributions (Kolmogorov-Smirnov, fixed seed)", {
  set.seed(14)
  n <- 20000
  expect_gt(ks.test(spectral_sample(gaussian_kernel(2), n, 1), "pnorm", 0, 1 / 2)$p.value, 0.001)
  expect_gt(ks.test(spectral_sample(laplace_kernel(3), n, 1), "pcauchy", 0, 1 / 3)$p.value, 0.001)
  expect_gt(ks.test(spectral_sample(cauchy_kernel(0.5), n, 1), pcauchy_laplace, 2)$p.value, 0.001)
  w <- spectral_sample(matern_kernel(1.5, 1.25), n, 2)
  expect_gt(ks.test(w[, 2] * 1.5, "pt", 2.5)$p.value, 0.001)
  # and the wrong scale is rejected, so the test has power
  expect_lt(ks.test(spectral_sample(gaussian_kernel(2), n, 1), "pnorm", 0, 0.55)$p.value, 0.001)
})

test_that("the empirical characteristic function is the kernel (Bochner)", {
  set.seed(15)
  n <- 40000
  delta <- c(0.7, -0.4, 1.1)
  for (k in all_shift_invariant_kernels()) {
    w <- spectral_sample(k, n, 3)
    estimate <- mean(cos(w %*% delta))
    exact <- kernel_matrix(k, rbind(delta, 0))[1, 2]
    # each cos term has variance at most 1/2 + k(2 delta)/2 <= 1: 5 sd
    expect_lt(abs(estimate - exact), 5 / sqrt(n), label = k$name)
  }
})

test_that("spectral_sample refuses kernels and sizes it cannot serve", {
  expect_error(spectral_sample(polynomial_kernel(), 3, 2), "shift-invariant")
  expect_error(spectral_sample(min_kernel(), 3, 2), "shift-invariant")
  expect_error(spectral_sample(gaussian_kernel("median"), 3, 2), "median")
  expect_error(spectral_sample(gaussian_kernel(), 0, 2), "'n'")
  expect_error(spectral_sample(gaussian_kernel(), 3, 0), "'d'")
  expect_error(spectral_sample(gaussian_kernel(), 2.5, 2), "'n'")
  expect_error(spectral_sample(gaussian_kernel(), NA, 2), "'n'")
  expect_error(spectral_sample(gaussian_kernel(), 3, "a"), "'d'")
  expect_error(spectral_sample(list(), 3, 2), "'kernel'")
  expect_error(spectral_sample(gaussian_kernel(), 2^31, 2), "at most")
  expect_error(spectral_sample(gaussian_kernel(), 2^31 - 1, 2^31 - 1), "would need .* of memory; .* is allowed")
})
