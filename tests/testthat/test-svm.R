# rff_svm(): the C dual coordinate descent against plain-R references, and
# the R interface.

# The C solver on one-vs-rest problems over all rows (one problem for two
# classes: class 1 against class 2); alpha returned as n x problems.
svm_c <- function(Z, cls, k, cp, cn, loss = 1L, eps = 1e-10, max_iter = 100000L,
                  shrink = TRUE) {
  n <- nrow(Z)
  nprob <- if (k == 2) 1L else k
  sign <- unlist(lapply(seq_len(nprob), function(c) ifelse(cls == c, 1L, -1L)))
  cost <- unlist(lapply(seq_len(nprob), function(c) ifelse(cls == c, cp[c], cn[c])))
  res <- .Call(bochner:::C_svm_dcd, t(Z), rep(seq_len(n), nprob),
               as.integer(n * (0:nprob)), as.integer(sign), as.double(cost),
               as.integer(loss), 1, eps, as.integer(max_iter), shrink, 1L)
  res$alpha <- matrix(res$alpha, n, nprob)
  res
}

# Primal and dual objectives of the binary problem, from the formulas of
# Hsieh et al. (2008), on features X augmented with a constant 1.
svm_primal <- function(w, X, s, C, loss) {
  m <- pmax(0, 1 - s * drop(X %*% w))
  0.5 * sum(w^2) + sum(C * if (loss == 1L) m else m^2)
}
svm_dual <- function(alpha, X, s, C, loss) {
  w <- colSums(alpha * s * X)
  sum(alpha) - 0.5 * sum(w^2) - if (loss == 1L) 0 else sum(alpha^2 / (4 * C))
}

# Plain-R dual coordinate descent, cyclic order, no shrinking.
ref_dcd <- function(X, s, C, loss, epochs = 3000) {
  dg <- if (loss == 1L) rep(0, length(s)) else 0.5 / C
  U <- if (loss == 1L) C else rep(Inf, length(s))
  Q <- rowSums(X^2) + dg
  alpha <- rep(0, length(s))
  w <- rep(0, ncol(X))
  for (e in seq_len(epochs)) {
    for (i in seq_along(s)) {
      G <- s[i] * sum(w * X[i, ]) - 1 + dg[i] * alpha[i]
      a <- min(max(alpha[i] - G / Q[i], 0), U[i])
      w <- w + (a - alpha[i]) * s[i] * X[i, ]
      alpha[i] <- a
    }
  }
  list(w = w, alpha = alpha)
}

small_problem <- function(n = 40, p = 5, seed = 1) {
  set.seed(seed)
  Z <- matrix(rnorm(n * p), n, p)
  cls <- ifelse(Z[, 1] + 0.5 * Z[, 2] + rnorm(n, sd = 0.7) > 0, 1L, 2L)
  list(Z = Z, cls = cls, X = cbind(Z, 1), s = ifelse(cls == 1L, 1, -1))
}

test_that("the C solver reaches the optimum of the hinge-loss problem", {
  pr <- small_problem()
  for (costs in list(c(1, 1), c(0.3, 2))) {
    C <- ifelse(pr$cls == 1L, costs[1], costs[2])
    res <- svm_c(pr$Z, pr$cls, 2, costs[1], costs[2], loss = 1L)
    expect_true(res$converged)
    w <- drop(res$w)
    alpha <- drop(res$alpha)
    # w is the dual combination of the samples, and alpha is feasible
    expect_equal(w, colSums(alpha * pr$s * pr$X), tolerance = 1e-12)
    expect_true(all(alpha >= 0 & alpha <= C * (1 + 1e-15)))
    # zero duality gap, to the tolerance
    P <- svm_primal(w, pr$X, pr$s, C, 1L)
    expect_lt(P - svm_dual(alpha, pr$X, pr$s, C, 1L), 1e-7 * P)
    # the same optimum as a plain-R solver
    ref <- ref_dcd(pr$X, pr$s, C, 1L)
    expect_equal(P, svm_primal(ref$w, pr$X, pr$s, C, 1L), tolerance = 1e-7)
    expect_equal(w, ref$w, tolerance = 1e-4)
  }
})

