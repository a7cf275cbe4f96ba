# Single precision in rff_gp() (control = list(precision), ?feature_precision): Z'Z of
# the features rounded to float, the float product summed in double (src/gp.c).

# x rounded to the nearest float, as a double (R has no float type)
f32 <- function(x) {
  y <- readBin(writeBin(as.vector(x), raw(), size = 4), "double", n = length(x), size = 4)
  dim(y) <- dim(x)
  y
}

gp_data <- function(n, d = 3, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(n * d, -2, 2), n, d)
  list(x = x, y = sin(x[, 1]) + cos(2 * x[, 2]) * x[, d] + rnorm(n, sd = 0.1),
       xt = matrix(runif(200 * d, -2, 2), 200, d))
}

gp_fixed <- function(dat, precision, D = 64, threads = 1L, ...) {
  rff_gp(dat$x, dat$y, kernel = gaussian_kernel(1), D = D, optimize = FALSE, signal = 1,
         noise = 0.1, seed = 1, control = list(precision = precision), nthreads = threads, ...)
}

test_that("C_gp_stats in single precision is Z'Z of the float-rounded features, within the bound", {
  set.seed(3)
  n <- 5000L                       # one full block of 4096 rows and a partial one
  d <- 2L
  D <- 40L
  x <- matrix(rnorm(n * d), n, d)
  w <- matrix(rnorm(d * D), d, D)
  amp <- rep(1 / sqrt(D), D)
  y <- rnorm(n)
  # the features as the C pass makes them: t(Z) from the same transform, times amp
  Z <- t(.Call(bochner:::C_rff_transform, x, w, NULL, 1, TRUE, 1L) * rep(amp, each = 2L))
  Zf <- f32(Z)
  expect_false(identical(Zf, Z))
  s1 <- .Call(bochner:::C_gp_stats, x, w, amp, y, NULL, TRUE, 1L)
  dbl <- .Call(bochner:::C_gp_stats, x, w, amp, y, NULL, FALSE, 1L)
  # Z'y: the rounded features times y, in double
  expect_equal(s1[[2L]], drop(crossprod(Zf, y)), tolerance = 1e-13)
  # Z'Z: float sums within K-blocks of 256 rows, |error| <= 1.6e-5 |Zf|'|Zf| (sgemm.c)
  ref <- crossprod(Zf)
  bound <- 1.6e-5 * crossprod(abs(Zf)) + 1e-14
  expect_true(all(abs(s1[[1L]] - ref) <= bound))
  expect_true(isSymmetric(s1[[1L]], tol = 0))
  # and the double pass is the unrounded product: single differs from it, by at most
  # the rounding of Z (2^-23) plus the float sums
  expect_equal(dbl[[1L]], crossprod(Z), tolerance = 1e-12)
  expect_false(identical(s1[[1L]], dbl[[1L]]))
  expect_true(all(abs(s1[[1L]] - dbl[[1L]]) <= (2^-23 + 1.6e-5) * crossprod(abs(Z)) + 1e-14))
  # identical for any thread count
  expect_identical(.Call(bochner:::C_gp_stats, x, w, amp, y, NULL, TRUE, 2L), s1)
  expect_error(.Call(bochner:::C_gp_stats, x, w, amp, y, NULL, NA, 1L), "'single'")
  # case weights: rows scaled by sqrt(w) in the rounding pass, y passed already scaled
  sw <- sqrt(runif(n, 0.5, 2))
  sws <- .Call(bochner:::C_gp_stats, x, w, amp, y * sw, sw, TRUE, 2L)
  Zw <- f32(Z * sw)
  expect_equal(sws[[2L]], drop(crossprod(Zw, y * sw)), tolerance = 1e-6)
  expect_true(all(abs(sws[[1L]] - crossprod(Zw)) <= 1.6e-5 * crossprod(abs(Zw)) + 1e-14))
  expect_identical(.Call(bochner:::C_gp_stats, x, w, amp, y * sw, sw, TRUE, 1L), sws)
})

