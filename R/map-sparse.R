# Sparse input: Matrix's dgCMatrix (compressed columns) and dgRMatrix
# (compressed rows), as a document-term matrix usually comes.  Random Fourier
# features of such data are computed over the non-zeros only (src/sparse.c),
# bit for bit the features of the dense matrix; other maps densify a block of
# rows at a time.  Matrix stays a suggested package: a user who has a sparse
# matrix has it installed.

#' Sparse input
#'
#' [random_features()] and its `predict()` method, [rff_svm()],
#' [rff_ridge()] and `kernel_kmeans(method = "rff")` accept sparse matrices
#' of the Matrix package, `dgCMatrix` (what `Matrix::sparseMatrix()` and
#' `Matrix::rsparsematrix()` make) and `dgRMatrix`; other sparse classes are
#' converted to `dgCMatrix`.  For random Fourier features (Gaussian,
#' Laplace, Cauchy and Matérn kernels, `sampling` other than
#' `"structured"`) the product \eqn{X W} is computed over the non-zeros
#' only, in \eqn{O(\mathrm{nnz} \cdot D)}{O(nnz D)} operations instead of
#' \eqn{O(n d D)}, threaded and without ever forming the dense \eqn{X}: a
#' document-term matrix of \eqn{10^5} documents and \eqn{10^5} terms with
#' \eqn{10^7} non-zeros maps to 1024 features in seconds.  The features are
#' the dense matrix's bit for bit (a zero adds exactly nothing to each sum,
#' which the dense product forms in the same order), and so is
#' `sigma = "median"`.  Other maps (polynomial, structured, Nyström) take
#' sparse data too, densifying a block of rows at a time.
#'
#' **Scaling.**  Centring would make a sparse matrix dense, so with sparse
#' input `scale = TRUE` in [rff_svm()] and [rff_ridge()] divides each column
#' by its standard deviation without centring it.  For the shift-invariant
#' kernels this is the same model as centring and scaling: the kernel and
#' the median heuristic depend only on differences of rows, which a
#' common shift leaves alone.  (With a polynomial kernel it is not; pass
#' `scale = FALSE` and scale the data yourself if that matters.)  New data
#' for `predict()` may be sparse or dense either way.  For document-term
#' matrices `scale = FALSE` (counts, log counts or tf-idf as they are) is
#' usually better: dividing by the standard deviation inflates rare words.
#'
#' `kernel_kmeans(method = "exact")` needs the data of every cluster for its
#' Gram matrix and refuses sparse input; use `method = "rff"`.  The median
#' heuristic (`sigma = "median"`) looks at up to 1000 rows and their
#' pairwise distances over the non-zeros.
#'
#' Memory: the map's frequency matrix is \eqn{d \times D}{d x D} doubles
#' (800 MB for \eqn{d = 10^5}, \eqn{D = 1024}); the transform adds the
#' transpose of 256 frequencies at a time (\eqn{256 d}{256 d} doubles, 200 MB
#' there) and a row-wise copy of a `dgCMatrix`.  Loops that map many blocks
#' of rows ([rff_ridge()]'s normal equations, `predict()` on a k-means fit,
#' `predict()` with a progress bar) hold the whole transpose
#' (\eqn{d \times D}{d x D}) while they run, so as to transpose once.
#'
#' @name sparse_input
#' @examples
#' if (requireNamespace("Matrix", quietly = TRUE)) {
#'   # a toy document-term matrix: two topics, each with 50 words of its
#'   # own, among 1000 words shared by both
#'   set.seed(1)
#'   n <- 400
#'   topic <- factor(sample(c("sport", "politics"), n, replace = TRUE))
#'   rows <- rep(seq_len(n), each = 15)
#'   cols <- ifelse(runif(n * 15) < 0.4,
#'                  sample(50, n * 15, replace = TRUE) +
#'                    ifelse(topic[rows] == "sport", 0, 50),
#'                  sample(1000, n * 15, replace = TRUE))
#'   dtm <- Matrix::sparseMatrix(i = rows, j = cols, x = 1, dims = c(n, 1000))
#'   dtm@x <- log1p(dtm@x)      # repeated words were summed: log counts
#'   train <- 1:300
#'   # counts as they are: standardising would inflate the rare words
#'   fit <- rff_svm(dtm[train, ], topic[train], D = 256, scale = FALSE, seed = 1)
#'   mean(predict(fit, dtm[-train, ]) == topic[-train])
#'
#'   # the features are those of the dense matrix
#'   map <- random_features(dtm, gaussian_kernel(5), D = 64, seed = 2)
#'   identical(predict(map, dtm[1:10, ]), predict(map, as.matrix(dtm[1:10, ])))
#' }
NULL

