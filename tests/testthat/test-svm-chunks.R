# The chunked SVM: CoCoA+'s local solver in C (C_svm_local) against the
# in-memory solver and plain-R references, and the chunked fit's defaults.

local_problem <- function(n = 40, D = 5, seed = 1) {
  set.seed(seed)
  Z <- matrix(rnorm(D * n), D, n)
  list(Z = Z, rows = seq_len(n), sign = ifelse(Z[1, ] + 0.3 * rnorm(n) > 0, 1L, -1L),
       cost = rep(0.7, n))
}

test_that("the local solver from zero with sigma' = 1 is the in-memory solver", {
  p <- local_problem()
  offs <- c(0L, length(p$rows))
  for (loss in 1:2) {
    set.seed(2)
    a <- .Call(bochner:::C_svm_dcd, p$Z, p$rows, offs, p$sign, p$cost, loss, 1, 0.01, 1000L,
               TRUE, 1L)
    set.seed(2)
    b <- .Call(bochner:::C_svm_local, p$Z, p$rows, offs, p$sign, p$cost, loss, 1,
               matrix(0, 6, 1), numeric(40), 1, 1000L, 0.01, TRUE, NULL, 1L)
    expect_identical(b$alpha, a$alpha)
    expect_identical(b$dw, a$w)
    expect_identical(b$iter, a$iter)
  }
})

test_that("the local solver's warm start, sigma' and objective parts match plain R", {
  p <- local_problem(n = 30)
  Za <- rbind(p$Z, 1)
  # two problems: all rows, and none (a pair of classes absent from a chunk)
  offs <- c(0L, 30L, 30L)
  for (loss in 1:2) {
    set.seed(3)
    w <- matrix(rnorm(6) * 0.1, 6, 2)
    a0 <- runif(30, 0, 0.7)
    sigma <- 3
    set.seed(4)
    res <- .Call(bochner:::C_svm_local, p$Z, p$rows, offs, p$sign, p$cost, loss, 1, w, a0,
                 sigma, 4L, 1e-6, FALSE, NULL, 1L)
    # the norms given are the norms computed
    set.seed(4)
    res_n <- .Call(bochner:::C_svm_local, p$Z, p$rows, offs, p$sign, p$cost, loss, 1, w, a0,
                   sigma, 4L, 1e-6, FALSE, colSums(p$Z^2), 1L)
    expect_equal(res_n$alpha, res$alpha, tolerance = 1e-13)
    g <- if (loss == 1L) 0 else 1 / (2 * p$cost)
    m <- pmax(0, 1 - p$sign * drop(crossprod(Za, w[, 1])))
    pr <- list(offsets = offs, rows = p$rows, sign = p$sign, cost = p$cost)
    expect_equal(bochner:::cocoa_start_loss(p$Z, pr, 1:2, w, loss, 1L),
                 c(sum(p$cost * if (loss == 1L) m else m^2), 0), tolerance = 1e-12)
    expect_equal(res$asum, c(sum(a0), 0), tolerance = 1e-12)
    expect_equal(res$a2, c(if (loss == 1L) 0 else sum(a0^2 / (4 * p$cost)), 0),
                 tolerance = 1e-12)
    # the weight change is A d, with d the change of the dual variables
    d <- res$alpha - a0
    expect_equal(res$dw[, 1], drop(Za %*% (d * p$sign)), tolerance = 1e-12)
    expect_equal(res$dw[, 2], rep(0, 6))
    expect_true(all(res$alpha >= 0))
    if (loss == 1L) expect_true(all(res$alpha <= p$cost))
    # the local subproblem's objective (Ma et al. 2015) decreased from d = 0
    local_obj <- function(d) {
      a <- a0 + d
      Ad <- drop(Za %*% (d * p$sign))
      -sum(a) + sum(g * a^2) / 2 + sum(w[, 1] * Ad) + sigma / 2 * sum(Ad^2)
    }
    expect_lt(local_obj(d), local_obj(0 * d))
  }
  # one sample: one pass is the closed-form step with curvature sigma ||x||^2 + g
  res <- .Call(bochner:::C_svm_local, p$Z[, 1, drop = FALSE], 1L, c(0L, 1L), 1L, 0.7, 1L, 1,
               matrix(0.05, 6, 1), 0.1, 2, 1L, 1e-6, FALSE, NULL, 1L)
  x <- c(p$Z[, 1], 1)
  G <- sum(0.05 * x) - 1
  expect_equal(res$alpha, min(max(0.1 - G / (2 * sum(x^2)), 0), 0.7), tolerance = 1e-14)
  # bad starting values are refused
  expect_error(.Call(bochner:::C_svm_local, p$Z, p$rows, c(0L, 30L), p$sign, p$cost, 1L, 1,
                     matrix(0, 6, 1), rep(2, 30), 1, 1L, 0.1, TRUE, NULL, 1L), "alpha")
  expect_error(.Call(bochner:::C_svm_local, p$Z, p$rows, c(0L, 30L), p$sign, p$cost, 1L, 1,
                     matrix(0, 6, 1), numeric(30), 0.5, 1L, 0.1, TRUE, NULL, 1L), "sigma")
  expect_error(.Call(bochner:::C_svm_local, p$Z, p$rows, c(0L, 30L), p$sign, p$cost, 1L, 1,
                     matrix(0, 6, 1), numeric(30), 1, 1L, 0.1, TRUE, 1:3, 1L), "norms")
})

