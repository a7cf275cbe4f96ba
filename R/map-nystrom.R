#' Nyström feature maps
#'
#' Fits a Nyström feature map for a kernel: \eqn{m} landmark points
#' \eqn{L} chosen from the data, and the map
#' \deqn{z(x) = k(x, L)\, K_{LL}^{+1/2},}
#' where \eqn{K_{LL}} is the exact Gram matrix of the landmarks and
#' \eqn{K_{LL}^{+1/2} = U_r \Lambda_r^{-1/2} U_r^T} the square root of its
#' pseudo-inverse from the eigendecomposition \eqn{K_{LL} = U \Lambda U^T}
#' (Williams & Seeger 2001).  Then
#' \eqn{z(x) \cdot z(y) = k(x, L) K_{LL}^{+} k(L, y)}: the kernel
#' projected onto the span of the landmarks in feature space, exact when
#' \eqn{x} or \eqn{y} is a landmark.  The map is an object of class
#' `"random_features"`, so [predict()][predict.random_features] and
#' [kernel_approx_error()] apply to it as to any other map; `predict()`
#' gives the \eqn{n \times m} feature matrix (`m` columns whatever the
#' rank, so that maps with the same `m` are interchangeable).
#'
#' **Cost.**  Fitting takes the \eqn{m \times m} Gram matrix and one
#' symmetric eigendecomposition, \eqn{O(m^2 d + m^3)}, once (plus the cost
#' of choosing the landmarks, below); `predict()` on \eqn{n} rows takes
#' \eqn{n m} kernel evaluations (\eqn{O(n m d)}) and an
#' \eqn{n \times m} by \eqn{m \times m} product, in row blocks, in C (the
#' package's own kernel and product, identical for any BLAS, thread count
#' and split of the rows).
#'
#' **Nyström or random Fourier features?**  Random Fourier features are
#' drawn without looking at the data, so their error decays like
#' \eqn{1/\sqrt{D}} wherever the data are.  Nyström adapts to the data: when
#' the Gram matrix has a fast-decaying spectrum (smooth kernels, data near a
#' low-dimensional set, clusters, a large bandwidth) a few hundred
#' landmarks often approximate it far better than thousands of Fourier
#' features, and it works for every kernel with an exact Gram matrix,
#' including the polynomial, exponential dot-product and min kernels.
#' Random features are cheaper per column (\eqn{O(d)} against a kernel
#' evaluation plus \eqn{O(m)} for the normalisation), need no pass over
#' the data to fit, and do better when the spectrum is flat (a small
#' bandwidth relative to the spread of the data).
#'
#' **Landmarks.**
#' * `"uniform"`: \eqn{m} distinct rows of `x` drawn uniformly (Williams &
#'   Seeger 2001).
#' * `"kmeans"`: kernel k-means++ seeding (Arthur & Vassilvitskii 2007),
#'   used as Nyström landmarks (Oglic & Gärtner 2017): the first landmark
#'   uniform, each next one drawn with probability proportional to the
#'   squared feature-space distance to the nearest landmark chosen,
#'   \eqn{k(x, x) - 2 k(x, l) + k(l, l)}.  That takes \eqn{n m} kernel
#'   evaluations; for more than \eqn{\max(20 m, 10000)} rows the landmarks
#'   are drawn from a uniform subsample of that many rows, which keeps the
#'   cost at \eqn{O(m^2 d)} kernel work per landmark set while still
#'   sampling every cluster of more than about \eqn{n / (20 m)} points.
#' * `"leverage"`: recursive ridge leverage score sampling (Musco & Musco
#'   2017, RLS-Nyström): the data are halved recursively; from the
#'   smallest half upwards, each level computes ridge leverage scores of
#'   its points with respect to the landmarks sampled at the level below,
#'   at the ridge \eqn{\lambda} that the paper's algorithm chooses (the
#'   trace of the weighted landmark Gram matrix minus its top
#'   \eqn{k = \lceil m / (4 \log m) \rceil} eigenvalues, divided by
#'   \eqn{k}, as in the authors' code: \eqn{O(k \log k)} samples suffice
#'   for a rank-\eqn{k} guarantee, and each level's sample stays near
#'   \eqn{m}), and
#'   samples points with those probabilities (oversampled by
#'   \eqn{\log m}).  At the top level exactly \eqn{m} distinct rows are
#'   drawn, without replacement, with probabilities proportional to the
#'   scores (topped up uniformly if fewer than \eqn{m} points have a
#'   positive score, e.g. many duplicated rows).  The cost is
#'   \eqn{O(n m)} kernel evaluations and \eqn{O(n m^2)} arithmetic;
#'   leverage sampling pays off when clusters or regions of the data differ
#'   a lot in size, where uniform sampling spends its landmarks on the
#'   large ones.
#' * `"rpcholesky"`: randomly pivoted Cholesky (Chen, Epperly, Tropp and
#'   Webber 2025): each landmark is drawn in proportion to the diagonal of
#'   the residual \eqn{K - F F^T} of the landmarks so far (\eqn{F} their
#'   partial Cholesky factor), so it goes where the approximation is worst;
#'   \eqn{m} kernel columns and \eqn{O(n m^2)} arithmetic, with an
#'   expected trace error within a small factor of the best rank-\eqn{m}
#'   approximation's.  It runs in the block form with rejection sampling of
#'   Epperly, Tropp and Webber (2024): 50 candidates drawn at a time from the
#'   residual, each accepted with the probability that makes the accepted
#'   landmarks follow the one-at-a-time law exactly, and the accepted ones
#'   added to \eqn{F} together, some ten times faster for \eqn{m} in the
#'   hundreds.  For more than \eqn{\max(4 m, 10000)} rows it runs on a
#'   uniform subsample of that many, which bounds its \eqn{n \times m}
#'   factor.  On four bench sets (`bench/investigations/rpcholesky.md`) its
#'   trace error at \eqn{m = 400} was below uniform's (by 0.5-87 %) and
#'   leverage's, at a fifth of leverage's time; k-means++ was lower still
#'   on three of them.  In [falkon()], fixed rpcholesky centres at 0.6
#'   times the number of centres the default chose matched the default's
#'   accuracy on Satellite, spam and Shuttle (not on five other sets), and
#'   beat uniform centres at 0.6 times on seven of eight; grown as the
#'   default grows them they gained 0.35-0.56 points on five sets at up to
#'   2.5 times the time.  The default here stays `"uniform"`: at \eqn{10^5}
#'   rows and more the choice itself costs \eqn{O(m^2)} per pool row where
#'   uniform centres cost nothing; choose `"rpcholesky"` for strongly
#'   clustered data (Shuttle: as accurate and four times faster) or a fixed,
#'   small budget of centres.  [falkon()]'s default, `"auto"`, makes that
#'   choice from the data for classifiers.
#'
#' All randomness comes from R's generator: `set.seed()` (or `seed`)
#' reproduces the landmarks.
#'
#' **Rank truncation.**  Eigenvalues of \eqn{K_{LL}} at most
#' `tol` times the largest are treated as zero: their directions are
#' dropped, and `rank` stores how many are kept.  This happens whenever
#' landmarks coincide (duplicated rows, `m` beyond the number of distinct
#' rows) or the kernel has finite rank (a polynomial kernel of degree
#' \eqn{p} in \eqn{d} dimensions has rank at most \eqn{\binom{d+p}{p}}).
#' The symmetric eigensolver's eigenvalues carry an absolute error of
#' about \eqn{m \epsilon \lambda_{max}} (\eqn{\epsilon = 2.2 \times 10^{-16}}),
#' some \eqn{2 \times 10^{-13}\lambda_{max}} for \eqn{m = 1000}; below that
#' an eigenvalue is noise, and dividing by its square root would blow the
#' noise up into the features.  The default `tol = 1e-10` stays above that
#' floor for \eqn{m} up to about \eqn{10^5}, while what it drops changes
#' \eqn{K_{LL}} by at most \eqn{10^{-10} \lambda_{max}} in the spectral
#' norm, far below the Nyström error at any practical \eqn{m}.
#' The eigendecomposition is R's [eigen()] (LAPACK, once, at fit time):
#' its last bits, and so the map's, can differ between BLAS/LAPACK
#' libraries, though a fitted map predicts identically everywhere.
#'
#' @references
#' Williams, C. K. I. and Seeger, M. (2001). Using the Nyström method to
#' speed up kernel machines. *NIPS 13*.
#'
#' Arthur, D. and Vassilvitskii, S. (2007). k-means++: the advantages of
#' careful seeding. *SODA*.
#'
#' Oglic, D. and Gärtner, T. (2017). Nyström method with kernel K-means++
#' samples as landmarks. *ICML*.
#'
#' Musco, C. and Musco, C. (2017). Recursive sampling for the Nyström
#' method. *NeurIPS*.
#'
#' Chen, Y., Epperly, E. N., Tropp, J. A. and Webber, R. J. (2025).
#' Randomly pivoted Cholesky: practical approximation of a kernel matrix
#' with few entry evaluations. *Communications on Pure and Applied
#' Mathematics* 78(5).
#'
#' Epperly, E. N., Tropp, J. A. and Webber, R. J. (2024). Embrace
#' rejection: kernel matrix approximation by accelerated randomly pivoted
#' Cholesky. arXiv:2410.03969.
#'
#' @inheritParams random_features
#' @param x Training data: a numeric matrix, a data frame of numeric
#'   columns, or a numeric vector (one column); the formula method takes a
#'   one-sided `formula = ~ a + b` with `data` instead (see
#'   [formula_interface]).  The landmarks are taken from its rows.
#' @param kernel A kernel object, any of those [kernel_matrix()] knows; the
#'   default is [gaussian_kernel()] with the median heuristic.
#' @param m Number of landmarks (and of output columns), a whole number from
#'   1 to `nrow(x)`; by default 100, or `nrow(x)` if smaller.
#' @param landmarks How the landmarks are chosen: `"uniform"`, `"kmeans"`,
#'   `"leverage"` or `"rpcholesky"`, see Details.
#' @param tol Relative eigenvalue threshold, in \eqn{[0, 1)}: eigenvalues of
#'   the landmarks' Gram matrix at most `tol` times the largest are treated
#'   as zero.  See Details for the default.
#' @param nthreads Number of threads for the kernel evaluations at fit time,
#'   see [bochner_threads()].  The result does not depend on it.
#' @param ... For the default method, nothing (unknown arguments are an
#'   error); the formula method passes them on to the default method.
#' @return An object of class `c("nystrom_features", "random_features")`: a
#'   list with the `kernel` (sigma resolved), `m`, `landmarks` (the
#'   \eqn{m \times d} landmark points), `index` (their rows in `x`),
#'   `normalization` (the symmetric \eqn{m \times m} matrix
#'   \eqn{K_{LL}^{+1/2}}), `rank`, `eigenvalues` (of \eqn{K_{LL}},
#'   decreasing), `method` (the landmark rule), `tol`, `n_features`
#'   (\eqn{m}) and `input` (as for [random_features()]).
#' @seealso [predict.random_features()], [kernel_approx_error()],
#'   [random_features()].
#' @examples
#' set.seed(1)
#' x <- rbind(matrix(rnorm(400, sd = 0.3), 200), matrix(rnorm(40, 3), 20))
#' map <- nystrom_features(x, gaussian_kernel(1), m = 30)
#' map
#' Z <- predict(map, x)
#' dim(Z)
#' kernel_approx_error(map, x)
#' # landmarks from leverage scores cover the small cluster too
#' kernel_approx_error(nystrom_features(x, gaussian_kernel(1), m = 30,
#'                                      landmarks = "leverage"), x)
#' # any kernel with an exact Gram matrix
#' nystrom_features(~ Sepal.Length + Petal.Width, data = iris,
#'                  kernel = polynomial_kernel(3), m = 20)
#' @export
nystrom_features <- function(x, ...) UseMethod("nystrom_features")