is_sparse_matrix <- function(x) isS4(x) && inherits(x, "sparseMatrix")

# A sparse matrix as a dgCMatrix or dgRMatrix of finite values with at
# least one row and column, or an error naming the argument.
as_sparse_data_matrix <- function(x, arg = "x") {
  if (!requireNamespace("Matrix", quietly = TRUE)) {
    stop_arg(arg, "is a sparse matrix, which needs the Matrix package")
  }
  if (!inherits(x, "dgCMatrix") && !inherits(x, "dgRMatrix")) {
    x <- tryCatch(methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"),
                              "dMatrix"),
                  error = function(e) {
                    stop_arg(arg, "is a sparse matrix of class ", class(x)[1L],
                             " that cannot be made a dgCMatrix: ", conditionMessage(e))
                  })
  }
  if (nrow(x) < 1L) stop_arg(arg, "has no rows")
  if (ncol(x) < 1L) stop_arg(arg, "has no columns")
  if (any(!is.finite(x@x))) {
    where <- Matrix::which(!is.finite(x), arr.ind = TRUE)[1L, ]
    stop_arg(arg, "contains NA, NaN or infinite values (the first at row ", where[1L],
             ", column ", where[2L], ")")
  }
  x
}

# Refusal for callers that take dense data only.
stop_sparse <- function(arg, why) {
  stop_arg(arg, "is a sparse matrix, which ", why, "; use as.matrix() if it fits in memory")
}

# --- transforms --------------------------------------------------------------

# Z (layout 0), t(Z) (1) or the decision values Z beta + intercept (2) of
# sparse x under a map: in C over the non-zeros for Fourier maps, else on
# dense blocks of rows.
sparse_transform <- function(map, x, nthreads, layout, weights = NULL, intercept = NULL) {
  if (inherits(map, "fourier_features")) {
    return(.Call(C_sparse_rff, x, map$omega, cached_frequencies_t(map), map$phase, map$scale,
                 as.integer(layout), weights, if (layout == 2L) as.double(intercept),
                 nthreads))
  }
  n <- nrow(x)
  nf <- map$n_features
  out <- switch(layout + 1L, matrix(0, n, nf), matrix(0, nf, n), matrix(0, n, ncol(weights)))
  for (idx in row_blocks(n, rff_block_rows(n, max(nf, ncol(x))))) {
    xb <- as.matrix(x[idx, , drop = FALSE])
    if (layout == 0L) out[idx, ] <- transform_features(map, xb, nthreads)
    else if (layout == 1L) out[, idx] <- transform_features_t(map, xb, nthreads)
    else out[idx, ] <- feature_decision(map, xb, weights, intercept, nthreads)
  }
  out
}

# The C transform transposes the frequencies (a block at a time) on every
# call; a loop that maps many blocks of rows of one sparse x under one map
# (ridge's normal equations, k-means distances, predict() with a progress
# bar) computes t(W) once instead: with_sparse_frequencies(map, x, expr)
# holds it while expr is evaluated, and every sparse transform under that
# map uses it.  Nothing is held afterwards.
sparse_cache <- new.env(parent = emptyenv())

with_sparse_frequencies <- function(map, x, expr) {
  if (!is_sparse_matrix(x) || !inherits(map, "fourier_features") ||
      !is.null(sparse_cache$omega)) {
    return(expr)
  }
  sparse_cache$omega <- map$omega
  sparse_cache$wt <- t(map$omega)
  on.exit(rm(list = c("omega", "wt"), envir = sparse_cache))
  expr
}

# t(W) of the map if a loop holds it (identical() sees the same object at
# once), else NULL.
cached_frequencies_t <- function(map) {
  omega <- sparse_cache$omega
  if (!is.null(omega) && identical(omega, map$omega)) sparse_cache$wt
}

# --- scaling -----------------------------------------------------------------

# Column scales of sparse x (standard deviations about the column means, as
# for dense data; 1 for constant columns) with zero centres: dividing keeps
# the zeros.
sparse_scaling <- function(x) {
  n <- nrow(x)
  center <- Matrix::colMeans(x)
  s <- if (n > 1L) {
    # squared deviations: the non-zeros' plus (n - nnz) c^2 for the zeros
    xc <- methods::as(x, "CsparseMatrix")
    nnz <- diff(xc@p)
    xc@x <- (xc@x - rep(center, nnz))^2
    sqrt((Matrix::colSums(xc) + (n - nnz) * center^2) / (n - 1L))
  } else rep(1, ncol(x))
  s[!is.finite(s) | s <= sqrt(.Machine$double.eps) * pmax(1, abs(center))] <- 1
  list(center = rep(0, ncol(x)), scale = unname(as.double(s)))
}

