# The 10^5-row synthetic classification set of the falkon benchmarks: the
# class is the side of a curved boundary, then 10 % of the labels are
# flipped at random, so the Bayes classifier is the boundary itself and its
# accuracy is exactly 0.90.  1.2e5 rows: 10^5 to train, 2e4 to test.
# Sourced by bench/falkon.R and bench/falkon-defaults.R (run from the package root).
falkon_synth_class_xy <- function() {
  set.seed(23)
  n <- 1.2e5
  x <- matrix(stats::rnorm(n * 10), n, 10)
  clean <- sin(2 * x[, 1]) + x[, 2] * x[, 3] + 0.5 * x[, 4] > 0
  flip <- stats::runif(n) < 0.1
  list(x = x, y = factor(ifelse(xor(clean, flip), "a", "b")))
}
