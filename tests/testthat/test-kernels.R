test_that("every exact kernel matches its plain-R formula", {
  set.seed(1)
  x <- matrix(rnorm(24), 8, 3)
  y <- matrix(rnorm(15), 5, 3)
  kernels <- c(all_shift_invariant_kernels(),
               list(matern_kernel(0.7, 0.5), matern_kernel(1, 2.5), matern_kernel(2, 3.3),
                    polynomial_kernel(3, scale = 0.5, offset = 1),
                    polynomial_kernel(coef = c(0.5, 1, 0, 0.25)),
                    polynomial_kernel(degree = 0), polynomial_kernel(degree = 1, offset = 0)))
  for (k in kernels) {
    expect_equal(kernel_matrix(k, x), ref_kernel(k, x), tolerance = 1e-12,
                 label = paste(k$name, "x vs x"))
    expect_equal(kernel_matrix(k, x, y), ref_kernel(k, x, y), tolerance = 1e-12,
                 label = paste(k$name, "x vs y"))
  }
  xp <- abs(x)
  yp <- abs(y)
  expect_equal(kernel_matrix(min_kernel(2), xp, yp), ref_kernel(min_kernel(2), xp, yp))
})

test_that("Gram matrices are symmetric with the exact diagonal", {
  set.seed(2)
  x <- matrix(rnorm(200, mean = 50), 40, 5)  # far from the origin: centring matters
  for (k in all_shift_invariant_kernels()) {
    K <- kernel_matrix(k, x)
    expect_identical(K, t(K))
    expect_identical(diag(K), rep(1, 40))
  }
  K <- kernel_matrix(polynomial_kernel(2), x)
  expect_identical(K, t(K))
})

test_that("Matern tends to its closed forms and to the Gaussian", {
  set.seed(3)
  x <- matrix(rnorm(20), 10, 2)
  # the Bessel path just off the closed-form values
  expect_equal(kernel_matrix(matern_kernel(1, 1.5 + 1e-9), x),
               kernel_matrix(matern_kernel(1, 1.5), x), tolerance = 1e-7)
  expect_equal(kernel_matrix(matern_kernel(1, 200), x),
               kernel_matrix(gaussian_kernel(1), x), tolerance = 5e-3)
})

test_that("Matern with nu = 1/2 is the exponential of the Euclidean distance", {
  x <- matrix(c(0, 3, 0, 4), 2)
  expect_equal(kernel_matrix(matern_kernel(2, 0.5), x)[1, 2], exp(-5 / 2))
})

test_that("kernel_matrix handles one row, one column and row names", {
  x <- matrix(c(a = 1, b = 2), dimnames = list(c("a", "b"), NULL))
  K <- kernel_matrix(gaussian_kernel(1), x)
  expect_equal(dimnames(K), list(c("a", "b"), c("a", "b")))
  expect_equal(K[1, 2], exp(-1 / 2))
  expect_equal(kernel_matrix(laplace_kernel(1), 1, 3), matrix(exp(-2)))
  expect_equal(kernel_matrix(gaussian_kernel(2), data.frame(u = 1:3, v = 0)),
               exp(-as.matrix(dist(1:3))^2 / 8), ignore_attr = TRUE)
})

test_that("sigma = 'median' is resolved on the data and reported", {
  set.seed(4)
  x <- matrix(rnorm(60), 20, 3)
  K <- kernel_matrix(gaussian_kernel("median"), x)
  s <- median(dist(x))
  expect_equal(attr(K, "sigma"), s)
  expect_equal(K, kernel_matrix(gaussian_kernel(s), x), ignore_attr = TRUE)
  K1 <- kernel_matrix(laplace_kernel("median"), x)
  expect_equal(attr(K1, "sigma"), median(dist(x, "manhattan")))
  expect_error(kernel_matrix(gaussian_kernel("median"), matrix(1, 5, 2)), "sigma")
})

test_that("results do not depend on the thread count", {
  set.seed(5)
  x <- matrix(rnorm(3000), 600, 5)
  for (k in c(all_shift_invariant_kernels(), list(polynomial_kernel(3)))) {
    expect_identical(kernel_matrix(k, x, nthreads = 1), kernel_matrix(k, x, nthreads = 2))
  }
  expect_identical(kernel_matrix(min_kernel(), abs(x), nthreads = 1),
                   kernel_matrix(min_kernel(), abs(x), nthreads = 2))
})

