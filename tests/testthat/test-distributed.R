# The fits on chunked data: against the in-memory fits, and identical under
# every future plan (sequential, multisession, cluster on localhost).

ring_pieces <- function(sizes = c(150, 120, 130), seed = 1) {
  set.seed(seed)
  lapply(sizes, function(n) {
    a <- runif(n, -3, 3)
    b <- runif(n, -3, 3)
    data.frame(a = a, b = b, y = sin(a) * cos(b) + rnorm(n, sd = 0.1),
               class = factor(ifelse(a^2 + b^2 < 4, "in", "out"), levels = c("in", "out")))
  })
}
pick <- function(pieces, cols) lapply(pieces, function(p) p[cols])
bind <- function(pieces) do.call(rbind, pieces)
K1 <- gaussian_kernel(1)

test_that("ridge on chunks is the in-memory ridge fit, to rounding", {
  pieces <- pick(ring_pieces(), c("a", "b", "y"))
  chunks <- data_chunks(pieces)
  all <- bind(pieces)
  x <- as.matrix(all[c("a", "b")])
  for (scale in c(FALSE, TRUE)) {
    mem <- rff_ridge(x, all$y, kernel = K1, D = 64, lambda = 0.5, scale = scale, seed = 2)
    ch <- rff_ridge(chunks, y = "y", kernel = K1, D = 64, lambda = 0.5, scale = scale, seed = 2)
    # the same draws: the map is drawn from the same stream (sigma given)
    expect_identical(ch$map$omega, mem$map$omega)
    # rounding: the moments differ in the last bits (another order of the
    # sums), which the solve amplifies by at most the condition number
    A <- crossprod(scale(predict(mem$map, bochner:::rff_apply_scaling(x, mem$scaling)),
                         scale = FALSE)) + diag(0.5, 64)
    kappa <- kappa(A, exact = TRUE)
    tol <- 100 * kappa * .Machine$double.eps * max(abs(mem$weights))
    expect_lt(max(abs(ch$weights - mem$weights)), tol)
    expect_lt(abs(ch$intercept - mem$intercept), 1e3 * tol)
    # the training RMSE and R^2 from the moments
    expect_equal(ch$rmse, mem$rmse, tolerance = 1e-8)
    expect_equal(ch$r.squared, mem$r.squared, tolerance = 1e-8)
    expect_equal(ch$n, nrow(x))
    expect_null(ch$fitted)
    pred <- predict(ch, chunks)
    expect_equal(unlist(pred), unname(mem$fitted), tolerance = 1e-8)
  }
  # classification by one-hot targets, the classes from every chunk
  cl <- pick(ring_pieces(), c("a", "b", "class"))
  allc <- bind(cl)
  mem <- rff_ridge(as.matrix(allc[c("a", "b")]), allc$class, kernel = K1, D = 64, lambda = 0.5,
                   seed = 2)
  ch <- rff_ridge(data_chunks(cl), y = "class", kernel = K1, D = 64, lambda = 0.5, seed = 2)
  expect_equal(ch$levels, mem$levels)
  expect_equal(ch$weights, mem$weights, tolerance = 1e-8)
  expect_equal(ch$accuracy, mem$accuracy)
  expect_equal(unlist(lapply(predict(ch, data_chunks(cl)), as.character)),
               as.character(unname(mem$fitted)))
  expect_output(print(ch), "training accuracy")
  # the default calibration: the sigmoids of the same training scores
  expect_identical(ch$calibration$source, "training")
  expect_equal(ch$calibration$sigmoids, mem$calibration$sigmoids, tolerance = 1e-6)
  xa <- as.matrix(allc[c("a", "b")])
  expect_equal(predict(ch, xa, type = "prob"), predict(mem, xa, type = "prob"), tolerance = 1e-6)
})

