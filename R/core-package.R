#' bochner: random features for scalable kernel methods
#'
#' Bochner's theorem says a shift-invariant positive-definite kernel is the
#' Fourier transform of a probability measure; sampling frequencies from it
#' gives random features whose inner products approximate the kernel.
#'
#' * Kernels: [gaussian_kernel()], [laplace_kernel()], [cauchy_kernel()],
#'   [matern_kernel()], [polynomial_kernel()], [min_kernel()];
#'   exact Gram matrices with [kernel_matrix()].
#' * Frequencies: [spectral_sample()].
#' * Feature maps: [random_features()] and [predict.random_features()];
#'   their accuracy with [kernel_approx_error()] and [rff_dimension()].
#' * Clustering: [kernel_kmeans()], exact on the Gram matrix or on random
#'   features.
#' * Kernel machines on random features: [rff_svm()] (support vector
#'   machines, by dual coordinate descent) and [rff_ridge()] (ridge
#'   regression and classification).
#'
#' The C routines use OpenMP threads, see [bochner_threads()].
#'
#' **Memory.** Before allocating, the fits and maps ([rff_svm()],
#' [rff_ridge()], [random_features()] and its `predict()`,
#' [nystrom_features()], [kernel_kmeans()]) estimate what they will hold at
#' once (features, \eqn{D \times D} moments, solver state) and refuse a
#' computation that would need more than the memory available (on Linux,
#' `MemAvailable` in `/proc/meminfo`), with the estimate and the argument to
#' change (`D`, `m`, `newdata`).  `options(bochner.max_bytes = )` sets
#' another limit in bytes; `kernel_kmeans(method = "exact")` reads
#' `options(bochner.max_gram_bytes = )` first.
#'
#' @keywords internal
#' @useDynLib bochner, .registration = TRUE, .fixes = "C_"
#' @importFrom stats predict
"_PACKAGE"
