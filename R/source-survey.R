# The survey of chunked data, the first pass of every chunked fit: rows,
# columns, column moments (pairwise update), the response's classes, a
# sample of rows; and the response of a chunk.

survey_task <- function(raw, i, y, quota) {
  xy <- chunk_xy(raw, y)
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
               u <- unique(r)
               whole <- all(u == round(u))
               list(kind = "numeric", whole = whole,
                    values = if (whole && length(u) <= 1000L) sort(u) else NULL)
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
survey_combine <- function(acc, s, i) {
  if (is.null(acc)) {
    m <- column_moments_exact(s$sums, s$n)
    return(list(n = s$n, d = s$d, names = s$names, sums = s$sums, center = m[[1L]],
                m2 = m[[2L]], sample = s$sample, y = list(s$y), rows = s$n))
  }
  if (s$d != acc$d) stop(sprintf("chunk %d has %d input column(s), chunk 1 has %d", i, s$d, acc$d),
                         call. = FALSE)
  if (!identical(s$names, acc$names)) {
    stop(sprintf("chunk %d has input columns %s, chunk 1 has %s", i,
                 paste(s$names, collapse = ", "), paste(acc$names, collapse = ", ")), call. = FALSE)
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

chunks_survey <- function(chunks, y = NULL, what, sample_rows = 1000L) {
  quota <- max(2L, ceiling(sample_rows / chunks$n))
  chunks_apply(chunks, survey_task, list(y = y, quota = quota), what, combine = survey_combine)
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
    if (!all(vapply(sv$y, `[[`, logical(1), "whole"))) {
      stop_arg("y", "must hold classes, but column '", y, "' has non-integer values; ",
               "for regression use rff_ridge()")
    }
    vals <- lapply(sv$y, `[[`, "values")
    if (any(vapply(vals, is.null, logical(1)))) {
      stop_arg("y", "has more than 1000 distinct whole numbers; classes, or regression?")
    }
    lev <- as.character(sort(unique(unlist(vals))))
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

