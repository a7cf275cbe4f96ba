#' Data in pieces
#'
#' Describes data too large for one R session as a sequence of chunks, each
#' read only where it is processed.  The fits ([rff_ridge()], [rff_svm()],
#' [kernel_kmeans()] with `method = "rff"` or `"nystrom"`), `predict()` for
#' every fitted object and [kernel_approx_error()] accept the result as
#' their data, and run the work of each chunk through
#' [future.apply::future_lapply()] under whatever [future::plan()] the user
#' set: sequential by default, or several local R sessions
#' (`multisession`), a cluster of machines (`cluster`, over ssh), a
#' scheduler such as Slurm (`future.batchtools`).  Under the sequential
#' plan, and without the future.apply package, the chunks are processed one
#' after another in this session, directly.
#'
#' **Sources.**  A chunk is a numeric matrix or a data frame, one row per
#' observation, the same columns in every chunk.  `x` is one of
#' - a list of such matrices or data frames (each is sent to the worker that
#'   processes it, and only there);
#' - a character vector of file paths, read on the worker: `.rds` files
#'   (by [readRDS()]) and `.csv` files (by [utils::read.csv()]), or any
#'   format with `reader`, a function of one path returning a data frame or
#'   matrix: Parquet files with `reader = arrow::read_parquet` where the
#'   arrow package is installed, `.csv` files with other options, and so on.
#'   The paths must be valid where the workers run (a shared file system, or
#'   the same layout on every machine);
#' - a function of the chunk number `i` (1 to `n`) returning chunk `i`, for
#'   data read from a database or generated; it runs on the worker, so it
#'   should carry what it needs (packages it names with `::`, no large
#'   objects in its environment).
#'
#' **The response.**  The fits take `y` as the name of a column present in
#' every chunk; the other columns are the inputs.
#'
#' **Factor and character columns** are one-hot coded as the formula
#' interface codes them in memory (a column per level), with the levels of
#' all the chunks: when the first pass over the chunks finds such columns,
#' it collects their levels (a factor's in order of appearance, a character
#' column's sorted) and then makes the survey with every chunk expanded on
#' them, so a chunked fit equals the in-memory fit on the same rows.  That
#' costs one more read of the chunks, only for data with such columns.
#'
#' **Order and reproducibility.**  Per-chunk results come back in the order
#' of the chunks and are combined in that order, whatever the plan and the
#' number of workers, so a fit is identical, bit for bit, under every plan.
#' Random draws are made in this session or on the workers from seeds drawn
#' here, one per chunk: `set.seed()` (or `seed =`) reproduces a fit under
#' any plan.
#'
#' **Memory.**  A worker holds one chunk, its features a block of rows at a
#' time, and the per-chunk summaries the fit needs (for ridge regression a
#' \eqn{D \times D} matrix); this session holds the summaries of a wave of
#' chunks at a time, combined as they arrive.  Results are returned per
#' chunk, or written to files (`predict(..., output =)`).
#'
#' **Futures and waves.**  Each chunk is one future (one job under
#' future.batchtools), or `getOption("bochner.chunks_per_future")` chunks
#' per future; the chunks are sent out in waves of at most 64 (or
#' `getOption("bochner.chunks_per_wave")`), whose results are combined
#' before the next wave starts.  Neither setting changes any result.
#'
#' **Threads and progress.**  Each worker uses `nthreads` threads (the fits'
#' argument); under a plan with several workers the default is one thread per
#' worker, else [bochner_threads()].  With `options(bochner.progress = TRUE)`
#' a message is shown as each chunk is done.
#'
#' **Failures.**  A chunk that cannot be read or fails its computation stops
#' the fit with an error naming the chunk (its number, and its file where it
#' has one); nothing is returned and no output file is left half-written.
#'
#' @param x A list of matrices or data frames, a character vector of file
#'   paths, or a function of the chunk number.
#' @param n For a function `x`, the number of chunks; otherwise taken from
#'   `x` (and, if given, it must match).
#' @param reader `NULL`, or a function of one file path returning the chunk
#'   (for formats the extension does not name, or options such as a column
#'   separator).
#' @return An object of class `"data_chunks"`: `length()` is the number of
#'   chunks, `x[i]` the chunks `i` (a `data_chunks` again), `x[[i]]` reads
#'   chunk `i` into this session.
#' @seealso `vignette("scale-out", package = "bochner")`.
#' @examples
#' # a list of pieces in memory
#' set.seed(1)
#' pieces <- lapply(1:4, function(i) {
#'   x <- matrix(runif(200, -3, 3), ncol = 2, dimnames = list(NULL, c("a", "b")))
#'   data.frame(x, y = sin(x[, 1]) + cos(x[, 2]) + rnorm(100, sd = 0.1))
#' })
#' chunks <- data_chunks(pieces)
#' chunks
#' fit <- rff_ridge(chunks, y = "y", kernel = gaussian_kernel(1), D = 100, seed = 1)
#' fit
#'
#' # the same pieces in files, read where they are processed
#' files <- file.path(tempdir(), sprintf("piece%d.rds", 1:4))
#' for (i in 1:4) saveRDS(pieces[[i]], files[i])
#' fit2 <- rff_ridge(data_chunks(files), y = "y", kernel = gaussian_kernel(1),
#'                   D = 100, seed = 1)
#' all.equal(fit$weights, fit2$weights)
#'
#' # predictions, one element per chunk
#' str(predict(fit, data_chunks(files)))
#'
#' # a function of the chunk number
#' gen <- function(i) pieces[[i]]
#' length(data_chunks(gen, n = 4))
#' unlink(files)
#' @md
#' @export
data_chunks <- function(x, n = NULL, reader = NULL) {
  if (!is.null(reader) && !is.function(reader)) {
    stop_arg("reader", "must be NULL or a function of one file path")
  }
  if (inherits(x, "data_chunks")) return(x)
  if (is.function(x)) {
    if (is.null(n)) stop_arg("n", "is required when 'x' is a function: the number of chunks")
    n <- check_count(n, "n")
    if (!is.null(reader)) stop_arg("reader", "is for file paths; 'x' is a function")
    return(new_data_chunks("function", x, n, NULL))
  }
  if (is.character(x)) {
    if (length(x) < 1L) stop_arg("x", "has no file paths")
    if (anyNA(x) || any(!nzchar(x))) stop_arg("x", "contains a missing or empty file path")
    if (is.null(reader)) {
      ext <- chunk_extension(x)
      unknown <- !ext %in% c("rds", "csv")
      if (any(unknown)) {
        stop_arg("x", "has file(s) of a type read only with 'reader' (.rds and .csv are ",
                 "read by default; give reader = arrow::read_parquet for Parquet): ",
                 x[which(unknown)[1L]])
      }
    }
    n <- chunk_n(n, length(x))
    return(new_data_chunks("files", x, n, reader))
  }
  if (is.matrix(x) || is.data.frame(x)) {
    stop_arg("x", "is a single table; give a list of tables (one per chunk), file paths, ",
             "or a function of the chunk number")
  }
  if (!is.list(x) || length(x) < 1L) {
    stop_arg("x", "must be a list of matrices or data frames, a character vector of ",
             "file paths, or a function of the chunk number")
  }
  ok <- vapply(x, function(p) is.matrix(p) || is.data.frame(p), logical(1))
  if (!all(ok)) {
    stop_arg("x", "must hold matrices or data frames; element ", which(!ok)[1L], " is a ",
             class(x[[which(!ok)[1L]]])[1L])
  }
  if (!is.null(reader)) stop_arg("reader", "is for file paths; 'x' is a list")
  n <- chunk_n(n, length(x))
  new_data_chunks("list", unname(x), n, NULL)
}

