# Suite products: bochner's own product kernel (src/gemm.c, tiled and
# threaded by src/products.c) against R's BLAS products, and the fused
# Gaussian Gram blocks (kernel_matrix()) against plain R.  Ported from
# bench/gemm.R.  One child process per BLAS setting (the reference BLAS,
# OpenBLAS at 1 and 2 threads; quick: the machine's default BLAS at 1 and
# 2 threads); bochner's products call no BLAS, so each ratio compares two
# timings of the same process at the same threads.  Best of the runs
# (elapsed and CPU taken separately).
#   syrk         Z'Z of a tall Z (rff_ridge's normal equations)
#   gemm         square A %*% B
#   thin         a tall x times 1 and 14 columns (falkon's K_nm U)
#   gauss_block  kernel_matrix(gaussian_kernel(1), x, C) against plain R
#   ssyrk, sgemm, sthin  the single-precision product (src/sgemm.c: float operands,
#                float K-blocks summed into double results) on the same shapes against
#                the BLAS's ssyrk_ / sgemm_ on the same float operands, found with dlsym
#                by bench/harness/sgemm-blas.c (compiled here with R CMD SHLIB: the BLAS's
#                single-precision routines are not reachable from R), and beside
#                bochner's double product; max relative difference of the results in `more`.
#                Ported from bench/investigations/sgemm.R.
# The products have no exported entry (they serve rff_ridge(), falkon(), ...
# inside): they are called through bochner:::C_crossprod / C_matprod, the
# registered routines, so that the product alone is timed (the single-precision ones
# likewise: C_float_matrix, C_sproduct).
source("bench/harness/harness.R")
o <- bench_start("products", "The product kernel and the Gram blocks against the BLAS")

sizes <- list(syrk_n = bench_size(5e4, 1e4, 2000), syrk_D = bench_size(2048L, 1024L, 256L),
              gemm_m = bench_size(c(2000L, 4000L), 1000L, 300L),
              thin_n = bench_size(38600L, 10000L, 2000L), thin_k = bench_size(c(1L, 7L, 14L), c(1L, 14L), 1L),
              block_n = bench_size(2000L, 1000L, 200L), block_d = bench_size(c(16L, 64L), 64L, 16L))
settings <- if (o$quick) list(c("default", 1), c("default", 2)) else
  list(c("reference", 1), c("openblas", 1), c("openblas", 2))

