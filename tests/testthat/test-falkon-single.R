# falkon() in single precision (falkon_control(precision), src/falkon.c): K_nm stored in
# float (the cache and every evaluated kernel block rounded to float); with at most 8
# right-hand sides the passes' products run on those values in double, with more in float
# (sgemm.c).  At a given precision the results are identical for any thread count, block
# size, cache and chunking; on small well-conditioned problems the predictions agree with
# double's to 1e-4 relative.

single_pass <- function(x, C, ker, U, V = NULL, w = NULL, K = NULL, single = TRUE, block = 0,
                        nth = 1L, keep = TRUE) {
  .Call(bochner:::C_falkon_knm_apply, x, C, bochner:::kernel_code(ker),
        bochner:::kernel_parameters(ker), U, V, w, NULL, as.double(block), keep, nth, K, single)
}
f32 <- function(x) {
  y <- readBin(writeBin(as.vector(x), raw(), size = 4), "double", n = length(x), size = 4)
  dim(y) <- dim(x)
  y
}

test_that("a single-precision pass is the double pass on the float-rounded kernel matrix", {
  set.seed(31)
  n <- 2600; m <- 150
  x <- matrix(rnorm(n * 4), n); C <- x[sample(n, m), ]
  ker <- gaussian_kernel(1.3)
  code <- bochner:::kernel_code(ker); par <- bochner:::kernel_parameters(ker)
  U <- matrix(rnorm(m * 3), m); V <- matrix(rnorm(n * 3), n); w <- runif(n)
  Kf <- .Call(bochner:::C_falkon_kernel_cache, x, C, code, par, 0, 1L, TRUE)
  Kd <- .Call(bochner:::C_falkon_kernel_cache, x, C, code, par, 0, 1L, FALSE)
  expect_type(Kf, "raw")
  expect_identical(attr(Kf, "float_dim"), as.integer(c(n, m)))
  Kr <- f32(Kd)
  # the float cache is the double one rounded; block sizes and threads do not matter
  expect_identical(.Call(bochner:::C_float_matrix, Kd), Kf)
  expect_identical(.Call(bochner:::C_falkon_kernel_cache, x, C, code, par, 37, 2L, TRUE), Kf)
  s <- single_pass(x, C, ker, U, V, w)
  # the double pass on the rounded matrix, as a cached double K: the same doubles
  expect_identical(single_pass(x, C, ker, U, V, w, K = Kr, single = FALSE), s)
  expect_equal(s[[1]], crossprod(Kr, w * (Kr %*% U + V)), tolerance = 1e-12)
  expect_equal(s[[2]], Kr %*% U, tolerance = 1e-12)
  # cached in float or evaluated, any block, any thread count: bit for bit
  expect_identical(single_pass(x, C, ker, U, V, w, K = Kf), s)
  expect_identical(single_pass(x, C, ker, U, V, w, K = Kf, block = 700, nth = 2L), s)
  expect_identical(single_pass(x, C, ker, U, V, w, block = 300, nth = 2L), s)
  # against double: the kernel's rounding alone (6e-8 relative an entry)
  d <- single_pass(x, C, ker, U, V, w, single = FALSE)
  expect_lt(max(abs(s[[1]] - d[[1]])) / max(abs(d[[1]])), 1e-6)
  # H = K' W K (U the identity): symmetric, the rounded matrix's
  H <- single_pass(x, C, ker, diag(m), w = w, keep = FALSE)
  expect_identical(H, t(H))
  expect_equal(H, crossprod(Kr, w * Kr), tolerance = 1e-12)
  expect_identical(single_pass(x, C, ker, diag(m), w = w, K = Kf, block = 1100, nth = 2L,
                               keep = FALSE), H)
  expect_error(single_pass(x, C, ker, U, K = Kf[-1]), "'K'")
  # more than 8 right-hand sides: the products in float (U and T rounded, sgemm.c's
  # float K-blocks of 256 summed in double), the same doubles from the float cache or an
  # evaluated pass, any block and thread count; within sgemm.c's bound (1.6e-5 of the
  # sum of the absolute products) of the plain-R products of the rounded operands
  U12 <- matrix(rnorm(m * 12), m)
  s12 <- single_pass(x, C, ker, U12, w = w)
  expect_identical(single_pass(x, C, ker, U12, w = w, K = Kf, block = 900, nth = 2L), s12)
  expect_identical(single_pass(x, C, ker, U12, w = w, block = 300, nth = 2L), s12)
  U12f <- f32(U12)
  expect_lte(max(abs(s12[[2]] - Kr %*% U12f) / (abs(Kr) %*% abs(U12f))), 1.6e-5)
  Tf <- f32(w * s12[[2]])
  expect_lte(max(abs(s12[[1]] - crossprod(Kr, Tf)) / crossprod(abs(Kr), abs(Tf))), 1.6e-5)
  # so it differs from the double chains on the rounded matrix by float's rounding only
  d12 <- single_pass(x, C, ker, U12, w = w, K = Kr, single = FALSE)
  expect_false(identical(d12, s12))
  expect_lt(max(abs(s12[[1]] - d12[[1]])) / max(abs(d12[[1]])), 1e-5)
})

