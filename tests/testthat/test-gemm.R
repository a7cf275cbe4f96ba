# Tests for the tile product kernel (src/gemm.c).
# isa: 0 = portable C, 1 = AVX2+FMA, 2 = AVX-512F, -1 = automatic; unsupported requests clamp down.
# transa = TRUE: t(x) %*% w, x packed from its columns (the Z'Z path, no transposed copy);
# transa = 2L: t(x) %*% w by the dot products of bochner_dot_tn
tile_product <- function(x, w, isa = -1L, transa = FALSE)
  .Call(bochner:::C_tile_product, x, w, as.integer(isa), transa)
best_isa <- function() .Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE)

rand_mat <- function(n, m) matrix(stats::runif(n * m, -1, 1), n, m)

# max |got - ref| / (|x| %*% |w|): error relative to the size of the terms summed
scaled_err <- function(got, x, w) {
  ref <- x %*% w
  max(abs(got - ref) / pmax(abs(x) %*% abs(w), .Machine$double.xmin))
}

test_that("tile product matches x %*% w for every code path and edge size", {
  set.seed(1)
  ns <- c(1:25, 37L, 255L, 256L, 257L, 520L)  # rows: every tail of the 24/12-row kernels, tile 256
  ms <- c(1:9, 15L, 256L, 257L)                # columns: every tail of the 8/4-wide kernels, tile 256
  ds <- c(1L, 3L, 65L, 257L, 385L)             # inner dimension; crosses the K-blocks of 256 / 384
  worst <- c(rel = 0, scaled = 0)
  bad <- character()
  for (d in ds) {
    x <- rand_mat(max(ns), d)
    w <- rand_mat(d, max(ms))
    for (n in ns) for (m in ms) {
      xs <- x[seq_len(n), , drop = FALSE]
      ws <- w[, seq_len(m), drop = FALSE]
      ref <- xs %*% ws
      scale <- pmax(abs(xs) %*% abs(ws), .Machine$double.xmin)
      for (isa in 0:2) for (tr in c(FALSE, TRUE)) {
        got <- if (tr) tile_product(t(xs), ws, isa, TRUE) else tile_product(xs, ws, isa)
        # relative to max |ref|, and to the size of the terms summed (|x| %*% |w|)
        err <- c(rel = max(abs(got - ref)) / max(abs(ref)),
                 scaled = max(abs(got - ref) / scale))
        if (!identical(dim(got), c(n, m)) || anyNA(got) || any(!(err < 1e-13)))
          bad <- c(bad, sprintf("isa=%d transa=%d n=%d m=%d d=%d", isa, tr, n, m, d))
        worst <- pmax(worst, err)
      }
    }
  }
  expect_identical(bad, character())
  expect_lt(worst[["rel"]], 1e-13)
  expect_lt(worst[["scaled"]], 1e-13)
})

test_that("dot products t(x) %*% w follow their 8-lane chain on every path", {
  # the chain in plain R: lane q sums rows q, q + 8, ... in order, then a fixed tree;
  # path 0 adds a * b (as R does), paths 1 and 2 fuse it (the same doubles on both)
  lanes <- function(a, b) {
    s <- numeric(8)
    for (l in seq_along(a)) s[(l - 1) %% 8 + 1] <- s[(l - 1) %% 8 + 1] + a[l] * b[l]
    ((s[1] + s[5]) + (s[3] + s[7])) + ((s[2] + s[6]) + (s[4] + s[8]))
  }
  set.seed(5)
  best <- best_isa()
  for (d in c(0L, 1L, 7L, 8L, 13L, 300L)) for (m in c(1L, 2L, 3L, 4L, 7L, 257L)) {
    x <- rand_mat(d, m)
    w <- rand_mat(d, 8)
    for (n in 1:8) {
      ws <- w[, seq_len(n), drop = FALSE]
      p0 <- tile_product(x, ws, 0L, 2L)
      expect_identical(p0, outer(seq_len(m), seq_len(n),
                                 Vectorize(function(i, j) lanes(x[, i], ws[, j]))))
      got <- tile_product(x, ws, best, 2L)
      if (best == 2L) expect_identical(tile_product(x, ws, 1L, 2L), got)
      ref <- crossprod(x, ws)
      expect_lt(max(abs(got - ref) / pmax(crossprod(abs(x), abs(ws)), .Machine$double.xmin)),
                1e-13)
    }
  }
  # more than 8 columns: each column the same chain
  w11 <- rand_mat(300, 11)
  expect_identical(tile_product(x, w11, best, 2L)[, 9:11], tile_product(x, w11[, 9:11], best, 2L))
})

test_that("d = 1 and degenerate shapes", {
  x <- matrix(c(1, -2, 3.5), 3, 1)
  w <- matrix(c(2, 0.5, -4), 1, 3)
  for (isa in 0:2) {
    expect_identical(tile_product(x, w, isa), x %*% w)    # single products are exact
    expect_identical(tile_product(t(x), w, isa, TRUE), x %*% w)
    expect_identical(tile_product(matrix(3, 1, 1), matrix(-2, 1, 1), isa, TRUE), matrix(-6, 1, 1))
    expect_identical(dim(tile_product(x[0, , drop = FALSE], w, isa)), c(0L, 3L))
    expect_identical(dim(tile_product(x, w[, 0, drop = FALSE], isa)), c(3L, 0L))
    expect_identical(tile_product(matrix(0, 2, 0), matrix(0, 0, 4), isa), matrix(0, 2, 4))
    expect_identical(tile_product(matrix(0, 0, 2), matrix(0, 0, 4), isa, TRUE), matrix(0, 2, 4))
  }
  expect_error(tile_product(x, matrix(1, 2, 2)), "non-conformable")
  expect_error(tile_product(1:3, w), "double matrix")
})

