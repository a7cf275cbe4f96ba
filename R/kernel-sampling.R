# How the frequencies of a Fourier map are drawn (random_features(sampling =)).
#
# sample_frequencies() returns list(omega = d x D matrix of frequencies,
# phase = D phases in [0, 2 pi) for the phase map, NULL for the pair map).
# Every scheme draws from R's generator only (set.seed() reproduces it).
sample_frequencies <- function(kernel, D, d, type, sampling) {
  check_ard_length(kernel, d)
  switch(sampling,
         iid = list(omega = t(spectral_sample(kernel, D, d)),
                    phase = if (type == "phase") stats::runif(D, 0, 2 * pi)),
         orthogonal = orthogonal_frequencies(kernel, D, d, type),
         qmc = qmc_frequencies(kernel, D, d, type))
}

# Orthogonal random features (Yu et al. 2016): blocks of d frequencies with
# orthonormal directions (a Haar-random frame, by Gram-Schmidt in C) and
# independent norms from the kernel's radial law.  Only for kernels whose
# spectral density is rotation-invariant.  The phases are drawn after all
# the frequencies, as for iid sampling.
orthogonal_frequencies <- function(kernel, D, d, type) {
  check_isotropic(kernel, "orthogonal")
  omega <- .Call(C_orthogonal_frequencies, kernel_code(kernel), kernel_parameters(kernel),
                 as.integer(D), as.integer(d))
  omega <- ard_frequencies(kernel, omega)
  list(omega = omega, phase = if (type == "phase") stats::runif(D, 0, 2 * pi))
}

# Orthogonal and structured frequencies rotate directions, so they need a
# spectral density that is rotation-invariant.
check_isotropic <- function(kernel, sampling) {
  if (!isTRUE(kernel_info(kernel)$isotropic)) {
    stop_arg("sampling", "= \"", sampling, "\" needs an isotropic kernel (Gaussian or ",
             "Matern): the spectral density of the ", kernel_label(kernel), " kernel is a ",
             "product of one-dimensional laws, not rotation-invariant, so rotated directions ",
             "would bias the estimate; use sampling = \"qmc\" or \"iid\"")
  }
}

# Randomised quasi-Monte Carlo (Avron et al. 2016): a scrambled Halton
# sequence in [0, 1)^s through the inverse CDF of the spectral law (in C);
# s = d, plus one dimension for the Matern kernel's chi-square radius, plus
# one for the phase of the phase map (the last dimension: 2 pi u).
qmc_frequencies <- function(kernel, D, d, type) {
  if (identical(kernel$name, "spectral_mixture")) {
    stop_arg("sampling", "= \"qmc\" needs a spectral density with independent coordinates ",
             "or a radial law; the spectral mixture has neither: use sampling = \"iid\"")
  }
  if (d > 1e6) {
    stop_arg("sampling", "= \"qmc\" takes at most 1e6 input columns (one prime base ",
             "of the Halton sequence each); x has ", d)
  }
  out <- .Call(C_qmc_frequencies, kernel_code(kernel), kernel_parameters(kernel),
               as.integer(D), as.integer(d), type == "phase")
  out$omega <- ard_frequencies(kernel, out$omega)
  out
}
