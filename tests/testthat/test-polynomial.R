# Random features for polynomial, exponential dot-product and min kernels.
# Plain-R references are written from the formulas in design.md §2.3-2.4
# and ?polynomial_features, not from the C code.

ref_dot_kernel <- function(kernel, x, y = x) {
  t <- x %*% t(y)
  switch(kernel$name,
    polynomial = {
      K <- matrix(0, nrow(x), nrow(y))
      for (i in seq_along(kernel$coef)) K <- K + kernel$coef[i] * t^(i - 1)
      K
    },
    exponential_dot = exp(t / kernel$sigma^2),
    min = outer(seq_len(nrow(x)), seq_len(nrow(y)),
                Vectorize(function(i, j) kernel$offset + sum(pmin(x[i, ], y[j, ])))))
}

# Feature f = sum of its terms, each a weight times a product of projections.
ref_projection_map <- function(map, x) {
  P <- x %*% map$projections
  D <- length(map$term_ptr) - 1L
  Z <- matrix(0, nrow(x), D)
  v <- 0
  for (f in seq_len(D)) {
    terms <- seq_len(map$term_ptr[f + 1L] - map$term_ptr[f]) + map$term_ptr[f]
    for (t in terms) {
      deg <- map$term_degree[t]
      prod_t <- rep(map$term_weight[t], nrow(x))
      for (j in seq_len(deg)) prod_t <- prod_t * P[, v + j]
      v <- v + deg
      Z[, f] <- Z[, f] + prod_t
    }
  }
  if (!is.null(map$constant)) Z <- cbind(Z, map$constant)
  Z
}

# TensorSketch with stats::fft: count sketches of (sqrt(s) x, sqrt(c)).
ref_tensorsketch <- function(map, x) {
  D <- map$D
  xa <- cbind(sqrt(map$scale) * x, sqrt(map$offset))
  t(apply(xa, 1, function(row) {
    prod_f <- rep(1 + 0i, D)
    for (j in seq_len(map$degree)) {
      cs <- numeric(D)
      for (k in seq_along(row)) {
        h <- map$hash[k, j]
        cs[h] <- cs[h] + map$sign[k, j] * row[k]
      }
      prod_f <- prod_f * stats::fft(cs)
    }
    Re(stats::fft(prod_f, inverse = TRUE)) / D
  }))
}

ref_min_map <- function(map, x) {
  D <- map$D
  Z <- do.call(cbind, lapply(seq_len(ncol(x)), function(j) {
    outer(x[, j], map$thresholds[, j], ">=") * sqrt(map$tmax[j] / D)
  }))
  if (!is.null(map$constant)) Z <- cbind(Z, map$constant)
  Z
}

unit_rows <- function(n, d) {
  x <- matrix(stats::rnorm(n * d), n, d)
  x / sqrt(rowSums(x^2))
}

rel_max_error <- function(Z, K) max(abs(tcrossprod(Z) - K)) / max(abs(K))

# The constructions checked for unbiasedness: name, kernel, options.
constructions <- function() {
  list(
    product_gaussian = list(k = polynomial_kernel(2, scale = 0.7, offset = 1), m = "product"),
    product_rademacher = list(k = polynomial_kernel(coef = c(0.5, 1, 0, 0.25)), m = "product",
                              projection = "rademacher"),
    product_cubic = list(k = polynomial_kernel(3), m = "product"),
    maclaurin = list(k = polynomial_kernel(coef = c(0.5, 1, 0, 0.25)), m = "maclaurin"),
    maclaurin_gaussian = list(k = polynomial_kernel(2), m = "maclaurin", projection = "gaussian"),
    maclaurin_exp = list(k = exponential_dot_kernel(1.2), m = NULL),
    tensorsketch_2 = list(k = polynomial_kernel(2, scale = 1.5, offset = 0.5), m = "tensorsketch"),
    tensorsketch_3 = list(k = polynomial_kernel(3), m = "tensorsketch"),
    min = list(k = min_kernel(0.5), m = NULL)
  )
}

