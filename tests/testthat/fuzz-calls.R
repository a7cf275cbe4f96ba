# Fuzz script, run by test-fuzz.R in a separate R process:
#   Rscript fuzz-calls.R <n_calls> <seed> <log file>
# Makes n_calls calls of exported functions, methods and the C entry points
# (.Call) with random combinations of good and bad arguments.  Every call
# must return or signal an R error; a crash (segfault, abort, sanitizer
# report) kills the process before it prints "FUZZ DONE".  Each call is
# written to the log file before it is made, so the last line of the log
# names the call that crashed.
args <- commandArgs(trailingOnly = TRUE)
n_calls <- as.integer(args[1])
seed <- as.integer(args[2])
log_file <- args[3]
suppressPackageStartupMessages(library(bochner))
ns <- asNamespace("bochner")
set.seed(seed)

# Pools of values.  Sizes stay small so that a few hundred calls take
# seconds: the valid counts are small, and the "huge" ones are refused
# before anything is allocated.
mat <- function(n, d) matrix(round(runif(n * d), 3), n, d)
x_pool <- list(mat(6, 2), mat(1, 2), mat(15, 3), mat(6, 1), mat(0, 2), mat(4, 0),
               replace(mat(6, 2), 2, NA), replace(mat(6, 2), 3, Inf), replace(mat(6, 2), 1, NaN),
               -mat(6, 2), matrix("a", 3, 2), as.data.frame(mat(6, 2)), 1:6, c(0.5, NA),
               list(1, 2), factor(1:3), NULL, TRUE, "x", mat(6, 2) + 0i,
               data.frame(a = letters[1:6], b = 1:6), matrix(1e300, 4, 2),
               matrix(0, 5, 2), array(1, c(2, 2, 2)))
num_pool <- list(1, 2, 3, 7, 50, 0, -1, 1.5, 0.5, NA, NaN, Inf, -Inf, 1e15, 2^31, -2^31,
                 .Machine$integer.max + 1, 1e-300, "2", list(2), factor(2), c(1, 2),
                 numeric(0), NULL, TRUE, 2L, NA_integer_, 3i)
choice_pool <- list("phase", "pair", "exact", "rff", "cluster", "distance", "product",
                    "maclaurin", "tensorsketch", "gaussian", "rademacher", "classes",
                    "distances", "p", "", NA_character_, c("a", "b"), 1, NULL, character(0))
sigma_pool <- c(list("median", "mean"), num_pool)

pick <- function(pool) pool[[sample.int(length(pool), 1L)]]
kernel_pool <- function() {
  k <- tryCatch(switch(sample.int(9L, 1L),
    gaussian_kernel(pick(sigma_pool)), laplace_kernel(pick(sigma_pool)),
    cauchy_kernel(pick(sigma_pool)), matern_kernel(pick(sigma_pool), pick(num_pool)),
    polynomial_kernel(pick(num_pool), pick(num_pool), pick(num_pool)),
    polynomial_kernel(coef = pick(list(c(1, 2), c(0, 0, 1), 1, c(1, NA), -1))),
    exponential_dot_kernel(pick(num_pool)), min_kernel(pick(num_pool)),
    pick(list(NULL, "gaussian", list(name = "gaussian", sigma = 1), 1))),
    error = function(e) NULL)
  if (is.null(k)) gaussian_kernel(1) else k
}
# an argument list with some entries dropped or replaced by a random value
maybe <- function(args, pools) {
  for (nm in names(pools)) {
    r <- runif(1)
    if (r < 0.15) args[[nm]] <- NULL
    else if (r < 0.55) {
      v <- pools[[nm]]()
      if (is.null(v)) args[nm] <- list(NULL) else args[[nm]] <- v
    }
  }
  args
}
fit_objects <- function() {
  x <- mat(12, 2)
  list(
    tryCatch(random_features(x, kernelp(), D = pick(list(1, 3, 10))), error = function(e) NULL),
    tryCatch(kernel_kmeans(x, pick(list(1, 2, 3)), kernelp(), method = pick(list("exact", "rff", "nystrom")),
                           D = 8), error = function(e) NULL, warning = function(w) NULL),
    list(), 1, NULL)
}
kernelp <- kernel_pool
X <- function() pick(x_pool)
N <- function() pick(num_pool)
C <- function() pick(choice_pool)

