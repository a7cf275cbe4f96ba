#' Random feature maps
#'
#' Fits a random feature map \eqn{z} for a kernel, so that
#' \eqn{z(x) \cdot z(y) \approx k(x, y)}; [predict()][predict.random_features]
#' applies it to data.  The kernel's class picks the construction.  For the
#' polynomial, exponential dot-product and min kernels, which are not
#' shift-invariant, see [polynomial_features]: random projections and
#' sketches (`method = "product"`, `"maclaurin"` or `"tensorsketch"`) and
#' indicator features.  For a shift-invariant kernel (Gaussian, Laplace,
#' Cauchy, Matérn) the map uses random Fourier features: `D` frequencies
#' \eqn{w_j} drawn from the kernel's spectral density ([spectral_sample()])
#' and
#' * `type = "phase"`: \eqn{z(x) = \sqrt{2/D}\,(\cos(w_j \cdot x + b_j))_{j=1}^D}
#'   with phases \eqn{b_j \sim U[0, 2\pi]}: `D` columns;
#' * `type = "pair"`: \eqn{z(x) = \sqrt{1/D}\,(\cos(w_j \cdot x), \sin(w_j \cdot x))_{j=1}^D},
#'   the cosine and sine of each frequency side by side: `2 * D` columns.
#'
#' Both are unbiased, \eqn{E[z(x) \cdot z(y)] = k(x, y)}.  Each term of the
#' pair map's inner product is \eqn{\cos(w \cdot (x - y))}, of variance
#' \eqn{v}; the phase map's adds \eqn{\cos(w \cdot (x + y) + 2b)}, so its
#' variance is \eqn{v + 1/2}.  With \eqn{m} columns the estimate's variance
#' is \eqn{2v/m} for the pair map against \eqn{(v + 1/2)/m}: much lower for
#' nearby points (\eqn{v \to 0}), equal only where the kernel has
#' decayed to zero (\eqn{v \to 1/2} for the Gaussian kernel).
#' See [rff_dimension()] for how many features a given accuracy needs.
#'
#' `sampling` says how the frequencies are drawn.  `"iid"`, `"orthogonal"`
#' and `"qmc"` keep the estimate unbiased (`"structured"` nearly so); the
#' last three lower its variance for the same `D`:
#' * `"iid"`: independent draws from the spectral density.
#' * `"orthogonal"`, orthogonal random features (Yu et al., NeurIPS 2016;
#'   Choromanski et al., AISTATS 2018), for the
#'   isotropic kernels, Gaussian and Matérn.  The frequencies come in blocks
#'   of \eqn{d}: the directions within a block are the rows of a uniformly
#'   random orthogonal matrix (Gram-Schmidt on a Gaussian matrix, so the
#'   same numbers for any BLAS), and each is scaled by an independent length
#'   from the kernel's radial law (\eqn{\chi_d / \sigma} for the Gaussian
#'   kernel, the length of a multivariate \eqn{t} draw for the Matérn), so
#'   each frequency still has the spectral density.  Orthogonality makes the
#'   terms of the estimate from one block negatively correlated instead of
#'   independent, which lowers its variance, markedly where
#'   \eqn{\|x - y\|}{||x - y||} is comparable with \eqn{\sigma} in many
#'   dimensions.  The Laplace and Cauchy
#'   kernels have product densities that are not rotation-invariant; for
#'   them it is an error (use `"qmc"`).  Drawing costs \eqn{O(D d^2)}
#'   instead of \eqn{O(D d)}; the transform is the same.
#' * `"qmc"`, randomised quasi-Monte Carlo (Avron, Sindhwani, Yang and
#'   Mahoney, JMLR 2016), for all four shift-invariant kernels: the
#'   frequencies are a Halton sequence whose digits are scrambled at random,
#'   pushed through the inverse distribution function of the spectral
#'   density coordinate by coordinate (the Matérn kernel's radius takes one
#'   more coordinate, and the phase map's phases the next).  The scrambling
#'   makes every point uniform, so the estimate is unbiased, while the points
#'   fill the space more evenly than independent ones: in a few dimensions
#'   the error falls faster than \eqn{1/\sqrt{D}}{1/sqrt(D)}, close to \eqn{1/D} in
#'   two.  The
#'   gain shrinks as \eqn{d} grows and for heavy-tailed densities (the
#'   Laplace kernel's Cauchy frequencies).
#' * `"structured"`, structured orthogonal random features (SORF, Yu et al.
#'   2016; in the spirit of Fastfood, Le, Sarlós and Smola 2013) for the
#'   isotropic kernels, Gaussian and Matérn.  The input is padded with zeros
#'   to \eqn{p = 2^{\lceil \log_2 d \rceil}}{p = 2^ceiling(log2(d))} (at
#'   least 32: smaller Hadamard blocks are far from random rotations)
#'   dimensions, and each block of \eqn{p} frequencies is the rows of
#'   \eqn{\mathrm{diag}(r/\sigma) H D_1 H D_2 H D_3}{diag(r / sigma) H D1 H
#'   D2 H D3}, where \eqn{H} is the normalised Walsh-Hadamard matrix,
#'   \eqn{D_i}{Di} are diagonal matrices of random signs and the norms
#'   \eqn{r_j} are drawn independently from the kernel's radial law in
#'   \eqn{p} dimensions (\eqn{\chi_p}{chi_p} for the Gaussian kernel,
#'   \eqn{\chi_p \sqrt{2\nu/\chi^2_{2\nu}}}{chi_p sqrt(2 nu / chi^2_(2 nu))}
#'   for the Matérn kernel); the last block is cut to `D` frequencies in all.
#'   The map stores only the signs, norms and phases (memory \eqn{O(D)}
#'   instead of \eqn{O(dD)}), and the transform uses fast Walsh-Hadamard
#'   transforms: \eqn{O(D \log p)}{O(D log p)} operations per row instead of
#'   \eqn{O(dD)}: with \eqn{d} in the hundreds or more, several times faster
#'   than `"iid"`.  Within a block the frequencies are exactly orthogonal.
#'   Were the rows of \eqn{H D_1 H D_2 H D_3}{H D1 H D2 H D3} uniform on the
#'   sphere, each frequency's first \eqn{d} coordinates (the only ones a
#'   padded input sees) would follow the kernel's spectral law exactly; they
#'   are only approximately uniform (each coordinate has mean 0 and variance
#'   \eqn{1/p}, so \eqn{E[w w^T] = \sigma^{-2} I}{E[w w'] = I / sigma^2} for
#'   the Gaussian kernel, but the higher moments differ), so the
#'   approximation is not exactly unbiased: Yu et al. bound the bias by
#'   \eqn{O(\|x - y\| / (\sigma \sqrt{p}))}{O(||x - y|| / (sigma sqrt(p)))}.
#'   With \eqn{p \ge 32} we measured it below 0.01, within two to three
#'   standard errors of 3000 replicates (Gaussian and Matérn kernels, \eqn{d}
#'   from 1 to 64, \eqn{\|x - y\|}{||x - y||} up to \eqn{3\sigma}{3 sigma}; a
#'   kernel value is 1 at 0; checked by the package's tests), while
#'   the variance is lower than with `"iid"` frequencies.  The Laplace and
#'   Cauchy kernels, whose spectral densities have independent coordinates
#'   rather than a radial law, are refused: use `"qmc"` or `"iid"` for them.
#'   The result has class `c("structured_features", "random_features")` and
#'   works wherever a map from `random_features()` does.
#'
#' The map stores the frequencies, the phases and a resolved `sigma`
#' (the median heuristic is computed on `x`), so it is an ordinary list that
#' survives [saveRDS()] and predicts the same anywhere.  The transform is in
#' C: for blocks of rows and frequencies, one product (the package's own
#' kernel, not R's BLAS) and then the
#' phase, cosine and scale in one pass while the block is in cache.
#'
#' @param x Training data: a numeric matrix, a data frame of numeric
#'   columns, a numeric vector (one column), or a sparse matrix of the
#'   Matrix package (see [sparse_input]); the formula method takes a
#'   one-sided `formula = ~ a + b` with `data` instead (factors are one-hot
#'   coded, see [formula_interface]).  Only the number and
#'   names of its columns, and the data for `sigma = "median"`, are used.
#' @param kernel A kernel object; the default is [gaussian_kernel()] with the
#'   median heuristic.
#' @param D Number of random frequencies, a positive whole number (for
#'   the other kernels, see [polynomial_features]).
#' @param type `"phase"` or `"pair"`, see Details; Fourier features only.
#' @param sampling How the frequencies of a Fourier map are drawn: `"iid"`
#'   (independently from the spectral density, the default), `"orthogonal"`
#'   (orthogonal random features: blocks of orthogonal directions with
#'   norms from the kernel's radial law), `"structured"` (structured
#'   orthogonal features from products of Walsh-Hadamard and random sign
#'   matrices: a faster transform) or `"qmc"` (randomised quasi-Monte Carlo
#'   points pushed through the spectral law).  See the Details for which
#'   kernels each applies to.
#' @param seed `NULL` to use the current random number stream, or a number to
#'   draw from `set.seed(seed)` and leave the user's stream as it was.
#' @param method `NULL` (the kernel's default construction) or, for
#'   polynomial and exponential dot-product kernels, `"product"`,
#'   `"maclaurin"` or `"tensorsketch"`; see [polynomial_features].  Asking
#'   for a method that does not fit the kernel is an error.
#' @param ... Options of a particular construction (such as `projection`
#'   for the polynomial methods, see [polynomial_features]); the formula
#'   method passes them on to the default method.  Arguments no
#'   construction knows are an error.
#' @return For a shift-invariant kernel, an object of class
#'   `c("fourier_features", "random_features")`: a list with the `kernel` (sigma resolved), `D`, `type`, `omega` (the
#'   \eqn{d \times D} frequency matrix, one column per frequency), `phase`
#'   (the \eqn{b_j}, or `NULL` for the pair map), `scale`, `n_features` (the
#'   number of output columns), and `input` (the column names, and for the
#'   formula method its terms and factor levels).  With
#'   `sampling = "structured"`, class `c("structured_features",
#'   "random_features")`: `kernel`, `D`, `type`, `sampling`, `p` (the padded
#'   dimension), `sign` (an integer \eqn{p \times 3 \times B}{p x 3 x B}
#'   array of \eqn{\pm 1}{+-1}: the diagonals of \eqn{D_1, D_2, D_3}{D1, D2, D3}
#'   of each of the \eqn{B} blocks), `radial` (the \eqn{r_j / \sigma}),
#'   `phase`, `scale`, `n_features` and `input`.  Other kernels give the
#'   classes described in [polynomial_features].
#' @references
#' Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S.
#' (2016). Orthogonal random features. \emph{Advances in Neural Information
#' Processing Systems 29}.
#'
#' Le, Q., Sarlós, T. and Smola, A. (2013). Fastfood: approximating kernel
#' expansions in loglinear time. \emph{Proceedings of the 30th International
#' Conference on Machine Learning}.
#' @seealso [predict.random_features()], [kernel_approx_error()],
#'   [rff_dimension()], [polynomial_features].
#' @examples
#' set.seed(42)
#' x <- matrix(rnorm(400), 200, 2)
#' map <- random_features(x, gaussian_kernel(sigma = 1), D = 2000)
#' map
#' Z <- predict(map, x)
#' dim(Z)
#' # the inner products approximate the exact kernel
#' K <- kernel_matrix(gaussian_kernel(sigma = 1), x)
#' max(abs(tcrossprod(Z) - K))
#' kernel_approx_error(map, x)
#'
#' # a formula with a data frame
#' map2 <- random_features(~ Sepal.Length + Petal.Width, data = iris,
#'                         kernel = laplace_kernel(), D = 100, type = "pair")
#' dim(predict(map2, iris[1:5, ]))
#' @export
random_features <- function(x, ...) UseMethod("random_features")

