# falkon()'s settings (falkon_control()), the default number of centres,
# the checks of its arguments, the centres' draw, the memory guard and the
# constructor of the fitted class.


#' Settings of falkon()
#'
#' @param lambdas The candidate \eqn{\lambda} of `lambda = "auto"`.  A fit
#'   that chooses \eqn{\lambda} by leave-one-out (`loo_rows`) replaces the
#'   three default candidates by [rff_ridge()]'s finer grid (41 values or
#'   more); candidates you give are its grid as given.
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
#'   blocks (and the cached \eqn{K_{nm}}) are stored in single precision.  A
#'   pass with more than 8 right-hand sides then multiplies in float (the
#'   coefficients and the pass's intermediate rounded to float, float sums of
#'   256 terms added in double), twice the multiply-adds an instruction; with
#'   fewer it runs double products on the float values.  Where the passes
#'   multiply in float and a candidate \eqn{\lambda} is below
#'   \eqn{10^{-7}}, the centres' factor takes float's machine epsilon as its
#'   jitter (\eqn{2^{-23} m}, against \eqn{10^{-13} m} in double, as FALKON
#'   does in float): the factor's inverse would otherwise magnify the
#'   rounding where \eqn{\lambda} no longer damps it (on Letter at
#'   \eqn{10^{-8}} float values alone had cost 0.43 points).  The
#'   preconditioner's Cholesky
#'   factors, the conjugate-gradient vectors and everything returned stay
#'   double.  In single precision `cache_bytes` holds twice the entries.
#'   `"auto"` chooses single precision with more than 8 classes and
#'   \eqn{n m \ge 10^7} (Letter: 0.6 of double's time, accuracy 0.9637
#'   against 0.9635), and where \eqn{K_{nm}} fits the cache only in single
#'   precision (the passes then read it instead of evaluating the kernel) and
#'   no candidate \eqn{\lambda} is below \eqn{10^{-7}}; otherwise double:
#'   small fits, and fits with few classes or a regression, whose passes
#'   gained nothing from float values under double products.  On the nine
#'   bench sets `"single"` was within 0.02 points of double's accuracy (and
#'   0.00 % of its RMSE) but on Satellite, +0.16 points.  The fit records
#'   the choice in `precision`.  The measurements are in
#'   bench/investigations/falkon-precision.md.  Results are identical for any
#'   thread count, block size and chunking at a given precision.
#' @param loo_rows With the squared loss, `lambda` and `iter` both `"auto"`
#'   and no `tune`, a fit on at most this many rows chooses \eqn{\lambda} by
#'   exact leave-one-out over all its rows and solves its system exactly,
#'   instead of holding a slice out (see [falkon()], Defaults); `0` keeps
#'   the slice wherever one of 10 rows can be held.  On 15 sets at 100 to
#'   2000 training rows leave-one-out lowered the test error on 41 of 43
#'   (set, size) pairs (median 8-9 % from 100 to 1000 rows, 5 % at 2000; the
#'   other two within 1 %; BreastCancer and Ionosphere from 22-28 % error to
#'   3-5 %, where a slice of 10 to 50 rows whose error rate did not move for
#'   three iterations stopped CG after the first), for 2 to 4.5 times the CPU
#'   time of the held-out fit (at most 1.2 s at 2000 rows):
#'   bench/investigations/falkon-small.md.
#' @param tune_objective What `falkon(tune = )` minimises.  `"auto"` (the
#'   default) is `"ml"` for a regression and `"heldout"` for classes.
#'   `"heldout"` is the squared error on held-out rows; `"gcv"` the
#'   generalised cross-validation of the Nystrom fit on every tuning row,
#'   \eqn{n\, \mathrm{RSS} / (n - \mathrm{tr}\, H)^2}; `"ml"` the negative
#'   log marginal likelihood of the Nystrom Gaussian process (the criterion
#'   of [rff_gp()], on the fit's centres, its signal variance profiled out)
#'   (see [falkon()], Learning the kernel).  Below 1500 tuning rows GCV and
#'   ML use all of them, else four fifths, the fifth left judging one scale
#'   against one per input.  On thirteen regressions
#'   (bench/investigations/falkon-ml.md and falkon-ml-regression.md) ML's
#'   test RMSE was lower than the held-out objective's on eleven (volcano
#'   -50 %, CO2 -9.6 %, BostonHousing -6.5 %, diamonds -5.7 %, faithful -5.5
#'   %) and within 1 % above it on the other two (mcycle, airquality), for
#'   0.4 to 3.9 times the held-out tuner's CPU time (1.07 at 10^5 rows).  It
#'   lost on the rough spatio-temporal field of
#'   bench/investigations/spatiotemporal.md (Gaussian ARD 1.291 against
#'   1.262, Matern 3/2 1.247 against 1.108; one of three Matern 1/2 seeds
#'   learned a time scale of 899, the others within 0.5 %).  On classes it
#'   lost
#'   (Vowel +50 %, Vehicle +17 %, Ionosphere +16 % test error: one-hot
#'   targets of several classes are not Gaussian), as GCV did on the same
#'   fifteen sets (bench/investigations/falkon-gcv.md: lower on six, higher
#'   on seven, Vowel +67 %, DNA +29 %).
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
                           precision = c("auto", "double", "single"), loo_rows = 2000,
                           tune_objective = c("auto", "heldout", "gcv", "ml")) {
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
       precision = check_choice(precision[1L], c("auto", "double", "single"), "precision"),
       loo_rows = check_number(loo_rows, "loo_rows", lower = 0),
       tune_objective = check_choice(tune_objective[1L], c("auto", "heldout", "gcv", "ml"),
                                     "tune_objective"))
}

