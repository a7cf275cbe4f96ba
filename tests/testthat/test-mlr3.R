# The mlr3 learners (R/glue-mlr3.R): mlr3's own learner autotest, and
# resample() against the functions called directly on the same folds.

skip_if_no_mlr3 <- function() {
  skip_if_not_installed("mlr3")
  skip_if_not_installed("paradox")
  skip_if_not_installed("R6")
  # mlr3's test helpers use checkmate's newer checks
  skip_if_not_installed("checkmate", "2.2.0")
}

# mlr3's autotest, from the helper files mlr3 ships for extension packages,
# in an environment of their own (their unqualified calls find mlr3's
# namespace; nothing is attached).
mlr3_autotest_env <- function() {
  dir <- system.file("testthat", package = "mlr3")
  env <- new.env(parent = asNamespace("mlr3"))
  for (f in c("helper_misc.R", "helper_autotest.R")) {
    sys.source(file.path(dir, f), envir = env)
  }
  env
}

test_that("the learners are in mlr_learners once mlr3 is loaded", {
  skip_if_no_mlr3()
  ids <- c("classif.falkon", "regr.falkon", "regr.rff_gp", "classif.rff_svm",
           "classif.rff_ridge", "regr.rff_ridge")
  expect_true(all(ids %in% mlr3::mlr_learners$keys()))
  l <- mlr3::lrn("classif.falkon")
  expect_identical(l$packages, c("mlr3", "bochner"))
  expect_identical(l$param_set$values$loss, "logistic")
  expect_identical(mlr3::lrn("regr.rff_gp")$predict_types, c("response", "se"))
  # the search spaces name parameters of their learners
  for (id in ids) {
    space <- bochner_search_space(id)
    expect_true(all(space$ids() %in% mlr3::lrn(id)$param_set$ids()), label = id)
  }
  expect_error(bochner_search_space("classif.rpart"), "learner")
  expect_error(mlr3::lrn("regr.rff_ridge", sigma = 1, kernel = laplace_kernel(1))$
                 train(mlr3::tsk("mtcars")), "not both")
  # the squared loss's scores calibrated on falkon's held-out slice
  sq <- mlr3::lrn("classif.falkon", loss = "squared", predict_type = "prob", seed = 1)
  pr <- sq$train(mlr3::tsk("iris"))$predict(mlr3::tsk("iris"))$prob
  expect_equal(unname(rowSums(pr)), rep(1, 150))
})

test_that("the learners pass mlr3's autotest", {
  skip_if_no_mlr3()
  skip_if_not_installed("mirai")    # the autotest runs an encapsulated resampling on mirai
  at <- mlr3_autotest_env()
  # one persistent daemon for the encapsulated runs (without it, mirai
  # starts a new R process, which loads mlr3 and bochner, for each)
  mirai::daemons(1)
  on.exit(mirai::daemons(0), add = TRUE)
  # the autotest's one-column tasks include a single logical column, on
  # which kernlab's sigest rule (falkon's and the SVM's default bandwidth)
  # finds no scale and the fits refuse it by design: those get a number
  learners <- list(
    mlr3::lrn("classif.falkon", sigma = 1),
    mlr3::lrn("classif.falkon", loss = "squared", m = 20, sigma = 1),
    mlr3::lrn("regr.falkon", sigma = 1),
    mlr3::lrn("regr.rff_gp", D = 32),
    mlr3::lrn("classif.rff_svm", D = 64, sigma = 1),
    mlr3::lrn("classif.rff_ridge", D = 64),
    mlr3::lrn("regr.rff_ridge", D = 64)
  )
  for (learner in learners) {
    # a squared-loss falkon gives scores, not probabilities
    types <- if (identical(learner$param_set$values$loss, "squared")) "response"
             else learner$predict_types
    result <- at$run_autotest(learner, predict_types = types)
    expect_true(isTRUE(result), info = if (!isTRUE(result)) result$error)
  }
})

