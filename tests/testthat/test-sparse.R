# Sparse input (R/sparse.R, src/sparse.c).  The sparse product sums each
# entry of X W over the non-zeros in the dense product's order, and a zero
# adds exactly nothing, so the features must be identical (not just close)
# to those of the dense matrix, on every path: Z, t(Z), decision values.

skip_if_not_installed("Matrix")

sparse_data <- function(n = 300, d = 40, density = 0.1, seed = 1) {
  set.seed(seed)
  x <- Matrix::rsparsematrix(n, d, density)
  colnames(x) <- paste0("t", seq_len(d))
  x
}

test_that("the sparse transform equals the dense one bit for bit", {
  x <- sparse_data(n = 600, d = 40)     # several row and frequency tiles
  xd <- as.matrix(x)
  for (type in c("phase", "pair")) {
    map <- random_features(xd, gaussian_kernel(2), D = 300, type = type, seed = 2)
    Z <- predict(map, xd)
    expect_identical(predict(map, x), Z)
    expect_identical(predict(map, methods::as(x, "RsparseMatrix")), Z)
    # t(Z) and the fused decision values, as the machines use them
    ns <- asNamespace("bochner")
    expect_identical(ns$transform_features_t(map, x, 2L), t(Z))
    beta <- matrix(seq(-1, 1, length.out = 2 * map$n_features), map$n_features, 2)
    expect_identical(ns$feature_decision(map, x, beta, c(0.5, -1), 2L),
                     ns$feature_decision(map, xd, beta, c(0.5, -1), 2L))
  }
})

test_that("a few sparse rows (W read directly, not transposed) give the dense features", {
  # 8 * nnz < d: the frequencies are gathered from W instead of transposed
  x <- sparse_data(n = 600, d = 3000, density = 0.002)
  xd <- as.matrix(x)
  map <- random_features(xd, gaussian_kernel(2), D = 300, seed = 2)
  ns <- asNamespace("bochner")
  for (rows in list(1:3, 1, 10:12)) {
    xs <- x[rows, , drop = FALSE]
    expect_lt(8 * length(xs@x), ncol(xs))
    expect_identical(predict(map, xs), predict(map, xd[rows, , drop = FALSE]))
    beta <- matrix(seq(-1, 1, length.out = 600), 300, 2)
    expect_identical(ns$feature_decision(map, xs, beta, c(1, 2), 1L),
                     ns$feature_decision(map, xd[rows, , drop = FALSE], beta, c(1, 2), 1L))
  }
  # and the transposed path on the whole matrix
  expect_gt(8 * length(x@x), ncol(x))
  expect_identical(predict(map, x), predict(map, xd))
})

test_that("the sparse C routines agree with plain-R references", {
  x <- sparse_data(n = 50, d = 7, density = 0.3)
  xd <- as.matrix(x)
  set.seed(3)
  w <- matrix(rnorm(7 * 5), 7, 5)
  b <- runif(5, 0, 2 * pi)
  # cos(X W + b) in plain R: the vectorised cosine is accurate to a few ulps
  z <- .Call(bochner:::C_sparse_rff, x, w, NULL, b, 0.5, 0L, NULL, NULL, 1L)
  expect_equal(z, 0.5 * cos(xd %*% w + rep(b, each = 50)), tolerance = 1e-13)
  zp <- .Call(bochner:::C_sparse_rff, x, w, NULL, NULL, 0.5, 1L, NULL, NULL, 1L)
  ref <- xd %*% w
  expect_equal(t(zp)[, c(1, 3)], 0.5 * cbind(cos(ref[, 1]), cos(ref[, 2])), tolerance = 1e-13)
  expect_equal(t(zp)[, c(2, 4)], 0.5 * cbind(sin(ref[, 1]), sin(ref[, 2])), tolerance = 1e-13)
  # the distances of the median heuristic: dist()'s, bit for bit
  expect_identical(.Call(bochner:::C_sparse_dist, x, FALSE), as.vector(dist(xd)))
  expect_identical(.Call(bochner:::C_sparse_dist, x, TRUE),
                   as.vector(dist(xd, method = "manhattan")))
  # the same on a dgRMatrix, and on empty rows
  x0 <- x
  x0[3, ] <- 0
  x0 <- Matrix::drop0(x0)
  expect_identical(.Call(bochner:::C_sparse_dist, methods::as(x0, "RsparseMatrix"), FALSE),
                   as.vector(dist(as.matrix(x0))))
  expect_error(.Call(bochner:::C_sparse_rff, xd, w, NULL, b, 1, 0L, NULL, NULL, 1L), "dgCMatrix")
  bad <- x
  bad@i[1] <- 1000L
  expect_error(.Call(bochner:::C_sparse_rff, bad, w, NULL, b, 1, 0L, NULL, NULL, 1L), "indices")
  # a 'p' slot that promises more entries than there are: refused before reading
  short <- x
  short@p[length(short@p)] <- 10000L
  expect_error(.Call(bochner:::C_sparse_rff, short, w, NULL, b, 1, 0L, NULL, NULL, 1L), "fewer")
  expect_error(.Call(bochner:::C_sparse_dist, short, FALSE), "fewer")
})

