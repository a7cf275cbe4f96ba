#' Support vector machines on random features
#'
#' Trains a linear support vector machine in the primal on random features
#' of the data: with \eqn{D} features, \eqn{z(x) \cdot z(y) \approx k(x, y)},
#' so a linear SVM on \eqn{z(x)} approximates the kernel SVM, at
#' \eqn{O(n D)} cost per pass instead of the \eqn{n \times n} Gram matrix.
#'
#' **The problem.**  For two classes with labels \eqn{y_i = \pm 1} (the first
#' level of `y` is \eqn{+1}), features \eqn{z_i = z(x_i)} augmented with a
#' constant 1 for the intercept, and weights \eqn{w} (whose last entry is the
#' intercept \eqn{b}), the solver minimises
#' \deqn{\frac12 \|w\|^2 + \sum_i C_i \, \ell(1 - y_i\, w \cdot (z_i, 1))}{1/2 ||w||^2 + sum_i C_i l(1 - y_i w.(z_i, 1))}
#' with \eqn{\ell(t) = \max(0, t)} (`loss = "hinge"`) or
#' \eqn{\max(0, t)^2} (`loss = "squared_hinge"`).  As in LIBLINEAR (with its
#' bias option `-B 1`) the intercept is regularised with the weights.
#' \eqn{C_i} is `cost`, times the weight of the sample's class from
#' `class.weights`, times its case weight from `weights`.
#'
#' **More than two classes.**  `multiclass = "ovo"` (the default, the
#' strategy of libsvm and `kernlab::ksvm()`) solves one binary problem per
#' pair of classes on the rows of those two classes, each class at its
#' class weight; a point goes to the class that wins most pairs (ties to the
#' first class).  `multiclass = "ovr"` (LIBLINEAR's) separates each class
#' from all the rest, the class's own samples costing `cost` times its
#' weight and all others `cost`; a point goes to the class with the largest
#' decision value.  One-vs-one is the default because, on the benchmarks of
#' `bench/suites/machines.R`, it is as accurate as the exact kernel SVM where
#' one-vs-rest loses a point or more, and its pair problems are small, so it
#' is also faster.  All binary problems (and those of the cross-validation
#' below) are solved in parallel, one per thread; the fit does not depend on
#' the number of threads.
#'
#' **Probabilities and cross-validation.**  Every fit gives class
#' probabilities, `predict(type = "prob")`: a sigmoid
#' \eqn{1 / (1 + \exp(A f + B))} of each binary problem's decision value
#' \eqn{f} (Platt scaling, with the Newton method of Lin, Lin and Weng),
#' pairs combined by the pairwise coupling of Wu, Lin and Weng (libsvm's)
#' and one-vs-rest sigmoids normalised to sum to one.  By default the
#' sigmoids are fitted to the training rows' decision values (all of them
#' up to 50 000 rows, an even spread of 50 000 beyond), which costs
#' nothing more.  With `probability = TRUE`, as libsvm and
#' `ksvm(prob.model = TRUE)` do, the binary problems are also solved on 5
#' stratified folds (or `cross` folds) and the sigmoids fitted to the
#' held-out decision values, for 1.4 to 3.9 times the fit's time (with
#' `cross = k` alone, the sigmoids are fitted to those folds' held-out
#' values, which the fit computes anyway).  At the
#' default cost the two are close: on the bench's seven classification sets
#' the training values' test log-loss is within 0-9 % of the folds' (Shuttle
#' 0.016 against 0.012), below `ksvm(prob.model = TRUE)`'s on five; with a
#' large cost the training values are too confident (at `cost = 100`, 15-71
#' % above the folds'), and `probability = TRUE` is the better choice
#' (`bench/investigations/svm-probabilities.md`).  With `cross = k` the
#' fit reports the accuracy of the \eqn{k}-fold cross-validation
#' (`cross_accuracy`), from the same folds.  Both cost about
#' \eqn{k - 1} more fits, solved in the same parallel call, on features
#' computed once.
#'
#' **The solver** is dual coordinate descent (Hsieh et al. 2008, the method
#' of LIBLINEAR), in C: each step updates one dual variable in closed form
#' from one sample's features, in a random order per pass (from a generator
#' seeded from R's, so `set.seed()` reproduces the fit), with shrinking of
#' variables stuck at a bound.  It stops when the projected gradients over
#' all samples spread by at most `tol` (LIBLINEAR's criterion; its
#' default is 0.1), or after `max_iter` passes with a warning.  For the
#' squared hinge, when 100 passes (or `max_iter`, if fewer) have not met
#' the tolerance, as at large costs, Newton's method on the primal takes
#' over from the dual's weights (conjugate gradients on the Hessian, an
#' exact line search): its number of steps does not grow with `cost` as the
#' dual's passes do.  It stops when the gradient's norm falls below
#' `tol * 1e-6` times its value at zero, or after `max_iter` more
#' (Newton) steps with a warning.
#'
#' **Scaling and bandwidth.**  With `scale = TRUE` each column is centred
#' and divided by its standard deviation (constant columns are only centred)
#' before the features are computed, and new data gets the same
#' transformation at prediction.  A bandwidth rule (`sigma = "sigest"` or
#' `"median"`) is then resolved on the scaled data.  The default kernel is
#' the Gaussian with `sigma = "sigest"`, kernlab's automatic choice (see
#' [gaussian_kernel()]): on nine `mlbench` classification sets
#' (`bench/investigations/bandwidth.R`, `bench/investigations/bandwidth.md`) it is 2.6 points more
#' accurate on average than the median heuristic at the default cost (up
#' to 14 points on Vowel), because the median's wider kernel needs a larger
#' cost.  Note that kernlab's and scikit-learn's parameters are inverse
#' widths: `kernlab::rbfdot(sigma = s)` is `gaussian_kernel(1 / sqrt(2 * s))`
#' here, and scikit-learn's and e1071's `gamma = g` is
#' `gaussian_kernel(1 / sqrt(2 * g))`.
#'
#' **How many features.**  By default `D` is chosen from the data: as many
#' features as make one pass of the solver over all its binary problems
#' touch about \eqn{2^{26}} feature entries (the rows summed over the
#' problems: \eqn{n} for two classes, \eqn{(k - 1) n} one-vs-one,
#' \eqn{k n} one-vs-rest), a multiple of 256 between 1024 and 8192.  Two
#' classes get 8192 features up to 8192 rows and 1024 from 65 536 rows on.
#' The more features, the closer the fit comes to the exact kernel SVM, and
#' on small sets they cost little: on `mlbench`'s DNA (2230 training rows,
#' 180 inputs, 3 classes) 8192 features against 1024 raise the test
#' accuracy from 0.933 to 0.958 and lower the log-loss of the
#' probabilities from 0.185 to 0.143, where `ksvm(prob.model = TRUE)`
#' gives 0.956 and 0.136 (`bench/investigations/svm-features.md`).
#'
#' **Memory.**  The features are held once, transposed (one sample's `D`
#' features contiguous): \eqn{8 n D} bytes.  With the default `D` that is
#' at most 512 MB up to 65 536 rows (two classes; fewer with more classes),
#' and beyond, at its least `D` = 1024, 8 KB a row: 800 MB at
#' \eqn{n = 10^5}, 8 GB at \eqn{10^6}.  A fit on [data_chunks()] holds one
#' chunk's features at a time.
#'
#' @param x Training data: a numeric matrix, a data frame of numeric
#'   columns, a numeric vector (one column), or a sparse `dgCMatrix` (see
#'   [sparse_input]).  No missing or infinite values (the formula method,
#'   with `formula = Species ~ .` and `data`, drops incomplete rows; see
#'   [formula_interface]).
#' @param y The classes, one per row of `x`: a factor, or a character,
#'   logical or whole-number vector (turned into a factor); at least two
#'   classes, no missing values.  Unused factor levels are dropped.
#' @param kernel A kernel object with a random feature map (see
#'   [random_features()]); the default is [gaussian_kernel()] with kernlab's
#'   `sigest` rule for the bandwidth (see Details).
#' @param D Number of random features (frequencies; the pair map has
#'   twice as many features).  `NULL`, the default, chooses it from the
#'   rows and classes, between 1024 and 8192 features (see Details).
#' @param cost The cost \eqn{C} of a unit of loss, a positive number; larger
#'   values fit the training data more closely.
#' @param loss `"hinge"` (the classic SVM) or `"squared_hinge"`.
#' @param multiclass With more than two classes, `"ovo"` (one-vs-one, the
#'   default) or `"ovr"` (one-vs-rest); see Details.
#' @param probability Cross-validate the calibration for
#'   `predict(type = "prob")` (5 folds, as libsvm); without it the
#'   sigmoids are fitted to the training decision values.  See Details.
#' @param cross `0`, or a number of folds \eqn{k \ge 2} for a
#'   cross-validated accuracy (`cross_accuracy`, the fraction of held-out
#'   rows classified correctly, as [rff_tune()] reports it; kernlab's
#'   `cross()` is the error, one minus it), see Details.
#' @param weights `NULL`, or non-negative case weights, one per row of `x`:
#'   a row's loss counts `weights` times.  The standardisation takes the
#'   weighted means and standard deviations, and it and the bandwidth rule
#'   leave out the rows of weight zero, so that zero drops a row.  An
#'   integer weight is the same problem as repeating the row at a given
#'   `sigma` with `scale = FALSE` (with `scale = TRUE` the standard
#'   deviations' \eqn{n - 1} counts the rows given).
#' @param scale Standardise the columns of `x` first, see Details.  Must be
#'   `FALSE` for [min_kernel()], which needs non-negative inputs.
#' @param class.weights `NULL`, or positive weights named by class that
#'   multiply `cost` for the samples of that class (classes not named get 1).
#' @param tol Stopping tolerance on the projected gradient, see Details
#'   (formerly `epsilon`, the name e1071 and kernlab give the
#'   epsilon-insensitive loss of a regression).
#' @param max_iter Maximum number of passes over the data per binary problem
#'   (for the squared hinge, also of Newton steps after them; see Details).
#' @param shrinking Use shrinking (it changes the path, not the solution).
#' @param map A feature map fitted beforehand, by [random_features()] (any
#'   kernel, `type` or `sampling`) or [nystrom_features()], to use instead of
#'   drawing one from `kernel` and `D`.  It is applied to `x` as given, so
#'   `scale` is then `FALSE`: fit the map on standardised data if you want
#'   them.
#' @param seed `NULL` to use the current random number stream, or a number to
#'   draw from `set.seed(seed)` and leave the user's stream as it was.
#' @param nthreads Number of threads for the features, see
#'   [bochner_threads()].  The fit does not depend on it.
#' @param ... For the default method, construction arguments of the
#'   feature map passed to [random_features()]: `type`, `sampling` (e.g.
#'   `"orthogonal"`) or `method` (e.g. `"tensorsketch"` for a polynomial
#'   kernel).  Passed from the formula method to the default method.
#'   Anything else is refused, kernlab's and e1071's names (`C`, `kpar`,
#'   `sigma`, `gamma`, `prob.model`) with a message naming what to write
#'   here instead (for the SVM `cost`, `kernel = gaussian_kernel(sigma = )`
#'   and `probability`).
#' @return An object of class `"rff_svm"`: a list with `weights` (a
#'   `n_features` \eqn{\times m} matrix, one column of feature weights per
#'   class for one-vs-rest and two classes, per pair for one-vs-one) and
#'   `intercept` (one per column), so that the decision values are
#'   `Z %*% weights + intercept`; for two classes the second column is the
#'   negated first.  Also `levels` (the classes), `fitted` (the predicted
#'   class of each training row), `accuracy` (on the training data), `iter`
#'   and `converged` (per binary problem), `n_sv` (support vectors per binary
#'   problem: samples with a non-zero dual variable), the `map` (a
#'   [random_features()] object, sigma resolved), `multiclass` (`"binary"`,
#'   `"ovo"` or `"ovr"`) and `pairs` (for one-vs-one, the classes of each
#'   pair, first the positive one), `calibration` (the sigmoids, with their
#'   `source`: `"training"` or `"cross-validation"`), `cross_accuracy` when
#'   asked for, `scaling` (the centre and
#'   scale, or `NULL`), the settings, and `input` (the columns, and for the
#'   formula method its terms and factor levels).
#' @references Wu, T.-F., Lin, C.-J. and Weng, R. C. (2004). Probability
#'   estimates for multi-class classification by pairwise coupling. *Journal
#'   of Machine Learning Research* 5, 975--1005.
#'
#'   Lin, H.-T., Lin, C.-J. and Weng, R. C. (2007). A note on Platt's
#'   probabilistic outputs for support vector machines. *Machine Learning*
#'   68, 267--276.
#'
#'   Hsieh, C.-J., Chang, K.-W., Lin, C.-J., Keerthi, S. S. and
#'   Sundararajan, S. (2008). A dual coordinate descent method for
#'   large-scale linear SVM. *Proceedings of the 25th International
#'   Conference on Machine Learning*, 408--415.
#'
#'   Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel
#'   machines. *Advances in Neural Information Processing Systems 20*.
#' @seealso [predict.rff_svm()], [rff_ridge()], [random_features()].
#' @examples
#' # two concentric rings, which no linear classifier separates
#' set.seed(1)
#' n <- 300
#' angle <- runif(2 * n, 0, 2 * pi)
#' radius <- rep(c(1, 3), each = n) + rnorm(2 * n, sd = 0.2)
#' rings <- cbind(a = radius * cos(angle), b = radius * sin(angle))
#' ring <- factor(rep(c("inner", "outer"), each = n))
#' fit <- rff_svm(rings, ring, D = 256)
#' fit
#' predict(fit, rbind(c(0, 1), c(3, 0)))
#'
#' # three classes through a formula, one-vs-one, with probabilities
#' fit2 <- rff_svm(Species ~ ., data = iris, D = 256, seed = 1, probability = TRUE)
#' table(iris$Species, fitted(fit2))
#' head(predict(fit2, iris, type = "decision"))
#' round(predict(fit2, iris[c(1, 51, 101), ], type = "prob"), 3)
#' @md
#' @export
rff_svm <- function(x, ...) UseMethod("rff_svm")

