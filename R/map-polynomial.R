#' Random features for polynomial, dot-product and min kernels
#'
#' Bochner's theorem only covers shift-invariant kernels.  A kernel of the
#' dot product, \eqn{K(x, y) = \sum_{i \ge 0} c_i (x \cdot y)^i} with
#' \eqn{c_i \ge 0} ([polynomial_kernel()], [exponential_dot_kernel()]), and
#' the min kernel ([min_kernel()]) get their random features from other
#' constructions, through the same [random_features()] and
#' [predict()][predict.random_features]: choose one with `method`.  Each
#' map is unbiased, \eqn{E[z(x) \cdot z(y)] = K(x, y)}, and the error of
#' \eqn{Z Z^T} shrinks like \eqn{1/\sqrt{D}}.
#'
#' **`method = "product"`** (the default for polynomial kernels; Kakade's
#' construction).  A feature is
#' \deqn{\phi(x) = \sum_{i = 1}^{l} \sqrt{c_i} \prod_{j = 1}^{i} (w_{ij} \cdot x)}
#' with independent random vectors \eqn{w_{ij}} such that
#' \eqn{E[(w \cdot x)(w \cdot y)] = x \cdot y}: standard normal
#' (`projection = "gaussian"`, the default) or random signs
#' (`projection = "rademacher"`, lower variance).  Products of independent
#' projections have expectation \eqn{(x \cdot y)^i}, and different degrees
#' are uncorrelated, so \eqn{E[\phi(x)\phi(y)] = K(x, y) - c_0}.  The map
#' holds `D` independent copies scaled by \eqn{1/\sqrt{D}} and then one
#' constant column \eqn{\sqrt{c_0}}, which carries the constant term exactly
#' rather than adding noise to every copy.  Degrees with \eqn{c_i = 0} draw
#' no vectors; the map stores \eqn{d \cdot D \cdot \sum_{i: c_i > 0} i}
#' projection coordinates (for a degree-3 kernel with all coefficients
#' positive, \eqn{6 d D} numbers).
#'
#' **`method = "maclaurin"`** (Random Maclaurin features, Kar and Karnick
#' 2012; the only method for [exponential_dot_kernel()], and its default).
#' Each feature draws a degree \eqn{N \ge 1} and \eqn{N} random-sign vectors
#' \eqn{\omega_j}, and is \eqn{\sqrt{c_N / P(N)} \prod_{j=1}^{N} (\omega_j
#' \cdot x) / \sqrt{D}}; the constant column \eqn{\sqrt{c_0}} comes last, as
#' above.  Any law of \eqn{N} that is positive wherever \eqn{c_n > 0} gives
#' an unbiased map (importance sampling); Kar and Karnick use
#' \eqn{P(N = n) = 2^{-(n+1)}}.  Here \eqn{P(N = n) \propto c_n \rho^n} on
#' the degrees \eqn{n \ge 1} with \eqn{c_n > 0}, where \eqn{\rho} is the
#' largest squared norm of the rows of `x` at fit time (stored as `rho`):
#' each degree is drawn about as often as its term weighs on the largest
#' points, where the kernel and its errors are largest; no feature is spent
#' on a degree whose coefficient is zero; and every feature has the weight
#' \eqn{\sqrt{Z/\rho^N}} with \eqn{Z = \sum_{n \ge 1} c_n \rho^n}.  (With
#' the mean squared norm instead, rows of larger norm than the mean get too
#' few high-degree samples, and their errors grow exponentially in the
#' excess.)  For \eqn{\exp(x \cdot y / \sigma^2)}
#' this law is the Poisson law with mean \eqn{\rho/\sigma^2} restricted to
#' \eqn{N \ge 1}, drawn exactly by inversion.  `projection = "gaussian"` is
#' allowed here too.
#'
#' **`method = "tensorsketch"`** (Pham and Pagh 2013), for kernels built as
#' `polynomial_kernel(degree = p, scale = s, offset = c)`, i.e.
#' \eqn{(s\, x \cdot y + c)^p}.  The data are augmented to
#' \eqn{x' = (\sqrt{s}\, x, \sqrt{c})}, so that the kernel is
#' \eqn{(x' \cdot y')^p}; \eqn{p} independent count sketches of \eqn{x'}
#' into \eqn{D} buckets (hash \eqn{h_j} and signs \eqn{s_j} per
#' coordinate) are multiplied in the Fourier domain, which gives the count
#' sketch of \eqn{x'^{\otimes p}} without forming it: \eqn{O(p(d + D \log
#' D))} per row instead of \eqn{d^p}.  Only the independent random signs
#' matter for unbiasedness, so the hashes are drawn *balanced*: each sketch
#' puts the \eqn{d + 1} coordinates in distinct random buckets when
#' \eqn{d + 1 \le D} (and otherwise spreads them as evenly as possible).
#' This removes the rare but large errors that independent uniform hashes
#' cause in low dimension, when two large coordinates share a bucket and the
#' error of every diagonal entry jumps.  The features are unscaled and there
#' is no separate constant column (the offset is sketched with the rest),
#' so the map has `D` columns.  On unit-scale data its accuracy at a given
#' `D` is close to that of the other two methods, at a far lower cost when
#' \eqn{d} or the degree is large (the product construction computes
#' \eqn{d D \sum_i i} projection terms per row): in our measurements at
#' \eqn{d = 100}, degree 2 and \eqn{D = 40000}, 2.3 s for the product
#' construction against 0.48 s for TensorSketch, at a relative rms error of
#' 0.014 against 0.010 (scikit-learn's `PolynomialCountSketch`: 0.56 s,
#' 0.011).  The FFTs are the package's own
#' (R's C API has none): fastest when `D` has only the factors 2, 3, 5 and
#' other small primes (powers of two are best); a `D` with a prime factor
#' above 31 goes through Bluestein's algorithm at several times the cost.
#'
#' **Min kernel** \eqn{\mathrm{offset} + \sum_j \min(x_j, y_j)}, \eqn{x, y
#' \ge 0}.  For \eqn{0 \le x, y \le T}, \eqn{\min(x, y) = T\,
#' P_{t \sim U[0, T]}(t \le x, t \le y)}.  Per coordinate \eqn{j} the map
#' draws `D` thresholds \eqn{t_{jk} \sim U[0, T_j]}, with \eqn{T_j} the
#' largest value of column \eqn{j} in `x` at fit time (stored as `tmax`),
#' and has the features \eqn{\sqrt{T_j / D}\, 1\{t_{jk} \le x_j\}}; then the
#' constant column \eqn{\sqrt{\mathrm{offset}}}: \eqn{dD + 1} columns in
#' all, coordinate by coordinate.  **New data above \eqn{T_j} is clipped:**
#' every threshold lies below it, so a value \eqn{x_j > T_j} has the
#' features of \eqn{T_j}, and the map approximates
#' \eqn{\min(\min(x_j, T_j), \min(y_j, T_j))}.  Fit the map on data that
#' covers the range you will predict on.  Negative values are refused, at
#' fit and at predict time.  `method` is not used (`"indicator"` is
#' accepted).
#'
#' A kernel without a term of positive degree (degree 0, or `coef = c0`)
#' is the constant \eqn{c_0}: its map is the single constant column
#' \eqn{\sqrt{c_0}}, whatever the method.
#'
#' The maps store all their random draws, so they are plain lists that
#' survive [saveRDS()], and [set.seed()] (or `seed`) reproduces them.  In the
#' package's benchmarks and tests the accuracy of a map is the *relative max
#' error* \eqn{\max_{ij} |(Z Z^T)_{ij} - K_{ij}| / \max_{ij} |K_{ij}|}.
#'
#' @section Options passed through `...` of [random_features()]:
#' * `projection`: `"gaussian"` or `"rademacher"`, the law of the projection
#'   vectors of the `"product"` and `"maclaurin"` methods (defaults
#'   `"gaussian"` and `"rademacher"` respectively).
#'
#' @section Map objects:
#' The polynomial and exponential dot-product maps have class
#' `c("polynomial_features", "random_features")`: a list with the `kernel`,
#' `D`, `method`, `n_features`, `input`, and for `"product"` and
#' `"maclaurin"` the `projection` law, the \eqn{d \times V} matrix
#' `projections` (the vectors of feature 1, then of feature 2, ...),
#' `term_ptr`, `term_degree` and `term_weight` (feature \eqn{f} sums the
#' terms `term_ptr[f] + 1` to `term_ptr[f + 1]`, term \eqn{t} being
#' `term_weight[t]` times the product of the next `term_degree[t]`
#' projections), `constant` (or `NULL`) and, for `"maclaurin"`, `rho`; for
#' `"tensorsketch"` the `degree`, `scale`, `offset`, and the
#' \eqn{(d + 1) \times p} matrices `hash` (buckets 1 to `D`) and `sign`.
#' Min-kernel maps have class `c("min_features", "random_features")` with
#' `thresholds` (\eqn{D \times d}), `tmax` and `constant`.
#'
#' @references
#' Kar, P. and Karnick, H. (2012). Random feature maps for dot product
#' kernels. *Proceedings of AISTATS 2012*, 583–591.
#'
#' Pham, N. and Pagh, R. (2013). Fast and scalable polynomial kernels via
#' explicit feature maps. *Proceedings of KDD 2013*, 239–247.
#' @seealso [random_features()], [polynomial_kernel()],
#'   [kernel_approx_error()].
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200 * 5), 200) / sqrt(5)   # rows of norm about 1
#' k <- polynomial_kernel(degree = 2, scale = 1, offset = 1)
#' K <- kernel_matrix(k, x)
#' rel_max_error <- function(map) {
#'   Z <- predict(map, x)
#'   max(abs(tcrossprod(Z) - K)) / max(abs(K))
#' }
#' for (m in c("product", "maclaurin", "tensorsketch")) {
#'   map <- random_features(x, k, D = 2048, method = m)
#'   cat(m, ":", round(rel_max_error(map), 3), "\n")
#' }
#' # a coefficient vector, with random-sign projections
#' k2 <- polynomial_kernel(coef = c(0.5, 1, 0, 0.25))
#' map <- random_features(x, k2, D = 2000, projection = "rademacher")
#' map
#'
#' # the exponential dot-product kernel
#' map <- random_features(x, exponential_dot_kernel(sigma = 1), D = 2000)
#' kernel_approx_error(map, x)
#'
#' # the min kernel: new data above the fitted range is clipped
#' u <- matrix(runif(100 * 2), 100)
#' mmap <- random_features(u, min_kernel(offset = 1), D = 500)
#' dim(predict(mmap, u))
#' kernel_approx_error(mmap, u)
#' @name polynomial_features
NULL

