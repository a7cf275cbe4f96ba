# Fuzz: ten thousand calls with random good and bad arguments (exported
# functions, methods and the .Call entry points), in a separate R process,
# so that a crash fails this test instead of killing the test run.  The
# seed is fixed (20240611); the script is fuzz-calls.R, and its log names
# every call in order, so the last line of a failing run's log is the call
# that crashed.
test_that("random argument combinations never crash R", {
  script <- test_path("fuzz-calls.R")
  log_file <- tempfile("fuzz-", fileext = ".log")
  on.exit(unlink(log_file))
  rscript <- file.path(R.home("bin"), "Rscript")
  # the child finds this bochner through R_LIBS (the library the tests run on)
  lib <- dirname(find.package("bochner"))
  old <- Sys.getenv("R_LIBS", unset = NA)
  Sys.setenv(R_LIBS = paste(c(lib, if (!is.na(old) && nzchar(old)) old), collapse = .Platform$path.sep))
  on.exit(if (is.na(old)) Sys.unsetenv("R_LIBS") else Sys.setenv(R_LIBS = old), add = TRUE)
  n_calls <- 10000L
  started <- proc.time()[["elapsed"]]
  out <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(script), n_calls, 20240611L,
                                             shQuote(log_file)), stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  last <- if (file.exists(log_file)) tail(readLines(log_file), 1L) else "(no log)"
  info <- paste(c(tail(out, 15L), paste("last call:", last)), collapse = "\n")
  expect_true(is.null(status) || status == 0L, label = info)
  done <- grep("^FUZZ DONE", out, value = TRUE)
  expect_length(done, 1L)
  # both outcomes occur: the fuzzing reaches past the argument checks
  n <- as.integer(regmatches(done, gregexpr("[0-9]+", done))[[1]])
  expect_identical(n[1], n_calls)
  expect_gt(n[2], 20L)
  expect_gt(n[3], 20L)
  message(sprintf("fuzz: %s in %.1f s", sub("FUZZ DONE ", "", done),
                  proc.time()[["elapsed"]] - started))
})