#' @rdname rff_svm
#' @export
rff_svm.default <- function(x, y, kernel = gaussian_kernel("sigest"), D = NULL,
                            cost = 1, loss = c("hinge", "squared_hinge"),
                            multiclass = c("ovo", "ovr"), probability = FALSE, cross = 0,
                            weights = NULL, scale = TRUE, class.weights = NULL, tol = 0.1,
                            max_iter = 1000, shrinking = TRUE, seed = NULL, map = NULL,
                            nthreads = bochner_threads(), ...) {
  map_args <- do.call(rff_map_args, c(renamed_dots(environment(), "rff_svm()", ...),
                                      list(map = map, who = "rff_svm()")))
  scale_given <- !missing(scale)
  x <- as_data_matrix(x, "x", sparse = TRUE)
  y <- rff_class_response(y, nrow(x))
  weights <- check_case_weights(weights, nrow(x))
  # the settings, checked as for data in chunks (svm_check_settings())
  a <- svm_check_settings(kernel, D, cost, loss, multiclass, probability, cross, scale,
                          tol, map)
  cost <- a$cost
  loss <- a$loss
  multiclass <- a$multiclass
  probability <- a$probability
  cross <- a$cross
  tol <- a$tol
  scale <- if (is.null(map)) a$scale else rff_map_scale(map, x, a$scale, scale_given)
  max_iter <- check_count(max_iter, "max_iter")
  shrinking <- check_flag(shrinking, "shrinking")
  nthreads <- check_threads(nthreads)
  lev <- levels(y)
  k <- length(lev)
  if (k == 2L) multiclass <- "binary"
  D <- a$D <- if (!is.null(a$D)) a$D else {
    svm_default_D(nrow(x), k, multiclass, rff_feature_count(1, ncol(x), kernel, NULL, map_args))
  }
  cw <- rff_class_weights(class.weights, lev)
  probs <- svm_problems(as.integer(y), k, multiclass, cost * cw[as.integer(y)] *
                          (if (is.null(weights)) 1 else weights), cost, weights)
  folds <- NULL
  nfolds <- svm_nfolds(probability, cross)
  svm_check_memory(nrow(x), ncol(x), D, rff_feature_count(D, ncol(x), kernel, map, map_args),
                   probs, nfolds)

  input <- input_description(x)
  scaling <- if (scale) rff_scaling(x, weights) else NULL
  xs <- rff_apply_scaling(x, scaling)
  out <- with_seed(seed, {
    if (is.null(map)) map <- rff_build_map(xs, kernel, D, map_args, weights)
    zt <- rff_features_t(map, xs, nthreads)
    # the cross-validation's problems (for 'cross' or the probabilities'
    # held-out decision values) are solved with the fit's, in one call
    if (nfolds > 0L) folds <- svm_folds(y, nfolds)
    all <- svm_with_folds(probs, folds)
    res <- svm_solve(zt, all, list(loss = loss, tol = tol, max_iter = max_iter,
                                   shrinking = shrinking), nthreads)
    cv <- if (!is.null(folds)) svm_heldout_decision(res, probs, folds, zt, nthreads)
    list(map = map, res = res, cv = cv)
  })
  res <- out$res
  main <- seq_len(probs$n)
  fit <- new_rff_svm(res$w[, main, drop = FALSE], out$map, lev, multiclass, probs$pairs, a,
                     cw, max_iter, shrinking, res$iter[main], res$converged[main],
                     svm_support_counts(res$alpha, probs$offsets), nrow(x), scaling, input,
                     case_weights = weights)
  # training decision values from the features already computed
  dec <- rff_decision(fit, xs, nthreads)
  fit$fitted <- svm_classes(fit, dec)
  names(fit$fitted) <- rownames(x)
  fit$accuracy <- mean(fit$fitted == y)
  fit$call <- generic_call(match.call())
  if (cross > 0L) {
    fit$cross <- cross
    fit$cross_accuracy <- mean(svm_classes(fit, out$cv) == y)
  }
  # the folds' held-out decision values where the fit has them (probability,
  # or 'cross' alone), else the training rows'
  fit$calibration <- if (!is.null(out$cv)) {
    svm_calibration(out$cv, y, weights, fit, nfolds)
  } else {
    keep <- calibration_subset(nrow(x))
    svm_calibration(dec[keep, , drop = FALSE], y[keep], weights[keep], fit, 0L)
  }
  svm_warn_convergence(fit, res$converged[main], max_iter, tol)
  fit
}

