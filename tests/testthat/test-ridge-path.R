# src/ridge_path.c: the tridiagonal reduction behind rff_ridge()'s lambda
# path, against LAPACK's eigen() (used here only as the plain-R reference),
# and the path it gives against the eigendecomposition formulas.

spectrum <- function(A, B, nthreads = 1L) .Call(bochner:::C_ridge_spectrum, A, B, nthreads)
q_rows <- function(X, s, nthreads = 1L) .Call(bochner:::C_ridge_q_rows, X, s$V, s$T, nthreads)
tridiag <- function(s) {
  n <- length(s$d)
  Tm <- diag(s$d, n)
  if (n > 1) {
    i <- seq_len(n - 1)
    Tm[cbind(i, i + 1)] <- Tm[cbind(i + 1, i)] <- s$e[i]
  }
  Tm
}

test_that("the reduction is Q'AQ = T with Q orthogonal, its spectrum that of A", {
  # n = 200 runs three blocked panels before the unblocked rest
  for (n in c(1, 2, 5, 60, 200)) {
    set.seed(n)
    Z <- matrix(rnorm((n + 7) * n), n + 7)
    A <- crossprod(Z)
    B <- matrix(rnorm(3 * n), n)
    s <- spectrum(A, B)
    ev <- eigen(A, symmetric = TRUE)
    scale <- ev$values[1]
    expect_equal(s$values, ev$values, tolerance = 1e-12 * n)
    # c = V'B up to the sign of each eigenvector (the eigenvalues are simple)
    expect_equal(abs(s$c), abs(crossprod(ev$vectors, B)), tolerance = 1e-8)
    Q <- q_rows(diag(n), s)
    expect_lt(max(abs(crossprod(Q) - diag(n))), 1e-13 * n)
    expect_lt(max(abs(crossprod(Q, A %*% Q) - tridiag(s))), 1e-14 * n * scale)
    expect_equal(s$g, crossprod(Q, B), tolerance = 1e-12)
    # X Q for a few rows is the same as the product with the explicit Q
    X <- matrix(rnorm(4 * n), 4)
    expect_equal(q_rows(X, s), X %*% Q, tolerance = 1e-12)
    expect_identical(spectrum(A, B, 2L), s)
    expect_identical(q_rows(X, s, 2L), q_rows(X, s, 1L))
  }
})

test_that("a rank-deficient matrix and repeated eigenvalues", {
  set.seed(3)
  Z <- matrix(rnorm(20 * 150), 20)             # rank 20 of 150
  s <- spectrum(crossprod(Z), matrix(1, 150, 1))
  ev <- eigen(crossprod(Z), symmetric = TRUE, only.values = TRUE)$values
  expect_equal(s$values, ev, tolerance = 1e-10)
  expect_lt(max(abs(s$values[-(1:20)])), 1e-10 * ev[1])
  s <- spectrum(diag(c(2, 2, 2, 1, 1)), diag(5)[, 1:2])
  expect_equal(s$values, c(2, 2, 2, 1, 1))
  expect_equal(colSums(s$c^2), c(1, 1))       # V'B keeps the norms
})

test_that("leverages and fitted values along the path from LDL' of T + lambda I", {
  set.seed(4)
  n <- 170
  A <- crossprod(matrix(rnorm(200 * n), 200))
  s <- spectrum(A, matrix(rnorm(2 * n), n))
  U <- matrix(rnorm(37 * n), 37)
  lam <- c(1e3, 1, 1e-3)
  r <- .Call(bochner:::C_ridge_path_rows, s$d, s$e, lam, U, s$g, 1L)
  Tm <- tridiag(s)
  for (i in seq_along(lam)) {
    M <- solve(Tm + lam[i] * diag(n))
    expect_equal(r$quad[, i], rowSums((U %*% M) * U), tolerance = 1e-10)
    expect_equal(r$cross[, (i - 1) * 2 + 1:2], U %*% M %*% s$g, tolerance = 1e-10)
  }
  expect_identical(.Call(bochner:::C_ridge_path_rows, s$d, s$e, lam, U, s$g, 2L), r)
  expect_error(.Call(bochner:::C_ridge_path_rows, s$d, s$e, -1, U, s$g, 1L), "'lambda'")
  expect_error(.Call(bochner:::C_ridge_path_rows, s$d, s$e[-1], lam, U, s$g, 1L), "'d' and 'e'")
  expect_error(spectrum(A[, -1], s$g), "'A'")
  expect_error(spectrum(A, s$g[-1, ]), "'B'")
  expect_error(spectrum(replace(A, 3, NaN), s$g), "'A' must be finite")
})

