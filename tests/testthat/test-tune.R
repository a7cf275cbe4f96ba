# rff_tune(): the shared-work cross-validation against fits made one by one.

test_that("ridge tuning: every lambda's error equals refitting fold by fold", {
  set.seed(21)
  x <- matrix(runif(300, -2, 2), 150, 2)
  y <- sin(2 * x[, 1]) + x[, 2]^2 + rnorm(150, sd = 0.3)
  lambdas <- c(0.01, 0.1, 1, 10)
  tuned <- rff_tune(x, y, method = "ridge", D = 40, sigma = 1, lambda = lambdas, folds = 4,
                    scale = FALSE, seed = 7)
  # the same folds and map, drawn in the same order
  set.seed(7)
  fold <- sample(rep_len(1:4, 150))
  map <- random_features(x, gaussian_kernel(1), D = 40)
  ref <- sapply(lambdas, function(l) {
    mean(unlist(lapply(1:4, function(f) {
      fit <- rff_ridge(x[fold != f, ], y[fold != f], map = map, lambda = l)
      (predict(fit, x[fold == f, ]) - y[fold == f])^2
    })))
  })
  # reported as the RMSE over the held-out rows, as rff_ridge()'s training rmse
  expect_identical(names(tuned$table), c("D", "sigma", "lambda", "rmse", "sd"))
  expect_identical(tuned$measure, "rmse")
  expect_equal(tuned$table$rmse, sqrt(ref), tolerance = 1e-8)
  expect_identical(tuned$best$lambda, lambdas[which.min(ref)])
  expect_s3_class(tuned$fit, "rff_ridge")
  expect_identical(tuned$fit$lambda, tuned$best$lambda)
  expect_output(print(tuned), "cross-validated RMSE")
})

test_that("SVM tuning: errors match fold-by-fold fits; the best is refitted", {
  x <- as.matrix(iris[, 1:4])
  costs <- c(0.1, 10)
  tuned <- rff_tune(x, iris$Species, D = 32, sigma = c(1, 3), cost = costs, folds = 3,
                    seed = 2, tol = 1e-6, max_iter = 1e5)
  expect_identical(nrow(tuned$table), 4L)
  xs <- scale(x)
  set.seed(2)
  fold <- bochner:::svm_folds(iris$Species, 3)
  for (s in c(1, 3)) {
    map <- random_features(xs, gaussian_kernel(s), D = 32)
    for (cc in costs) {
      wrong <- sum(unlist(lapply(1:3, function(f) {
        fit <- rff_svm(xs[fold != f, ], iris$Species[fold != f], map = map, cost = cc,
                       tol = 1e-6, max_iter = 1e5)
        predict(fit, xs[fold == f, ]) != iris$Species[fold == f]
      })))
      row <- tuned$table$sigma == s & tuned$table$cost == cc
      # a converged solver: the same optimum up to the tolerance, so at most
      # a point on the boundary may differ
      expect_lte(abs((1 - tuned$table$accuracy[row]) * 150 - wrong), 1)
    }
  }
  # an accuracy, as rff_svm(cross =) reports it; the best row has the largest
  expect_identical(names(tuned$table), c("D", "sigma", "cost", "accuracy", "sd"))
  expect_identical(tuned$best$accuracy, max(tuned$table$accuracy))
  expect_output(print(tuned), "cross-validated accuracy")
  expect_s3_class(tuned$fit, "rff_svm")
  expect_identical(tuned$fit$cost, tuned$best$cost)
  expect_identical(tuned$fit$map$kernel$sigma, tuned$best$sigma)
  # reproducible, and independent of the thread count
  again <- rff_tune(x, iris$Species, D = 32, sigma = c(1, 3), cost = costs, folds = 3,
                    seed = 2, tol = 1e-6, max_iter = 1e5, nthreads = 1)
  expect_identical(again$table, tuned$table)
})

test_that("rff_tune refuses bad grids with the argument's name", {
  x <- as.matrix(iris[, 1:4])
  expect_error(rff_tune(x, iris$Species, D = c(16, -1)), "'D'")
  expect_error(rff_tune(x, iris$Species, D = 16.5), "'D'")
  expect_error(rff_tune(x, iris$Species, sigma = c(1, NA)), "'sigma'")
  expect_error(rff_tune(x, iris$Species, cost = 0), "'cost'")
  expect_error(rff_tune(x, iris$Sepal.Length, method = "ridge", lambda = "auto"), "'lambda'")
  expect_error(rff_tune(x, iris$Species, folds = 1), "'folds'")
  expect_error(rff_tune(x, iris$Species, kernel = polynomial_kernel(2), sigma = 1), "'sigma'")
  expect_error(rff_tune(x, iris$Species, method = "knn"), "'method'")
})