test_that("R's column threshold for float products is the C rule's", {
  # falkon_jitter() and falkon_single() decide before any pass runs: their threshold must
  # be the one bochner_falkon_float_products() applies in the passes
  set.seed(37)
  n <- 500; m <- 40
  x <- matrix(rnorm(n * 3), n); C <- x[sample(n, m), ]
  ker <- gaussian_kernel(1.1)
  Kr <- f32(.Call(bochner:::C_falkon_kernel_cache, x, C, bochner:::kernel_code(ker),
                  bochner:::kernel_parameters(ker), 0, 1L, FALSE))
  at <- bochner:::falkon_float_products_above
  for (k in c(at, at + 1L)) {
    U <- matrix(rnorm(m * k), m)
    s <- single_pass(x, C, ker, U)
    d <- single_pass(x, C, ker, U, K = Kr, single = FALSE)
    # at the threshold the double chains on the float values; above it float's products
    expect_identical(identical(s, d), k <= at)
  }
})

test_that("float products: an evaluated pass by groups on two threads equals one thread", {
  # enough rows for whole groups a thread each (src/falkon.c's groups_evaluated()): the
  # right-hand side's pass (V alone) and a product pass, 10 columns
  set.seed(36)
  n <- 9300; m <- 100    # n m (2 k + d) above the threaded passes' least work
  x <- matrix(rnorm(n * 2), n); C <- x[sample(n, m), ]
  ker <- gaussian_kernel(0.8)
  V <- matrix(rnorm(n * 10), n); U <- matrix(rnorm(m * 10), m); w <- runif(n)
  Kf <- .Call(bochner:::C_falkon_kernel_cache, x, C, bochner:::kernel_code(ker),
              bochner:::kernel_parameters(ker), 0, 1L, TRUE)
  for (args in list(list(U = NULL, V = V), list(U = U, V = NULL), list(U = U, V = V))) {
    one <- single_pass(x, C, ker, args$U, args$V, w, keep = FALSE)
    expect_identical(single_pass(x, C, ker, args$U, args$V, w, nth = 2L, keep = FALSE), one)
    expect_identical(single_pass(x, C, ker, args$U, args$V, w, K = Kf, nth = 2L, keep = FALSE),
                     one)
  }
})

test_that("the float cache read in place equals the evaluated pass on every path", {
  # a fresh process per BOCHNER_MAX_ISA: gemm.c's _xf kernels (paths 0, 1) against the
  # double kernels on the rounded blocks
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(find.package("bochner"))
  code <- paste0(".libPaths(c('", lib, "', .libPaths())); library(bochner); set.seed(35);",
                 "x <- matrix(rnorm(1300 * 3), 1300); C <- x[1:77, ]; U <- matrix(rnorm(77 * 5), 77);",
                 "w <- runif(1300); k <- gaussian_kernel(1); cd <- bochner:::kernel_code(k);",
                 "p <- bochner:::kernel_parameters(k);",
                 "K <- .Call(bochner:::C_falkon_kernel_cache, x, C, cd, p, 0, 1L, TRUE);",
                 "a <- .Call(bochner:::C_falkon_knm_apply, x, C, cd, p, U, NULL, w, NULL, 0, TRUE, 2L, K, TRUE);",
                 "b <- .Call(bochner:::C_falkon_knm_apply, x, C, cd, p, U, NULL, w, NULL, 0, TRUE, 1L, NULL, TRUE);",
                 "cat(.Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE), identical(a, b))")
  for (cap in c("0", "1")) {
    out <- system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                   env = paste0("BOCHNER_MAX_ISA=", cap))
    got <- strsplit(tail(out, 1), " ")[[1]]
    expect_lte(as.integer(got[1]), as.integer(cap), label = paste(out, collapse = "\n"))
    expect_identical(got[2], "TRUE", label = paste(out, collapse = "\n"))
  }
})

