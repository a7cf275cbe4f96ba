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
#' frequencies) of the classes.  `predict(type = "prob")` then gives the
#' model's own probabilities.
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
#' \eqn{\lambda} warm-started from that fit; with other centres, one after
#' another from the largest, warm-started, until one fails to improve on the
#' last; see [falkon_control()]) and the
#' number of iterations along the CG path (the held-out error costs only
#' \eqn{k(X_{val}, C)\alpha} per iteration, and the path stops after
#' `control$patience` (3) iterations without progress: a lower held-out
#' error rate, or at the same rate a held-out squared error at least 3 %
#' lower (`control$tie_gain`; for regression a squared error at least 1 %
#' lower, `control$path_gain`); a candidate \eqn{\lambda} without progress of its
#' own that long leaves the passes): the fit kept is the
#' best (iteration, \eqn{\lambda}) on that slice, trained on the other
#' rows.  With the default `m` (squared loss) the number of centres
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
#' as `centres_path`).  The passes hold \eqn{K_{nm}} in memory between
#' iterations when it fits `control$cache_bytes` (4 GB) and a quarter of the
#' memory available.  The logistic
#' loss uses [falkon_default_centers()]
#' centres.  The default kernel is the Gaussian with kernlab's `sigest`
#' bandwidth rule on the standardised inputs, as in [rff_svm()].  See
#' `bench/investigations/falkon-defaults.md` for the measurements behind these choices.
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
#' @param landmarks How the `m` centres are chosen: `"uniform"`, `"kmeans"`
#'   or `"leverage"`, as in [nystrom_features()].
#' @param iter The number of CG iterations (for the logistic loss, per
#'   Newton step), or `"auto"` (chosen on the held-out slice, at most
#'   `control$max_iter`).
#' @param weights `NULL`, or non-negative case weights, one per row.
#' @param scale Standardise the columns of `x` (as in [rff_svm()]).
#' @param seed `NULL`, or a seed for the centres and the held-out slice.
#' @param control A list overriding [falkon_control()]'s settings.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... For the default method, nothing (unknown arguments are an
#'   error).
#' @return An object of class `"falkon"`: a list with `alpha` (\eqn{m
#'   \times k}), `offset`, `centres` (scaled), the `kernel` (bandwidth
#'   resolved), `lambda` and `iter` used, `type`, `levels`, `loss`,
#'   `fitted`, training `rmse` or `accuracy`, `validation` (the path of
#'   held-out errors, when used), `scaling`, `input` and `call`.
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
                           landmarks = c("uniform", "kmeans", "leverage"), iter = "auto",
                           weights = NULL, scale = TRUE, seed = NULL, control = list(),
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
  landmarks <- check_choice(landmarks, c("uniform", "kmeans", "leverage"), "landmarks")
  lambda <- falkon_check_lambda(lambda)
  iter <- if (identical(iter, "auto")) "auto" else check_count(iter, "iter")
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  control <- falkon_control_list(control)
  nthreads <- check_threads(nthreads)
  grow <- is.null(m)
  m <- falkon_check_centers(m, x, n)
  if (kernel$name == "min" && !scale) check_min_data(x, "x")

  input <- input_description(x)
  scaling <- if (scale) rff_scaling(x) else NULL
  xs <- rff_apply_scaling(x, scaling)
  if (is_sparse_matrix(xs)) {
    check_allocation(n, ncol(xs), "the dense copy of the sparse data", arg = "x")
    xs <- as.matrix(xs)
  }
  resolved <- resolve_kernel(kernel, xs)
  w <- if (is.null(weights)) rep(1, n) else weights * (n / sum(weights))

  # a small fit runs on one thread: its parallel regions cost more than
  # they save (as the passes' own rule in src/falkon.c)
  m_most <- if (is.matrix(m)) nrow(m) else m
  if (as.double(n) * m_most * ncol(resp$Y) * length(control$lambdas) < 2^24) nthreads <- 1L
  out <- with_seed(seed, {
    split <- falkon_split(n, lambda, iter, control)
    xt <- if (length(split$valid)) xs[split$train, , drop = FALSE] else xs
    rows <- falkon_rows(xt, nthreads, control$block_rows, control$cache_bytes,
                        single = falkon_single(control, nrow(xt), m_most))
    Y <- resp$Y[split$train, , drop = FALSE]
    wt <- w[split$train]
    val <- falkon_heldout(xs, resp, w, split$valid)
    centres_at <- function(idx, k) {
      if (is.null(idx)) return(falkon_centres(k, xs, split$train, resolved, landmarks, scaling,
                                              nthreads))
      cm <- xs[split$train[idx], , drop = FALSE]
      dimnames(cm) <- NULL
      cm
    }
    # the scaled copy is not needed while fitting at fixed centres (the
    # training rows and the held-out ones have theirs): it goes, and comes
    # back if the fitted values need it
    release <- function() if (length(split$valid)) xs <<- NULL
    res <- falkon_fit_centres(m, grow, loss, landmarks == "uniform", length(split$train),
                              centres_at, release, resolved, rows, Y, wt, val, lambda, iter,
                              control, nthreads, n, ncol(xs))
    res$scores <- falkon_fit_scores(res, rows, split, n)
    res
  })
  fit <- new_falkon(out, resp, loss, scaling, input, n, weights)
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

