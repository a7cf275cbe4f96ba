# Per-input length scales (ARD) for the shift-invariant kernels.
#
# A kernel whose sigma holds one length scale per input column is the same
# kernel, with unit length scale, of x / sigma: the C code never sees the
# vector.  Exact values divide the inputs' columns (kernel_inputs()), the
# fits that standardise fold the scales into their standardisation
# (ard_scaling(), so that their centres, cached blocks and predictions all
# live on the divided inputs), and spectral sampling divides each
# frequency's coordinates (ard_frequencies()), as rff_gp(ard = TRUE) does.
# A vector of equal scales is the isotropic kernel with that scale, bit
# for bit: kernel_unit() gives it the scalar, and nothing is divided.

# The length scales of an ARD kernel, or NULL for one length scale (a
# number, a rule, or a vector of equal scales).
kernel_ard <- function(kernel) {
  s <- kernel$sigma
  if (is.numeric(s) && length(s) > 1L && any(s != s[1L])) s else NULL
}

# The kernel the C code evaluates: unit length scale for an ARD kernel (its
# inputs or frequencies divided by the scales), the scalar for equal ones.
kernel_unit <- function(kernel) {
  s <- kernel$sigma
  if (is.numeric(s) && length(s) > 1L) kernel$sigma <- if (any(s != s[1L])) 1 else s[1L]
  kernel
}

# x with its columns divided by the kernel's length scales (x itself for one
# length scale); NULL stays NULL.
kernel_inputs <- function(kernel, x) {
  s <- kernel_ard(kernel)
  if (is.null(s) || is.null(x)) return(x)
  if (is_sparse_matrix(x)) return(sparse_apply_scaling(x, list(center = 0, scale = s)))
  sweep(x, 2L, s, "/", check.margin = FALSE)
}

# Frequencies of the unit kernel (d x D, one column per frequency) for the
# ARD kernel: coordinate j divided by sigma_j.
ard_frequencies <- function(kernel, omega) {
  s <- kernel_ard(kernel)
  if (is.null(s)) omega else omega / s
}

# A vector of length scales must have one per input column.
check_ard_length <- function(kernel, d) {
  s <- kernel$sigma
  if (is.numeric(s) && length(s) > 1L && length(s) != d) {
    stop_arg("sigma", "has ", length(s), " length scales but the data have ", d,
             " columns: give one length scale per column, or a single one")
  }
  invisible(kernel)
}

# A fit's standardisation (rff_scaling(), or NULL for none) with the ARD
# kernel's length scales folded in: (x - center) / (scale sigma).  The fit
# then uses the unit kernel on the rows so scaled, and so does its predict().
ard_scaling <- function(scaling, kernel, d) {
  s <- kernel_ard(kernel)
  if (is.null(s)) return(scaling)
  if (is.null(scaling)) return(list(center = rep(0, d), scale = s, ard_only = TRUE))
  scaling$scale <- scaling$scale * s
  scaling
}

# check_sigma() for a vector: positive finite length scales.
check_sigma_vector <- function(sigma, arg = "sigma") {
  if (!is.numeric(sigma) || anyNA(sigma) || any(!is.finite(sigma)) || any(sigma <= 0)) {
    stop_arg(arg, "must hold positive finite length scales, one per input column")
  }
  as.double(sigma)
}

# "(0.5, 1, 2)", or the first five and a count, for print methods.
ard_text <- function(s, digits) {
  shown <- as.character(signif(s[seq_len(min(5L, length(s)))], digits))
  paste0("(", paste(shown, collapse = ", "),
         if (length(s) > 5L) sprintf(", ... %d in all", length(s)), ")")
}