# Scaling a sparse x: by columns where the centres are zero (a sparse fit),
# densified where a dense fit centres.
sparse_apply_scaling <- function(x, scaling) {
  if (any(scaling$center != 0)) {
    x <- as.matrix(x)
    x <- sweep(x, 2L, scaling$center, check.margin = FALSE)
    return(sweep(x, 2L, scaling$scale, "/", check.margin = FALSE))
  }
  by_row <- inherits(x, "dgRMatrix")
  x <- methods::as(x, "CsparseMatrix")
  # each column's values divided by its scale, the same division as sweep()
  x@x <- x@x / rep(scaling$scale, diff(x@p))
  if (by_row) methods::as(x, "RsparseMatrix") else x
}

# --- bandwidth rules on sparse rows ------------------------------------------

# The bandwidth rules of median_heuristic() (kernels.R) on sparse rows
# (already at most max_rows of them): "median", the median distance, and
# "sigest", kernlab's rule on the 10 % and 90 % quantiles of the squared
# distances.  The distances over the non-zeros equal dist()'s on the dense
# rows bit for bit, and the order statistics are taken as median() and
# quantile() take them, so sparse and dense data give the same sigma.
sparse_bandwidth <- function(x, name, rule = "median") {
  x <- if (inherits(x, "dgCMatrix") || inherits(x, "dgRMatrix")) x else as_sparse_data_matrix(x)
  if (identical(name, "cauchy")) {
    ws <- sparse_coordinate_distances(x)
    if (rule != "median") {
      # sigest: the distances that are not zero (as median_heuristic())
      nz <- ws$value != 0
      if (!any(nz)) return(0)
      ws <- list(value = ws$value[nz], cumweight = cumsum(diff(c(0, ws$cumweight))[nz]))
    }
    kth <- function(k) ws$value[which(ws$cumweight >= k)[1L]]
    total <- ws$cumweight[length(ws$cumweight)]
    if (rule == "median") {
      half <- total / 2
      return(if (total %% 2 == 1) kth(ceiling(half)) else mean(c(kth(half), kth(half + 1))))
    }
    q <- vapply(c(0.1, 0.9), function(p) {
      index <- 1 + (total - 1) * p            # quantile()'s type 7 on the squares
      lo <- floor(index)
      qs <- kth(lo)^2
      hi <- kth(ceiling(index))^2
      if (index > lo && hi != qs) (1 - (index - lo)) * qs + (index - lo) * hi else qs
    }, 0)
  } else {
    d <- .Call(C_sparse_dist, x, identical(name, "laplace"))
    if (rule == "median") return(stats::median(d))
    q <- stats::quantile(d[d != 0]^2, c(0.1, 0.9), names = FALSE)
  }
  sigest_bandwidth(q)
}

# The multiset of all per-column pairwise |x_ik - x_jk| (the Cauchy kernel's
# distances), sorted, with each column's zero-zero and zero-value pairs
# counted by weight instead of listed: value and cumulative weight.
sparse_coordinate_distances <- function(x) {
  x <- methods::as(x, "CsparseMatrix")
  n <- nrow(x)
  vals <- list()
  wts <- list()
  zero_pairs <- 0
  for (j in seq_len(ncol(x))) {
    k <- x@p[j + 1L] - x@p[j]
    v <- x@x[x@p[j] + seq_len(k)]
    zero_pairs <- zero_pairs + (n - k) * (n - k - 1) / 2
    if (k > 0L) {
      vals[[length(vals) + 1L]] <- abs(v)
      wts[[length(wts) + 1L]] <- rep(n - k, k)
      if (k > 1L) {
        dd <- as.vector(stats::dist(v))
        vals[[length(vals) + 1L]] <- dd
        wts[[length(wts) + 1L]] <- rep(1, length(dd))
      }
    }
  }
  v <- c(0, unlist(vals))
  w <- c(zero_pairs, unlist(wts))
  o <- order(v)
  keep <- w[o] > 0
  list(value = v[o][keep], cumweight = cumsum(w[o][keep]))
}

# --- new data ----------------------------------------------------------------

# Sparse newdata checked against what a fit remembers of its input (see
# newdata_matrix() in formula.R): the column count, and the names where both
# sides have them.  Formula fits take data frames only.
sparse_newdata <- function(input, newdata, arg = "newdata", fitted = "the model") {
  if (!is.null(input$terms)) {
    stop_arg(arg, "is a sparse matrix, but ", fitted, " was fitted with a formula: ",
             "give a data frame with the formula's variables")
  }
  x <- as_sparse_data_matrix(newdata, arg)
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