test_that("the C solver reaches the optimum of the squared-hinge problem (against optim)", {
  pr <- small_problem(n = 50, p = 4, seed = 2)
  for (costs in list(c(1, 1), c(2, 0.5))) {
    C <- ifelse(pr$cls == 1L, costs[1], costs[2])
    res <- svm_c(pr$Z, pr$cls, 2, costs[1], costs[2], loss = 2L)
    expect_true(res$converged)
    w <- drop(res$w)
    alpha <- drop(res$alpha)
    expect_equal(w, colSums(alpha * pr$s * pr$X), tolerance = 1e-12)
    # the squared hinge primal is smooth and strictly convex: BFGS finds the
    # unique minimiser
    f <- function(v) svm_primal(v, pr$X, pr$s, C, 2L)
    g <- function(v) {
      m <- pmax(0, 1 - pr$s * drop(pr$X %*% v))
      v - 2 * colSums(C * m * pr$s * pr$X)
    }
    opt <- optim(rep(0, ncol(pr$X)), f, g, method = "BFGS",
                 control = list(reltol = 1e-14, maxit = 10000))
    expect_equal(f(w), opt$value, tolerance = 1e-7)
    expect_equal(w, opt$par, tolerance = 1e-4)
    expect_lt(f(w) - svm_dual(alpha, pr$X, pr$s, C, 2L), 1e-7 * f(w))
  }
})

test_that("shrinking changes the path but not the solution", {
  pr <- small_problem(n = 60, p = 6, seed = 3)
  a <- svm_c(pr$Z, pr$cls, 2, 1, 1, shrink = TRUE)
  b <- svm_c(pr$Z, pr$cls, 2, 1, 1, shrink = FALSE)
  C <- rep(1, 60)
  expect_equal(svm_primal(drop(a$w), pr$X, pr$s, C, 1L),
               svm_primal(drop(b$w), pr$X, pr$s, C, 1L), tolerance = 1e-8)
})

test_that("the default D follows the rows summed over the binary problems", {
  # plain R: 2^26 feature entries a pass, a multiple of 256, in [1024, 8192]
  ref <- function(n, k, multiclass, per = 1) {
    rows <- n * c(binary = 1, ovo = k - 1, ovr = k)[[multiclass]]
    f <- 256 * floor(2^26 / rows / 256)
    as.integer(floor(min(8192, max(1024, f)) / per))
  }
  cases <- list(c(150, 3), c(2230, 3), c(8192, 2), c(8193, 2), c(20000, 2), c(65536, 2),
                c(10^6, 2), c(14000, 26), c(4504, 6))
  for (cs in cases) for (mc in c("binary", "ovo", "ovr")) for (per in c(1, 2, 11)) {
    expect_identical(bochner:::svm_default_D(cs[1], cs[2], mc, per), ref(cs[1], cs[2], mc, per))
  }
  expect_identical(bochner:::svm_default_D(8193, 2, "binary"), 7936L)
  expect_identical(bochner:::svm_default_D(2230, 3, "ovo"), 8192L)
  expect_identical(bochner:::svm_default_D(14000, 26, "ovo"), 1024L)
  # the fits use it: features per unit of D from the map (pair: 2; the min
  # kernel's indicators: d + 1), the problems from the classes and 'multiclass'
  x <- as.matrix(iris[, 1:4])
  expect_identical(rff_svm(x, iris$Species, seed = 1)$D, 8192L)
  pair <- rff_svm(x, iris$Species, seed = 1, type = "pair")
  expect_identical(c(pair$D, pair$n_features), c(4096L, 8192L))
  mn <- rff_svm(x, iris$Species, kernel = min_kernel(), scale = FALSE, seed = 1)
  expect_identical(mn$D, bochner:::svm_default_D(150, 3, "ovo", 5))
  # rff_tune() tries the machine's default
  tu <- rff_tune(x, iris$Species, cost = 1, folds = 2, seed = 1)
  expect_identical(tu$fit$D, 8192L)
})

test_that("edge cases: D = 1, one sample per class, several classes", {
  res <- svm_c(matrix(c(-1, 1), 2, 1), c(1L, 2L), 2, 1, 1)
  # class 1 (+1) at z = -1, class 2 (-1) at z = 1: by symmetry the bias is 0
  # and w = -a with 1/2 a^2 + 2 max(0, 1 - a), minimised at a = 1
  expect_equal(drop(res$w), c(-1, 0), tolerance = 1e-8)
  set.seed(4)
  Z <- matrix(rnorm(30), 30, 1)
  res <- svm_c(Z, rep(1:3, 10), 3, rep(1, 3), rep(1, 3))
  expect_equal(dim(res$w), c(2L, 3L))
  expect_equal(dim(res$alpha), c(30L, 3L))
  expect_true(all(res$converged))
})

