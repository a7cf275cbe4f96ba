#' The parent class of the supervised machines
#'
#' Every fit of [falkon()], [rff_ridge()], [rff_svm()] and [rff_gp()] has
#' the class of its machine followed by `"bochner_fit"` (as
#' `class(fit) == c("falkon", "bochner_fit")`), as glmnet's fits share
#' `"glmnet"`.  The parent class carries what the machines have in common:
#' [formula()], [terms()], [model.frame()] and [nobs()] (see
#' [formula_interface]), `print()`, [fitted()], [residuals()] (regressions
#' only), `coef()` and `plot()`; `predict()` checks `type` and answers
#' without `newdata` in one way for all of them.
#'
#' **Coefficients.**  `coef()` gives the weights that define the fit's
#' decision function \eqn{f(x) = b + \sum_j w_j \phi_j(x)}, as a matrix with
#' the intercept \eqn{b} in the first row (`"(Intercept)"`) and one column
#' per output (the classes of a one-hot or one-vs-rest fit, the binary
#' problems of a one-vs-one SVM), or a named vector for a fit with one
#' output:
#' * [rff_ridge()], [rff_svm()]: \eqn{\phi} is the fit's feature map
#'   (`fit$map`, applied to the standardised inputs when the fit scaled
#'   them), \eqn{w} the feature weights.
#' * [falkon()]: \eqn{\phi_j(x) = k(x, c_j)} for the Nystrom centres
#'   \eqn{c_j} (attribute `"centres"`, in the standardised units of the
#'   inputs when the fit scaled them), \eqn{w = \alpha}.
#' * [rff_gp()]: the posterior mean in the response's units.  With
#'   `method = "exact"` the weights are those of \eqn{k(x, x_i)} for the
#'   training rows; with random features, those of the features
#'   \eqn{\cos(\omega_j \cdot x)}, \eqn{\sin(\omega_j \cdot x)} in turn.
#'   The coefficients of a mean basis (`mean =`) follow the intercept,
#'   named `"mean:"` and the basis' names.
#'
#' **Plots.**  `plot()` of a regression draws the residuals against the
#' fitted values of the training rows, as the first plot of [plot.lm()];
#' [rff_gp()] fits have their own [plot.rff_gp()].  For a classification
#' it is an error that says to use `predict()`.
#'
#' @param object,x A fit of [falkon()], [rff_ridge()], [rff_svm()] or
#'   [rff_gp()].
#' @param ... Unused by `coef()`; passed to [graphics::plot()] by `plot()`.
#' @return `coef()`: a numeric vector or matrix, see above.  `plot()`: `x`,
#'   invisibly.
#' @examples
#' fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 32, seed = 1)
#' class(fit)
#' head(coef(fit))
#' plot(fit)
#' @name bochner_fit
NULL

# The class vector of a fitted machine: its own class, then the parent's.
bochner_fit_class <- function(class) c(class, "bochner_fit")

#' @export
formula.bochner_fit <- function(x, ...) fit_formula_of(x)
#' @export
terms.bochner_fit <- function(x, ...) fit_terms(x)
#' @export
nobs.bochner_fit <- function(object, ...) fit_nobs(object)
#' @export
model.frame.bochner_fit <- function(formula, ...) fit_model_frame(formula)

#' @export
fitted.bochner_fit <- function(object, ...) rff_fitted(object)

#' @export
residuals.bochner_fit <- function(object, ...) {
  if (is.null(object$residuals)) {
    stop(sprintf("residuals are for regression; this %s fit is a classification",
                 class(object)[1L]), call. = FALSE)
  }
  stats::naresid(object$na.action, object$residuals)
}

#' @export
print.bochner_fit <- function(x, ...) {
  cat(fit_description(x), sep = "\n")
  invisible(x)
}

# The lines print() shows, one method per machine.
fit_description <- function(x) UseMethod("fit_description")

# The first row the intercept, then the weights; one output drops to a
# named vector, as coef() of lm().
fit_coefficients <- function(intercept, weights, names) {
  weights <- as.matrix(weights)
  out <- rbind(intercept, weights)
  rownames(out) <- c("(Intercept)", names)
  if (ncol(out) == 1L) out <- stats::setNames(out[, 1L], rownames(out))
  out
}

#' @rdname bochner_fit
#' @importFrom stats coef
#' @export
coef.bochner_fit <- function(object, ...) {
  fit_coefficients(object$intercept, object$weights, paste0("z", seq_len(nrow(object$weights))))
}

#' @rdname bochner_fit
#' @export
coef.falkon <- function(object, ...) {
  out <- fit_coefficients(object$offset, object$alpha, paste0("c", seq_len(nrow(object$alpha))))
  attr(out, "centres") <- object$centres
  out
}

#' @rdname bochner_fit
#' @export
coef.rff_gp <- function(object, ...) {
  w <- if (object$method == "exact") {
    stats::setNames(object$alpha, paste0("x", seq_along(object$alpha)))
  } else {
    D <- ncol(object$omega)
    stats::setNames(object$alpha * rep(object$amp, each = 2L),
                    paste0(c("cos", "sin"), rep(seq_len(D), each = 2L)))
  }
  b <- object$basis$coefficients
  if (!is.null(b)) {
    names(b) <- paste0("mean:", if (is.null(names(b))) seq_along(b) else names(b))
  }
  c("(Intercept)" = object$y_center, b, object$y_scale * w)
}

#' @rdname bochner_fit
#' @importFrom graphics abline plot
#' @export
plot.bochner_fit <- function(x, ...) {
  if (is.null(x$residuals)) {
    stop(sprintf(paste("plot() draws the residuals of a regression; this %s fit is a",
                       "classification: use predict(fit, newdata, type = \"class\")"),
                 class(x)[1L]), call. = FALSE)
  }
  graphics::plot(x$fitted, x$residuals, xlab = "Fitted values", ylab = "Residuals",
                 main = sprintf("Residuals of the %s fit", class(x)[1L]), ...)
  graphics::abline(h = 0, lty = 3)
  invisible(x)
}

# The predict() preamble of the machines: 'type' checked against the fit,
# then, without new data, the training rows' fitted values for the types
# that have them (NULL: the caller predicts on newdata).  'prob_needs'
# says what type = "prob" needs when the fit lacks it (NULL: it has it).
fit_predict_type <- function(object, type, types, prob_needs = NULL) {
  type <- check_choice(type, types, "type")
  if (identical(object$type, "regression") && type %in% c("class", "prob")) {
    stop_arg("type", "= \"", type, "\" needs a classification fit; this one is a regression")
  }
  if (type == "prob" && !is.null(prob_needs)) stop_arg("type", "= \"prob\" needs ", prob_needs)
  type
}

fit_training_predictions <- function(object, type, fitted_types) {
  if (identical(object$type, "regression") || type %in% fitted_types) return(rff_fitted(object))
  stop_arg("newdata", "is required for type = \"", type, "\"")
}
