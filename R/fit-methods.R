#' Formula interface and model-object conventions
#'
#' The fits of bochner follow R's modelling conventions, those of [lm()]
#' and `kernlab::ksvm()`, so that habits carry over.
#'
#' **Formula methods.**  [rff_svm()], [rff_ridge()], [rff_tune()],
#' [kernel_kmeans()], [random_features()] and [nystrom_features()] take a
#' formula as their first
#' argument (`rff_svm(Species ~ ., data = iris)`, or by name, `formula =`).
#' Factors among the predictors are one-hot coded (every level gets a
#' column).  `subset` and `weights` are evaluated in `data` (then in the
#' formula's environment) as in [lm()].  Rows with missing values are
#' dropped by the default `na.action = na.omit`, as in `ksvm()`;
#' `na.exclude` drops them too, and for [rff_svm()] and [rff_ridge()] pads
#' [fitted()], [residuals()] and `predict()` without new data with `NA` in
#' their places; `na.fail` and `na.pass` refuse them, with the row and
#' variable named.
#'
#' **The fitted object** stores its `call`, so [update()] refits with
#' changed arguments (`update(fit, cost = 10)`), and answers [formula()],
#' [terms()], [model.frame()] (rebuilt from the call, as for `lm`) and
#' [nobs()] (the rows it was fitted on).  Fits on a matrix store their call
#' too (so `update()` works), but have no formula or terms.
#'
#' **Prediction.**  `predict(fit, newdata)` matches columns by name (extra
#' named columns, such as the response, are ignored), returns an empty
#' result for a `newdata` with no rows, and the fitted values for
#' `newdata = NULL` or no `newdata`.  Rows of `newdata` with missing values
#' give `NA` under `na.action = na.pass` (the default, as in
#' [predict.lm()]) and `na.exclude`, are left out under `na.omit`, and are
#' an error under `na.fail`.
#'
#' **Factor levels the fit never saw.**  A level of a factor in `newdata`
#' that was absent from the training rows is, by default, an error naming
#' the factor and the level, as in [predict.lm()].  With
#' `options(bochner.unseen_levels = "zero")` such a value is coded as a row
#' of zeros in that factor's dummy columns (and in its interactions), the
#' point lying at no level's corner, which is what `kernlab::ksvm()` and
#' `e1071::svm()` effectively do; so a random split of data with rare
#' levels (`mlbench`'s BreastCancer) predicts.  The option applies to the
#' `predict()` method of every formula fit of the package, also when
#' called by caret or parsnip.
#'
#' @param formula A model formula: two-sided for the machines (`y ~ a + b`,
#'   `y ~ .`), one-sided for k-means and feature maps (`~ a + b`).
#' @param data A data frame (or list or environment) holding the formula's
#'   variables; by default the formula's environment.  Or data in chunks
#'   from [data_chunks()] for [rff_ridge()], [rff_svm()], [falkon()] and
#'   [kernel_kmeans()]: the formula then names columns of every chunk
#'   (`y ~ a + b`, `y ~ .`, `~ a + b`), without transformations,
#'   interactions, `subset` or `weights` (they would need all rows at
#'   once), and the chunked fit runs on those columns (see [chunked_fits]).
#' @param subset An optional vector picking the rows to use, evaluated in
#'   `data` as in [lm()].
#' @param weights Optional case weights, one non-negative number per row
#'   (evaluated in `data`): each row's loss is multiplied by its weight.
#' @param na.action What to do with rows with missing values: [na.omit()]
#'   (the default) drops them, [na.exclude()] drops them and pads fitted
#'   values with `NA`, [na.fail()] and [na.pass()] refuse them.  A function
#'   or its name.
#' @param ... The other arguments of the default method.
#' @seealso [update()], [predict.rff_svm()], [predict.rff_ridge()].
#' @examples
#' # missing values: dropped when fitting, NA when predicting
#' aq <- airquality
#' fit <- rff_ridge(Ozone ~ ., data = aq, D = 128, seed = 1, na.action = na.exclude)
#' nobs(fit)                       # complete rows only
#' length(fitted(fit)) == nrow(aq) # padded with NA by na.exclude
#' head(predict(fit, aq))          # NA for incomplete rows
#' fit10 <- update(fit, lambda = 0.1)
#' formula(fit10)
#' # subset, and a model on iris[, 1:4] predicting on all of iris
#' fit2 <- rff_svm(Species ~ ., data = iris, subset = Sepal.Length > 4.5, D = 64, seed = 1)
#' nobs(fit2)
#' fit3 <- rff_svm(iris[, 1:4], iris$Species, D = 64, seed = 1)
#' table(predict(fit3, iris), iris$Species)
#' @name formula_interface
#' @importFrom stats fitted formula model.frame nobs predict residuals terms
NULL

