# A user interrupt (Ctrl-C, SIGINT) must stop long C loops promptly: every
# loop that can run for seconds calls R_CheckUserInterrupt() between blocks.
# Checked on the Gram matrix of the Gaussian kernel, whose BLAS product used
# to be one call (about 100 s with the reference BLAS on two busy cores for
# this size, uninterruptible); it is now cut into column chunks.  The work
# runs in a child R process, which gets SIGINT one second in and must report
# the interrupt within a few seconds.
# On two threads the calling thread sees the interrupt inside the parallel region and the
# region stops first; the same condition of class "interrupt" must reach R.
for (threads in 1:2) test_that(paste("a long kernel_matrix stops promptly on an interrupt,", threads, "thread(s)"), {
  if (threads > 1 && bochner_threads() < 2) skip("one core")
  skip_on_os("windows")
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(find.package("bochner"))
  pidfile <- tempfile("pid")
  outfile <- tempfile("out")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(c(pidfile, outfile, script)))
  writeLines(c(
    sprintf(".libPaths(c(%s, .libPaths()))", deparse(lib)),
    "suppressPackageStartupMessages(library(bochner))",
    "set.seed(1); x <- matrix(rnorm(3000 * 4000), 3000)",
    sprintf("writeLines(as.character(Sys.getpid()), %s)", deparse(pidfile)),
    "t0 <- proc.time()[['elapsed']]",
    sprintf("r <- tryCatch({kernel_matrix(gaussian_kernel(30), x, nthreads = %d); 'FINISHED'},", threads),
    "              interrupt = function(e) 'INTERRUPTED')",
    "cat(r, proc.time()[['elapsed']] - t0, '\\n')"), script)
  system2(rscript, c("--vanilla", shQuote(script)), stdout = outfile, stderr = outfile,
          wait = FALSE)
  waited <- 0
  while (!file.exists(pidfile) || length(readLines(pidfile, warn = FALSE)) == 0L) {
    Sys.sleep(0.1)
    waited <- waited + 0.1
    if (waited > 60) fail("the child R process did not start")
  }
  pid <- as.integer(readLines(pidfile))
  Sys.sleep(1)
  tools::pskill(pid, tools::SIGINT)
  waited <- 0
  out <- character()
  while (!any(grepl("INTERRUPTED|FINISHED", out)) && waited < 60) {
    Sys.sleep(0.2)
    waited <- waited + 0.2
    out <- if (file.exists(outfile)) readLines(outfile, warn = FALSE) else character()
  }
  if (!any(grepl("INTERRUPTED|FINISHED", out))) {
    tools::pskill(pid, tools::SIGKILL)
    fail(paste("no answer 60 s after the interrupt:", paste(out, collapse = "\n")))
  }
  line <- grep("INTERRUPTED|FINISHED", out, value = TRUE)[1]
  elapsed <- as.numeric(strsplit(trimws(line), " ")[[1]][2])
  if (grepl("FINISHED", line) && elapsed < 1.5) skip("the product finished before the interrupt")
  expect_match(line, "INTERRUPTED")
  expect_lt(elapsed, 12)   # 1 s before the signal, then at most one chunk
})