#' @rdname random_features
#' @export
random_features.default <- function(x, kernel = gaussian_kernel("median"), D = 500,
                                    type = c("phase", "pair"),
                                    sampling = c("iid", "orthogonal", "structured", "qmc"),
                                    seed = NULL, method = NULL, ...) {
  x <- as_data_matrix(x, "x", sparse = TRUE)
  check_kernel(kernel)
  D <- check_count(D, "D")
  type <- check_choice(type, c("phase", "pair"), "type")
  sampling <- check_choice(sampling, c("iid", "orthogonal", "structured", "qmc"), "sampling")
  resolved <- resolve_kernel(kernel, x)
  map <- with_seed(seed, draw_feature_map(x, resolved, D, type, sampling, method, list(...)))
  map$call <- generic_call(match.call())
  map
}

# The map of a resolved kernel with checked settings, drawn from the
# current random stream: the worker behind random_features(), which the
# package's own callers (the machines, k-means, the statistics, the recipes
# steps) use instead of re-entering it.  'method' and 'sampling' are passed
# on only when given, so that builders of kernels without them need not
# know them; unknown options in 'opts' are refused by the builder.
draw_feature_map <- function(x, resolved, D, type = "phase", sampling = "iid", method = NULL,
                             opts = list()) {
  if (!is.null(method)) opts$method <- method
  if (sampling != "iid") opts$sampling <- sampling
  map <- do.call(build_feature_map, c(list(resolved, x, D, type), opts))
  map$input <- input_description(x)
  map
}