test_that("a loop over blocks transposes the frequencies once, with the same features", {
  x <- sparse_data(n = 3000, d = 50, density = 0.1)
  xd <- as.matrix(x)
  map <- random_features(x, gaussian_kernel(2), D = 300, seed = 4)
  ns <- asNamespace("bochner")
  Z <- predict(map, xd)
  seen <- NULL
  res <- ns$with_sparse_frequencies(map, x, {
    seen <- ns$cached_frequencies_t(map)
    ns$transform_features(map, x[1:1000, ], 1L)
  })
  expect_identical(seen, t(map$omega))
  expect_identical(res, Z[1:1000, ])
  expect_null(ns$cached_frequencies_t(map))                 # nothing held afterwards
  expect_identical(.Call(bochner:::C_sparse_rff, x, map$omega, t(map$omega), map$phase,
                         map$scale, 1L, NULL, NULL, 2L), t(Z))
  expect_error(.Call(bochner:::C_sparse_rff, x, map$omega, map$omega, map$phase, map$scale,
                     0L, NULL, NULL, 1L), "'wt'")
  # predict() in blocks with a progress bar, ridge's normal equations
  old <- options(bochner.progress = TRUE, bochner.progress_delay = 3600)
  on.exit(options(old))
  big <- sparse_data(n = 70000, d = 20, density = 0.1, seed = 9)
  map2 <- random_features(big, gaussian_kernel(2), D = 256, seed = 1)
  expect_identical(predict(map2, big), predict(map2, as.matrix(big)))
  expect_identical(rff_ridge(big[1:5000, ], (1:5000) / 5000, D = 64, scale = FALSE, seed = 1)$weights,
                   rff_ridge(as.matrix(big[1:5000, ]), (1:5000) / 5000, D = 64, scale = FALSE,
                             seed = 1)$weights)
})

test_that("results do not depend on the number of threads or the row blocks", {
  # 5000 rows: blocks of 1024 rows on one thread, 576 on two (the dense
  # transform's are 256)
  x <- sparse_data(n = 5000, d = 30, density = 0.05)
  map <- random_features(x, gaussian_kernel(1), D = 300, seed = 1)
  Z <- predict(map, x, nthreads = 1)
  expect_identical(predict(map, x, nthreads = 2), Z)
  expect_identical(predict(map, as.matrix(x), nthreads = 1), Z)
})

test_that("the median heuristic gives the dense data's sigma", {
  x <- sparse_data(n = 120, d = 20, density = 0.6)
  xd <- as.matrix(x)
  for (k in list(gaussian_kernel(), laplace_kernel("median"), cauchy_kernel("median"),
                 matern_kernel("median", 1.5))) {
    a <- random_features(x, k, D = 10, seed = 1)
    b <- random_features(xd, k, D = 10, seed = 1)
    expect_identical(a$kernel$sigma, b$kernel$sigma, label = k$name)
    expect_identical(a$omega, b$omega)
  }
  # an odd number of pairs for the Cauchy kernel's weighted median
  x3 <- sparse_data(n = 3, d = 5, density = 0.8, seed = 4)
  coord <- function(x) unlist(lapply(seq_len(ncol(x)), function(j) dist(as.matrix(x)[, j])))
  expect_identical(bochner:::sparse_bandwidth(x3, "cauchy"), median(coord(x3)))
  # kernlab's sigest rule on the 10 % and 90 % quantiles of the squared
  # distances that are not zero: the same order statistics as quantile() on
  # the dense rows
  sigest <- function(d) {
    q <- quantile(d[d != 0]^2, c(0.1, 0.9), names = FALSE)
    1 / sqrt(1 / q[2] + 1 / q[1])
  }
  for (xx in list(x3, sparse_data(n = 40, d = 8, density = 0.5, seed = 6))) {
    expect_identical(bochner:::sparse_bandwidth(xx, "cauchy", "sigest"), sigest(coord(xx)))
    expect_identical(bochner:::sparse_bandwidth(xx, "gaussian", "sigest"),
                     sigest(as.vector(dist(as.matrix(xx)))))
    expect_identical(bochner:::sparse_bandwidth(xx, "laplace", "sigest"),
                     sigest(as.vector(dist(as.matrix(xx), "manhattan"))))
  }
})

