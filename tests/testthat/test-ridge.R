# rff_ridge(): against the normal equations solved directly, and the R
# interface.

# Minimiser of ||y - Z beta - b||^2 + lambda ||beta||^2 from the full
# (D + 1) x (D + 1) normal equations, intercept unpenalised: rff_ridge()'s
# lambda is per row, so its fit is this one at n * lambda.
ref_ridge <- function(Z, Y, lambda) {
  A <- cbind(Z, 1)
  P <- diag(c(rep(lambda, ncol(Z)), 0))
  sol <- solve(crossprod(A) + P, crossprod(A, Y))
  list(beta = sol[seq_len(ncol(Z)), , drop = FALSE], b = sol[ncol(Z) + 1L, ])
}

test_that("the fit solves the penalised least squares problem, from either side", {
  set.seed(1)
  x <- matrix(rnorm(60), 30)
  y <- x[, 1]^2 + rnorm(30, sd = 0.1)
  for (D in c(10, 50)) {          # n >= D: D x D system; n < D: n x n system
    for (lambda in c(0.01, 3)) {
      fit <- rff_ridge(x, y, D = D, lambda = lambda, seed = 2)
      xs <- bochner:::rff_apply_scaling(x, fit$scaling)
      Z <- predict(fit$map, xs)
      ref <- ref_ridge(Z, y, 30 * lambda)
      expect_equal(fit$weights, ref$beta, tolerance = 1e-7, ignore_attr = TRUE)
      expect_equal(unname(fit$intercept), ref$b, tolerance = 1e-7)
      expect_equal(unname(fit$fitted), drop(Z %*% ref$beta) + ref$b, tolerance = 1e-8)
      expect_equal(unname(predict(fit, x)), unname(fit$fitted), tolerance = 1e-10)
    }
  }
})

test_that("ridge recovers a smooth function to the noise level", {
  set.seed(3)
  n <- 1000
  x <- runif(n, -3, 3)
  y <- sin(2 * x) + rnorm(n, sd = 0.1)
  fit <- rff_ridge(x, y, seed = 1)
  grid <- seq(-2.9, 2.9, length.out = 200)
  err <- sqrt(mean((predict(fit, grid) - sin(2 * grid))^2))
  # the error of the fitted function is below the noise sd ...
  expect_lt(err, 0.05)
  # ... and the training residuals are at the noise level, not below it
  expect_gt(fit$rmse, 0.085)
  expect_lt(fit$rmse, 0.115)
  expect_gt(fit$r.squared, 0.97)
  # a heavy penalty shrinks the fit towards the mean
  flat <- rff_ridge(x, y, D = 100, seed = 1, lambda = 100)
  expect_lt(sd(predict(flat, grid)), 0.2)
})

test_that("classification by one-hot targets: iris through a formula", {
  fit <- rff_ridge(Species ~ ., data = iris, D = 256, seed = 1)
  expect_identical(fit$type, "classification")
  expect_identical(fit$levels, levels(iris$Species))
  expect_gt(fit$accuracy, 0.93)
  expect_identical(predict(fit, iris), fit$fitted)
  expect_identical(predict(fit, iris, type = "class"), fit$fitted)
  dec <- predict(fit, iris[1:4, ], type = "decision")
  expect_identical(colnames(dec), levels(iris$Species))
  # one-hot targets sum to one, and so do the fitted scores (the constant
  # is in the span of the intercept)
  expect_equal(unname(rowSums(dec)), rep(1, 4), tolerance = 1e-8)
  expect_identical(fitted(fit), fit$fitted)
  expect_error(predict(fit, type = "decision"), "'newdata'")
})

