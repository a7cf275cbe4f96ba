# predict(), print(), summary() and the model generics of "falkon" fits.

# Scores offset + k(x, C) alpha for scaled data x (n x k).
falkon_scores <- function(object, xs, nthreads) {
  check_allocation(nrow(xs), ncol(object$alpha), "the matrix of predictions", arg = "newdata")
  prep <- list(centres = object$centres, code = kernel_code(object$kernel),
               par = kernel_parameters(object$kernel))
  f <- falkon_kernel_predict(prep, xs, object$alpha, nthreads)
  sweep(f, 2L, object$offset, "+", check.margin = FALSE)
}

# Class probabilities, one column per class: calibrated (softmax_calibration())
# on the held-out rows, the leave-one-out scores or the training rows'
# scores, else (the logistic loss without a slice) the model's own.
falkon_prob <- function(object, f) {
  if (!is.null(object$calibration)) return(calibrated_probabilities(object$calibration, f))
  p <- falkon_probabilities(f)
  if (ncol(p) == 1L) p <- cbind(1 - p, p)
  colnames(p) <- object$levels
  p
}

# The fitted values (regression) or classes of scaled rows, from their
# scores when the fit gives them (falkon_fit_scores()).
falkon_fitted_values <- function(object, xs, nthreads, scores = NULL) {
  f <- if (is.null(scores)) falkon_scores(object, xs, nthreads) else scores
  if (object$type == "regression") return(drop(f))
  if (ncol(f) == 1L) {
    return(factor(object$levels[1L + (f[, 1L] > 0)], levels = object$levels))
  }
  rff_decision_classes(f, object$levels)
}

#' Predict with a FALKON fit
#'
#' @param object A fit from [falkon()].
#' @param newdata New data with the columns of the training data (matched by
#'   name where both have names; a data frame for formula fits; a sparse
#'   matrix for fits on one); without it, the fitted values of the training
#'   rows.
#' @param type `"response"` (the predicted values, or the classes for
#'   classification), `"class"`, `"prob"` (class probabilities, see
#'   [falkon()], Probabilities), or `"decision"` (the scores \eqn{b + k(x, C)
#'   \alpha}, one column per class, or the log-odds of the second class
#'   for a two-class logistic fit).
#' @param na.action What to do with rows of `newdata` with missing values:
#'   `na.pass` (the default) predicts `NA` for them, see [formula_interface].
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A numeric vector (regression), a factor (classes), or a matrix.
#' @examples
#' fit <- falkon(mpg ~ wt + hp, data = mtcars, m = 20, seed = 1)
#' predict(fit, mtcars[1:3, ])
#' @export
predict.falkon <- function(object, newdata, type = c("response", "class", "prob", "decision"),
                           na.action = stats::na.pass, nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, type = type, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(..., .who = "predict()")
  type <- fit_predict_type(object, type, c("response", "class", "prob", "decision"))
  if (missing(newdata) || is.null(newdata)) {
    return(fit_training_predictions(object, type, c("class", "response")))
  }
  regression <- object$type == "regression"
  nthreads <- check_threads(nthreads)
  score <- function(xc) {
    xs <- rff_apply_scaling(xc, object$scaling)
    if (is_sparse_matrix(xs)) xs <- as.matrix(xs)
    falkon_scores(object, xs, nthreads)
  }
  if (is_sparse_matrix(newdata)) {
    x <- sparse_newdata(object$input, newdata)
    f <- score(x)
    rownames(f) <- rownames(x)
  } else {
    x <- newdata_matrix(object$input, newdata, "newdata", fitted = "the model",
                        na_ok = TRUE, empty_ok = TRUE)
    f <- predict_rows(x, score, ncol(object$alpha), na.action)
  }
  if (regression) return(stats::setNames(drop(f), rownames(f)))
  colnames(f) <- colnames(object$alpha)
  switch(type,
         decision = f,
         prob = rff_complete_rows(f, function(d) falkon_prob(object, d)),
         rff_complete_rows(f, function(d) falkon_score_classes(object, d)))
}

# The classes of falkon's scores f (rows x columns of falkon_scores()).
falkon_score_classes <- function(object, f) {
  if (ncol(f) == 1L) f <- cbind(-f, f)   # two classes: the sign of the log-odds
  rff_decision_classes(f, object$levels)
}

