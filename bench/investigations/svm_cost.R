# Squared-hinge rff_svm at a large cost: objective and time of the fit.
# Run: R_LIBS=<library> Rscript bench/investigations/svm_cost.R   (one library per version)
library(bochner)
set.seed(1)
n <- 20000
x <- matrix(rnorm(2 * n), n, 2)
y <- factor(ifelse(x[, 1]^2 + x[, 2] + rnorm(n, sd = 0.8) > 0.5, "a", "b"))
for (cost in c(1, 1000)) {
  t <- system.time(fit <- suppressWarnings(
    rff_svm(x, y, gaussian_kernel(sigma = 1), D = 200, cost = cost, loss = "squared_hinge",
            scale = FALSE, seed = 1, nthreads = 1)))[["elapsed"]]
  Z <- cbind(predict(fit$map, x), 1)
  w <- c(fit$weights[, 1], fit$intercept[1])
  s <- ifelse(y == fit$levels[1], 1, -1)
  P <- 0.5 * sum(w^2) + cost * sum(pmax(0, 1 - s * drop(Z %*% w))^2)
  cat(sprintf("cost %6g: primal %.6g  iter %d  converged %s  %.2f s\n", cost, P, fit$iter,
              fit$converged, t))
}
