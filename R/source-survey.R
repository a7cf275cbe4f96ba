# The survey of chunked data, the first pass of every chunked fit: rows,
# columns, column moments (pairwise update), the response's classes, a
# sample of rows; and the response of a chunk.

survey_task <- function(raw, i, y, quota, names = NULL) {
  if (is.null(names)) {
    # categorical columns: only their levels now; the survey proper runs
    # again with the design they give (chunks_survey())
    lv <- chunk_levels(raw, y)
    if (!is.null(lv)) return(list(levels = lv, columns = setdiff(colnames(raw), y)))
  }
  xy <- chunk_xy(raw, y, names)
  x <- xy$x
  n <- as.double(nrow(x))   # products of counts overflow integers
  sums <- column_sums_exact(x)
  rows <- unique(round(seq(1, n, length.out = min(n, quota))))
  yinfo <- NULL
  if (!is.null(y)) {
    r <- xy$y
    if (anyNA(r)) stop("the response '", y, "' contains NA", call. = FALSE)
    yinfo <- if (is.factor(r)) list(kind = "factor", levels = levels(droplevels(r)))
             else if (is.character(r) || is.logical(r)) list(kind = "character", levels = unique(as.character(r)))
             else if (is.numeric(r)) {
               if (any(!is.finite(r))) stop("the response '", y, "' contains infinite values", call. = FALSE)
               list(kind = "numeric")
             } else stop("the response '", y, "' is neither numeric nor classes", call. = FALSE)
  }
  list(n = n, d = ncol(x), names = colnames(x), sums = sums,
       sample = x[rows, , drop = FALSE], y = yinfo)
}

# The exact column sums of the rows of x added to states a and b
# (src/exact_moments.c), and the means and centred sums of squares of n
# rows from such a state: they depend on the rows only, not on how the
# rows are split into chunks, so the standardisation of a chunked fit is
# the in-memory one (rff_scaling()) to the last bit.
column_sums_exact <- function(x = NULL, a = NULL, b = NULL, nthreads = 1L) {
  if (!is.null(x) && storage.mode(x) != "double") storage.mode(x) <- "double"
  .Call(C_column_sums_exact, x, a, b, nthreads)
}

column_moments_exact <- function(state, n) .Call(C_column_moments_exact, state, as.double(n))

# The pairwise update of Chan, Golub and LeVeque (1983), exact in exact
# arithmetic and stable: for the union of parts of na and nb rows with
# column means ma and mb, the union's rows and means, delta = mb - ma and
# f = na nb / n, with which the centred sums of squares and cross-products
# of the union are the parts' plus f delta delta'.  The accumulator of the
# ridge moments and the Lloyd passes (the survey's column moments are exact
# sums instead, see column_sums_exact()).
moments_merge <- function(na, ma, nb, mb) {
  n <- na + nb
  delta <- mb - ma
  list(n = n, delta = delta, f = na * nb / n, mean = ma + delta * (nb / n))
}

# The survey's rows and exact column sums, with the means and sums of
# squares about them (center, m2) of the rows so far.
survey_combine <- function(acc, s, i, what = "the fit") {
  if (!is.null(s$levels) || !is.null(acc$levels)) {
    # a levels pass: each categorical column's levels, in order of
    # appearance across the chunks (as rbind() merges factors); the columns
    # are taken by name, in any order, but must be the same in every chunk
    got <- if (!is.null(s$columns)) s$columns else s$names
    first <- if (!is.null(acc$columns)) acc$columns else acc$names
    if (!is.null(acc) && !setequal(got, first)) survey_columns_differ(i, got, first, what)
    lv <- if (is.null(acc$levels)) list() else acc$levels
    for (nm in names(s$levels)) {
      lv[[nm]] <- union(lv[[nm]], s$levels[[nm]])
      attr(lv[[nm]], "factor") <- isTRUE(attr(s$levels[[nm]], "factor"))
    }
    cols <- if (!is.null(acc$columns)) acc$columns else if (!is.null(s$columns)) s$columns else s$names
    return(list(levels = lv, columns = cols))
  }
  if (is.null(acc)) {
    m <- column_moments_exact(s$sums, s$n)
    return(list(n = s$n, d = s$d, names = s$names, sums = s$sums, center = m[[1L]],
                m2 = m[[2L]], sample = s$sample, y = list(s$y), rows = s$n))
  }
  if (s$d != acc$d || !identical(s$names, acc$names)) {
    survey_columns_differ(i, s$names, acc$names, what, order = s$d == acc$d)
  }
  acc$n <- acc$n + s$n
  acc$sums <- column_sums_exact(a = acc$sums, b = s$sums)
  m <- column_moments_exact(acc$sums, acc$n)
  acc$center <- m[[1L]]
  acc$m2 <- m[[2L]]
  acc$sample <- rbind(acc$sample, s$sample)
  acc$y <- c(acc$y, list(s$y))
  acc$rows <- c(acc$rows, s$n)
  acc
}

