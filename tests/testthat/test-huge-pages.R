# src/memory.c: large outputs are advised onto huge pages unless a virtio balloon
# reports free pages to the host; BOCHNER_HUGE_PAGES (read at load) forces the choice.

# The same rule in plain R, from sysfs: a virtio device with id 5 (the balloon) whose
# features string has bit 5 (VIRTIO_BALLOON_F_REPORTING), its sixth character, set.
free_page_reporting_r <- function() {
  devs <- list.files("/sys/bus/virtio/devices", full.names = TRUE)
  first_line <- function(f) {
    tryCatch(readLines(f, n = 1L, warn = FALSE), error = function(e) character(0),
             warning = function(w) character(0))
  }
  any(vapply(devs, function(d) {
    id <- first_line(file.path(d, "device"))
    feat <- first_line(file.path(d, "features"))
    length(id) == 1L && isTRUE(strtoi(id, 16L) == 5L) &&
      length(feat) == 1L && substr(feat, 6L, 6L) == "1"
  }, NA))
}
# the choice when BOCHNER_HUGE_PAGES does not force one
advised_by_rule <- function() !(Sys.info()[["sysname"]] == "Linux" && free_page_reporting_r())

test_that("huge pages are advised unless the VM reports its free pages", {
  forced <- Sys.getenv("BOCHNER_HUGE_PAGES")
  expected <- if (forced %in% c("0", "1")) forced == "1" else advised_by_rule()
  expect_identical(.Call(bochner:::C_huge_pages), expected)
})

test_that("BOCHNER_HUGE_PAGES forces the choice and never changes a result", {
  # a fresh R process per setting: the variable is read once, when the package loads;
  # the fit's K_nm cache (2700 rows x 400 doubles, 8.6 MB) is above the advice's 4 MB
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(find.package("bochner"))
  auto <- advised_by_rule()
  fits <- list()
  for (v in c("0", "1", "yes")) {
    out_file <- tempfile(fileext = ".rds")
    code <- paste0(".libPaths(c('", lib, "', .libPaths())); library(bochner); set.seed(3);",
                   "x <- matrix(rnorm(3000 * 4), 3000); y <- sin(x[, 1]) + rnorm(3000, sd = 0.1);",
                   "f <- falkon(x, y, m = 400, seed = 1);",
                   "saveRDS(list(flag = .Call(bochner:::C_huge_pages), pred = predict(f, x)), '",
                   out_file, "')")
    out <- system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE, stderr = TRUE,
                   env = paste0("BOCHNER_HUGE_PAGES=", v))
    expect_true(file.exists(out_file), label = paste(out, collapse = "\n"))
    got <- readRDS(out_file)
    # "yes" is not 0 or 1: the rule decides, as when the variable is unset
    expect_identical(got$flag, switch(v, "0" = FALSE, "1" = TRUE, auto))
    fits[[v]] <- got$pred
  }
  expect_identical(fits[["0"]], fits[["1"]])
  expect_identical(fits[["0"]], fits[["yes"]])
})
