# falkon() on data_chunks() (R/falkon-chunks.R): the in-memory fit, with its
# passes over the rows spread over the chunks; identical under every plan.

falkon_pieces <- function(sizes = c(150, 120, 130, 100), seed = 1) {
  set.seed(seed)
  lapply(sizes, function(n) {
    x <- matrix(rnorm(n * 5), n, 5, dimnames = list(NULL, paste0("v", 1:5)))
    data.frame(x, y = sin(x[, 1]) + x[, 2] * x[, 3] + rnorm(n, sd = 0.3),
               class = factor(ifelse(x[, 1] + x[, 2]^2 > 1, "a", ifelse(x[, 3] > 0, "b", "c")),
                              levels = c("a", "b", "c")))
  })
}
rel_diff <- function(a, b) max(abs(a - b)) / max(abs(b))

test_that("falkon on chunks is the in-memory fit to 1e-10: coefficients and predictions", {
  pieces <- falkon_pieces()
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  reg <- data_chunks(lapply(pieces, function(p) p[c(1:5, 6)]))
  cls <- data_chunks(lapply(pieces, function(p) p[c(1:5, 7)]))
  # tolerance: the regression path takes 8 CG iterations, over which the
  # difference of the passes (1e-15) grows to 5e-9.  The three-class fit
  # (100 centres, 3 x 3 right-hand sides) forms H = K_nm' K_nm once
  # (falkon_fit_squared()): the chunks' grouping of its sums (1e-16
  # relative) enters each H z, where z = T^-1 A^-1 u cancels by the
  # conditioning of the centres' Gram matrix, and grows to about 6e-7 over
  # its 16 iterations
  for (case in list(list(reg, "y", all$y, "response", 1e-10),
                    list(cls, "class", all$class, "decision", 5e-6))) {
    # the bandwidth rule, lambda and the iterations chosen on the held-out rows
    fc <- falkon(case[[1]], y = case[[2]], centers = 100, seed = 3)
    fm <- falkon(x, case[[3]], centers = 100, seed = 3)
    # the same standardisation to the last bit (exact column sums, whatever
    # the chunks), the same draws (held-out rows, centres), bandwidth, path
    # and choices
    expect_identical(fc$scaling, fm$scaling)
    expect_identical(fc$kernel$sigma, fm$kernel$sigma)
    expect_identical(fc$centres, fm$centres)
    expect_identical(fc$lambda, fm$lambda)
    expect_identical(fc$iter, fm$iter)
    expect_identical(dim(fc$validation), dim(fm$validation))
    # what is left: the sums over rows of each pass are grouped by chunk
    # (about 1e-15 relative apart), which the CG path amplifies by the
    # conditioning of the centres' Gram matrix
    expect_lt(rel_diff(fc$alpha, fm$alpha), case[[5]])
    expect_lt(rel_diff(predict(fc, x, type = case[[4]]), predict(fm, x, type = case[[4]])),
              case[[5]])
    expect_s3_class(fc, "falkon")
    expect_identical(fc$chunks$rows, c(150, 120, 130, 100))
  }
  expect_equal(fc$accuracy, fm$accuracy)
  expect_output(print(fc), "FALKON classification, 3 classes")
  # chained passes: the in-memory fit to the bit
  fh <- falkon(cls, y = "class", centers = 100, seed = 3, passes = "chained")
  expect_identical(fh$alpha, fm$alpha)
  expect_identical(predict(fh, x, type = "decision"), predict(fm, x, type = "decision"))
  expect_error(falkon(cls, y = "class", passes = "serial"), "'passes'")
  # the default number of centres, grown along the held-out error: the same
  # sizes are tried and kept (the warm starts make later sizes more
  # sensitive to rounding, so only the classes are compared)
  fc <- falkon(cls, y = "class", seed = 3, control = list(start_centers = 32))
  fm <- falkon(x, all$class, seed = 3, control = list(start_centers = 32))
  expect_identical(fc$centres_path$centers, fm$centres_path$centers)
  expect_identical(fc$m, fm$m)
  expect_gt(mean(predict(fc, x) == predict(fm, x)), 0.99)
})

test_that("given centres, lambda and iterations: a fixed number of passes, the same fit", {
  pieces <- falkon_pieces(c(120, 80, 100))
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  ch <- data_chunks(lapply(pieces, function(p) p[c(1:5, 6)]))
  K <- gaussian_kernel(2)
  fc <- falkon(ch, y = "y", kernel = K, centers = 40, lambda = 1e-3, iter = 8, seed = 1)
  fm <- falkon(x, all$y, kernel = K, centers = 40, lambda = 1e-3, iter = 8, seed = 1)
  expect_null(fc$validation)
  expect_identical(fc$iter, 8L)
  expect_lt(rel_diff(fc$alpha, fm$alpha), 1e-10)
  expect_lt(rel_diff(predict(fc, x), predict(fm, x)), 1e-10)
  expect_equal(fc$rmse, fm$rmse, tolerance = 1e-10)
  # centres as a matrix (in the units of the data), without standardising
  cm <- x[c(5, 50, 150, 250), ]
  fc2 <- falkon(ch, y = "y", kernel = K, centers = cm, lambda = 1e-2, iter = 4, scale = FALSE)
  fm2 <- falkon(x, all$y, kernel = K, centers = cm, lambda = 1e-2, iter = 4, scale = FALSE)
  expect_identical(fc2$centres, fm2$centres)
  expect_lt(rel_diff(predict(fc2, x), predict(fm2, x)), 1e-12)
  # predictions on chunks: one element per chunk, as predict() on each
  pc <- predict(fc2, ch)
  expect_length(pc, 3L)
  expect_identical(unname(unlist(pc)), unname(predict(fc2, x)))
})

