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

test_that("falkon on chunks is the in-memory fit, bit for bit: coefficients and predictions", {
  pieces <- falkon_pieces()
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  reg <- data_chunks(lapply(pieces, function(p) p[c(1:5, 6)]))
  cls <- data_chunks(lapply(pieces, function(p) p[c(1:5, 7)]))
  # every pass sums its rows in groups of 1024 training rows (global row
  # numbers) added along a fixed tree, whatever the chunks: here the 450
  # training rows are one group, finished in this session from the rows of
  # all four chunks.  The
  # three-class fit (100 centres, 3 x 3 right-hand sides) forms H = K_nm' K_nm
  # once (falkon_fit_squared()), the regression iterates pass by pass
  for (case in list(list(reg, "y", all$y, "response"),
                    list(cls, "class", all$class, "decision"))) {
    # the bandwidth rule, lambda and the iterations chosen on the held-out rows
    fc <- falkon(case[[1]], y = case[[2]], m = 100, seed = 3)
    fm <- falkon(x, case[[3]], m = 100, seed = 3)
    expect_identical(fc$scaling, fm$scaling)
    expect_identical(fc$kernel$sigma, fm$kernel$sigma)
    expect_identical(fc$centres, fm$centres)
    expect_identical(fc$lambda, fm$lambda)
    expect_identical(fc$iter, fm$iter)
    expect_identical(fc$validation, fm$validation)
    expect_identical(fc$alpha, fm$alpha)
    expect_identical(predict(fc, x, type = case[[4]]), predict(fm, x, type = case[[4]]))
    expect_s3_class(fc, "falkon")
    expect_identical(fc$chunks$rows, c(150, 120, 130, 100))
  }
  expect_equal(fc$accuracy, fm$accuracy)
  expect_output(print(fc), "FALKON classification, 3 classes")
  # chained passes (one chunk at a time): the same fit
  fh <- falkon(cls, y = "class", m = 100, seed = 3, passes = "chained")
  expect_identical(fh$alpha, fm$alpha)
  expect_error(falkon(cls, y = "class", passes = "serial"), "'passes'")
  # the default number of centres, grown along the held-out error with warm
  # starts: the same path and fit
  fc <- falkon(cls, y = "class", seed = 3, control = list(start_centers = 32))
  fm <- falkon(x, all$class, seed = 3, control = list(start_centers = 32))
  expect_identical(fc$centres_path, fm$centres_path)
  expect_identical(fc$alpha, fm$alpha)
})

test_that("k-means++ and RPCholesky centres on chunks are the in-memory fit's, pool included", {
  # the held-out path (no leave-one-out), centres grown from 32: every step's
  # rule runs on the training rows fetched from the chunks
  pieces <- falkon_pieces()
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  cls <- data_chunks(lapply(pieces, function(p) p[c(1:5, 7)]))
  ctl <- list(start_centers = 32, loo_rows = 0)
  for (rule in c("kmeans", "rpcholesky")) {
    fc <- falkon(cls, y = "class", seed = 3, landmarks = rule, control = ctl)
    fm <- falkon(x, all$class, seed = 3, landmarks = rule, control = ctl)
    expect_identical(fc$landmarks, rule)
    expect_identical(fm$landmarks, rule)
    expect_identical(fc$centres, fm$centres, label = rule)
    expect_identical(fc$centres_path, fm$centres_path, label = rule)
    expect_identical(fc$alpha, fm$alpha, label = rule)
    expect_output(print(fc), if (rule == "kmeans") "k-means\\+\\+" else "randomly pivoted")
  }
  # over 10000 training rows both rules draw a pool of 10000 (R/map-landmarks.R):
  # fetched from the chunks in one pass, the in-memory pool's rows
  big <- falkon_pieces(c(2600, 2600, 2700, 2600), seed = 2)
  xb <- as.matrix(do.call(rbind, big)[1:5])
  yb <- do.call(rbind, big)$y
  reg <- data_chunks(lapply(big, function(p) p[c(1:5, 6)]))
  for (rule in c("kmeans", "rpcholesky")) {
    fc <- falkon(reg, y = "y", m = 20, lambda = 1e-3, iter = 5, seed = 4, landmarks = rule)
    fm <- falkon(xb, yb, m = 20, lambda = 1e-3, iter = 5, seed = 4, landmarks = rule)
    expect_identical(fc$centres, fm$centres, label = rule)
    expect_identical(fc$alpha, fm$alpha, label = rule)
  }
  # and they are the centres the rule takes: a uniform fit's differ
  fu <- falkon(xb, yb, m = 20, lambda = 1e-3, iter = 5, seed = 4)
  expect_identical(fu$landmarks, "uniform")
  expect_false(identical(fu$centres, fm$centres))
  given <- falkon(xb, yb, m = xb[1:20, ], lambda = 1e-3, iter = 5)
  expect_identical(given$landmarks, "given")
})

