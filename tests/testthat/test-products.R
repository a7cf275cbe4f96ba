# The package's own dense products (src/products.c) and Cholesky solve
# (src/cholesky.c), against plain R, and their determinism: identical for 1
# and 2 threads and however Z'Z is cut into row blocks.
matprod <- function(a, b, t = 1L) .Call(bochner:::C_matprod, a, b, t)
crossprod_c <- function(a, t = 1L) .Call(bochner:::C_crossprod, a, t)
ridge_solve <- function(A, B, lambda, t = 1L) .Call(bochner:::C_ridge_solve, A, B, lambda, t)
stream <- function(Z, Y, rows, t = 1L) {
  starts <- seq(1L, nrow(Z), by = rows)
  block <- function(i) {
    idx <- starts[i]:min(nrow(Z), starts[i] + rows - 1L)
    list(Z[idx, , drop = FALSE], Y[idx, , drop = FALSE])
  }
  bochner:::moments_fold(block, length(starts), t)
}

test_that("matprod and crossprod match plain R, edge sizes included", {
  set.seed(1)
  # thin results (one tile, split by rows between the threads): c(64, 5000, 1), c(256, 900, 2)
  for (dims in list(c(1, 1, 1), c(1, 7, 3), c(5, 1, 9), c(241, 3, 250), c(500, 480, 17),
                    c(64, 5000, 1), c(256, 900, 2), c(30, 8000, 1))) {
    a <- matrix(rnorm(dims[1] * dims[2]), dims[1])
    b <- matrix(rnorm(dims[2] * dims[3]), dims[2])
    expect_equal(matprod(a, b), a %*% b, tolerance = 1e-13)
    expect_identical(matprod(a, b, 2L), matprod(a, b))
    g <- crossprod_c(a)
    expect_equal(g, crossprod(a), tolerance = 1e-13)
    expect_identical(g, t(g))
    expect_identical(crossprod_c(a, 2L), g)
  }
  expect_identical(matprod(matrix(0, 3, 0), matrix(0, 0, 2)), matrix(0, 3, 2))
  expect_error(matprod(matrix(1, 2, 2), matrix(1, 3, 2)), "non-conformable")
  expect_error(matprod(1:4, matrix(1, 4, 1)), "double matrix")
})

