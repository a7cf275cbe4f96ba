# Kernel objects: constructors, print methods, and what the C code needs.

new_kernel <- function(name, ..., shift_invariant = TRUE) {
  structure(list(name = name, ..., shift_invariant = shift_invariant),
            class = c(paste0(name, "_kernel"), "bochner_kernel"))
}

check_sigma <- function(sigma) {
  if (identical(sigma, "median")) return(sigma)
  if (is.character(sigma)) stop_arg("sigma", "must be a positive number or \"median\"")
  check_positive(sigma, "sigma")
}

#' Shift-invariant kernels
#'
#' Constructors for the shift-invariant kernels whose spectral densities
#' bochner samples.  Each returns a small object holding its parameters;
#' printing it shows the formula.
#'
#' | kernel | \eqn{k(x, y)} | spectral density of the frequencies \eqn{w} |
#' |---|---|---|
#' | Gaussian | \eqn{\exp(-\|x-y\|_2^2 / (2\sigma^2))} | \eqn{N(0, \sigma^{-2} I)} |
#' | Laplace | \eqn{\exp(-\|x-y\|_1 / \sigma)} | independent Cauchy\eqn{(0, 1/\sigma)} coordinates |
#' | Cauchy | \eqn{\prod_j 1 / (1 + (x_j - y_j)^2 / \sigma^2)} | independent Laplace\eqn{(0, 1/\sigma)} coordinates |
#' | Matérn | \eqn{\frac{2^{1-\nu}}{\Gamma(\nu)} z^\nu K_\nu(z)}, \eqn{z = \sqrt{2\nu}\|x-y\|_2/\sigma} | multivariate \eqn{t} with \eqn{2\nu} degrees of freedom, scale \eqn{1/\sigma} |
#'
#' Every kernel here has \eqn{k(x, x) = 1}.  The Matérn kernel uses closed
#' forms for \eqn{\nu = 1/2, 3/2, 5/2} (\eqn{\nu = 1/2} is
#' \eqn{\exp(-\|x-y\|_2/\sigma)}, the Euclidean cousin of the Laplace kernel)
#' and the modified Bessel function \eqn{K_\nu} otherwise; as
#' \eqn{\nu \to \infty} it tends to the Gaussian kernel.
#'
#' @param sigma Length scale, a positive number, or `"median"` for the median
#'   heuristic: the median distance between pairs of rows of the data
#'   (Euclidean for the Gaussian and Matérn kernels, \eqn{L_1} for the
#'   Laplace kernel, per coordinate for the Cauchy kernel), computed on an
#'   evenly spaced subsample of at most 1000 rows when a map or Gram matrix
#'   is computed, and stored in the result.
#' @param nu Smoothness of the Matérn kernel, a positive number, at most
#'   1000 (beyond that the kernel is the Gaussian to within 1e-3).
#' @return An object of class `c("<name>_kernel", "bochner_kernel")`.
#' @seealso [kernel_matrix()] for Gram matrices, [spectral_sample()] for the
#'   frequencies, [random_features()] for feature maps;
#'   [polynomial_kernel()] and [min_kernel()] for kernels that are not
#'   shift-invariant.
#' @examples
#' gaussian_kernel(sigma = 2)
#' matern_kernel(sigma = 1, nu = 5/2)
#' x <- matrix(rnorm(20), 10)
#' kernel_matrix(laplace_kernel("median"), x)[1:3, 1:3]
#' @name shift_invariant_kernels
NULL

#' @rdname shift_invariant_kernels
#' @export
gaussian_kernel <- function(sigma = 1) new_kernel("gaussian", sigma = check_sigma(sigma))

#' @rdname shift_invariant_kernels
#' @export
laplace_kernel <- function(sigma = 1) new_kernel("laplace", sigma = check_sigma(sigma))

#' @rdname shift_invariant_kernels
#' @export
cauchy_kernel <- function(sigma = 1) new_kernel("cauchy", sigma = check_sigma(sigma))

#' @rdname shift_invariant_kernels
#' @export
matern_kernel <- function(sigma = 1, nu = 3 / 2) {
  nu <- check_positive(nu, "nu")
  # the same bound as BOCHNER_MATERN_NU_MAX in src/bochner.h
  if (nu > 1000) {
    stop_arg("nu", "must be at most 1000 (got ", format(nu), "); for larger nu the Matern ",
             "kernel is the Gaussian kernel to within 1e-3: use gaussian_kernel(sigma)")
  }
  new_kernel("matern", sigma = check_sigma(sigma), nu = nu)
}