test_that("the default centres on chunks are the in-memory fit's where RPCholesky wins", {
  # two clustered inputs: landmarks = "auto" takes RPCholesky pivots (its
  # probe fetches the pool from the chunks)
  set.seed(15)
  x <- matrix(rnorm(6000), ncol = 2)
  d <- data.frame(x, class = factor(ifelse(x[, 1] * x[, 2] > 0, "a", "b")))
  ch <- data_chunks(split(d, rep(1:4, c(700, 800, 900, 600))))
  fc <- falkon(ch, y = "class", seed = 3)
  fm <- falkon(x, d$class, seed = 3)
  expect_identical(fm$landmarks, "rpcholesky")
  expect_identical(fc$landmarks, "rpcholesky")
  expect_identical(fc$centres, fm$centres)
  expect_identical(fc$centres_path, fm$centres_path)
  expect_identical(fc$alpha, fm$alpha)
})

test_that("three classes through per-iteration passes, chunks smaller than a row group", {
  # 1800 rows: the two groups of 1024 rows cut by chunks of every size, the
  # first finished from four chunks, the second from three
  pieces <- falkon_pieces(c(700, 40, 90, 333, 337, 300))
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  ch <- data_chunks(lapply(pieces, function(p) p[c(1:5, 7)]))
  K <- gaussian_kernel(2)
  # m = 120 centres against 2 k L iter = 2 x 3 x 1 x 6 = 36: no H, a pass per
  # iteration
  fc <- falkon(ch, y = "class", kernel = K, m = 120, lambda = 1e-4, iter = 6, seed = 5)
  fm <- falkon(x, all$class, kernel = K, m = 120, lambda = 1e-4, iter = 6, seed = 5)
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(predict(fc, x, type = "decision"), predict(fm, x, type = "decision"))
  # in memory: the same doubles on one or two threads and for any block size
  f2 <- falkon(x, all$class, kernel = K, m = 120, lambda = 1e-4, iter = 6, seed = 5,
               nthreads = 2L, control = list(block_rows = 300))
  f1 <- falkon(x, all$class, kernel = K, m = 120, lambda = 1e-4, iter = 6, seed = 5,
               nthreads = 1L, control = list(block_rows = 17))
  expect_identical(f2$alpha, fm$alpha)
  expect_identical(f1$alpha, fm$alpha)
})