# Platt's sigmoids of a fit from decision values of its training rows:
# held out by 'nfolds' folds ('source' "cross-validation", with
# probability = TRUE or 'cross'), or with nfolds = 0 the fit's own
# ("training", the default: free, the fit computes them for its fitted
# classes).  On the bench's classification sets at the default cost the
# training values' log-loss is within 0-9 % of five folds' (Shuttle 0.016
# against 0.012); at cost = 100 it is up to 1.7 times
# (bench/investigations/svm-probabilities.md).  Binary fits calibrate the
# one decision value that predict() passes.
svm_calibration <- function(dec, y, weights, fit, nfolds) {
  if (fit$k == 2L) dec <- dec[, 1L, drop = FALSE]
  cal <- calibrate_scores(dec, y, weights, pairs = if (fit$multiclass == "ovo") fit$pairs,
                          source = if (nfolds > 0L) "cross-validation" else "training")
  cal$folds <- nfolds
  cal
}

# The folds whose held-out decision values Platt scaling fits (more with
# 'cross'), and the folds a fit solves: libsvm's five (2 folds cost half as
# much, at up to 7 % more log-loss: bench/investigations/svm-probabilities.md).
svm_probability_folds <- 5L
svm_nfolds <- function(probability, cross) {
  if (probability) max(cross, svm_probability_folds) else cross
}

