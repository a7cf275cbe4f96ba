# The kernel statistics in single precision (issue 38): hsic_test() and mmd_test() with
# the gamma null, kernel_pca() and kernel_cca(), each with precision = "double" and
# "single" on the same features (same seed), alternately in one process after a warm-up:
# elapsed seconds and how far single's results are from double's.  The evidence behind
# the statistics' precision = "auto" (?feature_precision).
#
# Usage, from the package root after installing the package:
#     Rscript bench/investigations/statistics-precision.R [--n=2e5] [--D=512] [--threads=1,2]
# prints a markdown table (bench/investigations/statistics-precision.md quotes it).
source("bench/harness/report.R")    # bench_arg()
source("bench/harness/machine.R")   # bench_lscpu(), bench_load()
opt <- function(name, default) bench_arg(name, default, split = TRUE)
suppressPackageStartupMessages(library(bochner))
n <- as.numeric(opt("n", "2e5"))
D <- as.integer(opt("D", "512"))
threads <- as.integer(opt("threads", c("1", "2")))
cat(sprintf("`Rscript bench/investigations/statistics-precision.R --n=%g --D=%d`, %s UTC; %s, %d CPUs; load averages %s at the start.\n\n",
            n, D, format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"), bench_lscpu()$cpu,
            parallel::detectCores(), bench_load()))
set.seed(1)
d <- 10
x <- matrix(rnorm(n * d), n)
y <- cbind(sin(x[, 1]) + rnorm(n, sd = 0.5), rnorm(n))        # dependent on x's first column
z <- matrix(rnorm(n * d), n)
z[, 1] <- z[, 1] * 1.02                                       # a small change of scale
cases <- list(
  hsic_test = list(features = 2 * D, run = function(p, nth)
    hsic_test(x, y, D = D, null = "gamma", seed = 1, precision = p, nthreads = nth),
    out = function(r) c(statistic = unname(r$statistic), p = r$p.value)),
  mmd_test = list(features = D, run = function(p, nth)
    mmd_test(x, z, D = D, null = "gamma", seed = 1, precision = p, nthreads = nth),
    out = function(r) c(statistic = unname(r$statistic), p = r$p.value)),
  kernel_pca = list(features = D, run = function(p, nth)
    kernel_pca(x, rank = 5, D = D, retx = FALSE, seed = 1, precision = p, nthreads = nth),
    out = function(r) c(statistic = unname(r$variance[1L]), p = NA)),
  kernel_cca = list(features = 2 * D, run = function(p, nth)
    kernel_cca(x, y, rank = 2, D = D, seed = 1, precision = p, nthreads = nth),
    out = function(r) c(statistic = r$cor[1L], p = NA)))
invisible(kernel_pca(x[1:2000, ], D = 64, seed = 1))
rows <- list()
for (nm in names(cases)) for (nth in threads) {
  cs <- cases[[nm]]
  got <- list()
  for (p in c("double", "single", "auto")) {
    gc()
    t <- system.time(r <- cs$run(p, nth))[["elapsed"]]
    got[[p]] <- list(t = t, out = cs$out(r), r = r)
  }
  o_d <- got$double$out
  o_s <- got$single$out
  auto <- if (identical(got$auto$out, o_s)) "single" else if (identical(got$auto$out, o_d)) "double" else "?"
  rows[[length(rows) + 1L]] <- sprintf(
    "| %s | %g | %d | %d | %.2f | %.2f | %.2f | %.3g | %.2e | %s | %s |", nm, n, cs$features, nth,
    got$double$t, got$single$t, got$single$t / got$double$t, o_d[["statistic"]],
    abs(o_s[["statistic"]] - o_d[["statistic"]]) / abs(o_d[["statistic"]]),
    if (is.na(o_d[["p"]])) "" else sprintf("%.3g / %.3g", o_d[["p"]], o_s[["p"]]), auto)
}
cat("| statistic | n | features in the product | threads | double s | single s | single / double | double's value | single's relative difference | p-value double / single | auto chose |\n")
cat("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
cat(unlist(rows), sep = "\n")
cat(sprintf("\nValue: the statistic (hsic_test, mmd_test), the first component's variance (kernel_pca), the first canonical correlation (kernel_cca).  Load averages %s at the end.\n",
            bench_load()))