# The methods of stats' model generics for every fit of the package.
fit_formula_of <- function(fit) {
  if (is.null(fit$terms)) {
    stop("this fit was made on a matrix, not through a formula: it has no formula or terms",
         call. = FALSE)
  }
  stats::formula(fit$terms)
}

fit_terms <- function(fit) {
  if (is.null(fit$terms)) {
    stop("this fit was made on a matrix, not through a formula: it has no terms", call. = FALSE)
  }
  fit$terms
}

fit_nobs <- function(fit) {
  # rows of case weight zero are left out of the fit: not counted, as lm()
  w <- if (inherits(fit, "rff_gp")) fit$weights else fit$case_weights
  if (!is.null(w)) return(as.integer(sum(w != 0)))
  n <- if (!is.null(fit$input$n)) fit$input$n else fit$n
  if (is.null(n)) stop("this fit does not record its number of rows", call. = FALSE)
  as.integer(n)
}

# The model frame, rebuilt from the call in the formula's environment, as
# model.frame.lm() does when the frame was not kept.
fit_model_frame <- function(fit) {
  terms <- fit_terms(fit)
  call <- fit$call
  if ("x" %in% names(call) && !"formula" %in% names(call)) {
    names(call)[names(call) == "x"] <- "formula"
  }
  mf <- call[c(1L, match(c("formula", "data", "subset", "weights", "na.action"),
                         names(call), 0L))]
  mf[[1L]] <- quote(stats::model.frame)
  mf$drop.unused.levels <- TRUE
  if (is.null(mf$na.action)) mf$na.action <- stats::na.omit
  env <- environment(terms)
  if (is.null(env)) env <- parent.frame(2L)
  eval(mf, env)
}

#' @export
formula.kernel_kmeans <- function(x, ...) fit_formula_of(x)
#' @export
formula.random_features <- function(x, ...) fit_formula_of(x)

#' @export
terms.kernel_kmeans <- function(x, ...) fit_terms(x)
#' @export
terms.random_features <- function(x, ...) fit_terms(x)

#' @export
nobs.kernel_kmeans <- function(object, ...) fit_nobs(object)
#' @export
nobs.random_features <- function(object, ...) fit_nobs(object)

#' @export
model.frame.kernel_kmeans <- function(formula, ...) fit_model_frame(formula)
#' @export
model.frame.random_features <- function(formula, ...) fit_model_frame(formula)

# Shared pieces of the machines' print() and summary(): the lines on the
# training fit (the caller gives the regression line), the residual
# quantiles or fitted-class counts of summary(), and their printing.
training_fit_lines <- function(x, regression_line) {
  if (x$type == "regression") return(regression_line)
  c(sprintf("  classes: %s", paste(x$levels, collapse = ", ")),
    sprintf("  training accuracy %.4f on %d rows", x$accuracy, x$n))
}

training_summary <- function(object) {
  if (object$type == "regression") list(residuals = stats::quantile(object$residuals))
  else list(fitted_counts = table(fitted = object$fitted))
}

print_training_summary <- function(x) {
  if (!is.null(x$residuals)) {
    cat("\nResiduals of the training data:\n")
    print(signif(x$residuals, 4))
  }
  if (!is.null(x$fitted_counts)) {
    cat("\nPredicted classes of the training data:\n")
    print(x$fitted_counts)
  }
}
