#' Kernel canonical correlation analysis
#'
#' Regularised canonical correlations between two paired variables in
#' kernel feature spaces (Bach and Jordan 2002), on random Fourier or
#' Nyström features (randomised canonical correlation analysis, Lopez-Paz et
#' al. 2014) or on exact Gram matrices.
#'
#' **Features.**  With \eqn{C_{xx}}, \eqn{C_{yy}}, \eqn{C_{xy}} the
#' covariances of the centred features \eqn{\phi(x)}, \eqn{\psi(y)}
#' (divisor \eqn{n}; one pass over the rows), the canonical pairs maximise
#' \eqn{a^T C_{xy} b}{a' C_xy b} subject to \eqn{a^T (C_{xx} + \lambda I) a =
#' b^T (C_{yy} + \lambda I) b = 1}{a' (C_xx + lambda I) a = b' (C_yy + lambda
#' I) b = 1}: \eqn{\rho^2}{rho^2} and \eqn{a} solve
#' \eqn{C_{xy} (C_{yy} + \lambda I)^{-1} C_{yx} a = \rho^2 (C_{xx} + \lambda
#' I) a}{C_xy (C_yy + lambda I)^-1 C_yx a = rho^2 (C_xx + lambda I) a}, and
#' \eqn{b = (C_{yy} + \lambda I)^{-1} C_{yx} a / \rho}{b = (C_yy + lambda
#' I)^-1 C_yx a / rho}.  The two regularised inverses come from the
#' package's Cholesky factorisation; the top `rank` pairs from block
#' subspace iteration in the \eqn{(C_{xx} + \lambda I)}{(C_xx + lambda I)}
#' inner product, with small Rayleigh-Ritz problems solved by [eigen()].
#' **Exact.**  The same problem for the kernel's own feature space: with
#' centred Gram matrices \eqn{K_c}, \eqn{L_c} and \eqn{R_x = K_c (K_c + n
#' \lambda I)^{-1}}{R_x = K_c (K_c + n lambda I)^-1}, the canonical variates
#' of \eqn{x} are the eigenvectors of \eqn{R_x R_y} and
#' \eqn{\rho^2}{rho^2} its eigenvalues (\eqn{O(n^3)}).
#'
#' With linear features (for instance `polynomial_kernel(degree = 1, offset
#' = 0)` and \eqn{D} at least the number of columns) and \eqn{\lambda \to
#' 0}{lambda -> 0} the correlations are those of [stats::cancor()].  The
#' canonical variates (`predict()`) have variance
#' \eqn{1 - \lambda a^T a}{1 - lambda a'a} on the training data: unit
#' variance as \eqn{\lambda \to 0}{lambda -> 0}.
#'
#' @param x,y The two variables, one row per observation: numeric matrices,
#'   data frames of numeric columns or numeric vectors.
#' @param kernel_x,kernel_y Kernel objects; `NULL` (the default) is
#'   `gaussian_kernel("median")` on that variable.
#' @param rank Number of canonical pairs.
#' @param lambda Regularisation, a non-negative number (on the scale of the
#'   feature covariances; \eqn{n \lambda}{n lambda} on the Gram matrices).
#' @param method `"rff"` (the default), `"nystrom"` or `"exact"`.
#' @param D Number of random frequencies per variable (`"rff"`).
#' @param m Number of Nystrom landmarks per variable (`method =
#'   "nystrom"`); unset, the value of `D`'s default (256).  `D` given for it
#'   still works, with a message, until the next release.
#' @param seed `NULL`, or a number: the features and the start of the
#'   iteration are drawn from `set.seed(seed)`.
#' @param precision `"auto"`, `"double"` or `"single"`: whether the centred
#'   cross product of the features is formed in single precision, the
#'   features rounded to float and summed in double every 256 rows; see
#'   [feature_precision] for the bound and the rule of `"auto"` (double
#'   below about \eqn{2^{36}} multiply-adds, or where `lambda` is small next
#'   to the product's typical error).  A feature fit records it in
#'   `precision`; `method = "exact"` stays double.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Options of [random_features()] or [nystrom_features()].
#' @return An object of class `"kernel_cca"`: `cor` (the canonical
#'   correlations), `xvariates` and `yvariates` (the training variates),
#'   `kernel_x`, `kernel_y`, `lambda`, `method`, `rank`, `n`, and what
#'   `predict()` needs.
#' @references Bach, F. R. and Jordan, M. I. (2002). Kernel independent
#'   component analysis. \emph{Journal of Machine Learning Research} 3, 1-48.
#'
#'   Lopez-Paz, D., Sra, S., Smola, A., Ghahramani, Z. and Schölkopf, B.
#'   (2014). Randomized nonlinear component analysis. \emph{ICML}.
#' @seealso [predict.kernel_cca()], [kernel_pca()], [stats::cancor()],
#'   `kernlab::kcca()`.
#' @examples
#' set.seed(1)
#' x <- runif(300, -2, 2)
#' y <- cbind(x^2, rnorm(300)) + rnorm(600, sd = 0.2)
#' cancor(x, y)$cor                 # the linear correlation is weak
#' fit <- kernel_cca(x, y, rank = 1, lambda = 1e-3, D = 200)
#' fit$cor                          # the kernel one is not
#' predict(fit, x[1:5], y[1:5, ])$x
#' @export
kernel_cca <- function(x, y, kernel_x = NULL, kernel_y = NULL, rank = 2, lambda = 1e-3,
                       method = c("rff", "nystrom", "exact"), D = 256, m = NULL, seed = NULL,
                       precision = c("auto", "double", "single"),
                       nthreads = bochner_threads(), ...) {
  data <- stat_data(x, y, missing(y), paired = TRUE, min_rows = 3L, what = "the second variable")
  x <- data$x
  y <- data$y
  method <- stat_method(method)
  rank <- check_count(rank, "rank")
  lambda <- check_number(lambda, "lambda", lower = 0)
  precision <- check_precision(precision[1L])
  D <- check_count(nystrom_count(method, m, D, !missing(D), "kernel_cca()"),
                   if (is.null(m)) "D" else "m")
  nthreads <- check_threads(nthreads)
  kx <- stat_kernel(kernel_x, x, "kernel_x")
  ky <- stat_kernel(kernel_y, y, "kernel_y")
  fit <- with_seed(seed, if (method == "exact") {
    if (length(list(...))) check_no_dots(...)
    if (rank > nrow(x) - 1L) stop_arg("rank", "must be at most ", nrow(x) - 1L)
    if (!(lambda > 0)) stop_arg("lambda", "must be positive for method = \"exact\"")
    kcca_exact(x, y, kx, ky, rank, lambda, nthreads)
  } else {
    kcca_features(x, y, kx, ky, rank, lambda, method, D, nthreads, precision, ...)
  })
  fit$input_x <- input_description(x)
  fit$input_y <- input_description(y)
  fit$call <- generic_call(match.call())
  fit
}

