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
#' Cholesky, so \eqn{Z} is never held.  When \eqn{m \ge n} the same
#' posterior and likelihood come from the \eqn{n \times n} matrix
#' \eqn{C = Z Z^T + s_n^2 I} instead, in \eqn{O(n^2 m + n^3)} (the
#' "dual" form; posterior draws then condition prior draws on the data,
#' without the \eqn{m \times m} covariance).  As \eqn{D} grows the mean and
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
#' [spectral_mixture_kernel()].  For one input and at least three
#' components the likelihood is optimised from six variants of that start
#' (with a second component at frequency 0 of a tenth of the range as
#' length scale in place of the weakest peak, and with all length scales
#' times 1, 3 or 0.3), and the fit with the best marginal likelihood is
#' kept: six times the work of one start.
#'
#' **Mean function.**  By default (`mean = "centred"`) the response is
#' centred on its mean and the GP has mean zero, so away from the data the
#' forecast returns to that mean, however steep the trend in the data.
#' `mean = "constant"`, `"linear"` or `"quadratic"` adds explicit basis
#' functions \eqn{h(x)} (a constant; a constant and each input; those and
#' each input's square) with coefficients
#' \eqn{b} under a vague prior, \eqn{y = f(x) + h(x)^T b + \varepsilon}
#' (Rasmussen and Williams, 2006, sec. 2.7).  With random features this is
#' Bayesian linear regression on \eqn{[Z, H]} with a flat prior on the
#' weights of \eqn{H}: \eqn{b} is estimated by generalised least squares,
#' \eqn{\hat b = S^{-1} H^T C^{-1} y} with \eqn{S = H^T C^{-1} H}, its
#' uncertainty adds \eqn{r^T S^{-1} r} to the variance of \eqn{f(x)}
#' (\eqn{r = h(x) - H^T C^{-1} k(x)}, growing with the distance from the
#' data along the trend), and the hyperparameters maximise the restricted
#' marginal likelihood \eqn{-\frac12 (y - H\hat b)^T C^{-1} (y - H\hat
#' b) - \frac12 \log|C| - \frac12 \log|S| - \frac{n-p}{2}\log 2\pi}
#' (their eq. 2.45 in the limit of the vague prior; \eqn{p} columns,
#' centred and scaled internally).  The gradient keeps its cost order (one
#' more pass over the rows for \eqn{Z^T H} and \eqn{Z^T (H \circ x_k)}).
#' The fitted coefficients are in `fit$basis$coefficients` (response
#' units, on the centred and scaled columns).
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
#'   the starting value (or, with `optimize = FALSE`, the value).  A
#'   spectral mixture's `weights` are variances of the response, in its
#'   units (as the fit reports them in `hyper`), and take the place of
#'   `signal`.
#' @param D Number of random frequencies (\eqn{2D} features), for
#'   `method = "rff"`; at least the number of mixture components.  `NULL`
#'   (the default): 4096 up to about 590 rows, falling with \eqn{n} to 256
#'   from about 1700 rows (every likelihood evaluation then costs about
#'   \eqn{2 \times 10^9} multiply-adds).  With \eqn{2D \ge n} the
#'   likelihood is computed in its \eqn{n \times n} form, \eqn{O(n^2 D)}.
#' @param sampling How the fixed standard frequencies are drawn: `"iid"`
#'   (the default), `"orthogonal"` (blocks of \eqn{d} orthogonalised
#'   normal directions with the radial law's norms; Gaussian and Matern
#'   kernels) or `"qmc"` (a scrambled Halton sequence); see
#'   [random_features()].  A spectral mixture's are always iid.  (On the
#'   benchmark of bench/investigations/gp.md the structured draws did not bring the
#'   learned hyperparameters closer to the exact GP's than iid ones; more
#'   frequencies did.)
#' @param ard With `TRUE`, one length scale per input (automatic relevance
#'   determination); `FALSE`, one for all; `NULL` (the default): `TRUE` when
#'   the scales are learned (`optimize = TRUE`) and `x` has more than one
#'   column and at least 10 000 rows (of positive weight), `FALSE`
#'   otherwise.  A kernel given with one length scale per input
#'   (`gaussian_kernel(sigma = c(...))`) is ARD whatever `ard` says: its
#'   scales are the fit's with `optimize = FALSE` and the starting values
#'   otherwise.  (A spectral mixture always has one per input and
#'   component.)  The rule is measured (bench/investigations/gp-ard.md): on
#'   43 000 and 100 000 rows ARD was never worse than one scale by over 1 %
#'   and up to 84 % better in test RMSE (diamonds, Friedman 1, a 20-input
#'   simulation; equal on Friedman 2), at 0.4 to 4.8 times its time (2.1
#'   over the five fits); on 400 to 5000 rows it lowered the mean test RMSE
#'   by 18 % where inputs differ in relevance (Friedman 1, the simulation),
#'   but was over 1 % worse on 7 of 30 splits (up to 21 %), 1 % worse on
#'   diamonds' mean, and narrowed BostonHousing's 95 % intervals
#'   to 91 % coverage.
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
#' @param control A list of [stats::optim()]'s L-BFGS-B controls (`maxit`,
#'   `factr`, `pgtol`, `lmm`, `trace`, `REPORT`; others are refused;
#'   by default `maxit = 200` and `factr = 1e10`: the search stops when an
#'   iteration raises the log likelihood by less than \eqn{2.2 \times
#'   10^{-6}}{2.2e-6} times the larger of its magnitude and the number of
#'   rows), and `precision`: `"auto"` (the default), `"double"` or
#'   `"single"`, the precision of \eqn{Z^T Z} (see [feature_precision]:
#'   features rounded to float, the product summed in double, everything
#'   else double).
#' @param weights `NULL`, or non-negative case weights, one per row, as
#'   [stats::lm()] takes them: row \eqn{i} has noise variance
#'   \eqn{s_n^2 / w_i} (rows of weight 0 carry no information and are left
#'   out of the fit, its standardisation and bandwidth rule too; they still
#'   get fitted values).  The response is then centred on its weighted mean;
#'   the inputs are standardised on the rows of positive weight,
#'   unweighted.  A new observation (`interval =
#'   "prediction"`) has weight 1.
#' @param mean The prior mean: `"centred"` (the default: the response
#'   centred on its (weighted) mean, a zero-mean GP), `"constant"`,
#'   `"linear"` or `"quadratic"` (explicit basis functions with a vague
#'   prior: a constant, plus a slope per input, plus a square per input;
#'   see the mean function above).  A trend in the basis goes on beyond the
#'   data, with its uncertainty in the band.  With a spectral mixture whose
#'   parameters are not given, the starting values come from the
#'   least-squares residual of the response on the basis.
#' @param laplace With `TRUE` (and `optimize = TRUE`), the predictive
#'   variance also carries the uncertainty of the learned hyperparameters:
#'   with \eqn{\theta \sim N(\hat\theta, H^{-1})} (Laplace's approximation,
#'   \eqn{H} the Hessian of \eqn{-\log p(y)} at the optimum, on the log
#'   parameters) the delta method adds \eqn{J H^{-1} J^T}, \eqn{J} the
#'   derivative of the predictive mean in \eqn{\theta}.  \eqn{H} comes from
#'   central differences of the analytic gradient (two evaluations per
#'   parameter, at the end of the fit) and \eqn{J} from the posterior means
#'   at the same points, kept with the fit; parameters at a bound and
#'   directions of non-positive curvature are held fixed.  The mean is
#'   unchanged; [simulate()][simulate.rff_gp] ignores it.  For `method =
#'   "exact"`, the Gaussian kernel only.
#' @param nthreads Number of threads, see [bochner_threads()]; the results
#'   do not depend on it.
#' @param ... Passed on by the formula method.
#' @return An object of class `"rff_gp"`: a list with `method`, `kernel`
#'   (with the learned parameters), `hyper` (the hyperparameters: length
#'   scale(s), `signal`, `noise` in the response's units, or the spectral
#'   mixture's `weights` in squared response units, `means`, `scales`),
#'   `logLik` (the log marginal likelihood of `y`; the restricted one with
#'   a `mean` of basis functions), `fitted`, `residuals`, `optim`
#'   (convergence, evaluations), the frequencies and posterior, `basis`
#'   (with `mean = "constant"` or `"linear"`: the basis and its
#'   `coefficients`) and `input`.
#' @references Lázaro-Gredilla, M., Quiñonero-Candela, J., Rasmussen, C. E.
#'   and Figueiras-Vidal, A. R. (2010). Sparse spectrum Gaussian process
#'   regression. \emph{Journal of Machine Learning Research} 11, 1865-1881.
#'
#'   Rasmussen, C. E. and Williams, C. K. I. (2006). \emph{Gaussian
#'   Processes for Machine Learning}. MIT Press, sec. 2.7.
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
rff_gp.default <- function(x, y, kernel = gaussian_kernel("median"), D = NULL, ard = NULL,
                           optimize = TRUE, method = c("rff", "exact"), signal = NULL,
                           noise = NULL, scale = TRUE, seed = NULL, control = list(),
                           weights = NULL, sampling = c("iid", "orthogonal", "qmc"),
                           mean = c("centred", "constant", "linear", "quadratic"),
                           laplace = FALSE, nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  x <- as_data_matrix(x, "x")
  n <- nrow(x)
  # classes are refused before ridge_response() counts them
  if (is.factor(y) || is.character(y) || is.logical(y)) {
    stop_arg("y", "must be numeric: rff_gp() is a regression")
  }
  y <- ridge_response(y, n)$y
  if (n < 2L) stop_arg("x", "must have at least two rows")
  w <- check_case_weights(weights, n)
  keep <- if (is.null(w)) rep(TRUE, n) else w > 0   # weight 0: infinite noise, no information
  if (sum(keep) < 2L) stop_arg("weights", "must be positive for at least two rows")
  check_shift_invariant(kernel)
  D <- if (is.null(D)) gp_default_D(sum(keep)) else check_count(D, "D")
  sampling <- check_choice(sampling, c("iid", "orthogonal", "qmc"), "sampling")
  if (sampling == "orthogonal" && !identical(kernel$name, "spectral_mixture")) {
    check_isotropic(kernel, "orthogonal")
  }
  mean <- check_choice(mean, c("centred", "constant", "linear", "quadratic"), "mean")
  optimize <- check_flag(optimize, "optimize")
  ard <- gp_check_ard(ard, optimize, sum(keep), ncol(x))
  method <- check_choice(method, c("rff", "exact"), "method")
  laplace <- check_flag(laplace, "laplace")
  if (laplace && !optimize) stop_arg("laplace", "= TRUE needs optimize = TRUE (a maximum of the likelihood)")
  if (laplace && method == "exact" && !identical(kernel$name, "gaussian")) {
    stop_arg("laplace", "= TRUE with method = \"exact\" needs the Gaussian kernel (an ",
             "analytic gradient)")
  }
  scale <- check_flag(scale, "scale")
  pc <- gp_control_precision(control)
  nthreads <- check_threads(nthreads)
  if (method == "exact" && n > 5000L) {
    stop_arg("method", "= \"exact\" takes at most 5000 rows (an n x n matrix and O(n^3) ",
             "work); x has ", n, ": use method = \"rff\"")
  }
  gp_check_memory(sum(keep), ncol(x), D, method)
  y_center <- if (is.null(w)) mean(y) else sum(w * y) / sum(w)
  y_scale <- stats::sd(y[keep])
  if (!(y_scale > 0)) stop_arg("y", "is constant: there is nothing to model")
  if (identical(kernel$name, "spectral_mixture")) {
    if (!is.null(signal)) {
      warning("rff_gp(): 'signal' is not used with a spectral mixture kernel: its weights ",
              "are the components' variances", call. = FALSE)
    }
    # given weights are variances of the response, as the fit reports them
    # (fit$hyper); the fit works on the standardised response
    if (sm_resolved(kernel)) kernel$weights <- kernel$weights / y_scale^2
  }
  signal <- if (is.null(signal)) 1 else check_positive(signal, "signal") / y_scale
  noise <- if (is.null(noise)) 0.1 else check_positive(noise, "noise") / y_scale

  # the inputs standardised on the rows the fit keeps, unweighted as the
  # response's scale: a weight is a precision here, not a count
  scaling <- if (scale) rff_scaling(x, if (!is.null(w)) as.numeric(keep)) else NULL
  xs <- rff_apply_scaling(x, scaling)
  G <- gp_problem(xs, (y - y_center) / y_scale, w, keep, kernel, D, method, sampling, mean, ard,
                  signal, noise, seed, nthreads)
  G$P$single <- gp_single(pc$precision, G)
  hyper <- gp_fit_hyper(G, optimize, pc$control)
  G$P$single <- gp_single(pc$precision, G, hyper$theta)    # "auto" again at the optimum
  fit <- new_rff_gp(G, hyper$theta, hyper$opt, D, optimize, laplace, y_center, y_scale, scaling,
                    n, w)
  # the single-precision likelihood's pass made the means of the rows (gp_rows_rss())
  mu <- if (!is.null(fit$row_means) && all(keep)) fit$row_means
        else gp_moments(fit, xs, nthreads, var = FALSE)[, 1L]
  fit$row_means <- NULL
  fit$fitted <- stats::setNames(y_center + y_scale * mu, rownames(x))
  fit$residuals <- y - fit$fitted
  if (n <= 10000L) fit$data <- list(x = x, y = y)
  fit$input <- input_description(x)
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
              chunked = rff_gp.data_chunks, response = "y ~ a + b")
}

