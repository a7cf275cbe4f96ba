#' Kernel principal component analysis
#'
#' Principal components of the data in a kernel's feature space
#' (Schölkopf, Smola and Müller 1998), on random Fourier or Nyström
#' features (Lopez-Paz et al. 2014) or on the exact centred Gram matrix.
#'
#' **Features** (`"rff"`, `"nystrom"`): the components are the top `rank`
#' eigenvectors \eqn{u_j} of \eqn{\Phi_c^T \Phi_c}{Phi_c' Phi_c}, the
#' \eqn{D \times D}{D x D} cross product of the centred features, accumulated
#' over blocks of rows: time \eqn{O(n D^2)} and memory \eqn{O(D^2)} beyond
#' the data, whatever \eqn{n}.  **Exact** (`"exact"`): the top eigenvectors
#' \eqn{v_j} of the centred Gram matrix \eqn{K_c = H K H}{K_c = H K H}
#' (\eqn{n \times n}{n x n}: a few thousand rows).  In both cases the
#' eigenpairs come from block subspace iteration with a Rayleigh-Ritz step
#' (Halko, Martinsson and Tropp 2011) whose products run on the package's
#' own threaded kernel; only the small \eqn{(rank + 10)}-square
#' eigenproblems of the Rayleigh-Ritz and orthonormalisation steps use
#' [eigen()].  It iterates until every wanted pair has a residual below
#' \eqn{10^{-10}} of the largest eigenvalue.
#'
#' **Scaling.**  The scores (`x` of the result, and `predict()`) are the
#' projections of the centred feature vectors on the unit principal axes:
#' \eqn{v_j \sqrt{\lambda_j}}{v_j sqrt(lambda_j)} for the training rows, with
#' \eqn{(\lambda_j, v_j)} the eigenpairs of \eqn{K_c} (\eqn{\Phi_c u_j}{Phi_c
#' u_j} on features).  That is scikit-learn's `KernelPCA` convention.
#' `kernlab::kpca()` takes the eigenpairs of \eqn{K_c / n} and reports
#' \eqn{K_c v_j / \sqrt{\lambda_j / n}}{K_c v_j / sqrt(lambda_j / n)}: its
#' scores are ours times \eqn{\sqrt n}{sqrt(n)}, and its `eig()` are our
#' `variance`, \eqn{\lambda_j / n}{lambda_j / n}, the variance of each
#' component (divisor \eqn{n}, not \eqn{n - 1} as in [prcomp()]).
#'
#' @param x Data: a numeric matrix, a data frame of numeric columns or a
#'   numeric vector; the formula method takes a one-sided formula `~ a + b`
#'   with `data`.
#' @param kernel A kernel object; `NULL` (the default) is
#'   `gaussian_kernel("median")`.
#' @param rank Number of components.
#' @param method `"rff"` (the default), `"nystrom"` or `"exact"`.
#' @param D Number of random frequencies (`"rff"`).
#' @param m Number of Nystrom landmarks (`method = "nystrom"`); unset, the
#'   value of `D`'s default (256).  `D` given for it still works, with a
#'   message, until the next release.
#' @param retx Whether to return the scores of the training rows (for the
#'   feature methods this is a second pass over the data).
#' @param seed `NULL`, or a number: the features and the start of the
#'   iteration are then drawn from `set.seed(seed)`.
#' @param precision `"auto"`, `"double"` or `"single"`: whether the centred
#'   cross product of the features is formed in single precision, the
#'   features rounded to float and summed in double every 256 rows; see
#'   [feature_precision] for the bound and the rule of `"auto"` (double
#'   below about \eqn{2^{36}} multiply-adds).  A feature fit records it in
#'   `precision`; `method = "exact"` stays double.
#' @param nthreads Number of threads, see [bochner_threads()]; the result
#'   does not depend on it.
#' @param ... Options of [random_features()] or [nystrom_features()].
#' @return An object of class `"kernel_pca"`: `variance` (\eqn{\lambda_j / n}),
#'   `total_variance` (the trace of the centred kernel over \eqn{n}: the
#'   variance of all components together), `x` (the scores, with `retx`),
#'   `kernel` (bandwidth resolved), `method`, `rank`, `n`, and what
#'   `predict()` needs (`map`, `center`, `rotation` on features; the
#'   training data and `coef` for `"exact"`).
#' @references Schölkopf, B., Smola, A. and Müller, K.-R. (1998). Nonlinear
#'   component analysis as a kernel eigenvalue problem. \emph{Neural
#'   Computation} 10, 1299-1319.
#'
#'   Lopez-Paz, D., Sra, S., Smola, A., Ghahramani, Z. and Schölkopf, B.
#'   (2014). Randomized nonlinear component analysis. \emph{Proceedings of
#'   the 31st International Conference on Machine Learning}.
#'
#'   Halko, N., Martinsson, P.-G. and Tropp, J. A. (2011). Finding structure
#'   with randomness. \emph{SIAM Review} 53, 217-288.
#' @seealso [predict.kernel_pca()], [kernel_cca()], `kernlab::kpca()`.
#' @examples
#' set.seed(1)
#' t <- runif(300, 0, 2 * pi)
#' r <- rep(c(1, 3), 150)
#' x <- cbind(r * cos(t), r * sin(t)) + rnorm(600, sd = 0.1)   # two rings
#' fit <- kernel_pca(x, gaussian_kernel(1), rank = 3, D = 300)
#' fit
#' summary(fit)
#' plot(fit, col = factor(r))
#' head(predict(fit, x[1:5, ]))
#' @export
kernel_pca <- function(x, ...) UseMethod("kernel_pca")