# Chunk i's input columns 'got' are not chunk 1's 'first': an error that
# names the difference.  Numeric chunks are summed in their own column
# order, so there the order must be the same too ('order': the same columns,
# in another order).
survey_columns_differ <- function(i, got, first, what, order = FALSE) {
  extra <- setdiff(got, first)
  lacks <- setdiff(first, got)
  how <- c(if (length(extra)) paste("has", paste(extra, collapse = ", "), "that chunk 1 has not"),
           if (length(lacks)) paste("lacks", paste(lacks, collapse = ", ")))
  if (!length(how)) how <- if (order) "has chunk 1's columns in another order" else "differs"
  stop(sprintf("%s: chunk %d %s; every chunk needs the same input columns (chunk 1: %s)",
               what, i, paste(how, collapse = " and "), paste(first, collapse = ", ")),
       call. = FALSE)
}

chunks_survey <- function(chunks, y = NULL, what, sample_rows = 1000L) {
  quota <- max(2L, ceiling(sample_rows / chunks$n))
  combine <- function(acc, s, i) survey_combine(acc, s, i, what)
  sv <- chunks_apply(chunks, survey_task, list(y = y, quota = quota), what,
                     combine = combine)
  if (is.null(sv$levels)) return(sv)
  # factor or character columns: a second pass, every chunk expanded with
  # the levels of all of them, so that the columns are the same in every
  # chunk and the same as the formula interface gives in memory
  design <- chunk_design(sv$columns, sv$levels)
  sv <- chunks_apply(chunks, survey_task, list(y = y, quota = quota, names = design), what,
                     combine = combine)
  sv$names <- design
  sv
}

# The levels of the factor and character columns of a chunk (without the
# response y), as the formula interface takes them: a factor's levels
# present, in its order; a character column's values, sorted as factor()
# sorts them.  NULL when there are none.
chunk_levels <- function(raw, y) {
  if (!is.data.frame(raw)) return(NULL)
  cols <- setdiff(names(raw), y)
  cat <- vapply(raw[cols], function(v) is.factor(v) || is.character(v), logical(1))
  if (!any(cat)) return(NULL)
  lapply(raw[cols[cat]], function(v) {
    if (is.factor(v)) structure(levels(droplevels(v)), factor = TRUE)
    else sort(unique(v[!is.na(v)]))
  })
}

# The design of chunks with categorical columns: the predictor columns in
# their order, the terms of their sum and the levels; the expanded column
# names carry it as attribute "design", so that every task that expands a
# chunk (chunk_xy(raw, y, names)) gets it with the names it already takes.
chunk_design <- function(cols, levels) {
  levels <- lapply(levels, function(l) {
    # a character column's levels sorted over all chunks, as factor() of
    # all rows sorts them; a factor's in order of appearance
    if (isTRUE(attr(l, "factor"))) as.character(l) else sort(as.character(l))
  })
  rhs <- paste(vapply(cols, function(v) deparse(as.name(v), backtick = TRUE), ""), collapse = " + ")
  terms <- stats::terms(stats::as.formula(paste("~", rhs), env = baseenv()))
  design <- list(columns = cols, terms = terms, xlevels = levels)
  # the expanded names, from one made-up row
  row <- lapply(stats::setNames(nm = cols), function(v) {
    if (is.null(levels[[v]])) 0 else factor(levels[[v]][1L], levels = levels[[v]])
  })
  names <- colnames(chunk_design_matrix(as.data.frame(row, check.names = FALSE), design))
  structure(names, design = design)
}

