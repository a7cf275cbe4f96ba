# Formula interfaces: model frames to numeric design matrices, and the same
# for new data at predict time.  Factors are one-hot coded (every level gets
# a column): kernels compare points by distance or inner product, and
# treatment contrasts would make one level special.

# A fit through its formula method, as lm() and kernlab::ksvm() do it: the
# model frame of 'formula' in 'data' with 'subset', 'weights' and
# 'na.action' (evaluated, like lm's, in the data and then the formula's
# environment), then fit_fn(design matrix[, response], [weights = ], ...).
# 'call' is the method's match.call(), stored in the fit so that update()
# refits; 'env' the caller's frame.  The formula may come as 'formula' or,
# by the generic's name, as 'x'.  'response' is an example of the two-sided
# formula a supervised method needs; 'no_response' says why an unsupervised
# one takes a one-sided formula.  The fit records the terms (the predictors'
# for predict(), the full ones for terms() and formula()), the factor
# levels, the rows dropped (na.action) and the call.
fit_formula <- function(call, env, fit_fn, na.action = stats::na.omit, ...,
                        response = NULL, no_response = NULL, chunked = NULL) {
  dots <- list(...)
  arg <- if ("formula" %in% names(call)) "formula" else "x"
  formula <- if (arg == "x") dots$x else eval(call$formula, env)
  dots$x <- NULL
  if (!is.null(chunked) && !is.null(call$data)) {
    data <- eval(call$data, env)
    if (inherits(data, "data_chunks")) {
      # data in chunks: the chunked fit on the formula's columns
      dots$data <- NULL
      return(do.call(chunks_formula, c(list(formula, data, chunked), dots,
                                       list(response = !is.null(response),
                                            extra = !is.null(call$subset) ||
                                              !is.null(call$weights)))))
    }
  }
  frame <- formula_frame(formula, call, env, na.action, arg)
  if (!is.null(response) && is.null(frame$y)) {
    stop_arg(arg, "must be a two-sided formula such as ", response)
  }
  if (is.null(response) && !is.null(frame$y)) {
    stop_arg(arg, "must be a one-sided formula such as ~ a + b (", no_response, ")")
  }
  args <- c(list(frame$x), if (!is.null(response)) list(frame$y),
            if (!is.null(frame$weights)) list(weights = frame$weights), dots)
  fit <- do.call(fit_fn, args)
  fit$input$terms <- stats::delete.response(frame$terms)
  fit$input$xlevels <- frame$xlevels
  fit$terms <- frame$terms
  fit$na.action <- frame$na.action
  # the formula first and under its own name, so that update() dispatches
  # on it and update(fit, . ~ . - a) finds it
  args <- as.list(call)[-1L]
  at <- match(arg, names(args))
  call <- as.call(c(list(call[[1L]], formula = args[[at]]), args[-at]))
  fit$call <- generic_call(call)
  fit
}