fit_construction <- function(cons, x, D) {
  args <- list(x, cons$k, D = D, method = cons$m)
  if (!is.null(cons$projection)) args$projection <- cons$projection
  do.call(random_features, args)
}

test_that("the FFT agrees with stats::fft for smooth, prime and Bluestein lengths", {
  set.seed(1)
  for (n in c(1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 30, 37, 49, 97, 125, 128, 243, 1000, 1009)) {
    z <- complex(real = rnorm(n), imaginary = rnorm(n))
    scale <- max(1, Mod(stats::fft(z)))
    expect_lt(max(Mod(.Call(bochner:::C_fft, z, FALSE) - stats::fft(z))) / scale, 1e-12,
              label = paste("forward", n))
    expect_lt(max(Mod(.Call(bochner:::C_fft, z, TRUE) - stats::fft(z, inverse = TRUE))) / scale,
              1e-12, label = paste("inverse", n))
  }
})

test_that("exponential_dot_kernel has an exact Gram matrix", {
  set.seed(2)
  x <- matrix(rnorm(12), 4)
  y <- matrix(rnorm(9), 3)
  k <- exponential_dot_kernel(sigma = 1.5)
  expect_equal(kernel_matrix(k, x), exp(tcrossprod(x) / 1.5^2), tolerance = 1e-13,
               ignore_attr = TRUE)
  expect_equal(kernel_matrix(k, x, y), exp(x %*% t(y) / 1.5^2), tolerance = 1e-13,
               ignore_attr = TRUE)
  expect_s3_class(k, c("exponential_dot_kernel", "bochner_kernel"), exact = TRUE)
  expect_output(print(k), "exp\\(x.y / sigma\\^2\\)")
  expect_output(print(k), "sigma = 1.5")
  expect_error(exponential_dot_kernel(0), "'sigma'")
  expect_error(exponential_dot_kernel("median"), "'sigma'")
})

test_that("both forms of polynomial_kernel give the same Gram matrix", {
  set.seed(3)
  x <- matrix(rnorm(15), 5)
  k1 <- polynomial_kernel(degree = 3, scale = 2, offset = 0.5)
  k2 <- polynomial_kernel(coef = choose(3, 0:3) * 2^(0:3) * 0.5^(3 - 0:3))
  expect_equal(k1$coef, k2$coef)
  expect_equal(kernel_matrix(k1, x), kernel_matrix(k2, x), tolerance = 1e-12)
  expect_equal(kernel_matrix(k1, x), (2 * tcrossprod(x) + 0.5)^3, tolerance = 1e-12,
               ignore_attr = TRUE)
})

test_that("the projection transform matches a plain-R reference", {
  set.seed(4)
  cases <- list(
    list(n = 1, d = 1, D = 1, k = polynomial_kernel(2), m = "product"),
    list(n = 7, d = 3, D = 5, k = polynomial_kernel(coef = c(0, 1, 0, 2)), m = "product"),
    list(n = 300, d = 4, D = 120, k = polynomial_kernel(3), m = "product"),  # several tiles
    list(n = 1, d = 2, D = 3, k = polynomial_kernel(coef = c(0.5, 1, 0, 0.25)), m = "maclaurin"),
    list(n = 260, d = 3, D = 700, k = exponential_dot_kernel(0.8), m = "maclaurin"))
  for (cs in cases) {
    x <- matrix(rnorm(cs$n * cs$d), cs$n)
    map <- random_features(x, cs$k, D = cs$D, method = cs$m)
    Z <- predict(map, x)
    expect_equal(dim(Z), c(cs$n, map$n_features))
    expect_equal(Z, ref_projection_map(map, x), tolerance = 1e-12, ignore_attr = TRUE,
                 label = paste(cs$m, cs$n, cs$d, cs$D))
    # and against data it was not fitted on
    y <- matrix(rnorm(2 * cs$d), 2)
    expect_equal(predict(map, y), ref_projection_map(map, y), tolerance = 1e-12,
                 ignore_attr = TRUE)
  }
})

