# The speed of one pass of falkon() over the rows, K' (K U), in nanoseconds
# per kernel entry (n m), elapsed time, median of 3: the pass that evaluates
# the kernel block by block (no cache: n = 10^5, d = 20, m = 1000 .. 10^4,
# k = 1 column, as a CG iteration of a regression) and the pass on a cached
# K_nm (n = 10^5, m = 4000, k = 1, with row weights and K U kept, as a
# logistic Newton step's CG iteration), on 1 and 2 threads.  An idle
# machine; run it with two libraries to compare versions:
#   R_LIBS=<lib> Rscript bench/investigations/falkon-pass-speed.R
# Results: bench/investigations/falkon-passes.md.
suppressPackageStartupMessages(library(bochner))
elapsed <- function(f, reps = 3L) {
  stats::median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
}
set.seed(1)
n <- 1e5
d <- 20
x <- matrix(rnorm(n * d), n, d)
ker <- gaussian_kernel(4)
code <- bochner:::kernel_code(ker)
par <- bochner:::kernel_parameters(ker)
pass <- function(C, U, nth, K = NULL, w = NULL, keep = FALSE) {
  function() .Call(bochner:::C_falkon_knm_apply, x, C, code, par, U, NULL, w, NULL, 0, keep,
                   nth, K, FALSE)
}
out <- NULL
for (m in c(1000, 4000, 10000)) {
  C <- x[sample(n, m), ]
  U <- matrix(rnorm(m), m)
  for (nth in 1:2) {
    s <- elapsed(pass(C, U, nth))
    out <- rbind(out, data.frame(pass = "evaluated", m = m, threads = nth, seconds = s,
                                 ns_per_entry = 1e9 * s / (n * m)))
  }
}
m <- 4000
C <- x[sample(n, m), ]
U <- matrix(rnorm(m), m)
w <- matrix(runif(n), n)
K <- .Call(bochner:::C_falkon_kernel_cache, x, C, code, par, 0, 2L, FALSE)
for (nth in 1:2) {
  s <- elapsed(pass(C, U, nth, K, w, TRUE))
  out <- rbind(out, data.frame(pass = "cached", m = m, threads = nth, seconds = s,
                               ns_per_entry = 1e9 * s / (n * m)))
}
cat("library:", dirname(system.file(package = "bochner")), " load:",
    scan("/proc/loadavg", what = "", n = 1, quiet = TRUE), "\n")
print(out, digits = 3, row.names = FALSE)
