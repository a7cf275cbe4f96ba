# Fits on a feature map fitted beforehand (map =): every kind of map works in
# rff_ridge(), rff_svm() and kernel_kmeans(method = "rff"), and the fit uses
# exactly the map's features.
set.seed(11)
x <- matrix(runif(240 * 3), 240, 3)
y_num <- sin(4 * x[, 1]) + x[, 2]
y_cls <- factor(ifelse(x[, 1] + x[, 3] > 1, "hi", "lo"))
maps <- list(
  phase = random_features(x, gaussian_kernel(0.5), D = 150, seed = 1),
  pair = random_features(x, laplace_kernel(1), D = 80, type = "pair", seed = 1),
  tensorsketch = random_features(x, polynomial_kernel(2), D = 64, method = "tensorsketch", seed = 1),
  min = random_features(x, min_kernel(), D = 40, seed = 1),
  orthogonal = random_features(x, gaussian_kernel(0.5), D = 120, sampling = "orthogonal", seed = 1),
  qmc = random_features(x, cauchy_kernel(1), D = 120, type = "pair", sampling = "qmc", seed = 1),
  structured = random_features(x, matern_kernel(0.5), D = 100, sampling = "structured", seed = 1),
  nystrom = nystrom_features(x, gaussian_kernel(0.5), m = 60, seed = 1),
  nystrom_leverage = nystrom_features(x, polynomial_kernel(2), m = 30, landmarks = "leverage",
                                      seed = 1)
)

test_that("rff_ridge on a given map solves ridge on that map's features", {
  for (name in names(maps)) {
    map <- maps[[name]]
    fit <- rff_ridge(x, y_num, map = map, lambda = 0.1)
    expect_identical(fit$map, map, label = name)
    Z <- predict(map, x)
    Zc <- scale(Z, scale = FALSE)
    # lambda is per row: n * lambda on the sums of squares
    beta <- solve(crossprod(Zc) + diag(0.1 * nrow(x), ncol(Z)), crossprod(Zc, y_num - mean(y_num)))
    expect_equal(unname(fit$weights), unname(beta), tolerance = 1e-8, label = name)
    expect_equal(unname(predict(fit, x[1:5, ])),
                 drop(Z[1:5, ] %*% beta) + mean(y_num) - sum(colMeans(Z) * beta),
                 tolerance = 1e-8, label = name)
  }
})

test_that("rff_svm and kernel_kmeans take a given map", {
  for (name in names(maps)) {
    map <- maps[[name]]
    fit <- rff_svm(x, y_cls, map = map, seed = 2)
    expect_identical(fit$map, map, label = name)
    expect_gt(fit$accuracy, 0.8)
    dec <- predict(fit, x, type = "decision")
    expect_equal(dec[, 1], drop(predict(map, x) %*% fit$weights[, 1]) + fit$intercept[[1]],
                 tolerance = 1e-10, ignore_attr = TRUE, label = name)
    km <- kernel_kmeans(x, 3, method = "rff", map = map, seed = 3)
    expect_identical(km$map, map, label = name)
    expect_identical(predict(km, x), unname(km$cluster), label = name)
  }
})

test_that("a given map is checked", {
  map <- maps$phase
  expect_error(rff_ridge(x, y_num, map = list(1)), "'map' must be a feature map")
  expect_error(rff_svm(x[, 1:2], y_cls, map = map), "'map' was fitted on 3 column")
  expect_error(rff_ridge(x, y_num, map = map, scale = TRUE), "'scale' must be FALSE")
  expect_error(kernel_kmeans(x, 2, map = map), "'map' is for method = \"rff\"")
})
