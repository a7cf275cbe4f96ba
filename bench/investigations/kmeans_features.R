# Benchmark: k-means on the same random features, bochner's Hartigan-Wong and
# Lloyd (the C code behind kernel_kmeans(method = "rff")) against
# stats::kmeans (Hartigan-Wong) and ClusterR::KMeans_rcpp (k-means++, Lloyd),
# same number of starts, one thread.  Data: k = 10 Gaussian clusters in
# d = 10 (centres N(0, 3^2)), Gaussian kernel sigma = 3, D = 256 phase
# features, computed once and shared by all.  Reports the best objective of
# the starts (within-cluster sum of squares on the features), the adjusted
# Rand index against the labels and seconds per start.
#   Rscript bench/investigations/kmeans_features.R 10000,100000 10     # sizes, nstart
library(bochner)
args <- commandArgs(TRUE)
sizes <- as.numeric(strsplit(if (length(args)) args[1] else "10000,100000", ",")[[1]])
nstart <- as.integer(if (length(args) > 1) args[2] else 10)
k <- 10L; d <- 10L; D <- 256L
ari <- function(a, b) {
  tab <- table(a, b); n <- sum(tab); c2 <- function(v) sum(v * (v - 1) / 2)
  s <- c2(tab); sa <- c2(rowSums(tab)); sb <- c2(colSums(tab)); e <- sa * sb / c2(n)
  (s - e) / ((sa + sb) / 2 - e)
}
wss <- function(Z, cl) sum(vapply(split(seq_len(nrow(Z)), cl), function(i) {
  sum(sweep(Z[i, , drop = FALSE], 2, colMeans(Z[i, , drop = FALSE]))^2) }, 0))
has_clusterr <- requireNamespace("ClusterR", quietly = TRUE)
rows <- character()
for (n in sizes) {
  set.seed(1)
  centres <- matrix(rnorm(k * d, sd = 3), k, d)
  y <- sample(k, n, replace = TRUE)
  x <- centres[y, ] + matrix(rnorm(n * d), n, d)
  map <- random_features(x, gaussian_kernel(3), D = D, type = "phase", seed = 1)
  Z <- predict(map, x, nthreads = 1)
  runs <- list(
    "bochner Hartigan-Wong" = function() .Call(bochner:::C_kmeans_lloyd, Z, k, NULL, NULL, TRUE, 0L, nstart, 100L, 1L)$cluster,
    "bochner Lloyd" = function() .Call(bochner:::C_kmeans_lloyd, Z, k, NULL, NULL, FALSE, 0L, nstart, 100L, 1L)$cluster,
    "stats::kmeans (Hartigan-Wong)" = function() stats::kmeans(Z, k, nstart = nstart, iter.max = 100)$cluster)
  if (has_clusterr) runs[["ClusterR::KMeans_rcpp"]] <- function() {
    ClusterR::KMeans_rcpp(Z, k, num_init = nstart, max_iters = 100, initializer = "kmeans++",
                          seed = 1)$clusters
  }
  for (name in names(runs)) {
    set.seed(2)
    secs <- system.time(cl <- suppressWarnings(runs[[name]]()))[["elapsed"]]
    rows <- c(rows, sprintf("| %d | %s | %.6g | %.4f | %.3f |", n, name, wss(Z, cl), ari(cl, y),
                            secs / nstart))
    cat(tail(rows, 1), "\n")
  }
}
cat(sprintf("\nk = %d, d = %d, D = %d, nstart = %d, 1 thread; %s; ClusterR %s\n\n", k, d, D, nstart,
            format(Sys.Date()), if (has_clusterr) as.character(utils::packageVersion("ClusterR")) else "not installed"),
    "| n | method | best objective | ARI | seconds per start |", "|---:|---|---:|---:|---:|", rows, sep = "\n")
