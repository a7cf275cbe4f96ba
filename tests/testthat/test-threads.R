# The thread policy (R/threads.R, src/threads.c): the default is every core
# R may use, capped by OMP_THREAD_LIMIT, OMP_NUM_THREADS and R CMD check's
# _R_CHECK_LIMIT_CORES_; checked in child processes, where the environment
# is read when OpenMP starts.
threads_in_child <- function(env) {
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(find.package("bochner"))
  code <- paste0(".libPaths(c('", lib, "', .libPaths())); cat(bochner::bochner_threads())")
  unset <- c("-u", "OMP_THREAD_LIMIT", "-u", "OMP_NUM_THREADS", "-u", "_R_CHECK_LIMIT_CORES_")
  out <- system2("env", c(unset, env, rscript, "--vanilla", "-e", shQuote(code)),
                 stdout = TRUE, stderr = TRUE)
  as.integer(utils::tail(out, 1L))
}

test_that("the default uses every core, capped by the OpenMP variables and R CMD check", {
  skip_if_not(.Platform$OS.type == "unix")
  cores <- threads_in_child(character())
  expect_gte(cores, 1L)
  expect_lte(cores, max(1L, parallel::detectCores()))
  expect_identical(threads_in_child("OMP_THREAD_LIMIT=1"), 1L)
  expect_identical(threads_in_child("OMP_NUM_THREADS=1"), 1L)
  expect_identical(threads_in_child("_R_CHECK_LIMIT_CORES_=TRUE"), min(cores, 2L))
  expect_identical(threads_in_child("_R_CHECK_LIMIT_CORES_=false"), cores)
})

test_that("a stray .Call with a bad assignment names the argument", {
  x <- matrix(runif(20), 10, 2)
  expect_error(.Call(bochner:::C_kmeans_gram_distances, x, x, 1L, 1, NULL, c(1L, 9L, rep(1L, 8)),
                     c(5L, 5L), c(0.1, 0.1), 1L), "'cluster' must have values in 1..2")
  expect_error(.Call(bochner:::C_kmeans_lloyd, x, 2L, NULL, rep(3L, 10), FALSE, 0L, 1L, 5L, 1L),
               "'init' must have values in 1..2")
})
