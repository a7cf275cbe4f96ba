# Suite kmeans: kernel k-means (kernel_kmeans()) exact and on random features
# against kernlab::kkmeans, and random features beyond the Gram matrix.
# Ported from bench/kmeans.R (rings) and bench/kmeans_large.R (mini-batch at
# 10^6 rows); each fit in a fresh process (time, CPU, peak memory).
source("bench/harness/harness.R")
o <- bench_start("kmeans", "Kernel k-means against kernlab::kkmeans")
kernel_sigma <- 1

# 1. Two rings (radii 1 and 3), Gaussian kernel sigma = 1, k = 2, 1 thread.
score_rings <- function(obj, d) {
  list(metric = "ARI", value = bench_ari(as.integer(obj), d$truth))
}
fits <- list(
  exact_nstart1 = function(d) kernel_kmeans(d$x, 2, gaussian_kernel(1), nstart = 1, nthreads = 1, seed = 1)$cluster,
  exact_nstart10 = function(d) kernel_kmeans(d$x, 2, gaussian_kernel(1), nstart = 10, nthreads = 1, seed = 1)$cluster,
  rff_D500_nstart10 = function(d) {
    kernel_kmeans(d$x, 2, gaussian_kernel(1), method = "rff", D = 500, nstart = 10, nthreads = 1, seed = 1)$cluster
  },
  # kernlab's rbfdot(sigma) is exp(-sigma |x - y|^2): sigma = 1 / (2 * 1^2)
  kkmeans = function(d) kernlab::kkmeans(d$x, centers = 2, kernel = "rbfdot", kpar = list(sigma = 0.5))@.Data
)
warm <- function(d) kernel_kmeans(d$x[1:100, ], 2, gaussian_kernel(1), nstart = 1, seed = 1)
sizes <- bench_size(c(2000L, 4000L), 1000L, 300L)
for (n in sizes) {
  data <- bench_data_file(bench_rings(n))
  for (m in names(fits)) {
    peer <- m == "kkmeans"
    if (peer && !bench_have("kernlab")) next
    for (r in seq_len(if (peer) 1L else o$reps)) {
      res <- bench_fit(fits[[m]], data, score_rings, warmup = if (!peer) warm, threads = 1L,
                       packages = if (peer) "kernlab")
      bench_add("rings", sprintf("n = %d", n), m, if (peer) "peer" else "bochner", res, r)
    }
  }
  unlink(data)
}

# 2. Beyond the Gram matrix: rings with random features (one start of 5),
#    and mini-batch k-means on 10 Gaussian clusters in d = 10 (D = 256,
#    batches of 10 000, the n x D features never all in memory).
n_big <- bench_size(200000L, 20000L, 2000L)
data <- bench_data_file(bench_rings(n_big))
for (r in seq_len(o$reps)) {
  res <- bench_fit(function(d) {
    kernel_kmeans(d$x, 2, gaussian_kernel(1), method = "rff", D = 200, nstart = 5, nthreads = 1, seed = 1)$cluster
  }, data, score_rings, warmup = warm)
  bench_add("rings, no Gram matrix", sprintf("n = %d", n_big), "rff_D200_nstart5", "bochner", res, r)
}
unlink(data)
n_mb <- bench_size(1e6, 1e5, 5e3)
clusters <- bench_clusters(n_mb, 10L, 10L, seed = 1L)
data <- bench_data_file(list(x = clusters$x, truth = clusters$truth))
for (method in bench_size(c("rff", "nystrom"), c("rff", "nystrom"), "rff")) {
  for (th in bench_size(c(1L, 2L), 2L, 1L)) {
    for (r in seq_len(if (o$tiny) 1L else o$reps)) {
      res <- bench_fit(eval(bquote(function(d) {
        kernel_kmeans(d$x, 10, gaussian_kernel(3), method = .(method), D = 256,
                      batch = 10000, nstart = 3, seed = 1)$cluster
      })), data, score_rings, threads = th)
      bench_add("mini-batch clusters", sprintf("n = %.0e, d = 10, k = 10", n_mb),
                paste0(method, "_D256_minibatch"), "bochner", res, r)
    }
  }
}
unlink(data)

n1 <- sizes[length(sizes)]
bench_finish(
  headline = list(
    list(figure = sprintf("rings n = %d, exact, 10 starts: seconds", n1), question = "rings",
         case = sprintf("n = %d", n1), ours = "exact_nstart10", peer = "kkmeans"),
    list(figure = sprintf("rings n = %d, rff D = 500, 10 starts: seconds", n1), question = "rings",
         case = sprintf("n = %d", n1), ours = "rff_D500_nstart10", peer = "kkmeans"),
    list(figure = sprintf("rings n = %d, exact, 10 starts: ARI", n1), question = "rings",
         case = sprintf("n = %d", n1), ours = "exact_nstart10", peer = "kkmeans", measure = "value"),
    list(figure = sprintf("rings n = %d, rff D = 200: seconds (no Gram matrix)", n_big),
         question = "rings, no Gram matrix", case = sprintf("n = %d", n_big), ours = "rff_D200_nstart5"),
    list(figure = sprintf("mini-batch rff n = %.0e: peak MB", n_mb), question = "mini-batch clusters",
         case = sprintf("n = %.0e, d = 10, k = 10", n_mb), ours = "rff_D256_minibatch", measure = "peak_mb")),
  about = c(
    "Two noisy concentric rings (radii 1 and 3, sd 0.1; `bench_rings()`), Gaussian kernel",
    "sigma = 1 (kernlab `rbfdot(sigma = 0.5)`), k = 2, one thread; ARI against the rings.",
    "kernlab runs once per size (it takes seconds to tens of seconds).  Mini-batch:",
    "`kernel_kmeans(x, 10, gaussian_kernel(3), method = \"rff\" | \"nystrom\", D = 256, batch = 10000, nstart = 3)`",
    "on 10 Gaussian clusters in d = 10 (`bench_clusters()`, seed 1); ARI against the clusters."))