polynomial_methods <- c("product", "maclaurin", "tensorsketch")

# A clear error for type = "pair" on maps that are not Fourier features.
check_no_fourier_type <- function(type, kernel) {
  if (identical(type, "pair")) {
    stop_arg("type", "= \"pair\" is a kind of Fourier features, which the ",
             kernel_label(kernel), " kernel does not have",
             if (kernel$name != "min") "; choose a construction with 'method'")
  }
}

# Resolve 'method' for a dot-product kernel: NULL gives the first of
# 'fits'; a known method outside 'fits' is refused with 'why'.
match_poly_method <- function(method, fits, why) {
  if (is.null(method)) return(fits[1L])
  m <- check_choice(method, polynomial_methods, "method")
  if (!m %in% fits) stop_arg("method", "= \"", m, "\" does not fit this kernel: ", why[[m]])
  m
}

match_projection <- function(projection, default) {
  if (is.null(projection)) return(default)
  check_choice(projection, c("gaussian", "rademacher"), "projection")
}

# d x V matrix of projection vectors with E[(w.x)(w.y)] = x.y.
draw_projections <- function(d, V, projection) {
  check_allocation(d, V, "the projection matrix", arg = "D")
  if (projection == "gaussian") {
    matrix(stats::rnorm(d * V), d, V)
  } else {
    matrix(sample(c(-1, 1), d * V, replace = TRUE), d, V)
  }
}