test_that("the pass in parts: any cut of the rows, folded in order, is the pass over all rows", {
  set.seed(6)
  ker <- gaussian_kernel(1.5)
  n <- 5000
  x <- matrix(rnorm(n * 3), n)
  C <- x[sample(n, 30), ]
  U <- matrix(rnorm(60), 30)
  V <- matrix(rnorm(2 * n), n)
  w <- runif(n)
  code <- bochner:::kernel_code(ker)
  par <- bochner:::kernel_parameters(ker)
  one <- .Call(bochner:::C_falkon_knm_apply, x, C, code, par, U, V, w, NULL, 0, FALSE, 1L, NULL, FALSE)
  K <- kernel_matrix(ker, x, C)
  expect_equal(one, crossprod(K, w * (K %*% U + V)), tolerance = 1e-12)
  fold <- function(a, b) .Call(bochner:::C_falkon_pass_fold, a, b, n, C, code, par)
  part <- function(r, nth, block) {
    .Call(bochner:::C_falkon_knm_part, x[r, , drop = FALSE], C, code, par, U,
          V[r, , drop = FALSE], w[r], as.double(block), TRUE, nth, as.double(r[1] - 1), n, FALSE)
  }
  for (cuts in list(c(1, 2, 3, 1023, 1024, 1025, 4999), c(3000, 3001, 4000), sort(sample(n - 1, 25)))) {
    b <- c(0, cuts, n)
    st <- NULL
    ku <- NULL
    for (i in seq_len(length(b) - 1L)) {
      p <- part((b[i] + 1):b[i + 1], 1L + i %% 2L, c(0, 37, 600)[1L + i %% 3L])
      ku <- rbind(ku, attr(p, "ku"))
      st <- fold(st, p)
    }
    expect_identical(.Call(bochner:::C_falkon_pass_finish, st, NULL), one)
    expect_equal(ku, K %*% U, tolerance = 1e-12)
  }
  # states folded as a tree, not left to right
  s1 <- part(1:1700, 1L, 0)
  s2 <- fold(part(1701:3100, 1L, 0), part(3101:n, 2L, 0))
  expect_identical(.Call(bochner:::C_falkon_pass_finish,
                         fold(s1, s2), NULL), one)
  # a part without rows (a chunk whose rows are all held out) changes nothing
  empty <- .Call(bochner:::C_falkon_knm_part, x[0, , drop = FALSE], C, code, par, U,
                 V[0, , drop = FALSE], w[0], 0, TRUE, 1L, 1700, n, FALSE)
  expect_identical(dim(attr(empty, "ku")), c(0L, 2L))
  expect_identical(.Call(bochner:::C_falkon_pass_finish, fold(fold(s1, empty), s2), NULL), one)
  # other kernels: the shared groups' kernel rows evaluated in this session
  for (k2 in list(laplace_kernel(0.8), polynomial_kernel(2), matern_kernel(1, 1.5))) {
    c2 <- bochner:::kernel_code(k2)
    p2 <- bochner:::kernel_parameters(k2)
    whole <- .Call(bochner:::C_falkon_knm_apply, x, C, c2, p2, U, V, w, NULL, 0, FALSE, 1L, NULL, FALSE)
    st <- NULL
    for (r in list(1:1000, 1001:1500, 1501:n)) {
      pr <- .Call(bochner:::C_falkon_knm_part, x[r, ], C, c2, p2, U, V[r, ], w[r], 0, FALSE, 2L,
                  r[1] - 1, n, FALSE)
      st <- .Call(bochner:::C_falkon_pass_fold, st, pr, n, C, c2, p2)
    }
    expect_identical(.Call(bochner:::C_falkon_pass_finish, st, NULL), whole)
  }
  # many centres: smaller row groups (512 rows at m = 1100, 256 at m = 2100, so that a
  # group's kernel rows stay in cache), cut the same way in every part
  for (mc in c(1100, 2100)) {
    Cm <- matrix(rnorm(mc * 3), mc)
    Um <- matrix(rnorm(mc), mc)
    n2 <- 2000
    whole <- .Call(bochner:::C_falkon_knm_apply, x[1:n2, ], Cm, code, par, Um, NULL, w[1:n2],
                   NULL, 0, FALSE, 1L, NULL, FALSE)
    Km <- kernel_matrix(ker, x[1:n2, ], Cm)
    expect_equal(whole, crossprod(Km, w[1:n2] * (Km %*% Um)), tolerance = 1e-12)
    expect_identical(.Call(bochner:::C_falkon_knm_apply, x[1:n2, ], Cm, code, par, Um, NULL,
                           w[1:n2], NULL, 300, FALSE, 2L, NULL, FALSE), whole)
    st <- NULL
    for (r in list(1:100, 101:611, 612:1300, 1301:n2)) {
      pr <- .Call(bochner:::C_falkon_knm_part, x[r, ], Cm, code, par, Um, NULL, w[r], 0, FALSE,
                  2L, r[1] - 1, n2, FALSE)
      st <- .Call(bochner:::C_falkon_pass_fold, st, pr, n2, Cm, code, par)
    }
    expect_identical(.Call(bochner:::C_falkon_pass_finish, st, NULL), whole)
  }
  # out of order, or rows missing: refused
  expect_error(fold(part(1701:n, 1L, 0), s1), "order")
  expect_error(.Call(bochner:::C_falkon_pass_finish, s1, NULL), "misses rows")
  expect_error(.Call(bochner:::C_falkon_knm_part, x, C, code, par, U, V, w, 0, FALSE, 1L, 5, n, FALSE),
               "'row0'")
  # waves of a pass: all of chunks_wave() for small states, fewer (but two
  # per worker) when a state is large (H = K' K with m = 2000: ~700 MB each)
  expect_identical(bochner:::falkon_pass_wave(1e5, 100, 3), bochner:::chunks_wave())
  expect_identical(bochner:::falkon_pass_wave(1e5, 2000, 2000),
                   as.integer(min(bochner:::chunks_wave(), 2 * bochner:::chunks_workers())))
})

