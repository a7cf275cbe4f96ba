#' One vocabulary: the arguments of bochner
#'
#' Every function of the package calls a setting by the same name and means
#' the same by it.  A test (`tests/testthat/test-arguments.R`) reads the
#' formals of every exported function and method and holds them to this
#' page.
#'
#' | argument | meaning |
#' |---|---|
#' | `x`, `y` | the data (a matrix, data frame, sparse matrix, formula or [data_chunks()]) and the response |
#' | `kernel` | a kernel object ([gaussian_kernel()], ...), never a name |
#' | `D` | the number of random frequencies of a random-feature map (Fourier features, random projections); nothing else |
#' | `m` | the number of Nystrom centres (landmarks), or a matrix of them: [nystrom_features()], [falkon()], [kernel_kmeans()] with `method = "nystrom"` |
#' | `centers` | clusters, in [kernel_kmeans()] only: their number or initial centres |
#' | `lambda` | a ridge penalty on the scale of a mean over the rows (as `glmnet`'s), or a path of them, or `"auto"` |
#' | `tol` | a stopping tolerance |
#' | `max_iter` | the most iterations of an iterative solver |
#' | `seed` | `NULL` (the current random stream) or a seed for the function's draws, restored afterwards |
#' | `nthreads` | threads for the C kernels, see [bochner_threads()] |
#' | `weights` | case weights, one per row |
#' | `scale` | standardise the columns of `x` before the kernel |
#' | `map` | a fitted feature map to use instead of drawing one |
#' | `precision` | `"auto"`, `"double"` or `"single"`: whether the kernel blocks ([falkon_control()]) or the feature products \eqn{Z^T Z} ([rff_ridge()]; [rff_gp()]'s `control`, with its other numeric settings; the centred cross products of [hsic_test()], [mmd_test()], [kernel_pca()] and [kernel_cca()]) are formed in single precision, accumulated in double (see [feature_precision]) |
#'
#' **Renamed arguments.**  Names that meant something else in one function
#' were renamed; the old name still works for one release, with a message
#' that names the new one:
#'
#' | function | old | new |
#' |---|---|---|
#' | [falkon()] | `centers` | `m` |
#' | [kernel_kmeans()] | `iter.max` (as [stats::kmeans()]) | `max_iter` |
#' | [kernel_kmeans()], [kernel_pca()], [kernel_cca()], [mmd_test()], [hsic_test()] with `method = "nystrom"` | `D` (the landmarks) | `m` |
#' | [rff_tune()] with `method = "falkon"` | `D` (the centres) | `m` |
#' | [rff_svm()] | `epsilon` (the solver's tolerance) | `tol` |
#' | [rff_svm()] on [data_chunks()] | `tol` (the outer rounds' duality gap) | `gap_tol`; `tol` is the local solver's, as in memory |
#' | [rff_ridge()] | `lambda` on the scale of a sum over rows | `lambda` per row, as [falkon()]'s (the old value divided by \eqn{n}) |
#'
#' kernlab's and e1071's names (`C`, `kpar`, `gamma`, `prob.model`,
#' `scaled`) are refused with the name bochner uses (see [rff_svm()]).
#'
#' **The kernel's default.**  The supervised machines standardise their
#' inputs and default to a Gaussian kernel whose bandwidth comes from the
#' data.  The rule the measurements support is kernlab's `"sigest"` for
#' classes and the median heuristic for numbers: in `bench/investigations/bandwidth.md`
#' (D = 1024, three 70/30 splits, mean test figures) `"sigest"` gives
#' rff_svm an accuracy of 0.8475 against 0.8214 for the median (rff_ridge
#' 0.8691 against 0.8674), and the median gives rff_ridge a test RMSE /
#' sd(y) of 0.4320 against 0.4648 for `"sigest"`.  [rff_svm()] (classes
#' only) and [rff_gp()] (numbers only; the median is then the start of its
#' marginal-likelihood search) follow it.  Two defaults still differ:
#' [falkon()] uses `"sigest"` for numbers too, and [rff_ridge()] the median
#' for classes too (0.17 points of accuracy on the bench's mean);
#' [kernel_kmeans()] and the kernel statistics have their own rules,
#' documented on their pages.
#'
#' @name bochner_arguments
NULL
