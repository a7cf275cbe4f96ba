# Kernel k-means on chunks: the C block step against plain R, the in-memory
# defaults, and the objective of the in-memory fit.

test_that("the block step (C_kmeans_block) matches plain R", {
  set.seed(11)
  Z <- matrix(rnorm(57 * 4), 57)
  C <- Z[c(3, 10, 20), ]
  C[3, ] <- C[2, ]                 # a tie: rows go to the lower centre
  own <- C + 0.1
  for (w in list(NULL, runif(57, 0.5, 2))) {
    wt <- if (is.null(w)) rep(1, 57) else w
    b <- .Call(bochner:::C_kmeans_block, Z, C, w, own, 5L, 1L)
    D2 <- outer(rowSums(Z^2), rowSums(C^2), "+") - 2 * Z %*% t(C)
    cl <- max.col(-D2, ties.method = "first")
    expect_identical(b$cluster, cl)
    expect_false(any(b$cluster == 3L))
    expect_equal(b$distance, D2[cbind(1:57, cl)], tolerance = 1e-12)
    S <- matrix(0, 3, 4)
    S[sort(unique(cl)), ] <- rowsum(Z * wt, cl)
    expect_equal(b$sums, S, tolerance = 1e-12)
    expect_equal(b$counts, vapply(1:3, function(c) sum(wt[cl == c]), 0), tolerance = 1e-12)
    expect_equal(b$s2, vapply(1:3, function(c) sum(wt[cl == c] * rowSums(Z[cl == c, , drop = FALSE]^2)), 0),
                 tolerance = 1e-12)
    expect_equal(b$zsum, colSums(Z * wt), tolerance = 1e-12)
    expect_equal(b$zz, sum(wt * rowSums(Z^2)), tolerance = 1e-12)
    # the farthest rows from the centres of 'own', largest first
    d_own <- rowSums((Z - own[cl, ])^2)
    expect_identical(b$far, head(order(-d_own, seq_along(d_own)), 5L))
    expect_equal(b$far_distance, d_own[b$far], tolerance = 1e-10)
  }
  # one row, one centre
  b1 <- .Call(bochner:::C_kmeans_block, Z[1, , drop = FALSE], C[1, , drop = FALSE], NULL,
              NULL, 3L, 1L)
  expect_identical(b1$cluster, 1L)
  expect_identical(b1$far, 1L)
  expect_error(.Call(bochner:::C_kmeans_block, Z, C[, 1:2], NULL, NULL, 0L, 1L), "columns")
  expect_error(.Call(bochner:::C_kmeans_block, Z, C, rep(-1, 57), NULL, 0L, 1L), "weights")
})

blob_pieces <- function(sizes = c(200, 180, 220)) {
  set.seed(21)
  centres <- cbind(c(0, 4, 0, 4, 2), c(0, 0, 4, 4, 2))
  lapply(sizes, function(n) {
    g <- sample.int(5, n, replace = TRUE)
    data.frame(a = centres[g, 1] + rnorm(n, sd = 0.6), b = centres[g, 2] + rnorm(n, sd = 0.6))
  })
}

test_that("chunked kernel k-means has the in-memory defaults", {
  f_mem <- formals(bochner:::kernel_kmeans.default)
  f_ch <- formals(bochner:::kernel_kmeans.data_chunks)
  expect_null(f_ch$kernel)
  expect_identical(f_ch$nstart, f_mem$nstart)
  pieces <- blob_pieces()
  fit <- kernel_kmeans(data_chunks(pieces), 5, D = 64, seed = 1)
  # the clustering bandwidth rule on the survey's sample
  expect_match(fit$bandwidth$rule, "nearest neighbour")
  expect_identical(fit$kernel$sigma, fit$bandwidth$sigma)
  expect_length(fit$start_objectives, 10L)
  expect_true(fit$converged)
})

test_that("chunked kernel k-means reaches the in-memory fit's objective", {
  pieces <- blob_pieces()
  all <- as.matrix(do.call(rbind, pieces))
  for (method in c("rff", "nystrom")) {
    ch <- kernel_kmeans(data_chunks(pieces), 5, gaussian_kernel(1.5), method = method,
                        D = 64, seed = 2)
    mem <- kernel_kmeans(all, 5, method = "rff", map = ch$map, seed = 2)
    # the same objective in the same features, to 0.1 %
    expect_lt(ch$tot.withinss, mem$tot.withinss * 1.001)
    expect_equal(ch$totss, mem$totss, tolerance = 1e-10)
    # and its withinss are those of its clusters about their means
    cl <- unlist(predict(ch, data_chunks(pieces)))
    Z <- predict(ch$map, all)
    mu <- rowsum(Z, cl) / as.vector(table(cl))
    ws <- as.vector(rowsum(rowSums((Z - mu[as.character(cl), ])^2), cl))
    expect_equal(ch$withinss, ws, tolerance = 1e-8)
  }
})

test_that("the Hartigan-Wong passes over the chunks are the in-memory passes", {
  set.seed(5)
  x <- matrix(rnorm(600 * 4), 600, 4)
  pieces <- list(x[1:250, ], x[251:400, ], x[401:600, ])
  K <- gaussian_kernel(2)
  hw <- kernel_kmeans(data_chunks(pieces), 6, K, D = 32, seed = 3)
  ll <- kernel_kmeans(data_chunks(pieces), 6, K, D = 32, seed = 3, algorithm = "Lloyd")
  expect_identical(hw$algorithm, "Hartigan-Wong")
  expect_identical(ll$algorithm, "Lloyd")
  expect_identical(ll$moves, 0L)
  expect_gt(hw$moves, 0L)
  expect_lt(hw$tot.withinss, ll$tot.withinss)
  # from Lloyd's partition (the rows at their nearest centres), the passes
  # of the in-memory engine over all rows make the same moves to the same
  # objective
  Z <- predict(hw$map, x)
  cl0 <- .Call(bochner:::C_kmeans_block, Z, unname(ll$centers), NULL, NULL, 0L, 1L)$cluster
  mem <- .Call(bochner:::C_kmeans_lloyd, Z, 6L, NULL, cl0, TRUE, 0L, 1L, 100L, 1L)
  expect_identical(hw$moves, mem$moves)
  expect_identical(hw$size, mem$size)
  expect_equal(hw$withinss, mem$withinss, tolerance = 1e-10)
  expect_equal(unname(hw$centers), unname(mem$centers), tolerance = 1e-10)
  expect_equal(hw$trace[length(hw$trace)], hw$tot.withinss)
  expect_error(kernel_kmeans(data_chunks(pieces), 6, K, algorithm = "MacQueen"), "'algorithm'")
})

test_that("the block Hartigan-Wong pass checks its state", {
  Z <- matrix(rnorm(20), 10, 2)
  S <- matrix(0, 2, 2)
  expect_error(.Call(bochner:::C_kmeans_hartigan_block, Z, rep(1L, 9), S, c(5, 5), c(10, 10),
                     10, 10, 1L), "'cluster'")
  expect_error(.Call(bochner:::C_kmeans_hartigan_block, Z, rep(3L, 10), S, c(5, 5), c(10, 10),
                     10, 10, 1L), "bad parameters")
})