test_that("given centres, lambda and iterations: a fixed number of passes, the same fit", {
  pieces <- falkon_pieces(c(120, 80, 100))
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  ch <- data_chunks(lapply(pieces, function(p) p[c(1:5, 6)]))
  K <- gaussian_kernel(2)
  fc <- falkon(ch, y = "y", kernel = K, m = 40, lambda = 1e-3, iter = 8, seed = 1)
  fm <- falkon(x, all$y, kernel = K, m = 40, lambda = 1e-3, iter = 8, seed = 1)
  expect_null(fc$validation)
  expect_identical(fc$iter, 8L)
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(predict(fc, x), predict(fm, x))
  expect_equal(fc$rmse, fm$rmse, tolerance = 1e-10)
  # centres as a matrix (in the units of the data), without standardising
  cm <- x[c(5, 50, 150, 250), ]
  fc2 <- falkon(ch, y = "y", kernel = K, m = cm, lambda = 1e-2, iter = 4, scale = FALSE)
  fm2 <- falkon(x, all$y, kernel = K, m = cm, lambda = 1e-2, iter = 4, scale = FALSE)
  expect_identical(fc2$centres, fm2$centres)
  expect_identical(predict(fc2, x), predict(fm2, x))
  # predictions on chunks: one element per chunk, as predict() on each
  pc <- predict(fc2, ch)
  expect_length(pc, 3L)
  expect_identical(unname(unlist(pc)), unname(predict(fc2, x)))
})

test_that("the logistic loss on chunks is the in-memory fit, bit for bit", {
  pieces <- falkon_pieces(c(120, 80, 100))
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  ch <- data_chunks(lapply(pieces, function(p) p[c(1:5, 7)]))
  fc <- falkon(ch, y = "class", loss = "logistic", m = 60, seed = 4)
  fm <- falkon(x, all$class, loss = "logistic", m = 60, seed = 4)
  expect_identical(fc$lambda, fm$lambda)
  expect_identical(fc$newton_steps, fm$newton_steps)
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(predict(fc, x, type = "prob"), predict(fm, x, type = "prob"))
})

