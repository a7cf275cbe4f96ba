# Benchmark: kernel k-means at n = 1e6 .. 1e7 (d = 10, k = 10 Gaussian
# clusters, centres N(0, 3^2)), Gaussian kernel sigma = 3, D = 256 random
# Fourier features or Nystrom landmarks, mini-batch k-means (batch = 10 000,
# at most 100 steps, nstart = 3 on the first batch) so that the n x D
# features are never all in memory.  Reports elapsed seconds, the adjusted
# Rand index against the generating clusters, and the process's peak
# resident memory (VmHWM from /proc/self/status, which includes the data
# x: 8 n d bytes).  One size and method per process, so the peak is its own:
#   Rscript bench/kmeans_large.R 1e7 rff
#   Rscript bench/kmeans_large.R 1e7 nystrom
library(bochner)
args <- commandArgs(TRUE)
n <- as.numeric(if (length(args)) args[1] else 1e6)
method <- if (length(args) > 1) args[2] else "rff"
k <- 10L; d <- 10L; D <- 256L
peak_mb <- function() {
  line <- grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}
ari <- function(a, b) {
  tab <- table(a, b); c2 <- function(v) sum(v * (v - 1) / 2)
  s <- c2(tab); sa <- c2(rowSums(tab)); sb <- c2(colSums(tab)); e <- sa * sb / c2(sum(tab))
  (s - e) / ((sa + sb) / 2 - e)
}
set.seed(1)
centres <- matrix(rnorm(k * d, sd = 3), k, d)
y <- sample(k, n, replace = TRUE)
x <- centres[y, ] + matrix(rnorm(n * d), n, d)
before <- peak_mb()
secs <- system.time(fit <- kernel_kmeans(x, k, gaussian_kernel(3), method = method, D = D,
                                         batch = 10000, nstart = 3, seed = 1))[["elapsed"]]
cat(sprintf("| %.0e | %s | %d | %.1f | %.4f | %.0f | %.0f | %d |\n", n, method, bochner_threads(),
            secs, ari(fit$cluster, y), before, peak_mb(), fit$iter))
