# Kernel k-means: the C code against a plain-R kernel k-means with the same
# seeding and the same random draws, plus the properties the maths promises.

# ---- plain-R reference ------------------------------------------------------

ref_kkm_uniform <- function(n) min(n - 1, floor(n * runif(1))) + 1

ref_kkm_proportional <- function(w) {
  total <- 0
  for (v in w) total <- total + v          # serial double sums, as in C
  if (!(total > 0)) return(ref_kkm_uniform(length(w)))
  target <- runif(1) * total
  cum <- 0
  last <- 1
  for (i in seq_along(w)) {
    if (w[i] > 0) {
      cum <- cum + w[i]
      last <- i
      if (cum > target) return(i)
    }
  }
  last
}

# greedy k-means++: point_dist(s) gives the squared distances of all points
# to point s; each centre after the first is the best (lowest sum of
# distances to the nearest centre) of 2 + floor(log k) draws; with weights
# w, the draws and sums weighted.  The chosen points in attribute "chosen".
ref_kkm_seed <- function(n, k, point_dist, w = NULL) {
  mind <- numeric(n)
  a <- integer(n)
  chosen <- integer(k)
  trials <- 2 + floor(log(k))
  wt <- if (is.null(w)) rep(1, n) else w
  serial_sum <- function(v) {
    total <- 0
    for (x in v) total <- total + x
    total
  }
  for (c in seq_len(k)) {
    if (c == 1) {
      s <- if (is.null(w)) ref_kkm_uniform(n) else ref_kkm_proportional(w)
      d <- point_dist(s)
    } else {
      best <- Inf
      for (t in seq_len(trials)) {
        st <- ref_kkm_proportional(wt * mind)
        dt <- point_dist(st)
        pot <- serial_sum(wt * pmin(dt, mind))
        if (pot < best) {
          best <- pot
          d <- dt
          s <- st
        }
      }
    }
    chosen[c] <- s
    closer <- if (c == 1) rep(TRUE, n) else d < mind
    mind[closer] <- d[closer]
    a[closer] <- c
  }
  structure(a, chosen = chosen)
}

# k-means|| (5 rounds, oversampling 2k), then greedy k-means++ on the candidates
# weighted by the points nearest to them; every point joins its nearest
# chosen candidate (ties to the earlier)
ref_kkm_seed_parallel <- function(n, k, point_dist) {
  ell <- 2 * k
  cand <- ref_kkm_uniform(n)
  mind <- point_dist(cand)
  near <- rep(1L, n)
  for (round in 1:5) {
    psi <- 0
    for (v in mind) psi <- psi + v
    if (!(psi > 0)) break
    u <- runif(n)
    for (s in which(u * psi < ell * mind)) {
      cand <- c(cand, s)
      d <- point_dist(s)
      closer <- d < mind
      mind[closer] <- d[closer]
      near[closer] <- length(cand)
    }
  }
  if (length(cand) <= k) return(c(ref_kkm_seed(n, k, point_dist)))
  w <- as.numeric(tabulate(near, length(cand)))
  # the greedy weighted k-means++ of the fit, on the candidates
  sub <- ref_kkm_seed(length(cand), k, function(s) point_dist(cand[s])[cand], w = w)
  chosen <- cand[attr(sub, "chosen")]
  mind <- rep(Inf, n)
  a <- integer(n)
  for (j in seq_len(k)) {
    d <- point_dist(chosen[j])
    closer <- d < mind
    mind[closer] <- d[closer]
    a[closer] <- j
  }
  a
}

ref_kkm_fix_empty <- function(a, dist, k) {
  count <- 0
  for (c in seq_len(k)) {
    size <- tabulate(a, k)
    if (size[c] > 0) next
    donors <- which(size[a] > 1)
    far <- donors[which.max(dist[donors])]
    a[far] <- c
    dist[far] <- 0
    count <- count + 1
  }
  list(a = a, dist = dist, count = count)
}

# centre_dist(a): n x k squared distances to the centres of assignment a
# (Inf for an empty cluster)
# Hartigan-Wong passes: each point in turn moves to the cluster b minimising
# |b| / (|b| + 1) d(i, b) when that beats |a| / (|a| - 1) d(i, a) (the exact
# change of the objective), distances recomputed from scratch after every
# move by row_dist(i, a) (point i's squared distances to the k centres).
ref_kkm_hartigan <- function(a, k, iter.max, row_dist, objective) {
  trace <- numeric()
  passes <- 0
  while (passes < iter.max) {
    moves <- 0
    for (i in seq_along(a)) {
      size <- tabulate(a, k)
      from <- a[i]
      if (size[from] < 2) next
      d <- pmax(0, row_dist(i, a))
      best <- size[from] / (size[from] - 1) * d[from] * (1 - 1e-10)
      to <- 0
      for (c in seq_len(k)) {
        if (c == from) next
        add <- size[c] / (size[c] + 1) * d[c]
        if (add < best) {
          best <- add
          to <- c
        }
      }
      if (to > 0) {
        a[i] <- to
        moves <- moves + 1
      }
    }
    if (moves == 0) break
    passes <- passes + 1
    trace <- c(trace, objective(a))
  }
  list(a = a, trace = trace)
}