test_that("without a held-out slice, chunks calibrate on the training scores as in memory", {
  pieces <- falkon_pieces(c(120, 80, 100))
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  ch <- data_chunks(lapply(pieces, function(p) p[c(1:5, 7)]))
  fc <- falkon(ch, y = "class", m = 60, lambda = 1e-3, iter = 8, seed = 4)
  fm <- falkon(x, all$class, m = 60, lambda = 1e-3, iter = 8, seed = 4)
  expect_identical(fc$calibration$source, "training")
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(fc$calibration, fm$calibration)
  expect_identical(predict(fc, x, type = "prob"), predict(fm, x, type = "prob"))
})

test_that("falkon on chunks refuses what needs the rows in memory", {
  ch <- data_chunks(lapply(falkon_pieces(c(30, 30)), function(p) p[c(1:5, 7)]))
  expect_error(falkon(ch, y = "class", loss = "hinge"), "'loss'")
  expect_error(falkon(ch, y = "class", landmarks = "leverage"), "'landmarks'")
  expect_error(falkon(ch, y = "class", weights = rep(1, 60)), "'weights'")
  expect_error(falkon(ch), "'y'")
  expect_error(falkon(ch, y = "class", m = 61), "'m'")
  expect_error(falkon(ch, y = "class", lambda = 0), "'lambda'")
  expect_error(falkon(ch, y = "nope"), "nope")
})

# Four chunks in files (2700 rows: the 1024-row groups of the passes cut by
# the files), the sequential plan now and the user's plan back when the
# calling test ends.
falkon_plan_setup <- function(env = parent.frame()) {
  skip_if_not_installed("future.apply")
  skip_if(!nzchar(system.file(package = "bochner")), "bochner is not installed")
  dir <- withr::local_tempdir("falkon-plans", .local_envir = env)
  pieces <- falkon_pieces(c(1100, 400, 900, 300))
  files <- list(reg = file.path(dir, sprintf("r%d.rds", seq_along(pieces))),
                cls = file.path(dir, sprintf("c%d.rds", seq_along(pieces))))
  for (i in seq_along(pieces)) {
    saveRDS(pieces[[i]][c(1:5, 6)], files$reg[i])
    saveRDS(pieces[[i]][c(1:5, 7)], files$cls[i])
  }
  old <- future::plan()
  withr::defer(future::plan(old), envir = env)
  future::plan(future::sequential)
  list(files = files, pieces = pieces)
}

# The regression with given centres, lambda and iterations, and with cls
# the three-class fit choosing lambda and the iterations (through H = K' K).
falkon_plan_fit <- function(files, cls = FALSE) {
  x <- as.matrix(do.call(rbind, lapply(files$reg, readRDS))[1:5])
  fit <- falkon(data_chunks(files$reg), y = "y", kernel = gaussian_kernel(2), m = 30,
                lambda = 1e-3, iter = 4, seed = 2)
  out <- list(alpha = fit$alpha, centres = fit$centres, rmse = fit$rmse, pred = predict(fit, x))
  if (!cls) return(out)
  fc <- falkon(data_chunks(files$cls), y = "class", m = 60, seed = 2)
  c(out, list(cls_alpha = fc$alpha, cls_lambda = fc$lambda, cls_iter = fc$iter,
              cls_pred = predict(fc, x, type = "decision")))
}