# What a fit holds at its peak, refused before anything is allocated when
# it exceeds what the guard allows (check_memory(), R/checks.R).  With
# 2D >= n (the dual form, R/gp-optim.R) the likelihood and its gradient
# hold the 2D x n features four times (the current point's, the previous
# point's in the optimiser's cache, the gradient G and its products) and
# three n x n matrices (C, its inverse factor, C^-1); otherwise four
# 2D x 2D matrices (Z'Z + s^2 I, its factor, its inverse, the gradient's)
# and features in blocks.  The exact GP: three n x n matrices.
gp_check_memory <- function(n, d, D, method) {
  m <- 2 * as.double(D)
  parts <- if (method == "exact") {
    list("the Gram matrix, its factor and inverse" = c(3 * n, n))
  } else if (m >= n) {
    list("the features, at two points, and the gradient's" = c(4 * m, n),
         "the n x n system, its factor and inverse" = c(3 * n, n),
         "the frequencies" = c(d, D))
  } else {
    list("the 2D x 2D system, its factor, inverse and gradient" = c(4 * m, m),
         "the frequencies" = c(d, D))
  }
  check_memory(parts, "rff_gp()", if (method == "rff") "D" else "x")
}

# rff_gp(ard = NULL): one length scale per input when they are learned, from
# gp_ard_rows rows (of positive weight), with several inputs.  Below that ARD
# overfits too often (bench/investigations/gp-ard.md: on 405-4800 rows over
# 1 % worse on 7 of 30 splits, BostonHousing's intervals at 91 %); on 43 000
# and 10^5 rows it was never worse by over 1 % and up to 84 % better.
gp_ard_rows <- 10000L
gp_check_ard <- function(ard, optimize, n, d) {
  if (is.null(ard)) return(optimize && d > 1L && n >= gp_ard_rows)
  check_flag(ard, "ard")
}

