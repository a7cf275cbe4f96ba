#' Gaussian process regression on random features
#'
#' Fits a Gaussian process (GP) regression with a shift-invariant kernel,
#' approximated by Bayesian linear regression on the kernel's random Fourier
#' features (the sparse-spectrum GP of Lázaro-Gredilla et al., 2010), or
#' exactly on small data (`method = "exact"`).  Predictions come with
#' standard errors and intervals, as from [stats::predict.lm()], and
#' [simulate()][simulate.rff_gp] draws functions from the posterior.
#'
#' **The model.**  \eqn{y_i = f(x_i) + \varepsilon_i}, \eqn{f \sim GP(0,
#' s_f^2 k)}, \eqn{\varepsilon_i \sim N(0, s_n^2)}, on the response
#' standardised to mean 0 and variance 1 (the results are reported in the
#' response's units).  With `method = "rff"`, \eqn{f(x) = z(x)^T \beta},
#' \eqn{\beta \sim N(0, I)}, where \eqn{z} is the pair map of \eqn{D}
#' frequencies (\eqn{m = 2D} columns, \eqn{s_f \sqrt{1/D}\,(\cos
#' \omega_j \cdot x, \sin \omega_j \cdot x)}), so that \eqn{z(x) \cdot z(y)
#' \approx s_f^2 k(x, y)}.  With \eqn{Z} the \eqn{n \times m} features of
#' the training rows and \eqn{A = Z^T Z + s_n^2 I}, the posterior of
#' \eqn{\beta} is \eqn{N(A^{-1} Z^T y,\; s_n^2 A^{-1})}: the predictive mean
#' at \eqn{x} is \eqn{z(x)^T A^{-1} Z^T y} and the variance of \eqn{f(x)} is
#' \eqn{s_n^2 z(x)^T A^{-1} z(x)} (plus \eqn{s_n^2} for a new observation).
#' The cost is \eqn{O(n m^2 + m^3)}: \eqn{Z^T Z} is accumulated over
#' blocks of rows (src/gp.c) and \eqn{A} factorised by the package's
#' Cholesky, so \eqn{Z} is never held.  As \eqn{D} grows the mean and
#' variance converge to the exact GP's, with errors falling like
#' \eqn{1/\sqrt{D}}.
#'
#' **Hyperparameters.**  With `optimize = TRUE` (the default) the length
#' scale (one per input with `ard = TRUE`), \eqn{s_f} and \eqn{s_n}
#' maximise the log marginal likelihood
#' \eqn{\log p(y) = -\frac{1}{2 s_n^2}(y^T y - y^T Z A^{-1} Z^T y)
#' - \frac12 \log |A| - (n - m) \log s_n - \frac n2 \log 2\pi}, by
#' [stats::optim()]'s L-BFGS-B on their logarithms, from the kernel's
#' values (`sigma`, the median heuristic by default), `signal` and
#' `noise`.  The frequencies are fixed standard draws \eqn{\epsilon_j}
#' scaled by the inverse length scales, \eqn{\omega_j = \epsilon_j / \ell},
#' so the objective is a smooth function of the parameters, and its
#' gradient is analytic: with \eqn{G = u \alpha^T - Z A^{-1}}
#' (\eqn{u = C^{-1}y}, \eqn{\alpha = A^{-1} Z^T y}), \eqn{\partial \log
#' p / \partial Z = G}, and one more pass over the rows gives all the
#' derivatives, \eqn{O(n m^2)} per evaluation.  For `method = "exact"` the
#' same likelihood is computed from the \eqn{n \times n} kernel matrix (at
#' most 5000 rows), with an analytic gradient for the Gaussian kernel and
#' finite differences otherwise.
#'
#' **Spectral mixture kernels.**  With [spectral_mixture_kernel()] the
#' weights, mean frequencies and length scales of every component are
#' learned (no separate \eqn{s_f}: the weights are the variances).  The
#' \eqn{D} frequencies are split evenly between the components, each
#' \eqn{\omega_j = 2\pi\mu_q + \epsilon_j / \ell_q} with amplitude
#' \eqn{\sqrt{w_q / D_q}}.  When the kernel's parameters are not given,
#' they start from the data: for one input, from the empirical spectrum of
#' the response (the \eqn{Q - 1} highest peaks of a periodogram, plus a
#' component at frequency 0 for the trend), as Wilson and Adams (2013)
#' start from the spectrum; for several inputs by the rule of
#' [spectral_mixture_kernel()].
#'
#' The inputs are standardised with `scale = TRUE` (the default): the
#' kernel's parameters, given and learned, refer to the standardised
#' inputs.
#'
#' @param x Training inputs: a numeric matrix, a data frame of numeric
#'   columns or a vector; for the formula method, a formula `y ~ a + b`.
#' @param y The numeric response, one per row of `x`.
#' @param kernel A shift-invariant kernel: [gaussian_kernel()] (with the
#'   median heuristic by default), [laplace_kernel()], [cauchy_kernel()],
#'   [matern_kernel()] or [spectral_mixture_kernel()].  Its length scale is
#'   the starting value (or, with `optimize = FALSE`, the value).
#' @param D Number of random frequencies (\eqn{2D} features), for
#'   `method = "rff"`; at least the number of mixture components.
#' @param ard With `TRUE`, one length scale per input (automatic relevance
#'   determination); `FALSE`, one for all.  (A spectral mixture always has
#'   one per input and component.)
#' @param optimize `TRUE` to learn the hyperparameters by marginal
#'   likelihood; `FALSE` to keep the kernel's, `signal` and `noise`.
#' @param method `"rff"` (random features) or `"exact"` (the exact GP, for
#'   at most 5000 rows).
#' @param signal,noise Standard deviations of the signal \eqn{s_f} and of
#'   the noise \eqn{s_n} in the response's units, positive numbers; the
#'   starting values when optimising.  `NULL` (the default): the standard
#'   deviation of `y` and a tenth of it.
#' @param scale Standardise the inputs.
#' @param seed `NULL`, or a number for the draws of the frequencies (the
#'   user's random stream is left as it was).
#' @param control A list of [stats::optim()] controls (`maxit`, `factr`, ...).
#' @param weights `NULL`, or non-negative case weights, one per row, as
#'   [stats::lm()] takes them: row \eqn{i} has noise variance
#'   \eqn{s_n^2 / w_i} (rows of weight 0 carry no information and are left
#'   out of the fit; they still get fitted values).  The response is then
#'   centred on its weighted mean.  A new observation (`interval =
#'   "prediction"`) has weight 1.
#' @param nthreads Number of threads, see [bochner_threads()]; the results
#'   do not depend on it.
#' @param ... Passed on by the formula method.
#' @return An object of class `"rff_gp"`: a list with `method`, `kernel`
#'   (with the learned parameters), `hyper` (the hyperparameters: length
#'   scale(s), `signal`, `noise` in the response's units, or the spectral
#'   mixture's `weights` in squared response units, `means`, `scales`),
#'   `logLik` (the log marginal likelihood of `y`), `fitted`, `residuals`,
#'   `optim` (convergence, evaluations), the frequencies and posterior, and
#'   `input`.
#' @references Lázaro-Gredilla, M., Quiñonero-Candela, J., Rasmussen, C. E.
#'   and Figueiras-Vidal, A. R. (2010). Sparse spectrum Gaussian process
#'   regression. \emph{Journal of Machine Learning Research} 11, 1865-1881.
#' @seealso [predict.rff_gp()], [simulate.rff_gp()], [plot.rff_gp()],
#'   [spectral_mixture_kernel()], [rff_ridge()].
#' @examples
#' set.seed(1)
#' x <- runif(200, -3, 3)
#' y <- sin(2 * x) + rnorm(200, sd = 0.2)
#' fit <- rff_gp(x, y, D = 100)
#' fit
#' predict(fit, c(-1, 0, 1), interval = "prediction")
#' @export
rff_gp <- function(x, ...) UseMethod("rff_gp")

