# Benchmark: bochner's own product kernel (src/gemm.c, tiled and threaded by
# src/products.c) against R's BLAS products, and the fused Gram blocks of the
# Gaussian kernel (src/kernel_blocks.c) against plain R, in one run.
#
#   syrk        Z'Z of a tall Z (n = 5e4, D = 2048: the normal equations of rff_ridge):
#               .Call(C_crossprod, z, threads) against crossprod(z); n D^2 flops
#               (the reference BLAS, about ten times slower, at n = 1e4)
#   gemm        square A %*% B at m = 2000 and 4000 (reference BLAS: 2000 only):
#               .Call(C_matprod, a, b, threads) against a %*% b; 2 m^3 flops
#   thin        a tall x (38 600 x 1024) times 1, 7 and 14 columns: falkon's K_nm U;
#               .Call(C_matprod, x, w, threads) against x %*% w; 2 n 1024 k flops
#   gauss_block kernel_matrix(gaussian_kernel(1), x, C), x 2000 x d, C 4000 x d,
#               d = 16 and 64, against plain R's
#               exp(-(outer(rowSums(x^2), rowSums(C^2), "+") - 2 * tcrossprod(x, C)) / 2);
#               ns per entry (elapsed, and CPU time per entry, i.e. per core); beside it
#               alloc_only, matrix(0, 2000, 4000): the cost of a fresh result alone
#
# One child R process per BLAS setting (this script again, with --child):
# the reference BLAS (one thread), OpenBLAS with OPENBLAS_NUM_THREADS = 1 and
# with 2, selected with R_LD_LIBRARY_PATH as .ci/blas-dir prints it (the
# OpenBLAS package is fetched into a cache directory when it is not
# installed).  bochner's products do not use the BLAS, so they are timed in
# the OpenBLAS children at the same number of threads as OpenBLAS (1 and 2):
# each ratio compares two timings of the same process.  Each figure is the
# best of RUNS runs (1 where a run takes over SLOW_SECONDS), elapsed and CPU
# time (user + system of the process) taken separately: the machine may be
# shared, and the CPU time of a 1-thread run is its cost whatever the load.
#
# Usage, from the package root after installing the package:
#     Rscript bench/gemm.R
# writes bench/gemm.md.  BOCHNER_BENCH_SCALE (default 1) multiplies n of syrk
# and m of gemm by its square root (a scale below 1 marks a smoke run).
# BOCHNER_BENCH_RDS=<file>: the timings are also saved there, and when that
# file exists they are read from it instead of measured (to rewrite the table).

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

child <- function(label, out) {
  suppressPackageStartupMessages(library(bochner))
  th <- as.integer(Sys.getenv("OPENBLAS_NUM_THREADS", "1"))
  rows <- list()
  add <- function(task, size, who, work, unit, t) {
    rows[[length(rows) + 1L]] <<- data.frame(
      task = task, size = size, blas = label, threads = th, who = who,
      elapsed = t[["elapsed"]], cpu = t[["cpu"]], runs = t[["runs"]],
      rate = if (unit == "GFLOP/s") work / t[["elapsed"]] / 1e9 else t[["elapsed"]] / work * 1e9,
      rate_cpu = if (unit == "GFLOP/s") work / t[["cpu"]] / 1e9 else t[["cpu"]] / work * 1e9,
      unit = unit)
  }
  mine <- label != "reference"
  set.seed(1)
  # the reference BLAS runs at about a tenth of the speed: a fifth of the rows, one size of gemm
  n <- round(5e4 * scale / if (mine) 1 else 5); D <- 2048L
  z <- matrix(runif(n * D), n, D)
  size <- sprintf("n = %d, D = %d", n, D)
  if (mine) add("syrk", size, "bochner", n * D * D, "GFLOP/s",
                timed(function() .Call(bochner:::C_crossprod, z, th)))
  add("syrk", size, "R", n * D * D, "GFLOP/s", timed(function() crossprod(z)))
  rm(z)
  for (m in round((if (mine) c(2000, 4000) else 2000) * sqrt(scale))) {
    a <- matrix(runif(m * m), m); b <- matrix(runif(m * m), m)
    size <- sprintf("m = %d", m)
    if (mine) add("gemm", size, "bochner", 2 * m^3, "GFLOP/s",
                  timed(function() .Call(bochner:::C_matprod, a, b, th)))
    add("gemm", size, "R", 2 * m^3, "GFLOP/s", timed(function() a %*% b))
  }
  # a tall matrix times a few columns: falkon's K_nm U over its cached K_nm (Shuttle's
  # 38 600 x 1024), one column per class and lambda; read from memory, so the product
  # is bound by how fast it streams x
  nt <- round(38600 * sqrt(scale))
  x <- matrix(runif(nt * 1024), nt, 1024)
  for (k in c(1L, 7L, 14L)) {
    w <- matrix(runif(1024 * k), 1024, k)
    size <- sprintf("%d x 1024 by %d", nt, k)
    if (mine) add("thin", size, "bochner", 2 * nt * 1024 * k, "GFLOP/s",
                  timed(function() .Call(bochner:::C_matprod, x, w, th)))
    add("thin", size, "R", 2 * nt * 1024 * k, "GFLOP/s", timed(function() x %*% w))
  }
  rm(x)
  for (d in c(16L, 64L)) {
    x <- matrix(rnorm(2000 * d), 2000); C <- matrix(rnorm(4000 * d), 4000)
    size <- sprintf("2000 x 4000, d = %d", d)
    if (mine) add("gauss_block", size, "bochner", 2000 * 4000, "ns/entry",
                  timed(function() kernel_matrix(gaussian_kernel(1), x, C, nthreads = th)))
    add("gauss_block", size, "R", 2000 * 4000, "ns/entry", timed(function()
      exp(-(outer(rowSums(x^2), rowSums(C^2), "+") - 2 * tcrossprod(x, C)) / 2)))
  }
  # what a fresh 2000 x 4000 result costs by itself (page faults, zeroing): part of both above
  add("alloc_only", "2000 x 4000", "R", 2000 * 4000, "ns/entry",
      timed(function() matrix(0, 2000, 4000)))
  res <- do.call(rbind, rows)
  attr(res, "blas") <- extSoftVersion()[["BLAS"]]
  saveRDS(res, out)
}