test_that("the TensorSketch transform matches a plain-R reference", {
  set.seed(5)
  cases <- list(list(n = 1, d = 1, D = 1, p = 2), list(n = 1, d = 1, D = 1, p = 1),
                list(n = 3, d = 2, D = 8, p = 1), list(n = 5, d = 3, D = 12, p = 2),
                list(n = 4, d = 3, D = 7, p = 3), list(n = 9, d = 4, D = 37, p = 4),
                list(n = 2, d = 2, D = 64, p = 3))
  for (cs in cases) {
    x <- matrix(rnorm(cs$n * cs$d), cs$n)
    k <- polynomial_kernel(cs$p, scale = 0.8, offset = 1.3)
    map <- random_features(x, k, D = cs$D, method = "tensorsketch")
    Z <- predict(map, x)
    expect_equal(dim(Z), c(cs$n, cs$D))
    expect_equal(Z, ref_tensorsketch(map, x), tolerance = 1e-10, ignore_attr = TRUE,
                 label = paste("tensorsketch", cs$n, cs$d, cs$D, cs$p))
  }
})

test_that("TensorSketch hashes are balanced: distinct buckets while they last", {
  x <- matrix(rnorm(30), 3)
  map <- random_features(x, polynomial_kernel(3), D = 64, method = "tensorsketch", seed = 1)
  expect_equal(dim(map$hash), c(11L, 3L))
  expect_true(all(apply(map$hash, 2, function(h) !anyDuplicated(h))))
  map <- random_features(x, polynomial_kernel(2), D = 4, method = "tensorsketch", seed = 2)
  for (j in 1:2) expect_equal(sort(as.vector(table(map$hash[, j]))), c(2L, 3L, 3L, 3L))
})

test_that("the min-kernel transform matches a plain-R reference", {
  set.seed(6)
  for (cs in list(list(n = 1, d = 1, D = 1), list(n = 6, d = 3, D = 4),
                  list(n = 50, d = 2, D = 700))) {
    x <- matrix(runif(cs$n * cs$d), cs$n)
    map <- random_features(x, min_kernel(2), D = cs$D)
    expect_equal(map$n_features, cs$d * cs$D + 1L)
    expect_equal(predict(map, x), ref_min_map(map, x), ignore_attr = TRUE)
  }
})

test_that("each construction is unbiased, and its spread shrinks like 1/sqrt(maps)", {
  set.seed(7)
  n <- 5
  x <- unit_rows(n, 3)
  xm <- abs(x)
  upper <- upper.tri(diag(n), diag = TRUE)
  M <- 400
  for (name in names(constructions())) {
    cons <- constructions()[[name]]
    data <- if (name == "min") xm else x
    K <- ref_dot_kernel(cons$k, data)[upper]
    draws <- vapply(seq_len(M), function(i) {
      Z <- predict(fit_construction(cons, data, D = 3), data)
      tcrossprod(Z)[upper]
    }, numeric(sum(upper)))
    # unbiased: the mean of M independent maps is within a few standard
    # errors of K in every entry (CLT; 15 entries, |z| < 4.5)
    se <- apply(draws, 1, sd) / sqrt(M)
    z <- (rowMeans(draws) - K) / pmax(se, 1e-12)
    expect_lt(max(abs(z)), 4.5, label = paste(name, "bias z-score"))
    # spread: averages of 16 maps err half as much as averages of 4
    group_rms <- function(size) {
      g <- rep(seq_len(M / size), each = size)
      means <- t(apply(draws, 1, function(r) tapply(r, g, mean)))
      sqrt(mean((means - K)^2))
    }
    ratio <- group_rms(4) / group_rms(16)
    expect_gt(ratio, 1.4, label = paste(name, "spread ratio"))
    expect_lt(ratio, 2.8, label = paste(name, "spread ratio"))
  }
})

