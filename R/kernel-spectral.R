#' Sample frequencies from a kernel's spectral density
#'
#' By Bochner's theorem a shift-invariant kernel with \eqn{k(0) = 1} is the
#' characteristic function of a probability distribution \eqn{p}:
#' \eqn{k(x - y) = E_{w \sim p}[\cos(w \cdot (x - y))]}.  This draws from
#' \eqn{p} with R's random number generator, so [set.seed()] reproduces the
#' draws.
#'
#' The distributions (see [shift_invariant_kernels]): Gaussian kernel,
#' \eqn{N(0, \sigma^{-2} I)} (the same numbers as `rnorm(n * d, 0, 1/sigma)`);
#' Laplace kernel, independent Cauchy\eqn{(0, 1/\sigma)} coordinates (as
#' `rcauchy(n * d, 0, 1/sigma)`); Cauchy kernel, independent
#' Laplace\eqn{(0, 1/\sigma)} coordinates, with density
#' \eqn{\frac{\sigma}{2} e^{-\sigma |w|}}; Matérn kernel, a multivariate
#' \eqn{t} with \eqn{2\nu} degrees of freedom,
#' \eqn{w = z / (\sigma \sqrt{u / (2\nu)})} with \eqn{z \sim N(0, I_d)} and
#' \eqn{u \sim \chi^2_{2\nu}} (one \eqn{u} per row).
#'
#' @param kernel A shift-invariant kernel with a numeric `sigma`.
#' @param n Number of frequencies (rows).
#' @param d Dimension of the data (columns).
#' @return An \eqn{n \times d} matrix whose rows are independent draws.
#' @examples
#' set.seed(1)
#' w <- spectral_sample(gaussian_kernel(sigma = 2), 5000, 1)
#' sd(w)   # close to 1/2
#' # the empirical characteristic function approximates the kernel:
#' mean(cos(w * 1.5)); exp(-1.5^2 / (2 * 2^2))
#' @export
spectral_sample <- function(kernel, n, d) {
  check_shift_invariant(kernel)
  if (is.character(kernel$sigma)) {
    stop_arg("kernel", "has sigma = \"", kernel$sigma, "\", which is resolved on data, and ",
             "spectral_sample() has none: give sigma (or gamma) as a number, or fit a map ",
             "with random_features(x, kernel), whose frequencies are its 'omega'")
  }
  n <- check_count(n, "n")
  d <- check_count(d, "d")
  check_allocation(n, d, "the frequency matrix", arg = "n")
  check_ard_length(kernel, d)
  w <- .Call(C_spectral_sample, kernel_code(kernel), kernel_parameters(kernel), n, d)
  # ARD: the unit kernel's frequencies, coordinate j divided by sigma_j
  t(ard_frequencies(kernel, t(w)))
}

check_shift_invariant <- function(kernel, arg = "kernel") {
  check_kernel(kernel, arg)
  if (!isTRUE(kernel$shift_invariant)) {
    stop_arg(arg, "must be shift-invariant (Gaussian, Laplace, Cauchy, Matern or spectral ",
             "mixture); the ",
             kernel$name, " kernel has no spectral density")
  }
  kernel
}

# E||w||^2 under the spectral density in d dimensions: Inf where the
# density has no second moment.
# (from the table of kernels, R/kernels.R)
# For ARD, E w_j^2 is the unit kernel's per coordinate over sigma_j^2.
spectral_second_moment <- function(kernel, d) {
  s <- kernel_ard(kernel)
  unit <- kernel_unit(kernel)
  if (is.null(s)) return(kernel_info(unit)$moment(unit, d))
  kernel_info(unit)$moment(unit, d) / d * sum(1 / s^2)
}