test_that("results are reproducible and do not depend on nthreads", {
  set.seed(4)
  x <- matrix(rnorm(200), 100)
  y <- sin(x[, 1]) + x[, 2]
  set.seed(5)
  a <- rff_ridge(x, y, D = 64, nthreads = 1)
  set.seed(5)
  b <- rff_ridge(x, y, D = 64, nthreads = 2)
  expect_identical(a$weights, b$weights)
  expect_identical(predict(a, x, nthreads = 1), predict(b, x, nthreads = 2))
  expect_identical(rff_ridge(x, y, D = 64, seed = 9)$weights,
                   rff_ridge(x, y, D = 64, seed = 9)$weights)
})

test_that("print, summary and a saveRDS round trip", {
  fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 50, seed = 1, lambda = 0.01)
  expect_output(print(fit), "Ridge regression on 50 random features, lambda = 0.01")
  expect_output(print(summary(fit)), "Residuals")
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  unlink(path)
  expect_identical(predict(back, mtcars), predict(fit, mtcars))
  cls <- rff_ridge(Species ~ ., data = iris, D = 32, seed = 1)
  expect_output(print(summary(cls)), "Predicted classes")
})

test_that("bad input gets an error naming the argument", {
  x <- matrix(rnorm(40), 20)
  y <- rnorm(20)
  expect_error(rff_ridge(x, y[1:19]), "'y' has length 19 but 'x' has 20")
  expect_error(rff_ridge(x, replace(y, 2, NA)), "'y' contains NA")
  expect_error(rff_ridge(x, replace(y, 2, Inf)), "'y'")
  expect_error(rff_ridge(x, factor(rep("a", 20))), "'y' has only one class")
  expect_error(rff_ridge(x, y, lambda = -1), "'lambda'")
  expect_error(rff_ridge(x, y, lambda = 0), "'lambda'")
  expect_error(rff_ridge(x, y, D = 1.5), "'D'")
  expect_error(rff_ridge(x, y, scale = "yes"), "'scale'")
  expect_error(rff_ridge(x, matrix(1, 20, 2)), "'y'")
  expect_error(rff_ridge(x, y, wrong = 1), "wrong")
  fit <- rff_ridge(x, y, D = 16, seed = 1)
  expect_error(predict(fit, matrix(0, 2, 1)), "'newdata' has 1 column")
  expect_error(predict(fit, x, type = "class"), "'type'")
})

test_that("the lambda path: GCV and exact leave-one-out against brute force", {
  set.seed(11)
  x <- matrix(runif(160, -2, 2), 80, 2)
  y <- sin(x[, 1]) * x[, 2] + rnorm(80, sd = 0.2)
  grid <- c(10, 1, 0.1, 0.01) / 80      # per row: 10 ... 0.01 on the sums
  for (D in c(40, 120)) {             # primal (n >= D) and dual (n < D)
    map <- random_features(x, gaussian_kernel(1), D = D, seed = 2)
    Z <- predict(map, x)
    ridge_at <- function(idx, l) {
      fit <- rff_ridge(x[idx, ], y[idx], map = map, lambda = l)
      fit
    }
    # GCV from its definition: RSS / n / (1 - tr(H) / n)^2, H with intercept
    Zc <- sweep(Z, 2, colMeans(Z))
    gcv <- sapply(grid, function(l) {
      H <- Zc %*% solve(crossprod(Zc) + 80 * l * diag(ncol(Z)), t(Zc)) + 1 / 80
      r <- y - mean(y) - Zc %*% solve(crossprod(Zc) + 80 * l * diag(ncol(Z)), crossprod(Zc, y - mean(y)))
      mean(r^2) / (1 - sum(diag(H)) / 80)^2
    })
    g <- rff_ridge(x, y, map = map, lambda = grid, criterion = "gcv")
    expect_equal(g$path$gcv, gcv, tolerance = 1e-6)
    expect_identical(g$lambda, grid[which.min(gcv)])
    # LOO by refitting without each row, at the same penalty on the sums
    # (80 l): on 79 rows that is lambda = 80 l / 79 per row
    loo <- sapply(grid, function(l) {
      mean(sapply(1:80, function(i) (y[i] - predict(ridge_at(-i, 80 * l / 79), x[i, , drop = FALSE]))^2))
    })
    l <- rff_ridge(x, y, map = map, lambda = grid, criterion = "loo")
    expect_equal(l$path$loo, loo, tolerance = 1e-6)
    # the fit at the chosen lambda is the fit at that lambda
    expect_equal(l$weights, ridge_at(1:80, l$lambda)$weights)
  }
})