# Largest squared row norm of the training data (1 for all-zero data).
max_square_norm <- function(x) {
  rho <- max(if (is_sparse_matrix(x)) Matrix::rowSums(x^2) else rowSums(x^2))
  if (!(rho > 0)) 1 else rho
}

#' @export
build_feature_map.polynomial_kernel <- function(kernel, x, D, type, method = NULL,
                                                projection = NULL, ...) {
  check_no_dots(...)
  check_no_fourier_type(type, kernel)
  fits <- if (is.null(kernel$degree)) c("product", "maclaurin") else polynomial_methods
  method <- match_poly_method(method, fits, list(
    tensorsketch = paste0("TensorSketch sketches (scale x.y + offset)^degree; build the ",
                          "kernel with polynomial_kernel(degree, scale, offset), or use ",
                          "\"product\" or \"maclaurin\" for a coefficient vector")))
  if (method == "tensorsketch") {
    if (!is.null(projection)) {
      stop_arg("projection", "applies to the \"product\" and \"maclaurin\" methods, not to ",
               "TensorSketch, which uses count sketches")
    }
    return(build_tensorsketch(kernel, ncol(x), D))
  }
  coef <- kernel$coef
  if (method == "product") {
    build_product(coef, kernel, ncol(x), D, match_projection(projection, "gaussian"))
  } else {
    degrees <- which(coef[-1L] > 0)
    build_maclaurin(kernel, ncol(x), D, match_projection(projection, "rademacher"),
                    max_square_norm(x), c0 = coef[1L], degrees = degrees,
                    log_coef = log(coef[degrees + 1L]))
  }
}

