# Kernel k-means: the clustering bandwidth, Hartigan-Wong moves, the Nystrom
# route and plot(), against plain-R computations.

ring_data <- function(m, sd = 0.15) {
  angle <- runif(2 * m, 0, 2 * pi)
  radius <- rep(c(1, 3), each = m) + rnorm(2 * m, sd = sd)
  list(x = cbind(radius * cos(angle), radius * sin(angle)), truth = rep(1:2, each = m))
}

# the rule of ?kernel_kmeans, written out
ref_bandwidth <- function(x) {
  n <- nrow(x)
  if (n > 1000) x <- x[unique(round(seq(1, n, length.out = 1000))), , drop = FALSE]
  m <- max(5L, round(0.1 * nrow(x)))
  D <- as.matrix(dist(x))
  signif(median(apply(D, 1, function(r) sort(r)[m + 1])), 4)   # sort(r)[1] is the point itself
}

# objective of an assignment on the Gram matrix
gram_objective <- function(K, cl) {
  sum(vapply(unique(cl), function(c) {
    i <- cl == c
    sum(diag(K)[i]) - sum(K[i, i]) / sum(i)
  }, 0))
}

test_that("without a kernel, sigma is the median distance to the (n/10)-th neighbour", {
  set.seed(50)
  for (n in c(60, 1500)) {
    x <- matrix(rnorm(2 * n), n)
    fit <- kernel_kmeans(x, 2, seed = 1)
    expect_equal(fit$kernel$name, "gaussian")
    expect_equal(fit$kernel$sigma, ref_bandwidth(x))
    expect_equal(fit$bandwidth$sigma, fit$kernel$sigma)
    expect_equal(fit$bandwidth$neighbour, max(5L, round(0.1 * min(n, 1000))))
  }
  expect_output(print(fit), "clustering default")
  expect_output(print(fit), "100-th nearest neighbour among 1000 rows")
  # an explicit kernel keeps its meaning
  med <- kernel_kmeans(x, 2, gaussian_kernel("median"), seed = 1)
  expect_null(med$bandwidth)
  expect_equal(med$kernel$sigma, bochner:::median_heuristic(x, "gaussian"))
  # the same kernel given explicitly gives the same fit
  same <- kernel_kmeans(x, 2, gaussian_kernel(fit$kernel$sigma), seed = 1)
  expect_identical(same$cluster, fit$cluster)
})

test_that("the default call separates two noisy rings", {
  for (seed in 1:5) {
    set.seed(seed)
    r <- ring_data(150)
    fit <- kernel_kmeans(r$x, 2, seed = seed)
    expect_equal(max(mean(fit$cluster == r$truth), mean(fit$cluster != r$truth)), 1,
                 label = paste("seed", seed))
  }
})

test_that("Hartigan-Wong ends where no single move lowers the objective", {
  set.seed(51)
  x <- matrix(rnorm(400), 200)
  kern <- gaussian_kernel(1)
  K <- kernel_matrix(kern, x)
  init <- sample(rep(1:5, 40))
  hw <- kernel_kmeans(x, init, kern)
  ll <- kernel_kmeans(x, init, kern, algorithm = "Lloyd")
  expect_equal(hw$algorithm, "Hartigan-Wong")
  expect_lte(hw$tot.withinss, ll$tot.withinss)
  expect_equal(hw$tot.withinss, gram_objective(K, hw$cluster), tolerance = 1e-10)
  expect_gt(hw$moves, 0)
  expect_equal(ll$moves, 0L)
  # every single move raises the objective (or leaves a cluster empty)
  base <- gram_objective(K, hw$cluster)
  for (i in seq(1, 200, by = 7)) for (c in setdiff(1:5, hw$cluster[i])) {
    cl <- hw$cluster
    if (sum(cl == cl[i]) < 2) next
    cl[i] <- c
    expect_gte(gram_objective(K, cl), base - 1e-9 * base)
  }
})

