# Exact kernel k-means against kernlab::kkmeans at n = 2000 (two rings, sd 0.2,
# Gaussian sigma = 1, one thread) under whichever BLAS this process loaded;
# run it once per BLAS, e.g.
#   Rscript bench/kmeans_blas.R
#   OPENBLAS_NUM_THREADS=1 R_LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread:/usr/lib/R/lib:/usr/lib/x86_64-linux-gnu Rscript bench/kmeans_blas.R
suppressPackageStartupMessages(library(bochner))
cat(extSoftVersion()[["BLAS"]], "\n")
set.seed(1); n <- 1000
angle <- runif(2 * n, 0, 2 * pi); radius <- rep(c(1, 3), each = n) + rnorm(2 * n, sd = 0.2)
x <- cbind(radius * cos(angle), radius * sin(angle))
k <- gaussian_kernel(1)
invisible(kernel_kmeans(x[1:200, ], 2, k, seed = 1))
t1 <- system.time(f1 <- kernel_kmeans(x, 2, k, nstart = 1, seed = 1, nthreads = 1))[["elapsed"]]
t10 <- system.time(f10 <- kernel_kmeans(x, 2, k, nstart = 10, seed = 1, nthreads = 1))[["elapsed"]]
set.seed(1)
tk <- system.time(kk <- kernlab::kkmeans(x, centers = 2, kernel = "rbfdot", kpar = list(sigma = 0.5)))[["elapsed"]]
acc <- function(cl) max(mean(cl == rep(1:2, each = n)), mean(cl == rep(2:1, each = n)))
cat(sprintf("bochner 1 start %.3f s (acc %.3f), 10 starts %.3f s; kkmeans %.2f s (acc %.3f); ratios %.0fx / %.0fx\n",
            t1, acc(f1$cluster), t10, tk, acc(kk@.Data), tk / t1, tk / t10))
K <- kernel_matrix(k, x)
obj <- function(cl) sum(sapply(unique(cl), function(c) { i <- cl == c; sum(diag(K)[i]) - sum(K[i, i]) / sum(i) }))
