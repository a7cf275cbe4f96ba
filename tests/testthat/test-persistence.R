# Persistence and determinism of every kind of fitted object, in one table:
# every feature map (Fourier phase and pair maps for every shift-invariant
# kernel, structured (SORF) maps, the polynomial constructions, min features) and kernel k-means
# (exact and on random features).  For each:
#   * saveRDS()/readRDS() gives an identical object that predicts identically;
#   * predictions are identical for nthreads = 1 and nthreads = 2;
#   * predicting on row chunks and rbind-ing gives the prediction on the whole.
# (test-features.R, test-polynomial.R and test-kmeans.R check some of these
# for a few objects; this file covers every kind, and row chunks for all.)

set.seed(2024)
n_fit <- 60L
x_fit <- matrix(runif(n_fit * 3), n_fit, 3, dimnames = list(NULL, c("u", "v", "w")))
x_new <- matrix(runif(301 * 3), 301, 3, dimnames = list(NULL, c("u", "v", "w")))

map_cases <- list(
  gaussian_phase = list(kernel = gaussian_kernel("median"), D = 300, type = "phase"),
  gaussian_pair = list(kernel = gaussian_kernel(1), D = 300, type = "pair"),
  laplace_phase = list(kernel = laplace_kernel(0.5), D = 300, type = "phase"),
  laplace_pair = list(kernel = laplace_kernel("median"), D = 300, type = "pair"),
  cauchy_phase = list(kernel = cauchy_kernel(2), D = 300, type = "phase"),
  cauchy_pair = list(kernel = cauchy_kernel(1), D = 300, type = "pair"),
  matern15_phase = list(kernel = matern_kernel(1, nu = 1.5), D = 300, type = "phase"),
  matern07_pair = list(kernel = matern_kernel(1, nu = 0.7), D = 300, type = "pair"),
  gaussian_orthogonal = list(kernel = gaussian_kernel(1), D = 300, sampling = "orthogonal"),
  matern25_orthogonal_pair = list(kernel = matern_kernel(1, nu = 2.5), D = 100, type = "pair",
                                  sampling = "orthogonal"),
  laplace_qmc = list(kernel = laplace_kernel(1), D = 300, sampling = "qmc"),
  matern15_qmc_pair = list(kernel = matern_kernel(0.5, nu = 1.5), D = 150, type = "pair",
                           sampling = "qmc"),
  structured_gaussian_phase = list(kernel = gaussian_kernel("median"), D = 300, type = "phase",
                                   sampling = "structured"),
  structured_matern_pair = list(kernel = matern_kernel(1, nu = 1.5), D = 70, type = "pair",
                                sampling = "structured"),
  poly_product = list(kernel = polynomial_kernel(3), D = 200, method = "product"),
  poly_product_rademacher = list(kernel = polynomial_kernel(2), D = 200, method = "product",
                                 projection = "rademacher"),
  poly_maclaurin = list(kernel = polynomial_kernel(3), D = 200, method = "maclaurin"),
  poly_coef_maclaurin = list(kernel = polynomial_kernel(coef = c(1, 0, 2, 0.5)), D = 200,
                             method = "maclaurin"),
  poly_tensorsketch = list(kernel = polynomial_kernel(3, scale = 0.5), D = 128,
                           method = "tensorsketch"),
  expdot_maclaurin = list(kernel = exponential_dot_kernel(2), D = 200),
  min_features = list(kernel = min_kernel(0.5), D = 100)
)

nystrom_cases <- list(
  nystrom_uniform = list(kernel = gaussian_kernel("median"), m = 30, landmarks = "uniform"),
  nystrom_kmeans = list(kernel = laplace_kernel(1), m = 30, landmarks = "kmeans"),
  nystrom_leverage = list(kernel = matern_kernel(1, nu = 2.5), m = 30, landmarks = "leverage"),
  nystrom_polynomial = list(kernel = polynomial_kernel(3), m = 25, landmarks = "leverage"),
  nystrom_min = list(kernel = min_kernel(0.5), m = 20, landmarks = "kmeans")
)
map_cases <- c(map_cases, nystrom_cases)

fit_map_case <- function(case) {
  fit <- if (is.null(case[["m"]])) random_features else nystrom_features
  do.call(fit, c(list(x = x_fit), case, list(seed = 11)))
}

kmeans_cases <- list(
  exact_gaussian = list(centers = 3, kernel = gaussian_kernel(0.5), method = "exact"),
  exact_polynomial = list(centers = 2, kernel = polynomial_kernel(2), method = "exact"),
  exact_min = list(centers = 3, kernel = min_kernel(), method = "exact"),
  rff_gaussian = list(centers = 3, kernel = gaussian_kernel(0.5), method = "rff", D = 200),
  rff_laplace = list(centers = 3, kernel = laplace_kernel(1), method = "rff", D = 150),
  rff_polynomial = list(centers = 2, kernel = polynomial_kernel(2), method = "rff", D = 100)
)

