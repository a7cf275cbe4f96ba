# The memory guard (check_memory(), R/checks.R): what a fit would allocate
# is estimated before anything is allocated, and refused with the estimate
# and the argument to change (issue 24).  The limit comes from
# options(bochner.max_bytes) here, so that the tests do not depend on the
# memory free on the machine that runs them.

test_that("rff_ridge with D = 1e7 on iris is refused at once, naming D", {
  # about 23 GB (two 150 x 1e7 feature matrices): more than the limit of
  # any machine the tests run on, and refused before the map is drawn
  expect_error(rff_ridge(Sepal.Length ~ ., data = iris, D = 1e7),
               "'D' is too large: rff_ridge\\(\\) would need 2[0-9.]+ GB.*use a smaller 'D'")
  old <- options(bochner.max_bytes = 2^30)
  on.exit(options(old))
  expect_error(rff_ridge(Sepal.Length ~ ., data = iris, D = 1e7),
               "1.0 GB is allowed \\(options\\(bochner.max_bytes\\)\\)")
  # a generous but real fit still works under that limit
  fit <- rff_ridge(Sepal.Length ~ ., data = iris, D = 20000, seed = 1)
  expect_s3_class(fit, "rff_ridge")
  expect_identical(fit$n_features, 20000L)
})

test_that("the estimate follows each method's memory, under a given limit", {
  old <- options(bochner.max_bytes = 1e6)
  on.exit(options(old))
  x <- as.matrix(iris[, 1:4])
  # rff_ridge, dual side (n < D): 2 n D + 2 n^2 + 5 D doubles
  D <- 500
  need <- 8 * (2 * 150 * D + 2 * 150^2 + 5 * D)
  expect_error(rff_ridge(x, iris$Sepal.Width, D = D),
               sprintf("would need %s of memory at once", bochner:::format_bytes(need)), fixed = TRUE)
  expect_s3_class(rff_ridge(x, iris$Sepal.Width, D = 100, seed = 1), "rff_ridge")
  # primal side (n >= D): three D x D matrices and a block of features
  expect_error(rff_ridge(x[rep(1:150, 4), ], rep(iris$Sepal.Width, 4), D = 300),
               "'D' is too large: rff_ridge.*the moments Z'Z 300 x 300")
  # the pair map has 2D columns
  expect_error(rff_ridge(x, iris$Sepal.Width, D = 250, type = "pair"),
               "the feature matrix Z 150 x 500")
  # rff_svm: the transposed features, and the folds' problems too
  expect_error(rff_svm(x, iris$Species, D = 800), "'D' is too large: rff_svm\\(\\)")
  expect_s3_class(rff_svm(x, iris$Species, D = 100, seed = 1), "rff_svm")
  expect_error(rff_svm(x, iris$Species, D = 800, probability = TRUE),
               "the weights 801 x 18")   # 3 pairs, and 3 more for each of 5 folds
  # maps: the frequencies; the features at predict()
  expect_error(random_features(x, D = 30000), "'D' is too large: random_features\\(\\)")
  map <- random_features(x, D = 1000, seed = 1)
  expect_error(predict(map, x), "'newdata' is too large:.*in pieces \\(data_chunks\\(\\)\\)")
  expect_identical(dim(predict(map, x[1:20, ])), c(20L, 1000L))
  # Nystrom: five m x m matrices (900 KB at m = 150)
  options(bochner.max_bytes = 5e5)
  expect_error(nystrom_features(x, m = 150), "'m' is too large: the Nystrom map")
  expect_s3_class(nystrom_features(x, m = 50, seed = 1), "nystrom_features")
  # kernel_kmeans on features: D names the size of the n x D features
  expect_error(kernel_kmeans(x, 3, method = "rff", D = 1000), "'D' is too large: kernel_kmeans")
  expect_error(kernel_kmeans(x, 3, method = "nystrom", m = 150), "'m' is too large")
  expect_s3_class(kernel_kmeans(x, 3, method = "rff", D = 50, seed = 1), "kernel_kmeans")
})

test_that("the limit: the option, else the memory available; bad options refused", {
  old <- options(bochner.max_bytes = 12345)
  on.exit(options(old))
  expect_equal(as.numeric(bochner:::memory_limit()), 12345)
  options(bochner.max_bytes = NULL)
  lim <- bochner:::memory_limit()
  expect_true(as.numeric(lim) > 0)
  expect_identical(attr(lim, "source"), "")
  options(bochner.max_bytes = -1)
  expect_error(rff_ridge(as.matrix(iris[, 1:4]), iris$Sepal.Width, D = 10),
               "options\\(bochner.max_bytes\\)")
  # kernel_kmeans' exact method keeps its own option first
  options(bochner.max_bytes = 1e12, bochner.max_gram_bytes = 1000)
  expect_error(kernel_kmeans(as.matrix(iris[, 1:4]), 2, gaussian_kernel(1)),
               "options\\(bochner.max_gram_bytes\\)")
  options(bochner.max_gram_bytes = NULL)
})

test_that("check_memory() names the largest parts and the argument", {
  old <- options(bochner.max_bytes = 100)
  on.exit(options(old))
  expect_silent(bochner:::check_memory(list(a = c(2, 5)), "f()", "n"))
  expect_error(bochner:::check_memory(list(small = c(1, 2), big = c(10, 10)), "f()", "n"),
               "'n' is too large: f\\(\\) would need 816.0 bytes of memory at once \\(estimated: big 10 x 10")
})