fit_description.falkon <- function(x) {
  what <- if (x$type == "regression") "regression"
          else sprintf("classification, %d classes%s", length(x$levels),
                       if (x$loss == "squared") " by one-hot targets" else "")
  steps <- if (x$loss == "logistic") {
    sprintf("%d Newton steps (%d CG iterations in all)", x$newton_steps, x$iter)
  } else if (is.na(x$iter)) "solved exactly" else sprintf("%d CG iterations", x$iter)
  edge <- x$tuning$lambda_edge
  rule <- c(kmeans = "k-means++", leverage = "ridge leverage scores",
            rpcholesky = "randomly pivoted Cholesky")[x$landmarks]
  c(sprintf("FALKON %s, %s loss, %d centres%s%s", what, x$loss, x$m,
            if (length(rule) == 1L && !is.na(rule)) sprintf(" (%s)", rule) else "",
            if (identical(x$precision, "single")) ", kernel blocks in single precision" else ""),
    sprintf("  lambda = %s, %s%s", format(signif(x$lambda, 4)), steps,
            if (is.null(x$validation)) ""
            else if (falkon_loo_path(x$validation)) {
              sprintf(" (chosen by exact leave-one-out on all %d rows)", x$n)
            } else sprintf(" (chosen on %d held-out rows; fitted on %d)", x$n - x$n_train,
                           x$n_train)),
    if (identical(x$tuning$chosen, "rule") && length(x$tuning$heldout) == 2L) {
      sprintf("  the rule's kernel kept: the learned one lost %s (%.4g against %.4g)",
              if (falkon_loo_path(x$validation)) "by leave-one-out" else "on the held-out rows",
              x$tuning$heldout[["learned"]], x$tuning$heldout[["rule"]])
    },
    if (identical(x$calibration$source, "training")) {
      "  probabilities calibrated on the training rows' scores (no held-out slice: optimistic)"
    },
    if (identical(edge, "lower")) {
      "  lambda learned at the smallest of control$lambdas: smaller ones would let it go lower"
    } else if (identical(edge, "upper")) {
      "  lambda learned at 1, the top of its range: the kernel explains little of the response"
    },
    paste0("  ", kernel_summary(x$kernel), if (!is.null(x$scaling) && !isTRUE(x$scaling$ard_only))
                                 "; inputs standardised" else ""),
    training_fit_lines(x, sprintf("  training RMSE %.4g on %d rows", x$rmse, x$n)))
}

#' @export
summary.falkon <- function(object, ...) {
  out <- c(list(description = fit_description(object),
                alpha_norm = sqrt(colSums(object$alpha^2)), offset = object$offset,
                validation = object$validation, centres_path = object$centres_path,
                type = object$type, loss = object$loss),
           training_summary(object))
  structure(out, class = "summary.falkon")
}

#' @export
print.summary.falkon <- function(x, ...) {
  cat(x$description, sep = "\n")
  cat("\nNorm of the coefficients alpha:", paste(signif(x$alpha_norm, 4), collapse = ", "), "\n")
  cat("Offset:", paste(signif(x$offset, 4), collapse = ", "), "\n")
  if (!is.null(x$validation)) {
    # the path's error is the mean squared error for a regression (shown as
    # its root, as print() shows the training RMSE), the error rate (with a
    # millionth of the squared error breaking ties) for classes, the
    # log-loss for the logistic loss
    v <- x$validation
    if (falkon_loo_path(v)) {
      # falkon_fit_loo(): the mean squared leave-one-out residual (summed
      # over the one-hot columns for classes) of each lambda on the grid
      shown <- if (identical(x$type, "regression")) {
        sprintf("Leave-one-out RMSE: best %.4g", sqrt(min(v$loo)))
      } else sprintf("Leave-one-out squared error of the one-hot targets: best %.4g", min(v$loo))
      cat(sprintf("%s (of %d lambdas)\n", shown, nrow(v)))
    } else {
      best <- v[which.min(v$error), ]
      shown <- if (identical(x$type, "regression")) {
        sprintf("Held-out RMSE: best %.4g", sqrt(best$error))
      } else if (identical(x$loss, "logistic")) {
        sprintf("Held-out log-loss: best %.4g", best$error)   # the Newton steps' path
      } else sprintf("Held-out error rate: best %.4g", best$error)
      cat(sprintf("%s (of %d points on the path)\n", shown, nrow(v)))
    }
  }
  if (!is.null(x$centres_path)) {
    # the growth of the default centres, or the quarter that chose lambda
    # (falkon_fit_fixed()) and the fit on all
    cat("\nHeld-out error by number of centres:\n")
    print(x$centres_path, row.names = FALSE)
  }
  print_training_summary(x)
  invisible(x)
}