#' @rdname rff_gp
#' @export
rff_gp.default <- function(x, y, kernel = gaussian_kernel("median"), D = 256, ard = FALSE,
                           optimize = TRUE, method = c("rff", "exact"), signal = NULL,
                           noise = NULL, scale = TRUE, seed = NULL, control = list(),
                           weights = NULL, nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  x <- as_data_matrix(x, "x")
  n <- nrow(x)
  y <- ridge_response(y, n)
  if (y$type != "regression") stop_arg("y", "must be numeric: rff_gp() is a regression")
  y <- y$y
  if (n < 2L) stop_arg("x", "must have at least two rows")
  w <- check_case_weights(weights, n)
  keep <- if (is.null(w)) rep(TRUE, n) else w > 0   # weight 0: infinite noise, no information
  if (sum(keep) < 2L) stop_arg("weights", "must be positive for at least two rows")
  check_shift_invariant(kernel)
  D <- check_count(D, "D")
  ard <- check_flag(ard, "ard")
  optimize <- check_flag(optimize, "optimize")
  method <- check_choice(method, c("rff", "exact"), "method")
  scale <- check_flag(scale, "scale")
  if (!is.list(control)) stop_arg("control", "must be a list of optim() controls")
  nthreads <- check_threads(nthreads)
  if (method == "exact" && n > 5000L) {
    stop_arg("method", "= \"exact\" takes at most 5000 rows (an n x n matrix and O(n^3) ",
             "work); x has ", n, ": use method = \"rff\"")
  }
  y_center <- if (is.null(w)) mean(y) else sum(w * y) / sum(w)
  y_scale <- stats::sd(y[keep])
  if (!(y_scale > 0)) stop_arg("y", "is constant: there is nothing to model")
  signal <- if (is.null(signal)) 1 else check_positive(signal, "signal") / y_scale
  noise <- if (is.null(noise)) 0.1 else check_positive(noise, "noise") / y_scale
  input <- input_description(x)
  scaling <- if (scale) rff_scaling(x) else NULL
  xs <- rff_apply_scaling(x, scaling)
  ys <- (y - y_center) / y_scale
  d <- ncol(xs)
  sm <- identical(kernel$name, "spectral_mixture")
  if (sm) {
    if (!sm_resolved(kernel)) kernel <- sm_initialise(kernel, xs, ys)
    if (ncol(kernel$means) != d) {
      stop_arg("kernel", "has means for ", ncol(kernel$means), " input(s) but x has ", d)
    }
    if (method == "rff" && D < kernel$q) {
      stop_arg("D", "must be at least the number of mixture components (", kernel$q, ")")
    }
  } else {
    kernel <- resolve_kernel(kernel, xs)
  }
  P <- list(x = xs[keep, , drop = FALSE], y = ys[keep], n = sum(keep), d = d, method = method,
            kind = if (sm) "sm" else "standard", ard = ard && !sm, nthreads = nthreads,
            half_log_w = 0)
  if (!is.null(w)) {
    # row i has noise variance s_n^2 / w_i: the exact GP adds it to the
    # diagonal; the features and response are scaled by sqrt(w_i) instead
    P$w <- w[keep]
    if (method == "rff") {
      P$sw <- sqrt(P$w)
      P$y <- P$sw * P$y
      P$half_log_w <- sum(log(P$w)) / 2
    }
  }
  if (sm) {
    P$Q <- kernel$q
    theta <- c(log(pmax(kernel$weights, 1e-6)), kernel$means, log(kernel$scales), log(noise))
    lower <- c(rep(log(1e-6), P$Q), rep(-Inf, P$Q * d), rep(log(1e-4), P$Q * d), log(1e-3))
    upper <- c(rep(log(1e3), P$Q), rep(Inf, P$Q * d), rep(log(1e4), P$Q * d), log(10))
  } else {
    P$code <- kernel_code(kernel)
    unit <- kernel
    unit$sigma <- 1
    P$par <- kernel_parameters(unit)
    nl <- if (P$ard) d else 1L
    theta <- c(rep(log(kernel$sigma), nl), log(signal), log(noise))
    lower <- c(rep(log(1e-4), nl), log(1e-4), log(1e-3))
    upper <- c(rep(log(1e4), nl), log(1e3), log(10))
  }
  if (method == "rff") {
    draws <- with_seed(seed, gp_draws(kernel, D, d))
    P[names(draws)] <- draws
  }
  opt <- NULL
  if (optimize && !sm) theta <- gp_start(theta, P, d)
  if (optimize) {
    first <- NULL
    if (P$ard && d > 1L) {
      # one shared length scale first: from the start, the first steps of
      # L-BFGS-B along d free scales often jump to a poor local optimum
      shared <- P
      shared$ard <- FALSE
      keep <- c(1L, d + 1L, d + 2L)
      first <- gp_optimise(theta[keep], shared, lower[keep], upper[keep], control)
      theta <- c(rep(first$par[1L], d), first$par[2:3])
    }
    opt <- gp_optimise(theta, P, lower, upper, control)
    if (!is.null(first)) opt$counts <- opt$counts + first$counts
    theta <- opt$par
  }
  post <- if (method == "exact") gp_exact_posterior(theta, P) else gp_rff_posterior(theta, P)
  if (is.null(post)) {
    stop("rff_gp: the covariance is not numerically positive definite at these ",
         "hyperparameters; give a larger 'noise'", call. = FALSE)
  }
  h <- gp_unpack(theta, P)
  names(theta) <- gp_theta_names(P)
  fit <- list(method = method, kind = P$kind, ard = P$ard, D = if (method == "rff") D,
              theta = theta, P = P[c("kind", "ard", "d", "method", "code", "par", "Q",
                                     "eps", "comp", "Dq")],
              noise = h$noise, alpha = post$alpha, rinv = post$rinv,
              y_center = y_center, y_scale = y_scale, scaling = scaling, n = n,
              logLik = post$value - P$n * log(y_scale), optimized = optimize,
              weights = w,
              optim = if (!is.null(opt)) list(convergence = opt$convergence,
                                              counts = opt$counts, message = opt$message))
  fit$kernel <- gp_learned_kernel(kernel, h)
  fit$hyper <- gp_hyper_report(h, P, y_scale)
  if (method == "rff") {
    fit$omega <- post$features$omega
    fit$amp <- post$features$amp
  } else {
    fit$x_train <- P$x
    fit$prior_var <- if (sm) sum(h$weights) else h$signal^2
  }
  class(fit) <- "rff_gp"
  mv <- gp_moments(fit, xs, nthreads, var = FALSE)
  fit$fitted <- stats::setNames(y_center + y_scale * mv[, 1L], rownames(x))
  fit$residuals <- y - fit$fitted
  if (n <= 10000L) fit$data <- list(x = x, y = y)
  fit$input <- input
  fit$input$range <- apply(x, 2L, range)
  fit$call <- generic_call(match.call())
  fit
}

