# Hartigan-Wong passes after Lloyd (C_kmeans_lloyd on the data as features):
# time of Lloyd alone and of Lloyd + Hartigan-Wong, passes, moves, and the
# points the passes examined (hw_checks; without live sets n per pass).
# Run once per library to compare versions:
#   R_LIBS=<library> Rscript bench/investigations/kmeans_hw.R
library(bochner)
set.seed(1)
n <- 2e5
centres <- expand.grid(0:2, 0:2) * 1.2
g <- sample(nrow(centres), n, replace = TRUE)
Z <- as.matrix(centres[g, ]) + matrix(rnorm(2 * n, sd = 0.5), n, 2)
for (k in c(2L, 9L)) for (hw in c(FALSE, TRUE)) {
  set.seed(2)
  t <- system.time(r <- .Call(bochner:::C_kmeans_lloyd, Z, k, NULL, NULL, hw, 0L, 1L, 100L,
                              1L))[["elapsed"]]
  cat(sprintf("k %d HW %-5s %6.2f s  Lloyd iter %3d  HW passes %3d  moves %6d  checks %s  obj %.6f\n",
              k, hw, t, r$iter, length(r$trace) - r$iter - 1L + hw, r$moves,
              format(if (is.null(r$hw_checks)) NA else r$hw_checks), tail(r$trace, 1)))
}
