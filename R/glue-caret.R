# caret: a custom model list, caret::train(x, y, method = rff_svm_caret).

#' A caret model for random-feature SVMs and ridge regression
#'
#' `rff_svm_caret` is a caret model-information list: pass it as `method`
#' to `caret::train()` to tune [rff_svm()] (classification) or
#' [rff_ridge()] (regression) with caret's resampling.
#'
#' The tuning parameters follow caret's `"svmRadial"` (kernlab), so that its
#' grids carry over:
#' * `sigma`: kernlab's inverse width, \eqn{k(x, y) = \exp(-\mathrm{sigma}\,
#'   \|x - y\|^2)}{k(x, y) = exp(-sigma ||x - y||^2)}; bochner's length scale
#'   is \eqn{1/\sqrt{2\,\mathrm{sigma}}}{1 / sqrt(2 sigma)} (see
#'   [gaussian_kernel()]).
#' * `C`: the cost; for regression ridge's penalty is \eqn{\lambda = 1/(2Cn)}
#'   on \eqn{n} training rows (the SVM's objective divided by \eqn{Cn}).
#' * `D`: the number of random features.
#'
#' The default grid (`tuneLength = len`) has `C` = 0.25, 0.5, 1, ... (`len`
#' values, as `"svmRadial"`), the `D` of a plain call ([rff_svm()]'s
#' chosen from the rows and classes, [rff_ridge()]'s 1024) and one
#' `sigma`: the bandwidth of
#' the default kernel of the machine being tuned, resolved on the
#' standardised data as that machine resolves it, so that caret starts
#' where a plain call would.  For classes that is [rff_svm()]'s
#' `gaussian_kernel("sigest")` (kernlab's `sigest` rule, which `"svmRadial"`
#' uses too), for a numeric response [rff_ridge()]'s
#' `gaussian_kernel("median")` (the median heuristic); a length scale
#' \eqn{s} is kernlab's \eqn{\mathrm{sigma} = 1/(2 s^2)}{sigma = 1 / (2 s^2)}.
#' For the SVM sigest's narrower kernel is the better start at moderate
#' costs (`bench/investigations/bandwidth.md`: 84.8 % mean test accuracy over nine
#' `mlbench` sets at cost 1, against 82.1 % for the median).  `search = "random"` draws `C` and `sigma`
#' log-uniformly around those.  With `trControl = caret::trainControl(classProbs = TRUE)`
#' the SVM is fitted with probabilities when [rff_svm()] offers them
#' (`probability = TRUE`), for `predict(fit, type = "prob")` and ROC
#' summaries.  Further arguments of `train()` (e.g. `seed`, `scale`,
#' `loss`) go to [rff_svm()] or [rff_ridge()].  caret's own preprocessing
#' is not needed: both machines standardise the columns themselves.
#'
#' @format A list with the components caret's `train()` expects (`label`,
#'   `library`, `type`, `parameters`, `grid`, `fit`, `predict`, `prob`,
#'   `sort`, `levels`, `tags`).
#' @examples
#' # the parts caret::train() calls, without loading caret: the default grid
#' # (sigma from rff_svm()'s sigest rule), a fit at one row, its predictions
#' x <- as.matrix(iris[, 1:4])
#' grid <- rff_svm_caret$grid(x, iris$Species, len = 3)
#' grid
#' fit <- rff_svm_caret$fit(x, iris$Species, NULL, transform(grid[3, ], D = 128),
#'                          levels(iris$Species), last = TRUE, classProbs = FALSE, seed = 1)
#' table(rff_svm_caret$predict(fit, x), iris$Species)
#' \donttest{
#' # through caret (loading caret alone takes about two seconds)
#' if (requireNamespace("caret", quietly = TRUE)) {
#'   set.seed(1)
#'   tuned <- caret::train(iris[, 1:4], iris$Species, method = rff_svm_caret,
#'                         tuneGrid = expand.grid(C = c(0.5, 2), sigma = 0.2, D = 64),
#'                         trControl = caret::trainControl(method = "cv", number = 2))
#'   tuned$bestTune
#' }
#' }
#' @export
rff_svm_caret <- list(
  label = "Random Fourier Feature SVM / Ridge (bochner)",
  library = "bochner",
  type = c("Classification", "Regression"),
  loop = NULL,
  parameters = data.frame(parameter = c("sigma", "C", "D"),
                          class = c("numeric", "numeric", "numeric"),
                          label = c("Sigma (kernlab's inverse width)", "Cost",
                                    "Random Features")),
  grid = function(x, y, len = NULL, search = "grid") {
    sigma <- caret_default_sigma(x, y)
    D <- caret_default_D(x, y)
    if (search == "grid") {
      expand.grid(sigma = sigma, C = 2^((seq_len(len)) - 3), D = D)
    } else {
      data.frame(sigma = exp(stats::runif(len, log(sigma / 10), log(sigma * 10))),
                 C = 2^stats::runif(len, -5, 8), D = D)
    }
  },
  fit = function(x, y, wts, param, lev, last, classProbs, ...) {
    if (!is.data.frame(x) && !is_sparse_matrix(x)) x <- as.matrix(x)
    kernel <- gaussian_kernel(sigma = 1 / sqrt(2 * param$sigma))
    D <- as.integer(param$D)
    if (is.factor(y)) {
      args <- list(x = x, y = y, kernel = kernel, D = D, cost = param$C, ...)
      if (isTRUE(classProbs) && is.null(args$probability) &&
          "probability" %in% names(formals(rff_svm.default))) {
        args$probability <- TRUE
      }
      do.call(rff_svm.default, args)
    } else {
      rff_ridge.default(x, y, kernel = kernel, D = D, lambda = 1 / (2 * param$C * NROW(x)), ...)
    }
  },
  predict = function(modelFit, newdata, submodels = NULL) {
    out <- stats::predict(modelFit, caret_newdata(newdata))
    if (is.factor(out)) as.character(out) else unname(out)
  },
  prob = function(modelFit, newdata, submodels = NULL) {
    p <- stats::predict(modelFit, caret_newdata(newdata), type = "prob")
    rownames(p) <- NULL
    as.data.frame(p)
  },
  sort = function(x) x[order(x$C, x$D, -x$sigma), , drop = FALSE],
  levels = function(x) x$levels,
  tags = c("Kernel Method", "Support Vector Machines", "Radial Basis Function",
           "Random Features", "Linear Classifier", "Ridge Regression")
)