# The path as the eigendecomposition gave it (the code before ridge_path.c):
# GCV and exact leave-one-out from eigen() of Zs'Zs (primal) or Zs Zs' (dual).
eigen_path <- function(x, Y, map, grid, w) {
  Z <- predict(map, x)
  N <- sum(w)
  Zs <- sweep(Z, 2, colSums(Z * w) / N) * sqrt(w)
  Ys <- sweep(Y, 2, colSums(Y * w) / N) * sqrt(w)
  primal <- nrow(Z) >= ncol(Z)
  ev <- eigen(if (primal) crossprod(Zs) else tcrossprod(Zs), symmetric = TRUE)
  e <- pmax(ev$values, 0)
  P <- if (primal) Zs %*% ev$vectors else ev$vectors * rep(sqrt(e), each = nrow(Zs))
  cc <- crossprod(P, Ys)
  df <- 1 + sapply(grid, function(l) sum(e / (e + l)))
  nr <- sum(w > 0)
  gcv <- sapply(seq_along(grid), function(i) {
    l <- grid[i]
    rss <- max(sum(Ys^2) - sum(rowSums(cc^2) * (e + 2 * l) / (e + l)^2), 0)
    (rss / N) / (1 - df[i] / nr)^2
  })
  loo <- sapply(grid, function(l) {
    inv <- 1 / (e + l)
    h <- drop(P^2 %*% inv) + w / N
    r <- (Ys - P %*% (cc * inv))[w > 0, , drop = FALSE] / (1 - h[w > 0])
    sum(r^2) / N
  })
  list(df = df, gcv = gcv, loo = loo)
}

test_that("the path equals the eigendecomposition's, primal and dual, with weights", {
  set.seed(5)
  x <- matrix(runif(900, -2, 2), 450, 2)
  y <- sin(x[, 1]) * x[, 2] + rnorm(450, sd = 0.3)
  cls <- factor(ifelse(x[, 1] + rnorm(450, sd = 0.5) > 0, "a", ifelse(x[, 2] > 0, "b", "c")))
  map <- random_features(x, gaussian_kernel(1), D = 200, seed = 1)  # blocked reduction
  grid <- 10^seq(2, -6, by = -0.5)
  w <- rep(c(1, 0.5, 2, 0), length.out = 450)
  for (rows in list(1:450, 1:150)) {                # primal (n >= D) and dual (n < D)
    for (wt in list(NULL, w[rows])) {
      ww <- if (is.null(wt)) rep(1, length(rows)) else wt
      for (resp in list(y[rows], cls[rows])) {
        Y <- if (is.factor(resp)) outer(as.integer(resp), 1:3, "==") * 1 else matrix(resp)
        ref <- eigen_path(x[rows, ], Y, map, grid * sum(ww), ww)  # lambda per row
        g <- rff_ridge(x[rows, ], resp, map = map, lambda = grid, criterion = "gcv", weights = wt)
        l <- rff_ridge(x[rows, ], resp, map = map, lambda = grid, criterion = "loo", weights = wt)
        expect_equal(g$path$df, ref$df, tolerance = 1e-9)
        expect_equal(g$path$gcv, ref$gcv, tolerance = 1e-7)
        expect_equal(l$path$loo, ref$loo, tolerance = 1e-7)
        expect_identical(g$lambda, grid[which.min(ref$gcv)])
        expect_identical(l$lambda, grid[which.min(ref$loo)])
      }
    }
  }
})

test_that("lambda = 'auto' is the same for any number of threads", {
  set.seed(6)
  x <- matrix(rnorm(1200), 400)
  y <- x[, 1] - x[, 2]^2 + rnorm(400, sd = 0.2)
  a <- rff_ridge(x, y, D = 150, seed = 2, criterion = "loo", nthreads = 1)
  b <- rff_ridge(x, y, D = 150, seed = 2, criterion = "loo", nthreads = 2)
  expect_identical(a$path, b$path)
  expect_identical(a$weights, b$weights)
})