# The checked options of a Fourier map's construction passed through
# another function's '...' (type, sampling, method; the builder refuses the
# rest): checked at that function's entry.
feature_map_options <- function(type = "phase", sampling = "iid", method = NULL, ...) {
  list(type = check_choice(type, c("phase", "pair"), "type"),
       sampling = check_choice(sampling, c("iid", "orthogonal", "structured", "qmc"), "sampling"),
       method = method, opts = list(...))
}

#' @rdname formula_interface
#' @export
random_features.formula <- function(formula, data = NULL, ..., subset,
                                    na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), random_features.default, na.action, ...,
              no_response = "random features use no response")
}

# Construct the map for a resolved kernel; other kernel families add methods
# (R/polynomial.R).  Options of a construction arrive in '...'.
build_feature_map <- function(kernel, x, D, type, ...) UseMethod("build_feature_map")

#' @export
build_feature_map.default <- function(kernel, x, D, type, method = NULL, sampling = "iid",
                                      ...) {
  check_no_dots(...)
  check_shift_invariant(kernel)
  if (!is.null(method)) {
    stop_arg("method", "does not apply to the ", kernel_label(kernel), " kernel: ",
             "its random Fourier features take 'type' (\"phase\" or \"pair\"); ",
             "the methods \"product\", \"maclaurin\" and \"tensorsketch\" are for ",
             "polynomial kernels")
  }
  d <- ncol(x)
  n_features <- if (type == "pair") 2 * D else D
  check_allocation(d, D, "the frequency matrix", arg = "D")
  check_memory(list("the frequencies" = c(d + 1, D)), "random_features()", "D")
  if (n_features > .Machine$integer.max) stop_arg("D", "is too large")
  if (sampling == "structured") return(build_structured_map(kernel, x, D, type))
  draws <- sample_frequencies(kernel, D, d, type, sampling)
  structure(list(kernel = kernel, D = D, type = type, sampling = sampling,
                 omega = draws$omega, phase = draws$phase,
                 scale = sqrt(kernel_variance(kernel) * (if (type == "phase") 2 / D else 1 / D)),
                 n_features = as.integer(n_features)),
            class = c("fourier_features", "random_features"))
}

