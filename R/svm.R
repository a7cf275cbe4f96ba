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
#' `class.weights`.  With more than two classes, one binary problem per class
#' separates it from the rest (one-vs-rest); as in LIBLINEAR, the class's own
#' samples then cost `cost` times its weight and all others `cost`.  A point
#' goes to the class with the largest decision value.  These binary problems
#' are solved in parallel, one per thread (a two-class problem is one
#' sequential solve; its features are computed on all threads).
#'
#' **The solver** is dual coordinate descent (Hsieh et al. 2008, the method
#' of LIBLINEAR), in C: each step updates one dual variable in closed form
#' from one sample's features, in a random order per pass (from a generator
#' seeded from R's, so `set.seed()` reproduces the fit), with shrinking of
#' variables stuck at a bound.  It stops when the projected gradients over
#' all samples spread by at most `epsilon` (LIBLINEAR's criterion; its
#' default is 0.1), or after `max_iter` passes with a warning.
#'
#' **Scaling and bandwidth.**  With `scale = TRUE` each column is centred
#' and divided by its standard deviation (constant columns are only centred)
#' before the features are computed, and new data gets the same
#' transformation at prediction.  `sigma = "median"` is then resolved on the
#' scaled data.
#'
#' **Memory.**  The features are held once, transposed (one sample's `D`
#' features contiguous): \eqn{8 n D} bytes, 400 MB for \eqn{n = 50\,000}
#' and \eqn{D = 1024}.
#'
#' @param x Training data: a numeric matrix, a data frame of numeric
#'   columns, a numeric vector (one column), or, for the formula method, a
#'   formula such as `Species ~ .` with `data` (factors among the predictors
#'   are one-hot coded).  No missing or infinite values.
#' @param y The classes, one per row of `x`: a factor, or a character,
#'   logical or whole-number vector (turned into a factor); at least two
#'   classes, no missing values.  Unused factor levels are dropped.
#' @param kernel A kernel object with a random feature map (see
#'   [random_features()]); the default is [gaussian_kernel()] with the median
#'   heuristic.
#' @param D Number of random features.  The default, 1024, gets within a
#'   point of the exact Gaussian-kernel SVM in our measurements: on
#'   `kernlab::spam` (3000 training rows) 92.8 % test accuracy against
#'   92.8 % for `kernlab::ksvm()`, in about half its time.
#' @param cost The cost \eqn{C} of a unit of loss, a positive number; larger
#'   values fit the training data more closely.
#' @param loss `"hinge"` (the classic SVM) or `"squared_hinge"`.
#' @param scale Standardise the columns of `x` first, see Details.  Must be
#'   `FALSE` for [min_kernel()], which needs non-negative inputs.
#' @param class.weights `NULL`, or positive weights named by class that
#'   multiply `cost` for the samples of that class (classes not named get 1).
#' @param epsilon Stopping tolerance on the projected gradient, see Details.
#' @param max_iter Maximum number of passes over the data per binary problem.
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
#' @param data A data frame, for the formula method.
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `"rff_svm"`: a list with `weights` (a
#'   `n_features` \eqn{\times k} matrix, one column of feature weights per
#'   class) and `intercept` (one per class), so that the decision values are
#'   `Z %*% weights + intercept`; for two classes the second column is the
#'   negated first.  Also `levels` (the classes), `fitted` (the predicted
#'   class of each training row), `accuracy` (on the training data), `iter`
#'   and `converged` (per binary problem), `n_sv` (support vectors per binary
#'   problem: samples with a non-zero dual variable), the `map` (a
#'   [random_features()] object, sigma resolved), `scaling` (the centre and
#'   scale, or `NULL`), the settings, and `input` (the columns, and for the
#'   formula method its terms and factor levels).
#' @references Hsieh, C.-J., Chang, K.-W., Lin, C.-J., Keerthi, S. S. and
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
#' # three classes through a formula
#' fit2 <- rff_svm(Species ~ ., data = iris, D = 256, seed = 1)
#' table(iris$Species, fitted(fit2))
#' head(predict(fit2, iris, type = "decision"))
#' @md
#' @export
rff_svm <- function(x, ...) UseMethod("rff_svm")

#' @rdname rff_svm
#' @export
rff_svm.default <- function(x, y, kernel = gaussian_kernel("median"), D = 1024,
                            cost = 1, loss = c("hinge", "squared_hinge"), scale = TRUE,
                            class.weights = NULL, epsilon = 0.1, max_iter = 1000,
                            shrinking = TRUE, seed = NULL, map = NULL,
                            nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  scale_given <- !missing(scale)
  x <- as_data_matrix(x, "x")
  y <- rff_class_response(y, nrow(x))
  check_kernel(kernel)
  D <- check_count(D, "D")
  cost <- check_positive(cost, "cost")
  loss <- check_choice(loss, c("hinge", "squared_hinge"), "loss")
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  if (!is.null(map)) {
    scale <- rff_map_scale(map, x, scale, scale_given)
    D <- map_size(map)
  }
  epsilon <- check_positive(epsilon, "epsilon")
  max_iter <- check_count(max_iter, "max_iter")
  shrinking <- check_flag(shrinking, "shrinking")
  nthreads <- check_threads(nthreads)
  lev <- levels(y)
  k <- length(lev)
  cw <- rff_class_weights(class.weights, lev)
  costs <- if (k == 2L) list(cp = cost * cw[1L], cn = cost * cw[2L])
           else list(cp = cost * cw, cn = rep(cost, k))

  input <- input_description(x)
  scaling <- if (scale) rff_scaling(x) else NULL
  xs <- rff_apply_scaling(x, scaling)
  out <- with_seed(seed, {
    if (is.null(map)) map <- rff_build_map(xs, kernel, D)
    zt <- rff_features_t(map, xs, nthreads)
    res <- .Call(C_svm_dcd, zt, as.integer(y), k, as.double(costs$cp), as.double(costs$cn),
                 if (loss == "hinge") 1L else 2L, 1, epsilon, max_iter, shrinking, nthreads)
    list(map = map, res = res, zt = zt)
  })
  res <- out$res
  nf <- out$map$n_features
  W <- res$w
  if (k == 2L) W <- cbind(W, -W)
  fit <- structure(list(weights = W[seq_len(nf), , drop = FALSE],
                        intercept = stats::setNames(W[nf + 1L, ], lev),
                        levels = lev, k = k, kernel = out$map$kernel, D = D,
                        n_features = nf, cost = cost, loss = loss,
                        class.weights = cw, epsilon = epsilon, max_iter = max_iter,
                        shrinking = shrinking, iter = res$iter, converged = res$converged,
                        n_sv = colSums(res$alpha > 0), n = nrow(x),
                        map = out$map, scaling = scaling, input = input),
                   class = "rff_svm")
  colnames(fit$weights) <- lev
  # training decision values from the features already computed
  dec <- rff_decision(fit, xs, nthreads)
  out$zt <- NULL
  fit$fitted <- rff_decision_classes(dec, lev)
  names(fit$fitted) <- rownames(x)
  fit$accuracy <- mean(fit$fitted == y)
  if (!all(res$converged)) {
    warning(sprintf(paste0("rff_svm: the solver reached max_iter = %d passes before the ",
                           "tolerance epsilon = %g%s; increase 'max_iter' or 'epsilon', ",
                           "or lower 'cost'"),
                    max_iter, epsilon,
                    if (k > 2L) sprintf(" (classes %s)", paste(lev[!res$converged], collapse = ", "))
                    else ""), call. = FALSE)
  }
  fit
}

#' @rdname rff_svm
#' @export
rff_svm.formula <- function(x, data = NULL, ...) {
  fit_formula(x, data, rff_svm.default, response = "class ~ a + b", ...)
}

#' Predict with a random-feature SVM
#'
#' @param object A fit from [rff_svm()].
#' @param newdata Data with the columns the model was fitted on (matched by
#'   name where both have names), or a data frame with the formula's
#'   variables for a fit with a formula.  Without `newdata`, the fitted
#'   classes of the training data.
#' @param type `"class"` for the predicted classes, or `"decision"` for the
#'   decision values \eqn{w_c \cdot z(x) + b_c}, one column per class (for
#'   two classes the second column is the negated first).
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A factor with the training levels, or a numeric matrix with one
#'   row per row of `newdata` and one column per class.
#' @examples
#' fit <- rff_svm(Species ~ Petal.Length + Petal.Width, data = iris, D = 128, seed = 1)
#' predict(fit, iris[c(1, 51, 101), ])
#' predict(fit, iris[c(1, 51, 101), ], type = "decision")
#' @md
#' @export
predict.rff_svm <- function(object, newdata, type = c("class", "decision"),
                            nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, type = type, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(...)
  type <- check_choice(type, c("class", "decision"), "type")
  if (missing(newdata)) {
    if (type == "class") return(object$fitted)
    stop_arg("newdata", "is required for type = \"decision\"")
  }
  dec <- rff_new_decision(object, newdata, nthreads)
  colnames(dec) <- object$levels
  if (type == "decision") return(dec)
  rff_decision_classes(dec, object$levels)
}

#' @rdname predict.rff_svm
#' @export
fitted.rff_svm <- function(object, ...) object$fitted

rff_svm_description <- function(x) {
  kern <- kernel_summary(x$kernel)
  c(sprintf("Support vector machine on %d random features (%s loss, cost = %s), %d classes%s",
            x$n_features, if (x$loss == "hinge") "hinge" else "squared hinge",
            format(x$cost), x$k, if (x$k > 2L) " (one-vs-rest)" else ""),
    paste0("  ", kern, if (!is.null(x$scaling)) "; inputs standardised" else ""),
    sprintf("  classes: %s", paste(x$levels, collapse = ", ")),
    sprintf("  training accuracy %.4f on %d rows; solver passes %s%s",
            x$accuracy, x$n, paste(x$iter, collapse = ", "),
            if (all(x$converged)) "" else " (did not converge)"))
}

#' @export
print.rff_svm <- function(x, ...) {
  cat(rff_svm_description(x), sep = "\n")
  invisible(x)
}

#' @export
summary.rff_svm <- function(object, ...) {
  nprob <- length(object$iter)
  problems <- data.frame(
    problem = if (object$k == 2L) paste(object$levels, collapse = " vs ")
              else paste(object$levels, "vs rest"),
    passes = object$iter, converged = object$converged, support_vectors = object$n_sv,
    stringsAsFactors = FALSE)
  rownames(problems) <- NULL
  tab <- table(fitted = object$fitted)
  structure(list(description = rff_svm_description(object), problems = problems[seq_len(nprob), ],
                 fitted_counts = tab, accuracy = object$accuracy,
                 class.weights = object$class.weights, epsilon = object$epsilon),
            class = "summary.rff_svm")
}

#' @export
print.summary.rff_svm <- function(x, ...) {
  cat(x$description, sep = "\n")
  cat(sprintf("\nBinary problems (tolerance epsilon = %g):\n", x$epsilon))
  print(x$problems, row.names = FALSE)
  if (any(x$class.weights != 1)) {
    cat("\nClass weights:\n")
    print(x$class.weights)
  }
  cat("\nPredicted classes of the training data:\n")
  print(x$fitted_counts)
  invisible(x)
}
