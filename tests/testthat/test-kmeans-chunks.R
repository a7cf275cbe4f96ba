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

# The same partition under other cluster numbers: each cluster of one is a
# cluster of the other.
same_partition <- function(a, b) {
  tab <- table(a, b) > 0
  all(rowSums(tab) == 1L) && all(colSums(tab) == 1L)
}

test_that("chunked kernel k-means is the in-memory fit from the same seed", {
  pieces <- blob_pieces()          # chunks of 200, 180 and 220 rows
  all <- as.matrix(do.call(rbind, pieces))
  K <- gaussian_kernel(1.5)
  # rff: the map's draws and the seeding's come from one stream, as in memory
  ch <- kernel_kmeans(data_chunks(pieces), 5, K, method = "rff", D = 64, seed = 2)
  mem <- kernel_kmeans(all, 5, K, method = "rff", D = 64, seed = 2)
  expect_identical(ch$seeding, "kmeans++")
  expect_identical(ch$map$omega, mem$map$omega)
  expect_equal(ch$start_objectives, mem$start_objectives, tolerance = 1e-10)
  expect_equal(ch$tot.withinss, mem$tot.withinss, tolerance = 1e-10)
  expect_equal(ch$totss, mem$totss, tolerance = 1e-10)
  cl <- unlist(predict(ch, data_chunks(pieces)))
  expect_true(same_partition(cl, predict(mem, all)))
  expect_equal(sort(ch$size), sort(mem$size))
  # Nystrom: the chunked fit's landmarks (rows of the survey's sample), the
  # same map given to both
  ny <- kernel_kmeans(data_chunks(pieces), 5, K, method = "nystrom", m = 64, seed = 2)
  ch <- kernel_kmeans(data_chunks(pieces), 5, K, method = "nystrom", m = 64, seed = 2,
                      map = ny$map)
  mem <- kernel_kmeans(all, 5, method = "rff", map = ny$map, seed = 2)
  expect_equal(ch$start_objectives, mem$start_objectives, tolerance = 1e-10)
  expect_equal(ch$tot.withinss, mem$tot.withinss, tolerance = 1e-10)
  expect_true(same_partition(unlist(predict(ch, data_chunks(pieces))), predict(mem, all)))
  # and its withinss are those of its clusters about their means
  cl <- unlist(predict(ch, data_chunks(pieces)))
  Z <- predict(ch$map, all)
  mu <- rowsum(Z, cl) / as.vector(table(cl))
  ws <- as.vector(rowsum(rowSums((Z - mu[as.character(cl), ])^2), cl))
  expect_equal(ch$withinss, ws, tolerance = 1e-8)
  # structureless data, where starts end far apart, Lloyd only
  set.seed(8)
  x <- matrix(rnorm(500 * 3), 500, 3)
  parts <- list(x[1:90, ], x[91:330, ], x[331:500, ])
  ch <- kernel_kmeans(data_chunks(parts), 7, gaussian_kernel(2), D = 24, seed = 4,
                      algorithm = "Lloyd", nstart = 4)
  mem <- kernel_kmeans(x, 7, gaussian_kernel(2), method = "rff", D = 24, seed = 4,
                       algorithm = "Lloyd", nstart = 4)
  expect_equal(ch$start_objectives, mem$start_objectives, tolerance = 1e-10)
  expect_identical(unlist(predict(ch, data_chunks(parts))), mem$cluster)
  expect_identical(ch$iter, mem$iter)
  expect_equal(ch$trace, mem$trace, tolerance = 1e-10)
  # Hartigan-Wong from a Lloyd run cut short by iter.max: from its last
  # partition, as in memory
  ch <- suppressWarnings(kernel_kmeans(data_chunks(parts), 7, gaussian_kernel(2), D = 24,
                                       seed = 4, nstart = 3, max_iter = 3))
  mem <- suppressWarnings(kernel_kmeans(x, 7, gaussian_kernel(2), method = "rff", D = 24,
                                        seed = 4, nstart = 3, max_iter = 3))
  expect_false(mem$converged)
  expect_equal(ch$start_objectives, mem$start_objectives, tolerance = 1e-10)
  expect_identical(ch$size, mem$size)
  expect_equal(unname(ch$centers), unname(mem$centers), tolerance = 1e-10)
  expect_identical(ch$moves, mem$moves)
  expect_error(kernel_kmeans(data_chunks(parts), 7, seeding = "random"), "'seeding'")
})

# Greedy k-means++ in plain R (km_plus_plus in src/kmeans.c), the rows
# picked by each of nstart starts.
greedy_pp <- function(Z, k, nstart) {
  n <- nrow(Z)
  trials <- 2 + floor(log(k))
  d2 <- function(s) colSums((t(Z) - Z[s, ])^2)
  lapply(seq_len(nstart), function(r) {
    chosen <- min(floor(n * runif(1)), n - 1) + 1
    mind <- d2(chosen)
    for (c in seq_len(k - 1L)) {
      tot <- sum(mind)
      best <- Inf
      for (t in seq_len(trials)) {
        u <- runif(1)
        cand <- if (tot > 0) which(cumsum(mind) > u * tot)[1L] else min(floor(n * u), n - 1) + 1
        d <- d2(cand)
        pot <- sum(pmin(d, mind))
        if (pot < best) {
          best <- pot
          pick <- cand
          bd <- d
        }
      }
      chosen <- c(chosen, pick)
      mind <- pmin(mind, bd)
    }
    chosen
  })
}