test_that("SIMD paths are deterministic: a row's result does not depend on the tiling", {
  skip_if(best_isa() < 1L, "no AVX2/AVX-512 path on this machine")
  set.seed(2)
  n <- 530L
  res <- list()
  for (d in c(1L, 7L, 64L, 300L)) {
    x <- rand_mat(n, d)
    w <- rand_mat(d, 270L)
    for (isa in seq_len(best_isa())) {
      full <- tile_product(x, w, isa)
      # rows 2..n computed as rows 1..n-1 of another product: every row changes its
      # position inside the 256-row tiles and the kernel row blocks
      expect_identical(tile_product(x[-1, , drop = FALSE], w, isa), full[-1, , drop = FALSE])
      expect_identical(tile_product(x[-(1:13), , drop = FALSE], w, isa),
                       full[-(1:13), , drop = FALSE])
      # the same for columns
      expect_identical(tile_product(x, w[, -(1:3), drop = FALSE], isa),
                       full[, -(1:3), drop = FALSE])
      # packing x from its columns (transa) sums the same chains: identical
      expect_identical(tile_product(t(x), w, isa, TRUE), full)
      res[[isa]] <- full
    }
    # AVX2 and AVX-512 evaluate the same FMA chain, so they agree bit for bit
    if (length(res) == 2L) expect_identical(res[[1]], res[[2]])
  }
})

test_that("products with few columns (rows read in place, no packing) equal the packed ones", {
  skip_if(best_isa() < 1L, "no AVX2/AVX-512 path on this machine")
  set.seed(4)
  # up to 64 columns the kernel reads x's rows in place instead of packing them (and
  # prefetches the next panel's): the same FMA chains, so the same doubles as those
  # columns of a wider (packed, 80 columns) product; rows with every tail of the 24/12-row
  # blocks, inner dimensions across the K-blocks, column counts with every tail of the
  # 8/4-wide kernels
  for (d in c(1L, 7L, 300L, 400L)) {
    x <- rand_mat(161L, d)
    w <- rand_mat(d, 80L)
    for (isa in seq_len(best_isa())) {
      full <- tile_product(x, w, isa)
      for (cols in list(1L, 2:3, 4:8, c(2L, 5L, 9L, 11L, 12L), 1:13, 3:18, 17:42, 5:37, 1:64,
                        17:80)) {
        expect_identical(tile_product(x, w[, cols, drop = FALSE], isa), full[, cols, drop = FALSE])
        expect_identical(tile_product(x[5:161, , drop = FALSE], w[, cols, drop = FALSE], isa),
                         full[5:161, cols, drop = FALSE])
      }
    }
  }
})

test_that("requesting an isa does not change the automatic choice afterwards", {
  x <- rand_mat(30, 5)
  w <- rand_mat(5, 9)
  a <- tile_product(x, w, -1L)
  invisible(tile_product(x, w, 0L))
  expect_identical(tile_product(x, w, -1L), a)
  expect_true(best_isa() %in% 0:2)
})

test_that("BOCHNER_MAX_ISA caps the dispatcher (used under valgrind)", {
  # a fresh R process: the cap is read once, when the package loads
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(find.package("bochner"))
  code <- paste0(".libPaths(c('", lib, "', .libPaths())); library(bochner);",
                 "cat(.Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE));",
                 "set.seed(1); x <- matrix(rnorm(600), 200); m <- random_features(x, gaussian_kernel(1), D = 50);",
                 "z <- predict(m, x); k <- kernel_matrix(gaussian_kernel(1), x);",
                 "cat('', max(abs(tcrossprod(z) - k)) < 1)")
  for (cap in c("0", "1")) {
    out <- system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                   env = paste0("BOCHNER_MAX_ISA=", cap))
    got <- strsplit(tail(out, 1), " ")[[1]]
    # this process's own path is the machine's best only when it runs uncapped (valgrind
    # may run the suite with BOCHNER_MAX_ISA=0); capped, the child may go above it
    if (nzchar(Sys.getenv("BOCHNER_MAX_ISA"))) {
      expect_lte(as.integer(got[1]), as.integer(cap), label = paste(out, collapse = "\n"))
    } else {
      expect_identical(got[1], as.character(min(as.integer(cap), best_isa())),
                       label = paste(out, collapse = "\n"))
    }
    expect_identical(got[2], "TRUE")
  }
})

test_that("Z'Z packed from Z's columns equals the product with a transposed copy, bit for bit", {
  set.seed(3)
  # inner dimensions across the K-blocks (256 on Intel, 384 on AMD with 1 MB L2), outputs
  # across the 240-tiles of products.c and the 48-column strips of its diagonal tiles
  for (dims in list(c(1, 1), c(3, 1), c(1, 5), c(385, 29), c(1000, 250), c(769, 49))) {
    z <- matrix(rnorm(dims[1] * dims[2]), dims[1])
    g <- .Call(bochner:::C_crossprod, z, 1L)
    full <- .Call(bochner:::C_matprod, t(z), z, 1L)
    expect_identical(g[upper.tri(g, diag = TRUE)], full[upper.tri(full, diag = TRUE)])
    expect_identical(g, t(g))
    expect_identical(.Call(bochner:::C_crossprod, z, 2L), g)
    expect_equal(g, crossprod(z), tolerance = 1e-13)
  }
})