test_that("the single-precision pass in parts, folded in order, is the pass over all rows", {
  set.seed(32)
  n <- 3100; m <- 40
  x <- matrix(rnorm(n * 3), n); C <- x[sample(n, m), ]
  ker <- laplace_kernel(2)
  code <- bochner:::kernel_code(ker); par <- bochner:::kernel_parameters(ker)
  w <- runif(n)
  # 2 columns: double chains on the float kernel; 10: float products
  for (U in list(matrix(rnorm(m * 2), m), matrix(rnorm(m * 10), m))) {
    one <- single_pass(x, C, ker, U, w = w, keep = FALSE)
    part <- function(r, single = TRUE)
      .Call(bochner:::C_falkon_knm_part, x[r, , drop = FALSE], C, code, par, U, NULL, w[r], 0,
            FALSE, 2L, as.double(r[1] - 1), n, single)
    for (cuts in list(c(1000, 1030), c(1, 2047, 2049, 3000), sort(sample(n - 1, 9)))) {
      b <- c(0, cuts, n)
      st <- NULL
      for (i in seq_len(length(b) - 1L)) {
        st <- .Call(bochner:::C_falkon_pass_fold, st, part((b[i] + 1):b[i + 1]), n, C, code, par)
      }
      expect_identical(.Call(bochner:::C_falkon_pass_finish, st, NULL), one)
    }
  }
  # parts of the two precisions do not fold together
  expect_error(.Call(bochner:::C_falkon_pass_fold, part(1:1500), part(1501:n, FALSE), n, C,
                     code, par), "different")
})

test_that("single-precision fits: identical for any threads, blocks, cache and chunks", {
  set.seed(33)
  n <- 2500
  x <- matrix(rnorm(n * 5), n, dimnames = list(NULL, paste0("v", 1:5)))
  y <- sin(x[, 1]) + x[, 2]^2 / 3 + rnorm(n, sd = 0.1)
  xt <- matrix(rnorm(400 * 5), 400, dimnames = list(NULL, paste0("v", 1:5)))
  fit <- function(nthreads = 1L, ...)
    falkon(x, y, m = 200, lambda = 1e-3, iter = 15, seed = 4, nthreads = nthreads,
           control = falkon_control(precision = "single", ...))
  a <- fit()
  pa <- predict(a, xt)
  expect_identical(predict(fit(2L), xt), pa)
  expect_identical(predict(fit(2L, block_rows = 333), xt), pa)
  expect_identical(predict(fit(1L, cache_bytes = 0), xt), pa)
  # on chunks: the in-memory fit
  df <- data.frame(x, y = y)
  ch <- data_chunks(list(df[1:900, ], df[901:1700, ], df[1701:n, ]))
  fc <- falkon(ch, y = "y", m = a$centres, lambda = 1e-3, iter = 15, seed = 4,
               nthreads = 1L, control = falkon_control(precision = "single"), scale = FALSE)
  fm <- falkon(x, y, m = a$centres, lambda = 1e-3, iter = 15, seed = 4, nthreads = 1L,
               control = falkon_control(precision = "single"), scale = FALSE)
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(predict(fc, xt), predict(fm, xt))
  # ten classes: every pass multiplies in float; again the same fit every way
  yc <- cut(x[, 1] + x[, 2] * x[, 3], quantile(x[, 1] + x[, 2] * x[, 3], 0:10 / 10),
            include.lowest = TRUE, labels = letters[1:10])
  fit10 <- function(nthreads = 1L, ...)
    falkon(x, yc, m = 150, lambda = 1e-4, iter = 10, seed = 6, nthreads = nthreads,
           control = falkon_control(precision = "single", ...))
  a <- fit10()
  expect_identical(a$precision, "single")
  expect_output(print(a), "kernel blocks in single precision")
  expect_identical(falkon(x, yc, m = 50, lambda = 1e-4, iter = 3, seed = 6,
                          control = falkon_control(precision = "double"))$precision, "double")
  pa <- predict(a, xt, type = "decision")
  expect_identical(predict(fit10(2L, block_rows = 700), xt, type = "decision"), pa)
  expect_identical(predict(fit10(1L, cache_bytes = 0), xt, type = "decision"), pa)
  dc <- data.frame(x, y = yc)
  ch <- data_chunks(list(dc[1:1100, ], dc[1101:n, ]))
  fc <- falkon(ch, y = "y", m = a$centres, lambda = 1e-4, iter = 10, seed = 6, nthreads = 2L,
               control = falkon_control(precision = "single"), scale = FALSE)
  fm <- falkon(x, yc, m = a$centres, lambda = 1e-4, iter = 10, seed = 6, nthreads = 1L,
               control = falkon_control(precision = "single"), scale = FALSE)
  expect_identical(fc$alpha, fm$alpha)
})