kcca_features <- function(x, y, kx, ky, rank, lambda, method, D, nthreads, precision = "double",
                          ...) {
  n <- nrow(x)
  map_x <- stat_map(x, kx, method, D, nthreads, ...)
  map_y <- stat_map(y, ky, method, D, nthreads, ...)
  dx <- map_x$n_features
  dy <- map_y$n_features
  if (rank > min(dx, dy)) stop_arg("rank", "must be at most ", min(dx, dy), " (the features)")
  # the ridge lambda on the covariances Zc'Zc / n is n lambda on Zc'Zc
  single <- stat_single(precision, n, dx + dy, n * lambda)
  mo <- stat_feature_moments(map_x, x, nthreads, map_y, y, single)
  ix <- seq_len(dx)
  iy <- dx + seq_len(dy)
  C <- mo$zz / n
  Cxx <- C[ix, ix, drop = FALSE]
  Cyy <- C[iy, iy, drop = FALSE]
  Cxy <- C[ix, iy, drop = FALSE]
  # a tiny floor keeps the Cholesky factorisations defined as lambda -> 0
  # (rank-deficient covariances: more features than independent columns)
  floor_x <- max(lambda, 1e-12 * mean(diag(Cxx)))
  floor_y <- max(lambda, 1e-12 * mean(diag(Cyy)))
  My <- cca_solve(Cyy, t(Cxy), floor_y, nthreads)        # (Cyy + l)^-1 Cyx
  Ax <- Cxx + diag(floor_x, dx)
  Mx <- cca_solve(Cxx, Cxy, floor_x, nthreads)             # (Cxx + l)^-1 Cxy
  mp <- function(a, b) .Call(C_matprod, a, b, nthreads)
  e <- general_subspace_eigen(function(V) mp(Cxy, mp(My, V)), function(V) mp(Mx, mp(My, V)),
                              function(V) mp(Ax, V), dx, rank, nthreads)
  rho <- sqrt(pmax(e$values, 0))
  a <- e$vectors
  b <- .Call(C_matprod, My, a, nthreads)
  b <- sweep(b, 2L, ifelse(rho > 0, rho, 1), "/")
  ab <- kcca_sign(a, b)
  out <- list(cor = rho, xcoef = ab$a, ycoef = ab$b, map_x = map_x, map_y = map_y,
              xcenter = mo$zbar[ix], ycenter = mo$zbar[iy], kernel_x = kx, kernel_y = ky,
              lambda = lambda, method = method, rank = rank, n = n, iterations = e$iterations,
              precision = if (single) "single" else "double")
  out$xvariates <- feature_decision(map_x, x, out$xcoef, -colSums(out$xcoef * out$xcenter), nthreads)
  out$yvariates <- feature_decision(map_y, y, out$ycoef, -colSums(out$ycoef * out$ycenter), nthreads)
  structure(out, class = "kernel_cca")
}

