# The hyperparameters' uncertainty in the predictive variance of rff_gp()
# (laplace = TRUE): the plug-in band conditions on the maximum-likelihood
# theta; with theta ~ N(theta_hat, H^-1) (Laplace's approximation, H the
# Hessian of -log p(y) at the optimum) the delta method adds J H^-1 J' to
# the variance of f(x), J the derivative of the predictive mean in theta.
# H comes from central differences of the analytic gradient, J from the
# posterior means at the same perturbed theta (kept with the fit: 2 per
# free parameter).  Parameters at a bound and directions of non-positive
# curvature are held fixed.

gp_laplace <- function(theta, P, lower, upper, h = 1e-4) {
  k <- length(theta)
  free <- theta > lower + 10 * h & theta < upper - 10 * h
  Hs <- matrix(0, k, k)
  states <- list()
  for (i in which(free)) {
    e <- h * (seq_len(k) == i)
    pp <- gp_posterior(theta + e, P)
    pm <- gp_posterior(theta - e, P)
    if (is.null(pp) || is.null(pm)) {
      free[i] <- FALSE
      next
    }
    Hs[, i] <- -(gp_gradient(theta + e, P, pp) - gp_gradient(theta - e, P, pm)) / (2 * h)
    states[[as.character(i)]] <- list(gp_mean_state(theta + e, pp), gp_mean_state(theta - e, pm))
  }
  idx <- which(free)
  if (!length(idx)) return(NULL)
  Hf <- (Hs[idx, idx, drop = FALSE] + t(Hs[idx, idx, drop = FALSE])) / 2
  ev <- eigen(Hf, symmetric = TRUE)          # k x k: off the hot path
  pos <- ev$values > 1e-8 * max(ev$values)
  if (!any(pos)) return(NULL)
  # Sigma = F F' on the free parameters
  fac <- ev$vectors[, pos, drop = FALSE] / rep(sqrt(ev$values[pos]), each = length(idx))
  list(free = idx, factor = fac, h = h, states = states[as.character(idx)])
}

# What the predictive mean needs of a posterior at theta.
gp_mean_state <- function(theta, post) {
  list(theta = theta, alpha = post$alpha, omega = post$features$omega,
       amp = post$features$amp, beta = post$basis$beta)
}

# J F at the scaled rows xs: the derivative of the mean (standardised
# units) in the free parameters, times the factor of their covariance.
gp_laplace_term <- function(object, xs, nthreads) {
  lp <- object$laplace
  mean_at <- function(s) {
    o <- object
    o$laplace <- NULL
    o$theta <- s$theta
    o$alpha <- s$alpha
    if (!is.null(s$omega)) {
      o$omega <- s$omega
      o$amp <- s$amp
    }
    if (!is.null(o$basis)) o$basis$beta <- s$beta
    gp_moments(o, xs, nthreads, var = FALSE)[, 1L]
  }
  J <- vapply(lp$states, function(s) (mean_at(s[[1L]]) - mean_at(s[[2L]])) / (2 * lp$h),
              numeric(nrow(xs)))
  J <- matrix(J, nrow(xs))
  rowSums((J %*% lp$factor)^2)
}