#' @rdname kernel_pca
#' @export
kernel_pca.default <- function(x, kernel = NULL, rank = 2, method = c("rff", "nystrom", "exact"),
                               D = 256, m = NULL, retx = TRUE, seed = NULL,
                               precision = c("auto", "double", "single"),
                               nthreads = bochner_threads(), ...) {
  x <- as_data_matrix(x, "x")
  method <- stat_method(method)
  D <- check_count(nystrom_count(method, m, D, !missing(D), "kernel_pca()"),
                   if (is.null(m)) "D" else "m")
  rank <- check_count(rank, "rank")
  retx <- check_flag(retx, "retx")
  precision <- check_precision(precision[1L])
  nthreads <- check_threads(nthreads)
  if (nrow(x) < 2L) stop_arg("x", "needs at least two rows")
  most <- if (method == "exact") nrow(x) - 1L else min(D, nrow(x))
  if (method == "rff" && !is.null(list(...)$type) && identical(list(...)$type, "pair")) most <- 2L * D
  if (rank > most) {
    stop_arg("rank", "must be at most ", most, " (", if (method == "exact") "rows of x minus one"
             else "the number of features", ")")
  }
  kernel <- stat_kernel(kernel, x, "kernel")
  fit <- with_seed(seed, if (method == "exact") {
    if (length(list(...))) check_no_dots(...)
    kpca_exact(x, kernel, rank, retx, nthreads)
  } else {
    kpca_features(x, kernel, rank, method, D, retx, nthreads, precision, ...)
  })
  fit$input <- input_description(x)
  fit$call <- generic_call(match.call())
  fit
}

#' @rdname kernel_pca
#' @param formula,data,subset,na.action For the formula method: a one-sided
#'   formula, the data frame holding its variables, a subset of its rows, and
#'   what to do with missing values.
#' @export
kernel_pca.formula <- function(formula, data = NULL, ..., subset, na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), kernel_pca.default, na.action, ...,
              no_response = "kernel PCA uses no response")
}

kpca_result <- function(values, n, total, kernel, method, rank, scores, extra) {
  names <- paste0("PC", seq_len(rank))
  if (!is.null(scores)) colnames(scores) <- names
  structure(c(list(variance = stats::setNames(values / n, names), total_variance = total / n,
                   x = scores, kernel = kernel, method = method, rank = rank, n = n), extra),
            class = "kernel_pca")
}

kpca_features <- function(x, kernel, rank, method, D, retx, nthreads, precision, ...) {
  map <- stat_map(x, kernel, method, D, nthreads, ...)
  single <- stat_single(precision, nrow(x), map$n_features)
  mo <- stat_feature_moments(map, x, nthreads, single = single)
  zz <- mo$zz
  e <- subspace_eigen(function(V) .Call(C_matprod, zz, V, nthreads), nrow(zz), rank, nthreads)
  rotation <- kpca_sign(e$vectors)
  scores <- if (retx) feature_decision(map, x, rotation, -colSums(rotation * mo$zbar), nthreads)
  kpca_result(e$values, nrow(x), sum(diag(zz)), kernel, method, rank, scores,
              list(map = map, center = mo$zbar, rotation = rotation, iterations = e$iterations,
                   precision = if (single) "single" else "double"))
}

kpca_exact <- function(x, kernel, rank, retx, nthreads) {
  n <- nrow(x)
  check_allocation(n, n, "the Gram matrix", arg = "x")
  K <- gram_matrix(kernel, x, nthreads = nthreads)
  check_finite_kernel(K, "'x'")
  col_means <- colMeans(K)
  Kc <- centre_gram(K)
  rm(K)
  e <- subspace_eigen(function(V) .Call(C_matprod, Kc, V, nthreads), n, rank, nthreads)
  v <- kpca_sign(e$vectors)
  lam <- pmax(e$values, 0)
  coef <- sweep(v, 2L, sqrt(lam), "/")   # scores of new rows: k_c(x_new, X) coef
  coef[, lam <= 0] <- 0
  scores <- if (retx) sweep(v, 2L, sqrt(lam), "*")
  kpca_result(e$values, n, sum(diag(Kc)), kernel, "exact", rank, scores,
              list(data = x, coef = coef, col_means = col_means, grand_mean = mean(col_means),
                   iterations = e$iterations))
}

