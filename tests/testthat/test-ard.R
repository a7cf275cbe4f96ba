# Per-input length scales (ARD): sigma as a vector, one scale per column.

# Plain-R ARD kernels, written from their formulas coordinate by coordinate.
ref_ard_kernel <- function(kernel, x, y = x) {
  s <- kernel$sigma
  f <- switch(kernel$name,
    gaussian = function(a, b) exp(-sum((a - b)^2 / (2 * s^2))),
    laplace = function(a, b) exp(-sum(abs(a - b) / s)),
    cauchy = function(a, b) prod(1 / (1 + (a - b)^2 / s^2)),
    matern = function(a, b) {
      nu <- kernel$nu
      z <- sqrt(2 * nu) * sqrt(sum(((a - b) / s)^2))
      if (z == 0) 1 else 2^(1 - nu) / gamma(nu) * z^nu * besselK(z, nu)
    })
  outer(seq_len(nrow(x)), seq_len(nrow(y)), Vectorize(function(i, j) f(x[i, ], y[j, ])))
}

ard_kernels <- function(s) {
  list(gaussian_kernel(s), laplace_kernel(s), cauchy_kernel(s), matern_kernel(s, 1.5),
       matern_kernel(s, 0.7))
}

test_that("ARD kernels with equal scales are the isotropic kernels, bit for bit", {
  set.seed(2)
  x <- matrix(rnorm(40), 10, 4)
  y <- matrix(rnorm(12), 3, 4)
  iso <- ard_kernels(0.8)
  ard <- ard_kernels(rep(0.8, 4))
  for (i in seq_along(iso)) {
    label <- paste(iso[[i]]$name, iso[[i]]$nu)
    expect_identical(kernel_matrix(ard[[i]], x, y), kernel_matrix(iso[[i]], x, y), label = label)
    expect_identical(kernel_matrix(ard[[i]], x), kernel_matrix(iso[[i]], x), label = label)
    set.seed(5)
    a <- spectral_sample(ard[[i]], 50, 4)
    set.seed(5)
    expect_identical(a, spectral_sample(iso[[i]], 50, 4), label = label)
  }
  for (sampling in c("iid", "orthogonal", "qmc")) {
    a <- random_features(x, gaussian_kernel(rep(1.5, 4)), D = 20, sampling = sampling, seed = 3)
    b <- random_features(x, gaussian_kernel(1.5), D = 20, sampling = sampling, seed = 3)
    expect_identical(a$omega, b$omega, label = sampling)
  }
  a <- nystrom_features(x, gaussian_kernel(rep(1.5, 4)), m = 5, seed = 1)
  b <- nystrom_features(x, gaussian_kernel(1.5), m = 5, seed = 1)
  expect_identical(predict(a, y), predict(b, y))
  d <- data.frame(x, r = rnorm(10))
  fa <- falkon(r ~ ., data = d, kernel = gaussian_kernel(rep(2, 4)), m = 5, seed = 1)
  fb <- falkon(r ~ ., data = d, kernel = gaussian_kernel(2), m = 5, seed = 1)
  expect_identical(predict(fa, d), predict(fb, d))
})

test_that("ARD kernel matrices match plain-R formulas", {
  set.seed(3)
  x <- matrix(rnorm(24), 8, 3)
  y <- matrix(rnorm(15), 5, 3)
  s <- c(0.5, 1.7, 3)
  for (k in ard_kernels(s)) {
    label <- paste(k$name, k$nu)
    expect_equal(kernel_matrix(k, x, y), ref_ard_kernel(k, x, y), tolerance = 1e-12,
                 label = label)
    expect_equal(kernel_matrix(k, x), ref_ard_kernel(k, x), tolerance = 1e-12, label = label)
  }
  # gamma as a vector: kernlab's inverse widths per input
  expect_equal(kernel_matrix(gaussian_kernel(gamma = 1 / (2 * s^2)), x, y),
               ref_ard_kernel(gaussian_kernel(s), x, y), tolerance = 1e-12)
})

test_that("ARD frequencies have coordinate j scaled by 1 / sigma_j", {
  s <- c(0.5, 2, 4)
  set.seed(1)
  w <- spectral_sample(gaussian_kernel(s), 20000, 3)
  # the sample sd of N(0, 1 / s^2) has relative sd about 1 / sqrt(2 n) = 0.005
  expect_equal(apply(w, 2, stats::sd) * s, rep(1, 3), tolerance = 0.03)
  # random features approximate the ARD kernel: errors O(1 / sqrt(D))
  x <- matrix(rnorm(30), 10, 3)
  for (sampling in c("iid", "orthogonal", "qmc")) {
    map <- random_features(x, gaussian_kernel(s), D = 4000, sampling = sampling, seed = 4)
    Z <- predict(map, x)
    expect_lt(max(abs(tcrossprod(Z) - ref_ard_kernel(gaussian_kernel(s), x))), 0.12,
              label = sampling)
  }
})