test_that("ridge on chunks chooses lambda as in memory: GCV, leave-one-out and auto", {
  # 60 rows and 100 features: "auto" finds GCV's choice near interpolation
  # and lets the exact leave-one-out decide, in memory and on chunks alike
  pieces <- pick(ring_pieces(c(20, 25, 15), seed = 3), c("a", "b", "y"))
  all <- bind(pieces)
  x <- as.matrix(all[c("a", "b")])
  chunks <- data_chunks(pieces)
  grid <- 10^seq(0, -4, by = -0.5)
  for (criterion in c("gcv", "loo")) {
    ch <- rff_ridge(chunks, y = "y", kernel = K1, D = 100, lambda = grid, criterion = criterion,
                    scale = FALSE, seed = 2)
    # the in-memory fit's primal side (n >= features) with the same map
    mem <- rff_ridge(x, all$y, map = ch$map, lambda = grid, criterion = criterion, scale = FALSE)
    expect_identical(names(ch$path), names(mem$path))
    # the sums differ in order only: the scores to rounding, amplified near
    # interpolation by 1 / (1 - h_ii)^2
    expect_equal(ch$path[[3L]], mem$path[[3L]], tolerance = 1e-6, label = criterion)
    expect_identical(ch$lambda, mem$lambda)
  }
  ch <- suppressWarnings(rff_ridge(chunks, y = "y", kernel = K1, D = 100, scale = FALSE, seed = 2))
  mem <- suppressWarnings(rff_ridge(x, all$y, map = ch$map, scale = FALSE))
  expect_identical(ch$criterion, mem$criterion)
  expect_equal(ch$lambda, mem$lambda, tolerance = 1e-12)
  expect_identical(formals(bochner:::rff_ridge.data_chunks)$criterion,
                   formals(bochner:::rff_ridge.default)$criterion)
})

test_that("the pairwise combination of moments is exact", {
  set.seed(4)
  Z <- matrix(rnorm(60), 20, 3)
  Y <- matrix(rnorm(20), 20, 1)
  mom <- function(rows) {
    z <- Z[rows, , drop = FALSE]
    y <- Y[rows, , drop = FALSE]
    zc <- sweep(z, 2, colMeans(z))
    yc <- sweep(y, 2, colMeans(y))
    list(zz = crossprod(zc), zy = crossprod(zc, yc), zbar = colMeans(z), ybar = colMeans(y),
         n = length(rows), yy = colSums(yc^2))
  }
  comb <- bochner:::moments_combine(bochner:::moments_combine(mom(1:7), mom(8:8)), mom(9:20))
  whole <- mom(1:20)
  for (nm in names(whole)) expect_equal(comb[[nm]], whole[[nm]], tolerance = 1e-13, label = nm)
})

test_that("distributed Lloyd visits the in-memory clusterings", {
  pieces <- pick(ring_pieces(c(90, 70, 80)), c("a", "b"))
  chunks <- data_chunks(pieces)
  x <- as.matrix(bind(pieces))
  map <- random_features(x, K1, D = 50, type = "phase", seed = 3)
  Z <- predict(map, x)
  C0 <- Z[c(5, 100, 200), ]
  init <- max.col(-bochner:::centre_distances(Z, C0, 1L), ties.method = "first")
  mem <- kernel_kmeans(x, init, method = "rff", map = map, max_iter = 50, algorithm = "Lloyd")
  run <- bochner:::chunked_lloyd(chunks, map, list(C0), 50L, c("a", "b"), 1L, "test")[[1L]]
  expect_true(run$converged)
  expect_equal(run$iter, mem$iter)
  expect_equal(run$size, mem$size)
  expect_equal(run$trace, mem$trace, tolerance = 1e-10)
  expect_equal(unname(run$centers), unname(mem$centers), tolerance = 1e-12)
  expect_equal(run$withinss, mem$withinss, tolerance = 1e-9)
  expect_equal(run$totss, mem$totss, tolerance = 1e-10)
  # the whole fit, seeded by k-means||, and its predictions
  fit <- kernel_kmeans(chunks, 3, K1, D = 50, seed = 3, nstart = 2, seeding = "kmeans||")
  expect_s3_class(fit, "kernel_kmeans")
  expect_equal(sum(fit$size), nrow(x))
  cl <- unlist(predict(fit, chunks))
  expect_equal(tabulate(cl, 3), fit$size)
  # the starts are those of the weighted candidates (seeding); Lloyd's
  # passes over the chunks then only lower the objective
  expect_length(fit$start_objectives, 2L)
  expect_true(all(diff(fit$trace) <= 1e-9))
  # the in-memory Lloyd from the chunked fit's clusters stops at once
  again <- kernel_kmeans(x, cl, method = "rff", map = fit$map, algorithm = "Lloyd")
  expect_equal(again$iter, 1L)
  expect_equal(again$cluster, cl)
  expect_output(print(fit), "fitted on 3 chunks")
  expect_output(print(summary(fit)), "Objective")
  # Nystrom features
  ny <- kernel_kmeans(chunks, 3, K1, method = "nystrom", m = 30, seed = 1)
  expect_s3_class(ny$map, "nystrom_features")
  expect_equal(sum(ny$size), nrow(x))
})

