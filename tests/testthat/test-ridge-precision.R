# Single precision in rff_ridge() (precision =, ?feature_precision): the centred
# features rounded to float, Z'WZ the float product summed in double (src/products.c).

ridge_data <- function(n, d = 3, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(n * d, -2, 2), n, d)
  list(x = x, y = sin(x[, 1]) + cos(2 * x[, 2]) * x[, d] + rnorm(n, sd = 0.1),
       xt = matrix(runif(200 * d, -2, 2), 200, d))
}

test_that("the moments fold in single precision is within the float product's bound", {
  set.seed(5)
  z <- matrix(rnorm(700 * 30, mean = 0.3), 700, 30)
  y <- matrix(rnorm(700 * 2), 700, 2)
  w <- runif(700)
  starts <- c(1, 300, 600)
  for (wt in list(NULL, w)) {
    block <- function(i) {
      idx <- starts[i]:(if (i < length(starts)) starts[i + 1L] - 1L else 700L)
      c(list(z[idx, , drop = FALSE], y[idx, , drop = FALSE]), if (!is.null(wt)) list(wt[idx]))
    }
    s1 <- bochner:::moments_fold(block, 3L, 1L, single = TRUE)
    dbl <- bochner:::moments_fold(block, 3L, 1L)
    expect_identical(bochner:::moments_fold(block, 3L, 2L, single = TRUE), s1)
    zc <- sweep(z, 2L, dbl$zbar) * sqrt(if (is.null(wt)) 1 else wt)
    # rounding the shifted features (2^-23 each product, the shift's centring aside)
    # and the float K-blocks (1.6e-5), on |Zc|'|Zc| of features centred near the means
    scale <- crossprod(abs(zc)) + outer(colSums(abs(zc)), colSums(abs(zc))) / 700
    expect_false(identical(s1$zz, dbl$zz))
    expect_true(all(abs(s1$zz - dbl$zz) <= 2e-5 * scale))
    expect_true(all(abs(s1$zy - dbl$zy) <= 2e-7 * crossprod(abs(zc), abs(y)) + 1e-12))
    expect_identical(s1$zbar, dbl$zbar)
    expect_true(isSymmetric(s1$zz, tol = 0))
  }
})

test_that("rff_ridge in single precision predicts as the double fit, to 1e-4", {
  dat <- ridge_data(3000)
  fd <- rff_ridge(dat$x, dat$y, D = 200, lambda = 1e-4, seed = 1, precision = "double")
  fs <- rff_ridge(dat$x, dat$y, D = 200, lambda = 1e-4, seed = 1, precision = "single")
  expect_identical(fs$precision, "single")
  expect_identical(fd$precision, "double")
  pd <- predict(fd, dat$xt)
  ps <- predict(fs, dat$xt)
  expect_false(identical(pd, ps))
  expect_lt(max(abs(ps - pd)) / max(abs(pd)), 1e-4)
  # lambda = "auto": the path stops at the float floor (1e3 2^-23 of the trace; the
  # double path went on to 4e-11, where a float Z'Z + lambda I was not positive definite)
  expect_warning(fa <- rff_ridge(dat$x, dat$y, D = 200, seed = 1, precision = "single"),
                 "smallest the features resolve")
  floor <- 1e3 * 2^-23 * sum(diag(crossprod(scale(predict(fa$map, bochner:::rff_apply_scaling(
    dat$x, fa$scaling)), scale = FALSE)))) / 3000
  expect_gte(min(fa$path$lambda), floor * (1 - 1e-9))
  expect_lt(min(fa$path$lambda), 10^0.25 * floor)
  # weights and classes through the same fold
  cl <- factor(dat$y > 0)
  w <- runif(3000)
  fd <- rff_ridge(dat$x, cl, D = 200, lambda = 1e-3, seed = 1, weights = w, precision = "double")
  fs <- rff_ridge(dat$x, cl, D = 200, lambda = 1e-3, seed = 1, weights = w, precision = "single")
  expect_lt(max(abs(fs$weights - fd$weights)) / max(abs(fd$weights)), 1e-4)
})

test_that("rff_ridge in single precision: identical for 1 and 2 threads; chunks agree", {
  dat <- ridge_data(3000, seed = 2)
  f1 <- rff_ridge(dat$x, dat$y, D = 300, lambda = 1e-4, seed = 1, precision = "single",
                  nthreads = 1L)
  f2 <- rff_ridge(dat$x, dat$y, D = 300, lambda = 1e-4, seed = 1, precision = "single",
                  nthreads = 2L)
  expect_identical(f2$weights, f1$weights)
  expect_identical(predict(f2, dat$xt), predict(f1, dat$xt))
  # chunks: their own blocks and shifts, so their float roundings differ from the
  # in-memory fit's: agreement within the bound, not to the last bit
  df <- data.frame(a = dat$x[, 1], b = dat$x[, 2], c = dat$x[, 3], y = dat$y)
  ch <- data_chunks(split(df, rep(1:3, each = 1000)))
  # (sigma given: the same draws in memory and on chunks)
  K <- gaussian_kernel(1)
  fm <- rff_ridge(dat$x, dat$y, kernel = K, D = 300, lambda = 1e-4, seed = 1,
                  precision = "single", nthreads = 1L)
  fc <- rff_ridge(ch, "y", kernel = K, D = 300, lambda = 1e-4, seed = 1, precision = "single",
                  nthreads = 1L)
  expect_identical(fc$map$omega, fm$map$omega)
  expect_identical(fc$precision, "single")
  p1 <- predict(fm, dat$xt)
  expect_lt(max(abs(predict(fc, dat$xt) - p1)) / max(abs(p1)), 1e-5)
  fd <- rff_ridge(dat$x, dat$y, kernel = K, D = 300, lambda = 1e-4, seed = 1,
                  precision = "double", nthreads = 1L)
  expect_false(identical(predict(fd, dat$xt), p1))
})

test_that("rff_ridge's precision: auto's rule and the refusals", {
  dat <- ridge_data(500)
  expect_identical(suppressWarnings(rff_ridge(dat$x, dat$y, D = 50, seed = 1))$precision,
                   "double")
  expect_false(bochner:::ridge_single("auto", 1e6, 1024, "auto", NULL))
  expect_true(bochner:::ridge_single("auto", 1e6, 1024, 1e-4, NULL))
  expect_false(bochner:::ridge_single("auto", 1e6, 1024, 1e-12, NULL))
  expect_true(bochner:::ridge_single("single", 1e6, 1024, "auto", NULL))
  expect_error(rff_ridge(dat$x, dat$y, D = 50, precision = "half"), "'precision'")
  # the n x D (dual) side stays double
  expect_identical(rff_ridge(dat$x[1:40, ], dat$y[1:40], D = 50, precision = "single")$precision,
                   "double")
})