test_that("rff_gp in single precision predicts as the double fit, to 1e-4", {
  dat <- gp_data(3000)
  fd <- gp_fixed(dat, "double")
  fs <- gp_fixed(dat, "single")
  expect_identical(fd$precision, "double")
  expect_identical(fs$precision, "single")
  pd <- predict(fd, dat$xt, se.fit = TRUE)
  ps <- predict(fs, dat$xt, se.fit = TRUE)
  expect_false(identical(pd$fit, ps$fit))
  expect_lt(max(abs(ps$fit - pd$fit)) / max(abs(pd$fit)), 1e-4)
  expect_lt(max(abs(ps$se.fit^2 / pd$se.fit^2 - 1)), 1e-3)
  expect_lt(abs(fs$logLik - fd$logLik), 1e-3 * abs(fd$logLik))
  # optimising in single precision ends near the double optimum (the likelihood's
  # residual term from a double pass, so the search sees no float noise)
  y3 <- dat$y + rnorm(length(dat$y), sd = 0.3)
  od <- rff_gp(dat$x, y3, D = 64, seed = 1, control = list(precision = "double"))
  os <- rff_gp(dat$x, y3, D = 64, seed = 1, control = list(precision = "single"))
  expect_identical(os$precision, "single")
  expect_lt(max(abs(os$theta - od$theta)), 1e-3)
  expect_lt(abs(os$logLik - od$logLik), 1e-2)
})

test_that("rff_gp in single precision is identical for 1 and 2 threads", {
  dat <- gp_data(3000, seed = 2)
  # 2D = 320 features: two tiles of the product, so two threads share the work
  f1 <- gp_fixed(dat, "single", D = 160, threads = 1L)
  f2 <- gp_fixed(dat, "single", D = 160, threads = 2L)
  expect_identical(f2$logLik, f1$logLik)
  expect_identical(f2$alpha, f1$alpha)
  expect_identical(predict(f2, dat$xt, se.fit = TRUE), predict(f1, dat$xt, se.fit = TRUE))
})

test_that("rff_gp on chunks equals the in-memory fit in single precision", {
  # more rows than the pilot's (4000), so every evaluation is a pass over the chunks;
  # chunks of multiples of 256 rows: the same float blocks as in memory
  dat <- gp_data(5120, seed = 4)
  df <- data.frame(a = dat$x[, 1], b = dat$x[, 2], c = dat$x[, 3], y = dat$y)
  ch <- data_chunks(split(df, rep(1:5, each = 1024)))
  mem <- gp_fixed(dat, "single")
  chk <- rff_gp(ch, "y", kernel = gaussian_kernel(1), D = 64, optimize = FALSE, signal = 1,
                noise = 0.1, seed = 1, control = list(precision = "single"), nthreads = 1L)
  expect_identical(chk$precision, "single")
  expect_equal(chk$logLik, mem$logLik, tolerance = 1e-12)
  expect_equal(predict(chk, dat$xt), predict(mem, dat$xt), tolerance = 1e-10)
  dbl <- gp_fixed(dat, "double")
  expect_gt(abs(chk$logLik - dbl$logLik), 1e-9 * abs(dbl$logLik))   # single really ran
})

test_that("precision: auto's rule and the refusals", {
  fs <- bochner:::feature_single
  expect_true(fs("single", 10, 4, 1, 1))
  expect_false(fs("double", 1e7, 2048, 1, 1))
  # auto: small products stay double; large ones go single unless the penalty is tiny
  expect_false(fs("auto", 1000, 128, 1, 0.01))
  expect_true(fs("auto", 1e6, 2048, 1, 0.01))
  expect_false(fs("auto", 1e6, 2048, 1, 1e-6))
  expect_false(fs("auto", 1e6, 2048, 1, 0))
  dat <- gp_data(500)
  expect_identical(gp_fixed(dat, "auto")$precision, "double")
  expect_identical(rff_gp(dat$x, dat$y, D = 16, optimize = FALSE)$precision, "double")
  expect_error(gp_fixed(dat, "half"), "'precision'")
  # the n x n form (2D >= n) stays double
  expect_identical(gp_fixed(gp_data(100), "single")$precision, "double")
  # the optim() controls still reach optim(), without the precision
  expect_silent(rff_gp(dat$x, dat$y, D = 16, control = list(maxit = 3, precision = "single")))
})

test_that("rff_gp in single precision: the likelihood's pass gives the fitted values", {
  dat <- gp_data(3000, seed = 6)
  fs <- gp_fixed(dat, "single")
  expect_null(attributes(fs$logLik))
  expect_null(fs$row_means)
  # the fitted values are the predictions at the training rows, as in double
  expect_equal(unname(fs$fitted), unname(predict(fs, dat$x)), tolerance = 1e-13)
  fd <- gp_fixed(dat, "double")
  expect_lt(max(abs(fs$fitted - fd$fitted)) / max(abs(fd$fitted)), 1e-4)
  # the log likelihood from the residual pass: within 0.01 of the double one
  expect_lt(abs(fs$logLik - fd$logLik), 1e-2)
  # with case weights (rows scaled by sqrt(w))
  w <- runif(3000, 0.5, 2)
  fw <- gp_fixed(dat, "single", weights = w)
  expect_lt(abs(fw$logLik - gp_fixed(dat, "double", weights = w)$logLik), 1e-2)
})
