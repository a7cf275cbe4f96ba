# Tests for the single-precision product (src/sgemm.c): float operands, float K-blocks of
# 256 summed into double results.
# isa: 0 = portable C, 1 = AVX2+FMA, 2 = AVX-512F, -1 = automatic; unsupported requests clamp down.
stile_product <- function(x, w, isa = -1L, transa = FALSE)
  .Call(bochner:::C_stile_product, x, w, as.integer(isa), transa)
sproduct <- function(a, b, transa = FALSE, threads = 1L)
  .Call(bochner:::C_sproduct, a, b, transa, as.integer(threads))
best_isa <- function() .Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE)

# x rounded to the nearest float, as a double (R has no float type)
f32 <- function(x) {
  y <- readBin(writeBin(as.vector(x), raw(), size = 4), "double", n = length(x), size = 4)
  dim(y) <- dim(x)
  y
}

# the chain of sgemm.c in plain R: per K-block of 256, a float sum from 0 in order
# (fused: s = f32(s + a b), the float product being exact in double; path 0: s =
# f32(s + f32(a b))), the blocks added in double.  Exact but for a double rounding of
# s + a b, which the fixed seeds below do not meet.
chain <- function(x, w, fused) {
  x <- f32(x); w <- f32(w)
  d <- ncol(x)
  c <- matrix(0, nrow(x), ncol(w))
  for (p in seq(1, max(d, 1), by = 256)) {
    s <- matrix(0, nrow(x), ncol(w))
    for (l in seq(p, min(d, p + 255))) {
      ab <- outer(x[, l], w[l, ])
      s <- if (fused) f32(s + ab) else f32(s + f32(ab))
    }
    c <- if (p == 1) s else c + s
  }
  c
}

test_that("the float product follows its chain exactly on every path", {
  set.seed(11)
  best <- best_isa()
  for (dims in list(c(1, 1, 1), c(5, 3, 7), c(49, 9, 300), c(26, 5, 520), c(97, 17, 257))) {
    n <- dims[1]; m <- dims[2]; d <- dims[3]
    x <- matrix(runif(n * d, -1, 1), n); w <- matrix(runif(d * m, -1, 1), d)
    expect_identical(stile_product(x, w, 0L), chain(x, w, FALSE))
    expect_identical(stile_product(t(x), w, 0L, TRUE), chain(x, w, FALSE))
    for (isa in seq_len(best)) {
      expect_identical(stile_product(x, w, isa), chain(x, w, TRUE))
      expect_identical(stile_product(t(x), w, isa, TRUE), chain(x, w, TRUE))
    }
  }
})

test_that("the float product is within its error bound for every path and edge size", {
  set.seed(12)
  ns <- c(1:9, 15:17, 23:25, 47:49, 95L, 255L, 257L, 300L)  # tails of the 48/24-row panels, tiles
  ms <- c(1:9, 15L, 16L, 17L, 33L, 257L)                  # tails of the 8/4-wide kernels, padding
  ds <- c(1L, 3L, 65L, 257L, 600L)                       # across the K-blocks of 256
  worst <- 0
  bad <- character()
  for (d in ds) {
    x <- matrix(runif(max(ns) * d, -1, 1), max(ns)); w <- matrix(runif(d * max(ms), -1, 1), d)
    fx <- f32(x); fw <- f32(w)
    for (n in ns) for (m in ms) {
      xs <- fx[seq_len(n), , drop = FALSE]; ws <- fw[, seq_len(m), drop = FALSE]
      ref <- xs %*% ws
      scale <- pmax(abs(xs) %*% abs(ws), .Machine$double.xmin)
      for (isa in 0:2) for (tr in c(FALSE, TRUE)) {
        got <- if (tr) stile_product(t(xs), ws, isa, TRUE) else stile_product(xs, ws, isa)
        err <- max(abs(got - ref) / scale)
        if (!identical(dim(got), c(n, m)) || anyNA(got) || !(err < 1.6e-5))
          bad <- c(bad, sprintf("isa=%d transa=%d n=%d m=%d d=%d", isa, tr, n, m, d))
        worst <- max(worst, err)
      }
    }
  }
  expect_identical(bad, character())
  # the bound of sgemm.c's header is 256 u = 1.5e-5 in the worst case; random rounding
  # errors stay far below it
  expect_lt(worst, 2e-6)
})