test_that("falkon on chunks is identical under every future plan, and the in-memory fit", {
  skip_if_not_installed("future")
  setup <- falkon_plan_setup()
  files <- setup$files
  all <- do.call(rbind, setup$pieces)
  x <- as.matrix(all[1:5])
  ref <- falkon_plan_fit(files, cls = TRUE)
  fm <- falkon(x, all$y, kernel = gaussian_kernel(2), m = 30, lambda = 1e-3, iter = 4,
               seed = 2)
  expect_identical(ref$alpha, fm$alpha)
  expect_identical(ref$pred, predict(fm, x))
  cm <- falkon(x, all$class, m = 60, seed = 2)
  expect_identical(ref$cls_lambda, cm$lambda)
  expect_identical(ref$cls_iter, cm$iter)
  expect_identical(ref$cls_alpha, cm$alpha)
  expect_identical(ref$cls_pred, predict(cm, x, type = "decision"))
  future::plan(future::multisession, workers = 2)
  expect_identical(falkon_plan_fit(files, cls = TRUE), ref)
  # the other schedulers: the regression (the three-class fit's passes are
  # the same C calls, its chunks scheduled the same way)
  ref <- ref[c("alpha", "centres", "rmse", "pred")]
  future::plan(future::cluster, workers = c("localhost", "localhost"))
  expect_identical(falkon_plan_fit(files), ref)
  future::plan(future::sequential)
  skip_on_cran()
  skip_if_not_installed("future.batchtools")
  # one batch job per pass over the four chunks
  withr::local_options(bochner.chunks_per_future = 4)
  withr::local_dir(dirname(files$reg[1L]))
  future::plan(future.batchtools::batchtools_local)
  expect_identical(falkon_plan_fit(files), ref)
})

test_that("on chunks, lambda chosen on the first quarter of many centres: the in-memory fit", {
  pieces <- falkon_pieces()
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  reg <- data_chunks(lapply(pieces, function(p) p[c(1:5, 6)]))
  ctl <- list(factor_bytes = 5e5, start_centers = 32, loo_rows = 0)
  fc <- falkon(reg, y = "y", m = 200, seed = 3, control = ctl)
  fm <- falkon(x, all$y, m = 200, seed = 3, control = ctl)
  expect_identical(fm$centres_path$m, c(50, 200))
  expect_identical(fc$centres_path, fm$centres_path)
  expect_identical(fc$validation, fm$validation)
  expect_identical(fc$alpha, fm$alpha)
})

test_that("falkon's formula method on data_chunks() reaches the chunked fit", {
  pieces <- falkon_pieces()
  all <- do.call(rbind, pieces)
  reg <- data_chunks(lapply(pieces, function(p) p[c(1:5, 6)]))
  fc <- falkon(y ~ ., data = reg, m = 40, seed = 3)
  fm <- falkon(y ~ ., data = all[c(1:5, 6)], m = 40, seed = 3)
  expect_false(is.null(fc$chunks))
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(fc$centres, fm$centres)
  # (a chunked fit keeps no row names of the data frame it predicts on)
  expect_identical(unname(predict(fc, all)), unname(predict(fm, all)))
  fc <- falkon(class ~ v1 + v2, data = data_chunks(pieces), m = 40, seed = 3)
  fm <- falkon(class ~ v1 + v2, data = all, m = 40, seed = 3)
  expect_identical(fc$alpha, fm$alpha)
  expect_error(falkon(y ~ ., data = reg, subset = v1 > 0), "subset")
})

test_that("falkon on chunks takes an ARD kernel as in memory", {
  pieces <- falkon_pieces()
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  reg <- data_chunks(lapply(pieces, function(p) p[c(1:5, 6)]))
  k <- gaussian_kernel(c(1, 2, 3, 8, 8))
  fc <- falkon(reg, y = "y", kernel = k, m = 50, seed = 3)
  fm <- falkon(x, all$y, kernel = k, m = 50, seed = 3)
  expect_identical(fc$scaling, fm$scaling)
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(predict(fc, x), predict(fm, x))
  expect_error(falkon(reg, y = "y", kernel = gaussian_kernel(1:3), m = 50),
               "'sigma' has 3 length scales but the data have 5 columns")
})