ref_kkm_run <- function(a, k, iter.max, centre_dist, row_dist = NULL) {
  n <- length(a)
  own <- function(D, a) pmax(0, D[cbind(seq_len(n), a)])
  reseeded <- 0
  if (any(tabulate(a, k) == 0)) {
    fx <- ref_kkm_fix_empty(a, own(centre_dist(a), a), k)
    a <- fx$a
    reseeded <- fx$count
  }
  D <- centre_dist(a)
  dist <- own(D, a)
  trace <- sum(dist)
  t <- 0
  converged <- FALSE
  while (t < iter.max) {
    b <- max.col(-D, ties.method = "first")
    fx <- ref_kkm_fix_empty(b, own(D, b), k)
    b <- fx$a
    reseeded <- reseeded + fx$count
    t <- t + 1
    if (all(a == b)) {
      trace <- c(trace, trace[t])
      converged <- TRUE
      break
    }
    a <- b
    D <- centre_dist(a)
    dist <- own(D, a)
    trace <- c(trace, sum(dist))
  }
  if (!is.null(row_dist)) {
    hw <- ref_kkm_hartigan(a, k, iter.max, row_dist,
                           function(a) sum(own(centre_dist(a), a)))
    a <- hw$a
    trace <- c(trace, hw$trace)
    dist <- own(centre_dist(a), a)
  }
  size <- tabulate(a, k)
  list(cluster = a, size = size, withinss = vapply(seq_len(k), function(c) sum(dist[a == c]), 0),
       distance = dist, trace = trace, iter = t, converged = converged, reseeded = reseeded)
}

ref_kkm_fit <- function(n, k, nstart, iter.max, point_dist, centre_dist, init = NULL,
                        row_dist = NULL, parallel = FALSE) {
  best <- NULL
  objectives <- numeric(nstart)
  for (r in seq_len(nstart)) {
    a <- if (!is.null(init)) init
         else if (parallel) ref_kkm_seed_parallel(n, k, point_dist)
         else c(ref_kkm_seed(n, k, point_dist))
    run <- ref_kkm_run(a, k, iter.max, centre_dist, row_dist)
    objectives[r] <- run$trace[length(run$trace)]
    if (is.null(best) || objectives[r] < best$trace[length(best$trace)]) best <- run
  }
  best$start_objectives <- objectives
  best
}

# exact kernel k-means on a Gram matrix K
ref_kkm_exact <- function(K, k, nstart = 1, iter.max = 100, init = NULL, hartigan = TRUE,
                          parallel = FALSE) {
  n <- nrow(K)
  dK <- diag(K)
  point_dist <- function(s) pmax(0, dK - 2 * K[, s] + K[s, s])
  centre_dist <- function(a) {
    D <- matrix(Inf, n, k)
    for (c in seq_len(k)) {
      members <- a == c
      m <- sum(members)
      if (m == 0) next
      S <- rowSums(K[, members, drop = FALSE])
      D[, c] <- dK - 2 * S / m + sum(K[members, members]) / m^2
    }
    D
  }
  row_dist <- function(i, a) {
    vapply(seq_len(k), function(c) {
      members <- a == c
      m <- sum(members)
      dK[i] - 2 * sum(K[i, members]) / m + sum(K[members, members]) / m^2
    }, 0)
  }
  ref_kkm_fit(n, k, nstart, iter.max, point_dist, centre_dist, init,
              if (hartigan) row_dist, parallel)
}

# Lloyd's k-means (then Hartigan-Wong if hartigan) on the rows of Z
ref_kkm_lloyd <- function(Z, k, nstart = 1, iter.max = 100, init = NULL, hartigan = FALSE,
                          parallel = FALSE) {
  n <- nrow(Z)
  point_dist <- function(s) colSums((t(Z) - Z[s, ])^2)
  centre_dist <- function(a) {
    D <- matrix(Inf, n, k)
    for (c in seq_len(k)) {
      members <- a == c
      if (!any(members)) next
      centre <- colMeans(Z[members, , drop = FALSE])
      D[, c] <- colSums((t(Z) - centre)^2)
    }
    D
  }
  row_dist <- function(i, a) {
    vapply(seq_len(k), function(c) sum((Z[i, ] - colMeans(Z[a == c, , drop = FALSE]))^2), 0)
  }
  ref_kkm_fit(n, k, nstart, iter.max, point_dist, centre_dist, init,
              if (hartigan) row_dist, parallel)
}

expect_same_fit <- function(fit, ref, tol = 1e-10) {
  expect_equal(unname(fit$cluster), ref$cluster)
  expect_equal(fit$size, ref$size)
  expect_equal(fit$iter, ref$iter)
  expect_equal(fit$converged, ref$converged)
  expect_equal(fit$reseeded, ref$reseeded)
  scale <- max(1, ref$trace[1])
  expect_equal(fit$withinss, ref$withinss, tolerance = tol * scale)
  expect_equal(fit$trace, ref$trace, tolerance = tol * scale)
  expect_equal(fit$distance, ref$distance, tolerance = tol * scale)
  if (!is.null(ref$start_objectives)) {
    expect_equal(fit$start_objectives, ref$start_objectives, tolerance = tol * scale)
  }
}

two_rings <- function(n, sd = 0.1) {
  angle <- runif(2 * n, 0, 2 * pi)
  radius <- rep(c(1, 3), each = n) + rnorm(2 * n, sd = sd)
  list(x = cbind(a = radius * cos(angle), b = radius * sin(angle)),
       truth = rep(1:2, each = n))
}

lloyd_c <- function(Z, k, nstart = 1, iter.max = 100, init = NULL, nthreads = 1L,
                    hartigan = FALSE, parallel = FALSE) {
  .Call(C_kmeans_lloyd, Z, as.integer(k), NULL, if (!is.null(init)) as.integer(init), hartigan,
        as.integer(parallel),
        as.integer(nstart), as.integer(iter.max), as.integer(nthreads))
}