#' @export
build_feature_map.exponential_dot_kernel <- function(kernel, x, D, type, method = NULL,
                                                     projection = NULL, ...) {
  check_no_dots(...)
  check_no_fourier_type(type, kernel)
  infinite <- paste0("exp(x.y / sigma^2) is an infinite series of degrees; only ",
                     "\"maclaurin\" samples its degrees")
  match_poly_method(method, "maclaurin", list(product = infinite, tensorsketch = infinite))
  build_maclaurin(kernel, ncol(x), D, match_projection(projection, "rademacher"),
                  max_square_norm(x), c0 = 1, degrees = NULL, log_coef = NULL)
}

new_polynomial_map <- function(kernel, D, method, n_features, ...) {
  if (n_features > .Machine$integer.max) stop_arg("D", "is too large")
  structure(list(kernel = kernel, D = D, method = method, ..., n_features = as.integer(n_features)),
            class = c("polynomial_features", "random_features"))
}

# Only a constant term: one exact column.
constant_only_map <- function(kernel, d, D, method, c0) {
  new_polynomial_map(kernel, D, method, 1L, projection = NULL,
                     projections = matrix(0, d, 0), term_ptr = 0L, term_degree = integer(),
                     term_weight = double(), constant = sqrt(c0))
}

build_product <- function(coef, kernel, d, D, projection) {
  degrees <- which(coef[-1L] > 0)
  c0 <- coef[1L]
  if (length(degrees) == 0L) return(constant_only_map(kernel, d, D, "product", c0))
  per_feature <- sum(degrees)
  W <- draw_projections(d, as.double(D) * per_feature, projection)
  nt <- length(degrees)
  new_polynomial_map(kernel, D, "product", D + (c0 > 0),
                     projection = projection, projections = W,
                     term_ptr = as.integer(seq(0, by = nt, length.out = D + 1L)),
                     term_degree = rep(as.integer(degrees), D),
                     term_weight = rep(sqrt(coef[degrees + 1L] / D), D),
                     constant = if (c0 > 0) sqrt(c0))
}

# Random Maclaurin features with P(N = n) proportional to c_n rho^n on the
# degrees n >= 1 with c_n > 0: 'degrees' and 'log_coef' for a finite
# series, NULL for exp(x.y / sigma^2) (a zero-truncated Poisson law).
build_maclaurin <- function(kernel, d, D, projection, rho, c0, degrees, log_coef) {
  if (is.null(degrees)) {
    mu <- rho / kernel$sigma^2
    log_z <- log(expm1(mu))   # sum_{n >= 1} rho^n / (n! sigma^(2n))
    if (!is.finite(log_z)) {
      stop_arg("kernel", "exp(x.y / sigma^2) overflows on this data (max ||x||^2 / sigma^2 = ",
               format(mu, digits = 4), "); scale the data or increase sigma")
    }
    # inversion of the upper tail: P(N > n) <= v, v uniform on (0, P(N >= 1))
    v <- stats::runif(D) * -expm1(-mu)
    N <- as.integer(stats::qpois(v, mu, lower.tail = FALSE))
  } else {
    if (length(degrees) == 0L) return(constant_only_map(kernel, d, D, "maclaurin", c0))
    logw <- log_coef + degrees * log(rho)
    top <- max(logw)
    log_z <- top + log(sum(exp(logw - top)))
    N <- degrees[sample.int(length(degrees), D, replace = TRUE, prob = exp(logw - top))]
    N <- as.integer(N)
  }
  W <- draw_projections(d, sum(as.double(N)), projection)
  new_polynomial_map(kernel, D, "maclaurin", D + (c0 > 0),
                     projection = projection, projections = W,
                     term_ptr = 0:D, term_degree = N,
                     term_weight = exp(0.5 * (log_z - N * log(rho) - log(D))),
                     constant = if (c0 > 0) sqrt(c0), rho = rho)
}

