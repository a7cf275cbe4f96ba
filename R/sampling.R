# How the frequencies of a Fourier map are drawn (random_features(sampling =)).
#
# sample_frequencies() returns list(omega = d x D matrix of frequencies,
# phase = D phases in [0, 2 pi) for the phase map, NULL for the pair map).
# Every scheme draws from R's generator only (set.seed() reproduces it).
sample_frequencies <- function(kernel, D, d, type, sampling) {
  switch(sampling,
         iid = list(omega = t(spectral_sample(kernel, D, d)),
                    phase = if (type == "phase") stats::runif(D, 0, 2 * pi)),
         orthogonal = orthogonal_frequencies(kernel, D, d, type),
         qmc = qmc_frequencies(kernel, D, d, type))
}

orthogonal_frequencies <- function(kernel, D, d, type) {
  stop_arg("sampling", "= \"orthogonal\" is not available yet")
}

qmc_frequencies <- function(kernel, D, d, type) {
  stop_arg("sampling", "= \"qmc\" is not available yet")
}
