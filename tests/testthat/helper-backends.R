# The chunked fits that test-mirai.R and test-slurm.R run on other back
# ends: falkon(), rff_ridge() and kernel_kmeans() on four chunks in .rds
# files, against the same fits in memory (falkon bit for bit, the others to
# rounding: their sums run chunk by chunk) and against the chunked fits
# under plan(sequential) (bit for bit).  Small, and few passes: under a
# scheduler every pass over the chunks is a round of jobs.

backend_data <- function(dir, sizes = c(70, 60, 80, 50)) {
  set.seed(21)
  pieces <- lapply(sizes, function(n) {
    a <- runif(n, -3, 3)
    b <- runif(n, -3, 3)
    data.frame(a = a, b = b, y = sin(a) * cos(b) + rnorm(n, sd = 0.1))
  })
  files <- file.path(dir, sprintf("piece-%d.rds", seq_along(pieces)))
  for (i in seq_along(pieces)) saveRDS(pieces[[i]], files[i])
  all <- do.call(rbind, pieces)
  list(files = files, x = as.matrix(all[c("a", "b")]), y = all$y)
}

# The chunked fits, from the files (read on the workers).
backend_chunked_fits <- function(files) {
  reg <- data_chunks(files)
  inputs <- data_chunks(files, reader = function(p) readRDS(p)[c("a", "b")])
  list(
    falkon = falkon(reg, y = "y", m = 40, lambda = 1e-4, iter = 4, seed = 3),
    ridge = rff_ridge(reg, y = "y", kernel = gaussian_kernel(1), D = 32, lambda = 0.5, seed = 2),
    kmeans = kernel_kmeans(inputs, 2, gaussian_kernel(1.5), method = "rff", D = 16, seed = 4,
                           nstart = 1, algorithm = "Lloyd", max_iter = 3)
  )
}

backend_memory_fits <- function(d) {
  list(
    falkon = falkon(d$x, d$y, m = 40, lambda = 1e-4, iter = 4, seed = 3),
    ridge = rff_ridge(d$x, d$y, kernel = gaussian_kernel(1), D = 32, lambda = 0.5, seed = 2),
    kmeans = suppressWarnings(
      kernel_kmeans(d$x, 2, gaussian_kernel(1.5), method = "rff", D = 16, seed = 4, nstart = 1,
                    algorithm = "Lloyd", max_iter = 3))
  )
}

# The chunked fits equal the in-memory ones (falkon to the bit, ridge and
# k-means to rounding, as under every other plan).
expect_backend_matches_memory <- function(got, mem, what) {
  expect_identical(got$falkon$alpha, mem$falkon$alpha, label = paste(what, "falkon alpha"))
  expect_identical(got$falkon$centres, mem$falkon$centres, label = paste(what, "falkon centres"))
  expect_identical(got$ridge$map$omega, mem$ridge$map$omega, label = paste(what, "ridge map"))
  expect_equal(got$ridge$weights, mem$ridge$weights, tolerance = 1e-8,
               label = paste(what, "ridge weights"))
  expect_identical(got$kmeans$map$omega, mem$kmeans$map$omega, label = paste(what, "k-means map"))
  expect_equal(got$kmeans$tot.withinss, mem$kmeans$tot.withinss, tolerance = 1e-10,
               label = paste(what, "k-means objective"))
  expect_equal(unname(got$kmeans$centers), unname(mem$kmeans$centers), tolerance = 1e-10,
               label = paste(what, "k-means centres"))
}

# A test's set-up: a temporary directory with the data in files, the
# in-memory fits and the chunked fits under plan(sequential); on the
# caller's exit the plan comes back, mirai daemons (when mirai is loaded)
# stop and the directory goes.
backend_fixture <- function(prefix, envir = parent.frame()) {
  dir <- tempfile(prefix)
  dir.create(dir)
  old <- future::plan()
  cleanup <- function() {
    future::plan(old)
    if (isNamespaceLoaded("mirai")) mirai::daemons(0)
    unlink(dir, recursive = TRUE)
  }
  do.call(on.exit, list(as.call(list(cleanup)), add = TRUE), envir = envir)
  d <- backend_data(dir)
  future::plan(future::sequential)
  list(dir = dir, d = d, mem = backend_memory_fits(d), ref = backend_chunked_fits(d$files))
}