build_tensorsketch <- function(kernel, d, D) {
  p <- kernel$degree
  if (p == 0L) return(constant_only_map(kernel, d, D, "tensorsketch", 1))
  if (D > .Machine$integer.max %/% 4L) {
    stop_arg("D", "is too large for TensorSketch (at most ", .Machine$integer.max %/% 4L, ")")
  }
  # balanced hashes: each sketch spreads the d + 1 coordinates over the D
  # buckets as evenly as possible, in random buckets and random order (a
  # random injection when d + 1 <= D); the signs alone make the map unbiased
  hash <- vapply(seq_len(p), function(j) sample(rep_len(sample.int(D), d + 1L)),
                 integer(d + 1L))
  hash <- matrix(hash, d + 1L, p)
  sign <- matrix(sample(c(-1, 1), (d + 1) * p, replace = TRUE), d + 1, p)
  new_polynomial_map(kernel, D, "tensorsketch", D, degree = p, scale = kernel$scale,
                     offset = kernel$offset, hash = hash, sign = sign)
}

#' @export
transform_features.polynomial_features <- function(map, x, nthreads) {
  if (map$method == "tensorsketch" && !is.null(map$hash)) {
    return(.Call(C_tensorsketch_transform, x, map$hash, map$sign, map$D, map$scale,
                 map$offset, nthreads))
  }
  .Call(C_projection_transform, x, map$projections, map$term_ptr, map$term_degree, map$term_weight,
        map$constant, nthreads)
}

#' @export
feature_map_title.polynomial_features <- function(map) {
  switch(map$method,
    product = sprintf("Random polynomial features, products of %s projections, D = %d",
                      if (is.null(map$projection)) "no" else map$projection, map$D),
    maclaurin = sprintf("Random Maclaurin features, %s projections, D = %d",
                        if (is.null(map$projection)) "no" else map$projection, map$D),
    tensorsketch = sprintf("TensorSketch features, D = %d", map$D))
}

#' @export
build_feature_map.min_kernel <- function(kernel, x, D, type, method = NULL, ...) {
  check_no_dots(...)
  check_no_fourier_type(type, kernel)
  if (!is.null(method) && !identical(method, "indicator")) {
    stop_arg("method", "does not apply to the min kernel, whose features are indicators ",
             "1{t <= x}; leave it out")
  }
  check_min_data(x, "x")
  d <- ncol(x)
  if (as.double(d) * D + 1 > .Machine$integer.max) {
    stop_arg("D", "is too large: the min-kernel map has ncol(x) * D + 1 = ",
             format(as.double(d) * D + 1, big.mark = ","), " columns")
  }
  tmax <- apply(x, 2L, max)
  thresholds <- matrix(stats::runif(as.double(D) * d), D, d) * rep(tmax, each = D)
  offset <- kernel$offset
  structure(list(kernel = kernel, D = D, thresholds = thresholds, tmax = unname(tmax),
                 constant = if (offset > 0) sqrt(offset),
                 n_features = as.integer(d * D + (offset > 0))),
            class = c("min_features", "random_features"))
}

check_min_data <- function(x, arg) {
  if (is_sparse_matrix(x)) {
    # the stored values: the first negative one in column order, as which()
    tx <- methods::as(x, "TsparseMatrix")
    neg <- which(tx@x < 0)
    if (!length(neg)) return(invisible())
    k <- neg[order(tx@j[neg], tx@i[neg])][1L]
    where <- c(tx@i[k], tx@j[k]) + 1L
  } else {
    if (!any(x < 0)) return(invisible())
    where <- which(x < 0, arr.ind = TRUE)[1L, ]
  }
  stop_arg(arg, "must be non-negative for the min kernel (the first negative value is at row ",
           where[1L], ", column ", where[2L], ")")
}

#' @export
transform_features.min_features <- function(map, x, nthreads) {
  check_min_data(x, "newdata")
  .Call(C_min_transform, x, map$thresholds, map$tmax, map$constant, nthreads)
}

#' @export
feature_map_title.min_features <- function(map) {
  sprintf("Min-kernel indicator features sqrt(T/D) 1{t <= x}, D = %d per input column", map$D)
}
