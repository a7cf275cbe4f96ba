# Benchmark: bochner's single-precision product (src/sgemm.c: float operands, float
# K-blocks of 256 summed into double results; tiled and threaded by src/products.c)
# against OpenBLAS's sgemm_ and ssyrk_ in the same process, on the same float operands.
#
#   ssyrk   Z'Z of a tall Z (n = 5e4, D = 2048): .Call(C_sproduct, z, NULL, TRUE, threads)
#           against ssyrk_ (upper triangle); n D^2 flops
#   sgemm   square A %*% B at m = 2000 and 4000: .Call(C_sproduct, a, b, FALSE, threads)
#           against sgemm_; 2 m^3 flops
#   sthin   a tall x (38 600 x 1024) times 1, 7 and 14 columns (falkon's K_nm U over a
#           float cache); 2 n 1024 k flops
# Beside each, bochner's double product of the same shape (C_crossprod, C_matprod): what
# single precision gains over double in the package itself.
#
# The BLAS's single-precision routines are not reachable from R, so sgemm-blas.c beside it (a
# few lines, compiled here with R CMD SHLIB into a temporary directory) finds sgemm_ and
# ssyrk_ in the BLAS that R loaded (dlsym) and calls them on the raw float matrices of
# .Call(bochner:::C_float_matrix, x): neither side's timing includes a conversion.  One
# child R process per setting: OpenBLAS with OPENBLAS_NUM_THREADS = 1 and 2 (selected
# with R_LD_LIBRARY_PATH as .ci/blas-dir prints it), bochner at the same threads.  Each
# figure is the best of RUNS runs (1 where a run takes over SLOW_SECONDS), elapsed and CPU
# time (user + system) separately: the machine may be shared, and the CPU time of a
# 1-thread run is its cost whatever the load.
#
# Usage, from the package root after installing the package:
#     Rscript bench/investigations/sgemm.R
# writes bench/investigations/sgemm.md (the double product's figures are the products
# suite's, bench/suites/products.R).  BOCHNER_BENCH_SCALE (default 1) multiplies n of
# ssyrk and the rows of sthin by it, m of sgemm by its square root (below 1: a smoke run).

RUNS <- 3
SLOW_SECONDS <- 15

args <- commandArgs(TRUE)
scale <- as.numeric(Sys.getenv("BOCHNER_BENCH_SCALE", "1"))

timed <- function(f) {
  runs <- list()
  for (r in seq_len(RUNS)) {
    gc()
    t0 <- proc.time()
    f()
    t <- proc.time() - t0
    runs[[r]] <- c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
    if (t[["elapsed"]] > SLOW_SECONDS) break
  }
  m <- do.call(rbind, runs)
  c(elapsed = min(m[, "elapsed"]), cpu = min(m[, "cpu"]), runs = nrow(m))
}