test_that("kernels print their formula and parameters", {
  expect_output(print(gaussian_kernel(2)), "exp\\(-\\|\\|x - y\\|\\|\\^2.*sigma = 2")
  expect_output(print(laplace_kernel("median")), "median")
  expect_output(print(matern_kernel(1, 2.5)), "sqrt\\(5\\)")
  expect_output(print(matern_kernel(1, 0.8)), "K_nu")
  expect_output(print(polynomial_kernel(3, 2, 1)), "\\(2 x.y \\+ 1\\)\\^3")
  expect_output(print(polynomial_kernel(coef = c(1, 0, 2))), "1 \\(x.y\\)\\^0 \\+ 2 \\(x.y\\)\\^2")
  expect_output(print(min_kernel()), "min\\(x_j, y_j\\)")
})

test_that("polynomial kernels reduce to their coefficient vector", {
  expect_equal(polynomial_kernel(2, scale = 3, offset = 2)$coef, c(4, 12, 9))
  expect_equal(polynomial_kernel(coef = c(1, 2, 0, 0))$coef, c(1, 2))
  expect_s3_class(polynomial_kernel(), c("polynomial_kernel", "bochner_kernel"), exact = TRUE)
  expect_s3_class(gaussian_kernel(), c("gaussian_kernel", "bochner_kernel"), exact = TRUE)
})

test_that("bad kernel parameters are refused, naming the argument", {
  expect_error(gaussian_kernel(0), "'sigma'")
  expect_error(gaussian_kernel(-1), "'sigma'")
  expect_error(laplace_kernel(NA), "'sigma'")
  expect_error(cauchy_kernel(Inf), "'sigma'")
  expect_error(gaussian_kernel("mean"), "'sigma'")
  expect_error(gaussian_kernel(c(1, -2)), "'sigma'")   # a vector is ARD (test-ard.R)
  expect_error(matern_kernel(1, 0), "'nu'")
  expect_error(matern_kernel(1, -2), "'nu'")
  expect_error(polynomial_kernel(2.5), "'degree'")
  expect_error(polynomial_kernel(-1), "'degree'")
  expect_error(polynomial_kernel(2, scale = 0), "'scale'")
  expect_error(polynomial_kernel(2, offset = -1), "'offset'")
  expect_error(polynomial_kernel(coef = c(1, -1)), "'coef'")
  expect_error(polynomial_kernel(coef = c(1, NA)), "'coef'")
  expect_error(polynomial_kernel(degree = 2, coef = 1), "not both")
  expect_error(min_kernel(-1), "'offset'")
})

test_that("bad data for kernel_matrix is refused, naming the argument", {
  x <- matrix(rnorm(10), 5)
  k <- gaussian_kernel(1)
  expect_error(kernel_matrix(k, rbind(x, NA)), "'x'.*NA")
  expect_error(kernel_matrix(k, rbind(x, NaN)), "'x'.*row 6")
  expect_error(kernel_matrix(k, rbind(x, Inf)), "'x'")
  expect_error(kernel_matrix(k, x, rbind(x, -Inf)), "'y'")
  expect_error(kernel_matrix(k, matrix(numeric(0), 0, 2)), "'x' has no rows")
  expect_error(kernel_matrix(k, matrix(numeric(0), 3, 0)), "'x' has no columns")
  expect_error(kernel_matrix(k, x, matrix(1, 2, 3)), "'y' has 3 columns")
  expect_error(kernel_matrix(k, letters), "'x'")
  expect_error(kernel_matrix(k, list(1, 2)), "'x'")
  expect_error(kernel_matrix(k, data.frame(a = 1:3, b = letters[1:3])), "non-numeric columns \\(b\\)")
  expect_error(kernel_matrix(k, factor(1:3)), "'x'")
  expect_error(kernel_matrix("gaussian", x), "'kernel'")
  expect_error(kernel_matrix(min_kernel(), -x^2), "non-negative")
  expect_error(kernel_matrix(k, x, nthreads = 0), "'nthreads'")
  expect_error(kernel_matrix(k, x, nthreads = 1.5), "'nthreads'")
})