# Whether a fit on n training rows with at most m centres and 'columns' targets (classes,
# or 1) stores its kernel blocks in float (falkon_control(precision)): "single" always,
# "double" never; "auto" where it pays and loses nothing measured
# (bench/investigations/falkon-precision.md): with more than 8 classes and n m >= 10^7
# (every pass multiplies in float, bochner_falkon_float_products() in src/falkon.h:
# Letter in 0.6 of double's time, +0.02 points), or where K_nm fits the cache only in
# float (the passes then read it instead of evaluating the kernel) and no candidate
# lambda is below 1e-7.  Elsewhere the float cache's passes run double chains and saved
# little or no time.
falkon_single <- function(control, n, m, columns = 1L) {
  precision <- if (is.null(control$precision)) "auto" else control$precision
  if (precision != "auto") return(precision == "single")
  budget <- min(control$cache_bytes, memory_limit() / 4)
  entries <- as.double(n) * m
  (columns > falkon_float_products_above && entries >= falkon_single_min_entries) ||
    (8 * entries > budget && 4 * entries <= budget &&
       min(control$lambdas) >= falkon_single_min_lambda)
}
falkon_single_min_lambda <- 1e-7
falkon_single_min_entries <- 1e7

# The user's control (a list, falkon_control()'s or partial) checked and
# completed, with the leave-one-out grid it implies (falkon_loo_grid()).
falkon_control_list <- function(control) {
  if (!is.list(control)) stop_arg("control", "must be a list, such as falkon_control(max_iter = 50)")
  control$loo_grid <- NULL
  known <- names(formals(falkon_control))
  bad <- setdiff(names(control), known)
  if (length(control) > 0L && (is.null(names(control)) || length(bad) > 0L ||
                               any(!nzchar(names(control))))) {
    stop_arg("control", "has unknown or unnamed entries (",
             paste(bad, collapse = ", "), "); known are ", paste(known, collapse = ", "))
  }
  control <- tryCatch(do.call(falkon_control, control), error = function(e) {
    stop_arg("control", "has a bad entry: ", conditionMessage(e))
  })
  control$loo_grid <- falkon_loo_grid(control)
  control
}

# control$tune_objective = "auto" resolved by the response's type ("regression" or
# "classification"): the marginal likelihood for a regression, the held-out
# squared error for classes (falkon_control(), tune_objective).
falkon_resolve_objective <- function(control, type) {
  if (identical(control$tune_objective, "auto")) {
    control$tune_objective <- if (type == "regression") "ml" else "heldout"
  }
  control
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
# iter is to be chosen and there are enough rows, else none (with the
# squared loss and both to choose, falkon_fit_loo() then fits).
falkon_split <- function(n, lambda, iter, control) {
  choose <- identical(lambda, "auto") || length(lambda) > 1L || identical(iter, "auto")
  nv <- falkon_validation_rows(n, control)
  if (!choose || nv < falkon_min_validation || n - nv < falkon_min_validation) {
    return(list(train = seq_len(n), valid = integer()))
  }
  valid <- sort(sample.int(n, nv))
  list(train = setdiff(seq_len(n), valid), valid = valid)
}

# How many of n rows a held-out slice would take, and the fewest it may.
falkon_validation_rows <- function(n, control) {
  min(control$max_validation, floor(control$validation * n))
}
falkon_min_validation <- 10L

# The centres as rows of the scaled data: given (scaled like x), or drawn
# from the training rows xt (a matrix or a row_source()) by the landmark rule
# of nystrom_features().
falkon_centres <- function(centers, xt, kernel, landmarks, scaling, nthreads) {
  if (is.matrix(centers)) {
    cm <- rff_apply_scaling(centers, scaling)
    dimnames(cm) <- NULL
    return(cm)
  }
  src <- row_source(xt)
  m <- min(centers, src$n)
  # "auto" chooses between rules only for the grown centres (falkon_growth_centres())
  index <- landmark_index(if (landmarks == "auto") "uniform" else landmarks, kernel, xt, m,
                          nthreads)
  cm <- src$fetch(index)
  dimnames(cm) <- NULL
  cm
}

# The rule that chose the centres, as the fit records it: "given" for a
# matrix m, else the rule of the grown centres kept (out$landmarks: "auto"
# chose one, and a growth may pass from one to the other), else the rule
# asked for ("auto" fixed centres are uniform ones).
falkon_landmarks_taken <- function(m, landmarks, out) {
  if (is.matrix(m)) "given" else if (!is.null(out$landmarks)) out$landmarks
  else if (landmarks == "auto") "uniform" else landmarks
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

# One constructor for the fitted class; landmarks: the rule that chose the centres
# (falkon_landmarks_taken()), known at the entry.
new_falkon <- function(out, resp, loss, scaling, input, n, weights, landmarks) {
  alpha <- out$alpha
  colnames(alpha) <- if (resp$type == "regression") NULL
                     else if (ncol(alpha) == 1L) resp$levels[2L] else resp$levels
  structure(list(alpha = alpha, offset = out$offset, centres = out$prep$centres,
                 kernel = out$prep$kernel, m = out$prep$m, lambda = out$lambda,
                 iter = out$iter, newton_steps = out$steps, loss = loss, type = resp$type,
                 levels = resp$levels, validation = out$validation,
                 centres_path = out$centres_path, landmarks = landmarks,
                 calibration = out$calibration,
                 precision = if (is.null(out$precision)) "double" else out$precision,
                 n_train = out$n_train, n = n, case_weights = weights,
                 scaling = scaling, input = input),
            class = bochner_fit_class("falkon"))
}