# What a fit holds at its peak, refused before anything is allocated when
# it exceeds the memory available (check_memory(), R/checks.R): the
# transposed features, the weights and dual variables of every problem
# (the folds' too), the decision values and the frequencies.
svm_check_memory <- function(n, d, D, nf, probs, nfolds) {
  problems <- probs$n * (1 + nfolds)
  check_memory(list("the transposed feature matrix" = c(nf, n),
                    "the weights" = c(nf + 1, problems),
                    "the solver's state" = c(length(probs$rows) * max(1, nfolds), 3),
                    "the decision values" = c(n, 2 * problems),
                    "the frequencies" = c(d + 1, D)),
               "rff_svm()", "D")
}

#' @rdname formula_interface
#' @export
rff_svm.formula <- function(formula, data = NULL, ..., subset, weights,
                            na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), rff_svm.default, na.action, ...,
              chunked = rff_svm.data_chunks,
              response = "class ~ a + b")
}

#' Predict with a random-feature SVM
#'
#' @param object A fit from [rff_svm()].
#' @param newdata Data with the columns the model was fitted on (matched by
#'   name where both have names), or a data frame with the formula's
#'   variables for a fit with a formula; extra columns are ignored.
#'   Without `newdata` (or with `NULL`), the fitted classes of the training
#'   data.
#' @param type `"class"` for the predicted classes, `"decision"` for the
#'   decision values \eqn{w_c \cdot z(x) + b_c}, one column per class (for
#'   two classes the second column is the negated first) or, for
#'   one-vs-one, per pair (named `"a/b"`, positive for `a`), or `"prob"` for
#'   the class probabilities (see [rff_svm()], Details).
#' @param na.action What to do with rows of `newdata` with missing values:
#'   [na.pass()] (the default) and [na.exclude()] predict `NA` for them,
#'   [na.omit()] leaves them out, [na.fail()] refuses them.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A factor with the training levels, or a numeric matrix with one
#'   row per row of `newdata` (probabilities: one column per class, rows
#'   summing to 1; none for a `newdata` with no rows).
#' @examples
#' fit <- rff_svm(Species ~ Petal.Length + Petal.Width, data = iris, D = 128, seed = 1)
#' predict(fit, iris[c(1, 51, 101), ])
#' predict(fit, iris[c(1, 51, 101), ], type = "decision")
#' @md
#' @export
predict.rff_svm <- function(object, newdata, type = c("class", "decision", "prob"),
                            na.action = stats::na.pass, nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, type = type, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(..., .who = "predict()")
  type <- fit_predict_type(object, type, c("class", "decision", "prob"),
                           # a fit saved by a version without default calibration
                           if (is.null(object$calibration)) {
                             "a calibration: refit with this version of bochner"
                           })
  if (missing(newdata) || is.null(newdata)) {
    return(fit_training_predictions(object, type, "class"))
  }
  dec <- rff_new_decision(object, newdata, nthreads, na.action)
  colnames(dec) <- svm_problem_names(object)
  switch(type,
         decision = dec,
         class = rff_complete_rows(dec, function(d) svm_classes(object, d)),
         prob = rff_complete_rows(dec, function(d) {
           calibrated_probabilities(object$calibration,
                                    if (object$k == 2L) d[, 1L, drop = FALSE] else d)
         }))
}

