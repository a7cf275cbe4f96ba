# Benchmark: kernel k-means, bochner's exact and random-feature methods
# against kernlab::kkmeans (if installed), on two noisy concentric rings
# (radii 1 and 3, noise sd 0.1, half the points on each) with the Gaussian
# kernel sigma = 1 (kernlab's rbfdot with sigma = 1 / (2 * 1^2) = 0.5),
# k = 2, one thread.  Run from the package root after installing it:
#   Rscript bench/kmeans.R
# It prints a markdown table and writes it into bench/kmeans.md between the
# kmeans markers.  kernlab runs once per size (it takes seconds to tens of
# seconds); bochner's timings are the median of 3 runs.  A last row clusters
# 200 000 points with random features, where no Gram matrix would fit.
library(bochner)

sizes <- c(2000L, 4000L)
reps <- 3L
has_kernlab <- requireNamespace("kernlab", quietly = TRUE)

rings <- function(n) {
  angle <- runif(n, 0, 2 * pi)
  radius <- rep(c(1, 3), each = n / 2) + rnorm(n, sd = 0.1)
  list(x = cbind(radius * cos(angle), radius * sin(angle)), truth = rep(1:2, each = n / 2))
}

# fraction of points on the right ring, up to the labels' names
accuracy <- function(cluster, truth) {
  tab <- table(factor(cluster, 1:2), truth)
  max(sum(diag(tab)), sum(tab) - sum(diag(tab))) / sum(tab)
}

# the kernel k-means objective of a clustering, in the exact feature space
objective <- function(K, cluster) {
  sum(vapply(unique(cluster), function(c) {
    i <- cluster == c
    sum(diag(K)[i]) - sum(K[i, i]) / sum(i)
  }, numeric(1)))
}

time_median <- function(f, times = reps) {
  out <- NULL
  secs <- replicate(times, system.time(out <<- f())[["elapsed"]])
  list(seconds = stats::median(secs), fit = out)
}

kernel <- gaussian_kernel(sigma = 1)
rows <- character()
for (n in sizes) {
  set.seed(n)
  r <- rings(n)
  K <- kernel_matrix(kernel, r$x, nthreads = 1)
  runs <- list(
    "bochner exact, nstart = 1" = function() {
      kernel_kmeans(r$x, 2, kernel, nstart = 1, nthreads = 1, seed = 1)$cluster
    },
    "bochner exact, nstart = 10" = function() {
      kernel_kmeans(r$x, 2, kernel, nstart = 10, nthreads = 1, seed = 1)$cluster
    },
    "bochner rff (D = 500), nstart = 10" = function() {
      kernel_kmeans(r$x, 2, kernel, method = "rff", D = 500, nstart = 10, nthreads = 1,
                    seed = 1)$cluster
    })
  if (has_kernlab) {
    runs[["kernlab::kkmeans"]] <- function() {
      set.seed(1)
      fit <- kernlab::kkmeans(r$x, centers = 2, kernel = "rbfdot",
                              kpar = list(sigma = 1 / (2 * kernel$sigma^2)))
      fit@.Data
    }
  }
  for (name in names(runs)) {
    res <- time_median(runs[[name]], if (grepl("kernlab", name)) 1L else reps)
    rows <- c(rows, sprintf("| %d | %s | %.3f | %.3f | %.2f |", n, name, res$seconds,
                            accuracy(res$fit, r$truth), objective(K, res$fit)))
    cat(utils::tail(rows, 1), "\n")
  }
}

# beyond the Gram matrix (8 n^2 bytes = 320 GB here): random features only
n_big <- 200000L
set.seed(n_big)
r <- rings(n_big)
res <- time_median(function() {
  kernel_kmeans(r$x, 2, kernel, method = "rff", D = 200, nstart = 5, nthreads = 1,
                seed = 1)$cluster
}, 1L)
rows <- c(rows, sprintf("| %d | %s | %.3f | %.3f | (no Gram matrix) |", n_big,
                        "bochner rff (D = 200), nstart = 5", res$seconds,
                        accuracy(res$fit, r$truth)))
cat(utils::tail(rows, 1), "\n")

table <- c(
  sprintf(paste0("Two rings, Gaussian kernel sigma = 1, k = 2, 1 thread; %s; R's BLAS: %s; ",
                 "kernlab %s."),
          format(Sys.Date()), sessionInfo()$BLAS,
          if (has_kernlab) as.character(utils::packageVersion("kernlab")) else "not installed"),
  "",
  "| n | method | seconds | accuracy | objective (exact feature space) |",
  "|---:|---|---:|---:|---:|",
  rows)
cat("\n", table, sep = "\n")

record <- file.path("bench", "kmeans.md")
if (file.exists(record)) {
  lines <- readLines(record)
  start <- grep("<!-- kmeans:start -->", lines, fixed = TRUE)
  end <- grep("<!-- kmeans:end -->", lines, fixed = TRUE)
  if (length(start) == 1L && length(end) == 1L && end > start) {
    lines <- c(lines[seq_len(start)], table, lines[end:length(lines)])
    writeLines(lines, record)
    cat("\nrecorded in", record, "\n")
  }
}