three_class_pieces <- function(sizes = c(150, 140, 160)) {
  set.seed(5)
  lapply(sizes, function(n) {
    a <- runif(n, -3, 3)
    b <- runif(n, -3, 3)
    data.frame(a = a, b = b, class = cut(a + 0.5 * sin(2 * b), c(-Inf, -1, 1, Inf),
                                         labels = c("l", "m", "r")))
  })
}

test_that("the chunked SVM has the in-memory defaults", {
  f_mem <- formals(bochner:::rff_svm.default)
  f_ch <- formals(bochner:::rff_svm.data_chunks)
  for (a in c("kernel", "D", "cost", "loss", "multiclass", "probability", "cross", "scale",
              "class.weights", "tol")) {
    expect_identical(f_ch[[a]], f_mem[[a]], label = a)
  }
  # the default D, chosen from the rows and classes, is the in-memory fit's
  ch <- data_chunks(split(iris, rep(1:3, 50)))
  expect_identical(rff_svm(ch, y = "Species", seed = 1)$D,
                   rff_svm(Species ~ ., data = iris, seed = 1)$D)
  two <- iris[iris$Species != "setosa", ]
  two$Species <- droplevels(two$Species)
  expect_identical(rff_svm(data_chunks(split(two, rep(1:2, 50))), y = "Species", seed = 1,
                           multiclass = "ovr")$n_features, 8192L)
})

test_that("the chunked SVM is one-vs-one with probabilities, near the in-memory fit", {
  pieces <- three_class_pieces()
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[c("a", "b")])
  ch <- rff_svm(data_chunks(pieces), y = "class", D = 64, seed = 1, probability = TRUE,
                cross = 5, gap_tol = 0.02, rounds = 300, passes = 5)
  expect_true(all(ch$converged))
  expect_identical(ch$multiclass, "ovo")
  expect_identical(colnames(ch$weights), c("l/m", "l/r", "m/r"))
  expect_identical(ch$kernel$rule, gaussian_kernel("sigest")$rule)
  xs <- bochner:::rff_apply_scaling(x, ch$scaling)
  mem <- rff_svm(xs, all$class, map = ch$map, scale = FALSE, seed = 1, probability = TRUE,
                 tol = 1e-3)
  # the same problems solved to a small duality gap: the same classes
  expect_gte(mean(predict(ch, x) == predict(mem, xs)), 0.97)
  pr <- predict(ch, x, type = "prob")
  expect_equal(unname(rowSums(pr)), rep(1, nrow(x)), tolerance = 1e-12)
  # sigmoids fitted on other folds of the same rows: close probabilities
  expect_lt(mean(abs(pr - predict(mem, xs, type = "prob"))), 0.05)
  expect_gt(ch$cross_accuracy, 0.85)
  expect_lt(abs(ch$cross_accuracy - ch$accuracy), 0.1)
  # the training accuracy of the last pass is that of the predictions
  expect_equal(ch$accuracy, mean(predict(ch, x) == all$class))
  # by default the sigmoids of the training decision values, in memory and on chunks
  ch0 <- rff_svm(data_chunks(pieces), y = "class", D = 64, seed = 1, gap_tol = 0.02,
                 rounds = 300, passes = 5)
  mem0 <- rff_svm(xs, all$class, map = ch0$map, scale = FALSE, seed = 1, tol = 1e-3)
  expect_identical(ch0$calibration$source, "training")
  expect_identical(mem0$calibration$source, "training")
  expect_lt(mean(abs(predict(ch0, x, type = "prob") - predict(mem0, xs, type = "prob"))), 0.05)
  # one-vs-rest as asked
  ovr <- rff_svm(data_chunks(pieces), y = "class", D = 64, seed = 1, multiclass = "ovr",
                 gap_tol = 0.01)
  expect_identical(colnames(ovr$weights), c("l", "m", "r"))
  expect_error(rff_svm(data_chunks(pieces), y = "class", multiclass = "all"), "multiclass")
  expect_error(rff_svm(data_chunks(pieces), y = "class", cross = 1), "cross")
})

test_that("the chunked SVM keeps no features in this session after the fit", {
  pieces <- three_class_pieces(c(40, 40))
  fit <- suppressWarnings(rff_svm(data_chunks(pieces), y = "class", D = 16, seed = 1,
                                  rounds = 3))
  expect_length(ls(bochner:::chunk_cache), 0L)
})

test_that("chunked fits have the in-memory bandwidth rules and print the rule used", {
  # rff_svm: sigest, rff_ridge: the median heuristic, on both paths
  expect_identical(formals(bochner:::rff_ridge.data_chunks)$kernel,
                   formals(bochner:::rff_ridge.default)$kernel)
  pieces <- three_class_pieces(c(40, 40))
  all <- do.call(rbind, pieces)
  chunks <- data_chunks(pieces)
  svm_ch <- suppressWarnings(rff_svm(chunks, y = "class", D = 16, seed = 1, rounds = 3))
  svm_mem <- rff_svm(class ~ a + b, data = all, D = 16, seed = 1)
  ridge_ch <- rff_ridge(a ~ b, data = chunks, D = 16, seed = 1)
  ridge_mem <- rff_ridge(a ~ b, data = all, D = 16, seed = 1)
  for (f in list(svm_ch, svm_mem)) {
    expect_true(isTRUE(f$kernel$sigma_from_sigest))
    expect_output(print(f), "(sigest rule)", fixed = TRUE)
  }
  for (f in list(ridge_ch, ridge_mem)) {
    expect_true(isTRUE(f$kernel$sigma_from_median))
    expect_output(print(f), "(median heuristic)", fixed = TRUE)
  }
})