new_data_chunks <- function(type, source, n, reader) {
  structure(list(type = type, source = source, n = n, reader = reader),
            class = "data_chunks")
}

chunk_n <- function(n, len) {
  if (is.null(n)) return(len)
  n <- check_count(n, "n")
  if (n != len) stop_arg("n", "is ", n, " but 'x' has ", len, " chunk(s)")
  n
}

chunk_extension <- function(path) {
  tolower(sub(".*\\.([^.]+)$", "\\1", sub("\\.(gz|bz2|xz)$", "", basename(path))))
}

#' @export
length.data_chunks <- function(x) x$n

#' @export
`[.data_chunks` <- function(x, i) {
  idx <- seq_len(x$n)[i]
  if (length(idx) < 1L || anyNA(idx)) stop_arg("i", "must select at least one existing chunk")
  if (x$type == "function") {
    f <- x$source
    sub <- idx
    return(new_data_chunks("function", function(j) f(sub[j]), length(idx), NULL))
  }
  new_data_chunks(x$type, x$source[idx], length(idx), x$reader)
}

#' @export
`[[.data_chunks` <- function(x, i) {
  i <- check_count(i, "i", upper = x$n)
  chunk_read(chunk_handles(x, i)[[1L]], x$source, x$reader)
}

#' @export
print.data_chunks <- function(x, ...) {
  what <- switch(x$type,
    list = "tables in memory",
    files = {
      shown <- utils::head(x$source, 3L)
      paste0("files: ", paste(shown, collapse = ", "), if (x$n > 3L) ", ..." else "")
    },
    "function" = "a function of the chunk number")
  cat(sprintf("Data in %d chunk%s (%s)\n", x$n, if (x$n == 1L) "" else "s", what))
  invisible(x)
}

# ---------------------------------------------------------------------------
# The survey: one pass over the chunks for what a fit needs before its
# main pass (rows, columns, column means and sums of squares about them for
# standardising, the classes of the response, and a sample of rows for the
# median heuristic and landmarks).