test_that("Nystrom kernel k-means is k-means on nystrom_features() with the same draws", {
  set.seed(52)
  r <- ring_data(100, sd = 0.1)
  kern <- gaussian_kernel(1)
  fit <- kernel_kmeans(r$x, 2, kern, method = "nystrom", m = 40, nstart = 3, seed = 4)
  expect_equal(fit$method, "nystrom")
  expect_s3_class(fit$map, "nystrom_features")
  expect_equal(fit$D, 40L)
  set.seed(4)
  map <- nystrom_features(r$x, kern, m = 40, landmarks = "uniform")
  expect_identical(map$index, fit$map$index)
  Z <- predict(map, r$x)
  ll <- .Call(bochner:::C_kmeans_lloyd, Z, 2L, NULL, NULL, TRUE, 0L, 3L, 100L, 1L)
  expect_equal(unname(fit$cluster), ll$cluster)
  expect_equal(fit$tot.withinss, sum(ll$withinss), tolerance = 1e-12)
  expect_identical(predict(fit, r$x), fit$cluster)
  expect_output(print(fit), "40 Nystr")
  # D beyond n: as many landmarks as points
  small <- kernel_kmeans(r$x[1:30, ], 2, kern, method = "nystrom", seed = 1)
  expect_equal(small$D, 30L)
})

test_that("plot() draws 2-d data as they are, else the feature-space components", {
  pdf(NULL)
  on.exit(grDevices::dev.off())
  set.seed(53)
  r <- ring_data(60)
  fit <- kernel_kmeans(r$x, 2, gaussian_kernel(1), seed = 1)
  xy <- plot(fit)
  expect_equal(xy, unname(r$x), ignore_attr = TRUE)
  expect_equal(attr(xy, "cluster"), unname(fit$cluster))
  # with the linear kernel, kernel PCA is PCA (up to sign)
  x <- as.matrix(iris[, 1:4])
  lin <- kernel_kmeans(x, 3, polynomial_kernel(degree = 1, offset = 0), seed = 1)
  pc <- plot(lin)
  ref <- prcomp(x)$x[, 1:2]
  expect_equal(abs(unname(pc[, 1:2])), abs(unname(ref)), tolerance = 1e-8, ignore_attr = TRUE)
  # a fit on features draws the data it is given, clustered by predict()
  rf <- kernel_kmeans(x, 3, gaussian_kernel(1), method = "rff", D = 50, seed = 1)
  pr <- plot(rf, x)
  expect_equal(attr(pr, "cluster"), unname(predict(rf, x)))
  expect_equal(abs(unname(pr[, 1:2])), abs(unname(prcomp(predict(rf$map, x))$x[, 1:2])),
               tolerance = 1e-8, ignore_attr = TRUE)
})

test_that("mini-batch k-means assigns every row to its nearest final centre", {
  set.seed(54)
  r <- ring_data(1500, sd = 0.1)
  kern <- gaussian_kernel(1)
  fit <- kernel_kmeans(r$x, 2, kern, method = "rff", D = 100, batch = 300, seed = 2)
  expect_equal(fit$batch, 300L)
  expect_equal(max(mean(fit$cluster == r$truth), mean(fit$cluster != r$truth)), 1)
  Z <- predict(fit$map, r$x)
  D2 <- sapply(1:2, function(c) colSums((t(Z) - fit$centers[c, ])^2))
  expect_equal(unname(fit$cluster), max.col(-D2, ties.method = "first"))
  expect_equal(fit$totss, sum(scale(Z, scale = FALSE)^2), tolerance = 1e-10)
  expect_equal(fit$tot.withinss, sum(D2[cbind(seq_len(nrow(Z)), fit$cluster)]), tolerance = 1e-10)
  expect_equal(fit$trace[length(fit$trace)], fit$tot.withinss)
  expect_identical(predict(fit, r$x), fit$cluster)
  again <- kernel_kmeans(r$x, 2, kern, method = "rff", D = 100, batch = 300, seed = 2,
                         nthreads = 2)
  expect_identical(again$cluster, fit$cluster)
  ny <- kernel_kmeans(r$x, 2, kern, method = "nystrom", m = 50, batch = 300, seed = 2)
  expect_equal(max(mean(ny$cluster == r$truth), mean(ny$cluster != r$truth)), 1)
  expect_error(kernel_kmeans(r$x, 2, kern, batch = 100), "'batch' is for method")
  expect_error(kernel_kmeans(r$x, 2, kern, method = "rff", batch = 1), "'batch' must be")
})

