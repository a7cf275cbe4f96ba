# falkon() where single precision changes what is cached: n = 10^5, d = 10, 2000 centres,
# cache_bytes = 1e9: K_nm is 1.6 GB in double (not cached: every pass evaluates the
# kernel) and 0.8 GB in float (cached).  Fixed lambda = 1e-4 and 20 iterations, 2 threads,
# double and single alternating twice; test RMSE and elapsed / CPU time.  The evidence for
# falkon_control(precision = "auto") choosing single there (falkon-precision.md).
# Usage: Rscript bench/investigations/falkon-precision-cache.R
library(bochner)
set.seed(6)
n <- 1e5; d <- 10
x <- matrix(rnorm(n * d), n); y <- sin(x[, 1]) + cos(x[, 2]) + 0.5 * x[, 3] * x[, 4] + 0.5 * rnorm(n)
xt <- matrix(rnorm(2e4 * d), 2e4); yt <- sin(xt[, 1]) + cos(xt[, 2]) + 0.5 * xt[, 3] * xt[, 4] + 0.5 * rnorm(2e4)
cat("load", readLines("/proc/loadavg"), "\n")
for (p in c("double", "single", "double", "single")) {
  gc()
  t <- system.time(f <- falkon(x, y, m = 2000, lambda = 1e-4, iter = 20, seed = 1, nthreads = 2,
                             control = falkon_control(precision = p, cache_bytes = 1e9)))
  cat(sprintf("%s: RMSE %.5f elapsed %.1f s CPU %.1f s\n", p, sqrt(mean((predict(f, xt) - yt)^2)), t[["elapsed"]], t[["user.self"]] + t[["sys.self"]]))
}
cat("load", readLines("/proc/loadavg"), "\n")
