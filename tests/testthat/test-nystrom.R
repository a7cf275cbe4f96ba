# Nystrom feature maps against plain-R references (helper-reference.R for
# the kernels), their landmark rules, rank truncation, determinism and bad
# input.

ref_kernel_any <- function(kernel, x, y = x) {
  if (kernel$name == "exponential_dot") return(exp(x %*% t(y) / kernel$sigma^2))
  ref_kernel(kernel, x, y)
}

# the plain-R Nystrom map: K(x, L) U diag(1/sqrt(lambda)) U' over the
# eigenvalues above tol * the largest
ref_nystrom <- function(kernel, x, L, tol = 1e-10) {
  e <- eigen(ref_kernel_any(kernel, L), symmetric = TRUE)
  keep <- e$values > tol * e$values[1]
  U <- e$vectors[, keep, drop = FALSE]
  ref_kernel_any(kernel, x, L) %*% U %*% diag(1 / sqrt(e$values[keep]), sum(keep)) %*% t(U)
}

# evaluate expr with the transform's row blocks set to 'rows'
with_block_rows <- function(rows, expr) {
  ns <- asNamespace("bochner")
  orig <- get("rff_block_rows", envir = ns)
  unlockBinding("rff_block_rows", ns)
  on.exit({
    assign("rff_block_rows", orig, envir = ns)
    lockBinding("rff_block_rows", ns)
  })
  assign("rff_block_rows", function(n, nf) min(n, rows), envir = ns)
  expr
}

rel_err <- function(a, b) max(abs(a - b)) / max(abs(b))

set.seed(314)
x3 <- matrix(rnorm(40 * 3), 40, 3, dimnames = list(NULL, c("a", "b", "c")))
xnew <- matrix(rnorm(25 * 3), 25, 3, dimnames = list(NULL, c("a", "b", "c")))

test_that("Nystrom is exact on the landmarks when K_LL has full rank", {
  for (lm in c("uniform", "kmeans", "leverage", "rpcholesky")) {
    map <- nystrom_features(x3, gaussian_kernel(0.8), m = 12, landmarks = lm, seed = 1)
    expect_s3_class(map, c("nystrom_features", "random_features"))
    expect_identical(map$rank, 12L)
    expect_identical(map$landmarks, x3[map$index, ], label = lm)
    ZL <- predict(map, map$landmarks)
    KLL <- kernel_matrix(map$kernel, map$landmarks)
    expect_lt(rel_err(tcrossprod(ZL), KLL), 1e-10, label = lm)
  }
})

test_that("the transform is the plain-R formula K(x, L) U diag(lambda^-1/2) U'", {
  map <- nystrom_features(x3, gaussian_kernel(1.2), m = 10, seed = 2)
  Z <- predict(map, xnew)
  expect_identical(dim(Z), c(25L, 10L))
  expect_lt(rel_err(Z, ref_nystrom(map$kernel, xnew, map$landmarks)), 1e-10)
  # the normalisation is exactly symmetric
  expect_identical(map$normalization, t(map$normalization))
})

test_that("with m = n uniform landmarks the approximation is exact", {
  x <- x3[1:12, ]
  map <- nystrom_features(x, laplace_kernel(1), m = 12, seed = 3)
  expect_identical(sort(map$index), 1:12)
  err <- kernel_approx_error(map, x)
  expect_lt(err$max, 1e-10)
  expect_identical(err$n_features, 12L)
})