test_that("the relative max error at D = 40000 is below 0.08 on unit-scale data", {
  set.seed(8)
  x <- unit_rows(60, 10)
  kernels <- list(square = polynomial_kernel(2, 1, 1), cubic = polynomial_kernel(3, 1, 1),
                  coef = polynomial_kernel(coef = c(0.5, 1, 0, 0.25)))
  for (kn in names(kernels)) {
    k <- kernels[[kn]]
    K <- kernel_matrix(k, x)
    methods <- if (is.null(k$degree)) c("product", "maclaurin") else
      c("product", "maclaurin", "tensorsketch")
    for (m in methods) {
      Z <- predict(random_features(x, k, D = 40000, method = m), x)
      expect_lt(rel_max_error(Z, K), 0.08, label = paste(kn, m))
    }
  }
  ke <- exponential_dot_kernel(1)
  Z <- predict(random_features(x, ke, D = 40000), x)
  expect_lt(rel_max_error(Z, kernel_matrix(ke, x)), 0.08, label = "exponential dot")
  u <- abs(x)
  km <- min_kernel(1)
  Z <- predict(random_features(u, km, D = 4000), u)
  expect_lt(rel_max_error(Z, kernel_matrix(km, u)), 0.08, label = "min")
})

test_that("degree 0 kernels are one exact constant column", {
  x <- matrix(rnorm(6), 3)
  for (m in c("product", "maclaurin", "tensorsketch")) {
    map <- random_features(x, polynomial_kernel(degree = 0), D = 50, method = m)
    expect_equal(map$n_features, 1L)
    expect_equal(predict(map, x), matrix(1, 3, 1))
  }
  map <- random_features(x, polynomial_kernel(coef = 4), D = 50)
  expect_equal(predict(map, x), matrix(2, 3, 1))
  expect_equal(tcrossprod(predict(map, x)), kernel_matrix(polynomial_kernel(coef = 4), x),
               ignore_attr = TRUE)
})

test_that("degree 1 kernels: a projection plus the constant column", {
  set.seed(9)
  x <- matrix(rnorm(8), 4)
  map <- random_features(x, polynomial_kernel(1, scale = 2, offset = 3), D = 10)
  Z <- predict(map, x)
  expect_equal(map$n_features, 11L)
  expect_equal(Z[, 11], rep(sqrt(3), 4))
  expect_equal(Z[, 1:10], sqrt(2 / 10) * x %*% map$projections, ignore_attr = TRUE)
  # no constant term, no constant column
  map0 <- random_features(x, polynomial_kernel(coef = c(0, 1)), D = 10)
  expect_equal(map0$n_features, 10L)
  expect_null(map0$constant)
  # TensorSketch of degree 1 is a single count sketch with the offset coordinate
  ts <- random_features(x, polynomial_kernel(1, scale = 2, offset = 3), D = 6,
                        method = "tensorsketch")
  expect_equal(predict(ts, x), ref_tensorsketch(ts, x), tolerance = 1e-12,
               ignore_attr = TRUE)
})

test_that("the constant column is exact and comes last", {
  set.seed(10)
  x <- unit_rows(4, 3)
  k <- polynomial_kernel(coef = c(0.5, 1, 0, 0.25))
  for (m in c("product", "maclaurin")) {
    map <- random_features(x, k, D = 20, method = m)
    Z <- predict(map, x)
    expect_equal(ncol(Z), 21L)
    expect_equal(Z[, 21], rep(sqrt(0.5), 4))
  }
})

test_that("Random Maclaurin draws only degrees with positive coefficients", {
  set.seed(11)
  x <- unit_rows(100, 4)
  map <- random_features(x, polynomial_kernel(coef = c(0.5, 1, 0, 0.25)), D = 4000,
                         method = "maclaurin")
  expect_setequal(unique(map$term_degree), c(1L, 3L))
  # P(N = n) is proportional to c_n rho^n, with rho the largest squared norm (1 here)
  expect_equal(map$rho, 1)
  p3 <- 0.25 / 1.25
  expect_lt(abs(mean(map$term_degree == 3) - p3), 4 * sqrt(p3 * (1 - p3) / 4000))
  # every feature has the weight sqrt(Z / rho^N / D), Z = sum_{n >= 1} c_n rho^n
  expect_equal(map$term_weight, rep(sqrt(1.25 / 4000), 4000))
  # exp(x.y / sigma^2): N is Poisson with mean rho / sigma^2, given N >= 1
  xe <- 2 * x
  me <- random_features(xe, exponential_dot_kernel(2), D = 20000)
  mu <- max(rowSums(xe^2)) / 4
  expect_equal(me$rho, max(rowSums(xe^2)))
  expect_true(all(me$term_degree >= 1))
  expect_lt(abs(mean(me$term_degree) - mu / (1 - exp(-mu))), 0.03)
})

