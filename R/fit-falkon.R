#' FALKON: kernel ridge and kernel logistic regression on Nyström centres
#'
#' Fits a kernel machine with the exact kernel on \eqn{m} centres drawn
#' from the data, by the FALKON algorithm (Rudi, Carratino & Rosasco 2017):
#' conjugate gradient on a preconditioned Nyström system, at
#' \eqn{O(n m t + m^3)} cost for \eqn{t} iterations, holding the
#' \eqn{n \times m} kernel matrix only when it fits a memory budget.
#'
#' **The problem.**  With centres \eqn{C} (rows \eqn{c_j}), \eqn{K_{nm} =
#' k(X, C)} and \eqn{K_{mm} = k(C, C)}, the model is
#' \eqn{f(x) = b + \sum_j \alpha_j k(x, c_j)} with a fixed offset \eqn{b}.
#' The squared loss (`loss = "squared"`) minimises
#' \deqn{\frac1n \sum_i w_i (f(x_i) - y_i)^2 + \lambda \alpha^T K_{mm} \alpha,}{(1/n) sum_i w_i (f(x_i) - y_i)^2 + lambda alpha' K_mm alpha,}
#' whose solution solves \eqn{(K_{nm}^T W K_{nm} + \lambda n K_{mm})\alpha =
#' K_{nm}^T W (y - b)}; \eqn{b} is the weighted mean of \eqn{y}, and the
#' case weights are rescaled to mean 1, so `lambda` is on the scale of a
#' mean over rows (it does not change with \eqn{n}).  Classes are fitted as
#' one-hot targets (one column per class, all in the same passes over the
#' data), a point going to the class of largest score.  The logistic loss
#' (`loss = "logistic"`) minimises
#' \eqn{\frac1n \sum_i w_i \ell(y_i, f(x_i)) + \frac\lambda2 \alpha^T K_{mm}
#' \alpha} with \eqn{\ell} the binomial (two classes: one score, the
#' log-odds of the second level) or multinomial (softmax over one score per
#' class) negative log-likelihood; the offsets \eqn{b} are the log-odds (log
#' frequencies) of the classes.
#'
#' **Probabilities.**  `predict(type = "prob")` works for every
#' classification fit with a held-out slice (the default): the scores of the
#' held-out rows, from the fit kept, which never saw them, calibrate a
#' softmax of the scores with one temperature and one bias per class
#' (\eqn{P(y = c) \propto \exp(a f_c + b_c)}, by their log-loss; convex, so
#' its minimum is found), whatever the loss: the squared loss's one-hot
#' scores become probabilities, and the logistic model's own ones, which
#' are not calibrated (they over-fit the training rows), are corrected.
#' Where \eqn{\lambda} is chosen by leave-one-out (small sets, see
#' Defaults) the squared loss's leave-one-out scores calibrate it
#' instead.  Without a held-out slice (`lambda` and `iter` both given) the
#' squared loss's training scores calibrate
#' it, as [rff_svm()]'s and [rff_ridge()]'s defaults do (at most 50 000
#' rows, evenly spread): optimistic where the fit nearly interpolates, so
#' keep a slice where the probabilities matter; the logistic loss then
#' gives its own.  `print()` names the rows a fit calibrated on.
#'
#' **The algorithm.**  With \eqn{T = \mathrm{chol}(K_{mm} + \epsilon m I)}
#' (\eqn{\epsilon = 10^{-13}} times the mean of \eqn{K_{mm}}'s diagonal,
#' raised if the factorisation fails; the ridge term is then
#' \eqn{\lambda \alpha^T T^T T \alpha}) and \eqn{A = \mathrm{chol}(T
#' T^T/m + \lambda I)}, conjugate gradient runs on \eqn{\beta} for the
#' operator \eqn{A^{-T}(T^{-T} K_{nm}^T W K_{nm} T^{-1} A^{-1} u / n +
#' \lambda A^{-1} u)}, and \eqn{\alpha = T^{-1} A^{-1} \beta}.  Every
#' iteration is one pass over the rows in blocks: the kernel block
#' \eqn{k(X_b, C)} is computed, multiplied, and dropped, or, when all of
#' \eqn{K_{nm}} fits `control$cache_bytes`, computed once per set of
#' centres and read by every pass (the same numbers, fewer operations).  The logistic loss
#' takes Newton steps, each solved by the same preconditioned CG with the
#' weights \eqn{w p (1-p)} (for several classes, one diagonal per class:
#' the Hessian's cross-class terms are left out, and a halving line search
#' keeps every step a descent) and \eqn{A} built for their mean, along a
#' decreasing schedule of \eqn{\lambda} (1e-1, 1e-2, ..., a factor of 10
#' a step, down to `lambda`, then `control$newton_steps` more steps there),
#' as LogisticFalkon (Meanti et al. 2020) does; with a held-out slice the
#' step of least held-out log-loss is kept.  With `iter = "auto"` a
#' step takes 5 CG iterations, 10 at the final \eqn{\lambda}; the passes
#' of the CG also give \eqn{K_{nm}\delta} for the line search, so a step
#' costs one pass more than its CG iterations.
#'
#' **Defaults.**  With `lambda = "auto"` and `iter = "auto"` a held-out
#' slice of the rows (10 %, at most 2000 rows) chooses \eqn{\lambda} from
#' `control$lambdas` (all solved in the same passes over the data; when
#' their preconditioners would not fit in `control$factor_bytes`, all of
#' them on the first quarter of uniform centres, which costs a quarter of
#' the passes, the fit on all the centres then running the chosen
#' \eqn{\lambda} warm-started from that fit (from the largest candidate,
#' going on to the smaller ones while they improve on it); with other
#' centres, one after another from the largest, warm-started, until one
#' fails to improve on the last; see [falkon_control()]) and the
#' number of iterations along the CG path (the held-out error costs only
#' \eqn{k(X_{val}, C)\alpha} per iteration, and the path stops after
#' `control$patience` (3) iterations without progress: a lower held-out
#' error rate, or at the same rate a held-out squared error at least 3 %
#' lower (`control$tie_gain`; for regression a squared error at least 1 %
#' lower, `control$path_gain`); a candidate \eqn{\lambda} without progress of its
#' own that long leaves the passes): the fit kept is the
#' best (iteration, \eqn{\lambda}) on that slice, trained on the other
#' rows.  On at most `control$loo_rows` rows (2000; and wherever the
#' slice would hold fewer than 10 rows) the squared loss instead chooses
#' \eqn{\lambda} by exact leave-one-out over all the rows, as [rff_ridge()]
#' does, on the centres' features \eqn{K_{nm} T^{-1}} (\eqn{T} the
#' Cholesky factor of \eqn{K_{mm}}; \eqn{\alpha = T^{-1}\beta} for their
#' ridge coefficients \eqn{\beta}, with an unpenalised intercept), from a
#' grid of 41 values or more (or `control$lambdas` where you give them),
#' at the default centres without growing them,
#' and solves the system exactly; the leave-one-out scores then calibrate
#' the probabilities.  A slice of tens or hundreds of rows chose worse
#' (leave-one-out's test error was 6 to 24 % lower on the mean of each
#' size from 100 to 2000 rows over 15 sets,
#' bench/investigations/falkon-small.md), and without one a
#' fixed \eqn{10^{-6}} interpolated (airquality's 83 complete training rows:
#' test RMSE 34 against 16).  With the default `m` (squared loss) the number of centres
#' grows: 256, 1024, 4096, ... up to [falkon_default_centers()], each fit
#' warm-started from the last on nested centres (and, after the first,
#' trying only the last \eqn{\lambda} and the next smaller one, or with
#' more than 8 classes only the next smaller one),
#' while a step lowers the held-out error by at least 3 %
#' (`control$grow_gain`) and, for classes, by at least a quarter point
#' (`control$grow_min`) and two held-out points; for classes the growth
#' also stops after any step whose held-out error is below
#' 2 `grow_min` (the next step would gain less than that), and when the first
#' step's held-out error is above `control$grow_jump` (5 %) it goes straight to
#' the most centres (the steps between would only warm-start it), unless
#' the next size is over half the most.  A step with a larger one after it
#' stops its CG path after `control$grow_patience` (3) iterations without
#' improvement instead of `patience`.  Easy problems
#' stop at a few hundred centres, hard ones use the most (the path is kept
#' as `centres_path`, with the rule that chose each step's centres: see
#' `landmarks`).  The passes hold \eqn{K_{nm}} in memory between
#' iterations when it fits `control$cache_bytes` (4 GB) and a quarter of the
#' memory available.  The logistic
#' loss uses [falkon_default_centers()]
#' centres.  The default kernel is the Gaussian with kernlab's `sigest`
#' bandwidth rule on the standardised inputs, as in [rff_svm()].  See
#' `bench/investigations/falkon-defaults.md` for the measurements behind these choices.
#'
#' **Learning the kernel (`tune`).**  With `tune = "iso"` (one length
#' scale) or `"ard"` (one per input column) falkon first learns the
#' Gaussian or Matérn kernel's length scale(s) and, with `lambda = "auto"`,
#' \eqn{\lambda}, then fits at them.  For classes the objective is the
#' held-out squared error of the Nystrom solution \eqn{\alpha = (K_{nm}^T
#' K_{nm} + \lambda n K_{mm})^{-1} K_{nm}^T y} on one-hot targets (whatever
#' the `loss`); for a regression it is the marginal likelihood of the
#' Gaussian process whose posterior mean that solution is (below, and
#' [falkon_control()], `tune_objective`).  Either is in closed form on a
#' subsample of the fit's training rows (its held-out slice left out):
#' 3000 rows at random, one fifth held out (five folds below 1500 rows; the
#' marginal likelihood takes four fifths, or all below 1500 rows), 300
#' uniform centres, then, with more training
#' rows, refined from there on up to 12000 rows and 1000 centres.  It
#' is minimised over \eqn{\log\lambda} and \eqn{\log\sigma_j} by a
#' limited-memory BFGS within bounds, with analytic gradients, from the
#' bandwidth rule and the best of `control$lambdas`, one length scale first,
#' then (`"ard"`) one per input from there, kept only if it also does better
#' on a second held-out fifth that its optimisation did not see (below 1500
#' rows, on the cross-validated objective).  Each evaluation costs
#' \eqn{O(n_s m_s (d + m_s))}.  The learning's kernel matrices, products,
#' factorisations and optimiser are the package's own (not R's BLAS, LAPACK
#' or `optim()`), so the learned kernel and \eqn{\lambda} are the same, bit
#' for bit, for any BLAS and any number of threads, as the fit is.
#' \eqn{\lambda} stays between the smallest of `control$lambdas` and 1 (one
#' learned at either end is marked as `tuning$lambda_edge`, `"lower"` or
#' `"upper"`, and `print()` says so); case weights do not enter the learning.
#' `control$tune_objective` chooses the objective: `"heldout"`, `"ml"`
#' (the Nystrom Gaussian process's marginal likelihood), or `"gcv"`, the
#' generalised cross-validation of the same Nystrom solution on the fitting
#' rows; see [falkon_control()] for the measurements behind the default.
#' When the fit holds a slice out, a learned \eqn{\lambda}, which
#' regularised the subsample, competes on the fit's held-out path with the
#' candidates below it (with every candidate when the marginal likelihood
#' learned it: its \eqn{\lambda} is the noise it infers, not a held-out
#' optimum), and the fit at the learned kernel is judged against
#' the fit at the rule's bandwidth on that slice, which the learning never
#' saw: the one with the lower held-out loss (squared error, error rate or
#' log-loss, as the fit chooses \eqn{\lambda}; a tie to the learned kernel)
#' is kept, and `tuning$heldout` gives both.  A few hundred centres can
#' favour length scales that lose at the fit's \eqn{m}; the judgement costs
#' a second fit.  A fit that chooses \eqn{\lambda} by leave-one-out (at
#' most `control$loo_rows` rows, above) has no slice: the tuning learns on
#' every row, and the two fits' mean squared leave-one-out residuals judge
#' (a slice of a few dozen rows had let learned scales through that lost:
#' Ionosphere's test error 9.5 % against the rule's 3.6 %).  Below 1500
#' rows, where no fifth is left to check one scale per input, those are
#' learned only with at least 20 rows per input; with fewer they fit the
#' cross-validated objective's noise (Ionosphere, Sonar), and one scale
#' is learned.
#' `"auto"` is `"ard"` for the Gaussian and Matérn kernels and nothing for
#' the others.  The kernel's roughness can matter as much as its scales: on
#' a 25 000-row spatio-temporal set (ocean temperature against longitude,
#' latitude and day, `bench/investigations/spatiotemporal.md`) the Gaussian
#' with learned scales ends 27 % above a Vecchia GP's test RMSE, and
#' `kernel = matern_kernel("median", nu = 1/2), tune = "ard", m = 10000`
#' 6-18 % above it over three seeds, at 0.17-0.21 times its time;
#' `"none"` (the default) fits at the kernel as given.  On the fifteen sets
#' of `bench/investigations/falkon-tune.md`, `"auto"` lowers the test error
#' by 10 % or more on five (Friedman 1, Vehicle, Vowel, Letter,
#' BostonHousing: 12-33 %), by 0-8 % on eight, and is worse on the mean on
#' Glass (0.6 point: two of its 64 test rows on one split of five) and
#' Shuttle (one test row of 17 400); the learning and its judgement (a
#' second fit) take 2.3-8.3 times the CPU time where a default fit takes
#' over two seconds (up to 13 times on the small sets, under a second).
#' Against [rff_gp()] with `ard = TRUE` on the five regression sets it
#' takes 0.04-0.67 times the CPU time, for a test RMSE from 0.1 % lower
#' (BostonHousing) to 3.1 % higher (diamonds).  At \eqn{n = 10^6},
#' \eqn{d = 20}, \eqn{m = 10^4} it takes 250 s and 2.5 GB beyond the data
#' against 115-131 s and 1.4-1.5 GB, for test RMSE 0.507 against 0.518
#' (noise 0.5; 2 cores): so it is asked for, not the default.  The result
#' is kept as `tuning` and the learned kernel, an ARD kernel (see
#' [gaussian_kernel()]), as `kernel`.  The measurements are in `bench/investigations/falkon-tune.md`.
#'
#' **Reproducibility and cost.**  The centres and the held-out slice come
#' from R's generator (`set.seed()` or `seed`).  Every product, factorisation
#' and solve runs on the package's own kernels, so the fit is the same, bit
#' for bit, for any number of threads, any BLAS and any block size of the
#' passes.  Memory is one \eqn{m \times m} array (8 \eqn{m^2} bytes; as in
#' the FALKON reference code it holds \eqn{T} in its upper triangle and
#' \eqn{A^T} for the current \eqn{\lambda} in its lower, each factorised
#' in place; one more per extra candidate \eqn{\lambda} within
#' `control$factor_bytes`) plus the held-out kernel block, a
#' block of rows times \eqn{m} (or the cached \eqn{K_{nm}}, at most
#' `control$cache_bytes`) and the scaled copy of the data; a fit whose estimate exceeds
#' `getOption("bochner.max_bytes")` (default: the memory available) is
#' refused before allocating.
#'
#' @references
#' Rudi, A., Carratino, L. and Rosasco, L. (2017). FALKON: an optimal large
#' scale kernel method. *NeurIPS*.
#'
#' Meanti, G., Carratino, L., Rosasco, L. and Rudi, A. (2020). Kernel
#' methods through the roof: handling billions of points efficiently.
#' *NeurIPS*.
#'
#' @param x Training data: a numeric matrix, a data frame of numeric
#'   columns, a numeric vector or a sparse `dgCMatrix` (densified), or a
#'   formula with `data` (see [formula_interface]).
#' @param y The response: a numeric vector (regression, squared loss only)
#'   or a factor, character or logical vector (classification).
#' @param kernel A kernel object, any with an exact Gram matrix (see
#'   [kernel_matrix()]).
#' @param m The number of Nystrom centres (at most the number of rows), or
#'   a matrix of centres with the columns of `x` (in its units).  `NULL`
#'   for [falkon_default_centers()].  (Called `centers` before 0.2.0; that
#'   name still works, with a message, see [bochner_arguments].)
#' @param lambda The penalty \eqn{\lambda} (positive, see Details), a vector
#'   of candidates, or `"auto"`.
#' @param loss `"squared"` or `"logistic"`.
#' @param landmarks How the `m` centres are chosen: `"auto"` (the
#'   default), `"uniform"`, `"kmeans"`, `"leverage"` or `"rpcholesky"`, as
#'   in [nystrom_features()].  `"auto"` is `"uniform"` except where the
#'   centres of a classifier grow (the default `m`, the squared loss): there
#'   256 randomly pivoted Cholesky pivots and the first 256 uniform centres
#'   are compared on a pool of the training rows, and where the pivots leave
#'   less than half of the uniform centres' residual trace (clustered or
#'   low-dimensional inputs: Shuttle, but none of the other bench sets) the
#'   growth takes randomly pivoted Cholesky centres, each step continuing
#'   the last one's pivots, up to 1024 centres, and uniform ones beyond.  The
#'   comparison costs about 0.05 s; where the pivots do not win, the fit is
#'   the uniform one exactly.  With `"rpcholesky"` the grown centres are
#'   nested in the same way, on a pool of \eqn{\max(4 m, 10000)} rows.  The
#'   fit's `landmarks` element records the rule of the centres kept.
#' @param iter The number of CG iterations (for the logistic loss, per
#'   Newton step), or `"auto"` (chosen on the held-out slice, at most
#'   `control$max_iter`).
#' @param weights `NULL`, or non-negative case weights, one per row.  The
#'   standardisation takes the weighted means and standard deviations, and
#'   it and the bandwidth rule leave out the rows of weight zero (as in
#'   [rff_svm()]).
#' @param scale Standardise the columns of `x` (as in [rff_svm()]).
#' @param seed `NULL`, or a seed for the centres and the held-out slice.
#' @param control A list overriding [falkon_control()]'s settings.
#' @param tune `"none"` (fit at the kernel as given), `"iso"` (learn one
#'   length scale and \eqn{\lambda}), `"ard"` (one length scale per input
#'   and \eqn{\lambda}) or `"auto"`: see Details.  Learning needs the
#'   Gaussian or the Matérn kernel.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... For the default method, nothing (unknown arguments are an
#'   error).
#' @return An object of class `"falkon"`: a list with `alpha` (\eqn{m
#'   \times k}), `offset`, `centres` (scaled), the `kernel` (bandwidth
#'   resolved), `lambda` and `iter` used, `type`, `levels`, `loss`,
#'   `fitted`, training `rmse` or `accuracy`, `validation` (the path of
#'   held-out errors, when used), `precision` (`"single"` or `"double"`, the
#'   kernel blocks' as [falkon_control()]'s `precision` chose), `scaling` (an
#'   ARD kernel's length scales folded in), `input`, `call`, and with `tune`, `tuning`: the `mode`, the
#'   `criterion` minimised (`"heldout"`, `"gcv"` or `"ml"`, see
#'   [falkon_control()]), the one `chosen` (`"iso"`, `"ard"`, or `"rule"` when the bandwidth rule's
#'   kernel was kept), the learned `lambda` and `sigma`, `lambda_edge` (see
#'   `tune`), the `start`, the `objective` (that criterion's value) at the start and the
#'   end, the number of `evaluations`, the `rows`, `centres` and `folds` it
#'   used, `check`, the first stage's held-out squared error of each
#'   candidate (`iso`, `ard`, `rule`) on the fifth its optimisation did not
#'   see (from 1500 rows), and `heldout`, the mean held-out loss of the
#'   `rule`'s fit and the `learned` kernel's (when both were fitted; on a
#'   small set their mean squared leave-one-out residuals).
#' @seealso [predict.falkon()], [rff_ridge()], [nystrom_features()].
#' @examples
#' set.seed(1)
#' x <- matrix(runif(2000, -3, 3), ncol = 2)
#' y <- sin(x[, 1]) * cos(x[, 2]) + rnorm(1000, sd = 0.1)
#' fit <- falkon(x, y, m = 200)
#' fit
#' sqrt(mean((predict(fit, x) - sin(x[, 1]) * cos(x[, 2]))^2))
#'
#' fit2 <- falkon(Species ~ ., data = iris, loss = "logistic", seed = 1)
#' round(predict(fit2, iris[c(1, 51, 101), ], type = "prob"), 3)
#' @export
falkon <- function(x, ...) UseMethod("falkon")