test_that("empty clusters are re-seeded with the farthest row, as in memory", {
  pieces <- pick(ring_pieces(c(40, 30)), c("a", "b"))
  chunks <- data_chunks(pieces)
  x <- as.matrix(bind(pieces))
  map <- random_features(x, K1, D = 20, type = "phase", seed = 5)
  Z <- predict(map, x)
  # two identical seeds: the second cluster starts empty
  C0 <- Z[c(3, 3, 50), ]
  run <- bochner:::chunked_lloyd(chunks, map, list(C0), 50L, c("a", "b"), 1L, "test")[[1L]]
  expect_gte(run$reseeded, 1L)
  expect_true(all(run$size > 0))
  init <- max.col(-bochner:::centre_distances(Z, C0, 1L), ties.method = "first")
  mem <- kernel_kmeans(x, init, method = "rff", map = map, max_iter = 50, algorithm = "Lloyd")
  expect_equal(run$size, mem$size)
  expect_equal(run$reseeded, mem$reseeded)
  expect_equal(run$trace, mem$trace, tolerance = 1e-10)
})

# The primal objective of a binary problem: 1/2 ||w||^2 + sum C l(1 - s w.(z, 1)).
svm_primal <- function(fit, x, y, cost, loss = "hinge") {
  Z <- cbind(predict(fit$map, x), 1)
  w <- c(fit$weights[, 1], fit$intercept[1])
  s <- ifelse(y == fit$levels[1], 1, -1)
  m <- pmax(0, 1 - s * drop(Z %*% w))
  0.5 * sum(w^2) + cost * sum(if (loss == "hinge") m else m^2)
}

test_that("the SVM on chunks converges to the in-memory SVM's objective", {
  pieces <- pick(ring_pieces(), c("a", "b", "class"))
  chunks <- data_chunks(pieces)
  all <- bind(pieces)
  x <- as.matrix(all[c("a", "b")])
  for (loss in c("hinge", "squared_hinge")) {
    fit <- rff_svm(chunks, y = "class", kernel = K1, D = 40, cost = 1, loss = loss, seed = 1,
                   rounds = 300, passes = 2, gap_tol = 0.005)
    expect_true(all(fit$converged))
    mem <- rff_svm(x, all$class, map = fit$map, scale = FALSE, cost = 1, loss = loss,
                   tol = 1e-4, max_iter = 10000, seed = 1)
    # the chunked fit's weights were standardised on the chunks; the map
    # refits on the standardised inputs
    xs <- bochner:::rff_apply_scaling(x, fit$scaling)
    mem <- rff_svm(xs, all$class, map = fit$map, scale = FALSE, cost = 1, loss = loss,
                   tol = 1e-4, max_iter = 10000, seed = 1)
    last <- fit$trace[nrow(fit$trace), ]
    p_ch <- svm_primal(fit, xs, all$class, 1, loss)
    p_mem <- svm_primal(mem, xs, all$class, 1, loss)
    expect_equal(last$primal, p_ch, tolerance = 1e-10)
    # weak duality: the dual bounds every primal value from below ...
    expect_lte(last$dual, p_mem * (1 + 1e-12))
    # ... so a gap below tol puts the fit within tol of the optimum
    expect_lte(last$gap, 0.005 * last$primal)
    expect_lte(p_ch, p_mem + 0.005 * p_ch)
    # the dual objective never decreases from round to round
    expect_true(all(diff(fit$trace$dual) >= -1e-9 * abs(fit$trace$dual[-1])))
    pred <- unlist(lapply(predict(fit, chunks), as.character))
    expect_gte(mean(pred == as.character(predict(mem, xs))), 0.97)
    expect_equal(fit$accuracy, mean(pred == as.character(all$class)))
  }
  # three classes, one-vs-rest
  three <- lapply(ring_pieces(), function(p) {
    p$class <- cut(p$a, c(-Inf, -1, 1, Inf), labels = c("l", "m", "r"))
    p[c("a", "b", "class")]
  })
  fit3 <- suppressWarnings(rff_svm(data_chunks(three), y = "class", kernel = K1, D = 30,
                                   seed = 1, rounds = 40))
  expect_equal(fit3$levels, c("l", "m", "r"))
  expect_equal(dim(fit3$weights), c(30L, 3L))
  expect_gt(fit3$accuracy, 0.9)
})

