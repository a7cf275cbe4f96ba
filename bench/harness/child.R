# One fit of bench_fit() (bench/harness/fit.R) in this fresh process:
#   Rscript bench/harness/child.R JOB.rds OUT.rds
args <- commandArgs(trailingOnly = TRUE)
source("bench/harness/harness.R")
job <- readRDS(args[1L])
suppressPackageStartupMessages({
  library(bochner)
  for (p in job$packages) library(p, character.only = TRUE)
})
options(bochner.threads = as.integer(job$threads))
d <- if (!is.null(job$data)) readRDS(job$data)
if (!is.null(job$warmup)) invisible(try(job$warmup(d), silent = TRUE))
invisible(gc())
base <- bench_hwm_mb()
set.seed(job$seed)
t0 <- proc.time()
obj <- job$fit(d)
t <- proc.time() - t0
peak <- bench_hwm_mb() - base
score <- if (!is.null(job$score)) job$score(obj, d) else list()
saveRDS(list(obj = if (isTRUE(job$keep)) obj, elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]],
             peak_mb = peak, blas = bench_blas(), score = score), args[2L])