test_that("the C entry point refuses malformed input without crashing", {
  Z <- matrix(rnorm(10), 5, 2)
  zt <- t(Z)
  call <- function(...) {
    args <- modifyList(list(zt = zt, rows = 1:5, offsets = c(0L, 5L),
                            sign = c(1L, -1L, 1L, -1L, 1L), cost = rep(1, 5),
                            loss = 1L, bias = 1, eps = 0.1, max_iter = 10L, shrink = TRUE,
                            nthreads = 1L),
                       list(...))
    do.call(.Call, c(list(bochner:::C_svm_dcd), unname(args)))
  }
  expect_type(call(), "list")
  expect_error(call(zt = 1:10), "zt")
  expect_error(call(rows = c(1L, 2L)), "'sign'")
  expect_error(call(rows = c(1L, 2L, 6L, 2L, 1L)), "'rows'")
  expect_error(call(rows = c(1L, NA, 1L, 2L, 1L)), "'rows'")
  expect_error(call(rows = as.double(1:5)), "'rows'")
  expect_error(call(offsets = 0L), "'offsets'")
  expect_error(call(offsets = c(0L, 4L)), "'offsets'")
  expect_error(call(offsets = c(0L, 0L, 5L)), "at least one sample")
  expect_error(call(sign = c(1L, 0L, 1L, -1L, 1L)), "'sign'")
  expect_error(call(cost = c(1, -1, 1, 1, 1)), "costs")
  expect_error(call(cost = c(1, 1)), "'cost'")
  expect_error(call(loss = 3L), "'loss'")
  expect_error(call(eps = 0), "'epsilon'")
  expect_error(call(max_iter = 0L), "'max_iter'")
  expect_error(call(shrink = NA), "'shrinking'")
})

rings_data <- function(n, seed) {
  set.seed(seed)
  angle <- runif(2 * n, 0, 2 * pi)
  radius <- rep(c(1, 3), each = n) + rnorm(2 * n, sd = 0.2)
  list(x = cbind(a = radius * cos(angle), b = radius * sin(angle)),
       y = factor(rep(c("inner", "outer"), each = n)))
}

test_that("two rings are separated by a Gaussian rff_svm with either loss", {
  train <- rings_data(300, 10)
  test <- rings_data(300, 11)
  for (loss in c("hinge", "squared_hinge")) {
    fit <- rff_svm(train$x, train$y, D = 256, loss = loss, seed = 1)
    expect_s3_class(fit, "rff_svm")
    expect_gt(fit$accuracy, 0.99)
    pred <- predict(fit, test$x)
    expect_identical(levels(pred), c("inner", "outer"))
    # the rings are 2 apart with noise sd 0.2: essentially separable
    expect_gt(mean(pred == test$y), 0.98)
    dec <- predict(fit, test$x, type = "decision")
    expect_identical(colnames(dec), c("inner", "outer"))
    expect_equal(dec[, 2], -dec[, 1])
  }
  # a linear kernel cannot do it: the random features matter
  lin <- glm(y ~ ., data = data.frame(train$x, y = train$y), family = binomial)
  expect_lt(mean((fitted(lin) > 0.5) == (train$y == "outer")), 0.8)
})

test_that("iris through the formula interface: three classes, one-vs-rest", {
  fit <- rff_svm(Species ~ ., data = iris, D = 256, seed = 1, multiclass = "ovr")
  expect_identical(fit$levels, levels(iris$Species))
  expect_gt(fit$accuracy, 0.93)
  expect_identical(predict(fit, iris), fit$fitted)
  expect_identical(fitted(fit), fit$fitted)
  dec <- predict(fit, iris[1:5, ], type = "decision")
  expect_identical(colnames(dec), levels(iris$Species))
  expect_identical(dim(fit$weights), c(256L, 3L))
  # factor predictors are one-hot coded through the formula's terms
  df <- data.frame(a = c(rnorm(40, 0), rnorm(40, 3)), g = factor(rep(c("u", "v"), 40)),
                   y = factor(rep(c("p", "q"), each = 40)))
  fit2 <- rff_svm(y ~ a + g, data = df, D = 64, seed = 2)
  expect_identical(ncol(fit2$map$omega), 64L)
  expect_identical(nrow(fit2$map$omega), 3L)
  expect_length(predict(fit2, df[1:3, c("a", "g")]), 3L)
  expect_error(predict(fit2, df[1:3, "a", drop = FALSE]), "newdata")
})

test_that("any kernel with a feature map works: polynomial and min kernels", {
  poly <- rff_svm(Species ~ ., data = iris, kernel = polynomial_kernel(2), D = 64, seed = 1)
  expect_gt(poly$accuracy, 0.9)
  mn <- rff_svm(Species ~ ., data = iris, kernel = min_kernel(), D = 64, seed = 1,
                scale = FALSE)
  expect_gt(mn$accuracy, 0.9)
  expect_identical(predict(mn, iris), mn$fitted)
})

test_that("each one-vs-rest column is the binary problem of its class", {
  x <- as.matrix(iris[, 1:4])
  multi <- rff_svm(x, iris$Species, D = 64, seed = 3, tol = 1e-3, multiclass = "ovr")
  one <- factor(ifelse(iris$Species == "setosa", "setosa", "rest"), levels = c("setosa", "rest"))
  binary <- rff_svm(x, one, D = 64, seed = 3, tol = 1e-3)
  # same map and the same random stream for the first problem
  expect_identical(binary$map, multi$map)
  expect_identical(unname(binary$weights[, 1]), unname(multi$weights[, 1]))
  expect_identical(unname(binary$intercept[1]), unname(multi$intercept[1]))
})