test_that("an evaluated pass with a group of rows per thread equals plain R and the one-thread pass", {
  # two threads (work over 2^24 multiply-adds) and at least 8 whole groups (of 1024 rows
  # at m = 300): each thread evaluates whole groups in its own scratch (src/falkon.c,
  # groups_evaluated()); the partial groups at a part's ends go block by block
  set.seed(17)
  n <- 12000
  x <- matrix(rnorm(n * 3), n)
  C <- x[sample(n, 300), ]
  U <- matrix(rnorm(600), 300)
  V <- matrix(rnorm(2 * n), n)
  w <- runif(n)
  W <- matrix(runif(2 * n), n)
  for (ker in list(gaussian_kernel(1.5), matern_kernel(1, 2.5), laplace_kernel(0.9))) {
    code <- bochner:::kernel_code(ker)
    par <- bochner:::kernel_parameters(ker)
    K <- kernel_matrix(ker, x, C)
    pass <- function(nth, V = NULL, w = NULL, keep = FALSE, single = FALSE) {
      .Call(bochner:::C_falkon_knm_apply, x, C, code, par, U, V, w, NULL, 0, keep, nth, NULL, single)
    }
    one <- pass(1L, V, w)
    expect_equal(one, crossprod(K, w * (K %*% U + V)), tolerance = 1e-12)
    expect_identical(pass(2L, V, w), one)
    expect_identical(pass(2L, w = W), pass(1L, w = W))
    onlyV <- .Call(bochner:::C_falkon_knm_apply, x, C, code, par, NULL, V, w, NULL, 0, FALSE, 2L,
                   NULL, FALSE)
    expect_equal(onlyV, crossprod(K, w * V), tolerance = 1e-12)
    expect_identical(onlyV, .Call(bochner:::C_falkon_knm_apply, x, C, code, par, NULL, V, w,
                                  NULL, 0, FALSE, 1L, NULL, FALSE))
    both <- pass(2L, keep = TRUE)      # list(the pass, K U)
    expect_identical(both, pass(1L, keep = TRUE))
    expect_equal(both[[2]], K %*% U, tolerance = 1e-12)
    expect_identical(pass(2L, w = w, single = TRUE), pass(1L, w = w, single = TRUE))
    # K alpha (predictions), a group of rows per thread too
    prep <- list(centres = C, code = code, par = par)
    alpha <- matrix(rnorm(900), 300)
    pr2 <- bochner:::falkon_kernel_predict(prep, x, alpha, 2L)
    expect_equal(pr2, K %*% alpha, tolerance = 1e-12)
    expect_identical(pr2, bochner:::falkon_kernel_predict(prep, x, alpha, 1L))
    # parts with partial groups at both ends, on two threads, fold to the same pass
    st <- NULL
    for (r in list(1:1500, 1501:11000, 11001:n)) {
      pr <- .Call(bochner:::C_falkon_knm_part, x[r, ], C, code, par, U, V[r, ], w[r], 0, FALSE,
                  2L, r[1] - 1, n, FALSE)
      st <- .Call(bochner:::C_falkon_pass_fold, st, pr, n, C, code, par)
    }
    expect_identical(.Call(bochner:::C_falkon_pass_finish, st, NULL), one)
  }
})

test_that("on too few rows for a held-out slice, the chunked fit is the in-memory one", {
  pieces <- falkon_pieces(c(30, 25, 35), seed = 5)
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[1:5])
  for (case in list(list("y", all$y), list("class", all$class))) {
    ch <- data_chunks(lapply(pieces, function(p) p[c(1:5, match(case[[1]], names(p)))]))
    fc <- falkon(ch, y = case[[1]], seed = 4)
    fm <- falkon(x, case[[2]], seed = 4)
    expect_true(is.na(fc$iter))
    expect_identical(fc$centres, fm$centres)
    expect_identical(fc$lambda, fm$lambda)
    expect_identical(fc$validation, fm$validation)
    expect_equal(fc$alpha, fm$alpha, tolerance = 1e-12)
    expect_equal(predict(fc, x, type = "decision"), predict(fm, x, type = "decision"),
                 tolerance = 1e-12)
  }
})
