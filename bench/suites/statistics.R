# Suite statistics: mmd_test(), hsic_test(), kernel_pca(), kernel_cca()
# beside kernlab::kmmd / kpca / kcca, dHSIC::dhsic.test and energy::dcor.test:
# the same statistics on the same data and kernels (agreement), the level
# over null replicates, time against n, and n rows per sample at scale
# (each scale fit in a fresh process, for its peak memory).  Ported from
# bench/statistics.R (agree, level, time, scale); its seeds and power studies
# are investigations (bench/investigations/statistics.R).
source("bench/harness/harness.R")
o <- bench_start("statistics", "Kernel statistics against kernlab, dHSIC and energy")
suppressPackageStartupMessages(library(bochner))
options(bochner.threads = 1L)
once <- function(expr_fun) bench_time(expr_fun, runs = 1L)
val <- function(question, case, method, role, fun, pick) {
  v <- NULL
  t <- once(function() v <<- fun())
  bench_add(question, case, method, role, t, metric = "value", value = pick(v))
}

# 1. Agreement: same data, same kernels (bench/statistics.R's "agree")
set.seed(1)
m <- 150
x <- matrix(rnorm(2 * m), m, 2)
y <- matrix(rnorm(2 * m, sd = 1.3), m, 2)
s <- 1.5
val("agree", "MMD^2 biased", "mmd_test_exact", "bochner",
    function() mmd_test(x, y, gaussian_kernel(s), method = "exact", B = 500, seed = 1), function(r) unname(r$estimate))
if (bench_have("kernlab")) {
  val("agree", "MMD^2 biased", "kernlab_kmmd", "peer",
      function() suppressMessages(kernlab::kmmd(x, y, kernel = "rbfdot", kpar = list(sigma = 1 / (2 * s^2)))),
      function(k) kernlab::mmdstats(k)[1]^2)
}
xi <- rnorm(m)
yi <- xi^2 + rnorm(m, sd = 1.5)
val("agree", "n HSIC_b", "hsic_test_exact", "bochner",
    function() hsic_test(xi, yi, gaussian_kernel(1), gaussian_kernel(2), method = "exact", null = "gamma"),
    function(h) m * unname(h$statistic))
val("agree", "HSIC gamma p", "hsic_test_exact", "bochner",
    function() hsic_test(xi, yi, gaussian_kernel(1), gaussian_kernel(2), method = "exact", null = "gamma"),
    function(h) h$p.value)
val("agree", "HSIC gamma p", "hsic_test_rff1024", "bochner",
    function() hsic_test(xi, yi, gaussian_kernel(1), gaussian_kernel(2), method = "rff", D = 1024, null = "gamma", seed = 2),
    function(h) h$p.value)
if (bench_have("dHSIC")) {
  val("agree", "n HSIC_b", "dhsic_test", "peer",
      function() dHSIC::dhsic.test(xi, yi, kernel = "gaussian.fixed", bandwidth = c(1, 2), method = "gamma"),
      function(d) d$statistic)
  val("agree", "HSIC gamma p", "dhsic_test", "peer",
      function() dHSIC::dhsic.test(xi, yi, kernel = "gaussian.fixed", bandwidth = c(1, 2), method = "gamma"),
      function(d) d$p.value)
}
if (bench_have("energy")) {
  set.seed(3)
  val("agree", "independence p, y = x^2 + noise", "hsic_test_exact_perm1000", "bochner",
      function() hsic_test(xi, yi, gaussian_kernel(1), gaussian_kernel(2), method = "exact",
                           null = "permutation", B = 1000, seed = 2), function(h) h$p.value)
  val("agree", "independence p, y = x^2 + noise", "energy_dcor_test", "peer",
      function() energy::dcor.test(xi, yi, R = 1000), function(d) d$p.value)
}
if (bench_have("kernlab")) {
  fit <- kernel_pca(x, gaussian_kernel(s), rank = 3, method = "exact")
  val("agree", "kernel PCA: min |cor| of 3 scores with kpca", "kernel_pca_exact", "bochner",
      function() kernlab::kpca(x, kernel = "rbfdot", kpar = list(sigma = 1 / (2 * s^2)), features = 3),
      function(kp) min(abs(diag(stats::cor(kernlab::rotated(kp), fit$x)))))
}