test_that("the streamed Z'Z and Z'Y are the centred products, for any row blocks and threads", {
  set.seed(2)
  n <- 700L
  # columns with a large common offset: centring after summing would cancel digits
  Z <- sweep(matrix(rnorm(n * 37), n), 2L, 1e4 * runif(37), "+")
  Y <- cbind(rnorm(n), runif(n) + 50)
  Zc <- scale(Z, scale = FALSE)
  Yc <- scale(Y, scale = FALSE)
  s <- stream(Z, Y, 100L)
  expect_equal(s$zz, crossprod(Zc), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(s$zy, crossprod(Zc, Yc), tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(s$zbar, colMeans(Z), tolerance = 1e-14)
  expect_equal(s$ybar, colMeans(Y), tolerance = 1e-14)
  expect_identical(s$n, as.double(n))
  expect_identical(s$zz, t(s$zz))
  expect_identical(stream(Z, Y, 100L, 2L), s)
  # after the first block (which sets the shift), the blocking does not matter
  one <- stream(Z, Y, 100L)
  starts <- c(1L, 101L, 102L, 350L)
  ends <- c(100L, 101L, 349L, n)
  block <- function(i) list(Z[starts[i]:ends[i], , drop = FALSE], Y[starts[i]:ends[i], , drop = FALSE])
  two <- bochner:::moments_fold(block, 4L, 1L)
  expect_identical(two, one)
  expect_equal(s$yy, colSums(Yc^2), tolerance = 1e-12)
  expect_identical(s$rows, as.double(n))
  expect_error(bochner:::moments_fold(function(i) list(1, 2), 1L, 1L),
               "double matrices")
})

test_that("row weights: the weighted centred products, as repeated rows", {
  set.seed(22)
  n <- 300L
  Z <- sweep(matrix(rnorm(n * 9), n), 2L, 1e3 * runif(9), "+")
  Y <- cbind(rnorm(n), runif(n))
  w <- rep(c(0, 1, 2.5), 100)
  W <- sum(w)
  zbar <- colSums(Z * w) / W
  ybar <- colSums(Y * w) / W
  Zc <- sweep(Z, 2L, zbar)
  Yc <- sweep(Y, 2L, ybar)
  starts <- seq(1L, n, by = 70L)
  block <- function(i) {
    idx <- starts[i]:min(n, starts[i] + 69L)
    list(Z[idx, , drop = FALSE], Y[idx, , drop = FALSE], w[idx])
  }
  s <- bochner:::moments_fold(block, length(starts), 1L)
  expect_equal(s$zz, crossprod(Zc * sqrt(w)), tolerance = 1e-11, ignore_attr = TRUE)
  expect_equal(s$zy, crossprod(Zc * w, Yc), tolerance = 1e-11, ignore_attr = TRUE)
  expect_equal(s$zbar, zbar, tolerance = 1e-14)
  expect_equal(s$ybar, ybar, tolerance = 1e-14)
  expect_equal(s$yy, colSums(Yc^2 * w), tolerance = 1e-12)
  expect_identical(s$n, W)
  expect_identical(s$rows, as.double(n))
  expect_identical(bochner:::moments_fold(block, length(starts), 2L), s)
  bad <- function(wv) function(i) list(Z[1:5, ], Y[1:5, ], wv)
  expect_error(bochner:::moments_fold(bad(c(1, 1, -1, 1, 1)), 1L, 1L),
               "non-negative")
  expect_error(bochner:::moments_fold(bad(1:5), 1L, 1L),
               "double vector")
  expect_error(bochner:::moments_fold(bad(rep(0, 5)), 1L, 1L),
               "sum to zero")
})

test_that("the Cholesky solve matches solve() and refuses indefinite matrices", {
  set.seed(3)
  for (n in c(1L, 2L, 191L, 192L, 193L, 400L)) {
    X <- matrix(rnorm((n + 5) * n), n + 5)
    A <- crossprod(X)
    B <- matrix(rnorm(n * 3), n)
    got <- ridge_solve(A, B, 0.5)
    ref <- solve(A + diag(0.5, n), B)
    expect_lt(max(abs(got - ref)) / max(abs(ref)), 1e-10)
    expect_identical(ridge_solve(A, B, 0.5, 2L), got)
  }
  A <- diag(c(1, -1, 1))
  expect_error(ridge_solve(A, matrix(1, 3, 1), 0), "not numerically positive definite \\(pivot 2\\)")
  expect_error(ridge_solve(A, matrix(1, 3, 1), NA_real_), "finite")
  expect_error(ridge_solve(matrix(1, 2, 3), matrix(1, 2, 1), 1), "square")
})

test_that("the transposed transform and the fused decision values equal their unfused forms bit for bit", {
  set.seed(4)
  x <- matrix(rnorm(333 * 5), 333, 5)
  for (type in c("phase", "pair")) {
    map <- random_features(x, gaussian_kernel(1), D = 300, type = type, seed = 1)
    z <- bochner:::transform_features(map, x, 1L)
    expect_identical(bochner:::transform_features_t(map, x, 2L), t(z))
    for (m in c(1L, 3L)) {
      w <- matrix(rnorm(map$n_features * m), map$n_features, m)
      b <- rnorm(m)
      unfused <- bochner:::feature_decision.default(map, x, w, b, 1L)
      expect_equal(unfused, z %*% w + rep(b, each = nrow(x)), tolerance = 1e-13)
      expect_identical(bochner:::feature_decision(map, x, w, b, 1L), unfused)
      expect_identical(bochner:::feature_decision(map, x, w, b, 2L), unfused)
      expect_identical(bochner:::feature_decision(map, x[-(1:7), ], w, b, 2L), unfused[-(1:7), , drop = FALSE])
    }
  }
  expect_error(.Call(bochner:::C_rff_decision, x, map$omega, NULL, 1, matrix(1, 2, 1), 0, 1L),
               "one row per feature")
})

test_that("the moments fold: a state is the fold's own, and a finished one cannot be reused", {
  z <- matrix(rnorm(20), 10)
  y <- matrix(rnorm(10), 10)
  st <- .Call(bochner:::C_moments_step, NULL, z, y, NULL, FALSE, 1L)
  st <- .Call(bochner:::C_moments_step, st, z, y, NULL, FALSE, 1L)
  out <- .Call(bochner:::C_moments_finish, st, 1L)
  zz <- rbind(z, z)
  expect_equal(out$zz, crossprod(scale(zz, scale = FALSE)), tolerance = 1e-13, ignore_attr = TRUE)
  expect_error(.Call(bochner:::C_moments_finish, st, 1L), "finished")
  expect_error(.Call(bochner:::C_moments_step, st, z, y, NULL, FALSE, 1L), "finished")
  expect_error(.Call(bochner:::C_moments_step, list(), z, y, NULL, FALSE, 1L), "state")
  st2 <- .Call(bochner:::C_moments_step, NULL, z, y, NULL, FALSE, 1L)
  expect_error(.Call(bochner:::C_moments_step, st2, z[, 1, drop = FALSE], y, NULL, FALSE, 1L), "columns")
  expect_error(.Call(bochner:::C_moments_finish, NULL, 1L), "no blocks")
})

test_that("C never calls back into R: the library imports no evaluator", {
  # the folds (R drives the loop, C adds each block) replaced the streams
  # that called an R closure from C; the shared library shows it
  so <- system.file("libs", paste0("bochner", .Platform$dynlib.ext), package = "bochner")
  nm <- Sys.which("nm")
  skip_if(!nzchar(so) || !nzchar(nm), "no shared library or no nm here")
  syms <- suppressWarnings(system2(nm, c("-D", "--undefined-only", shQuote(so)), stdout = TRUE,
                                   stderr = FALSE))
  skip_if(length(syms) == 0L, "nm could not read the library")
  expect_false(any(grepl("\\b(Rf_eval|R_forceAndCall|R_tryEval|R_tryEvalSilent|Rf_applyClosure)\\b",
                         syms)))
})
