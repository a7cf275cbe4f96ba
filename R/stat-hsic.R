#' Kernel independence test (HSIC)
#'
#' Tests whether two paired variables are independent by the
#' Hilbert-Schmidt independence criterion (Gretton et al. 2008), on exact
#' kernels or on random Fourier or Nyström features (Zhang, Filippi,
#' Gretton and Sejdinovic 2018).  The result is an `"htest"` object.
#'
#' **Statistic.**  The biased V-statistic that `dHSIC::dhsic()` reports for
#' two variables, \eqn{\mathrm{HSIC}_b = \mathrm{tr}(K H L H) / n^2}{HSIC_b =
#' tr(K H L H) / n^2}, with \eqn{K}, \eqn{L} the Gram matrices of `x` and
#' `y` and \eqn{H = I - 11^T/n}{H = I - 11'/n}.  On feature maps \eqn{\phi}
#' of `x` and \eqn{\psi} of `y` it is \eqn{\|\Phi_c^T \Psi_c\|_F^2 / n^2}{||Phi_c'
#' Psi_c||_F^2 / n^2}, with \eqn{\Phi_c}{Phi_c}, \eqn{\Psi_c}{Psi_c} the
#' centred feature matrices: the squared norm of the features' cross
#' covariance, computed in one pass over row blocks (\eqn{O(n (D_x +
#' D_y)^2)} time, memory independent of \eqn{n} beyond the data).
#'
#' **p-value.**  `null = "auto"` (the default) is `"permutation"` unless the
#' permutations would cost more than about \eqn{3 \times 10^{10}}{3e10}
#' multiply-adds (see below: above 5000 rows at the default `D` and `B`),
#' and `"gamma"` then, whose cost does not grow with `B`; the result's
#' `method` says which was used.
#' `null = "permutation"`: the statistic recomputed with the
#' rows of `y` permuted, `B` permutations drawn one after another from R's
#' generator; \eqn{(1 + \#\{T_b \ge T\}) / (B + 1)}{(1 + #{T_b >= T}) / (B
#' + 1)}.  For the exact kernels, and for features when \eqn{n \le D_x D_y}{n
#' <= D_x D_y} and \eqn{n \le 5000}, each permutation costs \eqn{O(n^2)} on
#' the centred Gram matrices (in C, permutations spread over the threads,
#' identical for any thread count); otherwise \eqn{O(n D_x D_y)} on the
#' features.  `null = "gamma"`: the gamma approximation of Gretton et al.
#' (2008), with the mean and variance estimates of `dHSIC::dhsic.test(method
#' = "gamma")` (for kernels with \eqn{k(x, x) = 1}{k(x, x) = 1} the same
#' numbers; the mean's leading 1 is here the mean of \eqn{k(x_i, x_i) l(y_i,
#' y_i)}{k(x_i, x_i) l(y_i, y_i)}, so that feature kernels, whose diagonal is
#' only near 1, are treated consistently).  On features all of its moments
#' follow from the \eqn{D \times D}{D x D} cross products, so it costs no
#' more than the statistic: this is the test to use for large \eqn{n}.
#'
#' **Kernels.**  By default Gaussian kernels with the median heuristic,
#' \eqn{\sigma}{sigma} the median distance between rows of `x` (of `y` for
#' `kernel_y`), on an evenly spaced subsample of at most 1000 rows.  dHSIC's
#' default bandwidth is \eqn{\sqrt{\mathrm{median}(d^2) / 2}}{sqrt(median(d^2) / 2)},
#' smaller by a factor near \eqn{\sqrt 2}{sqrt(2)}: give `sigma` explicitly to
#' compare the two packages.
#'
#' **Data in chunks.**  With `x` from [data_chunks()], `y` names the columns
#' of the second variable and the other columns are the first (or `data`
#' of the formula `v ~ a + b`, column names only); `method = "rff"` and
#' shift-invariant kernels.  The bandwidth rules read their rows in one
#' pass.  The gamma null needs the centred cross product of the paired
#' features, each chunk's added in chunk order: one pass, the in-memory
#' test to rounding.  Permutations pair each row's `x` with another row's
#' `y` anywhere in the data, so they need the rows together: with
#' permutations (which `"auto"` chooses only where they are cheap, see
#' above) the rows are read into this session and the in-memory test runs.
#'
#' @param x The first variable: a numeric matrix, a data frame of numeric
#'   columns or a numeric vector; or, for the formula method, a formula
#'   `y ~ x` (each side one or more variables, such as `cbind(a, b) ~ c + d`);
#'   or data in chunks ([data_chunks()]).
#' @param y The second variable, one row per row of `x`; for `x` in chunks,
#'   the names of its columns.
#' @param kernel_x,kernel_y Kernel objects; `NULL` (the default) is
#'   `gaussian_kernel("median")` on that variable.
#' @param method `"rff"` (the default), `"nystrom"` or `"exact"`.
#' @param D Number of random frequencies (`"rff"`) for each variable.
#' @param m Number of Nystrom landmarks for each variable (`method =
#'   "nystrom"`); unset, the value of `D`'s default (256).  `D` given for it
#'   still works, with a message, until the next release.
#' @param null `"auto"`, `"permutation"` or `"gamma"`, see Details.
#' @param B Number of permutations.
#' @param seed `NULL`, or a number: the features and permutations are then
#'   drawn from `set.seed(seed)`, leaving the user's stream as it was.
#' @param precision `"auto"`, `"double"` or `"single"`: whether the centred
#'   cross product of the features (the gamma null's moments) is formed in
#'   single precision, the features rounded to float and summed in double
#'   every 256 rows; see [feature_precision] for the bound and the rule of
#'   `"auto"` (double below about \eqn{2^{36}} multiply-adds).  The
#'   permutation null and `method = "exact"` stay double.
#' @param nthreads Number of threads, see [bochner_threads()]; the result
#'   does not depend on it.
#' @param ... Options of [random_features()] or [nystrom_features()] for the
#'   feature methods.
#' @return An object of class `"htest"`: `statistic` (HSIC_b), `p.value`,
#'   `null.value`, `alternative`, `method`, `data.name`, and
#'   `null_statistics` (the permutation statistics), `kernel_x`, `kernel_y`
#'   (bandwidths resolved), `n`, and for the feature methods `map_x`,
#'   `map_y`.
#' @references Gretton, A., Fukumizu, K., Teo, C. H., Song, L., Schölkopf, B.
#'   and Smola, A. (2008). A kernel statistical test of independence.
#'   \emph{Advances in Neural Information Processing Systems 20}.
#'
#'   Zhang, Q., Filippi, S., Gretton, A. and Sejdinovic, D. (2018).
#'   Large-scale kernel methods for independence testing. \emph{Statistics
#'   and Computing} 28, 113-130.
#' @seealso [mmd_test()], `dHSIC::dhsic.test()`.
#' @examples
#' set.seed(1)
#' x <- rnorm(200)
#' y <- x^2 + rnorm(200, sd = 0.5)   # dependent, but uncorrelated
#' cor.test(x, y)$p.value
#' hsic_test(x, y, D = 128)
#' hsic_test(x, y, method = "exact", null = "gamma")
#' hsic_test(y ~ x, data = data.frame(x = x, y = y), B = 100)
#' @export
hsic_test <- function(x, ...) UseMethod("hsic_test")