#' @rdname falkon
#' @export
falkon.default <- function(x, y, kernel = gaussian_kernel("sigest"), m = NULL,
                           lambda = "auto", loss = c("squared", "logistic"),
                           landmarks = c("auto", "uniform", "kmeans", "leverage", "rpcholesky"),
                           iter = "auto",
                           weights = NULL, scale = TRUE, seed = NULL, control = list(),
                           tune = c("none", "auto", "iso", "ard"),
                           nthreads = bochner_threads(), ...) {
  take_renamed(environment(), "falkon()", ...)
  x <- as_data_matrix(x, "x", sparse = TRUE)
  n <- nrow(x)
  loss <- check_choice(loss, c("squared", "logistic"), "loss")
  resp <- ridge_response(y, n)
  if (loss == "logistic" && resp$type == "regression") {
    stop_arg("loss", "= \"logistic\" needs classes in 'y'; for a numeric response use \"squared\"")
  }
  weights <- check_case_weights(weights, n)
  check_kernel(kernel)
  landmarks <- check_choice(landmarks, c("auto", landmark_rules), "landmarks")
  lambda <- falkon_check_lambda(lambda)
  iter <- if (identical(iter, "auto")) "auto" else check_count(iter, "iter")
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  control <- falkon_resolve_objective(falkon_control_list(control), resp$type)
  nthreads <- check_threads(nthreads)
  grow <- is.null(m)
  m <- falkon_check_centers(m, x, n)
  tune <- falkon_check_tune(tune, kernel, ncol(x))
  if (kernel$name == "min" && !scale) check_min_data(x, "x")

  input <- input_description(x)
  scaling <- if (scale) rff_scaling(x, weights) else NULL
  xs <- falkon_dense_rows(rff_apply_scaling(x, scaling))
  seed <- falkon_tune_seed(seed, tune)
  # small sets choose lambda by leave-one-out (R/fit-falkon-loo.R)
  loo <- falkon_loo_applies(n, loss, lambda, iter, control)
  # the bandwidth rule, the learned kernel and lambda (tune), ARD folded in
  fk <- falkon_fit_kernel(x, xs, scaling, kernel, tune, lambda, iter, resp$Y, m, control, seed,
                          nthreads, loo, weights)
  xs <- NULL   # each kernel's fit holds its own scaled rows
  w <- if (is.null(weights)) rep(1, n) else weights * (n / sum(weights))
  fit_at <- function(k) {
    falkon_fit_memory(k, resp, w, m, grow, loss, landmarks, lambda, iter, seed, nthreads, loo)
  }
  got <- falkon_fit_judged(fk, fit_at)
  fk <- NULL
  out <- got$out
  scaling <- got$scaling
  xs <- got$xs
  fit <- new_falkon(out, resp, loss, scaling, input, n, weights,
                    falkon_landmarks_taken(m, landmarks, out))
  fit$tuning <- got$report
  if (is.null(xs) && is.null(out$scores)) xs <- as.matrix(rff_apply_scaling(x, scaling))

  fit$fitted <- falkon_fitted_values(fit, xs, nthreads, out$scores)
  names(fit$fitted) <- rownames(x)
  if (resp$type == "regression") {
    res <- resp$y - fit$fitted
    fit$residuals <- res
    fit$rmse <- sqrt(sum(w * res^2) / sum(w))
  } else {
    fit$accuracy <- mean(fit$fitted == resp$y)
  }
  fit$call <- generic_call(match.call())
  fit
}

