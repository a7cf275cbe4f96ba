# Exact kernel k-means against kernlab::kkmeans at n = 2000 on the rings of
# bench/kmeans.R (radii 1 and 3, noise sd 0.1, Gaussian sigma = 1, one
# thread) under whichever BLAS this process loaded; run it once per BLAS:
#   Rscript bench/investigations/kmeans_blas.R
#   OPENBLAS_NUM_THREADS=1 R_LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread:/usr/lib/R/lib:/usr/lib/x86_64-linux-gnu Rscript bench/investigations/kmeans_blas.R
suppressPackageStartupMessages(library(bochner))
set.seed(1)
n <- 2000
angle <- runif(n, 0, 2 * pi)
ring <- rep(1:2, each = n / 2)
radius <- c(1, 3)[ring] + rnorm(n, sd = 0.1)
x <- cbind(radius * cos(angle), radius * sin(angle))
k <- gaussian_kernel(1)
invisible(kernel_kmeans(x[1:200, ], 2, k, seed = 1))          # warm-up
t1 <- system.time(f1 <- kernel_kmeans(x, 2, k, nstart = 1, seed = 1, nthreads = 1))[["elapsed"]]
t10 <- system.time(f10 <- kernel_kmeans(x, 2, k, seed = 1, nthreads = 1))[["elapsed"]]
set.seed(1)
tk <- system.time(kk <- kernlab::kkmeans(x, centers = 2, kernel = "rbfdot",
                                         kpar = list(sigma = 0.5)))[["elapsed"]]
accuracy <- function(cl) max(mean(cl == ring), mean(cl == 3 - ring))
cat(sprintf(paste0("BLAS %s\nbochner exact: 1 start %.3f s (accuracy %.3f), 10 starts (default) %.3f s ",
                   "(accuracy %.3f); kernlab::kkmeans %.2f s (accuracy %.3f); ratios %.0fx and %.0fx\n"),
            extSoftVersion()[["BLAS"]], t1, accuracy(f1$cluster), t10, accuracy(f10$cluster),
            tk, accuracy(kk@.Data), tk / t1, tk / t10))