child <- function(shim, out) {
  suppressPackageStartupMessages(library(bochner))
  dyn.load(shim)
  th <- as.integer(Sys.getenv("OPENBLAS_NUM_THREADS", "1"))
  fm <- function(x) .Call(bochner:::C_float_matrix, x)
  tofl <- function(x) .Call("bench_float_to_double", x)
  rows <- list()
  add <- function(task, size, who, flops, t) {
    rows[[length(rows) + 1L]] <<- data.frame(
      task = task, size = size, threads = th, who = who, elapsed = t[["elapsed"]],
      cpu = t[["cpu"]], runs = t[["runs"]], rate = flops / t[["elapsed"]] / 1e9,
      rate_cpu = flops / t[["cpu"]] / 1e9)
  }
  set.seed(1)
  # the same results, checked once: the BLAS's float sums against bochner's
  check <- function(mine, blas, what) {
    e <- max(abs(mine - blas)) / max(abs(mine))
    if (!(e < 1e-4)) stop(sprintf("%s: bochner and the BLAS differ by %.2g", what, e))
  }
  n <- round(5e4 * scale); D <- 2048L
  z <- matrix(runif(n * D), n, D)
  fz <- fm(z)
  size <- sprintf("n = %d, D = %d", n, D)
  add("ssyrk", size, "bochner single", n * D * D,
      timed(function() .Call(bochner:::C_sproduct, fz, NULL, TRUE, th)))
  add("ssyrk", size, "OpenBLAS ssyrk", n * D * D, timed(function() .Call("bench_ssyrk", fz)))
  add("ssyrk", size, "bochner double", n * D * D,
      timed(function() .Call(bochner:::C_crossprod, z, th)))
  g <- .Call(bochner:::C_sproduct, fz, NULL, TRUE, th)
  gb <- tofl(.Call("bench_ssyrk", fz))
  check(g[upper.tri(g, TRUE)], gb[upper.tri(gb, TRUE)], "ssyrk")
  rm(z, fz, g, gb)
  for (m in round(c(2000, 4000) * sqrt(scale))) {
    a <- matrix(runif(m * m), m); b <- matrix(runif(m * m), m)
    fa <- fm(a); fb <- fm(b)
    size <- sprintf("m = %d", m)
    add("sgemm", size, "bochner single", 2 * m^3,
        timed(function() .Call(bochner:::C_sproduct, fa, fb, FALSE, th)))
    add("sgemm", size, "OpenBLAS sgemm", 2 * m^3, timed(function() .Call("bench_sgemm", fa, fb)))
    add("sgemm", size, "bochner double", 2 * m^3,
        timed(function() .Call(bochner:::C_matprod, a, b, th)))
    check(.Call(bochner:::C_sproduct, fa, fb, FALSE, th), tofl(.Call("bench_sgemm", fa, fb)), "sgemm")
  }
  rm(a, b, fa, fb)
  nt <- round(38600 * scale)
  x <- matrix(runif(nt * 1024), nt, 1024)
  fx <- fm(x)
  for (k in c(1L, 7L, 14L)) {
    w <- matrix(runif(1024 * k), 1024, k)
    fw <- fm(w)
    size <- sprintf("%d x 1024 by %d", nt, k)
    add("sthin", size, "bochner single", 2 * nt * 1024 * k,
        timed(function() .Call(bochner:::C_sproduct, fx, fw, FALSE, th)))
    add("sthin", size, "OpenBLAS sgemm", 2 * nt * 1024 * k,
        timed(function() .Call("bench_sgemm", fx, fw)))
    add("sthin", size, "bochner double", 2 * nt * 1024 * k,
        timed(function() .Call(bochner:::C_matprod, x, w, th)))
  }
  res <- do.call(rbind, rows)
  attr(res, "blas") <- .Call("bench_blas_file")
  saveRDS(res, out)
}

if (length(args) >= 3 && args[1] == "--child") {
  child(args[2], args[3])
  quit(save = "no")
}

# ---- parent: the shim, one child per thread count, then the section of gemm.md ----
shim_dir <- file.path(tempdir(), "sgemm-blas")
dir.create(shim_dir, showWarnings = FALSE)
file.copy("bench/investigations/sgemm-blas.c", shim_dir, overwrite = TRUE)
shim <- file.path(shim_dir, "sgemm-blas.so")
status <- system2(file.path(R.home("bin"), "R"),
                  c("CMD", "SHLIB", "-o", shQuote(shim), shQuote(file.path(shim_dir, "sgemm-blas.c"))),
                  stdout = FALSE)
if (status != 0 || !file.exists(shim)) stop("could not compile bench/investigations/sgemm-blas.c")
path <- suppressWarnings(system2("bash", c(".ci/blas-dir", "openblas", file.path(tempdir(), "blas")),
                                 stdout = TRUE, stderr = FALSE))
if (length(path) != 1L || !nzchar(path)) stop("OpenBLAS not found (.ci/blas-dir openblas)")
script <- normalizePath("bench/investigations/sgemm.R")
lib <- dirname(find.package("bochner"))
load0 <- readLines("/proc/loadavg")
started <- Sys.time()
parts <- list()
for (th in 1:2) {
  out <- tempfile(fileext = ".rds")
  env <- c(paste0("R_LD_LIBRARY_PATH=", path), paste0("OPENBLAS_NUM_THREADS=", th),
           paste0("R_LIBS=", lib), paste0("BOCHNER_BENCH_SCALE=", scale))
  cat("child: threads", th, "\n")
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script, "--child", shim, out),
          env = env)
  if (file.exists(out)) {
    r <- readRDS(out)
    r$blas_lib <- attr(r, "blas")
    parts[[length(parts) + 1L]] <- r
  }
}
res <- do.call(rbind, parts)
load1 <- readLines("/proc/loadavg")
minutes <- as.numeric(difftime(Sys.time(), started, units = "mins"))