# The model frame of a formula method's call: list(x = design matrix,
# y = response or NULL, weights = case weights or NULL, terms, xlevels,
# na.action = the rows na.action dropped, as model.frame() records them).
formula_frame <- function(formula, call, env, na.action, arg = "formula") {
  if (!inherits(formula, "formula")) stop_arg(arg, "must be a formula")
  data <- if (is.null(call$data)) NULL else eval(call$data, env)
  if (is.null(data)) {
    data <- environment(formula)
  } else if (!is.data.frame(data) && !is.list(data) && !is.environment(data)) {
    stop_arg("data", "must be a data frame (or a list or environment) with the formula's variables")
  }
  # subset and weights stay expressions, evaluated in the data as lm() does;
  # missing values are kept here and handed to na.action below, so that
  # what they are (a response, a predictor) can be said
  mf <- call[c(1L, match(c("subset", "weights"), names(call), 0L))]
  mf[[1L]] <- quote(stats::model.frame)
  mf$formula <- formula
  mf$data <- data
  mf$na.action <- stats::na.pass
  mf$drop.unused.levels <- TRUE
  mf <- tryCatch(eval(mf, env), error = function(e) {
    # model.frame() names the weights' column "(weights)" in any language
    if (grepl("'(weights)'", conditionMessage(e), fixed = TRUE)) {
      stop_arg("weights", "must have one value per row of 'data': ", conditionMessage(e))
    }
    stop_arg("data", "does not fit the formula: ", conditionMessage(e))
  })
  na.action <- match_na_action(na.action)
  mf <- tryCatch(na.action(mf), error = function(e) {
    where <- first_missing(mf)
    stop_arg("data", "has a missing value (row ", where$row, ", variable ", where$var,
             "), which 'na.action' refuses: ", conditionMessage(e),
             "; na.action = na.omit drops such rows")
  })
  if (anyNA(mf)) {
    where <- first_missing(mf)
    if (where$var == "(weights)") {
      stop_arg("weights", "has a missing value (row ", where$row, "); use na.action = na.omit ",
               "or na.exclude to drop such rows")
    }
    what <- if (!is.null(attr(attr(mf, "terms"), "response")) &&
                attr(attr(mf, "terms"), "response") == 1L && where$col == 1L) {
      "the response"
    } else if (where$var == "(weights)") "the weights" else "a predictor"
    stop_arg("data", "has a missing value in ", what, " (row ", where$row, ", variable ",
             where$var, "); use na.action = na.omit or na.exclude to drop such rows")
  }
  if (nrow(mf) < 1L) stop_arg("data", "has no complete rows (after 'subset' and 'na.action')")
  terms <- attr(mf, "terms")
  predictors <- stats::delete.response(terms)
  xlevels <- stats::.getXlevels(terms, mf)
  weights <- stats::model.weights(mf)
  if (!is.null(weights)) weights <- check_weights(weights, nrow(mf))
  list(x = one_hot_matrix(predictors, mf, xlevels),
       y = if (attr(terms, "response") == 1L) stats::model.response(mf),
       weights = weights, terms = terms, xlevels = xlevels,
       na.action = attr(mf, "na.action"))
}

# The row (its name) and variable of the first missing value of a frame.
first_missing <- function(mf) {
  miss <- vapply(mf, function(v) if (is.matrix(v)) rowSums(is.na(v)) > 0 else is.na(v),
                 logical(nrow(mf)))
  if (!is.matrix(miss)) miss <- matrix(miss, nrow = nrow(mf))
  where <- which(miss, arr.ind = TRUE)[1L, ]
  list(row = rownames(mf)[where[1L]], col = where[2L], var = names(mf)[where[2L]])
}

# na.action as a function: a function, or the name of one (as lm takes it).
match_na_action <- function(na.action, arg = "na.action") {
  if (is.character(na.action) && length(na.action) == 1L && !is.na(na.action)) {
    na.action <- tryCatch(get(na.action, mode = "function", envir = parent.frame(2L)),
                          error = function(e) stop_arg(arg, "names no function (\"", na.action, "\")"))
  }
  if (!is.function(na.action)) {
    stop_arg(arg, "must be a function such as na.omit, na.exclude, na.pass or na.fail")
  }
  na.action
}

design_for_newdata <- function(terms, xlevels, newdata, arg = "newdata") {
  if (!is.data.frame(newdata) && !is.list(newdata)) {
    stop_arg(arg, "must be a data frame with the variables of the formula")
  }
  unseen <- unseen_levels()
  newdata <- missing_as_fitted(newdata, attr(terms, "dataClasses"), xlevels)
  mf <- tryCatch(
    stats::model.frame(terms, newdata, na.action = stats::na.pass),
    error = function(e) stop_arg(arg, "does not fit the model's formula: ", conditionMessage(e)))
  # the factors set to the fitted levels here rather than by model.frame(xlev =),
  # so that a level the fit never saw can be coded as all-zero dummies on request
  lev <- newdata_levels(mf, xlevels, unseen, arg)
  mf <- lev$mf
  # a variable whose type changed since the fit (numeric then character)
  # would be coded into other columns: refused as predict.lm() does, naming it
  # (a column of nothing but NA is logical in R whatever it stands for: it
  # is missing values of the fitted type, predicted as NA)
  classes <- attr(terms, "dataClasses")
  if (!is.null(classes)) {
    tryCatch(stats::.checkMFClasses(classes, mf), error = function(e) {
      stop_arg(arg, "does not match the data the model was fitted on: ", conditionMessage(e))
    })
  }
  one_hot_matrix(terms, mf, xlevels, lev$unseen)
}