fit_description.rff_svm <- function(x) {
  kern <- kernel_summary(x$kernel)
  c(sprintf("Support vector machine on %d random features (%s loss, cost = %s), %d classes%s",
            x$n_features, if (x$loss == "hinge") "hinge" else "squared hinge",
            format(x$cost), x$k,
            switch(x$multiclass, binary = "", ovr = " (one-vs-rest)", ovo = " (one-vs-one)")),
    paste0("  ", kern, if (!is.null(x$scaling)) "; inputs standardised" else ""),
    sprintf("  classes: %s", paste(x$levels, collapse = ", ")),
    sprintf("  training accuracy %.4f on %d rows; solver passes %s%s",
            x$accuracy, x$n, paste(x$iter, collapse = ", "),
            if (all(x$converged)) "" else " (did not converge)"),
    if (!is.null(x$cross)) {
      sprintf("  %d-fold cross-validation accuracy %.4f", x$cross, x$cross_accuracy)
    },
    if (identical(x$calibration$source, "training")) {
      "  class probabilities: Platt scaling on the training decision values"
    } else if (!is.null(x$calibration)) {
      # (a fit saved before calibrations held their fold count had probability = TRUE)
      folds <- if (is.null(x$calibration$folds)) {
        svm_nfolds(TRUE, if (is.null(x$cross)) 0L else x$cross)
      } else x$calibration$folds
      sprintf("  class probabilities: Platt scaling on %d-fold decision values", folds)
    })
}

#' @export
summary.rff_svm <- function(object, ...) {
  nprob <- length(object$iter)
  problems <- data.frame(
    problem = switch(object$multiclass,
                     binary = paste(object$levels, collapse = " vs "),
                     ovr = paste(object$levels, "vs rest"),
                     ovo = sub("/", " vs ", svm_problem_names(object), fixed = TRUE)),
    passes = object$iter, converged = object$converged, support_vectors = object$n_sv,
    stringsAsFactors = FALSE)
  rownames(problems) <- NULL
  tab <- table(fitted = object$fitted)
  structure(list(description = fit_description(object), problems = problems[seq_len(nprob), ],
                 fitted_counts = tab, accuracy = object$accuracy,
                 class.weights = object$class.weights, tol = object$tol),
            class = "summary.rff_svm")
}

#' @export
print.summary.rff_svm <- function(x, ...) {
  cat(x$description, sep = "\n")
  cat(sprintf("\nBinary problems (tolerance tol = %g):\n", x$tol))
  print(x$problems, row.names = FALSE)
  if (any(x$class.weights != 1)) {
    cat("\nClass weights:\n")
    print(x$class.weights)
  }
  cat("\nPredicted classes of the training data:\n")
  print(x$fitted_counts)
  invisible(x)
}