test_that("Nystrom, falkon and kernel k-means with ARD see x / sigma", {
  set.seed(4)
  x <- matrix(rnorm(60), 20, 3)
  s <- c(0.7, 1.5, 4)
  xs <- sweep(x, 2, s, "/")
  # all rows as landmarks: the map reproduces the exact ARD kernel
  map <- nystrom_features(x, gaussian_kernel(s), m = 20, seed = 1)
  expect_equal(tcrossprod(predict(map, x)), ref_ard_kernel(gaussian_kernel(s), x),
               tolerance = 1e-8)
  # the data-dependent landmark rules choose on x / sigma: the same rows and,
  # the divided inputs being the same numbers, the same features bit for bit
  for (rule in c("kmeans", "leverage", "rpcholesky")) {
    a <- nystrom_features(x, gaussian_kernel(s), m = 6, landmarks = rule, seed = 1)
    b <- nystrom_features(xs, gaussian_kernel(1), m = 6, landmarks = rule, seed = 1)
    expect_identical(a$index, b$index, label = rule)
    expect_identical(predict(a, x), predict(b, xs), label = rule)
  }
  # without standardisation, an ARD fit is the unit kernel's fit on x / sigma
  r <- sin(x[, 1]) + x[, 2]
  fa <- falkon(x, r, kernel = gaussian_kernel(s), m = 8, scale = FALSE, seed = 1)
  fb <- falkon(xs, r, kernel = gaussian_kernel(1), m = 8, scale = FALSE, seed = 1)
  expect_equal(predict(fa, x[1:5, ]), predict(fb, xs[1:5, ]), tolerance = 1e-12)
  expect_equal(fa$kernel$sigma, s)
  expect_match(paste(capture.output(print(fa)), collapse = "\n"), "ARD")
  ka <- kernel_kmeans(x, 2, gaussian_kernel(s), seed = 1)
  kb <- kernel_kmeans(xs, 2, gaussian_kernel(1), seed = 1)
  expect_identical(ka$cluster, kb$cluster)
  expect_equal(predict(ka, x[1:4, ], type = "distance"), predict(kb, xs[1:4, ], type = "distance"),
               tolerance = 1e-12)
})

test_that("a length scale vector of the wrong length is refused, naming sigma", {
  x <- matrix(rnorm(20), 5, 4)
  k <- gaussian_kernel(c(1, 2, 3))
  expect_error(kernel_matrix(k, x), "'sigma' has 3 length scales but the data have 4 columns")
  expect_error(spectral_sample(k, 10, 4), "'sigma' has 3 length scales")
  expect_error(random_features(x, k, D = 10), "'sigma' has 3 length scales")
  expect_error(nystrom_features(x, k, m = 3), "'sigma' has 3 length scales")
  expect_error(falkon(x, rnorm(5), kernel = k, m = 3), "'sigma' has 3 length scales")
  expect_error(gaussian_kernel(c(1, -2)), "'sigma' must hold positive")
  expect_error(gaussian_kernel(c(1, NA)), "'sigma' must hold positive")
  expect_error(random_features(x, gaussian_kernel(1:4), D = 10, sampling = "structured"),
               "'sampling' = \"structured\" takes one length scale")
})

test_that("rff_gp takes a kernel's per-input length scales as they are, with ard or without", {
  # they were once folded into their geometric mean unless ard = TRUE
  set.seed(4)
  x <- matrix(runif(600 * 3), 600)
  y <- sin(6 * x[, 1]) + 0.3 * x[, 2] + rnorm(600, sd = 0.1)
  k <- gaussian_kernel(c(0.3, 1.5, 40))
  f <- rff_gp(x, y, kernel = k, D = 64, optimize = FALSE, seed = 1, scale = FALSE)
  expect_identical(f$hyper$lengthscale, c(0.3, 1.5, 40))
  g <- rff_gp(x, y, kernel = k, D = 64, optimize = FALSE, seed = 1, scale = FALSE, ard = TRUE)
  expect_identical(predict(f, x[1:20, ]), predict(g, x[1:20, ]))
  # learned from there, one scale per input, to a likelihood no lower than the start's
  h <- rff_gp(x, y, kernel = k, D = 64, seed = 1, scale = FALSE)
  expect_length(h$hyper$lengthscale, 3L)
  expect_gt(as.numeric(logLik(h)), as.numeric(logLik(f)))
})