#' @rdname nystrom_features
#' @export
nystrom_features.default <- function(x, kernel = gaussian_kernel("median"),
                                     m = min(100L, nrow(x)),
                                     landmarks = c("uniform", "kmeans", "leverage", "rpcholesky"),
                                     seed = NULL, tol = 1e-10,
                                     nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  x <- as_data_matrix(x, "x")
  check_kernel(kernel)
  m <- check_count(m, "m")
  n <- nrow(x)
  if (m > n) {
    stop_arg("m", "must be at most nrow(x) = ", n, " (got ", m,
             "): the landmarks are rows of 'x'")
  }
  o <- nystrom_options(landmarks, tol)
  landmarks <- o$landmarks
  tol <- o$tol
  nthreads <- check_threads(nthreads)
  nystrom_check_data(x, kernel, m, landmarks, "m")
  resolved <- resolve_kernel(kernel, x)
  map <- with_seed(seed, draw_nystrom_map(x, resolved, m, landmarks, tol, nthreads))
  map$call <- generic_call(match.call())
  map
}

# The checked options of a Nystrom map passed through another function's
# '...'.
nystrom_options <- function(landmarks = "uniform", tol = 1e-10, ...) {
  check_no_dots(...)
  tol <- check_number(tol, "tol", lower = 0)
  if (tol >= 1) stop_arg("tol", "must be less than 1 (got ", format(tol), ")")
  list(landmarks = check_choice(landmarks, landmark_rules, "landmarks"),
       tol = tol)
}