# (A + lambda I)^{-1} B by the package's Cholesky (src/cholesky.c).
cca_solve <- function(A, B, lambda, nthreads) {
  tryCatch(.Call(C_ridge_solve, A, B, as.double(lambda), nthreads), error = function(e) {
    stop_arg("lambda", "is too small: the regularised covariance is numerically singular (",
             conditionMessage(e), ")")
  })
}

# Top eigenpairs of the generalised problem S v = theta A v (S, A
# symmetric positive semi-definite, given as products op_S(V), op_A(V), and
# op_T(V) = A^{-1} S V): block subspace iteration on T with A-orthonormal
# blocks and a Rayleigh-Ritz step (the small (rank + 10)-square problems by
# eigen()); it stops when each wanted pair's residual ||S v - theta A v||
# is below tol ||A v||.
general_subspace_eigen <- function(op_S, op_T, op_A, n, rank, nthreads, tol = 1e-10,
                                   max_iter = 1000L) {
  k <- min(n, rank + 10L)
  a_orth <- function(V) {
    G <- crossprod_small(V, op_A(V), nthreads)
    e <- eigen((G + t(G)) / 2, symmetric = TRUE)
    keep <- e$values > 1e-14 * max(e$values[1L], .Machine$double.xmin)
    .Call(C_matprod, V, sweep(e$vectors[, keep, drop = FALSE], 2L, sqrt(e$values[keep]), "/"),
          nthreads)
  }
  V <- a_orth(matrix(stats::rnorm(n * k), n, k))
  for (it in seq_len(max_iter)) {
    SV <- op_S(V)
    H <- crossprod_small(V, SV, nthreads)
    e <- eigen((H + t(H)) / 2, symmetric = TRUE)
    want <- seq_len(min(rank, ncol(V)))
    VU <- .Call(C_matprod, V, e$vectors, nthreads)
    SVU <- .Call(C_matprod, SV, e$vectors[, want, drop = FALSE], nthreads)
    AVU <- op_A(VU[, want, drop = FALSE])
    res <- sqrt(colSums((SVU - sweep(AVU, 2L, e$values[want], "*"))^2))
    if (all(res <= tol * sqrt(colSums(AVU^2)))) break
    if (it == max_iter) {
      warning("the eigen-solver stopped after ", max_iter, " iterations", call. = FALSE)
    }
    V <- a_orth(op_T(VU))
    if (ncol(V) < length(want)) break
  }
  list(values = e$values[want], vectors = VU[, want, drop = FALSE], iterations = it)
}

# Signs: each x-direction's variate correlates positively with its largest
# coefficient; the y-direction follows (b = M a / rho keeps rho >= 0).
kcca_sign <- function(a, b) {
  s <- apply(a, 2L, function(v) sign(v[which.max(abs(v))]))
  s <- ifelse(s == 0, 1, s)
  list(a = sweep(a, 2L, s, "*"), b = sweep(b, 2L, s, "*"))
}