test_that("class weights scale the cost of a class", {
  set.seed(5)
  x <- matrix(rnorm(400), 200)
  y <- factor(ifelse(x[, 1] + rnorm(200) > 0, "a", "b"))
  plain <- rff_svm(x, y, D = 64, seed = 1)
  heavy <- rff_svm(x, y, D = 64, seed = 1, class.weights = c(a = 10))
  expect_identical(heavy$class.weights, c(a = 10, b = 1))
  expect_gt(sum(heavy$fitted == "a"), sum(plain$fitted == "a"))
  # cost 2 with weights 1 and cost 1 with weights 2 are the same problem
  w2 <- rff_svm(x, y, D = 64, seed = 1, class.weights = c(a = 2, b = 2), tol = 1e-6,
                max_iter = 1e5)
  c2 <- rff_svm(x, y, D = 64, seed = 1, cost = 2, tol = 1e-6, max_iter = 1e5)
  expect_equal(w2$weights, c2$weights)
})

test_that("fits are reproducible with set.seed and do not depend on nthreads", {
  d <- rings_data(100, 12)
  set.seed(7)
  a <- rff_svm(d$x, d$y, D = 128, nthreads = 1)
  set.seed(7)
  b <- rff_svm(d$x, d$y, D = 128, nthreads = 2)
  expect_identical(a$weights, b$weights)
  expect_identical(a$intercept, b$intercept)
  expect_identical(predict(a, d$x, type = "decision", nthreads = 1),
                   predict(b, d$x, type = "decision", nthreads = 2))
  # seed = leaves the user's stream alone
  set.seed(8)
  before <- runif(1)
  set.seed(8)
  c1 <- rff_svm(d$x, d$y, D = 32, seed = 99)
  expect_identical(runif(1), before)
  expect_identical(rff_svm(d$x, d$y, D = 32, seed = 99)$weights, c1$weights)
})

test_that("standardisation: stored, applied at predict, constant columns handled", {
  d <- rings_data(100, 13)
  x <- cbind(d$x, const = 5)
  fit <- rff_svm(x, d$y, D = 64, seed = 1)
  expect_equal(fit$scaling$center, unname(colMeans(x)))
  expect_identical(fit$scaling$scale[3], 1)
  expect_true(all(is.finite(predict(fit, x, type = "decision"))))
  # the fit depends on the data only through the standardised values
  big <- rff_svm(sweep(x, 2, c(1000, 0.001, 7), "*"), d$y, D = 64, seed = 1)
  expect_equal(big$weights, fit$weights, tolerance = 1e-6)
  expect_equal(big$map$kernel$sigma, fit$map$kernel$sigma)
  unscaled <- rff_svm(x, d$y, D = 64, seed = 1, scale = FALSE)
  expect_null(unscaled$scaling)
})

test_that("max_iter warns when it stops the solver", {
  d <- rings_data(100, 14)
  expect_warning(fit <- rff_svm(d$x, d$y, D = 64, seed = 1, max_iter = 1, tol = 1e-8),
                 "max_iter")
  expect_false(fit$converged)
})

test_that("print, summary and a saveRDS round trip", {
  fit <- rff_svm(Species ~ ., data = iris, D = 64, seed = 4)
  expect_output(print(fit), "Support vector machine on 64 random features")
  expect_output(print(fit), "one-vs-one")
  expect_output(print(summary(fit)), "setosa vs versicolor")
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  unlink(path)
  expect_identical(predict(back, iris, type = "decision"), predict(fit, iris, type = "decision"))
  expect_identical(predict(back, iris), predict(fit, iris))
})