# What a Nystrom map of m landmarks of x needs of the data and the memory,
# checked at the entry of whatever draws one ('arg': the caller's name for m).
nystrom_check_data <- function(x, kernel, m, landmarks, arg) {
  if (kernel$name == "min") check_min_data(x, "x")
  check_allocation(m, m, "the landmarks' Gram matrix", arg = arg)
  nystrom_check_memory(nrow(x), ncol(x), m, landmarks, arg)
}

# m landmarks drawn from the rows of x from the current random stream, and
# their map, for a resolved kernel and checked settings: the worker behind
# nystrom_features(), which the package's own callers use instead of
# re-entering it.
draw_nystrom_map <- function(x, resolved, m, landmarks = "uniform", tol = 1e-10, nthreads) {
  # the landmark rules see the rows as the kernel does (ARD: divided by the scales)
  xk <- if (landmarks == "uniform") x else kernel_inputs(resolved, x)
  index <- landmark_index(landmarks, resolved, xk, m, nthreads)
  L <- x[index, , drop = FALSE]
  dimnames(L) <- list(NULL, colnames(x))
  map <- nystrom_map(resolved, L, landmarks, tol, nthreads)
  map$index <- as.integer(index)
  map$input <- input_description(x)
  map
}

#' @rdname formula_interface
#' @export
nystrom_features.formula <- function(formula, data = NULL, ..., subset,
                                     na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), nystrom_features.default, na.action, ...,
              no_response = "feature maps use no response")
}