test_that("resample() with 3-fold CV predicts as the functions called directly", {
  skip_if_no_mlr3()
  folds <- function(task, learner) {
    set.seed(11)
    rr <- mlr3::resample(task, learner, mlr3::rsmp("cv", folds = 3))
    list(pred = rr$predictions(), sets = lapply(1:3, function(i) {
      list(train = rr$resampling$train_set(i), test = rr$resampling$test_set(i))
    }))
  }
  # the data as the learners see them: a double matrix, columns by name
  xy <- function(task, rows) {
    d <- task$data(rows = rows, cols = task$feature_names)
    list(x = as.matrix(as.data.frame(lapply(d, as.double), check.names = FALSE)),
         y = task$truth(rows))
  }
  # classification, iris: falkon (logistic), the SVM and ridge, with probabilities
  iris_task <- mlr3::tsk("iris")
  cls <- list(
    falkon = list(lrn = mlr3::lrn("classif.falkon", seed = 3, m = 40),
                  fit = function(x, y) falkon(x, y, loss = "logistic", seed = 3, m = 40)),
    svm = list(lrn = mlr3::lrn("classif.rff_svm", D = 64, cost = 2, sigma = 1.5, seed = 3),
               fit = function(x, y) rff_svm(x, y, D = 64, cost = 2, seed = 3, probability = TRUE,
                                            kernel = gaussian_kernel(1.5))),
    ridge = list(lrn = mlr3::lrn("classif.rff_ridge", D = 64, lambda = 0.1, seed = 3),
                 fit = function(x, y) rff_ridge(x, y, D = 64, lambda = 0.1, seed = 3,
                                                probability = TRUE)))
  for (nm in names(cls)) {
    learner <- cls[[nm]]$lrn
    learner$predict_type <- "prob"
    got <- folds(iris_task, learner)
    for (i in 1:3) {
      tr <- xy(iris_task, got$sets[[i]]$train)
      te <- xy(iris_task, got$sets[[i]]$test)
      fit <- cls[[nm]]$fit(tr$x, tr$y)
      p <- got$pred[[i]]
      expect_identical(p$row_ids, got$sets[[i]]$test)
      expect_identical(as.character(p$response), as.character(predict(fit, te$x, type = "class")),
                       label = paste(nm, "classes, fold", i))
      prob <- predict(fit, te$x, type = "prob")
      expect_identical(unname(p$prob[, colnames(prob)]), unname(prob),
                       label = paste(nm, "probabilities, fold", i))
    }
  }
  # regression, mtcars: falkon, ridge, the GP with standard errors
  cars <- mlr3::tsk("mtcars")
  reg <- list(
    falkon = list(lrn = mlr3::lrn("regr.falkon", seed = 4, lambda = 1e-4),
                  fit = function(x, y) falkon(x, y, seed = 4, lambda = 1e-4)),
    ridge = list(lrn = mlr3::lrn("regr.rff_ridge", D = 64, seed = 4),
                 fit = function(x, y) rff_ridge(x, y, D = 64, seed = 4)),
    gp = list(lrn = mlr3::lrn("regr.rff_gp", D = 32, seed = 4, predict_type = "se"),
              fit = function(x, y) rff_gp(x, y, D = 32, seed = 4)))
  for (nm in names(reg)) {
    got <- folds(cars, reg[[nm]]$lrn)
    for (i in 1:3) {
      tr <- xy(cars, got$sets[[i]]$train)
      te <- xy(cars, got$sets[[i]]$test)
      fit <- reg[[nm]]$fit(tr$x, tr$y)
      p <- got$pred[[i]]
      if (nm == "gp") {
        direct <- predict(fit, te$x, se.fit = TRUE)
        expect_identical(p$response, unname(direct$fit), label = paste(nm, "fold", i))
        expect_identical(p$se, unname(direct$se.fit), label = paste(nm, "se, fold", i))
      } else {
        expect_identical(p$response, unname(predict(fit, te$x)), label = paste(nm, "fold", i))
      }
    }
  }
})

test_that("case weights reach the fits", {
  skip_if_no_mlr3()
  d <- cbind(datasets::mtcars[c("mpg", "wt", "hp")], w = rep(c(1, 5), 16))
  task <- mlr3::as_task_regr(d, target = "mpg")
  task$set_col_roles("w", "weights_learner")
  l <- mlr3::lrn("regr.rff_ridge", D = 32, seed = 1, lambda = 0.5)
  l$train(task)
  x <- as.matrix(d[task$feature_names])
  direct <- rff_ridge(x, d$mpg, D = 32, seed = 1, lambda = 0.5, weights = d$w)
  expect_identical(l$model$weights, direct$weights)
  l$use_weights <- "ignore"
  l$train(task)
  expect_identical(l$model$weights, rff_ridge(x, d$mpg, D = 32, seed = 1, lambda = 0.5)$weights)
})
