# Structured orthogonal random features (random_features(sampling = "structured")):
# SORF, Yu et al. (2016), with radial norms from the kernel's spectral law.
#
# Inputs are padded with zeros to p = 2^ceiling(log2(d)) (at least 32).  Block
# b (b = 1, ..., B = ceiling(D / p)) holds p frequencies, the rows of
#   W_b = diag(r / sigma) M_b,   M_b = Hn D1 Hn D2 Hn D3,
# Hn = H / sqrt(p) the normalised Walsh-Hadamard matrix and D1, D2, D3 random
# diagonal sign matrices, so M_b is orthogonal and each of its rows is a unit
# vector of R^p.  The norms r_j are drawn independently from the kernel's
# radial law in p (not d) dimensions: chi_p for the Gaussian kernel,
# chi_p * sqrt(2 nu / chi^2_{2 nu}) for the Matern kernel.  If the rows of M_b
# were uniform on the unit sphere of R^p (as for a Haar orthogonal matrix),
# each frequency would be exactly the p-dimensional spectral law, whose first
# d coordinates -- the only ones a zero-padded input sees -- follow exactly
# the d-dimensional spectral law (the marginal of N(0, I_p / sigma^2) or of
# the multivariate t is the same law in d dimensions): the map would be
# unbiased, as orthogonal random features are.  The rows of M_b are only
# approximately uniform (each entry has mean 0 and variance 1/p, but
# the directions are those of H D2 H applied to random signs), so the
# estimate is approximately unbiased; Yu et al. bound the bias by
# O(||x - y|| / (sigma sqrt(p))), and the package's tests measure it.
#
# The map stores the signs (an integer p x 3 x B array: D1, D2, D3 of each
# block), the D radial scales r_j / sigma and the phases: memory O(D), and the
# transform (src/structured.c) costs O(D log p) per row.

build_structured_map <- function(kernel, x, D, type) {
  check_isotropic(kernel, "structured")
  if (!is.null(kernel_ard(kernel))) {
    stop_arg("sampling", "= \"structured\" takes one length scale (it rotates the inputs ",
             "themselves); for one per input use sampling = \"orthogonal\" or \"iid\"")
  }
  d <- ncol(x)
  p <- structured_dimension(d)
  if (is.na(p)) stop_arg("x", "has too many columns for structured features")
  B <- (D + p - 1L) %/% p
  check_allocation(3 * p, B, "the sign matrices", arg = "D")
  sign <- array(2L * sample.int(2L, 3 * p * B, replace = TRUE) - 3L, c(p, 3L, B))
  radial <- structured_radial(kernel, D, p) / kernel$sigma
  phase <- if (type == "phase") stats::runif(D, 0, 2 * pi)
  structure(list(kernel = kernel, D = D, type = type, sampling = "structured",
                 p = as.integer(p), sign = sign, radial = radial, phase = phase,
                 scale = sqrt(if (type == "phase") 2 / D else 1 / D),
                 n_features = as.integer(if (type == "pair") 2 * D else D)),
            class = c("structured_features", "random_features"))
}

# The padded dimension: the smallest power of 2 >= d, at least 32.  Small
# Hadamard blocks are far from random rotations: with p = 2, 8 or 16 the
# bias of z(x).z(y) reaches 0.19, 0.21 and 0.02 (Gaussian and Matern
# kernels, d = 2, ||x - y|| = 3 sigma); from p = 32 on it is below 0.003,
# within the noise of 3000 replicates (test-structured.R).  Padding costs
# only O(log p) per feature.
structured_dimension <- function(d) {
  p <- 2^max(5, ceiling(log2(d)))
  if (p > 2^29) NA_integer_ else as.integer(p)
}

# D independent norms from the kernel's radial law in p dimensions.
structured_radial <- function(kernel, D, p) {
  r <- sqrt(stats::rchisq(D, df = p))
  if (kernel$name == "matern") r <- r * sqrt(2 * kernel$nu / stats::rchisq(D, df = 2 * kernel$nu))
  r
}

#' @export
transform_features.structured_features <- function(map, x, nthreads) {
  .Call(C_structured_transform, x, map$sign, map$radial, map$phase, map$scale, nthreads)
}

#' @export
feature_map_title.structured_features <- function(map) {
  what <- if (map$type == "phase") "phase map sqrt(2/D) cos(w.x + b)"
          else "pair map sqrt(1/D) [cos(w.x), sin(w.x)]"
  sprintf("Structured orthogonal random features (SORF, %d Hadamard blocks of %d), %s, D = %d",
          dim(map$sign)[3], map$p, what, map$D)
}