#' @rdname formula_interface
#' @export
falkon.formula <- function(formula, data = NULL, ..., subset, weights,
                           na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), falkon.default, na.action, ...,
              chunked = falkon.data_chunks, response = "y ~ a + b")
}

#' Settings of falkon()
#'
#' @param lambdas The candidate \eqn{\lambda} of `lambda = "auto"`.
#' @param max_iter The most CG iterations with `iter = "auto"`.
#' @param patience Stop once the held-out error has not improved for this
#'   many CG iterations (squared loss).
#' @param path_gain,tie_gain What counts as an improvement for `patience`,
#'   where an iteration is a pass over the rows: for regression a fall of
#'   the held-out squared error by at least the fraction `path_gain` since
#'   the last improvement; for classes a fall of the held-out error rate,
#'   or at the same rate a fall of the held-out squared error by at least
#'   `tie_gain` (both in (0, 1)).  With few centres, where the iterations are
#'   products with \eqn{K_{nm}^T W K_{nm}} formed once, any fall.  The fit
#'   kept is still the one of least held-out error (for classes, the error
#'   rate with the squared error breaking ties).  The squared error stands
#'   in for an error rate too coarse to move on a held-out slice, and only
#'   part of its fall reaches the rate: on `bench/suites/machines.R`'s Shuttle split
#'   (2000 held-out rows, error rate flat at 0.4 % from iteration 13) a
#'   tie-break gain of 1 % ran 21 iterations and 3 % ran 18, for 99.68 %
#'   and 99.67 % test accuracy, in 7-17 % less time (git history: bench/falkon-notes.md at 6e0e28f).
#' @param newton_patience For the logistic loss, stop once the held-out
#'   log-loss has not improved for this many Newton steps.  Along the
#'   decreasing \eqn{\lambda} the held-out log-loss falls, then rises, but
#'   not always in one turn: on `bench/suites/machines.R`'s Shuttle split it rose at
#'   \eqn{10^{-6}} and fell again to its least at \eqn{10^{-8}} (test
#'   log-loss 0.0157 after one step of patience, 0.0107 after two).  On its
#'   DNA, spam, Satellite, Vehicle and Vowel splits two steps keep the fits
#'   of one, for 10 to 20 % more time.
#' @param validation The fraction of rows held out to choose `lambda` and
#'   `iter`, and `max_validation` the most rows held out.
#' @param max_validation See `validation`.
#' @param newton_steps For the logistic loss, the Newton steps at the final
#'   `lambda` after the decreasing schedule.
#' @param tol Relative residual at which CG stops early.
#' @param block_rows Rows per block of the passes (0: about 16 MB of kernel
#'   block); results do not depend on it.
#' @param cache_bytes The most memory (bytes) for holding the kernel block
#'   \eqn{K_{nm}} of the training rows between passes (at most a quarter of
#'   `getOption("bochner.max_bytes")` or the memory available); beyond it each
#'   pass evaluates the kernel again.  Results do not depend on it.
#' @param start_centers,grow_gain,grow_min With the default `centers`, the
#'   number of centres starts at `start_centers` and grows fourfold while the
#'   held-out error falls by at least the fraction `grow_gain`, in (0, 1),
#'   and for classes by at least `grow_min` (an error rate, in (0, 1))
#'   (see [falkon()]).
#' @param grow_jump,grow_patience For classes, a first growth step whose
#'   held-out error exceeds `grow_jump` (an error rate) is followed by the
#'   largest number of centres directly (unless the next size is over half
#'   of it; `grow_jump = 1` never jumps); every step but the last stops
#'   its CG path after `grow_patience` iterations without improvement (at
#'   most `patience`).
#' @param factor_bytes The most memory (bytes) for the preconditioners of
#'   all candidate \eqn{\lambda} at once (one \eqn{m \times m} array of
#'   doubles each, \eqn{8 m^2} bytes), and at most a quarter of
#'   `getOption("bochner.max_bytes")` or the memory available.  Within it
#'   `lambda = "auto"` runs every candidate in one CG path; beyond it (by
#'   default from about 6500 centres with the three default candidates) the
#'   fit holds one array, and the held-out scores are computed from the
#'   kernel at every iteration instead of from a held \eqn{n_{val} \times m}
#'   block.  Uniform centres (the default `landmarks`) then compare the
#'   candidates in one CG path on their first \eqn{m/4} (fewer if those
#'   too would not fit), and the fit on all \eqn{m} runs the chosen one,
#'   warm-started from that fit (at \eqn{n = 10^6}, \eqn{m = 10^4}: 313 s
#'   instead of 457 on 2 cores, the same test error); other centres
#'   run the candidates one after another from the largest, each path
#'   warm-started from the best coefficients so far, stopping at the first
#'   candidate whose held-out error does not improve.
#'   `factor_bytes = 0` always fits them one after another.
#' @param precision `"double"`, `"single"` or `"auto"`: whether the kernel
#'   blocks (and the cached \eqn{K_{nm}}) are stored in single precision, the
#'   passes' products then running in double on those values (the same float
#'   kernel matrix in every pass).  The preconditioner's Cholesky factors, the
#'   conjugate-gradient vectors and everything returned stay double.  In single
#'   precision `cache_bytes` holds twice the entries.  `"auto"` chooses
#'   single precision when \eqn{K_{nm}} fits the cache only in single
#'   precision (the passes then read it instead of evaluating the kernel)
#'   and no candidate \eqn{\lambda} is below \eqn{10^{-7}}; otherwise double:
#'   for small fits, for fits cached either way (the float cache saves memory,
#'   not time: its passes cost up to 30 % more CPU) and for ill-conditioned
#'   ones (a tiny \eqn{\lambda}, as the default candidates' \eqn{10^{-8}}: on
#'   the Letter split single precision lost 0.43 points of accuracy there,
#'   nothing on seven other sets at \eqn{10^{-6}} and above).  The
#'   measurements are in bench/investigations/falkon-precision.md.  Results are identical for any
#'   thread count, block size and chunking at a given precision.
#' @return A list of the settings.
#' @examples
#' falkon_control(max_iter = 50)
#' @export
falkon_control <- function(lambdas = 10^c(-4, -6, -8), max_iter = 60, patience = 3,
                           path_gain = 0.01, tie_gain = 0.03, validation = 0.1,
                           max_validation = 2000, newton_steps = 2, newton_patience = 2,
                           tol = 1e-10, block_rows = 0, cache_bytes = 4e9,
                           start_centers = 256, grow_gain = 0.03, grow_min = 0.0025,
                           grow_jump = 0.05, grow_patience = 3, factor_bytes = 1e9,
                           precision = c("auto", "double", "single")) {
  if (!is.numeric(lambdas) || length(lambdas) < 1L) {
    stop_arg("lambdas", "must be positive numbers")
  }
  lambdas <- vapply(lambdas, check_positive, 0, arg = "lambdas")
  list(lambdas = sort(lambdas, decreasing = TRUE),
       max_iter = check_count(max_iter, "max_iter"),
       patience = check_count(patience, "patience"),
       path_gain = check_probability(path_gain, "path_gain"),
       tie_gain = check_probability(tie_gain, "tie_gain"),
       validation = check_probability(validation, "validation"),
       max_validation = check_count(max_validation, "max_validation"),
       newton_steps = check_count(newton_steps, "newton_steps", lower = 0),
       newton_patience = check_count(newton_patience, "newton_patience"),
       tol = check_number(tol, "tol", lower = 0),
       block_rows = check_count(block_rows, "block_rows", lower = 0),
       cache_bytes = check_number(cache_bytes, "cache_bytes", lower = 0),
       start_centers = check_count(start_centers, "start_centers"),
       grow_gain = check_probability(grow_gain, "grow_gain"),
       grow_min = check_probability(grow_min, "grow_min"),
       grow_jump = check_number(grow_jump, "grow_jump", lower = 0),
       grow_patience = check_count(grow_patience, "grow_patience"),
       factor_bytes = check_number(factor_bytes, "factor_bytes", lower = 0),
       precision = check_choice(precision[1L], c("auto", "double", "single"), "precision"))
}