test_that("paths 1 and 2 agree bit for bit, and an entry does not depend on its tile", {
  skip_if(best_isa() < 1L, "no AVX2/AVX-512 path on this machine")
  set.seed(13)
  x <- matrix(rnorm(301 * 530), 301); w <- matrix(rnorm(530 * 19), 530)
  for (isa in seq_len(best_isa())) {
    full <- stile_product(x, w, isa)
    expect_identical(stile_product(x[-(1:13), , drop = FALSE], w, isa), full[-(1:13), , drop = FALSE])
    expect_identical(stile_product(x, w[, 3:9, drop = FALSE], isa), full[, 3:9, drop = FALSE])
    expect_identical(stile_product(x, w[, 5, drop = FALSE], isa), full[, 5, drop = FALSE])
    expect_identical(stile_product(t(x), w, isa, TRUE), full)
    if (isa == 2L) expect_identical(stile_product(x, w, 1L), full)
  }
})

test_that("the threaded float product: identical for 1 and 2 threads, Z'Z symmetric", {
  set.seed(14)
  for (dims in list(c(1, 1, 1), c(700, 13, 300), c(530, 250, 260), c(50, 3, 1030))) {
    a <- matrix(rnorm(dims[1] * dims[3]), dims[1]); b <- matrix(rnorm(dims[3] * dims[2]), dims[3])
    p1 <- sproduct(a, b, threads = 1L)
    expect_identical(sproduct(a, b, threads = 2L), p1)
    expect_identical(p1, stile_product(a, b))
    # raw float operands (the bench's) give the same
    expect_identical(sproduct(.Call(bochner:::C_float_matrix, a),
                              .Call(bochner:::C_float_matrix, b), threads = 2L), p1)
    g1 <- sproduct(a, NULL, TRUE, 1L)
    expect_identical(sproduct(a, NULL, TRUE, 2L), g1)
    expect_identical(g1, t(g1))
    full <- stile_product(a, a, transa = TRUE)
    expect_identical(g1[upper.tri(g1, diag = TRUE)], full[upper.tri(full, diag = TRUE)])
    expect_lt(max(abs(g1 - crossprod(f32(a))) / crossprod(abs(f32(a)))), 1.6e-5)
  }
  expect_error(sproduct(matrix(1, 2, 3), matrix(1, 2, 3)), "non-conformable")
  expect_error(sproduct(matrix(1, 2, 3), NULL), "transa")
})

test_that("BOCHNER_MAX_ISA caps the float product's path too", {
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(find.package("bochner"))
  set.seed(15)
  x <- matrix(rnorm(97 * 300), 97); w <- matrix(rnorm(300 * 7), 300)
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f))
  saveRDS(list(x = x, w = w), f)
  code <- paste0(".libPaths(c('", lib, "', .libPaths())); library(bochner);",
                 "a <- readRDS('", f, "');",
                 "cat(.Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE), '');",
                 "p <- .Call(bochner:::C_sproduct, a$x, a$w, FALSE, 2L);",
                 "cat(paste(sprintf('%a', p), collapse = ' '))")
  for (cap in c("0", "1")) {
    out <- system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                   env = paste0("BOCHNER_MAX_ISA=", cap))
    got <- strsplit(tail(out, 1), " ")[[1]]
    path <- as.integer(got[1])
    expect_lte(path, as.integer(cap), label = paste(out, collapse = "\n"))
    expect_identical(as.numeric(got[-1]), as.vector(stile_product(x, w, path)))
  }
})