#' @rdname hsic_test
#' @export
hsic_test.default <- function(x, y, kernel_x = NULL, kernel_y = NULL,
                              method = c("rff", "nystrom", "exact"), D = 256, m = NULL,
                              null = c("auto", "permutation", "gamma"), B = 200, seed = NULL,
                              precision = c("auto", "double", "single"),
                              nthreads = bochner_threads(), ...) {
  data.name <- paste(deparse1(substitute(x)), "and", deparse1(substitute(y)))
  data <- stat_data(x, y, missing(y), paired = TRUE, min_rows = 6L, what = "the second variable")
  x <- data$x
  y <- data$y
  D <- nystrom_count(stat_method(method), m, D, !missing(D), "hsic_test()")
  o <- stat_test_options(method, null, D, B, nthreads, auto = TRUE, precision)
  kx <- stat_kernel(kernel_x, x, "kernel_x")
  ky <- stat_kernel(kernel_y, y, "kernel_y")
  with_seed(seed, hsic_run(x, y, kx, ky, o$method, o$D, o$null, o$B, o$nthreads, o$precision,
                           data.name, ...))
}

#' @rdname hsic_test
#' @param data,subset,na.action For the formula method: a data frame with
#'   the formula's variables, an optional subset of its rows, and what to do
#'   with missing values.
#' @export
hsic_test.formula <- function(x, data = NULL, ..., subset, na.action = stats::na.omit) {
  formula <- x
  if (!inherits(formula, "formula") || length(formula) != 3L) {
    stop_arg("formula", "must be a two-sided formula such as y ~ x")
  }
  if (inherits(data, "data_chunks")) {
    out <- chunks_formula(formula, data, hsic_test.data_chunks, ..., response = TRUE,
                          extra = !missing(subset))
    out$data.name <- paste(deparse1(formula[[3L]]), "and", deparse1(formula[[2L]]))
    return(out)
  }
  call <- match.call()
  names(call)[names(call) == "x"] <- "formula"
  mf <- call[c(1L, match(c("formula", "data", "subset", "na.action"), names(call), 0L))]
  mf[[1L]] <- quote(stats::model.frame)
  if (is.null(mf$na.action)) mf$na.action <- quote(stats::na.omit)
  frame <- eval(mf, parent.frame())
  yv <- stats::model.response(frame)
  if (!is.numeric(yv)) stop_arg("formula", "needs a numeric left-hand side")
  xv <- stats::model.matrix(stats::delete.response(stats::terms(frame)), frame)
  xv <- xv[, colnames(xv) != "(Intercept)", drop = FALSE]
  if (ncol(xv) < 1L) stop_arg("formula", "needs at least one variable on the right-hand side")
  out <- hsic_test.default(xv, as.matrix(yv), ...)
  out$data.name <- paste(deparse1(formula[[3L]]), "and", deparse1(formula[[2L]]))
  out
}