test_that("bad input gets an error naming the argument", {
  x <- matrix(rnorm(40), 20)
  y <- factor(rep(c("a", "b"), 10))
  expect_error(rff_svm(x, factor(rep("a", 20))), "'y' has only one class")
  expect_error(rff_svm(x, replace(y, 3, NA)), "'y' contains NA")
  expect_error(rff_svm(x, y[1:19]), "'y' has length 19 but 'x' has 20")
  expect_error(rff_svm(x, rnorm(20)), "'y'")
  expect_error(rff_svm(x, y, cost = -1), "'cost'")
  expect_error(rff_svm(x, y, cost = 0), "'cost'")
  expect_error(rff_svm(x, y, D = 0), "'D'")
  expect_error(rff_svm(x, y, loss = "logistic"), "'loss'")
  expect_error(rff_svm(x, y, tol = 0), "'tol'")
  expect_error(rff_svm(x, y, max_iter = 0), "'max_iter'")
  expect_error(rff_svm(x, y, scale = NA), "'scale'")
  expect_error(rff_svm(x, y, class.weights = c(z = 2)), "'class.weights'")
  expect_error(rff_svm(x, y, class.weights = c(a = -2)), "'class.weights'")
  expect_error(rff_svm(x, y, class.weights = 2), "'class.weights'")
  expect_error(rff_svm(x, y, kernel = "gaussian"), "'kernel'")
  expect_error(rff_svm(abs(x), y, kernel = min_kernel()), "'scale' must be FALSE")
  expect_error(rff_svm(replace(x, 5, NA), y), "'x'")
  expect_error(rff_svm(x, y, bogus = 1), "bogus")
  expect_error(rff_svm(~ a, data = data.frame(a = 1:4)), "two-sided")
  fit <- rff_svm(x, y, D = 16, seed = 1)
  expect_error(predict(fit, matrix(0, 2, 3)), "'newdata' has 3 column")
  # a fit saved before every fit had its calibration
  old <- fit
  old$calibration <- NULL
  expect_error(predict(old, x, type = "prob"), "'type'.*refit")
  expect_error(predict(fit, type = "decision"), "'newdata'")
})

test_that("one-vs-one: each pair's column is the binary problem on that pair's rows", {
  x <- as.matrix(iris[, 1:4])
  map <- random_features(x, gaussian_kernel(1), D = 64, seed = 2)
  multi <- rff_svm(x, iris$Species, map = map, seed = 3, tol = 1e-3)
  expect_identical(multi$multiclass, "ovo")
  expect_identical(colnames(multi$weights),
                   c("setosa/versicolor", "setosa/virginica", "versicolor/virginica"))
  # the first pair uses the first problem seed, as a two-class fit does
  rows <- iris$Species != "virginica"
  pair <- rff_svm(x[rows, ], droplevels(iris$Species[rows]), map = map, seed = 3,
                  tol = 1e-3)
  expect_identical(unname(pair$weights[, 1]), unname(multi$weights[, 1]))
  expect_identical(unname(pair$intercept[1]), unname(multi$intercept[1]))
  # votes: a point the three pairs send to versicolor, virginica, versicolor
  fake <- list(multiclass = "ovo", k = 3L, levels = levels(iris$Species),
               pairs = utils::combn(3, 2))
  dec <- rbind(c(-1, 1, 1), c(1, 1, -1), c(-1, -1, -1), c(1, -1, 1))
  expect_identical(as.character(bochner:::svm_classes(fake, dec)),
                   c("versicolor", "setosa", "virginica", "setosa"))
})

test_that("one-vs-one and one-vs-rest are reproducible and thread-independent", {
  x <- as.matrix(iris[, 1:4])
  a <- rff_svm(x, iris$Species, D = 64, seed = 1, nthreads = 1)
  b <- rff_svm(x, iris$Species, D = 64, seed = 1, nthreads = 2)
  expect_identical(drop_call(a), drop_call(b))
  set.seed(9)
  c1 <- rff_svm(x, iris$Species, D = 64, multiclass = "ovr", probability = TRUE)
  set.seed(9)
  c2 <- rff_svm(x, iris$Species, D = 64, multiclass = "ovr", probability = TRUE, nthreads = 2)
  expect_identical(drop_call(c1), drop_call(c2))
})

test_that("print() names the folds the probabilities were calibrated on", {
  x <- as.matrix(iris[, 1:4])
  five <- rff_svm(x, iris$Species, D = 32, seed = 1, probability = TRUE, cross = 3)
  ten <- rff_svm(x, iris$Species, D = 32, seed = 1, probability = TRUE, cross = 10)
  expect_output(print(five), "Platt scaling on 5-fold decision values")
  expect_output(print(ten), "Platt scaling on 10-fold decision values")
  expect_output(print(ten), "10-fold cross-validation accuracy")
})

# Two overlapping Gaussian classes whose true P(a | x) is known.
overlap_data <- function(n, seed) {
  set.seed(seed)
  y <- factor(sample(c("a", "b"), n, replace = TRUE))
  x <- matrix(rnorm(2 * n), n) + ifelse(y == "a", 0.75, -0.75)
  # P(a | x) for N(+-0.75, I) classes of equal prior
  list(x = x, y = y, p = 1 / (1 + exp(-2 * 0.75 * (x[, 1] + x[, 2]))))
}