# What building the map holds at its peak (check_memory(), R/checks.R):
# the landmarks' m x m Gram matrix, its eigenvectors and the normalisation
# (with their transposes), and for k-means++ or leverage landmarks an n x m
# block of kernel values.  'arg' is the caller's name for m.
nystrom_check_memory <- function(n, d, m, landmarks, arg) {
  parts <- list("the landmarks' Gram matrix" = c(m, m), "its eigenvectors" = c(m, m),
                "the normalisation and its transpose" = c(2 * m, m), "the landmarks" = c(m, d))
  if (landmarks != "uniform") parts[["the kernel values of the data"]] <- c(n, m)
  check_memory(parts, "the Nystrom map", arg)
}

# The map for landmarks L of a resolved kernel: K_LL's eigendecomposition,
# eigenvalues at most tol * the largest dropped, and the normalisation
# U_r diag(lambda_r^-1/2) U_r' (m x m, exactly symmetric).
nystrom_map <- function(kernel, L, method, tol, nthreads) {
  m <- nrow(L)
  K <- .Call(C_kernel_matrix, kernel_code(kernel), kernel_parameters(kernel),
             kernel_inputs(kernel, L), NULL, nthreads)
  check_finite_kernel(K, "the landmarks")
  eig <- eigen(K, symmetric = TRUE)
  lambda <- eig$values
  keep <- lambda > tol * max(lambda[1L], 0) & lambda > 0
  r <- sum(keep)
  U <- eig$vectors[, keep, drop = FALSE]
  if (r == 0L) {
    N <- matrix(0, m, m)
  } else {
    N <- .Call(C_matprod, U, t(U) / sqrt(lambda[keep]), nthreads)
    N <- (N + t(N)) / 2
  }
  structure(list(kernel = kernel, m = m, landmarks = L, normalization = N, rank = r,
                 eigenvalues = lambda, method = method, tol = tol,
                 n_features = as.integer(m)),
            class = c("nystrom_features", "random_features"))
}

#' @export
transform_features.nystrom_features <- function(map, x, nthreads) {
  if (map$kernel$name == "min") check_min_data(x, "newdata")
  code <- kernel_code(map$kernel)
  par <- kernel_parameters(map$kernel)
  L <- kernel_inputs(map$kernel, map$landmarks)
  block <- function(xb) {
    K <- .Call(C_kernel_matrix, code, par, kernel_inputs(map$kernel, xb), L, nthreads)
    .Call(C_matprod, K, map$normalization, nthreads)
  }
  transform_in_blocks(x, map$m, map$m, block)
}

#' @export
feature_map_title.nystrom_features <- function(map) {
  sprintf("Nystrom features, %s landmarks, m = %d (rank %d, tol = %s)",
          map$method, map$m, map$rank, format(map$tol))
}