measure <- function(d, a) {
  s <- a$sizes
  th <- as.integer(a$threads)
  runs <- a$runs
  mine <- a$blas != "reference"
  shim <- a$shim   # (a is reused below for a matrix)
  rows <- list()
  add <- function(task, case, who, work, unit, t) {
    t$task <- task; t$case <- case; t$who <- who; t$threads <- th
    t$rate <- if (unit == "GFLOP/s") work / t$elapsed / 1e9 else t$elapsed / work * 1e9
    t$unit <- unit
    rows[[length(rows) + 1L]] <<- t
  }
  set.seed(1)
  # the reference BLAS runs at about a tenth of the speed: a fifth of the rows
  n <- round(s$syrk_n / if (mine) 1 else 5); D <- s$syrk_D
  z <- matrix(stats::runif(n * D), n, D)
  case <- sprintf("n = %d, D = %d", n, D)
  if (mine) add("syrk", case, "bochner", n * D * D, "GFLOP/s",
                bench_time(function() .Call(bochner:::C_crossprod, z, th), runs))
  add("syrk", case, "R crossprod", n * D * D, "GFLOP/s", bench_time(function() crossprod(z), runs))
  rm(z)
  for (m in if (mine) s$gemm_m else s$gemm_m[1L]) {
    a <- matrix(stats::runif(m * m), m); b <- matrix(stats::runif(m * m), m)
    case <- sprintf("m = %d", m)
    if (mine) add("gemm", case, "bochner", 2 * m^3, "GFLOP/s",
                  bench_time(function() .Call(bochner:::C_matprod, a, b, th), runs))
    add("gemm", case, "R %*%", 2 * m^3, "GFLOP/s", bench_time(function() a %*% b, runs))
  }
  nt <- s$thin_n
  x <- matrix(stats::runif(nt * 1024), nt, 1024)
  for (k in s$thin_k) {
    w <- matrix(stats::runif(1024 * k), 1024, k)
    case <- sprintf("%d x 1024 by %d", nt, k)
    if (mine) add("thin", case, "bochner", 2 * nt * 1024 * k, "GFLOP/s",
                  bench_time(function() .Call(bochner:::C_matprod, x, w, th), runs))
    add("thin", case, "R %*%", 2 * nt * 1024 * k, "GFLOP/s", bench_time(function() x %*% w, runs))
  }
  rm(x)
  nb <- s$block_n
  for (dd in s$block_d) {
    x <- matrix(stats::rnorm(nb * dd), nb); C <- matrix(stats::rnorm(2 * nb * dd), 2 * nb)
    case <- sprintf("%d x %d, d = %d", nb, 2 * nb, dd)
    if (mine) add("gauss_block", case, "bochner", nb * 2 * nb, "ns/entry",
                  bench_time(function() kernel_matrix(gaussian_kernel(1), x, C, nthreads = th), runs))
    add("gauss_block", case, "plain R", nb * 2 * nb, "ns/entry", bench_time(function()
      exp(-(outer(rowSums(x^2), rowSums(C^2), "+") - 2 * tcrossprod(x, C)) / 2), runs))
  }
  # single precision, where this build has it and the shim compiled
  if (!is.null(shim) && exists("C_sproduct", asNamespace("bochner"))) {
    dyn.load(shim)
    fm <- function(x) .Call(bochner:::C_float_matrix, x)
    rel <- function(mine, blas) max(abs(mine - blas)) / max(abs(mine))
    tod <- function(x) .Call("bench_float_to_double", x)
    addf <- function(task, case, flops, mine, blas, double, diff) {
      add(task, case, "bochner single", flops, "GFLOP/s", mine)
      t <- blas; t$max_rel_diff <- diff
      add(task, case, paste("BLAS", if (task == "ssyrk") "ssyrk" else "sgemm"), flops, "GFLOP/s", t)
      if (!is.null(double)) add(task, case, "bochner double", flops, "GFLOP/s", double)
    }
    n <- if (mine) s$syrk_n else round(s$syrk_n / 5); D <- s$syrk_D
    z <- matrix(stats::runif(n * D), n, D); fz <- fm(z)
    g <- .Call(bochner:::C_sproduct, fz, NULL, TRUE, th); gb <- tod(.Call("bench_ssyrk", fz))
    addf("ssyrk", sprintf("n = %d, D = %d", n, D), n * D * D,
         bench_time(function() .Call(bochner:::C_sproduct, fz, NULL, TRUE, th), runs),
         bench_time(function() .Call("bench_ssyrk", fz), runs),
         bench_time(function() .Call(bochner:::C_crossprod, z, th), runs),
         rel(g[upper.tri(g, TRUE)], gb[upper.tri(gb, TRUE)]))
    rm(z, fz, g, gb)
    for (m in if (mine) s$gemm_m else s$gemm_m[1L]) {
      a1 <- matrix(stats::runif(m * m), m); b1 <- matrix(stats::runif(m * m), m)
      fa <- fm(a1); fb <- fm(b1)
      addf("sgemm", sprintf("m = %d", m), 2 * m^3,
           bench_time(function() .Call(bochner:::C_sproduct, fa, fb, FALSE, th), runs),
           bench_time(function() .Call("bench_sgemm", fa, fb), runs),
           bench_time(function() .Call(bochner:::C_matprod, a1, b1, th), runs),
           rel(.Call(bochner:::C_sproduct, fa, fb, FALSE, th), tod(.Call("bench_sgemm", fa, fb))))
    }
    nt <- s$thin_n
    x <- matrix(stats::runif(nt * 1024), nt, 1024); fx <- fm(x)
    for (k in s$thin_k) {
      w <- matrix(stats::runif(1024 * k), 1024, k); fw <- fm(w)
      addf("sthin", sprintf("%d x 1024 by %d", nt, k), 2 * nt * 1024 * k,
           bench_time(function() .Call(bochner:::C_sproduct, fx, fw, FALSE, th), runs),
           bench_time(function() .Call("bench_sgemm", fx, fw), runs),
           bench_time(function() .Call(bochner:::C_matprod, x, w, th), runs),
           rel(.Call(bochner:::C_sproduct, fx, fw, FALSE, th), tod(.Call("bench_sgemm", fx, fw))))
    }
  }
  rows <- lapply(rows, function(r) { if (is.null(r$max_rel_diff)) r$max_rel_diff <- NA_real_; r })
  do.call(rbind, rows)
}