test_that("maps are reproducible with set.seed and seed, and saveRDS-safe", {
  x <- unit_rows(20, 3)
  for (cons in constructions()) {
    data <- if (cons$k$name == "min") abs(x) else x
    set.seed(12)
    a <- fit_construction(cons, data, D = 16)
    set.seed(12)
    b <- fit_construction(cons, data, D = 16)
    expect_identical(a, b)
    expect_identical(predict(a, data), predict(b, data))
    f <- tempfile(fileext = ".rds")
    saveRDS(a, f)
    expect_identical(predict(readRDS(f), data), predict(a, data))
    unlink(f)
  }
  set.seed(1)
  before <- runif(1)
  set.seed(1)
  m1 <- random_features(x, polynomial_kernel(3), D = 8, method = "tensorsketch", seed = 99)
  expect_identical(runif(1), before)   # the user's stream is left as it was
  m2 <- random_features(x, polynomial_kernel(3), D = 8, method = "tensorsketch", seed = 99)
  expect_identical(m1, m2)
})

test_that("results do not depend on the number of threads", {
  set.seed(13)
  x <- unit_rows(700, 5)
  maps <- list(random_features(x, polynomial_kernel(3), D = 300),
               random_features(x, exponential_dot_kernel(1), D = 300),
               random_features(x, polynomial_kernel(3), D = 128, method = "tensorsketch"),
               random_features(abs(x), min_kernel(), D = 300))
  for (map in maps) {
    data <- if (inherits(map, "min_features")) abs(x) else x
    expect_identical(predict(map, data, nthreads = 1), predict(map, data, nthreads = 2))
  }
})

test_that("the min map clips new data above the fitted range", {
  set.seed(14)
  x <- matrix(runif(40), 20, 2)
  map <- random_features(x, min_kernel(1), D = 50)
  expect_equal(map$tmax, apply(x, 2, max))
  big <- x + 5
  expect_identical(predict(map, big), predict(map, pmin(big, rep(map$tmax, each = 20))))
  expect_equal(random_features(x, min_kernel(0), D = 50)$n_features, 100L)
  expect_error(random_features(-x, min_kernel(), D = 10), "'x' must be non-negative")
  expect_error(predict(map, x - 1), "'newdata' must be non-negative")
})

test_that("maps work through the formula interface and print", {
  df <- data.frame(a = c(0.1, 0.5, 0.2, 0.9), b = c(0.3, 0.1, 0.7, 0.4))
  map <- random_features(~ a + b, data = df, kernel = polynomial_kernel(2), D = 20,
                         method = "maclaurin")
  expect_equal(dim(predict(map, df)), c(4L, 21L))
  expect_output(print(map), "Random Maclaurin features")
  expect_output(print(map), "k\\(x, y\\) = \\(1 x.y \\+ 1\\)\\^2")
  expect_output(print(random_features(df, polynomial_kernel(2), D = 5)), "products of gaussian")
  expect_output(print(random_features(df, polynomial_kernel(2), D = 8, method = "tensorsketch")),
                "TensorSketch")
  expect_output(print(random_features(df, min_kernel(), D = 5)), "Min-kernel")
  expect_output(print(summary(random_features(df, polynomial_kernel(2), D = 5))), "size")
  err <- kernel_approx_error(random_features(df, polynomial_kernel(2), D = 50), df)
  expect_s3_class(err, "kernel_approx_error")
})

