# data_chunks(): sources, reading, subsetting, failures that name the chunk.

make_pieces <- function(sizes = c(30, 25, 40), seed = 1) {
  set.seed(seed)
  lapply(sizes, function(n) {
    a <- runif(n, -2, 2)
    b <- runif(n, -2, 2)
    data.frame(a = a, b = b, y = sin(a) + b^2 / 4 + rnorm(n, sd = 0.05))
  })
}

test_that("lists, files and functions describe the same chunks", {
  pieces <- make_pieces()
  dir <- tempfile("chunks")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  rds <- file.path(dir, sprintf("p%d.rds", 1:3))
  csv <- file.path(dir, sprintf("p%d.csv", 1:3))
  for (i in 1:3) {
    saveRDS(pieces[[i]], rds[i])
    utils::write.csv(pieces[[i]], csv[i], row.names = FALSE)
  }
  sources <- list(list = data_chunks(pieces), rds = data_chunks(rds),
                  csv = data_chunks(csv), fun = data_chunks(function(i) pieces[[i]], n = 3),
                  reader = data_chunks(rds, reader = readRDS))
  for (nm in names(sources)) {
    ch <- sources[[nm]]
    expect_s3_class(ch, "data_chunks")
    expect_equal(length(ch), 3L, label = nm)
    for (i in 1:3) expect_equal(ch[[i]], pieces[[i]], label = paste(nm, i))
    sub <- ch[c(3, 1)]
    expect_equal(length(sub), 2L)
    expect_equal(sub[[1]], pieces[[3]], label = paste(nm, "subset"))
    expect_equal(sub[[2]], pieces[[1]], label = paste(nm, "subset"))
    expect_output(print(ch), "Data in 3 chunks")
  }
  # the survey's moments are those of the row-bound data
  all <- do.call(rbind, pieces)
  sv <- bochner:::chunks_survey(sources$rds, "y", "test")
  expect_equal(sv$n, nrow(all))
  expect_equal(unname(sv$center), unname(colMeans(all[c("a", "b")])), tolerance = 1e-14)
  expect_equal(bochner:::survey_scaling(sv),
               bochner:::rff_scaling(as.matrix(all[c("a", "b")])), tolerance = 1e-13)
  expect_identical(data_chunks(sources$list), sources$list)
})

test_that("a chunk that fails stops the fit with an error naming it", {
  pieces <- make_pieces()
  dir <- tempfile("chunks")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  files <- file.path(dir, sprintf("p%d.rds", 1:3))
  for (i in c(1, 3)) saveRDS(pieces[[i]], files[i])
  K <- gaussian_kernel(1)
  expect_error(rff_ridge(data_chunks(files), y = "y", kernel = K, D = 8),
               "chunk 2 \\(.*p2\\.rds\\) failed: file not found")
  bad <- function(i) if (i == 3) stop("the database went away") else pieces[[i]]
  expect_error(rff_ridge(data_chunks(bad, n = 3), y = "y", kernel = K, D = 8),
               "rff_ridge: chunk 3 failed: the database went away")
  wrong <- pieces
  wrong[[2]]$y <- NULL
  expect_error(rff_ridge(data_chunks(wrong), y = "y", kernel = K, D = 8),
               "chunk 2 failed: has no column 'y'")
  wrong <- pieces
  wrong[[3]]$a[5] <- NA
  expect_error(kernel_kmeans(data_chunks(lapply(wrong, `[`, c("a", "b"))), 2, K, D = 8),
               "chunk 3 failed: 'x' contains NA")
  wrong <- pieces
  names(wrong[[2]])[1] <- "q"
  expect_error(rff_ridge(data_chunks(wrong), y = "y", kernel = K, D = 8),
               paste("rff_ridge: chunk 2 has q that chunk 1 has not and lacks a; every chunk",
                     "needs the same input columns \\(chunk 1: a, b\\)"))
  wrong <- pieces
  wrong[[2]] <- list(1, 2)
  expect_error(data_chunks(wrong), "'x' must hold matrices or data frames; element 2")
  expect_error(data_chunks(function(i) "text", n = 2)[[1]], "not a matrix or data frame")
})

test_that("predictions per chunk, in order, or written to files, never half", {
  pieces <- make_pieces()
  chunks <- data_chunks(pieces)
  fit <- rff_ridge(chunks, y = "y", kernel = gaussian_kernel(1), D = 16, seed = 1)
  pred <- predict(fit, chunks)
  expect_length(pred, 3L)
  for (i in 1:3) {
    expect_equal(pred[[i]], predict(fit, as.matrix(pieces[[i]][c("a", "b")])),
                 ignore_attr = TRUE)
  }
  dir <- tempfile("pred")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  paths <- predict(fit, chunks, output = dir)
  expect_equal(basename(paths), sprintf("prediction-%d.rds", 1:3))
  for (i in 1:3) expect_identical(readRDS(paths[i]), pred[[i]])
  expect_error(predict(fit, chunks, output = dir), "'output' would overwrite")
  # a failing chunk: no file is left, finished or partial
  dir2 <- tempfile("pred")
  dir.create(dir2)
  on.exit(unlink(dir2, recursive = TRUE), add = TRUE)
  bad <- function(i) if (i == 2) stop("disk error") else pieces[[i]]
  expect_error(predict(fit, data_chunks(bad, n = 3), output = dir2), "chunk 2 failed: disk error")
  expect_length(list.files(dir2, all.files = TRUE, no.. = TRUE), 0L)
  # the maps and the other fits predict on chunks too
  Z <- predict(fit$map, data_chunks(lapply(pieces, function(p) as.matrix(p[c("a", "b")]))))
  expect_equal(Z[[2]], predict(fit$map, as.matrix(pieces[[2]][c("a", "b")])), ignore_attr = TRUE)
})

test_that("kernel_approx_error takes a sample of the chunks", {
  pieces <- make_pieces(c(300, 200, 250, 100, 150))
  chunks <- data_chunks(lapply(pieces, function(p) p[c("a", "b")]))
  map <- random_features(as.matrix(pieces[[1]][c("a", "b")]), gaussian_kernel(1), D = 400,
                         seed = 1)
  set.seed(3)
  err <- kernel_approx_error(map, chunks)
  expect_s3_class(err, "kernel_approx_error")
  expect_lte(err$n, 2000L)
  expect_gte(err$n, 4 * 100)
  # the rms error of D features is about sqrt(2 / D) ... well below 3 / sqrt(D)
  expect_lt(err$rms, 3 / sqrt(400))
  set.seed(3)
  expect_identical(kernel_approx_error(map, chunks), err)
})

test_that("counts beyond the integer range combine exactly", {
  # n_a n_b = 3e9 > 2^31: the pairwise update must not work in integers
  set.seed(5)
  x1 <- matrix(rnorm(50000, 1), ncol = 1, dimnames = list(NULL, "a"))
  x2 <- matrix(rnorm(60000, 2), ncol = 1, dimnames = list(NULL, "a"))
  s1 <- bochner:::survey_task(x1, 1L, NULL, 10L)
  s2 <- bochner:::survey_task(x2, 2L, NULL, 10L)
  sv <- bochner:::survey_combine(bochner:::survey_combine(NULL, s1, 1L), s2, 2L)
  all <- c(x1, x2)
  expect_equal(sv$n, 110000)
  expect_equal(unname(sv$center), mean(all), tolerance = 1e-13)
  expect_equal(unname(sv$m2), sum((all - mean(all))^2), tolerance = 1e-12)
})