# Eigenvectors with their largest entry positive: a reproducible sign.
kpca_sign <- function(V) {
  s <- apply(V, 2L, function(v) sign(v[which.max(abs(v))]))
  sweep(V, 2L, ifelse(s == 0, 1, s), "*")
}

#' Project new data on kernel principal components
#'
#' @param object A fit from [kernel_pca()].
#' @param newdata Data with the columns the fit was made on (or a data frame
#'   with the formula's variables).  Missing: the scores of the training rows.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A matrix of scores, one row per row of `newdata` and one column
#'   per component, on the scale of the training scores (see
#'   [kernel_pca()]).
#' @examples
#' fit <- kernel_pca(iris[, 1:4], rank = 2, method = "exact")
#' predict(fit, iris[c(1, 51, 101), 1:4])
#' @export
predict.kernel_pca <- function(object, newdata, nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  if (missing(newdata)) {
    if (is.null(object$x)) stop_arg("newdata", "is required: the fit kept no scores (retx = FALSE)")
    return(object$x)
  }
  nthreads <- check_threads(nthreads)
  x <- newdata_matrix(object$input, newdata, "newdata", fitted = "the kernel PCA")
  scores <- if (object$method == "exact") {
    Kn <- gram_matrix(object$kernel, x, object$data, nthreads = nthreads)
    Kn <- Kn - rowMeans(Kn)
    Kn <- sweep(Kn, 2L, object$col_means) + object$grand_mean
    .Call(C_matprod, Kn, object$coef, nthreads)
  } else {
    feature_decision(object$map, x, object$rotation,
                     -colSums(object$rotation * object$center), nthreads)
  }
  dimnames(scores) <- list(rownames(x), paste0("PC", seq_len(object$rank)))
  scores
}

kpca_method_text <- function(x) {
  paste0(switch(x$method, exact = "exact centred Gram matrix",
                rff = sprintf("random Fourier features (%d columns)", x$map$n_features),
                nystrom = sprintf("Nystrom features (%d landmarks)", map_size(x$map))),
         stat_precision_text(x))
}

#' @export
print.kernel_pca <- function(x, ...) {
  cat(sprintf("Kernel PCA: %d components of %d rows, %s\n", x$rank, x$n, kpca_method_text(x)))
  cat("  kernel: ", kernel_label(x$kernel), ", ", stat_kernel_text(x$kernel), "\n", sep = "")
  cat("  variance of the components (eigenvalues of K_c / n):\n")
  print(signif(utils::head(x$variance, 10L), 4))
  invisible(x)
}

#' @export
summary.kernel_pca <- function(object, ...) {
  v <- object$variance
  imp <- rbind("Standard deviation" = sqrt(v),
               "Proportion of Variance" = v / object$total_variance,
               "Cumulative Proportion" = cumsum(v) / object$total_variance)
  structure(list(fit = object, importance = imp), class = "summary.kernel_pca")
}

#' @export
print.summary.kernel_pca <- function(x, ...) {
  print(x$fit)
  cat("\nImportance of components (share of the total variance in feature space):\n")
  print(signif(x$importance, 4))
  invisible(x)
}

#' Plot kernel principal components
#'
#' The scores of the training rows on two components, or (`type =
#' "variance"`) the share of the total variance of each component.
#'
#' @param x A fit from [kernel_pca()] (with `retx = TRUE` for the scores).
#' @param type `"scores"` or `"variance"`.
#' @param components The two components to plot against each other.
#' @param main The title.
#' @param ... Graphical parameters for [plot()] or [barplot()].
#' @return `x`, invisibly.
#' @examples
#' fit <- kernel_pca(iris[, 1:4], rank = 3, D = 200, seed = 1)
#' plot(fit, col = iris$Species)
#' plot(fit, type = "variance")
#' @export
plot.kernel_pca <- function(x, type = c("scores", "variance"), components = c(1L, 2L),
                            main = "Kernel PCA", ...) {
  type <- check_choice(type, c("scores", "variance"), "type")
  if (type == "variance" || x$rank < 2L) {
    graphics::barplot(x$variance / x$total_variance, ylab = "proportion of variance",
                      main = main, ...)
    return(invisible(x))
  }
  if (is.null(x$x)) stop_arg("x", "has no scores (fitted with retx = FALSE)")
  if (!is.numeric(components) || length(components) != 2L || any(!components %in% seq_len(x$rank))) {
    stop_arg("components", "must be two component numbers between 1 and ", x$rank)
  }
  graphics::plot(x$x[, components[1L]], x$x[, components[2L]],
                 xlab = colnames(x$x)[components[1L]], ylab = colnames(x$x)[components[2L]],
                 main = main, ...)
  invisible(x)
}