plans_available <- function() {
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  # the workers load the installed package
  skip_if(!nzchar(system.file(package = "bochner")), "bochner is not installed")
}

test_that("every plan gives identical fits and predictions", {
  plans_available()
  dir <- tempfile("plans")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  pieces <- ring_pieces(c(60, 50, 70, 40))
  files <- file.path(dir, sprintf("p%d.rds", seq_along(pieces)))
  for (i in seq_along(pieces)) saveRDS(pieces[[i]], files[i])
  reg <- data_chunks(files, reader = function(p) readRDS(p)[c("a", "b", "y")])
  cls <- data_chunks(files, reader = function(p) readRDS(p)[c("a", "b", "class")])
  inputs <- data_chunks(pick(pieces, c("a", "b")))
  run_all <- function() {
    ridge <- rff_ridge(reg, y = "y", kernel = gaussian_kernel("median"), D = 32, seed = 1)
    km <- kernel_kmeans(inputs, 3, K1, D = 24, seed = 2)
    svm <- suppressWarnings(rff_svm(cls, y = "class", kernel = K1, D = 24, seed = 3, rounds = 5))
    list(ridge = ridge, km = km, svm = svm, pred = predict(ridge, reg),
         clusters = predict(km, inputs), err = with_seed_here(4, kernel_approx_error(km$map, inputs)))
  }
  with_seed_here <- function(seed, expr) {
    set.seed(seed)
    expr
  }
  old <- future::plan()
  on.exit(future::plan(old), add = TRUE)
  future::plan(future::sequential)
  ref <- run_all()
  future::plan(future::multisession, workers = 2)
  expect_identical(run_all(), ref)
  # nor do waves of one chunk and two chunks per future change anything
  opts <- options(bochner.chunks_per_wave = 1, bochner.chunks_per_future = 2)
  expect_identical(run_all(), ref)
  options(opts)
  # a failing chunk on a worker
  bad <- data_chunks(c(files[1:2], file.path(dir, "missing.rds")),
                     reader = function(p) readRDS(p)[c("a", "b", "y")])
  expect_error(suppressWarnings(rff_ridge(bad, y = "y", kernel = K1, D = 8)),
               "chunk 3 \\(.*missing\\.rds\\) failed")
  # a worker that dies mid-fit
  dies <- function(i) {
    if (i == 3) quit(save = "no", status = 1)
    data.frame(a = c(0.1, 0.5, 0.9), b = c(1, 0, 1), y = c(0, 1, 0))
  }
  expect_error(rff_ridge(data_chunks(dies, n = 4), y = "y", kernel = K1, D = 8),
               "rff_ridge: chunk 3 failed \\(its worker failed")
  future::plan(future::cluster, workers = c("localhost", "localhost"))
  expect_identical(run_all(), ref)
  future::plan(future::sequential)
})