fit_kmeans_case <- function(case) {
  do.call(kernel_kmeans, c(list(x = x_fit), case, list(nstart = 2, seed = 5)))
}

round_trip <- function(object) {
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(object, path)
  readRDS(path)
}

# row chunks: an even split, an odd split and three uneven pieces
chunkings <- list(even = list(1:150, 151:301), odd = list(1:151, 152:301),
                  three = list(1:7, 8:263, 264:301))

test_that("every feature map survives saveRDS and predicts identically", {
  for (name in names(map_cases)) {
    map <- fit_map_case(map_cases[[name]])
    back <- round_trip(map)
    expect_identical(back, map, label = name)
    expect_identical(predict(back, x_new), predict(map, x_new), label = name)
  }
})

test_that("every feature map predicts identically for 1 and 2 threads", {
  for (name in names(map_cases)) {
    map <- fit_map_case(map_cases[[name]])
    expect_identical(predict(map, x_new, nthreads = 1), predict(map, x_new, nthreads = 2),
                     label = name)
  }
})

test_that("every feature map predicts the same on row chunks as on the whole", {
  for (name in names(map_cases)) {
    map <- fit_map_case(map_cases[[name]])
    whole <- predict(map, x_new)
    for (ch in names(chunkings)) {
      pieces <- lapply(chunkings[[ch]], function(i) predict(map, x_new[i, , drop = FALSE]))
      joined <- do.call(rbind, pieces)
      if (identical(map$method, "tensorsketch") && ch != "even") {
        # TensorSketch transforms two rows in one complex FFT (one as the
        # real part, one as the imaginary part), so a chunk starting at an
        # odd row pairs rows differently: equal to rounding, not identical
        expect_equal(joined, whole, tolerance = 1e-13, label = paste(name, ch))
      } else {
        expect_identical(joined, whole, label = paste(name, ch))
      }
    }
  }
})

test_that("kernel k-means fits survive saveRDS and predict identically", {
  for (name in names(kmeans_cases)) {
    fit <- fit_kmeans_case(kmeans_cases[[name]])
    back <- round_trip(fit)
    expect_identical(back, fit, label = name)
    for (type in c("cluster", "distance")) {
      expect_identical(predict(back, x_new, type = type), predict(fit, x_new, type = type),
                       label = paste(name, type))
    }
  }
})

test_that("kernel k-means fits and predictions are identical for 1 and 2 threads", {
  for (name in names(kmeans_cases)) {
    case <- kmeans_cases[[name]]
    f1 <- do.call(kernel_kmeans, c(list(x = x_fit), case, list(nstart = 2, seed = 5, nthreads = 1)))
    f2 <- do.call(kernel_kmeans, c(list(x = x_fit), case, list(nstart = 2, seed = 5, nthreads = 2)))
    expect_identical(drop_call(f1), drop_call(f2), label = name)
    expect_identical(predict(f1, x_new, type = "distance", nthreads = 1),
                     predict(f1, x_new, type = "distance", nthreads = 2), label = name)
  }
})

test_that("kernel k-means predicts the same on row chunks as on the whole", {
  for (name in names(kmeans_cases)) {
    fit <- fit_kmeans_case(kmeans_cases[[name]])
    for (type in c("cluster", "distance")) {
      whole <- predict(fit, x_new, type = type, nthreads = 1)
      for (ch in names(chunkings)) {
        pieces <- lapply(chunkings[[ch]], function(i) predict(fit, x_new[i, , drop = FALSE], type = type))
        joined <- if (type == "cluster") unlist(pieces) else do.call(rbind, pieces)
        expect_identical(joined, whole, label = paste(name, type, ch))
      }
    }
  }
})

test_that("formula fits survive saveRDS and predict identically on data frames", {
  df <- data.frame(a = runif(40), b = runif(40), g = factor(sample(c("p", "q", "r"), 40, TRUE)))
  fits <- list(random_features(~ a + g, data = df, kernel = gaussian_kernel(1), D = 50, seed = 1),
               random_features(~ a + b, data = df, kernel = polynomial_kernel(2), D = 50, seed = 1),
               kernel_kmeans(~ a + b + g, data = df, centers = 2, kernel = gaussian_kernel(1),
                             seed = 1),
               kernel_kmeans(~ a + g, data = df, centers = 2, kernel = gaussian_kernel(1),
                             method = "rff", D = 40, seed = 1))
  for (f in fits) {
    back <- round_trip(f)
    expect_identical(predict(back, df), predict(f, df))
    a <- predict(f, df[1:13, ])
    b <- predict(f, df[14:40, ])
    expect_identical(if (is.matrix(a)) rbind(a, b) else c(a, b), predict(f, df))
  }
})

