# bochner demo: random Fourier features converge to the exact kernel, and
# kernel k-means separates what k-means cannot.
#
# 1000 points from three noisy clusters in 5 dimensions; for growing numbers
# of random frequencies D, the error of Z Z' against the exact Gaussian Gram
# matrix, beside the 1/sqrt(D) rate and the Hoeffding figure for D.
library(bochner)
set.seed(2024)
n <- 1000
d <- 5
centres <- matrix(rnorm(3 * d, sd = 3), 3, d)
x <- centres[sample(3, n, replace = TRUE), ] + matrix(rnorm(n * d), n, d)

kernel <- gaussian_kernel(sigma = "median")
cat("Exact Gram matrix of", n, "points:\n")
K <- kernel_matrix(kernel, x)
cat(sprintf("  median heuristic sigma = %.3f, %s\n\n", attr(K, "sigma"),
            format(object.size(K), units = "MB")))

Ds <- c(10, 30, 100, 300, 1000, 3000, 10000)
repeats <- 5   # independent maps per D, averaged: one map's error is noisy
approx_error <- function(D, type) {
  errs <- replicate(repeats, {
    map <- random_features(x, kernel, D = D, type = type)
    E <- tcrossprod(predict(map, x)) - K
    c(max = max(abs(E)), rms = sqrt(mean(E^2)))
  })
  rowMeans(errs)
}
rows <- lapply(Ds, function(D) {
  phase <- approx_error(D, "phase")
  pair <- approx_error(D, "pair")
  data.frame(D = D, phase_max = phase[["max"]], phase_rms = phase[["rms"]],
             pair_max = pair[["max"]], pair_rms = pair[["rms"]],
             phase_rms_x_sqrtD = phase[["rms"]] * sqrt(D))
})
table <- do.call(rbind, rows)
cat("Error of Z Z' against the exact kernel, mean of", repeats, "maps\n(phase map: D columns; pair map: 2D columns):\n")
print(format(table, digits = 3), row.names = FALSE)
cat("\nThe last column changes little while D grows 1000-fold: the error falls like 1/sqrt(D).\n\n")
print(rff_dimension(eps = 0.05, delta = 0.01, kernel = kernel, x = x))

# The picture goes to BOCHNER_DEMO_PNG when set, else to bochner-demo.png in
# the working directory: not to tempdir(), which R deletes when the demo's
# process ends, before anyone can open the file it names (`make demo` sets
# BOCHNER_DEMO_PNG to the source tree's git-ignored bochner-demo.png).
file <- Sys.getenv("BOCHNER_DEMO_PNG", "bochner-demo.png")
if (!nzchar(file)) file <- "bochner-demo.png"
grDevices::png(file, width = 800, height = 560)
graphics::matplot(Ds, table[, c("phase_rms", "pair_rms", "phase_max", "pair_max")],
                  log = "xy", type = "b", pch = c(1, 2, 1, 2), lty = c(1, 1, 2, 2),
                  col = c(1, 2, 1, 2), xlab = "number of frequencies D",
                  ylab = "error of Z Z' against K",
                  main = "Random Fourier features converge to the Gaussian kernel")
graphics::lines(Ds, table$phase_rms[1] * sqrt(Ds[1] / Ds), col = "grey50", lty = 3)
graphics::legend("topright", c("phase map, rms", "pair map, rms", "phase map, max",
                               "pair map, max", "1/sqrt(D)"),
                 col = c(1, 2, 1, 2, "grey50"), lty = c(1, 1, 2, 2, 3), pch = c(1, 2, 1, 2, NA))
invisible(grDevices::dev.off())
cat("\nPlot written to", normalizePath(file),
    "\n(it stays there after R exits; set BOCHNER_DEMO_PNG to write it elsewhere)\n")

# Kernel k-means: two concentric rings that ordinary k-means cuts in half.
cat("\nKernel k-means on two noisy rings (radii 1 and 3), 2000 points:\n")
m <- 1000
angle <- runif(2 * m, 0, 2 * pi)
radius <- rep(c(1, 3), each = m) + rnorm(2 * m, sd = 0.15)
rings <- cbind(radius * cos(angle), radius * sin(angle))
truth <- rep(1:2, each = m)
agreement <- function(cluster) max(mean(cluster == truth), mean(cluster != truth))
ring_kernel <- gaussian_kernel(sigma = 1)
fits <- list(
  "stats::kmeans" = function() stats::kmeans(rings, 2, nstart = 5)$cluster,
  "kernel_kmeans(rings, 2)" = function() kernel_kmeans(rings, 2)$cluster,   # default bandwidth
  "kernel_kmeans, exact" = function() kernel_kmeans(rings, 2, ring_kernel, nstart = 5)$cluster,
  "kernel_kmeans, rff D = 300" = function() {
    kernel_kmeans(rings, 2, ring_kernel, method = "rff", D = 300, nstart = 5)$cluster
  })
for (name in names(fits)) {
  seconds <- system.time(cluster <- fits[[name]]())[["elapsed"]]
  cat(sprintf("  %-28s agreement with the rings %5.1f%%  (%.2f s)\n", name,
              100 * agreement(cluster), seconds))
}

# A kernel machine: the same rings as a classification problem, half for
# training and half for testing.  A linear classifier cannot separate them;
# a linear SVM on random features can.
cat("\nClassifying the rings (1000 training points, 1000 test points):\n")
train <- sample(2 * m, m)
ring_data <- data.frame(a = rings[, 1], b = rings[, 2], ring = factor(truth, labels = c("inner", "outer")))
accuracy <- function(pred) mean(pred == ring_data$ring[-train])
linear <- stats::glm(ring ~ a + b, family = stats::binomial, data = ring_data[train, ])
linear_pred <- ifelse(stats::predict(linear, ring_data[-train, ]) > 0, "outer", "inner")
seconds <- system.time(svm <- rff_svm(ring ~ a + b, data = ring_data[train, ], D = 300))[["elapsed"]]
cat(sprintf("  %-28s test accuracy %5.1f%%\n", "logistic regression (linear)", 100 * accuracy(linear_pred)))
cat(sprintf("  %-28s test accuracy %5.1f%%  (%.2f s)\n", "rff_svm, D = 300",
            100 * accuracy(predict(svm, ring_data[-train, ])), seconds))