test_that("a batchtools scheduler (its local backend) gives the fits of sequential", {
  plans_available()
  skip_if_not_installed("future.batchtools")
  skip_on_cran()
  dir <- tempfile("batchtools")
  dir.create(dir)
  old <- future::plan()
  opts <- options(future.cache.path = dir, bochner.chunks_per_future = 2)
  on.exit({
    future::plan(old)
    options(opts)
    unlink(dir, recursive = TRUE)
  })
  pieces <- ring_pieces(c(60, 50, 70, 40))
  reg <- data_chunks(pick(pieces, c("a", "b", "y")))
  cls <- data_chunks(pick(pieces, c("a", "b", "class")))
  inputs <- data_chunks(pick(pieces, c("a", "b")))
  # every pass is a set of jobs, each a fresh R process: few passes here
  run <- function() {
    list(ridge = rff_ridge(reg, y = "y", kernel = K1, D = 16, lambda = 0.1, seed = 1),
         svm = suppressWarnings(rff_svm(cls, y = "class", kernel = K1, D = 16, seed = 3,
                                        rounds = 2)),
         km = suppressWarnings(kernel_kmeans(inputs, 2, K1, D = 8, seed = 2, max_iter = 2,
                                             rounds = 1)))
  }
  future::plan(future::sequential)
  ref <- run()
  future::plan(future.batchtools::batchtools_local)
  expect_identical(run(), ref)
})

test_that("the formula interface takes chunks: column names pick the columns", {
  pieces <- ring_pieces()
  chunks <- data_chunks(pieces)
  ridge <- rff_ridge(y ~ a + b, data = chunks, kernel = K1, D = 16, lambda = 0.1, seed = 1)
  ref <- rff_ridge(data_chunks(pick(pieces, c("a", "b", "y"))), y = "y", kernel = K1, D = 16,
                   lambda = 0.1, seed = 1)
  expect_identical(ridge$weights, ref$weights)
  expect_identical(ridge$input$names, c("a", "b"))
  # the same from files, and through '.'
  dir <- tempfile("formula")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  files <- file.path(dir, sprintf("p%d.rds", seq_along(pieces)))
  for (i in seq_along(pieces)) saveRDS(pieces[[i]], files[i])
  ridge2 <- rff_ridge(y ~ a + b, data = data_chunks(files), kernel = K1, D = 16, lambda = 0.1,
                      seed = 1)
  expect_identical(ridge2$weights, ref$weights)
  svm <- suppressWarnings(rff_svm(class ~ ., data = data_chunks(pick(pieces, c("a", "b", "class"))),
                                  kernel = K1, D = 16, seed = 2, rounds = 3))
  svm_ref <- suppressWarnings(rff_svm(data_chunks(pick(pieces, c("a", "b", "class"))),
                                      y = "class", kernel = K1, D = 16, seed = 2, rounds = 3))
  expect_identical(svm$weights, svm_ref$weights)
  km <- kernel_kmeans(~ b + a, data = chunks, centers = 2, kernel = K1, D = 8, seed = 3)
  km_ref <- kernel_kmeans(data_chunks(pick(pieces, c("b", "a"))), 2, K1, D = 8, seed = 3)
  expect_identical(km$centers, km_ref$centers)
  expect_error(rff_ridge(y ~ log(a) + b, data = chunks, kernel = K1), "formula")
  expect_error(rff_ridge(log(y) ~ a, data = chunks, kernel = K1), "formula")
  expect_error(rff_ridge(~ a + b, data = chunks, kernel = K1), "two-sided")
  expect_error(rff_ridge(y ~ a, data = chunks, kernel = K1, subset = a > 0), "subset")
  expect_error(rff_ridge(y ~ a + zz, data = chunks, kernel = K1, D = 8), "zz")
})

test_that("progress is reported per chunk under the option", {
  pieces <- pick(ring_pieces(), c("a", "b", "y"))
  old <- options(bochner.progress = TRUE)
  on.exit(options(old))
  msgs <- character(0)
  withCallingHandlers(rff_ridge(data_chunks(pieces), y = "y", kernel = K1, D = 8),
                      message = function(m) {
                        msgs <<- c(msgs, conditionMessage(m))
                        invokeRestart("muffleMessage")
                      })
  # the survey and the fit: a message per chunk and pass
  expect_equal(sum(grepl("bochner rff_ridge: chunk [1-3] of 3 done", msgs)), 6L)
})
