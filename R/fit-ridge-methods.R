# rff_ridge()'s fits: predict(), print() and summary(), and the one
# constructor of the class, shared by the in-memory and chunked fits.

#' Predict with random-feature ridge regression
#'
#' @param object A fit from [rff_ridge()].
#' @param newdata Data with the columns the model was fitted on (matched by
#'   name where both have names), or a data frame with the formula's
#'   variables for a fit with a formula; extra columns are ignored.
#'   Without `newdata` (or with `NULL`), the fitted values (or classes) of
#'   the training data.
#' @param type For regression, `"response"` (or `"decision"`, the same) for
#'   the predicted values.  For classification, `"class"` (or `"response"`,
#'   the same) for the predicted classes, `"decision"` for the fitted
#'   one-hot scores, one column per class, or `"prob"` for the class
#'   probabilities (see [rff_ridge()], Details).  The default is
#'   `"response"`.
#' @inheritParams predict.rff_svm
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A numeric vector (regression), a factor with the training levels,
#'   or a numeric matrix of scores.
#' @examples
#' fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 100, seed = 1)
#' predict(fit, mtcars[1:3, ])
#' @md
#' @export
predict.rff_ridge <- function(object, newdata,
                              type = c("response", "class", "decision", "prob"),
                              na.action = stats::na.pass, nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, type = type, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(..., .who = "predict()")
  type <- fit_predict_type(object, type, c("response", "class", "decision", "prob"),
                           if (is.null(object$calibration)) {
                             "a calibration: refit with this version of bochner"
                           })
  if (missing(newdata) || is.null(newdata)) {
    return(fit_training_predictions(object, type, c("class", "response")))
  }
  dec <- rff_new_decision(object, newdata, nthreads, na.action)
  if (object$type == "regression") return(stats::setNames(drop(dec), rownames(dec)))
  colnames(dec) <- object$levels
  switch(type,
         decision = dec,
         prob = rff_complete_rows(dec, function(d) calibrated_probabilities(object$calibration, d)),
         rff_complete_rows(dec, function(d) rff_decision_classes(d, object$levels)))
}

fit_description.rff_ridge <- function(x) {
  kern <- kernel_summary(x$kernel)
  what <- if (x$type == "regression") "regression"
          else sprintf("classification, %d classes by one-hot targets", length(x$levels))
  c(sprintf("Ridge %s on %d random features, lambda = %s%s", what, x$n_features,
            format(signif(x$lambda, 4)),
            if (is.null(x$path)) "" else sprintf(" (chosen by %s from %d values)",
                                                 if (x$criterion == "gcv") "GCV" else "leave-one-out",
                                                 nrow(x$path))),
    paste0("  ", kern, if (!is.null(x$scaling)) "; inputs standardised" else ""),
    training_fit_lines(x, sprintf("  training RMSE %.4g, R-squared %.4f on %d rows", x$rmse,
                                  x$r.squared, x$n)),
    if (!is.null(x$calibration)) {
      sprintf("  class probabilities: Platt scaling on the %s scores",
              if (identical(x$calibration$source, "training")) "training" else "leave-one-out")
    })
}

#' @export
summary.rff_ridge <- function(object, ...) {
  out <- c(list(description = fit_description(object),
                weight_norm = sqrt(colSums(object$weights^2)),
                intercept = object$intercept),
           training_summary(object))
  structure(out, class = "summary.rff_ridge")
}

#' @export
print.summary.rff_ridge <- function(x, ...) {
  cat(x$description, sep = "\n")
  cat("\nNorm of the feature weights:", paste(signif(x$weight_norm, 4), collapse = ", "), "\n")
  cat("Intercept:", paste(signif(x$intercept, 4), collapse = ", "), "\n")
  print_training_summary(x)
  invisible(x)
}

# The one constructor of "rff_ridge" fits, in memory and on chunks: the
# solution 'sol' (beta, intercept), the response's type and classes, and
# the fit's settings; '...' adds what only one path has.
new_rff_ridge <- function(sol, resp, map, D, lambda, path, criterion, n, scaling, input, ...) {
  fit <- structure(c(list(weights = sol$beta, intercept = sol$intercept, type = resp$type,
                          levels = resp$levels, kernel = map$kernel, D = D,
                          n_features = map$n_features, lambda = lambda, path = path,
                          criterion = criterion, n = n),
                     list(...), list(map = map, scaling = scaling, input = input)),
                   class = bochner_fit_class("rff_ridge"))
  if (resp$type != "regression") {
    colnames(fit$weights) <- resp$levels
    names(fit$intercept) <- resp$levels
  }
  fit
}
