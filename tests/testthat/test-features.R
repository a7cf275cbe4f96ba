test_that("the C transform matches the plain-R phase and pair maps", {
  set.seed(20)
  # sizes straddling the row and frequency blocks of the C code
  for (dims in list(c(1, 1, 1), c(1, 3, 1), c(7, 1, 5), c(300, 4, 300), c(513, 2, 257))) {
    n <- dims[1]; d <- dims[2]; D <- dims[3]
    x <- matrix(rnorm(n * d), n, d)
    map <- random_features(x, gaussian_kernel(1), D = D, type = "phase")
    expect_equal(predict(map, x), ref_phase_map(x, map$omega, map$phase), tolerance = 1e-14)
    map <- random_features(x, laplace_kernel(2), D = D, type = "pair")
    expect_equal(predict(map, x), ref_pair_map(x, map$omega), tolerance = 1e-14)
  }
})

test_that("the map stores frequencies from spectral_sample and uniform phases", {
  x <- matrix(rnorm(20), 10, 2)
  set.seed(21)
  map <- random_features(x, cauchy_kernel(2), D = 6)
  set.seed(21)
  omega <- t(spectral_sample(cauchy_kernel(2), 6, 2))
  phase <- runif(6, 0, 2 * pi)
  expect_identical(map$omega, omega)
  expect_identical(map$phase, phase)
  expect_equal(map$scale, sqrt(2 / 6))
  expect_equal(map$n_features, 6L)
  pair <- random_features(x, cauchy_kernel(2), D = 6, type = "pair")
  expect_null(pair$phase)
  expect_equal(pair$n_features, 12L)
  expect_equal(pair$scale, sqrt(1 / 6))
})

# Mean squared error of z(x).z(y) over pairs, against its exact value
# Var(one term)/D: pair map (1 + k(2 delta))/2 - k^2, phase map 1/2 more.
test_that("Z Z' is unbiased with variance shrinking like 1/D, for every kernel and map", {
  set.seed(22)
  x <- matrix(rnorm(40), 20, 2)
  upper <- upper.tri(diag(20))
  for (k in all_shift_invariant_kernels()) {
    K <- kernel_matrix(k, x)[upper]
    K2 <- kernel_matrix(k, 2 * x)[upper]   # k(2 delta) for shift-invariant k
    for (type in c("phase", "pair")) {
      term_var <- (1 + K2) / 2 - K^2 + if (type == "phase") 1 / 2 else 0
      for (D in c(50, 800)) {
        maps <- 300
        err <- replicate(maps, {
          Z <- predict(random_features(x, k, D = D, type = type), x)
          tcrossprod(Z)[upper] - K
        })
        ratio <- mean(err^2) / mean(term_var / D)
        # the errors of different pairs share the frequencies, so the ratio
        # varies over seeds with sd about 0.6 / sqrt(maps) = 0.035: the
        # bounds are over 4 sd, while a wrong constant or rate moves it 2x
        expect_gt(ratio, 0.85, label = paste(k$name, type, D))
        expect_lt(ratio, 1.15, label = paste(k$name, type, D))
        # unbiased: each pair's mean error is within 5 standard errors
        z_scores <- rowMeans(err) / sqrt(term_var / D / maps)
        expect_lt(max(abs(z_scores)), 5, label = paste(k$name, type, D, "bias"))
      }
    }
  }
})

test_that("at D = 20000 Z Z' is within 0.06 of every kernel for both maps", {
  set.seed(23)
  x <- matrix(rnorm(150), 50, 3)
  for (k in all_shift_invariant_kernels()) {
    for (type in c("phase", "pair")) {
      map <- random_features(x, k, D = 20000, type = type)
      expect_lt(kernel_approx_error(map, x)$max, 0.06, label = paste(k$name, type))
    }
  }
})

test_that("set.seed and seed reproduce maps and leave the user's stream alone", {
  x <- matrix(rnorm(30), 10, 3)
  set.seed(24)
  a <- random_features(x, matern_kernel(1, 2.5), D = 20)
  set.seed(24)
  b <- random_features(x, matern_kernel(1, 2.5), D = 20)
  expect_identical(a, b)
  set.seed(99)
  before <- runif(1)
  set.seed(99)
  c1 <- random_features(x, gaussian_kernel(1), D = 20, seed = 7)
  expect_identical(runif(1), before)
  c2 <- random_features(x, gaussian_kernel(1), D = 20, seed = 7)
  expect_identical(c1, c2)
})

test_that("predict is identical for any thread count and on row chunks", {
  set.seed(25)
  x <- matrix(rnorm(5000 * 3), 5000, 3)
  for (type in c("phase", "pair")) {
    map <- random_features(x, gaussian_kernel(1), D = 700, type = type)
    z1 <- predict(map, x, nthreads = 1)
    expect_identical(z1, predict(map, x, nthreads = 2))
    expect_equal(z1[4001:5000, ], predict(map, x[4001:5000, ]), tolerance = 1e-15)
  }
})

test_that("maps survive saveRDS and predict identically", {
  set.seed(26)
  df <- data.frame(a = rnorm(30), b = rnorm(30), g = factor(sample(c("u", "v", "w"), 30, TRUE)))
  maps <- list(random_features(as.matrix(df[1:2]), gaussian_kernel("median"), D = 30),
               random_features(~ a + g, data = df, kernel = cauchy_kernel(1), D = 30, type = "pair"))
  for (map in maps) {
    path <- tempfile(fileext = ".rds")
    saveRDS(map, path)
    back <- readRDS(path)
    new <- if (is.null(map$input$terms)) as.matrix(df[1:2]) else df
    expect_identical(predict(back, new), predict(map, new))
  }
})