# Whether a fit on n training rows with at most m centres stores its kernel blocks in
# float (falkon_control(precision)): "single" always, "double" never, "auto" when K_nm
# fits the cache only in float (then the passes read it instead of evaluating the kernel)
# and no candidate lambda is below 1e-7 (the rule's evidence in falkon_control()'s
# documentation and bench/investigations/falkon-precision.md: Letter at lambda = 1e-8 lost 0.43 points in
# float, the sets at 1e-6 and above nothing; with K_nm cached either way, the float
# cache's passes cost 0-30 % more CPU, not less).
falkon_single <- function(control, n, m) {
  precision <- if (is.null(control$precision)) "auto" else control$precision
  if (precision != "auto") return(precision == "single")
  budget <- min(control$cache_bytes, memory_limit() / 4)
  entries <- as.double(n) * m
  8 * entries > budget && 4 * entries <= budget &&
    min(control$lambdas) >= falkon_single_min_lambda
}
falkon_single_min_lambda <- 1e-7

falkon_control_list <- function(control) {
  if (!is.list(control)) stop_arg("control", "must be a list, such as falkon_control(max_iter = 50)")
  known <- names(formals(falkon_control))
  bad <- setdiff(names(control), known)
  if (length(control) > 0L && (is.null(names(control)) || length(bad) > 0L ||
                               any(!nzchar(names(control))))) {
    stop_arg("control", "has unknown or unnamed entries (",
             paste(bad, collapse = ", "), "); known are ", paste(known, collapse = ", "))
  }
  tryCatch(do.call(falkon_control, control), error = function(e) {
    stop_arg("control", "has a bad entry: ", conditionMessage(e))
  })
}