if (length(args) >= 3 && args[1] == "--child") {
  child(args[2], args[3])
  quit(save = "no")
}

# ---- parent: one child per BLAS setting, then the table ----
blas_path <- function(kind) {
  cache <- file.path(tempdir(), "blas")
  p <- suppressWarnings(system2("bash", c(".ci/blas-dir", kind, cache), stdout = TRUE,
                                stderr = FALSE))
  if (length(p) == 1L && nzchar(p)) p else NA_character_
}
script <- normalizePath("bench/gemm.R")
lib <- dirname(find.package("bochner"))
rds <- Sys.getenv("BOCHNER_BENCH_RDS")
load0 <- readLines("/proc/loadavg")
started <- Sys.time()
measure <- !(nzchar(rds) && file.exists(rds))
settings <- list(list("reference", "reference", 1L), list("openblas", "openblas", 1L),
                 list("openblas", "openblas", 2L))
parts <- list()
for (s in if (measure) settings) {
  path <- blas_path(s[[2]])
  if (is.na(path)) next
  out <- tempfile(fileext = ".rds")
  env <- c(paste0("R_LD_LIBRARY_PATH=", path), paste0("OPENBLAS_NUM_THREADS=", s[[3]]),
           paste0("R_LIBS=", lib), paste0("BOCHNER_BENCH_SCALE=", scale))
  cat("child:", s[[1]], "threads", s[[3]], "\n")
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script, "--child", s[[1]], out),
          env = env)
  if (file.exists(out)) {
    r <- readRDS(out)
    r$blas_lib <- attr(r, "blas")
    parts[[length(parts) + 1L]] <- r
  }
}
if (measure) {
  res <- do.call(rbind, parts)
  load1 <- readLines("/proc/loadavg")
  minutes <- as.numeric(difftime(Sys.time(), started, units = "mins"))
  if (nzchar(rds)) saveRDS(list(res = res, load0 = load0, load1 = load1, started = started,
                                minutes = minutes), rds)
} else {
  saved <- readRDS(rds)
  for (v in names(saved)) assign(v, saved[[v]])
}

cpu_name <- function() {
  l <- tryCatch(system2("lscpu", stdout = TRUE), error = function(e) character())
  get <- function(k) sub("^[^:]*:\\s*", "", grep(paste0("^", k, ":"), l, value = TRUE)[1])
  sprintf("%s %s (family %s, model %s), %s CPUs; L1d %s, L2 %s, L3 %s", get("Vendor ID"),
          get("Model name"), get("CPU family"), get("Model"), get("CPU\\(s\\)"),
          get("L1d cache"), get("L2 cache"), get("L3 cache"))
}
isa <- c("portable", "AVX2+FMA", "AVX-512F")[
  .Call(bochner:::C_tile_product, NULL, NULL, -2L, FALSE) + 1L]