# What predict() does with a factor level of new data that the fit never
# saw: options(bochner.unseen_levels =) "error" (the default, as lm) or
# "zero" (all-zero dummy columns, as kernlab::ksvm() and e1071 effectively do).
unseen_levels <- function() {
  value <- getOption("bochner.unseen_levels")
  if (is.null(value)) return("error")
  check_choice(value, c("error", "zero"), "options(bochner.unseen_levels)")
}

# The frame's factors (and character columns) given the fitted levels, as
# model.frame(xlev =) does; a value outside them is refused (unseen =
# "error") or becomes an extra level, 'sentinel', whose dummy row is all
# zeros (unseen = "zero").  Returns the frame and, per variable that got the
# extra level, its name.
newdata_levels <- function(mf, xlevels, unseen, arg) {
  zeroed <- list()
  for (nm in names(xlevels)) {
    xl <- xlevels[[nm]]
    xi <- mf[[nm]]
    if (is.null(xl) || is.null(xi)) next
    ordered <- is.ordered(xi)
    if (is.character(xi)) xi <- factor(xi)
    if (!is.factor(xi)) next   # a changed type, refused by .checkMFClasses()
    v <- as.character(xi)
    new <- !is.na(v) & !(v %in% xl)
    levels <- xl
    if (any(new)) {
      if (unseen == "error") {
        shown <- unique(v[new])
        stop_arg(arg, "has level(s) of factor ", nm, " that the fit never saw: ",
                 paste(utils::head(shown, 5L), collapse = ", "),
                 if (length(shown) > 5L) ", ...",
                 " (first in ", row_label(mf, which(new)[1L]), "); options(bochner.unseen_levels = ",
                 "\"zero\") codes them as all-zero dummy columns, as kernlab and e1071 do")
      }
      sentinel <- make.unique(c(xl, ".unseen"))[length(xl) + 1L]
      v[new] <- sentinel
      levels <- c(xl, sentinel)
      zeroed[[nm]] <- sentinel
    }
    mf[[nm]] <- factor(v, levels = levels, ordered = ordered)
  }
  list(mf = mf, unseen = zeroed)
}

# "row i", with the row's name where it is not its position: a subset of a
# data frame keeps the names of the rows it took ("12781" may be the
# 1 278th row of newdata).
row_label <- function(data, i) {
  name <- rownames(data)[i]
  if (is.null(name) || identical(name, as.character(i))) sprintf("row %d", i)
  else sprintf("row %d, named \"%s\"", i, name)
}

# A column of nothing but NA is logical in R, whatever it stands for: a
# variable fitted as numbers or as a factor given as such a column becomes
# missing values of its fitted type (predicted as NA), not a type change.
missing_as_fitted <- function(newdata, classes, xlevels) {
  if (is.null(classes) || !is.list(newdata)) return(newdata)
  for (v in intersect(names(classes), names(newdata))) {
    col <- newdata[[v]]
    if (!is.logical(col) || !all(is.na(col)) || !is.null(dim(col))) next
    if (classes[[v]] == "numeric") newdata[[v]] <- as.double(col)
    else if (classes[[v]] %in% c("factor", "ordered", "character") && !is.null(xlevels[[v]])) {
      newdata[[v]] <- factor(col, levels = xlevels[[v]])
    }
  }
  newdata
}

