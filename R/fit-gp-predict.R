# Predictions and posterior draws of rff_gp() fits (the fit is in gp.R).

# Predictive mean and variance of f (standardised units) at the scaled
# rows xs: an n x 2 matrix, a block of rows at a time.
gp_moments <- function(object, xs, nthreads, var = TRUE) {
  mv <- gp_moments_zero(object, xs, nthreads, var)
  if (!is.null(object$basis)) mv <- mv + gp_basis_moments(object, xs, nthreads, var)
  if (var && !is.null(object$laplace)) mv[, 2L] <- mv[, 2L] + gp_laplace_term(object, xs, nthreads)
  mv
}

# The same for the zero-mean GP on the response less its basis part.
gp_moments_zero <- function(object, xs, nthreads, var = TRUE) {
  if (object$method == "exact") {
    P <- c(object$P, list(nthreads = nthreads))
    h <- gp_unpack(object$theta, P)
    return(transform_in_blocks(xs, nrow(object$x_train), 2L, function(xb) {
      Ks <- gp_exact_gram(h, P, xb, object$x_train)
      m <- drop(.Call(C_matprod, Ks, matrix(object$alpha), nthreads))
      if (!var) return(cbind(m, NA_real_))
      V <- .Call(C_matprod, Ks, object$rinv, nthreads)
      cbind(m, pmax(object$prior_var - rowSums(V^2), 0))
    }))
  }
  # (the variance costs O(m^2) per row, the mean O(m): fitted values skip it)
  if (!var) {     # fused in C, a block of rows at a time (features.c)
    beta <- matrix(object$alpha * rep(object$amp, each = 2L))
    return(cbind(drop(.Call(C_rff_decision, xs, object$omega, NULL, 1, beta, 0, nthreads)),
                 NA_real_))
  }
  if (!is.null(object$dual)) {
    # var f(x) = z'z - k' C^-1 k with k = Z z(x) (k = the random-feature
    # kernel between x and the training rows), z'z = sum of amp^2
    tz <- gp_train_features(object, nthreads)
    prior <- sum(object$amp^2)
    return(transform_in_blocks(xs, 2L * ncol(object$omega), 2L, function(xb) {
      Z <- gp_feature_matrix(object, xb, nthreads)
      m <- drop(.Call(C_matprod, Z, matrix(object$alpha), nthreads))
      V <- .Call(C_matprod, .Call(C_matprod, Z, tz, nthreads), object$rinv, nthreads)
      cbind(m, pmax(prior - rowSums(V^2), 0))
    }))
  }
  transform_in_blocks(xs, 2L * ncol(object$omega), 2L, function(xb) {
    Z <- gp_feature_matrix(object, xb, nthreads)
    m <- drop(.Call(C_matprod, Z, matrix(object$alpha), nthreads))
    V <- .Call(C_matprod, Z, object$rinv, nthreads)
    cbind(m, object$noise^2 * rowSums(V^2))
  })
}

# t(Z) of the training rows of a dual fit (weighted rows scaled by sqrt(w))
gp_train_features <- function(object, nthreads) {
  gp_dual_features(list(omega = object$omega, amp = object$amp),
                   list(x = object$dual$x, sw = object$dual$sw, nthreads = nthreads))
}

gp_feature_matrix <- function(object, xs, nthreads) {
  Z <- .Call(C_rff_transform, xs, object$omega, NULL, 1, FALSE, nthreads)
  Z * rep(rep(object$amp, each = 2L), each = nrow(Z))
}

# New data as the fit's scaled input matrix.
gp_newdata <- function(object, newdata, na_ok = TRUE) {
  x <- newdata_matrix(object$input, newdata, "newdata", fitted = "the model",
                      na_ok = na_ok, empty_ok = TRUE)
  list(x = x, xs = rff_apply_scaling(x, object$scaling))
}

# The training rows the fit keeps (object$data, up to 10000), as gp_newdata()
# gives new ones: they are the design matrix already (a formula fit's
# newdata would be a data frame), so no second pass through the formula.
gp_kept_rows <- function(object) {
  list(x = object$data$x, xs = rff_apply_scaling(object$data$x, object$scaling))
}