#' @rdname rff_gp
#' @param formula,data,subset,na.action For the formula method: the model
#'   `y ~ a + b` and where its variables are, as in [stats::lm()]; see
#'   [formula_interface].  (`weights` there is evaluated in `data`, as
#'   [stats::lm()] does.)
#' @export
rff_gp.formula <- function(formula, data = NULL, ..., subset, weights,
                           na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), rff_gp.default, na.action, ...,
              response = "y ~ a + b")
}

# Starting values: the best of a small grid of shared length scales (1/8 to
# 2 times the kernel's) and noise levels (the given one and 0.5) by the
# marginal likelihood; from a poor start the steepest ascent often leads
# to the optimum that calls everything noise.
gp_start <- function(theta, P, d) {
  shared <- P
  shared$ard <- FALSE
  nt <- length(theta)
  grid <- expand.grid(ell = theta[1L] + log(c(0.125, 0.25, 0.5, 1, 2)),
                      noise = unique(c(theta[nt], log(0.5))))
  value <- apply(grid, 1L, function(g) {
    th <- c(g[["ell"]], theta[nt - 1L], g[["noise"]])
    post <- if (P$method == "exact") gp_exact_posterior(th, shared) else gp_rff_posterior(th, shared)
    if (is.null(post)) -Inf else post$value
  })
  best <- grid[which.max(value), ]
  c(rep(best$ell, nt - 2L), theta[nt - 1L], best$noise)
}