test_that("falkon tuning: every lambda's error equals fold-by-fold falkon() fits", {
  set.seed(21)
  x <- matrix(runif(300, -2, 2), 150, 2)
  y <- sin(2 * x[, 1]) + x[, 2]^2 + rnorm(150, sd = 0.3)
  lambdas <- c(1e-6, 1e-3, 1e-1)
  tuned <- rff_tune(x, y, method = "falkon", m = 30, sigma = 1, lambda = lambdas, folds = 3,
                    scale = FALSE, seed = 7, iter = 15)
  # the same folds and centres, drawn in the same order
  set.seed(7)
  fold <- sample(rep_len(1:3, 150))
  centres <- lapply(1:3, function(f) {
    tr <- which(fold != f)
    x[tr[sample.int(length(tr), 30)], , drop = FALSE]
  })
  ref <- sapply(lambdas, function(l) {
    mean(unlist(lapply(1:3, function(f) {
      fit <- falkon(x[fold != f, ], y[fold != f], gaussian_kernel(1), m = centres[[f]],
                    lambda = l, iter = 15, scale = FALSE)
      (predict(fit, x[fold == f, ]) - y[fold == f])^2
    })))
  })
  expect_equal(tuned$table$rmse, sqrt(ref), tolerance = 1e-8)
  expect_identical(tuned$best$lambda, lambdas[which.min(ref)])
  expect_s3_class(tuned$fit, "falkon")
  expect_identical(tuned$fit$lambda, tuned$best$lambda)
  expect_identical(tuned$fit$m, 30L)
  expect_output(print(tuned), "m = 30")
  # classes: the accuracy, over a grid of sigma
  cl <- rff_tune(as.matrix(iris[, 1:4]), iris$Species, method = "falkon", m = 40,
                 sigma = c(0.5, 2), lambda = c(1e-6, 1e-2), folds = 3, seed = 1, iter = 10)
  expect_identical(nrow(cl$table), 4L)
  expect_true(all(cl$table$accuracy > 0.8))
  expect_identical(cl$fit$kernel$sigma, cl$best$sigma)
  expect_error(rff_tune(x, y, method = "falkon", m = 151), "'m'")
  expect_error(rff_tune(x, y, method = "falkon", m = 10, loss = "logistic"), "'method'")
  expect_error(rff_tune(x, y, method = "ridge", m = 10), "'m'")
  expect_identical(names(tuned$table)[1:3], c("m", "sigma", "lambda"))
  # D for the centres: the same tuning, with a message naming m
  expect_message(old <- rff_tune(x, y, method = "falkon", D = 30, sigma = 1, lambda = lambdas,
                                 folds = 3, scale = FALSE, seed = 7, iter = 15), "'m'")
  expect_identical(old$table, tuned$table)
})

test_that("rff_tune has a formula method whose refit predicts from data frames", {
  d <- iris
  d$Sepal.Width[3] <- NA
  tuned <- rff_tune(Species ~ ., data = d, D = 32, sigma = c(1, 2), cost = c(0.5, 5),
                    folds = 3, seed = 1)
  # the same as the matrix method on the complete rows
  keep <- stats::complete.cases(d)
  ref <- rff_tune(as.matrix(d[keep, 1:4]), d$Species[keep], D = 32, sigma = c(1, 2),
                  cost = c(0.5, 5), folds = 3, seed = 1)
  expect_identical(tuned$table, ref$table)
  expect_identical(tuned$fit$weights, ref$fit$weights)
  expect_identical(nobs(tuned$fit), 149L)
  expect_identical(predict(tuned$fit, d[c(1, 51, 101), ]),
                   predict(ref$fit, as.matrix(d[c(1, 51, 101), 1:4])))
  expect_identical(all.vars(formula(tuned$fit)), c("Species", names(d)[1:4]))
  # its call is the machine at the best values: update() refits the same model
  expect_identical(as.character(tuned$fit$call[[1L]]), "rff_svm")
  expect_identical(update(tuned$fit)$weights, tuned$fit$weights)
  # subset, and ridge for a numeric response
  reg <- rff_tune(mpg ~ wt + hp, data = mtcars, subset = cyl > 4, method = "ridge", D = 16,
                  sigma = 1, lambda = c(0.1, 1), folds = 3, seed = 1)
  expect_identical(nobs(reg$fit), sum(mtcars$cyl > 4))
  expect_length(predict(reg$fit, mtcars[1:2, ]), 2L)
  expect_error(rff_tune(~ wt + hp, data = mtcars, method = "ridge"), "two-sided")
  expect_error(rff_tune(Species ~ ., data = iris, weights = Sepal.Length), "'weights'")
  expect_error(rff_tune(as.matrix(iris[, 1:4]), iris$Species, weights = iris[, 1]), "'weights'")
})

test_that("print() says what was refitted, without a dangling component name", {
  tuned <- rff_tune(as.matrix(iris[, 1:4]), iris$Species, D = 16, sigma = 1, cost = 1,
                    folds = 2, seed = 1)
  out <- capture.output(print(tuned))
  expect_false(any(grepl(": \\$fit$", out)))
  expect_true(any(grepl("Refitted on all the data", out, fixed = TRUE)))
  expect_true(any(grepl("Support vector machine on 16 random features", out, fixed = TRUE)))
})

test_that("the SVM's cross-validation uses rff_svm()'s own settings, checked at the entry", {
  s <- bochner:::tune_svm_settings(list())
  f <- formals(bochner:::rff_svm.default)
  expect_identical(s$tol, f$tol)
  expect_identical(s$max_iter, as.integer(f$max_iter))
  expect_identical(c(s$loss, s$multiclass), c(eval(f$loss)[1], eval(f$multiclass)[1]))
  x <- as.matrix(iris[, 1:4])
  expect_error(rff_tune(x, iris$Species, D = 16, tol = -1), "'tol'")
  expect_error(rff_tune(x, iris$Species, D = 16, loss = "l1"), "'loss'")
  expect_error(rff_tune(x, iris$Species, D = 16, max_iter = 0), "'max_iter'")
  # a setting given to the tuning reaches the folds' solver: one iteration
  # cannot fit as well as a thousand
  few <- suppressWarnings(rff_tune(x, iris$Species, D = 64, cost = 1, max_iter = 1, folds = 3,
                                   seed = 1))
  many <- rff_tune(x, iris$Species, D = 64, cost = 1, folds = 3, seed = 1)
  expect_lt(few$table$accuracy, many$table$accuracy)
})