test_that("probabilities are calibrated on held-out data and sum to one", {
  train <- overlap_data(1500, 1)
  test <- overlap_data(4000, 2)
  for (machine in c("svm", "ridge")) {
    # a bandwidth suited to the smooth truth: the test is of the calibration
    k <- gaussian_kernel(2)
    fit <- if (machine == "svm") rff_svm(train$x, train$y, k, D = 128, seed = 1, probability = TRUE)
           else rff_ridge(train$x, train$y, k, D = 128, seed = 1, probability = TRUE)
    p <- predict(fit, test$x, type = "prob")
    expect_identical(colnames(p), c("a", "b"))
    expect_equal(unname(rowSums(p)), rep(1, 4000))
    # against the Bayes probabilities: mean absolute error well below the
    # 0.5 of a coin; the sd of each estimate's noise is a few hundredths
    expect_lt(mean(abs(p[, "a"] - test$p)), 0.06)
    # reliability: in bins of predicted probability, the observed frequency
    # of "a" (4000 points, bins of >= 300: binomial sd <= 0.03) is close
    bins <- cut(p[, "a"], c(0, 0.2, 0.4, 0.6, 0.8, 1))
    obs <- tapply(test$y == "a", bins, mean)
    pred <- tapply(p[, "a"], bins, mean)
    expect_lt(max(abs(obs - pred)), 0.1)
  }
})

test_that("multi-class probabilities: pairwise coupling and one-vs-rest", {
  x <- as.matrix(iris[, 1:4])
  for (mc in c("ovo", "ovr")) {
    fit <- rff_svm(x, iris$Species, D = 128, seed = 1, multiclass = mc, probability = TRUE)
    p <- predict(fit, x, type = "prob")
    expect_equal(unname(rowSums(p)), rep(1, 150), tolerance = 1e-6)
    expect_true(all(p >= 0 & p <= 1))
    # the most probable class agrees with the predicted class almost always
    expect_gt(mean(levels(iris$Species)[max.col(p)] == fit$fitted), 0.95)
    # log-loss far below the 1.1 of uniform guessing
    expect_lt(-mean(log(p[cbind(1:150, as.integer(iris$Species))])), 0.3)
  }
  # pairwise coupling of consistent pairwise probabilities recovers p
  ptrue <- rbind(c(0.6, 0.3, 0.1), c(0.2, 0.2, 0.6))
  pairs <- utils::combn(3, 2)
  r <- apply(pairs, 2, function(ij) ptrue[, ij[1]] / (ptrue[, ij[1]] + ptrue[, ij[2]]))
  expect_equal(bochner:::pairwise_coupling(r, pairs, 3), ptrue, tolerance = 1e-3)
})

test_that("a default fit's probabilities are Platt's sigmoids of its training decision values", {
  x <- as.matrix(iris[, 1:4])
  fit <- rff_svm(x, iris$Species, D = 64, seed = 1)
  expect_identical(fit$calibration$source, "training")
  dec <- predict(fit, x, type = "decision")
  # each pair's sigmoid: Platt's fit to that pair's rows, in plain R by optim()
  for (p in seq_len(ncol(fit$pairs))) {
    rows <- as.integer(iris$Species) %in% fit$pairs[, p]
    pos <- as.integer(iris$Species)[rows] == fit$pairs[1L, p]
    f <- dec[rows, p]
    n1 <- sum(pos)
    n0 <- sum(!pos)
    tg <- ifelse(pos, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))
    nll <- function(ab) {
      q <- plogis(-(ab[1] * f + ab[2]))
      -sum(tg * log(q) + (1 - tg) * log(1 - q))
    }
    ref <- optim(c(0, 0), nll, method = "BFGS", control = list(reltol = 1e-14))$par
    got <- fit$calibration$sigmoids[[p]]
    expect_lt(nll(got), nll(ref) + 1e-6)
  }
  pr <- predict(fit, x, type = "prob")
  expect_equal(unname(rowSums(pr)), rep(1, 150), tolerance = 1e-6)
  expect_gt(mean(levels(iris$Species)[max.col(pr)] == fit$fitted), 0.95)
  expect_output(print(fit), "Platt scaling on the training decision values")
  # two classes: the sigmoid of the one decision value predict() passes
  y2 <- factor(iris$Species == "setosa", labels = c("other", "setosa"))
  b <- rff_svm(x[, 1:2], y2, D = 32, seed = 2)
  f <- predict(b, x[, 1:2], type = "decision")[, 1]
  ab <- bochner:::platt_fit(f, y2 == "other")
  expect_equal(b$calibration$sigmoids[[1L]], ab)
  expect_equal(unname(predict(b, x[, 1:2], type = "prob")[, 1]),
               plogis(-(ab[["A"]] * f + ab[["B"]])))
  # probability = TRUE cross-validates them instead
  cv <- rff_svm(x, iris$Species, D = 64, seed = 1, probability = TRUE)
  expect_identical(cv$calibration$source, "cross-validation")
  expect_false(identical(cv$calibration$sigmoids, fit$calibration$sigmoids))
  # and 'cross' alone calibrates on its folds, which the fit solves anyway
  c3 <- rff_svm(x, iris$Species, D = 64, seed = 1, cross = 3)
  expect_identical(c3$calibration$folds, 3L)
  expect_output(print(c3), "Platt scaling on 3-fold decision values")
})