# ---- the C code against the reference ----------------------------------------

test_that("exact kernel k-means matches the plain-R reference, seeding included", {
  set.seed(30)
  # sizes straddling the 256-row blocks of the C code
  for (case in list(c(n = 12, d = 2, k = 3, nstart = 1), c(n = 40, d = 3, k = 4, nstart = 3),
                    c(n = 300, d = 2, k = 5, nstart = 2))) {
    x <- matrix(rnorm(case[["n"]] * case[["d"]]), case[["n"]])
    for (kernel in list(gaussian_kernel(1), laplace_kernel(2), polynomial_kernel(2),
                        min_kernel())) {
      xx <- if (kernel$name == "min") abs(x) else x
      fit <- kernel_kmeans(xx, case[["k"]], kernel, nstart = case[["nstart"]], seed = 7,
                           nthreads = 1)
      set.seed(7)
      ref <- ref_kkm_exact(kernel_matrix(kernel, xx), case[["k"]], nstart = case[["nstart"]])
      expect_same_fit(fit, ref)
      expect_equal(fit$tot.withinss, sum(ref$withinss), tolerance = 1e-10 * ref$trace[1])
      K <- kernel_matrix(kernel, xx)
      expect_equal(fit$totss, sum(diag(K)) - sum(K) / nrow(K), tolerance = 1e-10 * sum(diag(K)))
    }
  }
})

test_that("Lloyd's k-means in C matches the plain-R reference", {
  set.seed(31)
  for (case in list(c(n = 1, D = 3, k = 1), c(n = 15, D = 1, k = 3), c(n = 50, D = 7, k = 5),
                    c(n = 600, D = 20, k = 6))) {
    Z <- matrix(rnorm(case[["n"]] * case[["D"]]), case[["n"]])
    set.seed(8)
    fit <- lloyd_c(Z, case[["k"]], nstart = 2)
    set.seed(8)
    ref <- ref_kkm_lloyd(Z, case[["k"]], nstart = 2)
    expect_same_fit(fit, ref)
    expect_equal(fit$centers, rowsum(Z, ref$cluster) / ref$size, tolerance = 1e-12,
                 ignore_attr = TRUE)
    expect_equal(fit$totss, sum(scale(Z, scale = FALSE)^2), tolerance = 1e-12)
  }
})

test_that("k-means|| seeding matches the plain-R reference, on K and on features", {
  set.seed(36)
  for (case in list(c(n = 40, k = 3), c(n = 700, k = 6), c(n = 9, k = 4))) {
    x <- matrix(rnorm(case[["n"]] * 2), case[["n"]])
    kern <- gaussian_kernel(1)
    fit <- kernel_kmeans(x, case[["k"]], kern, nstart = 2, seed = 3, seeding = "kmeans||",
                         nthreads = 1)
    expect_equal(fit$seeding, "kmeans||")
    set.seed(3)
    ref <- ref_kkm_exact(kernel_matrix(kern, x), case[["k"]], nstart = 2, parallel = TRUE)
    expect_same_fit(fit, ref)
    Z <- matrix(rnorm(case[["n"]] * 5), case[["n"]])
    set.seed(4)
    fz <- lloyd_c(Z, case[["k"]], nstart = 2, parallel = TRUE, hartigan = TRUE)
    set.seed(4)
    rz <- ref_kkm_lloyd(Z, case[["k"]], nstart = 2, hartigan = TRUE, parallel = TRUE)
    expect_same_fit(fz, rz)
    set.seed(4)
    fz1 <- lloyd_c(Z, case[["k"]], nstart = 2, parallel = TRUE, hartigan = TRUE, nthreads = 1L)
    set.seed(4)
    fz2 <- lloyd_c(Z, case[["k"]], nstart = 2, parallel = TRUE, hartigan = TRUE, nthreads = 2L)
    expect_identical(fz1, fz2)
  }
  # "auto" is k-means++ below 1e5 rows
  expect_equal(kernel_kmeans(x, 2, kern, seed = 1)$seeding, "kmeans++")
})

test_that("Lloyd's k-means agrees with stats::kmeans from the same start", {
  set.seed(32)
  Z <- rbind(matrix(rnorm(200, 0), 100), matrix(rnorm(200, 2), 100), matrix(rnorm(200, 4), 100))
  init <- sample(rep(1:3, 100))
  fit <- lloyd_c(Z, 3, init = init)
  start <- rowsum(Z, init) / tabulate(init)
  ref <- stats::kmeans(Z, start, iter.max = 100, algorithm = "Lloyd")
  expect_equal(fit$cluster, unname(ref$cluster))
  expect_equal(sum(fit$withinss), ref$tot.withinss, tolerance = 1e-10)
  expect_equal(fit$centers, ref$centers, tolerance = 1e-12, ignore_attr = TRUE)
})

test_that("exact kernel k-means with the linear kernel is Lloyd's k-means", {
  set.seed(33)
  Z <- matrix(rnorm(240), 80, 3)
  fit <- kernel_kmeans(Z, 4, polynomial_kernel(degree = 1, offset = 0), nstart = 3, seed = 9)
  set.seed(9)
  ll <- lloyd_c(Z, 4, nstart = 3, hartigan = TRUE)
  expect_equal(unname(fit$cluster), ll$cluster)
  expect_equal(fit$withinss, ll$withinss, tolerance = 1e-10)
})

