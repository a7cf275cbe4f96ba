# Exact kernel values: bandwidth rules resolved on the data, and the Gram
# matrix (ARD inputs divided by their length scales, R/kernel-ard.R).

# Replace sigma = "median" by its value on the data x.
resolve_kernel <- function(kernel, x) {
  check_ard_length(kernel, ncol(x))
  if (identical(kernel$name, "spectral_mixture") && !sm_resolved(kernel)) {
    return(sm_initialise(kernel, x))
  }
  if (identical(kernel$sigma, "median")) {
    kernel$sigma <- median_heuristic(x, kernel$name)
    kernel$sigma_from_median <- TRUE
  } else if (identical(kernel$sigma, "sigest")) {
    kernel$sigma <- median_heuristic(x, kernel$name, rule = "sigest")
    kernel$sigma_from_sigest <- TRUE
  }
  kernel
}

# The bandwidth rules of check_sigma() on the kernel's distances between
# the rows of an evenly spaced subsample (deterministic, unlike
# kernlab::sigest's random pairs).
median_heuristic <- function(x, name, max_rows = 1000L, rule = "median") {
  n <- nrow(x)
  if (n < 2L) stop_arg("sigma", "= \"", rule, "\" needs at least two rows of data")
  if (n > max_rows) x <- x[unique(round(seq(1, n, length.out = max_rows))), , drop = FALSE]
  if (is_sparse_matrix(x)) {
    m <- sparse_bandwidth(x, name, rule)
  } else {
    distance <- kernel_table[[name]]$median
    d <- if (identical(distance, "coordinate")) {
      unlist(lapply(seq_len(ncol(x)), function(j) stats::dist(x[, j])))
    } else {
      stats::dist(x, method = if (is.null(distance)) "euclidean" else distance)
    }
    m <- if (rule == "median") {
      stats::median(d)
    } else {
      # kernlab's sigest() takes the quantiles of the distances between
      # distinct rows: with duplicated rows (discrete data) the zeros would
      # pull its lower quantile to 0
      d <- as.vector(d)
      sigest_bandwidth(stats::quantile(d[d != 0]^2, c(0.1, 0.9), names = FALSE))
    }
  }
  if (!(m > 0)) {
    stop_arg("sigma", "= \"", rule, "\" gave 0 (",
             if (rule == "median") "half the pairs of rows or more coincide"
             else "no two rows differ", "); give sigma as a number")
  }
  m
}

# sigest's bandwidth from the 10 % and 90 % quantiles of the squared
# distances (0 when there are none).
sigest_bandwidth <- function(q) {
  if (length(q) == 2L && !anyNA(q) && q[1L] > 0) 1 / sqrt(1 / q[2L] + 1 / q[1L]) else 0
}

#' Exact kernel (Gram) matrices
#'
#' Evaluates a kernel between every row of `x` and every row of `y` (or of
#' `x` itself), in C.  For the Gaussian and Matérn kernels the squared
#' distances come from one matrix product on centred data (the package's
#' own kernel, threaded, identical whatever BLAS R uses), clamped at
#' zero; the diagonal of `kernel_matrix(kernel, x)` is exact and the matrix
#' exactly symmetric.
#'
#' The result has \eqn{n_x n_y} entries of 8 bytes: 20000 rows against
#' themselves take 3.2 GB.  For data beyond that, use [random_features()].
#'
#' @param kernel A kernel object, such as [gaussian_kernel()].
#' @param x A numeric matrix or data frame, one row per point (a vector is
#'   one column).
#' @param y `NULL` (the default) for `x` against itself, or data with the
#'   same columns as `x`.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @return An \eqn{n_x \times n_y} matrix with the row names of `x` and `y`.
#'   With `sigma = "median"` the heuristic is computed on `x`, and the value
#'   used is attached as attribute `"sigma"`.
#' @examples
#' x <- matrix(rnorm(10), 5)
#' K <- kernel_matrix(gaussian_kernel(sigma = 1), x)
#' all.equal(K, exp(-as.matrix(dist(x))^2 / 2), check.attributes = FALSE)
#' kernel_matrix(matern_kernel(nu = 0.8), x, x[1:2, ])
#' @export
kernel_matrix <- function(kernel, x, y = NULL, nthreads = bochner_threads()) {
  check_kernel(kernel)
  x <- as_data_matrix(x, "x")
  if (!is.null(y)) {
    y <- as_data_matrix(y, "y")
    if (ncol(y) != ncol(x)) {
      stop_arg("y", "has ", ncol(y), " columns but 'x' has ", ncol(x))
    }
    # named columns pair by name (as predict() matches newdata), else by position
    if (!is.null(colnames(x)) && !is.null(colnames(y)) && !identical(colnames(x), colnames(y))) {
      missing <- setdiff(colnames(x), colnames(y))
      if (length(missing)) {
        stop_arg("y", "must have the columns of 'x'; it lacks ", paste(missing, collapse = ", "))
      }
      if (anyDuplicated(colnames(y))) stop_arg("y", "has a column name twice")
      y <- y[, colnames(x), drop = FALSE]
    }
  }
  nthreads <- check_threads(nthreads)
  resolved <- resolve_kernel(kernel, x)
  K <- gram_matrix(resolved, x, y, nthreads)
  names <- list(rownames(x), if (is.null(y)) rownames(x) else rownames(y))
  if (!is.null(names[[1L]]) || !is.null(names[[2L]])) dimnames(K) <- names
  if (isTRUE(resolved$sigma_from_median) || isTRUE(resolved$sigma_from_sigest)) {
    attr(K, "sigma") <- resolved$sigma
  }
  K
}

# A kernel matrix K with non-finite entries, refused naming where it was
# evaluated ('on'): the exponential dot-product kernel overflows.
check_finite_kernel <- function(K, on) {
  if (any(!is.finite(K))) {
    stop_arg("kernel", "gives non-finite values on ", on, " (an exponential dot-product kernel ",
             "overflows for large ||x||^2 / sigma^2): scale the data or increase sigma")
  }
}

# The Gram matrix for the package's own callers, whose kernel, matrices and
# thread count are already checked (kernel_matrix() is the entry that
# checks them): what depends on the data and the kernel together (the min
# kernel's domain, the allocation), a bandwidth rule resolved on x, one
# call into C.  No dimnames.
gram_matrix <- function(kernel, x, y = NULL, nthreads) {
  if (kernel$name == "min") {
    if (any(x < 0)) stop_arg("x", "must be non-negative for the min kernel")
    if (!is.null(y) && any(y < 0)) stop_arg("y", "must be non-negative for the min kernel")
  }
  ny <- if (is.null(y)) nrow(x) else nrow(y)
  check_allocation(nrow(x), ny, "the kernel matrix",
                   arg = if (!is.null(y) && ny > nrow(x)) "y" else "x")
  kernel <- resolve_kernel(kernel, x)
  .Call(C_kernel_matrix, kernel_code(kernel), kernel_parameters(kernel), kernel_inputs(kernel, x),
        kernel_inputs(kernel, y), nthreads)
}