#' Default number of FALKON centres
#'
#' The most centres [falkon()] uses by default:
#' \eqn{\min(n, 5000, \max(200, \min(25 \sqrt n, \max(1000, 4 \cdot
#' 10^8 / n))))}.  FALKON's theory asks for \eqn{m} of order \eqn{\sqrt n}
#' (times a log factor) for the optimal rate.  The budget of
#' \eqn{4 \cdot 10^8} entries of \eqn{K_{nm}} (but never fewer than 1000
#' centres) is what [falkon()] holds in memory between passes by default
#' (3.2 GB, within `falkon_control()$cache_bytes`): up to it, the kernel is
#' evaluated once (a few seconds) and every conjugate-gradient iteration is
#' two products on the cached block; beyond it (large \eqn{n}) each pass
#' evaluates the kernel again and 1000 centres keep a pass at seconds.  The
#' cap of 5000 keeps the \eqn{m \times m} factors at a few hundred
#' megabytes and their \eqn{O(m^3)} factorisations at seconds.  With the
#' default `m`, [falkon()] grows the number of centres up to this one
#' only while the held-out error falls.  On `bench/investigations/falkon-defaults.R`'s
#' sets, 25 \eqn{\sqrt n} centres gained 1.8 points over half as many on
#' Letter (13 333 rows); on a noisy 10^5-row problem 4000 centres gained
#' 2.6 points over the 1000 of the budget this rule replaces (\eqn{6 \cdot
#' 10^7 / n}, set when every pass evaluated the kernel).  See
#' `bench/investigations/falkon-defaults.md`.  Give `m` to go beyond.
#' @param n Number of training rows, a whole number.
#' @return A whole number.
#' @examples
#' sapply(c(100, 1e4, 4e4, 1e5, 1e6), falkon_default_centers)
#' @export
falkon_default_centers <- function(n) {
  n <- check_count(n, "n")
  as.integer(min(n, 5000, max(200, min(round(25 * sqrt(n)),
                                       max(1000, floor(falkon_kernel_budget / n))))))
}

# Entries of K_nm the default centres may make (falkon_default_centers()):
# as doubles, 3.2 GB, which the default cache_bytes holds.
falkon_kernel_budget <- 4e8

falkon_check_lambda <- function(lambda) {
  if (identical(lambda, "auto")) return(lambda)
  if (!is.numeric(lambda) || length(lambda) < 1L || anyNA(lambda) || any(!is.finite(lambda)) ||
      any(lambda <= 0)) {
    stop_arg("lambda", "must be \"auto\" or positive finite numbers")
  }
  sort(as.double(lambda), decreasing = TRUE)
}

