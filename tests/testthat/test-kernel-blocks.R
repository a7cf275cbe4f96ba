# The vectorised exp (src/fastmath.c) and the fused Gram blocks of the Euclidean kernels
# (src/kernel_blocks.c): product tile + row norms + clamp + exp, in cache.
fast_exp <- function(x, scale = 1) .Call(bochner:::C_fast_exp, as.double(x), as.double(scale))
ulps <- function(got, ref) abs(got - ref) / 2^(floor(log2(abs(ref))) - 52)

# the squared distances by direct differences: no cancellation
direct_d2 <- function(a, b) {
  out <- matrix(0, nrow(a), nrow(b))
  for (k in seq_len(ncol(a))) out <- out + outer(a[, k], b[, k], "-")^2
  out
}

test_that("exp is within 2 ulp of libm on its whole vector range, exp(0) = 1", {
  set.seed(1)
  x <- c(runif(2e5, -708, 709), runif(2e5, -2, 2), -708, 709, -0.5 * log(2), 0.5 * log(2))
  got <- fast_exp(x)
  expect_lte(max(ulps(got, exp(x))), 2)
  expect_identical(fast_exp(c(0, -0)), c(1, 1))
  # the scale multiplies first: exp(scale * x)
  expect_lte(max(ulps(fast_exp(x[1:1000], -0.25), exp(x[1:1000] * -0.25))), 2)
})

test_that("exp outside [-708, 709], NaN and Inf give exactly what libm gives", {
  x <- c(-708.0001, -720, -745, -745.2, -746, -1e300, 709.0001, 709.7, 710, 1e300,
         -Inf, Inf, NaN, NA, 1e-320, -1e-320)
  expect_identical(fast_exp(x), exp(x))
  # scattered in a long vector, patched one by one, the rest untouched
  set.seed(2)
  y <- runif(5000, -50, 50)
  at <- sample(5000, 40)
  y[at] <- sample(x, 40, replace = TRUE)
  got <- fast_exp(y)
  expect_identical(got[at], exp(y[at]))
  expect_lte(max(ulps(got[-at], exp(y[-at]))), 2)
  expect_identical(fast_exp(numeric(0)), numeric(0))
})

test_that("fused Gaussian and Matern blocks match direct differences (edge tiles, d = 1)", {
  set.seed(3)
  # rows and columns across the 480 x 64 tiles and the 24/12 x 8/4 micro-kernels
  for (shape in list(c(1, 5, 1), c(7, 9, 3), c(481, 65, 2), c(25, 130, 17), c(30, 20, 64))) {
    nx <- shape[1]; ny <- shape[2]; d <- shape[3]
    a <- matrix(rnorm(nx * d, 3), nx); b <- matrix(rnorm(ny * d, 3), ny)
    d2 <- direct_d2(a, b)
    for (s in c(0.7, 3)) {
      # relative error of k from that of the squared distance: eps * (|x|^2 + |y|^2) / s^2
      tol <- 64 * .Machine$double.eps * (1 + max(d2) / s^2)
      g <- kernel_matrix(gaussian_kernel(s), a, b)
      expect_lt(max(abs(g / exp(-d2 / (2 * s^2)) - 1)), tol)
      for (nu in c(0.5, 1.5, 2.5)) {
        z <- sqrt(2 * nu * d2) / s
        ref <- exp(-z) * switch(as.character(nu), "0.5" = 1, "1.5" = 1 + z, "2.5" = 1 + z + z^2 / 3)
        expect_lt(max(abs(kernel_matrix(matern_kernel(s, nu), a, b) - ref)), 1e-12)
      }
    }
  }
})

test_that("Gaussian blocks far out: the exp's libm fix-up inside the fused loop (underflow)", {
  set.seed(4)
  # squared distances / (2 s^2) from 0 to about 1500: normal, subnormal and zero values
  a <- matrix(rnorm(300 * 2, sd = 12), 300)
  b <- matrix(rnorm(70 * 2, sd = 12), 70)
  d2 <- direct_d2(a, b)
  ref <- exp(-d2 / 2)
  g <- kernel_matrix(gaussian_kernel(1), a, b)
  expect_true(any(ref == 0) && any(ref > 0 & ref < 2.3e-308) && any(ref > 1e-3))
  expect_true(all(g >= 0 & g <= 1))
  big <- ref > 1e-290
  expect_lt(max(abs(g[big] / ref[big] - 1)), 64 * .Machine$double.eps * (1 + max(d2)))
  expect_true(all(g[ref < 1e-320] < 1e-300))
  expect_identical(kernel_matrix(gaussian_kernel(1), a, b, nthreads = 2), g)
})

