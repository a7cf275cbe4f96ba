# Benchmark: the default nstart.  The default call kernel_kmeans(x, k,
# nstart = s) (default bandwidth, exact, Hartigan-Wong) on the rings of the
# demo, the vignette and the examples and mlbench's smiley, 20 draws each;
# counts the draws with adjusted Rand index >= 0.99 for each nstart, and the
# median seconds of one fit.  Needs mlbench.
#   Rscript bench/investigations/kmeans_nstart.R
library(bochner)
ari <- function(a, b) {
  tab <- table(a, b); n <- sum(tab); c2 <- function(v) sum(v * (v - 1) / 2)
  s <- c2(tab); sa <- c2(rowSums(tab)); sb <- c2(colSums(tab)); e <- sa * sb / c2(n)
  (s - e) / ((sa + sb) / 2 - e)
}
rings <- function(m, sd) {
  a <- runif(2 * m, 0, 2 * pi); r <- rep(c(1, 3), each = m) + rnorm(2 * m, sd = sd)
  list(x = cbind(r * cos(a), r * sin(a)), y = rep(1:2, each = m), k = 2)
}
sets <- list(rings_demo = function() rings(1000, 0.15), rings_vignette = function() rings(150, 0.15),
             rings_examples = function() rings(200, 0.1),
             smiley = function() { o <- mlbench::mlbench.smiley(500)
                                   list(x = o$x, y = as.integer(o$classes), k = 4) })
starts <- c(1, 3, 5, 10)
rows <- character()
for (name in names(sets)) {
  ok <- integer(length(starts)); secs <- vector("list", length(starts))
  for (seed in 1:20) {
    set.seed(seed)
    d <- sets[[name]]()
    for (j in seq_along(starts)) {
      t <- system.time(f <- kernel_kmeans(d$x, d$k, nstart = starts[j], seed = seed,
                                          nthreads = 1))[["elapsed"]]
      ok[j] <- ok[j] + (ari(f$cluster, d$y) >= 0.99)
      secs[[j]] <- c(secs[[j]], t)
    }
  }
  rows <- c(rows, sprintf("| %s | %s |", name, paste(sprintf("%d/20 (%.2f s)", ok,
                                                              vapply(secs, stats::median, 0)),
                                                      collapse = " | ")))
  cat(tail(rows, 1), "\n")
}
cat("\n| data | ", paste0("nstart = ", starts, collapse = " | "), " |\n|---|",
    paste(rep("---:", length(starts)), collapse = "|"), "|\n", paste(rows, collapse = "\n"), "\n",
    sep = "")