#' Predictions of a Gaussian process fit
#'
#' The posterior mean, its standard error and intervals, as
#' [stats::predict.lm()] gives them.  `interval = "confidence"` covers the
#' function \eqn{f(x)}: mean \eqn{\pm z_{(1+level)/2}} times the standard
#' error; `"prediction"` a new observation \eqn{y = f(x) + \varepsilon},
#' whose variance adds the noise variance \eqn{s_n^2}.  The posterior is
#' Gaussian, so the quantiles are the normal's.
#'
#' @param object A fit from [rff_gp()].
#' @param newdata New inputs, as the fit's `x` (or a data frame with the
#'   formula's variables); missing: the training rows.  With
#'   [data_chunks()], a list with one prediction per chunk (the chunks read
#'   under the `future` plan, as [predict.rff_ridge()]); `weights` is then
#'   one number.
#' @param se.fit Return standard errors.
#' @param interval `"none"`, `"confidence"` or `"prediction"`.
#' @param level The intervals' coverage.
#' @param na.action What to do with rows of `newdata` with missing values:
#'   [stats::na.pass()] (the default) gives them `NA`.
#' @param weights The case weights of the new observations, for
#'   `interval = "prediction"` (noise variance \eqn{s_n^2 / w}), as in
#'   [stats::predict.lm()]: one number, or one per row of `newdata`.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return With `interval = "none"`, the vector of predicted means; else a
#'   matrix with columns `fit`, `lwr`, `upr`.  With `se.fit = TRUE`, a list
#'   of that `fit`, `se.fit` (standard errors of the mean function),
#'   `df` (`Inf`: normal quantiles) and `residual.scale` (\eqn{s_n}).
#' @examples
#' set.seed(2)
#' x <- runif(100)
#' fit <- rff_gp(x, sin(6 * x) + rnorm(100, sd = 0.1), D = 64)
#' predict(fit, c(0.2, 0.5), se.fit = TRUE)
#' predict(fit, c(0.2, 0.5), interval = "confidence", level = 0.9)
#' @export
predict.rff_gp <- function(object, newdata, se.fit = FALSE,
                           interval = c("none", "confidence", "prediction"), level = 0.95,
                           na.action = stats::na.pass, weights = 1,
                           nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, se.fit = se.fit, interval = interval, level = level,
                          weights = weights, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(...)
  se.fit <- check_flag(se.fit, "se.fit")
  interval <- check_choice(interval, c("none", "confidence", "prediction"), "interval")
  level <- check_probability(level, "level")
  nthreads <- check_threads(nthreads)
  own <- missing(newdata) || is.null(newdata)
  if (own) {
    if (is.null(object$data)) {
      if (!se.fit && interval == "none") return(rff_fitted(object))
      stop_arg("newdata", "is required: the fit keeps its training rows only up to 10000")
    }
    nd <- gp_kept_rows(object)
  } else {
    nd <- gp_newdata(object, newdata)
  }
  if (!is.numeric(weights) || !length(weights) %in% c(1L, nrow(nd$x)) || anyNA(weights) ||
      any(!is.finite(weights)) || any(weights <= 0)) {
    stop_arg("weights", "must be positive numbers: one, or one per row of 'newdata'")
  }
  mv <- predict_rows(nd$xs, function(xs) gp_moments(object, xs, nthreads), 2L, na.action)
  if (length(weights) > 1L && length(weights) != nrow(mv)) {
    weights <- weights[stats::complete.cases(nd$x)]     # rows dropped by na.action
  }
  fit <- object$y_center + object$y_scale * mv[, 1L]
  se <- object$y_scale * sqrt(mv[, 2L])
  names(fit) <- names(se) <- rownames(mv)
  s_n <- unname(object$y_scale * object$noise)
  if (interval != "none") {
    half <- stats::qnorm((1 + level) / 2) *
      if (interval == "confidence") se else sqrt(se^2 + s_n^2 / weights)
    fit <- cbind(fit = fit, lwr = fit - half, upr = fit + half)
    rownames(fit) <- rownames(mv)
  }
  if (own) {
    # the training rows, padded with NA where na.exclude dropped some (as fitted())
    fit <- stats::napredict(object$na.action, fit)
    se <- stats::napredict(object$na.action, se)
  }
  if (!se.fit) return(fit)
  list(fit = fit, se.fit = se, df = Inf, residual.scale = s_n)
}