test_that("predict works on one row, data frames, vectors and by column name", {
  set.seed(27)
  x <- matrix(rnorm(40), 20, 2, dimnames = list(NULL, c("u", "v")))
  map <- random_features(x, gaussian_kernel(1), D = 15)
  z <- predict(map, x)
  expect_equal(predict(map, x[3, , drop = FALSE]), z[3, , drop = FALSE])
  expect_equal(predict(map, as.data.frame(x)), z)
  expect_equal(predict(map, as.data.frame(x)[, c("v", "u")]), z)
  one_d <- random_features(1:10, gaussian_kernel(2), D = 5)
  expect_equal(dim(predict(one_d, 4.5)), c(1L, 5L))
})

test_that("the formula method one-hot codes factors and predicts on new data", {
  set.seed(28)
  df <- data.frame(a = rnorm(12), g = factor(rep(c("p", "q", "r"), 4)))
  map <- random_features(~ a + g, data = df, kernel = gaussian_kernel(1), D = 8)
  expect_equal(map$input$d, 4L)
  expect_equal(map$input$names, c("a", "gp", "gq", "gr"))
  x <- cbind(a = df$a, gp = df$g == "p", gq = df$g == "q", gr = df$g == "r")
  expect_equal(predict(map, df[5:6, ]), ref_phase_map(x[5:6, ], map$omega, map$phase),
               ignore_attr = TRUE, tolerance = 1e-14)
  expect_error(predict(map, data.frame(a = 1)), "'newdata'")
  expect_error(predict(map, data.frame(a = 1, g = "zz")), "'newdata'")
  expect_error(random_features(y ~ a, data = cbind(df, y = 1)), "one-sided")
})

test_that("predict refuses data that does not fit the map", {
  x <- matrix(rnorm(40), 20, 2, dimnames = list(NULL, c("u", "v")))
  map <- random_features(x, gaussian_kernel(1), D = 10)
  expect_error(predict(map, x[, 1, drop = FALSE]), "'newdata' has 1 column\\(s\\) but the map was fitted on 2")
  expect_error(predict(map, cbind(x, 1)), "'newdata' has 3")
  expect_error(predict(map, data.frame(u = 1, w = 2)), "lacks column\\(s\\).*v")
  expect_error(predict(map, rbind(x, NA)), "'newdata'.*NA")
  expect_error(predict(map, x[0, ]), "'newdata' has no rows")
  expect_error(predict(map), "'newdata' is required")
  expect_error(predict(map, x, nthreads = -1), "'nthreads'")
  expect_error(predict(map, x, foo = 1), "unused argument")
  wide <- random_features(1:10, gaussian_kernel(1), D = 1e5)
  expect_error(predict(wide, rep(1, 1e7)), "would need [0-9.]+ TB of memory")
})

test_that("random_features refuses bad arguments, naming them", {
  x <- matrix(rnorm(40), 20, 2)
  expect_error(random_features(x, gaussian_kernel(1), D = 0), "'D'")
  expect_error(random_features(x, gaussian_kernel(1), D = -5), "'D'")
  expect_error(random_features(x, gaussian_kernel(1), D = 10.5), "'D'")
  expect_error(random_features(x, gaussian_kernel(1), D = NA), "'D'")
  expect_error(random_features(x, gaussian_kernel(1), D = "10"), "'D'")
  expect_error(random_features(x, gaussian_kernel(1), D = 10, type = "sine"), "'type'")
  expect_error(random_features(x, "gaussian", D = 10), "'kernel'")
  expect_error(random_features(x, polynomial_kernel(), D = 10, type = "pair"))
  expect_error(random_features(rbind(x, NaN)), "'x'")
  expect_error(random_features(matrix(numeric(0), 0, 2)), "'x' has no rows")
  expect_error(random_features(data.frame(a = letters)), "non-numeric")
  expect_error(random_features(x, gaussian_kernel(1), D = 10, seed = "a"), "'seed'")
  expect_error(random_features(x, gaussian_kernel(1), D = 10, sigma = 2), "unused argument")
  expect_error(random_features(x, gaussian_kernel(1), D = 2^40), "'D'")
})

test_that("kernel_approx_error agrees with a direct computation", {
  set.seed(29)
  x <- matrix(rnorm(60), 30, 2)
  map <- random_features(x, laplace_kernel(1), D = 100, type = "pair")
  e <- kernel_approx_error(map, x)
  E <- tcrossprod(ref_pair_map(x, map$omega)) - ref_kernel(map$kernel, x)
  expect_equal(e$max, max(abs(E)), tolerance = 1e-12)
  expect_equal(e$rms, sqrt(mean(E^2)), tolerance = 1e-12)
  expect_output(print(e), "max")
  expect_error(kernel_approx_error(list(), x), "'map'")
  expect_error(kernel_approx_error(map, x[, 1]), "'x' has 1 column")
})

test_that("maps print and summarise", {
  x <- matrix(rnorm(40), 20, 2)
  map <- random_features(x, D = 10, type = "pair")
  expect_output(print(map), "pair map")
  expect_output(print(map), "median heuristic")
  expect_output(print(summary(map)), "frequency norms")
})