test_that("lambda = 'auto' chooses from a grid spanning the spectrum; weights", {
  set.seed(12)
  x <- runif(400, -3, 3)
  y <- sin(2 * x) + rnorm(400, sd = 0.3)
  fit <- rff_ridge(x, y, D = 100, seed = 1, criterion = "gcv")
  expect_identical(nrow(fit$path), 41L)
  chosen <- which(fit$path$lambda == fit$lambda)
  expect_true(chosen > 1 && chosen < 41)       # an interior minimum here
  expect_identical(fit$path$gcv[chosen], min(fit$path$gcv))
  # noisier data want a larger lambda
  y2 <- sin(2 * x) + rnorm(400, sd = 1.5)
  expect_gt(rff_ridge(x, y2, D = 100, seed = 1, criterion = "gcv")$lambda, fit$lambda)
  # "auto": GCV far from interpolation, leave-one-out near it (n < D)
  expect_identical(rff_ridge(x, y, D = 100, seed = 1)$criterion, "gcv")
  near <- rff_ridge(x[1:60], y[1:60], D = 100, seed = 1)
  expect_identical(near$criterion, "loo")
  expect_identical(near$lambda,
                   rff_ridge(x[1:60], y[1:60], D = 100, seed = 1, criterion = "loo")$lambda)
  expect_output(print(fit), "chosen by GCV from 41 values")
  # integer case weights are repeated rows, for a fixed lambda
  w <- rep(1:2, 200)
  map <- fit$map
  rows <- rep(seq_len(400), w)
  a <- rff_ridge(x, y, map = map, lambda = 0.5, weights = w)
  b <- rff_ridge(x[rows], y[rows], map = map, lambda = 0.5)
  expect_equal(a$weights, b$weights, tolerance = 1e-8)
  expect_equal(a$intercept, b$intercept, tolerance = 1e-8)
  # and for the dual side
  a2 <- rff_ridge(x[1:40], y[1:40], map = map, lambda = 0.5, weights = w[1:40])
  b2 <- rff_ridge(x[rows[rows <= 40]], y[rows[rows <= 40]], map = map, lambda = 0.5)
  expect_equal(a2$weights, b2$weights, tolerance = 1e-8)
  expect_error(rff_ridge(x, y, D = 8, lambda = "gcv"), "'lambda'")
  expect_error(rff_ridge(x, y, D = 8, criterion = "aic"), "'criterion'")
  expect_error(rff_ridge(x, y, D = 8, probability = TRUE), "'probability'")
})

test_that("ridge leave-one-out scores match refitting without the row", {
  x <- as.matrix(iris[, 1:4])
  map <- random_features(x, gaussian_kernel(1), D = 30, seed = 1)
  fit <- rff_ridge(x, iris$Species, map = map, lambda = 1 / 150, probability = TRUE)
  Y <- outer(as.integer(iris$Species), 1:3, "==") * 1
  sys <- bochner:::ridge_primal_system(map, x, Y, NULL, 1L)
  fitted <- predict(fit, x, type = "decision")
  loo <- bochner:::ridge_loo_scores(sys, 1, fitted, Y, map, x, NULL, 1L)
  for (i in c(1, 77, 150)) {
    # the same penalty on the sums (1) over 149 rows
    refit <- rff_ridge(x[-i, ], iris$Species[-i], map = map, lambda = 1 / 149)
    expect_equal(unname(loo[i, ]), unname(predict(refit, x[i, , drop = FALSE], type = "decision")[1, ]),
                 tolerance = 1e-8)
  }
  p <- predict(fit, x, type = "prob")
  expect_equal(unname(rowSums(p)), rep(1, 150))
  expect_identical(fit$calibration$source, "leave-one-out")
  expect_output(print(fit), "Platt scaling on the leave-one-out scores")
})

