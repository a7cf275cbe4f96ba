# Structured orthogonal random features: random_features(sampling = "structured").
# References in plain R: Sylvester's Hadamard matrix, the explicit frequency
# matrix built from the stored signs and norms, and the Fourier maps of
# helper-reference.R.

fwht <- function(x) .Call(getFromNamespace("C_fwht", "bochner"), x)

sylvester <- function(p) {
  H <- matrix(1, 1, 1)
  while (nrow(H) < p) H <- rbind(cbind(H, H), cbind(H, -H))
  H
}

# The unscaled p x p matrix Hn D1 Hn D2 Hn D3 of block b (Hn = H / sqrt(p)).
ref_block_matrix <- function(map, b) {
  p <- map$p
  Hn <- sylvester(p) / sqrt(p)
  s <- map$sign[, , b]
  Hn %*% diag(s[, 1]) %*% Hn %*% diag(s[, 2]) %*% Hn %*% diag(s[, 3])
}

# The d x D frequency matrix: column j = (b - 1) p + k is radial[j] times
# the first d entries of row k of block b's matrix.
ref_frequencies <- function(map, d) {
  B <- dim(map$sign)[3]
  W <- do.call(cbind, lapply(seq_len(B), function(b) {
    t(ref_block_matrix(map, b)[, seq_len(d), drop = FALSE])
  }))
  sweep(W[, seq_len(map$D), drop = FALSE], 2, map$radial, "*")
}

test_that("the fast Walsh-Hadamard transform is Sylvester's Hadamard matrix", {
  set.seed(1)
  for (p in 2^(1:10)) {
    x <- matrix(rnorm(p * 11), p, 11)   # 11 columns: a full and a partial group of 8
    expect_equal(fwht(x), sylvester(p) %*% x, tolerance = 1e-13, label = paste("p =", p))
  }
  expect_error(fwht(matrix(1, 3, 2)), "power of 2")
  expect_error(fwht(1:4), "double matrix")
})

test_that("the structured map's layout: p, blocks, signs, D frequencies", {
  set.seed(2)
  x <- matrix(rnorm(40), 8, 5)
  map <- random_features(x, gaussian_kernel(1), D = 70, sampling = "structured")
  expect_s3_class(map, c("structured_features", "random_features"))
  expect_identical(map$p, 32L)
  expect_identical(dim(map$sign), c(32L, 3L, 3L))
  expect_true(is.integer(map$sign) && all(map$sign %in% c(-1L, 1L)))
  expect_length(map$radial, 70)
  expect_length(map$phase, 70)
  expect_identical(map$n_features, 70L)
  expect_identical(map$sampling, "structured")
  expect_identical(dim(predict(map, x)), c(8L, 70L))
  pair <- random_features(x, gaussian_kernel(1), D = 70, type = "pair", sampling = "structured")
  expect_null(pair$phase)
  expect_identical(dim(predict(pair, x)), c(8L, 140L))
  big <- random_features(matrix(0, 2, 100), gaussian_kernel(1), D = 10, sampling = "structured")
  expect_identical(big$p, 128L)
  expect_identical(dim(big$sign), c(128L, 3L, 1L))
})

test_that("the C transform matches the explicit frequency matrix (phase and pair maps)", {
  set.seed(3)
  cases <- list(list(d = 5, D = 70, n = 13), list(d = 100, D = 300, n = 21),
                list(d = 1, D = 7, n = 1), list(d = 32, D = 1, n = 9),
                list(d = 64, D = 64, n = 17))
  for (cs in cases) {
    x <- matrix(rnorm(cs$n * cs$d), cs$n, cs$d)
    for (kern in list(gaussian_kernel(1.7), matern_kernel(0.8, nu = 2.5))) {
      lab <- sprintf("%s d = %d D = %d n = %d", kern$name, cs$d, cs$D, cs$n)
      phase <- random_features(x, kern, D = cs$D, sampling = "structured")
      W <- ref_frequencies(phase, cs$d)
      expect_equal(predict(phase, x), ref_phase_map(x, W, phase$phase), tolerance = 1e-12,
                   label = paste("phase", lab))
      pair <- random_features(x, kern, D = cs$D, type = "pair", sampling = "structured")
      expect_equal(predict(pair, x), ref_pair_map(x, ref_frequencies(pair, cs$d)),
                   tolerance = 1e-12, label = paste("pair", lab))
    }
  }
})