# caret hands new data as a data frame or matrix: either works; a data frame
# of numeric columns is matched by name.
caret_newdata <- function(newdata) {
  if (is.data.frame(newdata) || is_sparse_matrix(newdata)) newdata else as.matrix(newdata)
}

# kernlab's inverse width of the default kernel of the machine that fit()
# calls (rff_svm()'s for classes, rff_ridge()'s for numbers), resolved on
# the standardised rows as that machine resolves it: the grid starts where
# a plain call of the machine would.
# The D a plain call would use: rff_svm()'s from the rows and classes
# (one-vs-one), rff_ridge()'s 1024.
caret_default_D <- function(x, y, ridge = rff_ridge.default) {
  if (!is.factor(y)) return(eval(formals(ridge)$D))
  k <- nlevels(droplevels(y))
  svm_default_D(NROW(x), k, if (k == 2L) "binary" else "ovo")
}

caret_default_sigma <- function(x, y, machine = if (is.factor(y)) rff_svm.default
                                                else rff_ridge.default) {
  kernel <- eval(formals(machine)$kernel)
  x <- as_data_matrix(x, "x", sparse = TRUE)
  kernel <- resolve_kernel(kernel, rff_apply_scaling(x, rff_scaling(x)))
  1 / (2 * kernel$sigma^2)
}