# The default number of frequencies: as many as an evaluation of about 2e9
# multiply-adds allows (n^2 2D in the n x n form, n (2D)^2 in the other),
# between 256 and 4096: the likelihood of few features is biased (towards
# more noise and longer length scales), and small data sets can afford many.
gp_default_D <- function(n) {
  as.integer(min(4096, max(256, 2^round(log2(1e9 / n^2)))))
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
    post <- gp_posterior(th, shared)
    if (is.null(post)) -Inf else post$value
  })
  best <- grid[which.max(value), ]
  c(rep(best$ell, nt - 2L), theta[nt - 1L], best$noise)
}

# The fixed standard draws of the frequencies: the kernel's spectral law at
# unit length scale (standard kernels), or N(0, I) split among the mixture's
# components.  "orthogonal": blocks of d orthogonalised standard normal
# directions with the radial law's norms (isotropic kernels); "qmc": a
# scrambled Halton sequence through the inverse CDF.  Both are fixed draws
# scaled by the length scales, so the objective stays smooth, and their
# kernel estimates vary less than iid ones (which might bias the likelihood
# less, though on bench/investigations/gp.md's set that did not bring the learned
# hyperparameters closer to the exact GP's).
# A spectral mixture's likelihood has many local optima, so it is searched
# from several starts (Wilson and Adams) and the best kept.  Searching each
# to convergence at full size cost the whole fit six times over (nottem,
# q = 4, D = 256: 961 evaluations); instead every start gets a short search
# (GP_SCREEN_ITER iterations) on an eighth of the frequencies (the first of
# each component's draws: the same kernel, a noisier estimate of the
# likelihood at an eighth of the cost), and only the best of them is
# searched to convergence with all of them, to gp_optimise()'s relative
# tolerance of 2e-6 (factr = 1e10; 2e-7 searched 150 more evaluations for
# a change of the log likelihood of 0.6 out of 460).  control overrides
# both.
GP_SCREEN_ITER <- 20L
GP_SCREEN_SHARE <- 8L