#' Polynomial, exponential dot-product and min kernels
#'
#' Kernels that are not shift-invariant, so Bochner's theorem does not apply;
#' their exact Gram matrices come from [kernel_matrix()], and
#' [random_features()] approximates them with random projections, sketches
#' or indicator features (see [polynomial_features]).
#'
#' `polynomial_kernel()` is a polynomial in the dot product: either
#' \eqn{(s\, x \cdot y + c)^p} with `degree` \eqn{p}, `scale` \eqn{s} and
#' `offset` \eqn{c}, or \eqn{\sum_{i=0}^{l} c_i (x \cdot y)^i} from a vector
#' of non-negative coefficients `coef`.  Either way the object stores the
#' coefficient vector (for the first form, \eqn{c_i = \binom{p}{i} s^i
#' c^{p-i}}).  Degree 0 is the constant kernel 1.
#'
#' `exponential_dot_kernel()` is \eqn{\exp(x \cdot y / \sigma^2)
#' = \sum_{n \ge 0} (x \cdot y)^n / (n!\, \sigma^{2n})}, a dot-product
#' kernel with infinitely many non-negative Maclaurin coefficients.  (The
#' Gaussian kernel with the same \eqn{\sigma} is this kernel times
#' \eqn{e^{-\|x\|^2/(2\sigma^2)} e^{-\|y\|^2/(2\sigma^2)}}.)  Its values grow fast with the norms of the data: scale
#' the data or choose \eqn{\sigma} so that \eqn{\|x\|^2/\sigma^2} stays
#' moderate.
#'
#' `min_kernel()` is \eqn{\mathrm{offset} + \sum_j \min(x_j, y_j)} for data
#' with non-negative coordinates.
#'
#' @param degree A non-negative whole number.
#' @param scale A positive number multiplying the dot product.
#' @param offset A non-negative number added to it (for `min_kernel()`, the
#'   constant added to the sum of minima).
#' @param coef Instead of `degree`, `scale` and `offset`: the coefficients
#'   \eqn{c_0, \dots, c_l}, non-negative (so that the kernel is positive
#'   definite) and not all zero.
#' @param sigma Scale of the exponential dot-product kernel, a positive
#'   number.
#' @return An object of class `c("polynomial_kernel", "bochner_kernel")`,
#'   `c("exponential_dot_kernel", "bochner_kernel")` or
#'   `c("min_kernel", "bochner_kernel")`.
#' @examples
#' polynomial_kernel(degree = 3)
#' polynomial_kernel(coef = c(0.5, 1, 0, 0.25))
#' exponential_dot_kernel(sigma = 2)
#' x <- matrix(runif(6), 3)
#' kernel_matrix(min_kernel(), x)
#' kernel_matrix(exponential_dot_kernel(), x)
#' @export
polynomial_kernel <- function(degree = 2, scale = 1, offset = 1, coef = NULL) {
  if (!is.null(coef)) {
    if (!missing(degree) || !missing(scale) || !missing(offset)) {
      stop("give either 'coef' or 'degree', 'scale' and 'offset', not both", call. = FALSE)
    }
    if (!is.numeric(coef) || length(coef) < 1L || anyNA(coef) || any(!is.finite(coef))) {
      stop_arg("coef", "must be a vector of finite numbers")
    }
    if (any(coef < 0)) stop_arg("coef", "must be non-negative, so that the kernel is positive definite")
    if (all(coef == 0)) stop_arg("coef", "has no positive coefficient: the kernel would be zero")
    coef <- as.double(coef)
    # trailing zeros do not change the kernel and would only cost work
    last <- max(c(1L, which(coef != 0)))
    coef <- coef[seq_len(last)]
    return(new_kernel("polynomial", coef = coef, degree = NULL, scale = NULL,
                      offset = NULL, shift_invariant = FALSE))
  }
  degree <- check_count(degree, "degree", lower = 0)
  scale <- check_positive(scale, "scale")
  offset <- check_number(offset, "offset", lower = 0)
  i <- 0:degree
  coef <- choose(degree, i) * scale^i * offset^(degree - i)
  new_kernel("polynomial", coef = coef, degree = degree, scale = scale,
             offset = offset, shift_invariant = FALSE)
}

#' @rdname polynomial_kernel
#' @export
exponential_dot_kernel <- function(sigma = 1) {
  new_kernel("exponential_dot", sigma = check_positive(sigma, "sigma"),
             shift_invariant = FALSE)
}

#' @rdname polynomial_kernel
#' @export
min_kernel <- function(offset = 1) {
  new_kernel("min", offset = check_number(offset, "offset", lower = 0),
             shift_invariant = FALSE)
}

#' @export
print.bochner_kernel <- function(x, ...) {
  cat(kernel_label(x), " kernel\n  k(x, y) = ", kernel_formula(x), "\n", sep = "")
  params <- kernel_parameter_text(x)
  if (nzchar(params)) cat("  ", params, "\n", sep = "")
  invisible(x)
}

kernel_label <- function(kernel) {
  switch(kernel$name, gaussian = "Gaussian", laplace = "Laplace", cauchy = "Cauchy",
         matern = "Matern", polynomial = "Polynomial", min = "Min",
         exponential_dot = "Exponential dot-product",
         kernel$name)
}

