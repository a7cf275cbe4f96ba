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
#' * Nystrom maps: [nystrom_features()]; polynomial and dot-product kernels:
#'   [polynomial_features()].
#' * Clustering: [kernel_kmeans()], exact on the Gram matrix or on random
#'   features or Nystrom maps.
#' * Supervised machines (one parent class, [bochner_fit]): [rff_svm()]
#'   (support vector machines, by dual coordinate descent), [rff_ridge()]
#'   (ridge regression and classification), [falkon()] (kernel ridge and
#'   logistic regression on Nystrom centres), [rff_gp()] (Gaussian
#'   processes); [rff_tune()] cross-validates them.
#' * Kernel statistics: [mmd_test()], [hsic_test()], [kernel_pca()],
#'   [kernel_cca()].
#' * Data in pieces: [data_chunks()], see [chunked_fits].
#' * The names of the arguments, the same everywhere: [bochner_arguments].
#'
#' **Which machine?**  Three of the four fit regressions.  From the bench
#' (`bench/machines.md` and `bench/gp.md`; 70/30 splits, times on an idle
#' 2-core machine, so ratios within a row are what to compare):
#'
#' | machine | for | cost | prefer it when | evidence |
#' |---|---|---|---|---|
#' | [rff_svm()] | classes (probabilities: Platt sigmoids of the training decision values, of five folds' with `probability = TRUE`) | O(n D) a pass, D = 8192 down to 1024 as rows grow | many rows, classes, the hinge loss's margin; fastest default | within a point of `kernlab::ksvm()` on Satellite and Shuttle (0.9059 / 0.9976 against 0.9063 / 0.9978), test log-loss at most 1.05x `ksvm(prob.model = TRUE)`'s on the seven bench sets; 10^5 rows in 2.9 s (`e1071::svm()`: 561 s) |
#' | [rff_ridge()] | numbers, classes (probabilities as `rff_svm()`'s; leave-one-out scores with `probability = TRUE`) | O(n D^2) once, then any `lambda` free | a closed form, `lambda = "auto"` by leave-one-out or GCV, small memory on huge n | the most accurate default on Vehicle (0.8307 against ksvm's 0.7087; Vowel 0.9495 against 0.8788); 10^6 rows in 9.2 s at 0.54 GB |
#' | [falkon()] | numbers, classes (probabilities calibrated on its held-out slice) | O(n m) a CG pass, m grown on a held-out slice | the accuracy of the exact kernel at scale | diamonds RMSE 0.111 against ksvm (C = 10) 0.110 in 0.05 of its time; 10^6 rows, m = 10^4: test RMSE 0.525 (noise 0.5) in 94 s on 2 cores, 1.3 GB |
#' | [rff_gp()] | numbers with error bars | O(n D^2) per likelihood evaluation | predictive intervals, learned bandwidths (ARD, spectral mixtures) | BostonHousing RMSE 2.56, 95 % intervals covering 0.975, against the exact GP's 2.35 / 0.980 |
#'
#' The C routines use OpenMP threads, see [bochner_threads()].
#'
#' **Memory.** Fits and maps estimate what they will hold before they
#' allocate it and refuse what would not fit, naming the argument to change:
#' see [bochner_memory].
#'
#' @keywords internal
#' @useDynLib bochner, .registration = TRUE, .fixes = "C_"
#' @importFrom stats predict
"_PACKAGE"