test_that("the logistic loss on chunks is the in-memory fit, up to rounding", {
  pieces <- falkon_pieces(c(120, 80, 100))
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  ch <- data_chunks(lapply(pieces, function(p) p[c(1:5, 7)]))
  fc <- falkon(ch, y = "class", loss = "logistic", centers = 60, seed = 4)
  fm <- falkon(x, all$class, loss = "logistic", centers = 60, seed = 4)
  expect_identical(fc$lambda, fm$lambda)
  expect_identical(fc$newton_steps, fm$newton_steps)
  expect_lt(rel_diff(fc$alpha, fm$alpha), 1e-10)
  expect_lt(rel_diff(predict(fc, x, type = "prob"), predict(fm, x, type = "prob")), 1e-10)
  # chained passes: the Newton steps of the in-memory fit, to the bit
  fh <- falkon(ch, y = "class", loss = "logistic", centers = 60, seed = 4, passes = "chained")
  expect_identical(fh$alpha, fm$alpha)
})

test_that("falkon on chunks refuses what needs the rows in memory", {
  ch <- data_chunks(lapply(falkon_pieces(c(30, 30)), function(p) p[c(1:5, 7)]))
  expect_error(falkon(ch, y = "class", loss = "hinge"), "'loss'")
  expect_error(falkon(ch, y = "class", landmarks = "kmeans"), "'landmarks'")
  expect_error(falkon(ch, y = "class", weights = rep(1, 60)), "'weights'")
  expect_error(falkon(ch), "'y'")
  expect_error(falkon(ch, y = "class", centers = 61), "'centers'")
  expect_error(falkon(ch, y = "class", lambda = 0), "'lambda'")
  expect_error(falkon(ch, y = "nope"), "nope")
})

# Four chunks in files, the sequential plan now and the user's plan back
# when the calling test ends.
falkon_plan_setup <- function(env = parent.frame()) {
  skip_if_not_installed("future.apply")
  skip_if(!nzchar(system.file(package = "bochner")), "bochner is not installed")
  dir <- withr::local_tempdir("falkon-plans", .local_envir = env)
  pieces <- falkon_pieces(c(60, 50, 70, 40))
  files <- file.path(dir, sprintf("p%d.rds", seq_along(pieces)))
  for (i in seq_along(pieces)) saveRDS(pieces[[i]][c(1:5, 6)], files[i])
  old <- future::plan()
  withr::defer(future::plan(old), envir = env)
  future::plan(future::sequential)
  list(files = files, pieces = pieces)
}

falkon_plan_fit <- function(files) {
  ch <- data_chunks(files)
  fit <- falkon(ch, y = "y", kernel = gaussian_kernel(2), centers = 30, lambda = 1e-3,
                iter = 4, seed = 2)
  list(alpha = fit$alpha, centres = fit$centres, rmse = fit$rmse,
       pred = predict(fit, as.matrix(do.call(rbind, lapply(files, readRDS))[1:5])))
}

test_that("falkon on chunks is identical under every future plan, and the in-memory fit", {
  skip_if_not_installed("future")
  setup <- falkon_plan_setup()
  files <- setup$files
  pieces <- setup$pieces
  ref <- falkon_plan_fit(files)
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  fm <- falkon(x, all$y, kernel = gaussian_kernel(2), centers = 30, lambda = 1e-3, iter = 4,
               seed = 2)
  expect_lt(rel_diff(ref$alpha, fm$alpha), 1e-10)
  expect_lt(rel_diff(ref$pred, predict(fm, x)), 1e-10)
  # chained passes: the in-memory fit to the bit
  fh <- falkon(data_chunks(files), y = "y", kernel = gaussian_kernel(2), centers = 30,
               lambda = 1e-3, iter = 4, seed = 2, passes = "chained")
  expect_identical(fh$alpha, fm$alpha)
  future::plan(future::multisession, workers = 2)
  expect_identical(falkon_plan_fit(files), ref)
  future::plan(future::cluster, workers = c("localhost", "localhost"))
  expect_identical(falkon_plan_fit(files), ref)
  future::plan(future::sequential)
  skip_on_cran()
  skip_if_not_installed("future.batchtools")
  # one batch job per pass over the four chunks
  withr::local_options(bochner.chunks_per_future = 4)
  withr::local_dir(dirname(files[1L]))
  future::plan(future.batchtools::batchtools_local)
  expect_identical(falkon_plan_fit(files), ref)
})
