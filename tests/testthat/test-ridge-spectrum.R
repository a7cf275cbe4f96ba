# The QL eigenvalue iteration of src/ridge_path.c on spectra where a test
# relative to the neighbouring diagonal entries cannot deflate: many
# eigenvalues at rounding level (rank-deficient Gram matrices: more
# features than rows), clusters, exact zeros; and the default rff_ridge()
# on ordinary data of every small dimension, which stopped with "the
# eigenvalues of the tridiagonal did not converge" at d = 3.

spectrum <- function(A, B, nthreads = 1L) .Call(bochner:::C_ridge_spectrum, A, B, nthreads)

# A = Q diag(lam) Q' for a random orthogonal Q
with_spectrum <- function(lam, seed) {
  set.seed(seed)
  n <- length(lam)
  Q <- qr.Q(qr(matrix(rnorm(n * n), n)))
  A <- Q %*% (lam * t(Q))
  (A + t(A)) / 2
}

# eigen() (LAPACK) is accurate to about eps * ||A|| in each eigenvalue, and
# so is the QL with its norm-relative deflation: compare at a few hundred
# eps * ||A|| * n, far below any eigenvalue gap that matters here.
expect_spectrum <- function(A) {
  s <- spectrum(A, matrix(1, nrow(A), 1))
  ev <- eigen(A, symmetric = TRUE, only.values = TRUE)$values
  tol <- 200 * .Machine$double.eps * max(abs(ev)) * nrow(A)
  expect_lt(max(abs(s$values - ev)), tol)
  expect_true(all(diff(s$values) <= 0))
}

test_that("vanishing, clustered and zero eigenvalues agree with eigen()", {
  n <- 150
  # three large, the rest at rounding level (the failing shape: Z Z' of rank 3)
  expect_spectrum(with_spectrum(c(20, 15, 8, rep(0, n - 3)), 1))
  # a low-rank Gram matrix of random features, exactly as rff_ridge() builds it
  set.seed(2)
  x <- matrix(rnorm(120 * 3), 120)
  Z <- cos(x %*% matrix(rnorm(3 * 400), 3) + rep(runif(400, 0, 2 * pi), each = 120))
  expect_spectrum(tcrossprod(Z) / 400)
  # tight clusters, a decade apart, and a cluster at zero
  lam <- c(rep(1, 40) + 1e-13 * seq_len(40), rep(0.1, 40), rep(1e-9, 40), rep(0, 30))
  expect_spectrum(with_spectrum(lam, 3))
  # geometric decay through the whole double range that matters
  expect_spectrum(with_spectrum(10^seq(0, -20, length.out = n), 4))
  # exact zeros and an all-zero matrix
  expect_spectrum(diag(c(0, 0, 1, 0, 2)))
  expect_equal(spectrum(matrix(0, 6, 6), matrix(1, 6, 1))$values, rep(0, 6))
  # a tiny overall scale is not treated as negligible
  A <- with_spectrum(c(3, 2, 1, 0.5) * 1e-150, 5)
  expect_equal(spectrum(A, matrix(1, 4, 1))$values, c(3, 2, 1, 0.5) * 1e-150,
               tolerance = 1e-10)
})

test_that("the default rff_ridge() fits ordinary data of every small dimension", {
  # d = 1 ... 20, n from 50 to 5 000: each fit must converge, and on y = x1 +
  # noise (sd 0.1) the training RMSE must be well under var(y)'s sd of ~1.
  sizes <- c(50, 200, 1000)
  for (d in 1:20) {
    for (n in c(sizes, if (d %in% c(1, 3, 10, 20)) 5000)) {
      set.seed(d * 1000 + n)
      x <- matrix(rnorm(n * d), n)
      y <- x[, 1] + rnorm(n, sd = 0.1)
      fit <- rff_ridge(x, y, seed = d)
      rmse <- sqrt(mean((predict(fit, x) - y)^2))
      expect_lt(rmse, 0.5, label = sprintf("training RMSE at d = %d, n = %d", d, n))
    }
  }
  # the exact call of the report, for seeds 1 to 10
  for (s in 1:10) {
    set.seed(1)
    x <- matrix(rnorm(200 * 3), 200)
    y <- x[, 1] + rnorm(200, sd = 0.1)
    expect_s3_class(rff_ridge(x, y, seed = s), "rff_ridge")
  }
})
