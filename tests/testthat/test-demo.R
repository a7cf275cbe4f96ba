# The demo's picture (demo/convergence.R) must outlive the demo's R process:
# the file it names is for the user to open afterwards (issue 24: it was
# written into tempdir(), which R deletes at exit).  The demo itself takes
# minutes (kernel matrices, maps up to D = 10 000), so its statements that
# choose the file are run here, in a child process, with a tiny plot.

demo_file_statements <- function() {
  path <- system.file("demo", "convergence.R", package = "bochner")
  exprs <- as.list(parse(path, keep.source = FALSE))
  text <- vapply(exprs, function(e) paste(deparse(e), collapse = "\n"), "")
  first <- grep("^file <- ", text)[1L]
  plot_at <- grep("png(file", text, fixed = TRUE)[1L]
  expect_false(is.na(first) || is.na(plot_at))
  text[first:(plot_at - 1L)]
}

run_demo_file_choice <- function(wd, png = NULL) {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(c(demo_file_statements(),
               "grDevices::png(file, width = 200, height = 200)", "graphics::plot.new()",
               "invisible(grDevices::dev.off())", "cat(normalizePath(file))"), script)
  env <- c(paste0("BOCHNER_DEMO_PNG=", if (is.null(png)) "" else png))
  old <- setwd(wd)
  on.exit(setwd(old), add = TRUE)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script)),
                 stdout = TRUE, env = env)
  expect_null(attr(out, "status"))
  out[length(out)]
}

test_that("the demo's PNG survives the demo's R process", {
  skip_if_not(capabilities("png"), "no png device")
  wd <- tempfile("demo-wd")
  dir.create(wd)
  on.exit(unlink(wd, recursive = TRUE))
  # by default: bochner-demo.png in the working directory
  written <- run_demo_file_choice(wd)
  expect_true(file.exists(written))
  expect_identical(normalizePath(written), normalizePath(file.path(wd, "bochner-demo.png")))
  # or where BOCHNER_DEMO_PNG says
  target <- file.path(wd, "elsewhere.png")
  written <- run_demo_file_choice(wd, target)
  expect_true(file.exists(target))
  expect_identical(normalizePath(written), normalizePath(target))
})