#' Draw functions from the posterior of a Gaussian process fit
#'
#' Each simulation is one function drawn from the posterior, evaluated at
#' the rows of `newdata`: for `method = "rff"` a draw of the feature
#' weights \eqn{\beta \sim N(A^{-1}Z^T y, s_n^2 A^{-1})}, so the draws are
#' functions that can be evaluated anywhere consistently; for
#' `method = "exact"`, the joint posterior at the rows (at most 5000).
#' The draws are of \eqn{f}, without the observation noise.
#'
#' @param object A fit from [rff_gp()].
#' @param nsim Number of functions.
#' @param seed `NULL` or a number, as in [stats::simulate()].
#' @param newdata Where to evaluate them; missing: the training rows
#'   (kept by fits of at most 10000 rows).
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A data frame with one column per simulation (`sim_1`, ...) and
#'   one row per row of `newdata`, with attribute `"seed"`.
#' @examples
#' set.seed(3)
#' x <- runif(50)
#' fit <- rff_gp(x, cos(5 * x) + rnorm(50, sd = 0.1), D = 64)
#' sims <- simulate(fit, nsim = 3, seed = 1, newdata = seq(0, 1, by = 0.25))
#' sims
#' @export
simulate.rff_gp <- function(object, nsim = 1, seed = NULL, newdata,
                            nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  nsim <- check_count(nsim, "nsim")
  nthreads <- check_threads(nthreads)
  xs <- if (missing(newdata) || is.null(newdata)) {
    if (is.null(object$data)) stop_arg("newdata", "is required: the fit keeps no training rows")
    gp_kept_rows(object)$xs
  } else {
    gp_newdata(object, newdata, na_ok = FALSE)$xs
  }
  draw <- function() {
    if (object$method == "rff") {
      xi <- matrix(stats::rnorm(length(object$alpha) * nsim), ncol = nsim)
      # with a basis: its coefficients bh from their posterior, then the
      # feature weights given them (the fit on y - H bh)
      bh <- if (!is.null(object$basis)) gp_basis_draws(object, nsim)
      B <- if (is.null(object$dual)) {
        object$alpha + object$noise * .Call(C_matprod, object$rinv, xi, nthreads) +
          if (!is.null(bh)) object$basis$B %*% (object$basis$beta - bh) else 0
      } else {
        gp_dual_weight_draws(object, xi, nthreads, bh)
      }
      return(transform_in_blocks(xs, 2L * ncol(object$omega), nsim, function(xb) {
        f <- .Call(C_matprod, gp_feature_matrix(object, xb, nthreads), B, nthreads)
        if (is.null(bh)) f else f + gp_basis(object$basis, xb) %*% bh
      }))
    }
    gp_exact_draws(object, xs, nsim, nthreads)
  }
  sims <- with_seed(seed, draw())
  out <- as.data.frame(object$y_center + object$y_scale * sims)
  names(out) <- paste0("sim_", seq_len(nsim))
  attr(out, "seed") <- seed
  out
}

# Feature weights from the posterior of a dual fit without the m x m
# covariance (pathwise conditioning): with beta0 = xi ~ N(0, I) and
# e ~ N(0, s_n^2 I), beta0 + Z'C^-1 (y - Z beta0 - e) ~ N(alpha, s_n^2 A^-1).
gp_dual_weight_draws <- function(object, xi, nthreads, bh = NULL) {
  tz <- gp_train_features(object, nthreads)
  n <- ncol(tz)
  e <- matrix(stats::rnorm(n * ncol(xi), sd = object$noise), n)
  y <- if (is.null(bh)) object$dual$y else object$dual$y - object$dual$H %*% bh
  r <- y - .Call(C_matprod, t(tz), xi, nthreads) - e
  v <- .Call(C_matprod, object$rinv, .Call(C_matprod, t(object$rinv), r, nthreads), nthreads)
  xi + .Call(C_matprod, tz, v, nthreads)
}

gp_exact_draws <- function(object, xs, nsim, nthreads) {
  if (nrow(xs) > 5000L) stop_arg("newdata", "has more than 5000 rows for exact draws")
  P <- c(object$P, list(nthreads = nthreads))
  h <- gp_unpack(object$theta, P)
  Ks <- gp_exact_gram(h, P, xs, object$x_train)
  V <- .Call(C_matprod, Ks, object$rinv, nthreads)
  S <- gp_exact_gram(h, P, xs) - .Call(C_matprod, V, t(V), nthreads)
  mean <- drop(.Call(C_matprod, Ks, matrix(object$alpha), nthreads))
  if (!is.null(object$basis)) {     # + h(x)'b_hat and r'S^-1 r (see gp-mean.R)
    hb <- gp_basis(object$basis, xs)
    R <- (hb - .Call(C_matprod, Ks, object$basis$B, nthreads)) %*% object$basis$srinv
    mean <- mean + drop(hb %*% object$basis$beta)
    S <- S + .Call(C_matprod, R, t(R), nthreads)
  }
  jitter <- 1e-10 * object$prior_var
  repeat {
    Sj <- S
    diag(Sj) <- diag(Sj) + jitter
    ch <- .Call(C_gp_chol, Sj, nthreads)
    if (!is.null(ch)) break
    jitter <- jitter * 10
  }
  xi <- matrix(stats::rnorm(nrow(xs) * nsim), ncol = nsim)
  mean + .Call(C_matprod, t(ch[[1L]]), xi, nthreads)
}
