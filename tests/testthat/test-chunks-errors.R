# A chunk whose worker has no bochner in its library: the error says so and
# what to do (.libPaths(), library(bochner, lib.loc =)), naming the chunk.

no_bochner <- function() {
  # R's own message, in the current language and quotes
  gettextf("there is no package called %s", sQuote("bochner"), domain = "R-base")
}

test_that("a worker failing to find bochner is explained, naming the chunk", {
  chunks <- data_chunks(list(matrix(1, 2, 2), matrix(2, 2, 2), matrix(3, 2, 2)))
  # a mocked worker: the task of chunk 2 fails as library(bochner) would there
  task <- function(raw, i) if (i == 2L) stop(no_bochner()) else sum(raw)
  err <- tryCatch(bochner:::chunks_apply(chunks, task, what = "rff_ridge"), error = identity)
  msg <- conditionMessage(err)
  expect_match(msg, "rff_ridge: chunk 2 failed: bochner is not installed in the R library of the worker",
               fixed = TRUE)
  expect_match(msg, no_bochner(), fixed = TRUE)
  expect_match(msg, ".libPaths()", fixed = TRUE)
  expect_match(msg, "library(bochner, lib.loc = ", fixed = TRUE)
  expect_match(msg, dirname(system.file(package = "bochner")), fixed = TRUE)
  # other failures are passed on as they are
  task2 <- function(raw, i) if (i == 3L) stop("there is no package called 'arrow'") else 0
  err2 <- tryCatch(bochner:::chunks_apply(chunks, task2, what = "predict"), error = identity)
  expect_identical(conditionMessage(err2), "predict: chunk 3 failed: there is no package called 'arrow'")
})

test_that("a future failing as a whole without bochner on its worker is explained", {
  handles <- bochner:::chunk_handles(data_chunks(sprintf("/data/part%d.rds", 1:4)))
  e <- simpleError(paste0("bochner-chunks-3: ", no_bochner()))
  err <- tryCatch(bochner:::chunks_future_error(e, handles, 1L, "rff_svm"), error = identity)
  msg <- conditionMessage(err)
  expect_match(msg, "rff_svm: chunk 3 (/data/part3.rds) failed: bochner is not installed",
               fixed = TRUE)
  expect_match(msg, "rscript_libs", fixed = TRUE)
  # any other failure keeps the general explanation
  err <- tryCatch(bochner:::chunks_future_error(simpleError("worker died"), handles, 2L, "rff_svm"),
                  error = identity)
  expect_identical(conditionMessage(err), paste("rff_svm: chunks 1 to 4 failed (its worker failed",
                                                "or could not load bochner): worker died"))
})

test_that("a real worker whose library lacks bochner gets the explanation", {
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  lib <- dirname(system.file(package = "bochner"))
  others <- setdiff(normalizePath(.libPaths()), normalizePath(lib))
  skip_if(any(file.exists(file.path(others, "bochner"))), "bochner is in another library too")
  # a worker that drops this session's bochner library from its .libPaths()
  cl <- future::makeClusterPSOCK(1L, rscript_startup = bquote(
    .libPaths(setdiff(normalizePath(.libPaths()), .(normalizePath(lib))))), verbose = FALSE)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  old <- future::plan(future::cluster, workers = cl)
  on.exit(future::plan(old), add = TRUE, after = FALSE)
  chunks <- data_chunks(list(iris[1:75, 1:4], iris[76:150, 1:4]))
  expect_error(rff_ridge(chunks, y = "Sepal.Length", D = 8, seed = 1),
               "bochner is not installed in the R library of the worker", fixed = TRUE)
})