falkon_check_centers <- function(centers, x, n) {
  if (is.null(centers)) return(falkon_default_centers(n))
  if (is.matrix(centers) || is.data.frame(centers)) {
    cm <- as_data_matrix(centers, "m")
    if (ncol(cm) != ncol(x)) stop_arg("m", "has ", ncol(cm), " column(s) but 'x' has ", ncol(x))
    return(cm)
  }
  m <- check_count(centers, "m")
  if (m > n) stop_arg("m", "must be at most nrow(x) = ", n, " (got ", m, "): centres are rows of 'x'")
  m
}

# The rows fitted on and the held-out rows: a random slice when lambda or
# iter is to be chosen and there are enough rows, else none.
falkon_split <- function(n, lambda, iter, control) {
  choose <- identical(lambda, "auto") || length(lambda) > 1L || identical(iter, "auto")
  nv <- min(control$max_validation, floor(control$validation * n))
  if (!choose || nv < 10L || n - nv < 10L) return(list(train = seq_len(n), valid = integer()))
  valid <- sort(sample.int(n, nv))
  list(train = setdiff(seq_len(n), valid), valid = valid)
}

# The centres as rows of the scaled data: given (scaled like x), or drawn
# from the training rows by the landmark rule of nystrom_features().
falkon_centres <- function(centers, xs, train, kernel, landmarks, scaling, nthreads) {
  if (is.matrix(centers)) {
    cm <- rff_apply_scaling(centers, scaling)
    dimnames(cm) <- NULL
    return(cm)
  }
  m <- min(centers, length(train))
  xt <- xs[train, , drop = FALSE]
  index <- switch(landmarks,
    uniform = sample.int(length(train), m),
    kmeans = kmeanspp_landmarks(kernel, xt, m, nthreads),
    leverage = rls_landmarks(kernel, xt, m, nthreads))
  cm <- xt[index, , drop = FALSE]
  dimnames(cm) <- NULL
  cm
}

# Refuse before allocating what a fit holds at once: the m x m factors
# (one array, or one per candidate lambda and G when they fit together:
# falkon_sequential()) and the panels of their factorisation, H = K_nm' W
# K_nm where the centres are few (falkon_fit_squared()), the held-out
# kernel block (unless the centres are many: falkon_heldout_scorer()), the
# kernel blocks of a pass, the CG state, and for rows held in memory
# (n x d) the scaled copy of the data and of its training rows and the
# targets and scores.  The cached K_nm is left out: it is
# held only within control$cache_bytes and a quarter of memory_limit().
falkon_check_memory <- function(m, nval, L, k, control, n = 0, d = 0) {
  check_allocation(m, m, "the centres' Gram matrix", arg = "m")
  # one array, or one per candidate and G = T T' / m kept (falkon_keep_g())
  arrays <- if (falkon_sequential(m, L, control)) 1 else L + 1
  block <- if (control$block_rows > 0) control$block_rows
           else min(8192, max(256, floor(2^21 / m)))
  parts <- list("the m x m factors" = c(m, m * arrays),
                "their factorisation's panels" = c(m, 640),
                "the held-out kernel block" = c(if (falkon_lean(m, control)) 0 else nval, m),
                "the kernel blocks of a pass" = c(2 * block, m),
                "the CG state" = c(m, 8 * L * k),
                "the scaled data and its training rows" = c(2 * n, d),
                "the targets and scores" = c(n, 4 * k))
  if (falkon_use_gram(m, k, L, Inf)) parts[["K_nm' K_nm"]] <- c(m, m)
  check_memory(parts, "falkon()", "m", advice = "use fewer centres")
}

# One constructor for the fitted class.
new_falkon <- function(out, resp, loss, scaling, input, n, weights) {
  alpha <- out$alpha
  colnames(alpha) <- if (resp$type == "regression") NULL
                     else if (ncol(alpha) == 1L) resp$levels[2L] else resp$levels
  structure(list(alpha = alpha, offset = out$offset, centres = out$prep$centres,
                 kernel = out$prep$kernel, m = out$prep$m, lambda = out$lambda,
                 iter = out$iter, newton_steps = out$steps, loss = loss, type = resp$type,
                 levels = resp$levels, validation = out$validation,
                 centres_path = out$centres_path,
                 n_train = out$n_train, n = n, case_weights = weights,
                 scaling = scaling, input = input),
            class = bochner_fit_class("falkon"))
}