kcca_exact <- function(x, y, kx, ky, rank, lambda, nthreads) {
  n <- nrow(x)
  check_allocation(n, 4 * n, "the Gram matrices", arg = "x")
  K <- gram_matrix(kx, x, nthreads = nthreads)
  L <- gram_matrix(ky, y, nthreads = nthreads)
  cm_x <- colMeans(K)
  cm_y <- colMeans(L)
  Kc <- centre_gram(K)
  Lc <- centre_gram(L)
  rm(K, L)
  # R = Kc (Kc + n lambda)^-1 (they commute); the x variates u satisfy
  # Rx Ry u = rho^2 u; with u = Rx w, the symmetric generalised problem
  # (Rx Ry Rx) w = rho^2 Rx w, whose T = Ry Rx needs no inverse
  Sx <- cca_solve(Kc, diag(n), n * lambda, nthreads)       # (Kc + n l)^-1
  Sy <- cca_solve(Lc, diag(n), n * lambda, nthreads)
  mp <- function(a, b) .Call(C_matprod, a, b, nthreads)
  Rx <- mp(Kc, Sx)
  Ry <- mp(Lc, Sy)
  Rx <- (Rx + t(Rx)) / 2
  Ry <- (Ry + t(Ry)) / 2
  e <- general_subspace_eigen(function(V) mp(Rx, mp(Ry, mp(Rx, V))), function(V) mp(Ry, mp(Rx, V)),
                              function(V) mp(Rx, V), n, rank, nthreads)
  rho <- sqrt(pmax(e$values, 0))
  w <- e$vectors
  u <- mp(Rx, w)                                           # x variates: Kc alpha
  r1 <- ifelse(rho > 0, rho, 1)
  alpha <- mp(Sx, w)
  beta <- mp(Sy, sweep(u, 2L, r1, "/"))                    # y variates: Lc beta = Ry u / rho
  v <- mp(Lc, beta)
  ab <- kcca_sign(sweep(alpha, 2L, sqrt(colMeans(u^2)), "/"),
                  sweep(beta, 2L, sqrt(colMeans(v^2)), "/"))
  out <- list(cor = rho, xcoef = ab$a, ycoef = ab$b, data_x = x, data_y = y,
              col_means_x = cm_x, col_means_y = cm_y, kernel_x = kx, kernel_y = ky,
              lambda = lambda, method = "exact", rank = rank, n = n, iterations = e$iterations)
  out$xvariates <- .Call(C_matprod, Kc, out$xcoef, nthreads)
  out$yvariates <- .Call(C_matprod, Lc, out$ycoef, nthreads)
  structure(out, class = "kernel_cca")
}

#' Canonical variates of new data
#'
#' @param object A fit from [kernel_cca()].
#' @param newdata New rows of `x` (with its columns), or `NULL`.
#' @param newdata_y New rows of `y`, or `NULL`.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A list with `x` and `y`: the canonical variates (one column per
#'   pair) of `newdata` and `newdata_y`, `NULL` for data not given; with
#'   neither given, those of the training data.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200), 100)
#' y <- x[, 1]^2 + rnorm(100, sd = 0.1)
#' fit <- kernel_cca(x, y, rank = 1, D = 100)
#' predict(fit, x[1:3, ], y[1:3])
#' @export
predict.kernel_cca <- function(object, newdata = NULL, newdata_y = NULL,
                               nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  if (is.null(newdata) && is.null(newdata_y)) {
    return(list(x = object$xvariates, y = object$yvariates))
  }
  nthreads <- check_threads(nthreads)
  side <- function(data, arg, which) {
    if (is.null(data)) return(NULL)
    input <- object[[paste0("input_", which)]]
    z <- newdata_matrix(input, data, arg, fitted = "the kernel CCA")
    coef <- object[[paste0(which, "coef")]]
    out <- if (object$method == "exact") {
      Kn <- gram_matrix(object[[paste0("kernel_", which)]], z, object[[paste0("data_", which)]],
                        nthreads = nthreads)
      Kn <- sweep(Kn - rowMeans(Kn), 2L, object[[paste0("col_means_", which)]]) +
        mean(object[[paste0("col_means_", which)]])
      .Call(C_matprod, Kn, coef, nthreads)
    } else {
      feature_decision(object[[paste0("map_", which)]], z, coef,
                       -colSums(coef * object[[paste0(which, "center")]]), nthreads)
    }
    dimnames(out) <- list(rownames(z), paste0("CV", seq_len(object$rank)))
    out
  }
  list(x = side(newdata, "newdata", "x"), y = side(newdata_y, "newdata_y", "y"))
}

#' @export
print.kernel_cca <- function(x, ...) {
  how <- switch(x$method, exact = "exact Gram matrices",
                rff = sprintf("random Fourier features (%d and %d columns)",
                              x$map_x$n_features, x$map_y$n_features),
                nystrom = sprintf("Nystrom features (%d and %d landmarks)",
                                  map_size(x$map_x), map_size(x$map_y)))
  cat(sprintf("Kernel CCA: %d canonical pairs of %d rows, %s%s, lambda = %g\n",
              x$rank, x$n, how, stat_precision_text(x), x$lambda))
  cat("  kernel_x: ", kernel_label(x$kernel_x), ", ", stat_kernel_text(x$kernel_x), "\n",
      "  kernel_y: ", kernel_label(x$kernel_y), ", ", stat_kernel_text(x$kernel_y), "\n",
      sep = "")
  cat("  canonical correlations:\n")
  print(signif(stats::setNames(x$cor, paste0("CV", seq_along(x$cor))), 4))
  invisible(x)
}