# The inputs of a chunk as a numeric matrix, and the response column.
chunk_xy <- function(raw, y = NULL, names = NULL) {
  resp <- NULL
  if (!is.null(y)) {
    cn <- colnames(raw)
    if (is.null(cn) || !y %in% cn) stop("has no column '", y, "' (the response 'y')", call. = FALSE)
    resp <- if (is.data.frame(raw)) raw[[y]] else raw[, y]
    raw <- raw[, cn != y, drop = FALSE]
  }
  design <- attr(names, "design")
  if (!is.null(design)) return(list(x = chunk_design_matrix(raw, design), y = resp))
  if (!is.null(names) && !is.null(colnames(raw)) && !identical(colnames(raw), names)) {
    miss <- setdiff(names, colnames(raw))
    if (length(miss) > 0L) stop("lacks column(s) ", paste(miss, collapse = ", "), call. = FALSE)
    raw <- raw[, names, drop = FALSE]
  }
  x <- as_data_matrix(raw, "x")
  rownames(x) <- NULL
  list(x = x, y = resp)
}

# ---------------------------------------------------------------------------
# Per-chunk values kept between the passes of one iterative fit (the SVM's
# features), in the process that computed them: in this session under
# plan(sequential), in a persistent worker under multisession or cluster.
# A miss (another worker got the chunk, or a fresh batchtools job)
# recomputes the value, so the fit does not depend on the cache.  At most
# getOption("bochner.chunk_cache_mb", 1024) MB per process; a new fit's
# token evicts what an earlier fit left behind.
chunk_cache <- new.env(parent = emptyenv())

chunk_cache_token <- function() {
  chunk_cache$.count <- (if (is.null(chunk_cache$.count)) 0 else chunk_cache$.count) + 1
  sprintf("%d-%.0f-%.0f", Sys.getpid(), as.numeric(Sys.time()) * 1e6, chunk_cache$.count)
}

chunk_cached <- function(token, i, compute) {
  key <- paste0(token, "#", i)
  hit <- chunk_cache[[key]]
  if (!is.null(hit)) return(hit)
  value <- compute()
  keys <- ls(chunk_cache)
  stale <- keys[!startsWith(keys, paste0(token, "#"))]
  if (length(stale)) rm(list = stale, envir = chunk_cache)
  used <- sum(vapply(mget(setdiff(keys, stale), envir = chunk_cache),
                     function(v) as.numeric(utils::object.size(v)), 0))
  budget <- getOption("bochner.chunk_cache_mb", 1024) * 2^20
  if (used + as.numeric(utils::object.size(value)) <= budget) assign(key, value, envir = chunk_cache)
  value
}

# Drop a chunk's value (i), or all of a fit's (i = NULL).
chunk_cache_release <- function(token, i = NULL) {
  keys <- ls(chunk_cache)
  drop <- if (is.null(i)) keys[startsWith(keys, paste0(token, "#"))]
          else intersect(keys, paste0(token, "#", i))
  if (length(drop)) rm(list = drop, envir = chunk_cache)
  invisible()
}

# ---------------------------------------------------------------------------
# The formula interface on chunks: a formula of plain column names
# (y ~ a + b, y ~ ., ~ a + b) picks the response and the input columns of
# every chunk; transformations, interactions, 'subset' and 'weights' would
# need the model frame of all rows at once, and are refused.
chunks_formula <- function(formula, data, fit, ..., response, extra) {
  if (!inherits(formula, "formula")) stop_arg("formula", "must be a formula")
  if (extra) stop_arg("data", "holds chunks: 'subset' and 'weights' are not supported there")
  two <- length(formula) == 3L
  if (response && !two) stop_arg("formula", "must be two-sided, such as y ~ a + b")
  if (!response && two) stop_arg("formula", "must be one-sided, such as ~ a + b")
  plain <- function(e) is.name(e) && nzchar(as.character(e))
  y <- NULL
  if (two) {
    if (!plain(formula[[2L]])) {
      stop_arg("formula", "on chunks takes a column name as the response, not an expression")
    }
    y <- as.character(formula[[2L]])
  }
  rhs <- formula[[length(formula)]]
  cols <- NULL
  if (!identical(rhs, as.name("."))) {
    labels <- attr(stats::terms(formula), "term.labels")
    ok <- vapply(labels, function(l) plain(str2lang(l)), logical(1))
    if (!length(labels) || !all(ok) || attr(stats::terms(formula), "intercept") != 1L) {
      stop_arg("formula", "on chunks takes column names joined by '+' (or '.'), ",
               "not transformations or interactions")
    }
    cols <- labels
  }
  chunks <- if (is.null(cols)) data else chunks_select(data, c(cols, y))
  if (response) fit(chunks, y = y, ...) else fit(chunks, ...)
}

# The chunks with only the columns 'cols' (in that order).
chunks_select <- function(x, cols) {
  pick <- function(raw) {
    miss <- setdiff(cols, colnames(raw))
    if (length(miss)) stop("lacks column(s) ", paste(miss, collapse = ", "), call. = FALSE)
    raw[, cols, drop = FALSE]
  }
  switch(x$type,
    list = new_data_chunks("list", lapply(x$source, pick), x$n, NULL),
    files = {
      reader <- x$reader
      new_data_chunks("files", x$source, x$n, function(path) {
        pick(chunk_read(list(path = path), NULL, reader))
      })
    },
    new_data_chunks("function", local({
      f <- x$source
      function(i) pick(f(i))
    }), x$n, NULL))
}
