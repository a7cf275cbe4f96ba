# The bench harness (bench/harness/, bench/run.R) runs: one suite at its
# smallest size (--tiny) into a temporary directory, so that the harness
# cannot rot unnoticed.  bench/ is not in the package tarball (.Rbuildignore):
# the source tree is found through BOCHNER_SOURCE_DIR, which .ci/run exports.
# Skipped on CRAN: CRAN has no BOCHNER_SOURCE_DIR (and no bench/); in the
# project's CI (.ci/run) NOT_CRAN is unset, so the variable is what marks it.
test_that("bench/run.R runs the kmeans suite at its smallest size", {
  src <- Sys.getenv("BOCHNER_SOURCE_DIR")
  if (!nzchar(src)) skip_on_cran()
  skip_if(!nzchar(src) || !file.exists(file.path(src, "bench", "run.R")),
          "bench/ not found (set BOCHNER_SOURCE_DIR to the source tree)")
  out <- tempfile("bench-test-")
  dir.create(out)
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  run <- function(option) suppressWarnings(system2(
    file.path(R.home("bin"), "Rscript"),
    c("-e", shQuote(sprintf("setwd(%s); source('bench/run.R')", deparse(src))),
      "kmeans", option, paste0("--out=", out)),
    # R CMD check's R_TESTS names a startup file relative to its tests/ directory
    env = c(sprintf("R_LIBS=%s", paste(.libPaths(), collapse = ":")), "R_TESTS="),
    stdout = TRUE, stderr = TRUE))
  log <- run("--tiny")
  status <- attr(log, "status")
  expect_true(is.null(status) || status == 0L, info = paste(log, collapse = "\n"))
  csv <- file.path(out, "results", "kmeans.csv")
  expect_true(file.exists(csv), info = paste(log, collapse = "\n"))
  r <- utils::read.csv(csv, stringsAsFactors = FALSE)
  expect_true(all(c("question", "method", "rep", "elapsed", "cpu", "peak_mb", "blas",
                    "threads", "load_start", "load_end", "commit") %in% names(r)))
  expect_true(all(r$size == "tiny"))
  expect_true(all(r$status[r$role == "bochner"] == "ok"))
  page <- readLines(file.path(out, "kmeans.md"))
  expect_match(page[1L], "^# ")
  expect_true(any(grepl("^\\| figure \\| bochner \\| peer \\| ratio \\| CPU \\| BLAS \\| threads", page)))
  # --render: the same page again from the CSV, which it leaves as it was, and no fit
  unlink(file.path(out, "kmeans.md"))
  log2 <- run("--render")
  expect_false(any(grepl("^  \\S.* s \\(CPU", log2)), info = paste(log2, collapse = "\n"))
  expect_identical(utils::read.csv(csv, stringsAsFactors = FALSE), r)
  page2 <- readLines(file.path(out, "kmeans.md"))
  keep <- function(p) p[!grepl("^- load average", p)]
  expect_identical(keep(page2), keep(page))
  expect_true(any(grepl("regenerated from the CSV", page2)))
  # a commit of digits and one 'e' stays a commit (it once rendered as 2.134e+12)
  r$commit <- "21340e8"
  utils::write.csv(r, csv, row.names = FALSE)
  run("--render")
  expect_true(any(grepl("commit 21340e8$", readLines(file.path(out, "kmeans.md")))))
})