gp_multistart <- function(thetas, P, lower, upper, control) {
  small <- gp_fewer_frequencies(P, GP_SCREEN_SHARE)
  screen_ctrl <- control
  screen_ctrl$maxit <- min(GP_SCREEN_ITER, if (is.null(control$maxit)) Inf else control$maxit)
  screened <- lapply(thetas, function(th) gp_optimise(th, small, lower, upper, screen_ctrl))
  best <- screened[[which.min(vapply(screened, function(o) o$value, 0))]]
  opt <- gp_optimise(best$par, P, lower, upper, control)
  # the evaluations of the screening count too (print() reports them)
  opt$counts <- opt$counts + Reduce(`+`, lapply(screened, `[[`, "counts"))
  opt$screen <- -vapply(screened, function(o) o$value, 0)
  opt
}

# P with 1/'by' of a spectral mixture's frequencies: the first of each
# component's draws, so that every component keeps its share.
gp_fewer_frequencies <- function(P, by) {
  if (is.null(P$comp)) return(P)
  # never below 128 frequencies: fewer make the screening's ranking noise
  by <- max(1, min(by, length(P$comp) / 128))
  rank <- stats::ave(seq_along(P$comp), P$comp, FUN = seq_along)
  keep <- rank <= pmax(1, ceiling(P$Dq[P$comp] / by))
  P$eps <- P$eps[, keep, drop = FALSE]
  P$comp <- P$comp[keep]
  P$Dq <- tabulate(P$comp, length(P$Dq))
  P$dual <- 2 * ncol(P$eps) >= P$n
  P
}

gp_draws <- function(kernel, D, d, sampling = "iid") {
  if (identical(kernel$name, "spectral_mixture")) {
    comp <- sort(rep_len(seq_len(kernel$q), D))
    return(list(eps = matrix(stats::rnorm(d * D), d, D), comp = comp,
                Dq = tabulate(comp, kernel$q)))
  }
  unit <- kernel
  unit$sigma <- 1
  list(eps = sample_frequencies(unit, D, d, "pair", sampling)$omega)
}

# The kernel with the learned parameters (on the inputs as the fit sees
# them); with ard, sigma = the length scales (an ARD kernel, R/kernel-ard.R),
# also kept in 'lengthscale'.
gp_learned_kernel <- function(kernel, h) {
  if (identical(kernel$name, "spectral_mixture")) {
    return(spectral_mixture_kernel(weights = h$weights, means = h$means, scales = h$scales))
  }
  kernel$sigma_from_median <- kernel$sigma_from_sigest <- kernel$gamma <- NULL
  ell <- h$lengthscale
  if (length(unique(ell)) == 1L) {
    kernel$sigma <- ell[1L]
  } else {
    kernel$sigma <- ell
    kernel$lengthscale <- ell
  }
  kernel
}