test_that("each block's matrix H D1 H D2 H D3 is orthogonal; norms follow the radial law", {
  set.seed(4)
  map <- random_features(matrix(0, 1, 40), gaussian_kernel(2), D = 150, sampling = "structured")
  for (b in 1:3) {
    M <- ref_block_matrix(map, b)
    expect_equal(tcrossprod(M), diag(64), tolerance = 1e-13)
  }
  # the Gaussian kernel's norms are chi_p / sigma: E r^2 = p / sigma^2
  set.seed(5)
  r <- random_features(matrix(0, 1, 3), gaussian_kernel(2), D = 20000,
                       sampling = "structured")$radial
  expect_equal(mean(r^2), 32 / 4, tolerance = 4 * sqrt(2 * 32) / 4 / sqrt(20000) / 8)
})

test_that("z(x).z(y) averages to the kernel, within the noise and the documented bias", {
  # Mean over 600 maps of z(x).z(y) for pairs at distance 0.5, 1 and 2 sigma,
  # pair map, D = 64 (two blocks).  Measured (3000 maps, D = p): |bias| below
  # 0.01 everywhere for d = 1 to 64 (see ?random_features); the tolerance is
  # 4 standard errors of the mean of 600 plus that 0.01.  A wrong radial law
  # (chi_d instead of chi_p) or scale misses by 0.1 to 0.6.
  set.seed(6)
  for (d in c(5, 16)) {
    for (kern in list(gaussian_kernel(1), matern_kernel(1, nu = 1.5))) {
      u <- rnorm(d)
      u <- u / sqrt(sum(u^2))
      X <- rbind(0, outer(c(0.5, 1, 2), u))
      K <- ref_kernel(kern, X)[1, -1]
      est <- t(replicate(600, {
        m <- random_features(X, kern, D = 64, type = "pair", sampling = "structured")
        Z <- predict(m, X)
        drop(Z[-1, ] %*% Z[1, ])
      }))
      se <- apply(est, 2, stats::sd) / sqrt(nrow(est))
      expect_true(all(abs(colMeans(est) - K) < 4 * se + 0.01),
                  label = sprintf("%s d = %d: bias %s, se %s", kern$name, d,
                                  paste(signif(colMeans(est) - K, 2), collapse = " "),
                                  paste(signif(se, 2), collapse = " ")))
    }
  }
})

test_that("structured maps predict identically for any thread count and row chunk, and persist", {
  set.seed(7)
  x <- matrix(runif(301 * 37), 301, 37)
  for (type in c("phase", "pair")) {
    map <- random_features(x, gaussian_kernel("median"), D = 150, type = type,
                           sampling = "structured", seed = 3)
    Z <- predict(map, x, nthreads = 1)
    expect_identical(predict(map, x, nthreads = 2), Z)
    expect_identical(rbind(predict(map, x[1:7, ]), predict(map, x[8:263, ]),
                           predict(map, x[264:301, ])), Z)
    expect_identical(predict(map, x[151, , drop = FALSE]), Z[151, , drop = FALSE])
    path <- tempfile(fileext = ".rds")
    saveRDS(map, path)
    back <- readRDS(path)
    unlink(path)
    expect_identical(back, map)
    expect_identical(predict(back, x), Z)
    # the same seed, the same map
    expect_identical(random_features(x, gaussian_kernel("median"), D = 150, type = type,
                                     sampling = "structured", seed = 3), map)
  }
})

test_that("structured maps work through the generic code: print, summary, errors, fits' paths", {
  set.seed(8)
  x <- matrix(rnorm(200 * 40), 200, 40)
  map <- random_features(x, gaussian_kernel(6), D = 512, sampling = "structured")
  expect_output(print(map), "Structured orthogonal random features")
  expect_output(print(summary(map)), "512 features of 40 input")
  err <- kernel_approx_error(map, x[1:100, ])
  expect_lt(err$rms, 0.05)
  # the paths the SVM, ridge and k-means fits take for a map (their defaults)
  Z <- predict(map, x)
  expect_identical(getFromNamespace("transform_features_t", "bochner")(map, x, 1L), t(Z))
  w <- matrix(rnorm(512 * 2), 512, 2)
  dec <- getFromNamespace("feature_decision", "bochner")(map, x, w, c(0.5, -1), 1L)
  expect_equal(dec, Z %*% w + rep(c(0.5, -1), each = 200), tolerance = 1e-12)
})

test_that("non-isotropic kernels are refused with an error naming 'sampling'", {
  x <- matrix(rnorm(20), 10)
  expect_error(random_features(x, laplace_kernel(1), D = 10, sampling = "structured"),
               "'sampling'.*\"qmc\" or \"iid\"")
  expect_error(random_features(x, cauchy_kernel(1), D = 10, sampling = "structured"),
               "'sampling'")
  expect_error(random_features(x, polynomial_kernel(2), D = 10, sampling = "structured"))
})