test_that("Matern with large nu has no NaN at small distances and tends to the Gaussian", {
  # K_nu(z) overflows for z small against nu; the result was Inf * 0 = NaN
  # (already at nu = 50, distance 1e-12; at nu = 300 up to distance 0.8),
  # and nu >= 2^31 crashed R.  Reference: log K_nu(z) from the integral
  # K_nu(z) = int_0^Inf exp(-z cosh t) cosh(nu t) dt, evaluated in logs.
  log_bessel_k <- function(z, nu) {
    f <- function(t) -z * cosh(t) + nu * t + log1p(exp(-2 * nu * t)) - log(2)
    ts <- asinh(nu / z)                    # z sinh t = nu: near the peak
    top <- optimize(f, c(max(0, ts - 5), ts + 5), maximum = TRUE)
    g <- function(t) exp(f(t) - top$objective)
    log(integrate(g, 0, top$maximum, rel.tol = 1e-13, subdivisions = 1000L)$value +
        integrate(g, top$maximum, Inf, rel.tol = 1e-13, subdivisions = 1000L)$value) +
      top$objective
  }
  matern_ref <- function(r, nu) {
    z <- sqrt(2 * nu) * r
    pmin(1, exp((1 - nu) * log(2) - lgamma(nu) + nu * log(z) +
                vapply(z, log_bessel_k, 0, nu = nu)))
  }
  r <- c(0, 10^seq(-12, 1, by = 0.25))
  x <- matrix(r, ncol = 1)
  for (nu in c(7.3, 50, 140.5, 300, 1000)) {
    K <- kernel_matrix(matern_kernel(1, nu = nu), x, matrix(0, 1, 1))[, 1]
    expect_false(anyNA(K), label = paste("nu =", nu))
    expect_true(all(K >= 0 & K <= 1), label = paste("nu =", nu))
    keep <- r > 0 & r < 3   # beyond, both are below 1e-100
    expect_equal(K[keep], matern_ref(r[keep], nu), tolerance = 1e-8, label = paste("nu =", nu))
  }
  expect_equal(kernel_matrix(matern_kernel(1, 1000), x), kernel_matrix(gaussian_kernel(1), x),
               tolerance = 1e-3)
  expect_error(matern_kernel(1, 1001), "'nu' must be at most 1000")
})

test_that("stray .Call kernel parameters are refused, not crashed on", {
  km <- function(code, par) .Call(bochner:::C_kernel_matrix, code, par, matrix(c(0, 1), 2), NULL, 1L)
  expect_error(km(4L, c(1, 1e300)), "bad parameters")   # nu for R's Bessel code
  expect_error(km(4L, c(1, 3e9)), "bad parameters")
  expect_error(km(4L, c(1, NaN)), "bad parameters")
  expect_error(km(4L, c(-1, 2)), "bad parameters")
  expect_error(km(1L, -1), "bad parameters")
  expect_error(km(5L, c(0, 1e300, 1, 1)), "bad parameters")   # degree cast to int
  expect_error(km(5L, c(0, -1, 1, 1)), "bad parameters")
})

test_that("Gram matrices against a few points (summed directly) match plain R and the product path", {
  set.seed(9)
  x <- matrix(rnorm(700 * 6), 700, 6)
  for (ny in 1:6) {   # up to 4 points directly, more through the product
    y <- matrix(rnorm(ny * 6), ny, 6)
    d2 <- outer(rowSums(x^2), rowSums(y^2), "+") - 2 * x %*% t(y)
    for (k in list(gaussian_kernel(1.5), matern_kernel(1, nu = 2.5))) {
      K <- kernel_matrix(k, x, y)
      ref <- if (k$name == "gaussian") exp(-pmax(d2, 0) / (2 * 1.5^2)) else {
        z <- sqrt(5 * pmax(d2, 0)); (1 + z + z^2 / 3) * exp(-z)
      }
      expect_equal(K, ref, tolerance = 1e-12, ignore_attr = TRUE)
      expect_identical(kernel_matrix(k, x, y, nthreads = 2), K)
    }
  }
})