test_that("the default calibration's rows: all up to 50 000, then an even spread, chunk by chunk", {
  sub <- bochner:::calibration_subset
  expect_identical(sub(50000), seq_len(50000))
  s <- sub(120001)
  expect_identical(s, seq.int(1L, 120001L, by = 3L))
  expect_lte(length(s), 50000)
  # the chunks' rows (positions within each chunk) make up the same rows
  pieces <- c(sub(120001, 1, 40000), 40000 + sub(120001, 40001, 1),
              40001 + sub(120001, 40002, 80000))
  expect_identical(as.integer(pieces), s)
})

test_that("Platt's sigmoid matches a direct maximum-likelihood fit", {
  set.seed(3)
  f <- rnorm(300)
  pos <- runif(300) < 1 / (1 + exp(-2 * f + 0.5))
  ab <- bochner:::platt_fit(f, pos)
  target <- ifelse(pos, (sum(pos) + 1) / (sum(pos) + 2), 1 / (sum(!pos) + 2))
  nll <- function(par) {
    p <- 1 / (1 + exp(par[1] * f + par[2]))
    -sum(target * log(p) + (1 - target) * log(1 - p))
  }
  ref <- optim(c(0, 0), nll, method = "BFGS", control = list(reltol = 1e-14))$par
  expect_equal(unname(ab), ref, tolerance = 1e-4)
})

test_that("cross = k reports the cross-validated accuracy", {
  x <- as.matrix(iris[, 1:4])
  fit <- rff_svm(x, iris$Species, D = 64, seed = 1, cross = 5)
  expect_identical(fit$cross, 5L)
  expect_true(fit$cross_accuracy > 0.85 && fit$cross_accuracy <= 1)
  # by hand: the same folds (drawn after the map), the same per-problem seeds
  expect_output(print(fit), "5-fold cross-validation accuracy")
  expect_error(rff_svm(x, iris$Species, D = 8, cross = 1), "'cross'")
  expect_error(rff_svm(x[c(1:60, 101), ], droplevels(iris$Species[c(1:60, 101)]), D = 8,
                       cross = 3), "fewer than 2 rows")
})

test_that("case weights: integer weights are the same problem as repeated rows", {
  set.seed(5)
  x <- matrix(rnorm(120), 60)
  y <- factor(ifelse(x[, 1] + rnorm(60) > 0, "a", "b"))
  w <- rep(c(1, 2, 3), 20)
  map <- random_features(x, gaussian_kernel(1), D = 32, seed = 1)
  wfit <- rff_svm(x, y, map = map, weights = w, tol = 1e-8, max_iter = 1e5, seed = 1)
  rep_rows <- rep(seq_len(60), w)
  rfit <- rff_svm(x[rep_rows, ], y[rep_rows], map = map, tol = 1e-8, max_iter = 1e5, seed = 1)
  # the same optimum (the dual differs, the primal solution is unique)
  expect_equal(wfit$weights, rfit$weights, tolerance = 1e-5)
  expect_equal(wfit$intercept, rfit$intercept, tolerance = 1e-5)
  # zero weights drop rows
  zfit <- rff_svm(x, y, map = map, weights = c(rep(1, 50), rep(0, 10)), tol = 1e-8,
                  max_iter = 1e5, seed = 1)
  dfit <- rff_svm(x[1:50, ], y[1:50], map = map, tol = 1e-8, max_iter = 1e5, seed = 1)
  expect_equal(zfit$weights, dfit$weights, tolerance = 1e-6)
  expect_error(rff_svm(x, y, D = 8, weights = rep(-1, 60)), "'weights'")
  expect_error(rff_svm(x, y, D = 8, weights = 1:3), "'weights' has length 3")
  expect_error(rff_svm(x, y, D = 8, weights = rep(0, 60)), "'weights' are all zero")
})

test_that("the default bandwidth is kernlab's sigest rule, on the scaled data", {
  x <- as.matrix(iris[, 1:4])
  fit <- rff_svm(x, iris$Species, D = 16, seed = 1)
  xs <- scale(x)
  d2 <- as.vector(dist(xs))^2
  d2 <- d2[d2 != 0]                      # kernlab leaves out coinciding rows (iris has two)
  q <- quantile(d2, c(0.1, 0.9), names = FALSE)
  s <- mean(1 / q)                       # kernlab's inverse width
  expect_equal(fit$map$kernel$sigma, 1 / sqrt(2 * s))
  expect_true(fit$map$kernel$sigma_from_sigest)
  expect_output(print(fit), "sigest rule")
  expect_output(print(gaussian_kernel("sigest")), "kernlab's sigest rule")
  # within the range that kernlab::sigest reports for the same data
  skip_if_not_installed("kernlab")
  set.seed(1)
  range <- kernlab::sigest(xs, scaled = FALSE)
  expect_true(s > range[[1]] && s < range[[3]])
})