# 2. Level: rejection rate at 5 % over null replicates, n = 200 per sample, d = 2
reps <- bench_size(500L, 60L, 10L)
tests <- list(
  mmd_exact_perm200 = function(a, b) mmd_test(a, b, method = "exact", B = 200),
  mmd_exact_gamma = function(a, b) mmd_test(a, b, method = "exact", null = "gamma"),
  mmd_rff256_gamma = function(a, b) mmd_test(a, b, D = 256, null = "gamma"),
  hsic_exact_gamma = function(a, b) hsic_test(a, b, method = "exact", null = "gamma"),
  hsic_rff256_gamma = function(a, b) hsic_test(a, b, D = 256, null = "gamma"))
set.seed(20)
null_data <- lapply(seq_len(reps), function(i) list(a = matrix(rnorm(400), 200), b = matrix(rnorm(400), 200)))
for (nm in names(tests)) {
  p <- NULL
  t <- once(function() p <<- vapply(null_data, function(dd) tests[[nm]](dd$a, dd$b)$p.value, 0))
  bench_add("level (5 %)", sprintf("n = 200, d = 2, %d null replicates", reps), nm, "bochner", t,
            metric = "rejection rate", value = mean(p <= 0.05))
}

# 3. Time against n per sample, d = 2 (one run each; the peers where they fit)
k <- gaussian_kernel(1)
for (n in bench_size(c(500L, 1000L, 2000L, 4000L), c(500L, 1000L), 200L)) {
  set.seed(n)
  a <- matrix(rnorm(2 * n), n, 2)
  b <- matrix(rnorm(2 * n), n, 2)
  case <- sprintf("n = %d", n)
  timed <- list(
    mmd_rff1024_perm200 = list("bochner", function() mmd_test(a, b, k, D = 1024, B = 200)),
    mmd_exact_perm200 = if (n <= 2000) list("bochner", function() mmd_test(a, b, k, method = "exact", B = 200)),
    kernlab_kmmd = if (requireNamespace("kernlab", quietly = TRUE))
      list("peer", function() suppressMessages(kernlab::kmmd(a, b, kernel = "rbfdot", kpar = list(sigma = 0.5)))),
    hsic_rff1024_gamma = list("bochner", function() hsic_test(a, b[, 1], k, k, D = 1024, null = "gamma")),
    hsic_exact_gamma = list("bochner", function() hsic_test(a, b[, 1], k, k, method = "exact", null = "gamma")),
    dhsic_gamma = if (requireNamespace("dHSIC", quietly = TRUE))
      list("peer", function() dHSIC::dhsic.test(a, b[, 1], kernel = "gaussian.fixed", bandwidth = 1, method = "gamma")),
    dcor_R200 = if (n <= 2000 && requireNamespace("energy", quietly = TRUE))
      list("peer", function() energy::dcor.test(a, b[, 1], R = 200)),
    kpca_rff1024_5 = list("bochner", function() kernel_pca(a, k, rank = 5, D = 1024)),
    kpca_exact5 = if (n <= 2000) list("bochner", function() kernel_pca(a, k, rank = 5, method = "exact")),
    kernlab_kpca5 = if (n <= 2000 && requireNamespace("kernlab", quietly = TRUE))
      list("peer", function() kernlab::kpca(a, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 5)),
    kcca_rff512 = list("bochner", function() kernel_cca(a, b, k, k, rank = 2, D = 512)),
    kernlab_kcca = if (n <= bench_size(1000L, 500L) && requireNamespace("kernlab", quietly = TRUE))
      list("peer", function() kernlab::kcca(a, b, kernel = "rbfdot", kpar = list(sigma = 0.5), ncomps = 2)))
  for (nm in names(timed)) {
    if (is.null(timed[[nm]])) next
    for (r in seq_len(o$reps)) bench_add("time against n", case, nm, timed[[nm]][[1]], once(timed[[nm]][[2]]), r)
  }
}