# The fixed standard draws of the frequencies: the kernel's spectral law at
# unit length scale (standard kernels), or N(0, I) split among the mixture's
# components.
gp_draws <- function(kernel, D, d) {
  if (identical(kernel$name, "spectral_mixture")) {
    comp <- sort(rep_len(seq_len(kernel$q), D))
    return(list(eps = matrix(stats::rnorm(d * D), d, D), comp = comp,
                Dq = tabulate(comp, kernel$q)))
  }
  unit <- kernel
  unit$sigma <- 1
  list(eps = t(.Call(C_spectral_sample, kernel_code(unit), kernel_parameters(unit),
                     as.double(D), as.integer(d))))
}

# The kernel with the learned parameters (on the inputs as the fit sees
# them); with ard, sigma = 1 and the length scales in 'lengthscale'.
gp_learned_kernel <- function(kernel, h) {
  if (identical(kernel$name, "spectral_mixture")) {
    return(spectral_mixture_kernel(weights = h$weights, means = h$means, scales = h$scales))
  }
  kernel$sigma_from_median <- kernel$sigma_from_sigest <- kernel$gamma <- NULL
  ell <- h$lengthscale
  if (length(unique(ell)) == 1L) {
    kernel$sigma <- ell[1L]
  } else {
    kernel$sigma <- 1
    kernel$lengthscale <- ell
  }
  kernel
}