hsic_run <- function(x, y, kx, ky, method, D, null, B, nthreads, precision, data.name, ...) {
  n <- as.double(nrow(x))
  map_x <- map_y <- NULL
  if (method == "exact") {
    if (length(list(...))) check_no_dots(...)
    check_allocation(n, n, "the Gram matrix", arg = "x")
    if (null == "auto") null <- hsic_auto_null(n, NULL, NULL, B)
    if (null == "gamma") B <- 0L
    Kc <- gram_matrix(kx, x, nthreads = nthreads)
    Lc <- gram_matrix(ky, y, nthreads = nthreads)
    mom <- hsic_gram_moments(Kc, Lc)
    Kc <- centre_gram(unname(Kc))
    Lc <- centre_gram(unname(Lc))
    stat <- sum(Kc * Lc) / n^2
    nulls <- if (B > 0L) .Call(C_hsic_perm_gram, Kc, Lc, B, nthreads)[-1L] / n^2
  } else {
    map_x <- stat_map(x, kx, method, D, nthreads, ...)
    map_y <- stat_map(y, ky, method, D, nthreads, ...)
    if (null == "auto") {
      null <- hsic_auto_null(n, map_x$n_features, map_y$n_features, B)
      if (null == "gamma") B <- 0L
    }
    r <- hsic_features(x, y, map_x, map_y, B, nthreads, precision)
    stat <- r$statistic
    mom <- r$moments
    nulls <- r$null
  }
  hsic_htest(stat, nulls, mom, null, B, n, kx, ky, method, map_x, map_y, data.name)
}

hsic_htest <- function(stat, nulls, mom, null, B, n, kx, ky, method, map_x, map_y, data.name) {
  p <- if (null == "permutation") perm_p_value(stat, nulls) else hsic_gamma_p(stat, mom, n)
  stat_htest(stat, "HSIC_b", p,
             sprintf("Kernel independence test (HSIC): %s for x, %s for y; %s",
                     stat_method_text(method, map_x, kx), stat_method_text(method, map_y, ky),
                     stat_null_text(null, B)),
             data.name, "HSIC",
             list(null_statistics = nulls, kernel_x = kx, kernel_y = ky, n = n,
                  map_x = map_x, map_y = map_y))
}

# null = "auto": permutations unless they cost more than about 2^35
# multiply-adds (B n^2 on Gram matrices: exact kernels, or features where
# hsic_feature_permutations() takes that route; else B n Dx Dy), where the
# gamma approximation, which costs no more than the statistic, is used.
hsic_auto_null <- function(n, dx, dy, B) {
  gram <- is.null(dx) || (n <= dx * dy && n <= 5000)
  cost <- as.double(B) * n * if (gram) n else as.double(dx) * dy
  if (cost <= 2^35) "permutation" else "gamma"
}

# The sums of dHSIC's gamma approximation for one kernel matrix K (n x n):
# a = mean(K), b = mean(K^2), c = mean(rowSums(K)^2) / n, diag = mean(diag(K)).
gram_sums <- function(K) {
  n <- nrow(K)
  c(a = mean(K), b = mean(K^2), c = sum(rowSums(K)^2) / n^3, diag = mean(diag(K)))
}