# kernel machines: a two-class and a three-class SVM, both losses; ridge
# regression and ridge classification
y_two <- factor(ifelse(x_fit[, 1] + x_fit[, 2] > 1, "hi", "lo"))
y_three <- cut(x_fit[, 1], c(-Inf, 1 / 3, 2 / 3, Inf), labels = c("a", "b", "c"))
y_num <- sin(3 * x_fit[, 1]) + x_fit[, 2]
machine_cases <- list(
  svm_two_hinge = function(...) rff_svm(x_fit, y_two, gaussian_kernel(1), D = 100, ...),
  svm_three_squared = function(...) rff_svm(x_fit, y_three, laplace_kernel("median"), D = 100,
                                            loss = "squared_hinge", ...),
  svm_polynomial = function(...) rff_svm(x_fit, y_two, polynomial_kernel(2), D = 100, ...),
  ridge_regression = function(...) rff_ridge(x_fit, y_num, gaussian_kernel(1), D = 100, ...),
  ridge_classes = function(...) rff_ridge(x_fit, y_three, gaussian_kernel(1), D = 100, ...)
)
machine_types <- function(fit) {
  if (inherits(fit, "rff_svm")) c("class", "decision")
  else if (identical(fit$type, "regression")) "response" else c("class", "decision")
}

test_that("kernel machines survive saveRDS, and predict the same for any threads and chunks", {
  for (name in names(machine_cases)) {
    fit <- machine_cases[[name]](seed = 3, nthreads = 1)
    back <- round_trip(fit)
    expect_identical(back, fit, label = name)
    expect_identical(drop_call(machine_cases[[name]](seed = 3, nthreads = 2)), drop_call(fit),
                     label = name)
    for (type in machine_types(fit)) {
      whole <- predict(fit, x_new, type = type, nthreads = 1)
      expect_identical(predict(back, x_new, type = type), whole, label = paste(name, type))
      expect_identical(predict(fit, x_new, type = type, nthreads = 2), whole,
                       label = paste(name, type, "threads"))
      for (ch in names(chunkings)) {
        pieces <- lapply(chunkings[[ch]], function(i) predict(fit, x_new[i, , drop = FALSE], type = type))
        joined <- if (is.matrix(whole)) do.call(rbind, pieces) else unlist(pieces, use.names = FALSE)
        if (is.factor(whole)) joined <- factor(levels(whole)[joined], levels = levels(whole))
        expect_identical(unname(joined), unname(whole), label = paste(name, type, ch))
      }
    }
  }
})

# The cases above are small enough that a parallel region may run on one
# thread (small work stays on the calling thread); these are large enough
# that every threaded step runs on two.
test_that("large fits and predictions are identical for 1 and 2 threads, and any row chunks", {
  set.seed(7)
  n <- 3000L
  x <- matrix(rnorm(n * 4), n, 4)
  y <- sin(x[, 1]) + x[, 2]^2 + rnorm(n, sd = 0.1)
  cls <- cut(x[, 1] + x[, 3], c(-Inf, -0.5, 0.5, Inf), labels = c("a", "b", "c"))
  xn <- matrix(rnorm(2500 * 4), 2500, 4)
  for (threads_case in list(
    ridge = function(t) rff_ridge(x, y, D = 400, seed = 1, nthreads = t),
    ridge_dual = function(t) rff_ridge(x[1:300, ], y[1:300], D = 600, seed = 1, nthreads = t),
    ridge_classes = function(t) rff_ridge(x, cls, D = 400, seed = 1, nthreads = t),
    svm = function(t) rff_svm(x, cls, D = 300, seed = 1, nthreads = t)
  )) {
    f1 <- threads_case(1L)
    expect_identical(drop_call(threads_case(2L)), drop_call(f1))
    type <- if (inherits(f1, "rff_svm") || f1$type == "classification") "decision" else "response"
    whole <- predict(f1, xn, type = type, nthreads = 1)
    expect_identical(predict(f1, xn, type = type, nthreads = 2), whole)
    parts <- lapply(list(1:1, 2:1300, 1301:2500), function(i) predict(f1, xn[i, , drop = FALSE], type = type, nthreads = 2))
    joined <- if (is.matrix(whole)) do.call(rbind, parts) else unlist(parts)
    expect_identical(unname(joined), unname(whole))
  }
  big <- matrix(runif(1500 * 3), 1500, 3)
  for (k in list(gaussian_kernel(1), laplace_kernel(1), polynomial_kernel(2), min_kernel())) {
    expect_identical(kernel_matrix(k, big, nthreads = 2), kernel_matrix(k, big, nthreads = 1))
  }
  for (method in c("exact", "rff")) {
    f1 <- kernel_kmeans(big, 4, gaussian_kernel(0.3), method = method, seed = 2, nthreads = 1)
    expect_identical(drop_call(kernel_kmeans(big, 4, gaussian_kernel(0.3), method = method,
                                             seed = 2, nthreads = 2)), drop_call(f1))
    expect_identical(predict(f1, xn[, 1:3], nthreads = 2), predict(f1, xn[, 1:3], nthreads = 1))
  }
})
