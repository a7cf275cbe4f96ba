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
  fit <- kernel_kmeans(r$x, 2, kern, method = "nystrom", D = 40, nstart = 3, seed = 4)
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
  ny <- kernel_kmeans(r$x, 2, kern, method = "nystrom", D = 50, batch = 300, seed = 2)
  expect_equal(max(mean(ny$cluster == r$truth), mean(ny$cluster != r$truth)), 1)
  expect_error(kernel_kmeans(r$x, 2, kern, batch = 100), "'batch' is for method")
  expect_error(kernel_kmeans(r$x, 2, kern, method = "rff", batch = 1), "'batch' must be")
})
