# Evaluated falkon passes with a group of rows per thread (src/falkon.c,
# groups_evaluated()) against the block-by-block pass, on the same machine in
# one run: two libraries, each measurement a fresh R process, the libraries
# alternating.  An idle machine:
#   Rscript bench/investigations/falkon-groups.R <lib before> <lib after> [reps]
# Measures (d = 20, Gaussian kernel, double precision, no cache):
#   pass     one pass K'(K u) at n = 2e5, m = 1000, 4000, 10^4 (median of 3 in a process)
#   predict  K alpha at n = 2e5, m = 10^4 (median of 3)
#   fit      falkon(x, y, m = 1e4) on the machine suite's synth_1e6 data (n = 10^6;
#            bench/harness/data.R), elapsed, CPU and the process's peak resident memory
# on 1 and 2 threads.  Results: bench/investigations/falkon-groups.md.
args <- commandArgs(TRUE)
if (length(args) < 2L) stop("usage: falkon-groups.R <lib before> <lib after> [reps]")
libs <- c(before = args[1], after = args[2])
reps <- if (length(args) > 2L) as.integer(args[3]) else 1L
data_r <- normalizePath(file.path("bench", "harness", "data.R"))

child <- function(lib, code) {
  f <- tempfile(fileext = ".R")
  writeLines(c("suppressPackageStartupMessages(library(bochner))", code,
               "hwm <- grep('^VmHWM', readLines('/proc/self/status'), value = TRUE)",
               "cat('PEAK', as.numeric(gsub('[^0-9]', '', hwm)) / 1024, '\\n')"), f)
  out <- system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE, stderr = TRUE,
                 env = paste0("R_LIBS=", lib))
  unlink(f)
  val <- function(key) as.numeric(strsplit(grep(paste0("^", key), out, value = TRUE), " +")[[1]][-1])
  list(res = val("RES"), peak = val("PEAK"))
}

pass_code <- function(n, m, th, what) c(
  "set.seed(1); d <- 20",
  sprintf("n <- %g; m <- %d; th <- %dL", n, m, th),
  "x <- matrix(rnorm(n * d), n, d); ker <- gaussian_kernel(4)",
  "code <- bochner:::kernel_code(ker); par <- bochner:::kernel_parameters(ker)",
  "C <- x[sample(n, m), ]; U <- matrix(rnorm(m), m)",
  if (what == "pass") {
    "f <- function() .Call(bochner:::C_falkon_knm_apply, x, C, code, par, U, NULL, NULL, NULL, 0, FALSE, th, NULL, FALSE)"
  } else {
    "f <- function() bochner:::falkon_kernel_predict(list(centres = C, code = code, par = par), x, U, th)"
  },
  "t <- replicate(3, system.time(f())[c(3, 1, 2)])",
  "cat('RES', median(t[1, ]), median(t[2, ] + t[3, ]), '\\n')")

fit_code <- function(th) c(
  sprintf("source('%s')", data_r),
  "d <- bench_synth_reg(1.1e6)",
  "tr <- seq_len(1e6)",
  sprintf("options(bochner.threads = %dL)", th),
  "t <- system.time(f <- falkon(d$x[tr, ], d$y[tr], m = 1e4))",
  "rmse <- sqrt(mean((predict(f, d$x[-tr, ]) - d$y[-tr])^2))",
  "cat('RES', t[[3]], t[[1]] + t[[2]], rmse, '\\n')")

rows <- list()
add <- function(what, size, lib, th, r) {
  rows[[length(rows) + 1L]] <<- data.frame(what = what, size = size, library = lib, threads = th,
                                           seconds = r$res[1], cpu = r$res[2],
                                           rmse = if (length(r$res) > 2L) r$res[3] else NA,
                                           peak_mb = round(r$peak))
}
for (rep in seq_len(reps)) {
  for (th in 1:2) for (lib in names(libs)) {
    for (m in c(1000L, 4000L, 10000L))
      add("pass", sprintf("n = 2e5, m = %d", m), lib, th, child(libs[[lib]], pass_code(2e5, m, th, "pass")))
    add("predict", "n = 2e5, m = 10000", lib, th, child(libs[[lib]], pass_code(2e5, 10000L, th, "predict")))
  }
  for (th in 2:1) for (lib in names(libs))
    add("fit", "n = 1e6, m = 10000", lib, th, child(libs[[lib]], fit_code(th)))
}
res <- do.call(rbind, rows)
source("bench/harness/machine.R")
cpu <- bench_lscpu()$cpu
cat(sprintf("CPU: %s; %d cores; load %s\n\n", cpu, parallel::detectCores(),
            paste(readLines("/proc/loadavg"), collapse = "")))
cat("| measure | size | library | threads | seconds | CPU s | RMSE | peak MB |\n|---|---|---|---:|---:|---:|---:|---:|\n")
for (i in seq_len(nrow(res))) with(res[i, ], cat(sprintf("| %s | %s | %s | %d | %.3g | %.3g | %s | %d |\n",
  what, size, library, threads, seconds, cpu, if (is.na(rmse)) "-" else sprintf("%.5f", rmse), peak_mb)))