test_that("on small problems single precision's predictions agree with double's to 1e-4", {
  set.seed(34)
  n <- 3000
  x <- matrix(rnorm(n * 5), n)
  xt <- matrix(rnorm(500 * 5), 500)
  yr <- sin(x[, 1]) + x[, 2]^2 / 3 + rnorm(n, sd = 0.1)
  yc <- factor(ifelse(x[, 1] + x[, 2]^2 > 1, "a", ifelse(x[, 3] > 0, "b", "c")))
  s10 <- x[, 1] + x[, 2] * x[, 3]
  y10 <- cut(s10, quantile(s10, 0:10 / 10), include.lowest = TRUE, labels = letters[1:10])
  # ten classes: the passes multiply in float (2e-5 here; 2e-4 at lambda = 1e-4)
  for (case in list(list(yr, 1e-3, 300), list(yr, 1e-4, 300), list(yr, 1e-2, 50),
                    list(yc, 1e-3, 200), list(y10, 1e-3, 200))) {
    f <- function(p) falkon(x, case[[1]], m = case[[3]], lambda = case[[2]], iter = 20,
                            seed = 5, control = falkon_control(precision = p))
    s <- f("single"); d <- f("double")
    type <- if (is.factor(case[[1]])) "decision" else "response"
    ps <- predict(s, xt, type = type); pd <- predict(d, xt, type = type)
    expect_lt(max(abs(ps - pd)) / max(abs(pd)), 1e-4)
    expect_type(s$alpha, "double")
  }
})

test_that("falkon_control(precision) and the rule of 'auto'", {
  expect_identical(falkon_control()$precision, "auto")
  expect_identical(falkon_control(precision = "single")$precision, "single")
  expect_error(falkon_control(precision = "half"), "precision")
  single <- bochner:::falkon_single
  expect_true(single(falkon_control(precision = "single"), 100, 10))
  expect_false(single(falkon_control(precision = "double"), 1e7, 1e4))
  # auto: single with more than 8 classes and n m >= 10^7 (the passes multiply in float),
  # or when K_nm fits the cache in float and not in double and no lambda is below 1e-7
  # (the default candidates reach 1e-8); the memory limit set, not read
  old <- options(bochner.max_bytes = 64e9)
  on.exit(options(old))
  ctl <- falkon_control(lambdas = c(1e-3, 1e-5), cache_bytes = 1e9)
  expect_true(single(ctl, 1e5, 2000))            # 1.6 GB in double, 0.8 GB in float
  expect_false(single(ctl, 1e5, 1000))           # cached in double too
  expect_false(single(ctl, 1e5, 4000))           # not cached either way
  expect_false(single(falkon_control(cache_bytes = 1e9), 1e5, 2000))   # lambda 1e-8
  expect_false(single(falkon_control(lambdas = 1e-4), 1000, 100))
  expect_true(single(falkon_control(), 12600, 2958, 26))     # Letter
  expect_false(single(falkon_control(), 12600, 2958, 8))
  expect_false(single(falkon_control(), 2000, 1000, 26))      # small
  expect_false(single(falkon_control(precision = "double"), 12600, 2958, 26))
  # the jitter: float's epsilon where the passes multiply in float (more than 8
  # columns in a path) with a candidate lambda below 1e-7
  jitter <- bochner:::falkon_jitter
  expect_identical(jitter(TRUE, "auto", falkon_control(), 3), 2^-23)     # 9 columns
  expect_identical(jitter(TRUE, 1e-8, falkon_control(), 26), 2^-23)
  expect_identical(jitter(TRUE, "auto", falkon_control(), 2), 1e-13)
  expect_identical(jitter(TRUE, c(1e-4, 1e-6), falkon_control(), 26), 1e-13)
  expect_identical(jitter(FALSE, "auto", falkon_control(), 26), 1e-13)
  # an old control list without the entry is "auto"
  ctl$precision <- NULL
  expect_true(single(ctl, 1e5, 2000))
})