hsic_gram_moments <- function(K, L) {
  list(x = gram_sums(K), y = gram_sums(L), diag = mean(diag(K) * diag(L)))
}

# The same sums for the kernel z(x).z(y) of features, from the centred
# cross product zz = Zc'Zc (D x D), the feature means zbar and n, without
# the n x n matrix: sum(K) = ||s||^2, sum(K^2) = ||G||_F^2,
# sum(rowSums(K)^2) = s'Gs, with G = Z'Z = zz + n zbar zbar' and s = n zbar.
feature_sums <- function(zz, zbar, n) {
  G <- zz + n * tcrossprod(zbar)
  s <- n * zbar
  c(a = sum(s^2) / n^2, b = sum(G^2) / n^2, c = sum(s * (G %*% s)) / n^3,
    diag = sum(diag(G)) / n)
}

# p-value of n HSIC_b under the gamma law of dhsic.test(method = "gamma"),
# two variables.
hsic_gamma_p <- function(stat, mom, n) {
  n <- as.double(n)
  ax <- mom$x[["a"]]; bx <- mom$x[["b"]]; cx <- mom$x[["c"]]
  ay <- mom$y[["a"]]; by <- mom$y[["b"]]; cy <- mom$y[["c"]]
  mean <- (mom$diag - ax - ay + ax * ay) / n
  terms <- bx * by + ax^2 * ay^2 + 2 * cx * cy + bx * ay^2 + by * ax^2 -
    2 * (bx * cy + by * cx) - 2 * (cx * ay^2 + cy * ax^2) + 2 * cx * cy
  var <- 2 * (n - 4) * (n - 5) / (n * (n - 1) * (n - 2) * (n - 3)) * terms
  # n HSIC_b: mean n mean, variance n^2 var
  gamma_upper(n * stat, n * mean, n^2 * var)
}

hsic_features <- function(x, y, map_x, map_y, B, nthreads, precision = "double") {
  if (B > 0L) return(hsic_feature_permutations(x, y, map_x, map_y, B, nthreads))
  single <- stat_single(precision, nrow(x), map_x$n_features + map_y$n_features)
  hsic_moments_result(stat_feature_moments(map_x, x, nthreads, map_y, y, single), nrow(x),
                      map_x$n_features, map_y$n_features)
}

# The statistic and the gamma null's moments from the centred cross product
# of the paired features (stat_feature_moments(), x's dx columns first).
hsic_moments_result <- function(mo, n, dx, dy) {
  ix <- seq_len(dx)
  iy <- dx + seq_len(dy)
  # E[k(x,x) l(y,y)] = E||phi||^2 E||psi||^2 under independence; the sample
  # version of the product mean needs the paired norms, estimated here by
  # the product of the two means (exact when both diagonals are constant)
  sx <- feature_sums(mo$zz[ix, ix, drop = FALSE], mo$zbar[ix], n)
  sy <- feature_sums(mo$zz[iy, iy, drop = FALSE], mo$zbar[iy], n)
  list(statistic = sum(mo$zz[ix, iy]^2) / n^2,
       moments = list(x = sx, y = sy, diag = sx[["diag"]] * sy[["diag"]]), null = NULL)
}

# The statistic and its permutation statistics on features: on the n x n
# Gram matrices of the centred features when that is cheaper (n <= Dx Dy)
# and small, else one Dx x n x Dy product per permutation (permutations
# drawn serially).
hsic_feature_permutations <- function(x, y, map_x, map_y, B, nthreads) {
  n <- nrow(x)
  check_allocation(n, map_x$n_features + map_y$n_features, "the feature matrices", arg = "x")
  Pc <- scale(transform_features(map_x, x, nthreads), scale = FALSE)
  Qc <- scale(transform_features(map_y, y, nthreads), scale = FALSE)
  if (n <= map_x$n_features * map_y$n_features && n <= 5000L) {
    K <- .Call(C_crossprod, t(Pc), nthreads)
    L <- .Call(C_crossprod, t(Qc), nthreads)
    t <- .Call(C_hsic_perm_gram, K, L, B, nthreads) / n^2
    return(list(statistic = t[1L], null = t[-1L]))
  }
  Pt <- t(Pc)
  stat <- function(Q) sum(.Call(C_matprod, Pt, Q, nthreads)^2) / n^2
  list(statistic = stat(Qc),
       null = vapply(seq_len(B), function(b) stat(Qc[sample.int(n), , drop = FALSE]), numeric(1)))
}
