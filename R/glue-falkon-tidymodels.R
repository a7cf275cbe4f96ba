# falkon() in tidymodels and caret: the parsnip engine "bochner_falkon" for
# svm_rbf(), a dials parameter for its number of centres, and the caret
# model list falkon_caret.  Registered with the "bochner" engine's hook
# (R/parsnip.R).

#' The parsnip engine "bochner_falkon" for svm_rbf()
#'
#' With parsnip installed, `parsnip::svm_rbf() |>
#' parsnip::set_engine("bochner_falkon")` fits [falkon()]: the exact
#' Gaussian kernel on Nyström centres, solved by preconditioned conjugate
#' gradient.  Classification fits use the logistic loss (so that
#' `predict(type = "prob")` gives the model's own probabilities, as
#' tidymodels' default metrics ask), regression the squared loss.
#'
#' **Why `svm_rbf()`.**  parsnip has no kernel ridge or kernel logistic
#' regression model; `svm_rbf()` is its model of a machine with the Gaussian
#' kernel, whose parameters (`cost`, `rbf_sigma`) carry over exactly: the
#' same penalised kernel fit, with the hinge loss replaced by falkon's loss.
#' (parsnip's `kernlab` engine for the same model is the exact SVM, so a
#' workflow can swap one engine for the other.)
#'
#' **Parameters.**
#' * `cost`: the SVM's \eqn{C}.  The SVM objective \eqn{\frac12\|f\|^2 +
#'   C\sum_i \ell_i}{||f||^2 / 2 + C sum(loss)} divided by \eqn{C n} is
#'   falkon's mean loss plus a penalty, so the engine uses
#'   \eqn{\lambda = 1/(C n)} for the logistic loss (whose penalty is
#'   \eqn{\frac\lambda2\|f\|^2}{lambda/2 ||f||^2}) and \eqn{\lambda = 1/(2 C
#'   n)} for the squared loss (penalty \eqn{\lambda\|f\|^2}{lambda ||f||^2}),
#'   \eqn{n} the number of training rows.  Unset: `lambda = "auto"`
#'   (chosen on a held-out slice, see [falkon()]).
#' * `rbf_sigma`: kernlab's inverse width, \eqn{\exp(-\mathrm{rbf\_sigma}\,
#'   \|x - y\|^2)}{exp(-rbf_sigma ||x - y||^2)}; the engine uses
#'   [gaussian_kernel()] with \eqn{\sigma = 1/\sqrt{2\,\mathrm{rbf\_sigma}}}{sigma
#'   = 1 / sqrt(2 rbf_sigma)}.  Unset: falkon's default bandwidth.
#' * `margin` is not used.
#' * Engine arguments: `num_centers`, the number of centres \eqn{m}
#'   (default [falkon_default_centers()]; tunable with
#'   [falkon_num_centers()]), `loss` to override the loss, and any other
#'   argument of [falkon()] (`seed`, `iter`, `landmarks`, `control`, ...).
#'
#' `falkon_parsnip_fit()` is the function the engine calls; it is exported
#' for parsnip, not meant to be called directly.
#'
#' @param x,y Predictors (a matrix, data frame or sparse matrix) and outcome
#'   (a factor for classification, numeric for regression).
#' @param cost,rbf_sigma See above; `NULL` for falkon's defaults.
#' @param num_centers Number of centres, or `NULL` for the default.
#' @param mode `"classification"` or `"regression"`.
#' @param ... Further arguments of [falkon()].
#' @return A fit from [falkon()].
#' @examples
#' fit <- falkon_parsnip_fit(iris[, 1:4], iris$Species, cost = 10, rbf_sigma = 0.1,
#'                           num_centers = 50, seed = 1)
#' table(predict(fit, iris[, 1:4]), iris$Species)
#' if (requireNamespace("parsnip", quietly = TRUE)) {
#'   spec <- parsnip::set_engine(parsnip::svm_rbf(mode = "classification"),
#'                               "bochner_falkon", num_centers = 50, seed = 1)
#'   fit <- parsnip::fit(spec, Species ~ ., data = iris)
#'   head(predict(fit, iris, type = "prob"))
#' }
#' @export
falkon_parsnip_fit <- function(x, y, cost = NULL, rbf_sigma = NULL, num_centers = NULL,
                               mode = c("classification", "regression"), ...) {
  mode <- check_choice(mode, c("classification", "regression"), "mode")
  if (!is.null(cost)) check_positive(cost, "cost")
  if (!is.null(num_centers)) num_centers <- check_count(num_centers, "num_centers")
  if (!is_sparse_matrix(x) && !is.data.frame(x)) x <- as.matrix(x)
  args <- list(x = x, y = y, ...)
  if (is.null(args$loss)) args$loss <- if (mode == "classification") "logistic" else "squared"
  if (!is.null(num_centers)) args$m <- min(num_centers, NROW(x))
  if (!is.null(rbf_sigma)) {
    args$kernel <- gaussian_kernel(sigma = 1 / sqrt(2 * check_positive(rbf_sigma, "rbf_sigma")))
  }
  if (!is.null(cost)) args$lambda <- falkon_cost_lambda(cost, NROW(x), args$loss)
  do.call(falkon.default, args)
}

