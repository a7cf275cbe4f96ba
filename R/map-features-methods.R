# Feature maps: print() and summary(), and how well a map approximates its
# kernel (kernel_approx_error()).

#' @export
print.random_features <- function(x, ...) {
  cat(feature_map_title(x), "\n", sep = "")
  cat(sprintf("  %d features of %d input column(s)\n", x$n_features, x$input$d))
  params <- kernel_parameter_text(x$kernel)
  if (!x$kernel$shift_invariant) params <- paste("k(x, y) =", kernel_formula(x$kernel))
  cat("  kernel: ", kernel_label(x$kernel), ", ", params, "\n", sep = "")
  # (a structured map's title says so already)
  if (!is.null(x$sampling) && x$sampling %in% c("orthogonal", "qmc")) {
    cat("  frequencies: ", if (x$sampling == "qmc") "randomised quasi-Monte Carlo"
                           else "orthogonal blocks", "\n", sep = "")
  }
  invisible(x)
}

feature_map_title <- function(map) UseMethod("feature_map_title")

#' @export
feature_map_title.fourier_features <- function(map) {
  if (map$type == "phase") {
    sprintf("Random Fourier features, phase map sqrt(2/D) cos(w.x + b), D = %d", map$D)
  } else {
    sprintf("Random Fourier features, pair map sqrt(1/D) [cos(w.x), sin(w.x)], D = %d", map$D)
  }
}

#' @export
summary.random_features <- function(object, ...) {
  structure(list(map = object,
                 frequency_norms = if (!is.null(object$omega)) {
                   stats::quantile(sqrt(colSums(object$omega^2)))
                 },
                 size = utils::object.size(object)),
            class = "summary.random_features")
}

#' @export
print.summary.random_features <- function(x, ...) {
  print(x$map)
  if (!is.null(x$map$input$names)) {
    cat("  inputs:", paste(utils::head(x$map$input$names, 10), collapse = ", "),
        if (x$map$input$d > 10) "...", "\n")
  }
  if (!is.null(x$frequency_norms)) {
    cat("  frequency norms ||w||:\n")
    print(signif(x$frequency_norms, 4))
  }
  cat("  size:", format(x$size, units = "auto"), "\n")
  invisible(x)
}

#' How well a feature map approximates its kernel
#'
#' Compares \eqn{Z Z^T}, from the map's features of `x`, with the exact Gram
#' matrix of the map's kernel on `x`.  Both are \eqn{n \times n}, so keep
#' `x` to a few thousand rows (a random subset of a larger data set says as
#' much).
#'
#' @param map A map from [random_features()].
#' @param x Data as for [predict.random_features()].
#' @param nthreads Number of threads, see [bochner_threads()].
#' @return A list of class `"kernel_approx_error"` with `max` (largest
#'   absolute error over all pairs), `rms` (root mean square error over all
#'   pairs, diagonal included), `n` and `n_features`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(300), 100)
#' for (D in c(100, 1000, 10000)) {
#'   map <- random_features(x, gaussian_kernel(2), D = D)
#'   print(kernel_approx_error(map, x)$rms)
#' }
#' @export
kernel_approx_error <- function(map, x, nthreads = bochner_threads()) {
  if (!inherits(map, "random_features")) {
    stop_arg("map", "must be a map from random_features() or nystrom_features()")
  }
  # data in chunks: a random sample of rows of a few chunks (R/distributed.R)
  if (inherits(x, "data_chunks")) x <- chunks_sample_rows(x, map$input$names)
  xm <- map_input_matrix(map, x, arg = "x")
  if (nrow(xm) > 10000L) {
    stop_arg("x", "has ", nrow(xm), " rows; the comparison needs three ", nrow(xm), " x ",
             nrow(xm), " matrices; use a random subset of at most 10000 rows")
  }
  # xm is already the map's input matrix: predict() would apply a formula
  # map's terms a second time, to a matrix without the formula's variables
  nthreads <- check_threads(nthreads)
  check_allocation(nrow(xm), map$n_features, "the feature matrix", arg = "x")
  Z <- transform_features(map, xm, nthreads)
  # the exact kernel on dense rows (at most 10000: smaller than K itself)
  K <- gram_matrix(map$kernel, if (is_sparse_matrix(xm)) as.matrix(xm) else xm,
                   nthreads = nthreads)
  E <- .Call(C_crossprod, t(Z), nthreads) - K   # Z Z', on the package's own product
  structure(list(max = max(abs(E)), rms = sqrt(mean(E^2)), n = nrow(xm),
                 n_features = map$n_features),
            class = "kernel_approx_error")
}

#' @export
print.kernel_approx_error <- function(x, ...) {
  cat(sprintf("Error of Z Z' against the exact kernel on %d points, %d features:\n",
              x$n, x$n_features))
  cat(sprintf("  max %.4g   rms %.4g\n", x$max, x$rms))
  invisible(x)
}