test_that("integer case weights give the fit of the repeated rows", {
  set.seed(55)
  x <- matrix(rnorm(120), 60)
  w <- sample(1:3, 60, replace = TRUE)
  rep_x <- x[rep(seq_len(60), w), ]
  init <- rep(1:3, 20)
  kern <- gaussian_kernel(1)
  for (method in c("exact", "rff")) {
    map <- if (method == "rff") random_features(x, kern, D = 30, type = "phase", seed = 1)
    fw <- kernel_kmeans(x, init, kern, method = method, map = map, weights = w,
                        algorithm = "Lloyd")
    fr <- kernel_kmeans(rep_x, rep(init, w), kern, method = method, map = map,
                        algorithm = "Lloyd")
    expect_equal(unname(fw$cluster), unname(fr$cluster[cumsum(w)]), label = method)
    expect_equal(fw$withinss, fr$withinss, tolerance = 1e-10)
    expect_equal(fw$totss, fr$totss, tolerance = 1e-10)
    expect_equal(fw$trace, fr$trace, tolerance = 1e-10)
    # predict uses the weighted centres
    y <- matrix(rnorm(20), 10)
    expect_equal(predict(fw, y, type = "distance"), predict(fr, y, type = "distance"),
                 tolerance = 1e-10)
  }
})

test_that("weighted Hartigan-Wong ends where no single move lowers the weighted objective", {
  set.seed(56)
  x <- matrix(rnorm(300), 150)
  w <- runif(150, 0.2, 3)
  kern <- gaussian_kernel(1)
  K <- kernel_matrix(kern, x)
  wobj <- function(cl) sum(vapply(unique(cl), function(c) {
    i <- cl == c
    sum(w[i] * diag(K)[i]) - sum(outer(w[i], w[i]) * K[i, i]) / sum(w[i])
  }, 0))
  for (seeding in c("kmeans++", "kmeans||")) {
    fit <- kernel_kmeans(x, 4, kern, weights = w, seed = 3, seeding = seeding)
    base <- wobj(fit$cluster)
    expect_equal(fit$tot.withinss, base, tolerance = 1e-10)
    expect_equal(fit$totss, sum(w * diag(K)) - sum(outer(w, w) * K) / sum(w), tolerance = 1e-10)
    for (i in seq(1, 150, by = 11)) for (c in setdiff(1:4, fit$cluster[i])) {
      cl <- fit$cluster
      if (sum(cl == cl[i]) < 2) next
      cl[i] <- c
      expect_gte(wobj(cl), base - 1e-9 * base)
    }
  }
})

test_that("rows of weight 0 take no part and join their nearest cluster", {
  set.seed(57)
  r <- ring_data(80, sd = 0.1)
  w <- rep(1, 160)
  zero <- c(3, 50, 120)
  w[zero] <- 0
  kern <- gaussian_kernel(1)
  for (method in c("exact", "rff")) {
    fit <- kernel_kmeans(r$x, 2, kern, method = method, D = 60, weights = w, seed = 1)
    pos <- kernel_kmeans(r$x[-zero, ], 2, kern, method = method, D = 60,
                         weights = w[-zero], seed = 1)
    expect_equal(unname(fit$cluster[-zero]), unname(pos$cluster))
    expect_equal(fit$withinss, pos$withinss)
    expect_equal(unname(fit$cluster[zero]), unname(predict(pos, r$x[zero, ])))
    expect_equal(sum(fit$size), 160L)
    expect_identical(predict(fit, r$x[-zero, ]), unname(pos$cluster))
  }
  expect_error(kernel_kmeans(r$x, 2, kern, weights = rep(0, 160)), "'weights' must not all be zero")
  expect_error(kernel_kmeans(r$x, 2, kern, weights = -w), "'weights' must be non-negative")
  expect_error(kernel_kmeans(r$x, 3, kern, weights = c(1, 1, rep(0, 158))), "fewer than the 3")
  # mini-batches with weights: exact sums of squares for the final assignment
  mb <- kernel_kmeans(r$x, 2, kern, method = "rff", D = 60, batch = 50, weights = w, seed = 1)
  Z <- predict(mb$map, r$x)
  D2 <- sapply(1:2, function(c) colSums((t(Z) - mb$centers[c, ])^2))
  expect_equal(mb$tot.withinss, sum(w * D2[cbind(1:160, mb$cluster)]), tolerance = 1e-10)
  m <- colSums(Z * w) / sum(w)
  expect_equal(mb$totss, sum(w * colSums((t(Z) - m)^2)), tolerance = 1e-10)
})