test_that("greedy k-means++ over the chunks picks the in-memory rows", {
  set.seed(3)
  x <- matrix(rnorm(330 * 2), 330, 2)
  pieces <- list(x[1:70, ], x[71:260, ], x[261:330, ])
  chunks <- data_chunks(pieces)
  map <- random_features(x, gaussian_kernel(1), D = 16, type = "phase", seed = 1)
  Z <- predict(map, x)
  sv <- list(n = 330L, rows = c(70L, 190L, 70L), names = NULL)
  set.seed(9)
  seeds <- bochner:::replay_plus_plus(chunks, sv, map, 6L, 3L, 1L, "test")
  set.seed(9)
  ref <- greedy_pp(Z, 6L, 3L)
  for (r in 1:3) {
    rows <- apply(seeds[[r]], 1L, function(s) which.min(colSums((t(Z) - s)^2)))
    expect_identical(as.numeric(rows), as.numeric(ref[[r]]))
    expect_equal(unname(seeds[[r]]), unname(Z[ref[[r]], ]), tolerance = 1e-12)
  }
})

test_that("k-means++ over the chunks draws uniformly where all rows are centres, as in memory", {
  set.seed(2)
  base <- matrix(rnorm(3 * 2), 3, 2)
  x <- base[sample.int(3, 40, replace = TRUE), ]   # 3 distinct rows, 4 clusters
  pieces <- list(x[1:15, ], x[16:40, ])
  K <- gaussian_kernel(1)
  ch <- suppressWarnings(kernel_kmeans(data_chunks(pieces), 4, K, D = 8, seed = 1, nstart = 3))
  mem <- suppressWarnings(kernel_kmeans(x, 4, K, method = "rff", D = 8, seed = 1, nstart = 3))
  # every start ends at objective 0 here, so which of the tied starts is
  # kept (and so the clusters' numbering) follows rounding at 1e-16, which
  # differs between compilers' builds: the partition's sizes must agree
  expect_identical(sort(ch$size), sort(mem$size))
  expect_lt(max(ch$start_objectives), 1e-12)
})

test_that("the block step of k-means++ (C_kmeans_pp_block) matches plain R", {
  set.seed(12)
  Z <- matrix(rnorm(40 * 3), 40)
  S <- Z[c(4, 9), ]
  Tr <- Z[c(1, 30, 31), ]
  w <- runif(40, 0.5, 2)
  d2 <- function(v) colSums((t(Z) - v)^2)
  mind <- pmin(d2(S[1, ]), d2(S[2, ]))
  for (wt in list(NULL, w)) {
    ww <- if (is.null(wt)) rep(1, 40) else wt
    targets <- c(0, 0.3, 0.999) * sum(ww * mind)
    b <- .Call(bochner:::C_kmeans_pp_block, Z, S, Tr, wt, targets, 1L)
    expect_equal(b$total, sum(ww * mind), tolerance = 1e-12)
    expect_equal(b$pot, apply(Tr, 1L, function(v) sum(ww * pmin(d2(v), mind))), tolerance = 1e-12)
    expect_identical(b$pick, vapply(targets, function(t) as.numeric(which(cumsum(ww * mind) > t)[1L]), 0))
    expect_identical(b$last, 40)
    # past the block's total: no row
    expect_identical(.Call(bochner:::C_kmeans_pp_block, Z, S, NULL, wt, b$total * 2, 1L)$pick, 0)
  }
  # no centre yet: the potentials are the sums of the distances
  b0 <- .Call(bochner:::C_kmeans_pp_block, Z, NULL, Tr[1, , drop = FALSE], NULL, numeric(0), 1L)
  expect_equal(b0$pot, sum(d2(Tr[1, ])), tolerance = 1e-12)
  expect_identical(b0$total, Inf)
  expect_error(.Call(bochner:::C_kmeans_pp_block, Z, S[, 1:2], NULL, NULL, numeric(0), 1L),
               "'seeds'")
})

test_that("the Hartigan-Wong passes over the chunks are the in-memory passes", {
  set.seed(5)
  x <- matrix(rnorm(600 * 4), 600, 4)
  pieces <- list(x[1:250, ], x[251:400, ], x[401:600, ])
  K <- gaussian_kernel(2)
  # one start, so that both fits keep the same start
  hw <- kernel_kmeans(data_chunks(pieces), 6, K, D = 32, seed = 3, nstart = 1)
  ll <- kernel_kmeans(data_chunks(pieces), 6, K, D = 32, seed = 3, nstart = 1,
                      algorithm = "Lloyd")
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
