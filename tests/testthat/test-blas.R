# Results do not depend on the BLAS R uses: every heavy product and the
# Cholesky factorisation run on the package's own kernel.  The same
# computations run in child R processes, one per BLAS found here (the
# reference BLAS and OpenBLAS, chosen per process with R_LD_LIBRARY_PATH, as
# R's start-up script allows), must give identical objects.  Skipped where
# fewer than two BLAS libraries are found (BOCHNER_OPENBLAS_DIR and
# BOCHNER_REFBLAS_DIR name their directories; .ci/run sets them).

blas_candidates <- function() {
  multiarch <- Sys.glob("/usr/lib/*-linux-gnu*")
  env_or <- function(var, dirs) {
    v <- Sys.getenv(var)
    if (nzchar(v)) strsplit(v, ":", fixed = TRUE)[[1]] else dirs
  }
  list(reference = env_or("BOCHNER_REFBLAS_DIR", c(file.path(multiarch, "blas"),
                                                   file.path(multiarch, "lapack"))),
       openblas = env_or("BOCHNER_OPENBLAS_DIR", file.path(multiarch, "openblas-pthread")))
}

has_blas <- function(dirs) {
  any(file.exists(file.path(dirs, "libblas.so.3"))) &&
    any(file.exists(file.path(dirs, "liblapack.so.3")))
}

child_code <- '
suppressPackageStartupMessages(library(bochner))
out <- list(blas = extSoftVersion()[["BLAS"]])
set.seed(1)
x <- matrix(rnorm(1200 * 5), 1200, 5)
xn <- matrix(rnorm(700 * 5), 700, 5)
y <- sin(x[, 1]) + x[, 2] * x[, 3] + rnorm(1200, sd = 0.1)
cls <- cut(x[, 1] - x[, 4], c(-Inf, -0.7, 0.7, Inf), labels = c("a", "b", "c"))
map <- random_features(x, gaussian_kernel("median"), D = 300, seed = 1)
out$z <- predict(map, xn, nthreads = 2)
out$k_gauss <- kernel_matrix(gaussian_kernel(1), x[1:400, ], xn[1:300, ])
out$k_poly <- kernel_matrix(polynomial_kernel(3), x[1:500, ])
out$km_exact <- kernel_kmeans(x[1:600, ], 3, gaussian_kernel(1), seed = 2)
out$km_rff <- kernel_kmeans(x, 3, gaussian_kernel(1), method = "rff", D = 100, seed = 2)
out$km_pred <- predict(out$km_rff, xn, type = "distance")
out$ridge <- rff_ridge(x, y, D = 400, seed = 3)
out$ridge_dual <- rff_ridge(x[1:200, ], y[1:200], D = 400, seed = 3)
out$ridge_pred <- predict(out$ridge, xn)
out$svm <- rff_svm(x, cls, D = 200, seed = 4)
out$svm_pred <- predict(out$svm, xn, type = "decision")
out$svm_prob <- predict(rff_svm(x[1:600, ], cls[1:600], D = 100, seed = 5, probability = TRUE),
                        xn, type = "prob")
out$ridge_prob <- predict(rff_ridge(x, cls, D = 100, seed = 6, probability = TRUE), xn,
                          type = "prob")
out$falkon <- falkon(x[1:500, ], y[1:500], seed = 7, nthreads = 2,
                     control = list(start_centers = 64))
out$falkon_pred <- predict(out$falkon, xn)
out$falkon_prob <- predict(falkon(x[1:300, ], cls[1:300], m = 100, loss = "logistic",
                                  seed = 8), xn, type = "prob")
# the learned kernel and lambda (falkon(tune = ), R/fit-falkon-tune.R): five
# folds below 1500 rows, one held-out fifth and a judging fifth above
out$falkon_tuned <- falkon(x, y, m = 100, tune = "ard", seed = 9, nthreads = 2)
xl <- rbind(x, xn[1:400, ])
out$falkon_tuned_big <- falkon(xl, sin(xl[, 1]) + xl[, 2] * xl[, 3], m = 80, tune = "ard",
                               seed = 10)$tuning
saveRDS(out, commandArgs(TRUE)[1])
'

run_under_blas <- function(dirs, file) {
  script <- tempfile(fileext = ".R")
  writeLines(child_code, script)
  lib <- dirname(find.package("bochner"))
  ldpath <- paste(c(dirs, Sys.getenv("LD_LIBRARY_PATH")), collapse = ":")
  env <- c(paste0("R_LD_LIBRARY_PATH=", ldpath), paste0("R_LIBS=", lib),
           "OPENBLAS_NUM_THREADS=2")
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script, file),
                 env = env, stdout = TRUE, stderr = TRUE)
  if (!file.exists(file)) stop(paste(out, collapse = "\n"))
  readRDS(file)
}

test_that("every fit and prediction is identical under the reference BLAS and OpenBLAS", {
  skip_if_not(.Platform$OS.type == "unix")
  dirs <- Filter(has_blas, blas_candidates())
  skip_if(length(dirs) < 2L, "fewer than two BLAS libraries found")
  res <- lapply(names(dirs), function(kind) run_under_blas(dirs[[kind]], tempfile(fileext = ".rds")))
  names(res) <- names(dirs)
  # the children really loaded different libraries
  expect_match(res$openblas$blas, "openblas", ignore.case = TRUE)
  expect_false(grepl("openblas", res$reference$blas, ignore.case = TRUE))
  for (what in setdiff(names(res$reference), "blas")) {
    a <- res$openblas[[what]]
    b <- res$reference[[what]]
    if (inherits(b, "rff_ridge") && !is.null(b$path)) {
      # the lambda path's scores come from LAPACK's eigendecomposition: equal
      # to rounding, amplified at the smallest lambdas where the leave-one-out
      # residuals divide by 1 - h_ii near 0 (relative 3e-7 seen); the lambda
      # chosen from the path, and so the fit, identical
      expect_equal(a$path, b$path, tolerance = 1e-5, label = paste(what, "path"))
      a$path <- b$path <- NULL
    }
    expect_identical(a, b, label = what)
  }
})
