# What the two machines, rff_svm() and rff_ridge(), share: the response and
# class weights, standardisation, the feature map and its decision values.

# Decision values for new data: checked against the fitted columns, scaled
# as the training data were, one row per row of newdata (named like them);
# rows with NA as na.action says (predict_rows()), none for no rows.
rff_new_decision <- function(object, newdata, nthreads, na.action = stats::na.pass) {
  nthreads <- check_threads(nthreads)
  decide <- function(xc) rff_decision(object, rff_apply_scaling(xc, object$scaling), nthreads)
  if (is_sparse_matrix(newdata)) {
    # sparse rows are finite (checked), so there are no NA rows to handle
    x <- sparse_newdata(object$input, newdata)
    dec <- decide(x)
    rownames(dec) <- rownames(x)
    return(dec)
  }
  x <- newdata_matrix(object$input, newdata, "newdata", fitted = "the model",
                      na_ok = TRUE, empty_ok = TRUE)
  predict_rows(x, decide, ncol(object$weights), na.action)
}

# rule(dec) on the rows of decision values without NA, NA elsewhere (the
# rows of new data with missing values, under na.pass or na.exclude): so
# class and probability rules (votes, coupling) never see an NA.  The rule
# gives a factor, or a matrix with a row per row.
rff_complete_rows <- function(dec, rule) {
  ok <- !is.na(dec[, 1L])
  if (all(ok)) return(rule(dec))
  out <- rule(dec[ok, , drop = FALSE])
  if (is.factor(out)) {
    full <- factor(rep(NA_character_, nrow(dec)), levels = levels(out))
    full[ok] <- out
    names(full) <- rownames(dec)
  } else {
    out <- as.matrix(out)
    full <- matrix(NA_real_, nrow(dec), ncol(out), dimnames = list(rownames(dec), colnames(out)))
    full[ok, ] <- out
  }
  full
}

# The fitted values (or classes) of the training rows, padded with NA where
# the formula method's na.action was na.exclude.
rff_fitted <- function(object) stats::napredict(object$na.action, object$fitted)

# The class of largest decision value in each row, as a factor with the
# training levels, named by the rows.
rff_decision_classes <- function(dec, levels) {
  cls <- factor(levels[max.col(dec, ties.method = "first")], levels = levels)
  names(cls) <- rownames(dec)
  cls
}

# y as a factor of classes, one per row of x, at least two classes.
rff_class_response <- function(y, n, arg = "y") {
  if (missing(y) || is.null(y)) stop_arg(arg, "is required: the class of each row of 'x'")
  if (is.matrix(y) || is.data.frame(y)) stop_arg(arg, "must be a vector or factor, not a matrix")
  # numbers are a measurement, not labels, even when whole (counts, rounded
  # values): kernlab's ksvm() regresses on them, and reading them as classes
  # made a rounded response 69 classes of one-vs-one problems
  if (is.numeric(y) && !is.factor(y)) {
    stop_arg(arg, "is numeric, but a classifier needs classes: give them as a factor ",
             "(factor(", arg, ")), or for a numeric response use rff_ridge(), falkon() or rff_gp()")
  }
  if (!(is.factor(y) || is.character(y) || is.logical(y))) {
    stop_arg(arg, "must be a factor, or a character or logical vector of classes")
  }
  if (length(y) != n) {
    stop_arg(arg, "has length ", length(y), " but 'x' has ", n, " row(s)")
  }
  if (anyNA(y)) stop_arg(arg, "contains NA (at position ", which(is.na(y))[1L], ")")
  # an ordered factor is classes too (the order is not used): a plain
  # factor with the same levels in the same order, so that comparisons with
  # the predicted classes (plain factors) are defined
  if (is.ordered(y)) y <- factor(y, levels = levels(y), ordered = FALSE)
  y <- droplevels(as.factor(y))
  if (nlevels(y) < 2L) {
    stop_arg(arg, "has only one class (\"", levels(y)[1L], "\"); a classifier needs at least two")
  }
  y
}