gp_hyper_report <- function(h, P, y_scale) {
  if (P$kind == "sm") {
    return(list(weights = h$weights * y_scale^2, means = h$means, scales = h$scales,
                noise = h$noise * y_scale))
  }
  ell <- if (P$ard) h$lengthscale else h$lengthscale[1L]
  list(lengthscale = ell, signal = h$signal * y_scale, noise = h$noise * y_scale)
}

# Predictive mean and variance of f (standardised units) at the scaled
# rows xs: an n x 2 matrix, a block of rows at a time.
gp_moments <- function(object, xs, nthreads, var = TRUE) {
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
  transform_in_blocks(xs, 2L * ncol(object$omega), 2L, function(xb) {
    Z <- gp_feature_matrix(object, xb, nthreads)
    m <- drop(.Call(C_matprod, Z, matrix(object$alpha), nthreads))
    V <- .Call(C_matprod, Z, object$rinv, nthreads)
    cbind(m, object$noise^2 * rowSums(V^2))
  })
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
#'   formula's variables); missing: the training rows.
#' @param se.fit Return standard errors.
#' @param interval `"none"`, `"confidence"` or `"prediction"`.
#' @param level The intervals' coverage.
#' @param na.action What to do with rows of `newdata` with missing values:
#'   [stats::na.pass()] (the default) gives them `NA`.
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
                           na.action = stats::na.pass, nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  se.fit <- check_flag(se.fit, "se.fit")
  interval <- check_choice(interval, c("none", "confidence", "prediction"), "interval")
  level <- check_number(level, "level", lower = 0, lower_open = TRUE, upper = 1)
  if (level >= 1) stop_arg("level", "must be below 1")
  nthreads <- check_threads(nthreads)
  if (missing(newdata) || is.null(newdata)) {
    if (is.null(object$data)) {
      if (!se.fit && interval == "none") return(rff_fitted(object))
      stop_arg("newdata", "is required: the fit keeps its training rows only up to 10000")
    }
    newdata <- object$data$x
  }
  nd <- gp_newdata(object, newdata)
  mv <- predict_rows(nd$xs, function(xs) gp_moments(object, xs, nthreads), 2L, na.action)
  fit <- object$y_center + object$y_scale * mv[, 1L]
  se <- object$y_scale * sqrt(mv[, 2L])
  names(fit) <- names(se) <- rownames(mv)
  s_n <- unname(object$y_scale * object$noise)
  if (interval != "none") {
    half <- stats::qnorm((1 + level) / 2) *
      if (interval == "confidence") se else sqrt(se^2 + s_n^2)
    fit <- cbind(fit = fit, lwr = fit - half, upr = fit + half)
    rownames(fit) <- rownames(mv)
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
  if (missing(newdata) || is.null(newdata)) {
    if (is.null(object$data)) stop_arg("newdata", "is required: the fit keeps no training rows")
    newdata <- object$data$x
  }
  xs <- gp_newdata(object, newdata, na_ok = FALSE)$xs
  draw <- function() {
    if (object$method == "rff") {
      xi <- matrix(stats::rnorm(length(object$alpha) * nsim), ncol = nsim)
      B <- object$alpha + object$noise * .Call(C_matprod, object$rinv, xi, nthreads)
      return(transform_in_blocks(xs, 2L * ncol(object$omega), nsim, function(xb) {
        .Call(C_matprod, gp_feature_matrix(object, xb, nthreads), B, nthreads)
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

gp_exact_draws <- function(object, xs, nsim, nthreads) {
  if (nrow(xs) > 5000L) stop_arg("newdata", "has more than 5000 rows for exact draws")
  P <- c(object$P, list(nthreads = nthreads))
  h <- gp_unpack(object$theta, P)
  Ks <- gp_exact_gram(h, P, xs, object$x_train)
  V <- .Call(C_matprod, Ks, object$rinv, nthreads)
  S <- gp_exact_gram(h, P, xs) - .Call(C_matprod, V, t(V), nthreads)
  mean <- drop(.Call(C_matprod, Ks, matrix(object$alpha), nthreads))
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