test_that("bad input gives clear errors", {
  x <- matrix(rnorm(20), 10)
  expect_error(polynomial_kernel(coef = c(1, -0.5)), "'coef' must be non-negative")
  expect_error(polynomial_kernel(coef = c(0, 0)), "'coef' has no positive coefficient")
  expect_error(polynomial_kernel(degree = 2.5), "'degree' must be a whole number")
  expect_error(polynomial_kernel(degree = -1), "'degree'")
  expect_error(random_features(x, polynomial_kernel(2), D = 10, method = "fourier"),
               "'method' must be one of \"product\", \"maclaurin\", \"tensorsketch\"")
  expect_error(random_features(x, polynomial_kernel(2), D = 10, method = c("product", "maclaurin")),
               "'method' must be one of")
  expect_error(random_features(x, polynomial_kernel(coef = c(1, 1)), D = 10, method = "tensorsketch"),
               "does not fit this kernel: TensorSketch sketches")
  expect_error(random_features(x, exponential_dot_kernel(), D = 10, method = "product"),
               "does not fit this kernel.*infinite series")
  expect_error(random_features(x, exponential_dot_kernel(), D = 10, method = "tensorsketch"),
               "does not fit this kernel")
  expect_error(random_features(x, gaussian_kernel(1), D = 10, method = "tensorsketch"),
               "'method' does not apply to the Gaussian kernel")
  expect_error(random_features(abs(x), min_kernel(), D = 10, method = "product"),
               "'method' does not apply to the min kernel")
  expect_error(random_features(x, polynomial_kernel(2), D = 10, type = "pair"),
               "'type' = \"pair\" is a kind of Fourier features")
  expect_error(random_features(abs(x), min_kernel(), D = 10, type = "pair"), "'type'")
  expect_error(random_features(x, polynomial_kernel(2), D = 10, projection = "cauchy"),
               "'projection' must be \"gaussian\" or \"rademacher\"")
  expect_error(random_features(x, polynomial_kernel(2), D = 10, method = "tensorsketch",
                               projection = "gaussian"), "'projection' applies to")
  expect_error(random_features(x, gaussian_kernel(1), D = 10, projection = "gaussian"),
               "unused argument\\(s\\): 'projection'")
  expect_error(random_features(x, polynomial_kernel(2), D = 10, foo = 1),
               "unused argument\\(s\\): 'foo'")
  expect_error(random_features(abs(x), min_kernel(), D = 10, bar = 2), "unused argument")
  expect_error(random_features(x, polynomial_kernel(2), D = 0), "'D'")
  expect_error(random_features(10 * x, exponential_dot_kernel(0.01), D = 10), "overflows")
  map <- random_features(x, polynomial_kernel(2), D = 10)
  expect_error(predict(map, x[, 1]), "'newdata' has 1 column")
  expect_error(random_features(abs(x), min_kernel(), D = 2^30), "'D' is too large")
  expect_error(random_features(x, polynomial_kernel(2), D = 2^30, method = "tensorsketch"),
               "'D' is too large for TensorSketch")
})

test_that("stray .Call arguments are refused, not crashed on", {
  x <- matrix(1, 2, 2)
  expect_error(.Call(bochner:::C_projection_transform, x, matrix(1, 3, 1), 0:1, 1L, 1, NULL, 1L),
               "one row per column")
  expect_error(.Call(bochner:::C_projection_transform, x, matrix(1, 2, 1), 0:1, 2L, 1, NULL, 1L),
               "one column per projection")
  expect_error(.Call(bochner:::C_projection_transform, x, matrix(1, 2, 1), c(0L, 2L), 1L, 1, NULL, 1L),
               "term_ptr")
  expect_error(.Call(bochner:::C_tensorsketch_transform, x, matrix(5L, 3, 2), matrix(1, 3, 2),
                     4L, 1, 1, 1L), "hash")
  expect_error(.Call(bochner:::C_min_transform, x, matrix(0.5, 3, 2), c(-1, 1), NULL, 1L), "tmax")
  expect_error(.Call(bochner:::C_fft, 1:3, FALSE), "complex")
})