#' Apply a random feature map to data
#'
#' @param object A map from [random_features()].
#' @param newdata Data with the columns the map was fitted on: a matrix, a
#'   data frame or a vector for maps fitted on those (columns are matched by
#'   name where both have names, otherwise by position), or a data frame with
#'   the formula's variables for maps fitted with a formula.
#' @param nthreads Number of threads, see [bochner_threads()].  The result
#'   does not depend on it.
#' @param ... Unused.
#' @return The \eqn{n \times} `object$n_features` feature matrix \eqn{Z},
#'   so that `tcrossprod(Z)` approximates the kernel's Gram matrix.
#' @examples
#' map <- random_features(matrix(rnorm(20), 10), gaussian_kernel(1), D = 50)
#' predict(map, matrix(c(0, 1), 1))
#' @export
predict.random_features <- function(object, newdata, nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(...)
  if (missing(newdata)) stop_arg("newdata", "is required: a feature map keeps no training data")
  x <- map_input_matrix(object, newdata)
  nthreads <- check_threads(nthreads)
  check_memory(list("the feature matrix" = c(nrow(x), object$n_features)),
               "predict() of the map", "newdata",
               "transform it in pieces (data_chunks()), or use a map with fewer features")
  check_allocation(nrow(x), object$n_features, "the feature matrix", arg = "newdata")
  Z <- transform_with_progress(object, x, nthreads)   # R/progress.R
  rownames(Z) <- rownames(x)
  Z
}