test_that("blocks never exceed 1, duplicates give 1, self Gram is symmetric with unit diagonal", {
  set.seed(4)
  a <- matrix(rnorm(600 * 5, 100), 600)          # far from 0: cancellation in |x|^2 + |y|^2 - 2xy
  b <- a[c(3, 3, 599, 17, 100:160), ]
  g <- kernel_matrix(gaussian_kernel(0.01), a, b)
  expect_lte(max(g), 1)                           # the clamp at 0 of the squared distance
  expect_gt(min(g[cbind(c(3, 3, 599, 17), 1:4)]), 1 - 1e-9)
  for (k in list(gaussian_kernel(2), matern_kernel(2, 1.5))) {
    s <- kernel_matrix(k, a)
    expect_identical(s, t(s))
    expect_identical(diag(s), rep(1, 600))
    expect_equal(s[, 1:65], kernel_matrix(k, a, a[1:65, ]), tolerance = 1e-13)
  }
})

test_that("blocks are identical for any thread count and any row blocking", {
  set.seed(5)
  x <- matrix(rnorm(1100 * 16), 1100); C <- matrix(rnorm(300 * 16), 300)
  for (k in list(gaussian_kernel(3), matern_kernel(2, 2.5))) {
    one <- kernel_matrix(k, x, C, nthreads = 1)
    expect_identical(kernel_matrix(k, x, C, nthreads = 2), one)
    # rows in blocks of other sizes (falkon's row blocks): every row identical
    parts <- lapply(split(seq_len(1100), rep(1:3, c(37, 600, 463))), function(i)
      kernel_matrix(k, x[i, , drop = FALSE], C, nthreads = 1))
    expect_identical(do.call(rbind, parts), one)
    expect_identical(kernel_matrix(k, x[1:500, ], nthreads = 2), kernel_matrix(k, x[1:500, ], nthreads = 1))
  }
})

test_that("the exp of the dot-product kernel is vectorised too", {
  set.seed(6)
  a <- matrix(rnorm(40 * 3), 40); b <- matrix(rnorm(30 * 3), 30)
  expect_equal(kernel_matrix(exponential_dot_kernel(2), a, b),
               exp(tcrossprod(a, b) / 4), tolerance = 1e-14)
})

test_that("every ISA path of exp and the blocks (BOCHNER_MAX_ISA) agrees with libm", {
  # a fresh R process per cap: the path is chosen once, when the package loads
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(find.package("bochner"))
  code <- paste0(".libPaths(c('", lib, "', .libPaths())); library(bochner);",
                 "set.seed(1); x <- c(runif(1e4, -708, 709), -800, 800, NaN, 0);",
                 "e <- .Call(bochner:::C_fast_exp, x, 1); r <- exp(x);",
                 "u <- abs(e - r) / 2^(floor(log2(abs(r))) - 52); u[!is.finite(r) | r == 0] <- 0;",
                 "a <- matrix(rnorm(700 * 4), 700); b <- matrix(rnorm(90 * 4), 90);",
                 "d2 <- 0; for (k in 1:4) d2 <- d2 + outer(a[, k], b[, k], '-')^2;",
                 "g <- kernel_matrix(gaussian_kernel(1.5), a, b);",
                 "cat(.Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE), max(u) <= 2,",
                 "identical(e[10001:10004], r[10001:10004]), max(abs(g - exp(-d2 / 4.5))) < 1e-13)")
  best <- .Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE)
  for (cap in as.character(0:best)) {
    out <- system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                   env = paste0("BOCHNER_MAX_ISA=", cap))
    expect_identical(strsplit(tail(out, 1), " ")[[1]], c(cap, "TRUE", "TRUE", "TRUE"),
                     label = paste(out, collapse = "\n"))
  }
})