kernel_formula <- function(kernel) {
  switch(kernel$name,
    gaussian = "exp(-||x - y||^2 / (2 sigma^2))",
    laplace = "exp(-||x - y||_1 / sigma)",
    cauchy = "prod_j 1 / (1 + (x_j - y_j)^2 / sigma^2)",
    matern = switch(format(kernel$nu),
      "0.5" = "exp(-r / sigma),  r = ||x - y||",
      "1.5" = "(1 + sqrt(3) r / sigma) exp(-sqrt(3) r / sigma),  r = ||x - y||",
      "2.5" = "(1 + sqrt(5) r / sigma + 5 r^2 / (3 sigma^2)) exp(-sqrt(5) r / sigma),  r = ||x - y||",
      "2^(1 - nu) / Gamma(nu) z^nu K_nu(z),  z = sqrt(2 nu) ||x - y|| / sigma"),
    polynomial = if (!is.null(kernel$degree)) {
      sprintf("(%s x.y + %s)^%d", format(kernel$scale), format(kernel$offset), kernel$degree)
    } else {
      terms <- sprintf("%s (x.y)^%d", format(kernel$coef), seq_along(kernel$coef) - 1L)
      paste(terms[kernel$coef != 0], collapse = " + ")
    },
    exponential_dot = "exp(x.y / sigma^2)",
    min = sprintf("%s + sum_j min(x_j, y_j)", format(kernel$offset)))
}

# "Gaussian kernel, sigma = 1.5": the kernel in one phrase, for print methods.
kernel_summary <- function(kernel) {
  params <- kernel_parameter_text(kernel)
  paste0(kernel_label(kernel), " kernel", if (nzchar(params)) paste0(", ", params))
}

kernel_parameter_text <- function(kernel) {
  if (kernel$name == "exponential_dot") return(sprintf("sigma = %s", format(kernel$sigma)))
  if (!kernel$shift_invariant) return("")
  sigma <- if (is.character(kernel$sigma)) {
    "sigma = \"median\" (median heuristic, resolved on the data)"
  } else if (isTRUE(kernel$sigma_from_median)) {
    sprintf("sigma = %s (median heuristic)", format(kernel$sigma, digits = 4))
  } else {
    sprintf("sigma = %s", format(kernel$sigma))
  }
  if (kernel$name == "matern") sigma <- paste0(sigma, ", nu = ", format(kernel$nu))
  sigma
}

# Integer codes shared with src/bochner.h.
kernel_code <- function(kernel) {
  switch(kernel$name, gaussian = 1L, laplace = 2L, cauchy = 3L, matern = 4L,
         polynomial = 5L, min = 6L, exponential_dot = 7L,
         stop("unknown kernel '", kernel$name, "'", call. = FALSE))
}

kernel_parameters <- function(kernel) {
  switch(kernel$name,
    polynomial = if (!is.null(kernel$degree)) {
      c(0, kernel$degree, kernel$scale, kernel$offset)
    } else {
      c(1, kernel$coef)
    },
    min = kernel$offset,
    matern = c(kernel$sigma, kernel$nu),
    kernel$sigma)
}

# Replace sigma = "median" by its value on the data x.
resolve_kernel <- function(kernel, x) {
  if (identical(kernel$sigma, "median")) {
    kernel$sigma <- median_heuristic(x, kernel$name)
    kernel$sigma_from_median <- TRUE
  }
  kernel
}

median_heuristic <- function(x, name, max_rows = 1000L) {
  n <- nrow(x)
  if (n < 2L) stop_arg("sigma", "= \"median\" needs at least two rows of data")
  if (n > max_rows) x <- x[unique(round(seq(1, n, length.out = max_rows))), , drop = FALSE]
  m <- if (is_sparse_matrix(x)) sparse_bandwidth(x, name) else switch(name,
    laplace = stats::median(stats::dist(x, method = "manhattan")),
    cauchy = stats::median(unlist(lapply(seq_len(ncol(x)), function(j) stats::dist(x[, j])))),
    stats::median(stats::dist(x)))
  if (!(m > 0)) {
    stop_arg("sigma", "= \"median\" gave 0 (most rows of the data coincide); give sigma as a number")
  }
  m
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
  }
  nthreads <- check_threads(nthreads)
  if (kernel$name == "min") {
    if (any(x < 0)) stop_arg("x", "must be non-negative for the min kernel")
    if (!is.null(y) && any(y < 0)) stop_arg("y", "must be non-negative for the min kernel")
  }
  ny <- if (is.null(y)) nrow(x) else nrow(y)
  check_allocation(nrow(x), ny, "the kernel matrix",
                   arg = if (!is.null(y) && ny > nrow(x)) "y" else "x")
  resolved <- resolve_kernel(kernel, x)
  K <- .Call(C_kernel_matrix, kernel_code(resolved), kernel_parameters(resolved),
             x, y, nthreads)
  names <- list(rownames(x), if (is.null(y)) rownames(x) else rownames(y))
  if (!is.null(names[[1L]]) || !is.null(names[[2L]])) dimnames(K) <- names
  if (isTRUE(resolved$sigma_from_median)) attr(K, "sigma") <- resolved$sigma
  K
}