transform_features <- function(map, x, nthreads) {
  if (is_sparse_matrix(x)) return(sparse_transform(map, x, nthreads, 0L))
  UseMethod("transform_features")
}

# Features computed once and held: the rows passed to the helpers that take
# a map and rows are then the n x nf feature matrix itself.  For a fit that
# would otherwise compute the same features once per helper
# (falkon_fit_loo(): four times, half of its time on 2000 rows).
held_features <- function(nf) {
  structure(list(n_features = as.integer(nf)), class = c("held_features", "random_features"))
}

#' @export
transform_features.held_features <- function(map, x, nthreads) x

#' @export
transform_features.fourier_features <- function(map, x, nthreads) {
  .Call(C_rff_transform, x, map$omega, map$phase, map$scale, FALSE, nthreads)
}

# Rows per block when features are computed in pieces: at most 32 MB.
rff_block_rows <- function(n, nf) max(1L, min(n, 2^22 %/% nf))

# The row indices 1..n (n >= 1) cut into consecutive blocks of at most 'rows'.
row_blocks <- function(n, rows) {
  lapply(seq(1L, n, by = rows), function(i0) i0:min(n, i0 + rows - 1L))
}

# The one block-transform loop of the R side: block(rows of x) for
# consecutive row blocks small enough that a block's 'nf' features take at
# most 32 MB (rff_block_rows()), each giving 'ncol' columns, gathered into
# an n x ncol matrix, or its transpose with 'transposed'.  One block when
# all rows fit.
transform_in_blocks <- function(x, nf, ncol, block, transposed = FALSE) {
  n <- nrow(x)
  rows <- rff_block_rows(n, nf)
  if (rows >= n) return(if (transposed) t(block(x)) else block(x))
  out <- if (transposed) matrix(0, ncol, n) else matrix(0, n, ncol)
  for (idx in row_blocks(n, rows)) {
    value <- block(x[idx, , drop = FALSE])
    if (transposed) out[, idx] <- t(value) else out[idx, ] <- value
  }
  out
}

# t(Z), n_features x n, as the SVM solver wants it (a sample's features
# contiguous): in C for Fourier maps, in row blocks otherwise.
transform_features_t <- function(map, x, nthreads) {
  if (is_sparse_matrix(x)) return(sparse_transform(map, x, nthreads, 1L))
  UseMethod("transform_features_t")
}

#' @export
transform_features_t.default <- function(map, x, nthreads) {
  transform_in_blocks(x, map$n_features, map$n_features,
                      function(xb) transform_features(map, xb, nthreads), transposed = TRUE)
}

#' @export
transform_features_t.fourier_features <- function(map, x, nthreads) {
  .Call(C_rff_transform, x, map$omega, map$phase, map$scale, TRUE, nthreads)
}

# Z %*% weights + intercept without holding Z: a row block of features at a
# time (in C, fused per block of rows, for Fourier maps), multiplied by the
# package's own product, so the values are identical for any BLAS, thread
# count and split of the rows.
feature_decision <- function(map, x, weights, intercept, nthreads) {
  if (is_sparse_matrix(x)) return(sparse_transform(map, x, nthreads, 2L, weights, intercept))
  UseMethod("feature_decision")
}

#' @export
feature_decision.default <- function(map, x, weights, intercept, nthreads) {
  transform_in_blocks(x, map$n_features, ncol(weights), function(xb) {
    .Call(C_matprod, transform_features(map, xb, nthreads), weights, nthreads) +
      rep(intercept, each = nrow(xb))
  })
}

#' @export
feature_decision.fourier_features <- function(map, x, weights, intercept, nthreads) {
  .Call(C_rff_decision, x, map$omega, map$phase, map$scale, weights, as.double(intercept),
        nthreads)
}

# newdata as the numeric matrix the map was fitted on, or a clear error.
map_input_matrix <- function(map, newdata, arg = "newdata") {
  if (is_sparse_matrix(newdata)) return(sparse_newdata(map$input, newdata, arg, "the map"))
  newdata_matrix(map$input, newdata, arg, fitted = "the map")
}