# the BLAS's single-precision routines through a shim compiled here
shim <- local({
  dir <- file.path(tempdir(), "sgemm-blas")
  dir.create(dir, showWarnings = FALSE)
  file.copy("bench/harness/sgemm-blas.c", dir, overwrite = TRUE)
  so <- file.path(dir, "sgemm-blas.so")
  st <- suppressWarnings(system2(file.path(R.home("bin"), "R"),
                                 c("CMD", "SHLIB", "-o", shQuote(so), shQuote(file.path(dir, "sgemm-blas.c"))),
                                 stdout = FALSE, stderr = FALSE))
  if (st == 0L && file.exists(so)) so else NULL
})
if (is.null(shim)) bench_skip("single precision", "bench/harness/sgemm-blas.c did not compile (R CMD SHLIB)")
if (!exists("C_sproduct", asNamespace("bochner"))) bench_skip("single precision", "this build of bochner has no C_sproduct")

for (st in settings) {
  job <- bench_job(measure, sizes = sizes, threads = as.integer(st[2]), blas = st[1], runs = o$reps,
                   shim = shim)
  res <- bench_in_child(job, threads = as.integer(st[2]), blas = st[1])
  if (is.null(res$task)) {
    bench_skip(sprintf("%s BLAS, %s thread(s)", st[1], st[2]), sprintf("child failed (%s)", res$status))
    next
  }
  for (i in seq_len(nrow(res))) {
    r <- res[i, ]
    keep <- c("elapsed", "cpu", "peak_mb", "blas", "threads", "status", if (!is.na(r$max_rel_diff)) "max_rel_diff")
    bench_add(r$task, r$case, r$who, if (startsWith(r$who, "bochner")) "bochner" else "peer", r[, keep], 1L,
              metric = r$unit, value = r$rate)
  }
}

# full runs headline the default BLAS (the reference BLAS's rows come first in the CSV)
hl <- function(task, case, peer, th, blas = if (o$quick) NULL else "OpenBLAS", measure = "elapsed") {
  list(figure = sprintf("%s %s, %s thread(s): seconds", task, case, th), question = task, case = case,
       ours = "bochner", peer = peer, threads = th, blas = blas, measure = measure)
}
mine_n <- sizes$syrk_n
ths <- if (o$quick) c(1L, 2L) else c(1L, 2L)
bench_finish(
  headline = c(
    lapply(ths, function(th) hl("syrk", sprintf("n = %d, D = %d", mine_n, sizes$syrk_D), "R crossprod", th)),
    lapply(ths, function(th) hl("gemm", sprintf("m = %d", sizes$gemm_m[1L]), "R %*%", th)),
    lapply(ths, function(th) hl("thin", sprintf("%d x 1024 by %d", sizes$thin_n, sizes$thin_k[1L]), "R %*%", th)),
    lapply(ths, function(th) {
      h <- hl("ssyrk", sprintf("n = %d, D = %d", mine_n, sizes$syrk_D), "BLAS ssyrk", th)
      h$ours <- "bochner single"; h$figure <- sub("^ssyrk", "single-precision Z'Z", h$figure); h
    }),
    lapply(ths, function(th) {
      h <- hl("sgemm", sprintf("m = %d", sizes$gemm_m[1L]), "BLAS sgemm", th)
      h$ours <- "bochner single"; h$figure <- sub("^sgemm", "single-precision gemm", h$figure); h
    }),
    list(hl("gauss_block", sprintf("%d x %d, d = %d", sizes$block_n, 2 * sizes$block_n,
                                   sizes$block_d[length(sizes$block_d)]), "plain R", 1L))),
  about = c(
    "bochner's products (`src/gemm.c`) against R's BLAS product in the same process at the",
    "same threads (R's BLAS: the row's BLAS; bochner calls none).  The figure column of the",
    "table below is GFLOP/s (products: n D^2 for syrk, 2 m^3 for gemm, 2 n 1024 k for thin)",
    "or ns per entry (Gram blocks), from the elapsed time; best of the runs.  Full runs add",
    "the reference BLAS (a fifth of syrk's rows, one gemm size: it is about ten times slower).",
    "Single precision (ssyrk, sgemm, sthin): bochner's float product against the BLAS's `ssyrk_` / `sgemm_`",
    "on the same float operands (`bench/harness/sgemm-blas.c`), with bochner's double product beside;",
    "`max_rel_diff` in `more`: the largest difference of the two results relative to the largest entry."))