rff_class_weights <- function(class.weights, lev) {
  w <- stats::setNames(rep(1, length(lev)), lev)
  if (is.null(class.weights)) return(w)
  if (!is.numeric(class.weights) || is.null(names(class.weights)) ||
      any(!nzchar(names(class.weights)))) {
    stop_arg("class.weights", "must be a numeric vector named by class, such as c(a = 1, b = 5)")
  }
  if (anyNA(class.weights) || any(!is.finite(class.weights)) || any(class.weights <= 0)) {
    stop_arg("class.weights", "must be positive and finite")
  }
  unknown <- setdiff(names(class.weights), lev)
  if (length(unknown) > 0L) {
    stop_arg("class.weights", "names class(es) not in 'y': ", paste(unknown, collapse = ", "))
  }
  if (anyDuplicated(names(class.weights))) stop_arg("class.weights", "names a class twice")
  w[names(class.weights)] <- class.weights
  w
}

# Column centres and scales (standard deviations; 1 for constant columns),
# of the rows with positive case weight: a weight of zero drops its row, as
# the fits promise.  Unequal weights give the weighted mean and standard
# deviation (weighted_scaling()).
rff_scaling <- function(x, weights = NULL) {
  if (!is.null(weights)) {
    x <- weighted_rows(x, weights)
    weights <- weights[weights > 0]
    if (any(weights != weights[1L])) return(weighted_scaling(x, weights))
  }
  if (is_sparse_matrix(x)) return(sparse_scaling(x))   # scales only: see ?sparse_input
  # exact sums (R/chunks-survey.R): the chunked fits' standardisation is this one
  m <- column_moments_exact(column_sums_exact(x, nthreads = bochner_threads()), nrow(x))
  center <- m[[1L]]
  s <- if (nrow(x) > 1L) sqrt(m[[2L]] / (nrow(x) - 1L)) else rep(1, ncol(x))
  s[!is.finite(s) | s <= sqrt(.Machine$double.eps) * pmax(1, abs(center))] <- 1
  list(center = unname(center), scale = unname(s))
}

# The same with positive, unequal weights w: the weighted mean, and the
# weighted variance sum(w (x - mean)^2) / sum(w) times n / (n - 1), so that
# the scales do not depend on the weights' total and equal weights give
# rff_scaling()'s.  Sparse x: scales only, the zeros' deviations included.
weighted_scaling <- function(x, w) {
  n <- nrow(x)
  sw <- sum(w)
  if (is_sparse_matrix(x)) {
    center <- as.vector(Matrix::crossprod(x, w)) / sw
    xc <- methods::as(x, "CsparseMatrix")
    nnz <- diff(xc@p)
    wz <- xc
    wz@x <- w[xc@i + 1L]
    xc@x <- w[xc@i + 1L] * (xc@x - rep(center, nnz))^2
    ss <- Matrix::colSums(xc) + (sw - Matrix::colSums(wz)) * center^2
  } else {
    center <- colSums(x * w) / sw
    ss <- colSums(sweep(x, 2L, center, check.margin = FALSE)^2 * w)
  }
  s <- if (n > 1L) sqrt(ss / sw * n / (n - 1)) else rep(1, ncol(x))
  s[!is.finite(s) | s <= sqrt(.Machine$double.eps) * pmax(1, abs(center))] <- 1
  list(center = if (is_sparse_matrix(x)) rep(0, ncol(x)) else unname(center),
       scale = unname(as.double(s)))
}

rff_apply_scaling <- function(x, scaling) {
  if (is.null(scaling)) return(x)
  if (is_sparse_matrix(x)) return(sparse_apply_scaling(x, scaling))
  x <- sweep(x, 2L, scaling$center, check.margin = FALSE)
  sweep(x, 2L, scaling$scale, "/", check.margin = FALSE)
}

# The min kernel needs non-negative inputs, which standardising destroys.
rff_check_scale <- function(kernel, scale) {
  if (scale && identical(kernel$name, "min")) {
    stop_arg("scale", "must be FALSE for the min kernel: standardising centres the ",
             "inputs, and the min kernel needs them non-negative")
  }
  invisible(scale)
}

# A map fitted beforehand ('map ='): checked against x; it was fitted on the
# data as given, so standardising is off (an explicit scale = TRUE is an
# error).  Returns the scale flag to use.
rff_map_scale <- function(map, x, scale, scale_given) {
  check_feature_map(map, ncol(x))
  if (scale && scale_given) {
    stop_arg("scale", "must be FALSE with 'map': the map was fitted on the data as given")
  }
  FALSE
}