test_that("the machines and kernel k-means give the dense fits", {
  x <- sparse_data(n = 300, d = 30)
  xd <- as.matrix(x)
  y <- factor(ifelse(xd[, 1] + xd[, 2] - xd[, 3] > 0, "a", "b"))
  f1 <- rff_svm(x, y, D = 128, scale = FALSE, seed = 1)
  f2 <- rff_svm(xd, y, D = 128, scale = FALSE, seed = 1)
  expect_identical(f1$weights, f2$weights)
  expect_identical(predict(f1, x, type = "decision"), predict(f2, xd, type = "decision"))
  expect_identical(predict(f1, xd), predict(f2, x))
  # both ridge solvers: primal (n >= features) and dual
  for (D in c(100, 500)) {
    r1 <- rff_ridge(x, xd[, 1], D = D, scale = FALSE, seed = 1)
    r2 <- rff_ridge(xd, xd[, 1], D = D, scale = FALSE, seed = 1)
    expect_identical(r1$weights, r2$weights)
    expect_identical(predict(r1, x), predict(r2, xd))
  }
  k1 <- kernel_kmeans(x, 3, method = "rff", D = 64, seed = 1)
  k2 <- kernel_kmeans(xd, 3, method = "rff", D = 64, seed = 1)
  expect_identical(k1$cluster, k2$cluster)
  expect_identical(predict(k1, x, type = "distance"), predict(k2, xd, type = "distance"))
  expect_error(kernel_kmeans(x, 3), "'x' is a sparse matrix.*method = \"rff\"")
})

test_that("scale = TRUE on sparse data divides by the columns' standard deviations", {
  x <- sparse_data(n = 200, d = 10, density = 0.3)
  xd <- as.matrix(x)
  y <- xd %*% (1:10) / 10
  s <- apply(xd, 2, sd)
  sc <- bochner:::sparse_scaling(x)
  expect_equal(sc$scale, unname(s), tolerance = 1e-14)
  expect_identical(sc$center, rep(0, 10))
  fit <- rff_ridge(x, y, D = 100, seed = 1)
  expect_identical(fit$scaling, sc)
  ref <- rff_ridge(sweep(xd, 2, sc$scale, "/"), y, D = 100, scale = FALSE, seed = 1)
  expect_equal(fit$weights, ref$weights, tolerance = 1e-10)
  # dense new data for a sparse fit, and sparse new data for a dense fit
  expect_equal(predict(fit, xd[1:5, ]), predict(fit, x[1:5, ]), tolerance = 1e-12)
  dense_fit <- rff_ridge(xd, y, D = 100, seed = 1)
  expect_equal(predict(dense_fit, x[1:5, ]), predict(dense_fit, xd[1:5, ]), tolerance = 1e-12)
})

test_that("other maps densify sparse data by blocks", {
  x <- abs(sparse_data(n = 50, d = 6, density = 0.5))
  xd <- as.matrix(x)
  for (map in list(random_features(xd, polynomial_kernel(2), D = 20, seed = 1),
                   random_features(xd, gaussian_kernel(1), D = 20, sampling = "structured",
                                   seed = 1),
                   random_features(xd, min_kernel(), D = 20, seed = 1),
                   nystrom_features(xd, gaussian_kernel(1), m = 5, seed = 1))) {
    expect_identical(predict(map, x), predict(map, xd))
  }
})

test_that("sparse input is checked", {
  x <- sparse_data(n = 20, d = 4, density = 0.5)
  bad <- x
  bad@x[2] <- NA
  expect_error(random_features(bad, gaussian_kernel(1), D = 5), "'x' contains NA")
  expect_error(kernel_matrix(gaussian_kernel(1), x), "'x' is a sparse matrix")
  map <- random_features(x, gaussian_kernel(1), D = 5)
  expect_error(predict(map, x[, 1:3]), "'newdata' has 3 column")
  expect_error(predict(map, x[0, ]), "'newdata' has no rows")
  fx <- rff_svm(y ~ ., data = data.frame(as.matrix(x), y = factor(rep(1:2, 10))), D = 8)
  expect_error(predict(fx, x), "fitted with a formula")
  # other sparse classes are converted
  expect_identical(predict(map, methods::as(x, "TsparseMatrix")), predict(map, x))
  # columns matched by name
  expect_identical(predict(map, x[, 4:1]), predict(map, x))
})

test_that("a document-term matrix classifies", {
  set.seed(5)
  n <- 400
  topic <- factor(sample(c("sport", "politics"), n, replace = TRUE))
  rows <- rep(seq_len(n), each = 15)
  own <- runif(n * 15) < 0.4
  cols <- ifelse(own, sample(1:50, n * 15, replace = TRUE) +
                   ifelse(topic[rows] == "sport", 0, 50),
                 sample(1000, n * 15, replace = TRUE))
  dtm <- Matrix::sparseMatrix(i = rows, j = cols, x = 1, dims = c(n, 1000))
  dtm@x <- log1p(dtm@x)
  # counts as they are: standardising would blow up the rare terms
  fit <- rff_svm(dtm[1:300, ], topic[1:300], D = 256, scale = FALSE, seed = 1)
  # about 6 of 50 topic words a document: the topics share words, nearly separable
  expect_gt(mean(predict(fit, dtm[301:400, ]) == topic[301:400]), 0.9)
})