test_that("every kernel with an exact Gram matrix works", {
  xpos <- abs(x3) / 2
  kernels <- list(gaussian = gaussian_kernel(1), gaussian_median = gaussian_kernel("median"),
                  laplace = laplace_kernel(2), cauchy = cauchy_kernel(1.5),
                  matern15 = matern_kernel(1, nu = 1.5), matern07 = matern_kernel(1.3, nu = 0.7),
                  polynomial = polynomial_kernel(2), poly_coef = polynomial_kernel(coef = c(1, 0.5, 0, 0.2)),
                  exponential_dot = exponential_dot_kernel(2), min = min_kernel(0.5))
  for (name in names(kernels)) {
    for (lm in c("uniform", "kmeans", "leverage", "rpcholesky")) {
      label <- paste(name, lm)
      map <- nystrom_features(xpos, kernels[[name]], m = 15, landmarks = lm, seed = 4)
      expect_false(is.character(map$kernel$sigma), label = label)
      Z <- predict(map, xpos[1:20, ])
      expect_true(all(is.finite(Z)), label = label)
      expect_identical(ncol(Z), 15L, label = label)
      # the plain-R formula, at the rank the map kept
      expect_lt(rel_err(Z, ref_nystrom(map$kernel, xpos[1:20, ], map$landmarks)), 1e-8,
                label = label)
      # Z_L Z_L' reproduces K_LL up to the truncated eigenvalues
      ZL <- predict(map, map$landmarks)
      KLL <- ref_kernel_any(map$kernel, map$landmarks)
      expect_lt(rel_err(tcrossprod(ZL), KLL), 1e-8, label = label)
    }
  }
  # finite rank: (x.y + 1)^2 in 3 dimensions has rank 10
  map <- nystrom_features(x3, polynomial_kernel(2), m = 15, seed = 5)
  expect_identical(map$rank, 10L)
  expect_lt(kernel_approx_error(map, x3)$max / max(kernel_matrix(polynomial_kernel(2), x3)), 1e-9)
})

test_that("leverage and k-means++ landmarks beat uniform on clusters of very different sizes", {
  # one large tight cluster and 20 small ones far apart: uniform landmarks
  # fall mostly in the large cluster and miss most small ones
  set.seed(7)
  big <- matrix(rnorm(2 * 1800, sd = 0.3), ncol = 2)
  centres <- 10 * cbind(cos(2 * pi * (1:20) / 20), sin(2 * pi * (1:20) / 20))
  small <- centres[rep(1:20, each = 10), ] + matrix(rnorm(400, sd = 0.3), ncol = 2)
  x <- rbind(big, small)
  ev <- x[seq(1, nrow(x), by = 2), ]
  k <- gaussian_kernel(0.7)
  rms <- sapply(c("uniform", "kmeans", "leverage"), function(lm) {
    mean(sapply(1:4, function(s) {
      kernel_approx_error(nystrom_features(x, k, m = 50, landmarks = lm, seed = s), ev)$rms
    }))
  })
  # recorded (rms, mean of 4 seeds): uniform 0.0159, kmeans 0.0071, leverage 0.0118
  expect_lt(rms[["leverage"]], 0.85 * rms[["uniform"]])
  expect_lt(rms[["kmeans"]], 0.8 * rms[["uniform"]])
})

test_that("duplicated rows: rank truncation keeps the features finite", {
  x <- x3[rep(1:5, 4), ]
  for (lm in c("uniform", "kmeans", "leverage", "rpcholesky")) {
    map <- nystrom_features(x, gaussian_kernel(1), m = 12, landmarks = lm, seed = 6)
    expect_lte(map$rank, 5L, label = lm)
    expect_identical(length(unique(map$index)), 12L)
    Z <- predict(map, x)
    expect_true(all(is.finite(Z)), label = lm)
    expect_identical(dim(Z), c(20L, 12L))
  }
  # uniform with every row a landmark: exact despite the duplicates
  map <- nystrom_features(x, gaussian_kernel(1), m = 20, seed = 7)
  expect_identical(map$rank, 5L)
  expect_lt(kernel_approx_error(map, x)$max, 1e-10)
  # k-means++ takes every distinct row before any duplicate
  map <- nystrom_features(x, gaussian_kernel(1), m = 5, landmarks = "kmeans", seed = 8)
  expect_identical(map$rank, 5L)
  # a constant column of data: the kernel of one point, rank 1
  map <- nystrom_features(matrix(1, 10, 2), gaussian_kernel(1), m = 4, seed = 9)
  expect_identical(map$rank, 1L)
  expect_equal(predict(map, matrix(1, 3, 2)) %*% t(predict(map, matrix(1, 3, 2))),
               matrix(1, 3, 3), tolerance = 1e-12)
})

