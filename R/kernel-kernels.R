# Kernel objects: constructors, print methods, and what the C code needs.

new_kernel <- function(name, ..., shift_invariant = TRUE) {
  structure(list(name = name, ..., shift_invariant = shift_invariant),
            class = c(paste0(name, "_kernel"), "bochner_kernel"))
}

check_sigma <- function(sigma) {
  if (identical(sigma, "median") || identical(sigma, "sigest")) return(sigma)
  if (is.character(sigma)) stop_arg("sigma", "must be a positive number, \"median\" or \"sigest\"")
  if (is.numeric(sigma) && length(sigma) > 1L) return(check_sigma_vector(sigma))   # ARD
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
#' **`sigma` is a length scale here; elsewhere it is often an inverse
#' width.**  Parameters copied from another package mean something else here
#' unless converted; `gamma =` takes them as those packages write them:
#'
#' | here | kernlab | e1071, scikit-learn |
#' |---|---|---|
#' | `gaussian_kernel(sigma)`: \eqn{\exp(-\|x-y\|^2 / (2\sigma^2))} | `rbfdot(sigma = s)`: \eqn{\exp(-s\|x-y\|^2)}, an inverse width: `gaussian_kernel(gamma = s)`, \eqn{\sigma = 1/\sqrt{2s}} | `svm(gamma = g)`, `RBF`/`rbf_kernel(gamma = g)`: \eqn{\exp(-g\|x-y\|^2)}: `gaussian_kernel(gamma = g)`; scikit-learn's `RBF(length_scale = l)` is `gaussian_kernel(sigma = l)` |
#' | `laplace_kernel(sigma)`: \eqn{\exp(-\|x-y\|_1 / \sigma)} (\eqn{L_1} distance) | `laplacedot(sigma = s)`: \eqn{\exp(-s\|x-y\|_2)} (Euclidean): `matern_kernel(sigma = 1/s, nu = 0.5)` | `laplacian_kernel(gamma = g)`: \eqn{\exp(-g\|x-y\|_1)}: `laplace_kernel(gamma = g)`, \eqn{\sigma = 1/g} |
#' | `cauchy_kernel(sigma)` | — | — (`cauchy_kernel(gamma = g)` is \eqn{\prod_j 1/(1 + g (x_j-y_j)^2)}, \eqn{\sigma = 1/\sqrt g}) |
#' | `matern_kernel(sigma, nu)` | — | `Matern(length_scale = sigma, nu = nu)`, the same parametrisation |
#'
#' So `ksvm(..., kpar = list(sigma = 0.05))` corresponds to
#' `rff_svm(..., kernel = gaussian_kernel(gamma = 0.05))`, not to
#' `gaussian_kernel(sigma = 0.05)` (a width 60 times smaller).  Both
#' `ksvm()` and `svm()` scale the inputs by default, as `rff_svm()` and
#' `rff_ridge()` do (`scale = TRUE`), so the numbers carry over.
#'
#' **Default bandwidths.**  With `sigma = "median"` the bandwidth is the
#' median distance between rows of the data (for the Gaussian kernel,
#' \eqn{\gamma = 1 / (2\, \mathrm{median}^2)}); kernlab's default
#' (`kpar = "automatic"`, `sigest()`) takes \eqn{s} between quantiles of
#' \eqn{1 / \|x-y\|^2}, about twice that \eqn{\gamma}, and is
#' `sigma = "sigest"` here (below); e1071 takes
#' \eqn{\gamma = 1/d} and scikit-learn \eqn{\gamma = 1/(d \cdot
#' \mathrm{var}(x))} (`gamma = "scale"`).  The constructors' default,
#' `sigma = 1`, is a fixed length scale, **not** the default of the fits:
#' [rff_svm()], [rff_ridge()] and [kernel_kmeans()] resolve the bandwidth of
#' their default kernel on the (standardised) data (see their `kernel`
#' argument), while `rff_svm(x, y, kernel = gaussian_kernel())` uses
#' \eqn{\sigma = 1} on them whatever the data (too narrow for many
#' columns).  To keep the fits' bandwidth, leave `kernel` unset.  Where
#' there are no data to resolve a rule such as `"median"` on, as in
#' [spectral_sample()], it is an error.
#'
#' **Per-input length scales (ARD).**  `sigma` may be a vector with one
#' length scale per input column: the kernel is then the same kernel, with
#' unit length scale, of \eqn{(x_1/\sigma_1, \dots, x_d/\sigma_d)} (for the
#' Gaussian, \eqn{\exp(-\sum_j (x_j-y_j)^2 / (2\sigma_j^2))}), and its
#' spectral density that of the unit kernel with coordinate \eqn{j} of each
#' frequency divided by \eqn{\sigma_j}.  Exact values ([kernel_matrix()],
#' [falkon()], [nystrom_features()], [kernel_kmeans()]) divide the inputs,
#' random features divide the frequencies (`sampling = "structured"` is
#' refused); a fit that standardises its inputs applies the scales to the
#' standardised columns.  A vector of equal scales is the kernel with that
#' one scale, value for value.  `gamma` may likewise be a vector.
#'
#' @param sigma Length scale, a positive number (or one per input column,
#'   see ARD above), or a rule computed from the
#'   data when a map, fit or Gram matrix is computed (and stored in the
#'   result), on the pairwise distances between rows (Euclidean for the
#'   Gaussian and Matérn kernels, \eqn{L_1} for the Laplace kernel, per
#'   coordinate for the Cauchy kernel) of an evenly spaced subsample of at
#'   most 1000 rows: `"median"`, the median distance (the median
#'   heuristic); or `"sigest"`, the rule of `kernlab::sigest()` that
#'   `kernlab::ksvm()` uses by default, translated to this length scale:
#'   with \eqn{q_{0.1}} and \eqn{q_{0.9}} the 10 % and 90 % quantiles of the
#'   squared distances, kernlab's inverse width is
#'   \eqn{s = (1/q_{0.9} + 1/q_{0.1})/2} and \eqn{\sigma = 1/\sqrt{2 s}}
#'   (a little above the 10 % quantile of the distances).  `"sigest"` is
#'   [rff_svm()]'s default: measured on nine `mlbench` classification sets
#'   (`bench/investigations/bandwidth.R`) it gains 2.6 points of accuracy over the median
#'   at a fixed cost.
#' @param gamma Instead of `sigma`: the inverse-width parameter of kernlab
#'   (its `sigma`), e1071 and scikit-learn (their `gamma`), a positive
#'   number, converted to `sigma` as in the table above.
#' @param nu Smoothness of the Matérn kernel, a positive number, at most
#'   1000 (beyond that the kernel is the Gaussian to within 1e-3).
#' @return An object of class `c("<name>_kernel", "bochner_kernel")`.
#' @seealso [kernel_matrix()] for Gram matrices, [spectral_sample()] for the
#'   frequencies, [random_features()] for feature maps;
#'   [polynomial_kernel()] and [min_kernel()] for kernels that are not
#'   shift-invariant.
#' @examples
#' gaussian_kernel(sigma = 2)
#' # kernlab's rbfdot(sigma = 0.125), e1071's gamma = 0.125: the same kernel
#' gaussian_kernel(gamma = 0.125)
#' matern_kernel(sigma = 1, nu = 5/2)
#' x <- matrix(rnorm(20), 10)
#' kernel_matrix(laplace_kernel("median"), x)[1:3, 1:3]
#' @name shift_invariant_kernels
NULL

#' @rdname shift_invariant_kernels
#' @export
gaussian_kernel <- function(sigma = 1, gamma = NULL) {
  sigma_or_gamma("gaussian", sigma, gamma, !missing(sigma))
}

#' @rdname shift_invariant_kernels
#' @export
laplace_kernel <- function(sigma = 1, gamma = NULL) {
  sigma_or_gamma("laplace", sigma, gamma, !missing(sigma))
}

#' @rdname shift_invariant_kernels
#' @export
cauchy_kernel <- function(sigma = 1, gamma = NULL) {
  sigma_or_gamma("cauchy", sigma, gamma, !missing(sigma))
}

# A kernel from its length scale sigma or, converted by the table of
# kernels, from the inverse width gamma of other packages (kept, so that
# print() shows it).
sigma_or_gamma <- function(name, sigma, gamma, sigma_given) {
  if (is.null(gamma)) return(new_kernel(name, sigma = check_sigma(sigma)))
  if (sigma_given) {
    stop_arg("gamma", "cannot be given with 'sigma': they are two ways of writing the ",
             "same width (see ?gaussian_kernel)")
  }
  gamma <- if (length(gamma) > 1L) check_sigma_vector(gamma, "gamma")
           else check_positive(gamma, "gamma")
  new_kernel(name, sigma = kernel_table[[name]]$gamma(gamma), gamma = gamma)
}

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

# One table of the kernels: all the R side knows of each kernel, in one
# place instead of a switch() per property.  Per kernel:
#   code        the integer code shared with src/bochner.h
#   label       its name in print methods
#   formula     k(x, y) as printed, a function of the kernel object
#   parameters  the numeric vector the C code takes
#   median      the distance of the median heuristic ("euclidean",
#               "manhattan", or "coordinate": per coordinate), NULL if none
#   gamma       sigma from the inverse-width parameter gamma of kernlab and
#               scikit-learn (gaussian_kernel(gamma = )), NULL if none
#   isotropic   the spectral density is rotation-invariant (orthogonal and
#               structured sampling need that)
#   moment      E||w||^2 under the spectral density in d dimensions (Inf
#               where it has none), for shift-invariant kernels
#   diagonal    k(x_i, x_i) for the rows of x (1 for shift-invariant ones)
kernel_table <- local({
  sigma_only <- function(k) k$sigma
  ones <- function(k, x) rep(1, nrow(x))
  list(
    gaussian = list(
      code = 1L, label = "Gaussian", formula = function(k) "exp(-||x - y||^2 / (2 sigma^2))",
      parameters = sigma_only, median = "euclidean", gamma = function(g) 1 / sqrt(2 * g),
      isotropic = TRUE, moment = function(k, d) d / k$sigma^2, diagonal = ones),
    laplace = list(
      code = 2L, label = "Laplace", formula = function(k) "exp(-||x - y||_1 / sigma)",
      parameters = sigma_only, median = "manhattan", gamma = function(g) 1 / g,
      isotropic = FALSE, moment = function(k, d) Inf,          # Cauchy coordinates
      diagonal = ones),
    cauchy = list(
      code = 3L, label = "Cauchy", formula = function(k) "prod_j 1 / (1 + (x_j - y_j)^2 / sigma^2)",
      parameters = sigma_only, median = "coordinate", gamma = function(g) 1 / sqrt(g),
      isotropic = FALSE,
      moment = function(k, d) 2 * d / k$sigma^2,               # Laplace(0, 1/sigma) coordinates
      diagonal = ones),
    matern = list(
      code = 4L, label = "Matern",
      formula = function(k) {
        closed <- c(
          "0.5" = "exp(-r / sigma),  r = ||x - y||",
          "1.5" = "(1 + sqrt(3) r / sigma) exp(-sqrt(3) r / sigma),  r = ||x - y||",
          "2.5" = paste0("(1 + sqrt(5) r / sigma + 5 r^2 / (3 sigma^2)) exp(-sqrt(5) r / sigma),",
                         "  r = ||x - y||"))
        nu <- format(k$nu)
        if (nu %in% names(closed)) closed[[nu]]
        else "2^(1 - nu) / Gamma(nu) z^nu K_nu(z),  z = sqrt(2 nu) ||x - y|| / sigma"
      },
      parameters = function(k) c(k$sigma, k$nu), median = "euclidean", gamma = NULL,
      isotropic = TRUE,
      moment = function(k, d) if (k$nu > 1) d / k$sigma^2 * k$nu / (k$nu - 1) else Inf,
      diagonal = ones),
    polynomial = list(
      code = 5L, label = "Polynomial",
      formula = function(k) {
        if (!is.null(k$degree)) {
          return(sprintf("(%s x.y + %s)^%d", format(k$scale), format(k$offset), k$degree))
        }
        terms <- sprintf("%s (x.y)^%d", format(k$coef), seq_along(k$coef) - 1L)
        paste(terms[k$coef != 0], collapse = " + ")
      },
      parameters = function(k) {
        if (!is.null(k$degree)) c(0, k$degree, k$scale, k$offset) else c(1, k$coef)
      },
      median = NULL, gamma = NULL, isotropic = FALSE, moment = NULL,
      diagonal = function(k, x) {
        t <- rowSums(x * x)
        if (!is.null(k$degree)) return((k$scale * t + k$offset)^k$degree)
        v <- rep(0, length(t))
        for (c in rev(k$coef)) v <- v * t + c
        v
      }),
    min = list(
      code = 6L, label = "Min", formula = function(k) {
        sprintf("%s + sum_j min(x_j, y_j)", format(k$offset))
      },
      parameters = function(k) k$offset, median = NULL, gamma = NULL, isotropic = FALSE,
      moment = NULL, diagonal = function(k, x) k$offset + rowSums(x)),
    exponential_dot = list(
      code = 7L, label = "Exponential dot-product", formula = function(k) "exp(x.y / sigma^2)",
      parameters = sigma_only, median = NULL, gamma = NULL, isotropic = FALSE, moment = NULL,
      diagonal = function(k, x) exp(rowSums(x * x) / k$sigma^2)),
    spectral_mixture = list(
      code = 8L, label = "Spectral mixture",
      formula = function(k) {
        "sum_q w_q cos(2 pi (x - y).mu_q) exp(-sum_p (x_p - y_p)^2 / (2 l_qp^2))"
      },
      parameters = function(k) sm_parameters(k), median = NULL, gamma = NULL,
      isotropic = FALSE, moment = function(k, d) sm_moment(k, d),
      diagonal = function(k, x) rep(kernel_variance(k), nrow(x)))
  )
})

# The kernel's row of kernel_table, or an error for a kernel it lacks.
kernel_info <- function(kernel) {
  info <- kernel_table[[kernel$name]]
  if (is.null(info)) stop("unknown kernel '", kernel$name, "'", call. = FALSE)
  info
}

kernel_label <- function(kernel) {
  info <- kernel_table[[kernel$name]]
  if (is.null(info)) kernel$name else info$label
}

kernel_formula <- function(kernel) kernel_info(kernel)$formula(kernel)

# "Gaussian kernel, sigma = 1.5": the kernel in one phrase, for print methods.
kernel_summary <- function(kernel) {
  params <- kernel_parameter_text(kernel)
  paste0(kernel_label(kernel), " kernel", if (nzchar(params)) paste0(", ", params))
}

kernel_parameter_text <- function(kernel) {
  if (kernel$name == "exponential_dot") return(sprintf("sigma = %s", format(kernel$sigma)))
  if (kernel$name == "spectral_mixture") return(sm_parameter_text(kernel))   # R/spectral-mixture.R
  if (!kernel$shift_invariant) return("")
  sigma <- if (is.character(kernel$sigma)) {
    sprintf("sigma = \"%s\" (%s, resolved on the data)", kernel$sigma,
            if (kernel$sigma == "median") "median heuristic" else "kernlab's sigest rule")
  } else if (isTRUE(kernel$sigma_from_median)) {
    sprintf("sigma = %s (median heuristic)", format(kernel$sigma, digits = 4))
  } else if (isTRUE(kernel$sigma_from_sigest)) {
    sprintf("sigma = %s (sigest rule)", format(kernel$sigma, digits = 4))
  } else if (length(kernel$sigma) > 1L) {
    g <- if (is.null(kernel$gamma)) "" else sprintf(" (from gamma = %s)", ard_text(kernel$gamma, 4))
    sprintf("sigma = %s, one per input (ARD)%s", ard_text(kernel$sigma, 4), g)
  } else if (!is.null(kernel$gamma)) {
    sprintf("sigma = %s (from gamma = %s)", format(kernel$sigma, digits = 6), format(kernel$gamma))
  } else {
    sprintf("sigma = %s", format(kernel$sigma))
  }
  if (isTRUE(kernel$sigma_learned)) {
    sigma <- if (length(kernel$sigma) > 1L) sub("(ARD)", "(ARD, learned)", sigma, fixed = TRUE)
             else sprintf("sigma = %s (learned)", format(kernel$sigma, digits = 4))
  }
  if (kernel$name == "matern") sigma <- paste0(sigma, ", nu = ", format(kernel$nu))
  sigma
}

# Integer codes shared with src/bochner.h.
kernel_code <- function(kernel) kernel_info(kernel)$code

# An ARD kernel's are those of its unit kernel (R/kernel-ard.R): its inputs
# are divided by the length scales before they reach C.
kernel_parameters <- function(kernel) kernel_info(kernel)$parameters(kernel_unit(kernel))