fmt <- function(v, unit) ifelse(unit == "GFLOP/s", sprintf("%.1f", v), sprintf("%.2f", v))

# the headline: bochner against the BLAS at the same threads, in the same process
key <- paste(res$task, res$size, res$blas, res$threads)
b <- res[res$who == "bochner", ]
lines <- c("# The product kernel and the kernel blocks: `bench/gemm.R`", "",
           "<!-- written by bench/gemm.R; rerun it rather than editing -->", "",
           sprintf("Recorded %s by `Rscript bench/gemm.R` from the package root (%.1f minutes); `BOCHNER_BENCH_SCALE=%g`%s.",
                   format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), minutes, scale,
                   if (scale < 1) " (a smoke run, not figures)" else ""),
           sprintf("CPU: %s. bochner's kernel path: %s; cache blocking chosen at load from the CPU (src/cpu.c).", cpu_name(), isa),
           sprintf("R %s, bochner %s. Load average %s at the start and %s at the end: the machine was shared with other jobs, so every figure is the best of %d runs (1 where a run took over %d s), elapsed and CPU time taken separately.",
                   getRversion(), packageVersion("bochner"),
                   paste(strsplit(load0, " ")[[1]][1:3], collapse = "/"),
                   paste(strsplit(load1, " ")[[1]][1:3], collapse = "/"), RUNS, SLOW_SECONDS),
           "",
           "BLAS: reference = the reference BLAS (one thread); openblas = OpenBLAS with `OPENBLAS_NUM_THREADS` = threads. bochner runs with `nthreads` = threads in the OpenBLAS children; it does not call the BLAS.",
           "",
           "Reading the figures: with the machine shared (load average above), no process was sure to get a core, let alone two. The CPU-time figures of the 1-thread rows are what a core costs whatever the load, and are the ones to compare; at 2 threads elapsed times measure the contention more than the code, and bochner's CPU time includes OpenMP's spin-waiting between groups of tiles. `alloc_only` is R's `matrix(0, 2000, 4000)` alone: a fresh 64 MB result (page faults, the kernel clearing pages) costs about as much as the whole Gaussian block, and both `kernel_matrix()` and plain R pay it. At d = 64 the block's product alone is 2d = 128 flops per entry, 2.7 ns at the 47 GFLOP/s of one core (the syrk row).",
           "", "## bochner against the BLAS at the same threads", "",
           "ratio = bochner's rate / the BLAS's (GFLOP/s: above 1 is faster; ns per entry: the BLAS's time / bochner's). CPU = from CPU time, which a shared machine does not inflate for 1 thread.", "",
           "| task | size | threads | bochner | OpenBLAS | ratio (elapsed) | ratio (CPU) | reference BLAS (1 thread) | bochner / reference |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (i in seq_len(nrow(b))) {
  r <- b[i, ]
  ob <- res[res$who == "R" & key == paste(r$task, r$size, r$blas, r$threads), ]
  ref <- res[res$who == "R" & res$blas == "reference" & res$task == r$task &
               (res$size == r$size | r$task == "syrk"), ]
  gf <- r$unit == "GFLOP/s"
  ratio <- function(x, y) if (gf) x / y else y / x
  lines <- c(lines, sprintf("| %s | %s | %d | %s %s | %s | %.2f | %.2f | %s | %s |", r$task, r$size,
                            r$threads, fmt(r$rate, r$unit), r$unit, fmt(ob$rate, r$unit),
                            ratio(r$rate, ob$rate), ratio(r$rate_cpu, ob$rate_cpu),
                            if (nrow(ref)) fmt(ref$rate, r$unit) else "",
                            if (nrow(ref)) sprintf("%.1f", ratio(r$rate, ref$rate)) else ""))
}
lines <- c(lines, "", "## Every timing", "",
           "| task | size | BLAS | threads | who | elapsed s | CPU s | runs | rate | rate from CPU | unit | BLAS library |",
           "|---|---|---|---:|---|---:|---:|---:|---:|---:|---|---|",
           sprintf("| %s | %s | %s | %d | %s | %.3f | %.3f | %d | %s | %s | %s | `%s` |", res$task,
                   res$size, res$blas, res$threads, res$who, res$elapsed, res$cpu,
                   as.integer(res$runs), fmt(res$rate, res$unit), fmt(res$rate_cpu, res$unit),
                   res$unit, res$blas_lib))
writeLines(lines, "bench/gemm.md")
cat(lines, sep = "\n")