test_that("predictions do not depend on threads, row chunks, blocks or saveRDS", {
  xn <- matrix(rnorm(301 * 3), 301, 3, dimnames = list(NULL, c("a", "b", "c")))
  maps <- list(nystrom_features(x3, gaussian_kernel("median"), m = 20, landmarks = "leverage", seed = 1),
               nystrom_features(x3, matern_kernel(1), m = 20, landmarks = "kmeans", seed = 1),
               nystrom_features(x3, polynomial_kernel(3), m = 15, seed = 1),
               nystrom_features(abs(x3), min_kernel(), m = 15, seed = 1))
  for (map in maps) {
    xx <- if (map$kernel$name == "min") abs(xn) else xn
    Z <- predict(map, xx, nthreads = 1)
    expect_identical(predict(map, xx, nthreads = 2), Z)
    expect_identical(rbind(predict(map, xx[1:7, ]), predict(map, xx[8:263, ]),
                           predict(map, xx[264:301, ])), Z)
    path <- tempfile(fileext = ".rds")
    saveRDS(map, path)
    back <- readRDS(path)
    unlink(path)
    expect_identical(back, map)
    expect_identical(predict(back, xx), Z)
    # the row blocks inside the transform: 13 rows at a time
    expect_identical(with_block_rows(13L, predict(map, xx, nthreads = 2)), Z)
  }
})

test_that("seeds reproduce the landmarks and leave the user's stream alone", {
  set.seed(10)
  before <- .Random.seed
  a <- nystrom_features(x3, gaussian_kernel(1), m = 10, landmarks = "leverage", seed = 3)
  expect_identical(.Random.seed, before)
  b <- nystrom_features(x3, gaussian_kernel(1), m = 10, landmarks = "leverage", seed = 3)
  expect_identical(a, b)
  set.seed(3)
  c <- nystrom_features(x3, gaussian_kernel(1), m = 10, landmarks = "leverage")
  expect_identical(drop_call(c), drop_call(a))
})

test_that("the formula method, print and summary", {
  map <- nystrom_features(~ Sepal.Length + Species, data = iris, kernel = gaussian_kernel(1),
                          m = 10, landmarks = "kmeans", seed = 1)
  expect_identical(dim(predict(map, iris[1:5, ])), c(5L, 10L))
  expect_output(print(map), "Nystrom features, kmeans landmarks, m = 10")
  expect_output(print(summary(map)), "size")
  # the default m
  expect_identical(nystrom_features(x3, gaussian_kernel(1), seed = 1)$m, 40L)
})

test_that("bad input gives errors naming the argument", {
  X <- x3[1:6, ]
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 0), "'m'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 7), "'m' must be at most nrow")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 2.5), "'m'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = NA), "'m'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 3, landmarks = "bogus"), "'landmarks'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 3, landmarks = NA), "'landmarks'")
  expect_error(nystrom_features(replace(X, 4, NA), gaussian_kernel(1), m = 3), "'x'")
  expect_error(nystrom_features(replace(X, 4, Inf), gaussian_kernel(1), m = 3), "'x'")
  expect_error(nystrom_features(X[0, ], gaussian_kernel(1), m = 3), "'x'")
  expect_error(nystrom_features(X, "gaussian", m = 3), "'kernel'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 3, tol = -1), "'tol'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 3, tol = 1), "'tol'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 3, seed = "a"), "'seed'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 3, nthreads = 0), "'nthreads'")
  expect_error(nystrom_features(X, gaussian_kernel(1), m = 3, D = 5), "'D'")
  expect_error(nystrom_features(X, min_kernel(), m = 3), "'x' must be non-negative")
  expect_error(nystrom_features(y ~ a, data = data.frame(a = 1:3, y = 1:3), m = 2), "'formula'")
  map <- nystrom_features(X, gaussian_kernel(1), m = 3, seed = 1)
  expect_error(predict(map, cbind(X, X)), "'newdata' has 6 column")
  expect_error(predict(map, replace(X, 2, NaN)), "'newdata'")
  expect_error(predict(map), "'newdata'")
  expect_error(kernel_approx_error(map, X[, 1:2]), "'x'")
  mmin <- nystrom_features(abs(X), min_kernel(), m = 3, seed = 1)
  expect_error(predict(mmin, -abs(X)), "'newdata' must be non-negative")
  expect_error(nystrom_features(X * 100, exponential_dot_kernel(0.1), m = 3), "'kernel'")
})