test_that("held features (computed once) give the helpers' results of the map and rows", {
  x <- as.matrix(iris[, 1:4])
  Y <- outer(as.integer(iris$Species), 1:3, "==") * 1
  map <- nystrom_features(x, gaussian_kernel(1), m = 20, seed = 1)
  Z <- predict(map, x)
  held <- bochner:::held_features(map$n_features)
  expect_identical(bochner:::transform_features(held, Z, 1L), Z)
  a <- bochner:::ridge_primal_system(map, x, Y, NULL, 1L)
  b <- bochner:::ridge_primal_system(held, Z, Y, NULL, 1L)
  expect_identical(a, b)
  beta <- matrix(rnorm(60), 20)
  expect_identical(bochner:::feature_decision(map, x, beta, 1:3, 1L),
                   bochner:::feature_decision(held, Z, beta, 1:3, 1L))
})

test_that("a default classification's probabilities are Platt's sigmoids of its training scores", {
  x <- as.matrix(iris[, 1:4])
  fit <- rff_ridge(x, iris$Species, D = 30, seed = 1)
  expect_identical(fit$calibration$source, "training")
  expect_output(print(fit), "Platt scaling on the training scores")
  sc <- predict(fit, x, type = "decision")
  for (c in 1:3) {
    pos <- as.integer(iris$Species) == c
    f <- sc[, c]
    tg <- ifelse(pos, (sum(pos) + 1) / (sum(pos) + 2), 1 / (sum(!pos) + 2))
    nll <- function(ab) {
      q <- plogis(-(ab[1] * f + ab[2]))
      -sum(tg * log(q) + (1 - tg) * log(1 - q))
    }
    ref <- optim(c(0, 0), nll, method = "BFGS", control = list(reltol = 1e-14))$par
    expect_lt(nll(fit$calibration$sigmoids[[c]]), nll(ref) + 1e-6)
  }
  p <- predict(fit, x, type = "prob")
  expect_equal(unname(rowSums(p)), rep(1, 150))
  # case weights: rows of weight 0 play no part in the sigmoids
  w <- rep(c(1, 0), 75)
  fw <- rff_ridge(x, iris$Species, D = 30, seed = 1, weights = w, lambda = 0.01)
  sw <- predict(fw, x, type = "decision")[w > 0, ]
  expect_equal(fw$calibration$sigmoids,
               bochner:::calibrate_scores(sw, iris$Species[w > 0])$sigmoids)
  old <- fit
  old$calibration <- NULL
  expect_error(predict(old, x, type = "prob"), "'type'.*refit")
})

test_that("the default bandwidth is the median heuristic in the code, the help and print()", {
  # bench/investigations/bandwidth.md: the median is the better rule for ridge (it is
  # sigest for rff_svm()); the argument's help must say the same
  expect_identical(formals(bochner:::rff_ridge.default)$kernel, quote(gaussian_kernel("median")))
  fit <- rff_ridge(Sepal.Length ~ ., data = iris, D = 16, seed = 1)
  expect_true(isTRUE(fit$kernel$sigma_from_median))
  expect_output(print(fit), "(median heuristic)", fixed = TRUE)
  rd <- tools::Rd_db("bochner")[["rff_ridge.Rd"]]
  skip_if(is.null(rd), "no installed help database")
  txt <- paste(capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))),
               collapse = "\n")
  kernel_arg <- regmatches(txt, regexpr("kernel: [^:]*", txt))
  expect_match(kernel_arg, "median heuristic")
  expect_no_match(kernel_arg, "sigest")
})