# 'unseen' (from newdata_levels()) names the variables with an extra level
# that the fit never saw: its row of the coding is all zeros.
one_hot_matrix <- function(terms, mf, xlevels, unseen = list()) {
  contrasts <- lapply(stats::setNames(nm = names(xlevels)), function(v) {
    lev <- xlevels[[v]]
    m <- diag(length(lev))
    dimnames(m) <- list(lev, lev)
    if (!is.null(unseen[[v]])) {
      m <- rbind(m, 0)
      rownames(m)[nrow(m)] <- unseen[[v]]
    }
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
  list(d = ncol(x), names = colnames(x), terms = NULL, xlevels = NULL, n = nrow(x))
}

# newdata as the numeric matrix an object was fitted on (described by
# input_description()), or an error naming the argument: through the
# formula's terms for formula fits, else by column count and, where both
# sides have names, by name (reordering permuted columns and ignoring
# extra ones, so a fit on iris[, 1:4] predicts on iris).  'na_ok' and
# 'empty_ok' as in as_data_matrix().
newdata_matrix <- function(input, newdata, arg = "newdata", fitted = "the model",
                           na_ok = FALSE, empty_ok = FALSE) {
  if (!is.null(input$terms)) {
    x <- design_for_newdata(input$terms, input$xlevels, newdata, arg)
    return(as_data_matrix(x, arg, na_ok, empty_ok))
  }
  fitted_names <- input$names
  given_names <- if (length(dim(newdata)) == 2L) colnames(newdata)
  # (by name only where every column has its own name: extra columns with
  # no or duplicated names would make the match a guess)
  if (!is.null(fitted_names) && !is.null(given_names) && !identical(given_names, fitted_names) &&
      ncol(newdata) >= input$d && !anyNA(given_names) && all(nzchar(given_names)) &&
      !anyDuplicated(given_names)) {
    missing_names <- setdiff(fitted_names, given_names)
    if (length(missing_names) > 0L) {
      stop_arg(arg, "lacks column(s) ", fitted, " was fitted on: ",
               paste(missing_names, collapse = ", "))
    }
    # select before coercing, so that extra non-numeric columns do not matter
    newdata <- newdata[, fitted_names, drop = FALSE]
  }
  x <- as_data_matrix(newdata, arg, na_ok, empty_ok)
  if (ncol(x) != input$d) {
    stop_arg(arg, "has ", ncol(x), " column(s) but ", fitted, " was fitted on ", input$d,
             if (is.null(dim(newdata)) && length(newdata) == input$d) {
               paste0(" (a vector is one column: for one row write x[i, , drop = FALSE] ",
                      "or matrix(v, nrow = 1))")
             })
  }
  x
}

# Predictions for the rows of new data x, which may have none, or rows with
# NA: fun(complete rows) gives a matrix of 'ncol' columns; incomplete rows
# get NA under na.pass (the default, as in predict.lm) and na.exclude, are
# left out under na.omit, and are an error under na.fail.
predict_rows <- function(x, fun, ncol, na.action = stats::na.pass, arg = "newdata") {
  na.action <- match_na_action(na.action)
  complete <- !is.na(rowSums(x))
  drop <- FALSE
  if (!all(complete)) {
    # what na.action does to the rows is what it does to a frame flagging them
    flags <- data.frame(complete = ifelse(complete, 1, NA))
    kept <- tryCatch(na.action(flags), error = function(e) {
      stop_arg(arg, "has missing values (the first in row ", which(!complete)[1L],
               "), which 'na.action' refuses: ", conditionMessage(e))
    })
    drop <- NROW(kept) < nrow(x) && !inherits(attr(kept, "na.action"), "exclude")
  }
  out <- matrix(NA_real_, nrow(x), ncol, dimnames = list(rownames(x), NULL))
  if (any(complete)) out[complete, ] <- fun(x[complete, , drop = FALSE])
  if (drop) out <- out[complete, , drop = FALSE]
  out
}

# A method's match.call() as a call of its generic: R names the method
# (rff_svm.formula(...)), which is not exported, so update() needs the
# generic's name back.
generic_call <- function(call) {
  strip <- function(f) as.name(sub("\\.(formula|default)$", "", as.character(f)))
  if (is.name(call[[1L]])) {
    call[[1L]] <- strip(call[[1L]])
  } else if (is.call(call[[1L]]) && length(call[[1L]]) == 3L) {
    call[[1L]][[3L]] <- strip(call[[1L]][[3L]])   # bochner::rff_svm.formula
  }
  call
}