# falkon()'s fit at one kernel fk (falkon_fit_kernel(): kernel, lambda,
# control, scaling, xs), drawing with the fit's seed the held-out slice
# and the centres: list(out, scaling, xs (NULL when released), kernel).
falkon_fit_memory <- function(fk, resp, w, m, grow, loss, landmarks, lambda, iter, seed,
                              nthreads, loo = FALSE) {
  resolved <- fk$kernel
  control <- fk$control
  scaling <- fk$scaling
  xs <- fk$xs
  n <- nrow(xs)
  # a small fit runs on one thread: its parallel regions cost more than
  # they save (as the passes' own rule in src/falkon.c)
  m_most <- if (is.matrix(m)) nrow(m) else m
  if (as.double(n) * m_most * ncol(resp$Y) * length(control$lambdas) < 2^24) nthreads <- 1L
  if (loo) {
    out <- with_seed(seed, falkon_fit_loo(xs, resp$Y, falkon_classes(resp), w, resp$levels,
                                          m, resolved, landmarks, scaling,
                                          control$loo_grid, nthreads))
    return(list(out = out, scaling = scaling, xs = xs, kernel = resolved))
  }
  out <- with_seed(seed, {
    # the held-out slice the arguments given ask for: a learned lambda keeps
    # it, and with it the calibrated probabilities
    split <- falkon_split(n, lambda, iter, control)
    xt <- if (length(split$valid)) xs[split$train, , drop = FALSE] else xs
    rows <- falkon_rows(xt, nthreads, control$block_rows, control$cache_bytes,
                        single = falkon_single(control, nrow(xt), m_most, ncol(resp$Y)))
    Y <- resp$Y[split$train, , drop = FALSE]
    wt <- w[split$train]
    val <- falkon_heldout(xs, resp, w, split$valid)
    centres_at <- function(idx, k) {
      if (is.null(idx)) return(falkon_centres(k, xt, resolved, landmarks, scaling, nthreads))
      cm <- xs[split$train[idx], , drop = FALSE]
      dimnames(cm) <- NULL
      cm
    }
    # the scaled copy is not needed while fitting at fixed centres (the
    # training rows and the held-out ones have theirs): it goes, and comes
    # back if the fitted values need it
    release <- function() if (length(split$valid)) xs <<- NULL
    res <- falkon_fit_centres(m, grow, loss, landmarks, xt, length(split$train),
                              centres_at, release, resolved, rows, Y, wt, val, fk$lambda, iter,
                              control, nthreads, n, ncol(xs))
    res$scores <- falkon_fit_scores(res, rows, split, n)
    res$precision <- if (rows$single) "single" else "double"
    res$calibration <- falkon_calibrate(res, val, resp$levels)
    if (is.null(res$calibration) && loss == "squared" && resp$type != "regression") {
      res$calibration <- falkon_calibrate_training(res, length(split$train), function(idx) {
        list(x = xs[split$train[idx], , drop = FALSE], cls = falkon_classes(resp, split$train[idx]))
      }, wt, resp$levels, nthreads)
    }
    res$heldout_loss <- falkon_heldout_losses(res$valid_scores, val, loss)
    res
  })
  list(out = out, scaling = scaling, xs = xs, kernel = resolved)
}

#' @rdname formula_interface
#' @export
falkon.formula <- function(formula, data = NULL, ..., subset, weights,
                           na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), falkon.default, na.action, ...,
              chunked = falkon.data_chunks, response = "y ~ a + b")
}

# The scaled rows as the passes take them: a dense matrix.
falkon_dense_rows <- function(xs) {
  if (!is_sparse_matrix(xs)) return(xs)
  check_allocation(nrow(xs), ncol(xs), "the dense copy of the sparse data", arg = "x")
  as.matrix(xs)
}