# 4. Scale: n rows per sample, d = 10, D = 256, each call in a fresh process
n_big <- bench_size(1e6, 1e5, 1e4)
set.seed(40)
big <- list(x = matrix(rnorm(10 * n_big), n_big, 10), y = matrix(rnorm(10 * n_big), n_big, 10))
big$y[, 1] <- big$y[, 1] + 0.01
f <- bench_data_file(big)
rm(big)
pval <- function(obj, d) list(metric = "p", value = if (is.list(obj) && !is.null(obj$p.value)) obj$p.value else NA_real_)
calls <- list(
  mmd_rff256_perm200 = function(d) mmd_test(d$x, d$y, gaussian_kernel(sqrt(20)), D = 256, B = 200, seed = 1),
  mmd_rff256_gamma = function(d) mmd_test(d$x, d$y, gaussian_kernel(sqrt(20)), D = 256, null = "gamma", seed = 1),
  hsic_rff256_gamma = function(d) hsic_test(d$x, d$y, gaussian_kernel(sqrt(20)), gaussian_kernel(sqrt(20)),
                                            D = 256, null = "gamma", seed = 1),
  kpca_rff256_rank10 = function(d) kernel_pca(d$x, gaussian_kernel(sqrt(20)), rank = 10, D = 256, retx = FALSE, seed = 1))
for (nm in names(calls)) {
  for (th in bench_size(c(1L, 2L), 2L, 1L)) {
    bench_add("scale", sprintf("n = %.0e per sample, d = 10", n_big), nm, "bochner",
              bench_fit(calls[[nm]], f, pval, threads = th))
  }
}
unlink(f)

nq <- bench_size(2000L, 1000L, 200L)
case_n <- sprintf("n = %d", nq)
bench_finish(headline = list(
  list(figure = "MMD^2 biased (agreement)", question = "agree", case = "MMD^2 biased", ours = "mmd_test_exact",
       peer = "kernlab_kmmd", measure = "value"),
  list(figure = "n HSIC_b (agreement)", question = "agree", case = "n HSIC_b", ours = "hsic_test_exact",
       peer = "dhsic_test", measure = "value"),
  list(figure = "HSIC gamma p (agreement)", question = "agree", case = "HSIC gamma p", ours = "hsic_test_exact",
       peer = "dhsic_test", measure = "value"),
  list(figure = sprintf("MMD rff D = 1024, B = 200, %s: seconds", case_n), question = "time against n",
       case = case_n, ours = "mmd_rff1024_perm200", peer = "kernlab_kmmd"),
  list(figure = sprintf("HSIC rff D = 1024, gamma, %s: seconds", case_n), question = "time against n",
       case = case_n, ours = "hsic_rff1024_gamma", peer = "dhsic_gamma"),
  list(figure = sprintf("kernel PCA rff D = 1024, %s: seconds", case_n), question = "time against n",
       case = case_n, ours = "kpca_rff1024_5", peer = "kernlab_kpca5"),
  list(figure = sprintf("level of the exact MMD permutation test (%d replicates)", reps), question = "level (5 %)",
       case = sprintf("n = 200, d = 2, %d null replicates", reps), ours = "mmd_exact_perm200", measure = "value"),
  list(figure = sprintf("MMD rff gamma at n = %.0e per sample: seconds", n_big), question = "scale",
       case = sprintf("n = %.0e per sample, d = 10", n_big), ours = "mmd_rff256_gamma",
       threads = max(bench_size(c(1L, 2L), 2L, 1L)))),
  about = c(
    "Agreement: x, y of 150 rows (sd 1 and 1.3), Gaussian sigma = 1.5 (kernlab `rbfdot(sigma = 1 / (2 s^2))`);",
    "y = x^2 + N(0, 1.5^2) with kernels sigma 1 and 2 for HSIC; the figure is the statistic or p-value.",
    "Level: rejection rate at 5 % over null replicates (two N(0, I) samples of 200 rows, d = 2).",
    "Time: one run per repetition, in the suite's process, 1 thread.  Scale: each call in a fresh process."))