calls <- list(
  kernel_matrix = function() maybe(list(kernel = kernelp(), x = X(), y = NULL, nthreads = 1),
                                   list(kernel = kernelp, x = X, y = X, nthreads = N)),
  spectral_sample = function() maybe(list(kernel = kernelp(), n = 5, d = 2),
                                     list(kernel = kernelp, n = N, d = N)),
  random_features = function() maybe(list(x = mat(8, 2), kernel = kernelp(), D = 5),
                                     list(x = X, kernel = kernelp, D = N, type = C, seed = N,
                                          method = C, projection = C,
                                          sampling = function() pick(c(choice_pool, list(
                                            "iid", "orthogonal", "qmc"))))),
  predict.random_features = function() {
    obj <- pick(fit_objects()[c(1, 1, 1, 3, 4)])
    maybe(list(object = obj, newdata = mat(5, 2)), list(newdata = X, nthreads = N))
  },
  kernel_approx_error = function() maybe(list(map = fit_objects()[[1]], x = mat(5, 2)),
                                         list(x = X, nthreads = N)),
  rff_dimension = function() maybe(list(eps = 0.1), list(eps = N, delta = N, kernel = kernelp,
                                                         x = X, d = N, diameter = N)),
  kernel_kmeans = function() maybe(list(x = mat(10, 2), centers = 2, kernel = kernelp()),
                                   list(x = X, centers = function() pick(c(num_pool, list(c(1, 2, 1, 2, 1, 2, 1, 2, 1, 2)))),
                                        kernel = kernelp, method = C, D = N,
                                        nstart = function() pick(list(1, 2, 0, NA, 1.5, "2")),
                                        max_iter = N, seed = N, nthreads = N,
                                        algorithm = C)),
  predict.kernel_kmeans = function() {
    obj <- pick(fit_objects()[c(2, 2, 2, 3)])
    maybe(list(object = obj, newdata = mat(4, 2)), list(newdata = X, type = C, nthreads = N))
  },
  fitted.kernel_kmeans = function() maybe(list(object = fit_objects()[[2]]), list(method = C)),
  kernels = function() list(sigma = pick(sigma_pool)),
  rff_gp = function() maybe(list(x = mat(10, 2), y = runif(10), D = 5, optimize = FALSE,
                                 noise = 0.1),
                            list(x = X, y = function() pick(list(runif(10), runif(6), NA, "a")),
                                 kernel = kernelp, D = N, method = C, noise = N, signal = N,
                                 ard = function() pick(list(TRUE, FALSE, NA, 1)))),
  # the C entry points, called directly with arguments of random types
  dotcall = function() NULL
)
c_routines <- c("C_rff_transform", "C_kernel_matrix", "C_spectral_sample",
                "C_kmeans_gram", "C_kmeans_lloyd", "C_kmeans_centre_distances",
                "C_kmeans_gram_distances", "C_projection_transform",
                "C_tensorsketch_transform", "C_min_transform", "C_tile_product",
                "C_fast_sincos", "C_fast_exp", "C_matprod", "C_crossprod", "C_ridge_solve", "C_cholesky",
                "C_cholesky_solve", "C_triangular_solve", "C_svm_dcd",
                "C_rff_decision", "C_orthogonal_frequencies", "C_qmc_frequencies",
                "C_structured_transform", "C_fwht")
c_routines <- c(c_routines, "C_sparse_rff", "C_sparse_dist")
c_routines <- c(c_routines, "C_ridge_spectrum", "C_ridge_q_rows", "C_ridge_path_rows")
c_routines <- c(c_routines, "C_gp_stats", "C_gp_gradient", "C_gp_chol")
c_routines <- c(c_routines, "C_svm_local", "C_kmeans_block", "C_kmeans_pp_kernel")
c_routines <- c_routines[vapply(c_routines, exists, logical(1), envir = ns)]
c_arg_pool <- c(x_pool[c(1:4, 7, 10, 17, 18, 19)], num_pool[c(1, 2, 6, 7, 10, 19, 23, 24, 25, 26)],
                list(1:3, c(1L, 2L, 1L), matrix(1L, 3, 2), matrix(1:6, 3, 2), -1L, 0L, 100L))
if (requireNamespace("Matrix", quietly = TRUE)) {
  # sparse matrices, well-formed and not: out-of-range, unsorted or too few
  # indices must be refused by the C checks, not read
  sp <- Matrix::rsparsematrix(6, 2, 0.5)
  sp_range <- sp; sp_range@i[1] <- 99L
  sp_order <- Matrix::sparseMatrix(i = c(1, 2), j = c(1, 1), x = c(1, 2), dims = c(6, 2))
  sp_order@i <- rev(sp_order@i)
  sp_short <- sp; sp_short@p[3] <- 50L
  sp_pool <- list(sp, methods::as(sp, "RsparseMatrix"), Matrix::rsparsematrix(6, 1, 0.5),
                  sp_range, sp_order, sp_short, Matrix::Matrix(0, 3, 2, sparse = TRUE))
  c_arg_pool <- c(c_arg_pool, sp_pool, sp_pool)
  x_pool <- c(x_pool, sp_pool[c(1, 2, 3, 7)])
}

ok <- 0L
err <- 0L
log_con <- file(log_file, open = "w")
for (i in seq_len(n_calls)) {
  what <- names(calls)[sample.int(length(calls), 1L)]
  if (what == "dotcall") {
    routine <- sample(c_routines, 1L)
    nargs <- get(routine, envir = ns)$numParameters
    cargs <- replicate(nargs, pick(c_arg_pool), simplify = FALSE)
    desc <- paste0(".Call(", routine, ", ", paste(vapply(cargs, function(a)
      paste(deparse(a, width.cutoff = 60L, nlines = 1L), collapse = ""), ""), collapse = ", "), ")")
    writeLines(sprintf("%d %s", i, desc), log_con)
    flush(log_con)
    res <- tryCatch({do.call(.Call, c(list(get(routine, envir = ns)), cargs)); TRUE},
                    error = function(e) FALSE)
  } else {
    fn <- if (what == "kernels") {
      sample(c("gaussian_kernel", "laplace_kernel", "cauchy_kernel", "exponential_dot_kernel",
               "min_kernel"), 1L)
    } else what
    a <- calls[[what]]()
    desc <- paste0(fn, "(", paste(names(a), collapse = ", "), ")")
    writeLines(sprintf("%d %s: %s", i, desc,
                       paste(deparse(a, width.cutoff = 100L, nlines = 3L), collapse = " ")), log_con)
    flush(log_con)
    res <- tryCatch(withCallingHandlers({do.call(get(fn, envir = ns), a); TRUE},
                                        warning = function(w) invokeRestart("muffleWarning")),
                    error = function(e) FALSE)
  }
  if (isTRUE(res)) ok <- ok + 1L else err <- err + 1L
}
close(log_con)
cat(sprintf("FUZZ DONE %d calls: %d returned, %d errors\n", n_calls, ok, err))