test_that("method = \"rff\" is Lloyd's k-means on the fit's own random features", {
  set.seed(34)
  x <- matrix(rnorm(300), 100, 3)
  fit <- kernel_kmeans(x, 3, laplace_kernel(2), method = "rff", D = 40, nstart = 2, seed = 10)
  expect_s3_class(fit$map, "random_features")
  expect_equal(fit$map$n_features, 40L)
  set.seed(10)
  map <- random_features(x, laplace_kernel(2), D = 40, type = "phase")
  expect_identical(map$omega, fit$map$omega)
  ref <- ref_kkm_lloyd(predict(map, x), 3, nstart = 2, hartigan = TRUE)
  expect_same_fit(fit, ref)
  expect_equal(dim(fit$centers), c(3L, 40L))
})

test_that("an initial assignment is used as given", {
  set.seed(35)
  x <- matrix(rnorm(60), 30, 2)
  init <- rep(1:3, 10)
  fit <- kernel_kmeans(x, init, gaussian_kernel(1))
  ref <- ref_kkm_exact(kernel_matrix(gaussian_kernel(1), x), 3, init = init)
  expect_same_fit(fit, ref)
  fit_f <- kernel_kmeans(x, factor(letters[init]), gaussian_kernel(1))
  expect_equal(fit_f$cluster, fit$cluster)
  # one iteration from the assignment: the first trace value is its objective
  one <- suppressWarnings(kernel_kmeans(x, init, gaussian_kernel(1), max_iter = 1))
  K <- kernel_matrix(gaussian_kernel(1), x)
  obj <- sum(vapply(1:3, function(c) {
    i <- init == c
    sum(diag(K)[i]) - sum(K[i, i]) / sum(i)
  }, 0))
  expect_equal(one$trace[1], obj, tolerance = 1e-12)
})

# ---- the maths ----------------------------------------------------------------

test_that("the best of several starts separates two noisy rings", {
  set.seed(36)
  r <- two_rings(150)
  fit <- kernel_kmeans(r$x, 2, gaussian_kernel(1), nstart = 5, seed = 1)
  expect_true(fit$converged)
  expect_equal(max(table(r$truth, fit$cluster)[1, ]), 150L)
  expect_equal(max(table(r$truth, fit$cluster)[2, ]), 150L)
  expect_equal(sort(fit$size), c(150L, 150L))
  # ordinary k-means, the same objective with the linear kernel, cannot
  km <- stats::kmeans(r$x, 2, nstart = 5)
  expect_lt(max(mean(km$cluster == r$truth), mean(km$cluster != r$truth)), 0.9)
  # random features with enough of them do the same
  fit2 <- kernel_kmeans(r$x, 2, gaussian_kernel(1), method = "rff", D = 500, nstart = 5,
                        seed = 1)
  expect_equal(max(table(r$truth, fit2$cluster)[1, ]), 150L)
  expect_equal(max(table(r$truth, fit2$cluster)[2, ]), 150L)
  # new points on either ring go to that ring's cluster
  new <- rbind(c(0, 1), c(-1, 0), c(3, 0), c(0, -3))
  inner <- fit$cluster[1]
  outer <- fit$cluster[151]
  expect_equal(unname(predict(fit, new)), c(inner, inner, outer, outer))
  expect_equal(unname(predict(fit2, new)),
               unname(c(fit2$cluster[1], fit2$cluster[1], fit2$cluster[151], fit2$cluster[151])))
})

test_that("the objective never increases across iterations", {
  set.seed(37)
  x <- rbind(matrix(rnorm(300, sd = 1.5), 150), two_rings(75)$x)
  for (seed in 1:5) {
    for (method in c("exact", "rff")) {
      fit <- kernel_kmeans(x, 6, gaussian_kernel(0.7), method = method, D = 100,
                           seed = seed, max_iter = 200)
      expect_gt(length(fit$trace), 2)
      expect_true(all(diff(fit$trace) <= 1e-12 * fit$trace[1]), label = paste(method, seed))
      expect_equal(fit$trace[length(fit$trace)], fit$tot.withinss, tolerance = 1e-12)
    }
  }
})

test_that("withinss, totss and the distances agree with the Gram matrix", {
  set.seed(38)
  x <- matrix(rnorm(120), 60)
  kernel <- cauchy_kernel(1.5)
  fit <- kernel_kmeans(x, 3, kernel, nstart = 2, seed = 3)
  K <- kernel_matrix(kernel, x)
  for (c in 1:3) {
    i <- fit$cluster == c
    Kc <- K[i, i, drop = FALSE]
    expect_equal(fit$withinss[c], sum(diag(Kc)) - sum(Kc) / sum(i), tolerance = 1e-10)
    expect_equal(fit$centre_sqnorm[c], mean(Kc), tolerance = 1e-12)
  }
  expect_equal(fit$totss, sum(diag(K)) - mean(K) * nrow(K), tolerance = 1e-10)
  expect_equal(fit$betweenss, fit$totss - fit$tot.withinss, tolerance = 1e-10)
  # predicting the training data: the same clusters, the same own distances
  D <- predict(fit, x, type = "distance")
  expect_equal(dim(D), c(60L, 3L))
  expect_equal(unname(predict(fit, x)), unname(fit$cluster))
  expect_equal(D[cbind(1:60, fit$cluster)], unname(fitted(fit, "distances")), tolerance = 1e-10)
})