lscpu <- tryCatch(system2("lscpu", stdout = TRUE), error = function(e) character())
get <- function(k) sub("^[^:]*:\\s*", "", grep(paste0("^", k, ":"), lscpu, value = TRUE)[1])
cpu <- sprintf("%s %s (family %s, model %s), %s CPUs; L1d %s, L2 %s, L3 %s", get("Vendor ID"),
               get("Model name"), get("CPU family"), get("Model"), get("CPU\\(s\\)"),
               get("L1d cache"), get("L2 cache"), get("L3 cache"))
isa <- c("portable", "AVX2+FMA", "AVX-512F")[
  .Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE) + 1L]
ld <- function(l) paste(strsplit(l, " ")[[1]][1:3], collapse = "/")

key <- paste(res$task, res$size, res$threads)
mine <- res[res$who == "bochner single", ]
sec <- c("# Single-precision products: `bench/investigations/sgemm.R`", "",
         "<!-- written by bench/investigations/sgemm.R; rerun it rather than editing -->", "",
         sprintf("Recorded %s by `Rscript bench/investigations/sgemm.R` from the package root (%.1f minutes); `BOCHNER_BENCH_SCALE=%g`%s.",
                 format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), minutes, scale,
                 if (scale < 1) " (a smoke run, not figures)" else ""),
         sprintf("CPU: %s. bochner's kernel path: %s (single precision: 48 x 8 float micro-kernel on AVX-512F, 24 x 4 on AVX2+FMA; float K-blocks of 256 summed into double results, src/sgemm.c).", cpu, isa),
         sprintf("Load average %s at the start and %s at the end: the machine was shared with other jobs, so every figure is the best of %d runs (1 where a run took over %d s), elapsed and CPU time taken separately; compare the CPU-time ratios of the 1-thread rows.",
                 ld(load0), ld(load1), RUNS, SLOW_SECONDS),
         sprintf("BLAS: OpenBLAS `%s` (`OPENBLAS_NUM_THREADS` = threads), its `sgemm_`/`ssyrk_` called through sgemm-blas.c in the same process on the same float operands; its results are float, bochner's double.", unique(res$blas_lib)[1]),
         "", "ratio = bochner's rate / OpenBLAS's (above 1 is faster); single / double = bochner's float product against its own double one.", "",
         "| task | size | threads | bochner single GFLOP/s | OpenBLAS GFLOP/s | ratio (elapsed) | ratio (CPU) | bochner double GFLOP/s | single / double (CPU) |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (i in seq_len(nrow(mine))) {
  r <- mine[i, ]
  ob <- res[res$who != "bochner single" & res$who != "bochner double" & key == paste(r$task, r$size, r$threads), ]
  bd <- res[res$who == "bochner double" & key == paste(r$task, r$size, r$threads), ]
  sec <- c(sec, sprintf("| %s | %s | %d | %.1f | %.1f | %.2f | %.2f | %.1f | %.2f |", r$task, r$size,
                        r$threads, r$rate, ob$rate, r$rate / ob$rate, r$rate_cpu / ob$rate_cpu,
                        bd$rate, r$rate_cpu / bd$rate_cpu))
}
sec <- c(sec, "", "## Every timing", "",
         "| task | size | threads | who | elapsed s | CPU s | runs | GFLOP/s | GFLOP/s from CPU |",
         "|---|---|---:|---|---:|---:|---:|---:|---:|",
         sprintf("| %s | %s | %d | %s | %.3f | %.3f | %d | %.1f | %.1f |", res$task, res$size,
                 res$threads, res$who, res$elapsed, res$cpu, as.integer(res$runs), res$rate,
                 res$rate_cpu))
writeLines(sec, "bench/investigations/sgemm.md")
cat(sec, sep = "\n")
