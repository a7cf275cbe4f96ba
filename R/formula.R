# Formula interfaces: model frames to numeric design matrices, and the same
# for new data at predict time.  Factors are one-hot coded (every level gets
# a column): kernels compare points by distance or inner product, and
# treatment contrasts would make one level special.

# A fit through its formula method: fit_fn(design matrix[, response], ...)
# on the formula's design, with the formula's terms recorded so that
# predict() applies them to new data.  'response' is an example of the
# two-sided formula a supervised method needs; 'no_response' says why an
# unsupervised one takes a one-sided formula.
fit_formula <- function(formula, data, fit_fn, response = NULL, no_response = NULL, ...) {
  design <- design_from_formula(formula, data, arg = "x")
  if (!is.null(response)) {
    if (is.null(design$y)) stop_arg("x", "must be a two-sided formula such as ", response)
    fit <- fit_fn(design$x, design$y, ...)
  } else {
    if (!is.null(design$y)) {
      stop_arg("x", "must be a one-sided formula such as ~ a + b (", no_response, ")")
    }
    fit <- fit_fn(design$x, ...)
  }
  fit$input$terms <- design$terms
  fit$input$xlevels <- design$xlevels
  fit
}

design_from_formula <- function(formula, data, arg = "formula") {
  if (!inherits(formula, "formula")) stop_arg(arg, "must be a formula")
  if (missing(data) || is.null(data)) {
    data <- environment(formula)
  } else if (!is.data.frame(data) && !is.list(data) && !is.environment(data)) {
    stop_arg("data", "must be a data frame (or a list or environment) with the formula's variables")
  }
  mf <- tryCatch(
    stats::model.frame(formula, data = data, na.action = stats::na.pass,
                       drop.unused.levels = TRUE),
    error = function(e) stop_arg("data", "does not fit the formula: ", conditionMessage(e)))
  terms <- stats::delete.response(attr(mf, "terms"))
  xlevels <- stats::.getXlevels(attr(mf, "terms"), mf)
  list(x = one_hot_matrix(terms, mf, xlevels),
       y = stats::model.response(mf),
       terms = terms, xlevels = xlevels)
}

design_for_newdata <- function(terms, xlevels, newdata, arg = "newdata") {
  if (!is.data.frame(newdata) && !is.list(newdata)) {
    stop_arg(arg, "must be a data frame with the variables of the formula")
  }
  mf <- tryCatch(
    stats::model.frame(terms, newdata, na.action = stats::na.pass, xlev = xlevels),
    error = function(e) stop_arg(arg, "does not fit the model's formula: ", conditionMessage(e)))
  one_hot_matrix(terms, mf, xlevels)
}

one_hot_matrix <- function(terms, mf, xlevels) {
  contrasts <- lapply(xlevels, function(lev) {
    m <- diag(length(lev))
    dimnames(m) <- list(lev, lev)
    m
  })
  x <- stats::model.matrix(terms, mf, contrasts.arg = contrasts)
  keep <- colnames(x) != "(Intercept)"
  x <- x[, keep, drop = FALSE]
  attr(x, "assign") <- NULL
  attr(x, "contrasts") <- NULL
  x
}

# What a fitted object remembers of its input columns, to check new data;
# the formula methods add the terms and factor levels.
input_description <- function(x) {
  list(d = ncol(x), names = colnames(x), terms = NULL, xlevels = NULL)
}

# newdata as the numeric matrix an object was fitted on (described by
# input_description()), or an error naming the argument: through the
# formula's terms for formula fits, else by column count and, where both
# sides have names, by name (reordering columns that are only permuted).
newdata_matrix <- function(input, newdata, arg = "newdata", fitted = "the model") {
  if (!is.null(input$terms)) {
    x <- design_for_newdata(input$terms, input$xlevels, newdata, arg)
    return(as_data_matrix(x, arg))
  }
  x <- as_data_matrix(newdata, arg)
  if (ncol(x) != input$d) {
    stop_arg(arg, "has ", ncol(x), " column(s) but ", fitted, " was fitted on ", input$d)
  }
  fitted_names <- input$names
  if (!is.null(fitted_names) && !is.null(colnames(x)) && !identical(colnames(x), fitted_names)) {
    missing_names <- setdiff(fitted_names, colnames(x))
    if (length(missing_names) > 0L) {
      stop_arg(arg, "lacks column(s) ", fitted, " was fitted on: ",
               paste(missing_names, collapse = ", "))
    }
    x <- x[, fitted_names, drop = FALSE]
  }
  x
}