test_that("predict for method = \"rff\" uses the stored map and centroids", {
  set.seed(39)
  x <- matrix(rnorm(200), 100)
  fit <- kernel_kmeans(x, 3, gaussian_kernel(1), method = "rff", D = 64, seed = 4)
  y <- matrix(rnorm(20), 10)
  Z <- predict(fit$map, y)
  D <- t(apply(Z, 1, function(z) colSums((t(fit$centers) - z)^2)))
  expect_equal(predict(fit, y, type = "distance"), D, tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(unname(predict(fit, y)), max.col(-D, "first"))
  expect_equal(unname(predict(fit, x)), unname(fit$cluster))
})

test_that("predict for the exact method works in row blocks", {
  # more new points than one block (2^20 / n rows) to exercise the blocking
  set.seed(40)
  x <- matrix(rnorm(40), 20, 2)
  fit <- kernel_kmeans(x, 3, gaussian_kernel(1), seed = 5)
  y <- matrix(rnorm(2 * 60000), 60000, 2)
  D <- predict(fit, y, type = "distance")
  idx <- c(1:3, 52428:52430, 59998:60000)
  Ky <- kernel_matrix(gaussian_kernel(1), y[idx, ], x)
  ref <- sapply(1:3, function(c) {
    i <- fit$cluster == c
    1 - 2 * rowMeans(Ky[, i, drop = FALSE]) + fit$centre_sqnorm[c]
  })
  expect_equal(D[idx, ], ref, tolerance = 1e-10, ignore_attr = TRUE)
  # kernels with k(y, y) != 1
  xp <- abs(x)
  fit <- kernel_kmeans(xp, 2, min_kernel(), seed = 5)
  yp <- abs(y[1:5, ])
  Ky <- kernel_matrix(min_kernel(), yp, xp)
  kyy <- diag(kernel_matrix(min_kernel(), yp))
  ref <- sapply(1:2, function(c) {
    i <- fit$cluster == c
    kyy - 2 * rowMeans(Ky[, i, drop = FALSE]) + fit$centre_sqnorm[c]
  })
  expect_equal(predict(fit, yp, type = "distance"), ref, tolerance = 1e-10, ignore_attr = TRUE)
})

# ---- edge cases ---------------------------------------------------------------

test_that("k = 1, k = n and n = 1 work", {
  set.seed(41)
  x <- matrix(rnorm(20), 10)
  one <- kernel_kmeans(x, 1, gaussian_kernel(1))
  expect_equal(unname(one$cluster), rep(1L, 10))
  expect_equal(one$tot.withinss, one$totss, tolerance = 1e-12)
  expect_equal(one$betweenss, 0, tolerance = 1e-12)
  expect_true(one$converged)
  all_own <- kernel_kmeans(x, 10, gaussian_kernel(1), seed = 1)
  expect_equal(sort(unname(all_own$cluster)), 1:10)
  expect_equal(all_own$size, rep(1L, 10))
  expect_equal(all_own$tot.withinss, 0)
  rff_own <- kernel_kmeans(x, 10, gaussian_kernel(1), method = "rff", D = 50, seed = 1)
  expect_equal(rff_own$size, rep(1L, 10))
  single <- kernel_kmeans(matrix(c(1, 2), 1), 1, gaussian_kernel(1))
  expect_equal(unname(single$cluster), 1L)
  expect_equal(single$withinss, 0)
  expect_equal(single$totss, 0)
  expect_equal(unname(predict(single, rbind(c(0, 0), c(5, 5)))), c(1L, 1L))
  single_rff <- kernel_kmeans(matrix(c(1, 2), 1), 1, gaussian_kernel(1), method = "rff", D = 5)
  expect_equal(unname(single_rff$cluster), 1L)
})

test_that("duplicated points share a cluster, and k = n with duplicates stays non-empty", {
  set.seed(42)
  base <- matrix(rnorm(12), 6)
  x <- base[rep(1:6, each = 3), ]
  for (method in c("exact", "rff")) {
    fit <- kernel_kmeans(x, 3, gaussian_kernel(1), method = method, D = 50, nstart = 3,
                         seed = 2)
    groups <- split(unname(fit$cluster), rep(1:6, each = 3))
    expect_true(all(vapply(groups, function(v) length(unique(v)) == 1L, TRUE)))
    # 18 points but only 6 distinct: 18 clusters force re-seeding
    full <- kernel_kmeans(x, 18, gaussian_kernel(1), method = method, D = 50, seed = 2)
    expect_equal(full$size, rep(1L, 18))
    expect_gt(full$reseeded, 0)
    expect_equal(full$tot.withinss, 0, tolerance = 1e-12)
    expect_false(anyNA(full$withinss))
  }
  # identical points only
  same <- kernel_kmeans(matrix(1, 5, 2), 2, gaussian_kernel(1))
  expect_equal(sort(same$size), c(1L, 4L))
  expect_equal(same$tot.withinss, 0)
  set.seed(3)
  ref <- ref_kkm_exact(kernel_matrix(gaussian_kernel(1), x), 18)
  expect_same_fit(kernel_kmeans(x, 18, gaussian_kernel(1), nstart = 1, seed = 3), ref)
})

test_that("an empty cluster in the initial assignment is re-seeded, never divided by", {
  set.seed(43)
  x <- rbind(matrix(rnorm(40, 0, 0.3), 20), matrix(rnorm(40, 3, 0.3), 20))
  init <- rep(c(1L, 3L), 20)   # cluster 2 empty
  for (method in c("exact", "rff")) {
    fit <- kernel_kmeans(x, init, gaussian_kernel(1), method = method, D = 100, seed = 1)
    expect_equal(fit$k, 3L)
    expect_true(all(fit$size > 0))
    expect_gte(fit$reseeded, 1)
    expect_false(anyNA(c(fit$withinss, fit$trace, fit$distance)))
    expect_true(all(diff(fit$trace) <= 1e-12 * fit$trace[1]))
  }
  ref <- ref_kkm_exact(kernel_matrix(gaussian_kernel(1), x), 3, init = init)
  expect_same_fit(kernel_kmeans(x, init, gaussian_kernel(1)), ref)
  # a factor with unused levels: two empty clusters
  f <- factor(rep("a", 40), levels = c("a", "b", "c"))
  fit <- kernel_kmeans(x, f, gaussian_kernel(1))
  expect_true(all(fit$size > 0))
  expect_gte(fit$reseeded, 2)
  ref <- ref_kkm_exact(kernel_matrix(gaussian_kernel(1), x), 3, init = rep(1L, 40))
  expect_same_fit(fit, ref)
})

test_that("results do not depend on the number of threads", {
  set.seed(44)
  x <- matrix(rnorm(1200), 600)
  for (method in c("exact", "rff")) {
    a <- kernel_kmeans(x, 5, gaussian_kernel(1), method = method, D = 80, seed = 6,
                       nthreads = 1)
    b <- kernel_kmeans(x, 5, gaussian_kernel(1), method = method, D = 80, seed = 6,
                       nthreads = 2)
    expect_identical(drop_call(a), drop_call(b))
    y <- matrix(rnorm(400), 200)
    expect_identical(predict(a, y, type = "distance", nthreads = 1),
                     predict(a, y, type = "distance", nthreads = 2))
  }
})

test_that("seed reproduces a fit and leaves the user's stream alone", {
  x <- matrix(rnorm(100), 50)
  set.seed(1)
  before <- runif(1)
  set.seed(1)
  a <- kernel_kmeans(x, 3, gaussian_kernel(1), method = "rff", D = 30, nstart = 2, seed = 99)
  expect_equal(runif(1), before)
  b <- kernel_kmeans(x, 3, gaussian_kernel(1), method = "rff", D = 30, nstart = 2, seed = 99)
  expect_identical(a, b)
  set.seed(5)
  c1 <- kernel_kmeans(x, 3, gaussian_kernel(1))
  set.seed(5)
  c2 <- kernel_kmeans(x, 3, gaussian_kernel(1))
  expect_identical(c1, c2)
})

test_that("not converging within max_iter warns and says so", {
  set.seed(45)
  x <- matrix(rnorm(400), 200)
  expect_warning(fit <- kernel_kmeans(x, 8, gaussian_kernel(0.5), max_iter = 1, seed = 1,
                                      algorithm = "Lloyd"),
                 "did not converge in 1 iteration")
  expect_false(fit$converged)
  expect_equal(fit$iter, 1L)
  expect_length(fit$trace, 2L)
})

# ---- interfaces ---------------------------------------------------------------

test_that("the formula method one-hot codes factors and predicts on data frames", {
  set.seed(46)
  df <- data.frame(a = c(rnorm(30), rnorm(30, 5)), g = factor(rep(c("u", "v"), 30)))
  fit <- kernel_kmeans(~ a + g, data = df, centers = 2, kernel = gaussian_kernel(2),
                       nstart = 2, seed = 1)
  X <- cbind(a = df$a, gu = as.numeric(df$g == "u"), gv = as.numeric(df$g == "v"))
  ref <- kernel_kmeans(X, 2, gaussian_kernel(2), nstart = 2, seed = 1)
  expect_equal(unname(fit$cluster), unname(ref$cluster))
  expect_equal(fit$withinss, ref$withinss)
  expect_equal(unname(predict(fit, df[c(1, 40), ])), unname(fit$cluster[c(1, 40)]))
  fit_rff <- kernel_kmeans(~ a + g, data = df, centers = 2, kernel = gaussian_kernel(2),
                           method = "rff", D = 50, seed = 1)
  expect_equal(unname(predict(fit_rff, df)), unname(fit_rff$cluster))
  expect_error(predict(fit, data.frame(a = 1)), "'newdata' does not fit")
  expect_error(kernel_kmeans(y ~ a, data = transform(df, y = 1), centers = 2),
               "one-sided formula")
})

test_that("data frames and column names are handled like random_features", {
  set.seed(47)
  df <- data.frame(p = rnorm(40), q = rnorm(40))
  fit <- kernel_kmeans(df, 2, gaussian_kernel(1), seed = 1)
  swapped <- df[, c("q", "p")]
  expect_equal(predict(fit, swapped), predict(fit, df))
  expect_error(predict(fit, data.frame(p = 1, r = 2)), "lacks column\\(s\\) the model was fitted on: q")
  expect_error(predict(fit, matrix(1, 2, 3)), "'newdata' has 3 column\\(s\\) but the model was fitted on 2")
  expect_error(predict(fit, data.frame(p = NA, q = 1)), "'newdata' contains NA")
  expect_equal(predict(fit), fit$cluster)
  expect_error(predict(fit, type = "distance"), "'newdata' is required")
  expect_error(predict(fit, df, foo = 1), "unused argument")
})

test_that("fitted objects print, summarise and survive saveRDS", {
  set.seed(48)
  x <- matrix(rnorm(100), 50)
  fit <- kernel_kmeans(x, 3, gaussian_kernel(1), nstart = 3, seed = 1)
  expect_output(print(fit), "Kernel k-means \\(exact, on the Gram matrix\\): 3 clusters")
  expect_output(print(fit), "best of 3 starts")
  s <- summary(fit)
  expect_s3_class(s, "summary.kernel_kmeans")
  expect_equal(s$clusters$size, fit$size)
  expect_output(print(s), "Objective by iteration")
  expect_identical(fitted(fit), fit$cluster)
  expect_length(fitted(fit, "distances"), 50L)
  fit2 <- kernel_kmeans(x, 2, gaussian_kernel(1), method = "rff", D = 20, seed = 1)
  expect_output(print(fit2), "on 20 random Fourier features")
  for (f in list(fit, fit2)) {
    path <- tempfile(fileext = ".rds")
    saveRDS(f, path)
    back <- readRDS(path)
    unlink(path)
    expect_identical(predict(back, x[1:5, ]), predict(f, x[1:5, ]))
  }
})

# ---- bad input -----------------------------------------------------------------

test_that("bad input gets clear errors naming the argument", {
  x <- matrix(rnorm(20), 10)
  k <- gaussian_kernel(1)
  bad <- x
  bad[3, 2] <- NA
  expect_error(kernel_kmeans(bad, 2, k), "'x' contains NA, NaN or infinite values \\(the first at row 3, column 2\\)")
  expect_error(kernel_kmeans(x, 11, k), "'centers' asks for 11 clusters but 'x' has only 10 row")
  expect_error(kernel_kmeans(x, 0, k), "'centers' must be at least 1")
  expect_error(kernel_kmeans(x, 2.5, k), "'centers' must be a whole number")
  expect_error(kernel_kmeans(x, NA, k), "'centers'")
  expect_error(kernel_kmeans(x, kernel = k), "'centers' is required")
  expect_error(kernel_kmeans(x, 1:3, k), "'centers' .* one value per row of 'x' \\(10\\); it has length 3")
  expect_error(kernel_kmeans(x, c(0:8, 1), k), "'centers' as an initial assignment must hold whole numbers 1..k")
  expect_error(kernel_kmeans(x, c(1:9, 11), k), "'centers' assigns points to cluster 11 but 'x' has only 10")
  expect_error(kernel_kmeans(x, matrix(0, 2, 2), k), "'centers' .* not supported")
  expect_error(kernel_kmeans(x, 2, k, max_iter = 0), "'max_iter' must be at least 1")
  expect_error(kernel_kmeans(x, 2, k, nstart = 0), "'nstart' must be at least 1")
  expect_error(kernel_kmeans(x, 2, k, method = "lloyd"), "'method' must be one of \"exact\", \"rff\", \"nystrom\" \\(got \"lloyd\"\\)")
  expect_error(kernel_kmeans(x, 2, k, method = "rff", D = 0), "'D' must be at least 1")
  expect_error(kernel_kmeans(x, 2, "gaussian"), "'kernel' must be a kernel object")
  expect_error(kernel_kmeans(x, 2, k, foo = 1), "unused argument")
  expect_error(kernel_kmeans(-abs(x), 2, min_kernel()), "'x' must be non-negative for the min kernel")
  no_map <- structure(list(name = "nomap", shift_invariant = FALSE),
                      class = c("nomap_kernel", "bochner_kernel"))
  expect_error(kernel_kmeans(x, 2, no_map, method = "rff"),
               "'kernel' must be shift-invariant for method = \"rff\" .* use method = \"exact\"")
  expect_error(kernel_kmeans(matrix(0, 0, 2), 1, k), "'x' has no rows")
  expect_error(kernel_kmeans(data.frame(a = letters[1:3]), 1, k), "non-numeric columns")
  expect_warning(kernel_kmeans(x, rep(1:2, 5), k, nstart = 3), "'nstart' is ignored")
  fit <- kernel_kmeans(abs(x), 2, min_kernel())
  expect_error(predict(fit, -abs(x)), "'newdata' must be non-negative")
  # partial matching of method still works
  expect_equal(kernel_kmeans(x, 2, k, method = "r", D = 10, seed = 1)$method, "rff")
})

test_that("a Gram matrix that would not fit is refused, naming method = \"rff\"", {
  x <- matrix(rnorm(40), 20)
  old <- options(bochner.max_gram_bytes = 1000)
  on.exit(options(old))
  expect_error(kernel_kmeans(x, 2, gaussian_kernel(1)),
               paste("'x' is too large for method = \"exact\": the 20 x 20 Gram matrix and the",
                     "20 x 2 cluster sums would need 3.4 KB .* use method = \"rff\""))
  expect_s3_class(kernel_kmeans(x, 2, gaussian_kernel(1), method = "rff", D = 10),
                  "kernel_kmeans")
  options(bochner.max_gram_bytes = -1)
  expect_error(kernel_kmeans(x, 2, gaussian_kernel(1)), "options\\(bochner.max_gram_bytes\\)")
})

test_that("the C entry points check their arguments", {
  x <- matrix(rnorm(20), 10)
  expect_error(.Call(C_kmeans_gram, 1:3, 1L, 1, 2L, NULL, NULL, FALSE, 0L, 1L, 10L, 1L), "'x' must be a double matrix")
  expect_error(.Call(C_kmeans_gram, x, 1L, 1, 11L, NULL, NULL, FALSE, 0L, 1L, 10L, 1L), "'k' must be at most")
  expect_error(.Call(C_kmeans_gram, x, 1L, 1, 2L, NULL, rep(3L, 10), FALSE, 0L, 1L, 10L, 1L), "values in 1..2")
  expect_error(.Call(C_kmeans_gram, x, 1L, 1, 2L, NULL, 1:2, FALSE, 0L, 1L, 10L, 1L), "one value per point")
  expect_error(.Call(C_kmeans_gram, x, 99L, 1, 2L, NULL, NULL, FALSE, 0L, 1L, 10L, 1L), "unknown kernel")
  expect_error(.Call(C_kmeans_lloyd, x, 0L, NULL, NULL, FALSE, 0L, 1L, 10L, 1L), "'k' must be a whole number")
  expect_error(.Call(C_kmeans_lloyd, x, 2L, NULL, NULL, FALSE, 0L, 1L, 0L, 1L), "'iter.max'")
  expect_error(.Call(C_kmeans_lloyd, x, 2L, NULL, NULL, NA, 0L, 1L, 10L, 1L), "'hartigan' must be TRUE or FALSE")
  expect_error(.Call(C_kmeans_gram, x, 1L, 1, 2L, NULL, NULL, 1L, 0L, 1L, 10L, 1L), "'hartigan' must be TRUE or FALSE")
  expect_error(.Call(C_kmeans_lloyd, x, 2L, NULL, NULL, TRUE, 2L, 1L, 10L, 1L), "'seeding' must be")
  expect_error(.Call(C_kmeans_centre_distances, x, matrix(0, 2, 3), 1L), "same number of columns")
})

test_that("kernel k-means++ without a Gram matrix (Nystrom landmarks) is the fit's seeding", {
  set.seed(61)
  x <- matrix(rnorm(120 * 3), 120)
  for (kern in list(gaussian_kernel(1), laplace_kernel(2))) {
    K <- kernel_matrix(kern, x)
    kd <- diag(K)
    for (m in c(1L, 7L)) {
      set.seed(62)
      got <- .Call(bochner:::C_kmeans_pp_kernel, x, bochner:::kernel_code(kern),
                   bochner:::kernel_parameters(kern), kd, m, 1L)
      set.seed(62)
      ref <- ref_kkm_seed(120, m, function(s) pmax(kd - 2 * K[, s] + kd[s], 0))
      expect_identical(got, as.integer(attr(ref, "chosen")))
    }
  }
  expect_error(.Call(bochner:::C_kmeans_pp_kernel, x, bochner:::kernel_code(gaussian_kernel(1)),
                     1, rep(1, 120), 121L, 1L), "'m'")
})

test_that("Hartigan-Wong passes visit only live clusters and end at a single-move optimum", {
  # five overlapping blobs: Lloyd stops with points that single moves improve
  set.seed(8)
  n <- 1500
  mu <- matrix(c(0, 0, 1.5, 0, 0, 1.5, 1.5, 1.5, 0.75, 0.75), 5, 2, byrow = TRUE)
  g <- sample(5, n, replace = TRUE)
  Z <- mu[g, ] + matrix(rnorm(2 * n, sd = 0.6), n, 2)
  set.seed(9)
  res <- .Call(bochner:::C_kmeans_lloyd, Z, 5L, NULL, NULL, TRUE, 0L, 1L, 100L, 1L)
  # the passes with moves (in the trace), then the last one without
  passes <- length(res$trace) - res$iter
  expect_gt(res$moves, 0L)
  expect_gte(passes, 3L)
  # the live sets: after the first pass (every point), only points whose
  # cluster or some other cluster changed within the last n steps are
  # examined; without them every pass examines every point (6253 of 7500
  # here when this test was written)
  expect_gt(res$hw_checks, n)
  expect_lt(res$hw_checks, 0.9 * n * passes)
  # the result: no single move of a point lowers the objective (plain R)
  a <- res$cluster
  sz <- tabulate(a, 5)
  C <- rowsum(Z, a) / sz
  d <- outer(rowSums(Z^2), rowSums(C^2), "+") - 2 * Z %*% t(C)
  own <- d[cbind(seq_len(n), a)] * sz[a] / (sz[a] - 1)
  add <- sweep(d, 2, sz / (sz + 1), "*")
  add[cbind(seq_len(n), a)] <- Inf
  expect_true(all(apply(add, 1, min) >= own * (1 - 1e-8) | sz[a] < 2))
})

test_that("Lloyd from a given start takes stats::kmeans's iterations to its partition", {
  # the iteration count depends on the start only: a regression in the
  # iterations (centre updates, ties, reseeding) shows here as a count
  set.seed(11)
  n <- 3000
  mu <- as.matrix(expand.grid(0:2, 0:2)) * 1.2
  Z <- mu[sample(9, n, replace = TRUE), ] + matrix(rnorm(2 * n, sd = 0.5), n, 2)
  for (s in 1:2) {
    set.seed(s)
    C0 <- Z[sample(n, 9), ]
    a0 <- max.col(-(outer(rowSums(Z^2), rowSums(C0^2), "+") - 2 * Z %*% t(C0)), "first")
    ours <- .Call(bochner:::C_kmeans_lloyd, Z, 9L, NULL, a0, FALSE, 0L, 1L, 500L, 1L)
    st <- kmeans(Z, rowsum(Z, a0) / tabulate(a0, 9), iter.max = 500, algorithm = "Lloyd")
    expect_true(ours$converged)
    expect_equal(ours$iter, st$iter)
    expect_equal(tail(ours$trace, 1), st$tot.withinss, tolerance = 1e-10)
    tab <- table(ours$cluster, st$cluster)
    expect_true(all(rowSums(tab > 0) == 1))
  }
})