test_that("the machines take the map's construction arguments of random_features()", {
  x <- as.matrix(iris[, 1:4])
  orf <- rff_svm(x, iris$Species, D = 64, seed = 1, sampling = "orthogonal")
  expect_identical(orf$map$sampling, "orthogonal")
  ref <- random_features(scale(x), orf$map$kernel, D = 64, sampling = "orthogonal", seed = 1)
  expect_identical(orf$map$omega, ref$omega)
  ts <- rff_ridge(x, iris$Species, kernel = polynomial_kernel(2), D = 64, seed = 1,
                  method = "tensorsketch")
  expect_identical(ts$map$method, "tensorsketch")
  expect_gt(ts$accuracy, 0.9)
  pair <- rff_svm(Species ~ ., data = iris, D = 32, seed = 1, type = "pair")
  expect_identical(pair$map$type, "pair")
  expect_error(rff_svm(x, iris$Species, D = 8, foo = 1), "unused argument.*'foo'")
  expect_error(rff_ridge(x, iris$Species, map = orf$map, sampling = "qmc", scale = FALSE),
               "'sampling'")
})

test_that("the squared hinge converges at a large cost (primal Newton; issue 24 item 9)", {
  # overlapping classes, so that many margins are active at cost = 1000:
  # the dual coordinate descent stopped at its pass limit at 2.7 times the
  # optimum here
  set.seed(24)
  n <- 300
  x <- matrix(rnorm(2 * n), n, 2)
  y <- factor(ifelse(x[, 1]^2 + x[, 2] + rnorm(n, sd = 0.6) > 0.5, "a", "b"))
  K <- gaussian_kernel(sigma = 1)
  fits <- lapply(c(1L, 2L), function(th) {
    expect_no_warning(f <- rff_svm(x, y, K, D = 60, cost = 1000, loss = "squared_hinge",
                                   scale = FALSE, seed = 3, nthreads = th))
    f
  })
  fit <- fits[[1]]
  expect_true(all(fit$converged))
  expect_gt(fit$iter, 100L)   # the dual's 100 passes, then Newton's steps
  # identical for any thread count
  expect_identical(fits[[1]]$weights, fits[[2]]$weights)
  expect_identical(fits[[1]]$intercept, fits[[2]]$intercept)
  # the optimum by a plain-R Newton method on the smooth primal
  Z <- cbind(predict(fit$map, x), 1)
  s <- ifelse(y == fit$levels[1], 1, -1)
  f <- function(v) 0.5 * sum(v^2) + 1000 * sum(pmax(0, 1 - s * drop(Z %*% v))^2)
  v <- rep(0, ncol(Z))
  for (it in 1:100) {
    m <- 1 - s * drop(Z %*% v)
    a <- m > 0
    g <- v - 2000 * colSums((m * s * Z)[a, , drop = FALSE])
    H <- diag(ncol(Z)) + 2000 * crossprod(Z[a, , drop = FALSE])
    step <- -solve(H, g)
    t <- 1
    while (f(v + t * step) > f(v) + 1e-4 * t * sum(g * step) && t > 1e-10) t <- t / 2
    v <- v + t * step
    if (sqrt(sum(g^2)) < 1e-9) break
  }
  w <- c(fit$weights[, 1], fit$intercept[1])
  expect_lt(abs(f(w) - f(v)), 1e-3 * f(v))
  expect_lt(f(w), 1.001 * f(v))
})

test_that("the squared hinge's Newton solver handles more features than samples", {
  set.seed(5)
  Z <- matrix(rnorm(12 * 40), 12, 40)
  cls <- rep(1:2, 6)
  # 30 passes of the dual do not meet eps here; Newton takes over
  res <- svm_c(Z, cls, 2, 1e4, 1e4, loss = 2L, eps = 1e-9, max_iter = 30L)
  expect_true(res$converged)
  expect_gt(res$iter, 30L)
  X <- cbind(Z, 1)
  s <- ifelse(cls == 1L, 1, -1)
  f <- function(v) svm_primal(v, X, s, rep(1e4, 12), 2L)
  g <- function(v) v - 2e4 * colSums(pmax(0, 1 - s * drop(X %*% v)) * s * X)
  opt <- optim(rep(0, 41), f, g, method = "BFGS", control = list(reltol = 1e-15, maxit = 1e4))
  expect_equal(f(drop(res$w)), opt$value, tolerance = 1e-6)
})
