# The memory guard against what this process can really get (issue 42,
# item 0b): oversized calls of every machine and map are refused before
# they allocate, under an address-space limit that the guard must see.
# Each call runs in a child R process under `ulimit -v`, so that a
# regression makes the child's allocation fail (or kills the child), never
# this test process.  No options(bochner.max_bytes) here: the point is the
# limit the guard finds by itself.

child_script <- '
library(bochner)
x <- as.matrix(iris[, 1:4])
big <- matrix(rnorm(2e5), ncol = 2)
ch <- data_chunks(split(iris, rep(1:3, 50)))
calls <- list(
  ridge = quote(rff_ridge(Sepal.Length ~ ., data = iris, D = 1e7)),
  svm = quote(rff_svm(Species ~ ., data = iris, D = 1e7)),
  gp = quote(rff_gp(Sepal.Length ~ ., data = iris, D = 1e6)),
  falkon = quote(falkon(big, big[, 1], centers = 1e5)),
  kmeans = quote(kernel_kmeans(x, 3, method = "rff", D = 1e9)),
  rf_predict = quote(predict(random_features(x, D = 1e6, seed = 1), x[rep(1:150, 100), ])),
  nystrom = quote(nystrom_features(big, m = 1e5)),
  mmd = quote(mmd_test(x[1:75, ], x[76:150, ], D = 1e9)),
  ridge_chunks = quote(rff_ridge(Sepal.Length ~ Sepal.Width + Petal.Length, data = ch, D = 1e7)),
  svm_chunks = quote(rff_svm(Species ~ Sepal.Width + Petal.Length, data = ch, D = 1e7)),
  kmeans_chunks = quote(kernel_kmeans(~ Sepal.Width + Petal.Length, data = ch, centers = 3, D = 1e9))
)
for (nm in names(calls)) {
  msg <- tryCatch({eval(calls[[nm]]); "no error"}, error = function(e) conditionMessage(e))
  cat(nm, "\\t", gsub("[\\r\\n]", " ", msg), "\\n", sep = "")
}
cat("done\\n")
'

test_that("oversized calls are refused by the guard under an address-space limit", {
  # one child of a few seconds; the address-space limit is POSIX's
  skip_on_os(c("windows", "mac"))
  if (!nzchar(Sys.which("bash"))) skip("needs bash for ulimit")
  # under AddressSanitizer (make sanitize preloads it into every child) the
  # child cannot start: ASan reserves terabytes of shadow address space,
  # which 'ulimit -v' forbids
  if (grepl("libasan", Sys.getenv("LD_PRELOAD"))) {
    skip("AddressSanitizer's shadow memory does not fit under ulimit -v")
  }
  script <- tempfile(fileext = ".R")
  writeLines(child_script, script)
  on.exit(unlink(script))
  rscript <- file.path(R.home("bin"), "Rscript")
  # 6 GB of address space: far below what each call would need (>= 11 GB,
  # or the n x n / D x D systems in the TB), far above what R needs to
  # start and to read iris
  cmd <- sprintf("ulimit -v 6000000 && R_LIBS=%s %s --vanilla %s 2>&1",
                 shQuote(paste(.libPaths(), collapse = .Platform$path.sep)),
                 shQuote(rscript), shQuote(script))
  out <- suppressWarnings(system2("bash", c("-c", shQuote(cmd)), stdout = TRUE))
  expect_true("done" %in% out, label = paste(c("the child finished; its output:", out), collapse = "\n"))
  lines <- out[grepl("\t", out)]
  expect_length(lines, 11L)
  for (line in lines) {
    # the guard's message names the argument and says "too large"; R's own
    # "cannot allocate" means the guard let the call through
    expect_match(line, "is too large", label = line)
    expect_no_match(line, "cannot allocate|no error", label = line)
  }
})

test_that("the guard allows a share of the available memory, a set limit as it is", {
  old <- options(bochner.max_bytes = NULL, bochner.memory_fraction = NULL)
  on.exit(options(old))
  # the share of a given limit found by the system (source ""); the memory
  # available now changes from call to call, so the limit is fixed here
  found <- structure(8e9, source = "")
  expect_equal(bochner:::memory_allowed(found), 4e9)
  options(bochner.memory_fraction = 0.25)
  expect_equal(bochner:::memory_allowed(found), 2e9)
  expect_lte(bochner:::memory_allowed(), bochner:::memory_limit() * 0.25 * 1.5)
  options(bochner.memory_fraction = 2)
  expect_error(bochner:::memory_allowed(), "bochner.memory_fraction")
  options(bochner.memory_fraction = NULL, bochner.max_bytes = 2^30)
  expect_equal(bochner:::memory_allowed(), 2^30)
  # the address-space limit as the C side reads it: none in this process,
  # or a positive number of bytes
  lim <- .Call(bochner:::C_address_space_limit)
  expect_true(is.infinite(lim) || lim > 0)
})