# The construction arguments of random_features() that the machines pass
# on (through their '...'): anything else is an unused argument.
rff_map_args <- function(..., map = NULL, who = NULL) {
  args <- list(...)
  if (length(args) == 0L) return(list())
  nm <- names(args)
  nm <- if (is.null(nm)) rep("", length(args)) else nm
  known <- c("type", "sampling", "method")
  unknown <- !(nm %in% known)
  if (any(unknown)) stop_unused_args(args[unknown], who)
  if ("type" %in% nm) {
    check_map_type(args[["type"]], who)
    args$type <- check_choice(args$type, c("phase", "pair"), "type")
  }
  if ("sampling" %in% nm) {
    args$sampling <- check_choice(args$sampling, c("iid", "orthogonal", "structured", "qmc"),
                                  "sampling")
  }
  if (!is.null(map)) {
    stop_arg(nm[1L], "is an argument of the map's construction; with 'map' the map is given")
  }
  args
}

# 'type' passed through a machine is the feature map's ("phase" or "pair");
# kernlab's and e1071's 'type' names the machine instead ("C-svc",
# "eps-regression"): say which function fits that.
check_map_type <- function(type, who) {
  if (is.character(type) && length(type) == 1L && !is.na(type) && !(type %in% c("phase", "pair"))) {
    t <- tolower(type)
    fits <- if (grepl("svr|regression", t)) {
      "a regression: rff_ridge(), falkon() or rff_gp()"
    } else if (grepl("svc|classification|bsvc|spoc|kbb", t)) {
      "the classification rff_svm() fits (cost = C, the hinge loss)"
    } else if (grepl("one", t)) {
      "one-class novelty detection, which bochner does not fit"
    }
    if (!is.null(fits)) {
      stop_arg("type", "is the feature map's here (\"phase\" or \"pair\"); kernlab's and ",
               "e1071's type = \"", type, "\" is ", fits, if (!is.null(who)) paste0(" (in ", who, ")"))
    }
  }
  invisible(type)
}

# The feature map of the (scaled) training data, sigma resolved on it (on
# its rows of positive case weight); map_args: construction arguments of
# random_features() (type, sampling, method).
rff_build_map <- function(xs, kernel, D, map_args = list(), weights = NULL) {
  if (!isTRUE(kernel$shift_invariant) &&
      is.null(utils::getS3method("build_feature_map", class(kernel)[1L], optional = TRUE))) {
    stop_arg("kernel", "has no random feature map here (the ", kernel$name, " kernel)")
  }
  resolved <- resolve_kernel(kernel, weighted_rows(xs, weights))
  do.call(draw_feature_map, c(list(xs, resolved, D = D), map_args))
}

# The rows of x whose case weight is positive (all without weights): the
# rows a bandwidth rule reads.
weighted_rows <- function(x, weights) {
  if (is.null(weights) || all(weights > 0)) x else x[weights > 0, , drop = FALSE]
}

# How many feature columns a fit's map will have, known before it is built
# (for check_memory()): the given map's, 2D for the pair map, d D + 1 for the
# min kernel's indicators, else D.
rff_feature_count <- function(D, d, kernel, map = NULL, map_args = list()) {
  if (!is.null(map)) return(as.double(map$n_features))
  if (identical(kernel$name, "min")) return(as.double(d) * D + 1)
  if (isTRUE(pmatch(map_args$type, c("phase", "pair")) == 2L)) 2 * as.double(D) else as.double(D)
}

# The transposed feature matrix t(Z), n_features x n.
rff_features_t <- function(map, xs, nthreads) {
  check_allocation(map$n_features, nrow(xs), "the feature matrix", arg = "D")
  transform_features_t(map, xs, nthreads)
}

# Decision values Z %*% weights + intercept for scaled data.
rff_decision <- function(object, xs, nthreads) {
  check_allocation(nrow(xs), ncol(object$weights), "the matrix of predictions", arg = "newdata")
  feature_decision(object$map, xs, object$weights, object$intercept, nthreads)
}