# lambda of falkon's mean-loss objective for an SVM cost C on n rows.
falkon_cost_lambda <- function(cost, n, loss) {
  if (identical(loss, "logistic")) 1 / (cost * n) else 1 / (2 * cost * n)
}

#' @rdname rff_num_features
#' @export
falkon_num_centers <- function(range = c(7L, 13L), trans = NULL) {
  count_param(range, trans, c(num_centers = "# Nystrom Centres"), "falkon_num_centers()")
}

register_falkon_engine <- function() {
  register_svm_rbf_engine("bochner_falkon", "falkon_parsnip_fit", "num_centers",
                          "falkon_num_centers")
}

#' A caret model for falkon()
#'
#' `falkon_caret` is a caret model-information list: pass it as `method` to
#' `caret::train()` to tune [falkon()] with caret's resampling.
#'
#' Tuning parameters:
#' * `sigma`: kernlab's inverse width, as in caret's `"svmRadial"` and
#'   [rff_svm_caret]; falkon's Gaussian length scale is
#'   \eqn{1/\sqrt{2\,\mathrm{sigma}}}{1 / sqrt(2 sigma)}.
#' * `lambda`: falkon's penalty (on the scale of a mean over rows, see
#'   [falkon()]).
#' * `m`: the number of centres, as [falkon()]'s `m`.
#'
#' The default grid (`tuneLength = len`) takes `sigma` from [falkon()]'s
#' own default bandwidth on the standardised rows (as [rff_svm_caret] does
#' from its machine's), `lambda` = 1e-3,
#' 1e-4, ... (`len` values) and `m` from [falkon_default_centers()];
#' `search = "random"` draws `sigma` and `lambda` log-uniformly.
#' Classification uses the squared loss (one-hot targets), or the logistic
#' loss when `trControl = caret::trainControl(classProbs = TRUE)` asks for
#' probabilities; further arguments of `train()` (`seed`, `iter`, `loss`,
#' ...) go to [falkon()].
#'
#' @format A list with the components caret's `train()` expects.
#' @examples
#' if (requireNamespace("caret", quietly = TRUE)) {
#'   set.seed(1)
#'   fit <- caret::train(iris[, 1:4], iris$Species, method = falkon_caret,
#'                       tuneGrid = expand.grid(sigma = 0.2, lambda = c(1e-3, 1e-6),
#'                                              m = 50),
#'                       trControl = caret::trainControl(method = "cv", number = 2))
#'   fit$bestTune
#' }
#' @export
falkon_caret <- list(
  label = "FALKON kernel ridge / logistic regression (bochner)",
  library = "bochner",
  type = c("Classification", "Regression"),
  loop = NULL,
  parameters = data.frame(parameter = c("sigma", "lambda", "m"),
                          class = c("numeric", "numeric", "numeric"),
                          label = c("Sigma (kernlab's inverse width)", "Penalty",
                                    "Nystrom Centres")),
  grid = function(x, y, len = NULL, search = "grid") {
    x <- if (is.data.frame(x)) as.matrix(x) else x
    sigma <- caret_default_sigma(x, y, falkon.default)
    m <- falkon_default_centers(NROW(x))
    if (search == "grid") {
      expand.grid(sigma = sigma, lambda = 10^(-2 - seq_len(len)), m = m)
    } else {
      data.frame(sigma = exp(stats::runif(len, log(sigma / 10), log(sigma * 10))),
                 lambda = 10^stats::runif(len, -9, -2), m = m)
    }
  },
  fit = function(x, y, wts, param, lev, last, classProbs, ...) {
    if (!is.data.frame(x) && !is_sparse_matrix(x)) x <- as.matrix(x)
    args <- list(x = x, y = y, kernel = gaussian_kernel(sigma = 1 / sqrt(2 * param$sigma)),
                 m = min(as.integer(param$m), NROW(x)), lambda = param$lambda, ...)
    if (!is.null(wts)) args$weights <- wts
    if (is.factor(y) && isTRUE(classProbs) && is.null(args$loss)) args$loss <- "logistic"
    do.call(falkon.default, args)
  },
  # predictions as for the random-feature machines
  predict = rff_svm_caret$predict,
  prob = rff_svm_caret$prob,
  sort = function(x) x[order(x$m, -x$lambda, -x$sigma), , drop = FALSE],
  levels = function(x) x$levels,
  tags = c("Kernel Method", "Radial Basis Function", "Nystrom", "Ridge Regression",
           "Logistic Regression", "Accepts Case Weights")
)
