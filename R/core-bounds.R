#' How many random features are enough
#'
#' The number of random frequencies \eqn{D} that the lecture bounds ask for,
#' for an error at most `eps` with probability at least \eqn{1 - \delta}
#' (all kernels here have \eqn{k(0) = 1}).
#'
#' **Pointwise** (one pair \eqn{x, y}; Hoeffding's inequality).  Each term of
#' the pair map's inner product, \eqn{\cos(w \cdot (x - y))}, lies in
#' \eqn{[-1, 1]}, so \eqn{P(|z(x) \cdot z(y) - k| \ge \epsilon) \le
#' 2 \exp(-D \epsilon^2 / 2)} and \eqn{D = 2 \log(2/\delta) / \epsilon^2}
#' frequencies suffice.  The phase map's terms
#' \eqn{2 \cos(w \cdot x + b) \cos(w \cdot y + b)} lie in \eqn{[-2, 2]}, which
#' gives \eqn{D = 8 \log(2/\delta) / \epsilon^2}.  Neither depends on the
#' kernel or the dimension.
#'
#' **Uniform** over a set of diameter \eqn{R} in \eqn{d} dimensions
#' (Rahimi and Recht 2007, phase map):
#' \deqn{P\left(\sup_{x, y} |z(x) \cdot z(y) - k(x, y)| \ge \epsilon\right)
#'   \le 2^8 \left(\frac{\sigma_p R}{\epsilon}\right)^2
#'   \exp\left(-\frac{D \epsilon^2}{4 (d + 2)}\right),}
#' with \eqn{\sigma_p^2 = E\|w\|^2} the second moment of the spectral
#' density: \eqn{d / \sigma^2} for the Gaussian kernel, \eqn{2d/\sigma^2} for
#' the Cauchy kernel, \eqn{d \nu / (\sigma^2 (\nu - 1))} for the Matérn
#' kernel with \eqn{\nu > 1}.  It is infinite for the Laplace kernel (Cauchy
#' frequencies) and for the Matérn kernel with \eqn{\nu \le 1}, where this
#' bound says nothing: asking for it is an error.  Solving for \eqn{D}:
#' \eqn{D = 4 (d + 2) / \epsilon^2 \cdot \log(2^8 (\sigma_p R / \epsilon)^2 / \delta)}.
#' The bound is loose (it comes from a covering argument), so it asks for far
#' more features than experiments need; see the vignette on bounds.
#'
#' @param eps Target error, in (0, 1).
#' @param delta Allowed probability of failure, in (0, 1).
#' @param kernel A shift-invariant kernel, for \eqn{\sigma_p} (uniform bound
#'   only).
#' @param x Optional data: gives `d` and `diameter` when they are not given,
#'   and resolves `sigma = "median"`.  The diameter of up to 2000 rows is
#'   computed exactly; beyond that the bound \eqn{2 \max_i \|x_i - \bar x\|}
#'   is used, which keeps the figure valid.
#' @param d Dimension of the data.
#' @param diameter Diameter \eqn{R} of the set the points lie in.
#' @return A list of class `"rff_dimension"` with `pointwise_pair` and
#'   `pointwise_phase` (numbers of frequencies), and, when `d` and
#'   `diameter` are known, `uniform` with `sigma_p`, `d` and `diameter`.
#' @references Rahimi, A. and Recht, B. (2007). Random features for
#'   large-scale kernel machines. *Advances in Neural Information Processing
#'   Systems 20*.
#' @examples
#' rff_dimension(eps = 0.05, delta = 0.01)
#' rff_dimension(eps = 0.1, delta = 0.01, kernel = gaussian_kernel(1), d = 5, diameter = 4)
#' @export
rff_dimension <- function(eps, delta = 0.05, kernel = gaussian_kernel(), x = NULL,
                          d = NULL, diameter = NULL) {
  eps <- check_probability(eps, "eps")
  delta <- check_probability(delta, "delta")
  log_term <- log(2 / delta)
  out <- list(eps = eps, delta = delta,
              pointwise_pair = ceiling(2 * log_term / eps^2),
              pointwise_phase = ceiling(8 * log_term / eps^2))
  if (!is.null(x)) {
    x <- as_data_matrix(x, "x")
    if (is.null(d)) d <- ncol(x)
    if (is.null(diameter)) diameter <- data_diameter(x)
  }
  if (!is.null(d) || !is.null(diameter)) {
    if (is.null(d) || is.null(diameter)) {
      stop("the uniform bound needs both 'd' and 'diameter' (or data 'x')", call. = FALSE)
    }
    check_shift_invariant(kernel)
    d <- check_count(d, "d")
    diameter <- check_positive(diameter, "diameter")
    if (identical(kernel$sigma, "median")) {
      if (is.null(x)) stop_arg("kernel", "has sigma = \"median\"; give data 'x' or a numeric sigma")
      kernel <- resolve_kernel(kernel, x)
    }
    sigma_p2 <- spectral_second_moment(kernel, d)
    if (!is.finite(sigma_p2)) {
      stop_arg("kernel", "has a spectral density without a second moment (E||w||^2 is infinite ",
               "for the ", kernel_label(kernel), " kernel",
               if (kernel$name == "matern") " with nu <= 1", "), so the uniform bound does ",
               "not apply; the pointwise figures still do")
    }
    sigma_p <- sqrt(sigma_p2)
    log_arg <- 2^8 * (sigma_p * diameter / eps)^2 / delta
    out$uniform <- max(1, ceiling(4 * (d + 2) / eps^2 * log(log_arg)))
    out$sigma_p <- sigma_p
    out$d <- d
    out$diameter <- diameter
    out$kernel <- kernel
  }
  structure(out, class = "rff_dimension")
}

data_diameter <- function(x) {
  if (nrow(x) < 2L) return(0)
  if (nrow(x) <= 2000L) return(max(stats::dist(x)))
  centred <- sweep(x, 2L, colMeans(x))
  2 * sqrt(max(rowSums(centred^2)))
}

#' @export
print.rff_dimension <- function(x, ...) {
  cat(sprintf("Random features for error eps = %g with probability 1 - %g\n", x$eps, x$delta))
  cat(sprintf("  pointwise (Hoeffding):  %s frequencies for the pair map (%s columns),\n",
              format(x$pointwise_pair, big.mark = ","), format(2 * x$pointwise_pair, big.mark = ",")))
  cat(sprintf("                          %s for the phase map\n",
              format(x$pointwise_phase, big.mark = ",")))
  if (!is.null(x$uniform)) {
    cat(sprintf("  uniform (Rahimi-Recht): %s for the phase map (d = %d, diameter = %.4g, sigma_p = %.4g)\n",
                format(x$uniform, big.mark = ","), x$d, x$diameter, x$sigma_p))
  }
  invisible(x)
}