# A chunk's predictors expanded by its design: factors one-hot coded on the
# survey's levels (one_hot_matrix(), as the formula interface does).
chunk_design_matrix <- function(raw, design) {
  miss <- setdiff(design$columns, colnames(raw))
  if (length(miss)) stop("lacks column(s) ", paste(miss, collapse = ", "), call. = FALSE)
  frame <- as.data.frame(raw, stringsAsFactors = FALSE)[design$columns]
  for (nm in names(design$xlevels)) {
    v <- frame[[nm]]
    if (!is.factor(v) && !is.character(v)) {
      stop("column '", nm, "' is categorical in some chunks but not in this one", call. = FALSE)
    }
    v <- as.character(v)
    new <- !is.na(v) & !(v %in% design$xlevels[[nm]])
    if (any(new)) {
      stop("column '", nm, "' has a level not seen in the survey: ", v[which(new)[1L]],
           call. = FALSE)
    }
    frame[[nm]] <- factor(v, levels = design$xlevels[[nm]])
  }
  if (anyNA(frame)) stop("has missing values (NA); drop or impute them first", call. = FALSE)
  mf <- stats::model.frame(design$terms, frame, na.action = stats::na.pass)
  x <- one_hot_matrix(design$terms, mf, design$xlevels)
  rownames(x) <- NULL
  x
}

# What a fit on chunks records of its input (input_description()): with
# categorical columns also the terms and levels, so that predict() takes a
# data frame with the same columns as the in-memory formula fit does.
survey_input <- function(sv, n = sv$n) {
  design <- attr(sv$names, "design")
  list(d = sv$d, names = sv$names, terms = design$terms, xlevels = design$xlevels, n = n)
}

# Standardisation from the survey, by the rule of rff_scaling().
survey_scaling <- function(sv) {
  center <- sv$center
  s <- if (sv$n > 1) sqrt(sv$m2 / (sv$n - 1)) else rep(1, length(center))
  s[!is.finite(s) | s <= sqrt(.Machine$double.eps) * pmax(1, abs(center))] <- 1
  list(center = unname(center), scale = unname(s))
}

# The response across chunks: "regression", or "classification" with the
# classes (factor levels in order of appearance, else sorted as
# as.factor() sorts them).
survey_response <- function(sv, y, classes_only = FALSE) {
  kinds <- unique(vapply(sv$y, `[[`, character(1), "kind"))
  if (length(kinds) > 1L && !all(kinds %in% c("factor", "character"))) {
    stop_arg("y", "names a column that is numeric in some chunks and classes in others")
  }
  if (identical(kinds, "numeric")) {
    if (!classes_only) return(list(type = "regression", levels = NULL))
    # as in memory (rff_class_response()): numbers are not classes
    stop_arg("y", "names a numeric column ('", y, "'), but a classifier needs classes: ",
             "make it a factor or character column in the chunks (data_chunks(reader = ) ",
             "can convert it as it reads), or for a numeric response use rff_ridge() or falkon()")
  } else if (identical(kinds, "factor")) {
    lev <- unique(unlist(lapply(sv$y, `[[`, "levels")))
  } else {
    lev <- sort(unique(unlist(lapply(sv$y, `[[`, "levels"))))
  }
  if (length(lev) < 2L) {
    stop_arg("y", "has only one class (\"", lev[1L], "\"); a classifier needs at least two")
  }
  list(type = "classification", levels = lev)
}

# The response of a chunk as a target matrix (regression: the values; else
# one-hot columns of the classes 'levels').
chunk_targets <- function(r, levels, y) {
  if (is.null(levels)) {
    if (!is.numeric(r)) stop("the response '", y, "' is not numeric", call. = FALSE)
    return(matrix(as.double(r), ncol = 1L))
  }
  cl <- chunk_classes(r, levels, y)
  Y <- matrix(0, length(cl), length(levels))
  Y[cbind(seq_along(cl), cl)] <- 1
  Y
}

chunk_classes <- function(r, levels, y) {
  cl <- match(as.character(r), levels)
  if (anyNA(cl)) {
    stop("the response '", y, "' has a class not seen in the survey: ",
         as.character(r)[which(is.na(cl))[1L]], call. = FALSE)
  }
  cl
}

check_chunk_y <- function(y) {
  if (missing(y) || is.null(y)) {
    stop_arg("y", "is required: the name of the response column present in every chunk")
  }
  if (!is.character(y) || length(y) != 1L || is.na(y) || !nzchar(y)) {
    stop_arg("y", "must be the name of a column present in every chunk (one string)")
  }
  y
}

check_no_chunk_y <- function(y) {
  if (!is.null(y)) stop_arg("y", "is not used here")
}

