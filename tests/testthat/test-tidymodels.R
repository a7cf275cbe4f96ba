# The parsnip engine "bochner" (R/parsnip.R) and the recipes steps
# (R/recipes.R).  The engine must give exactly the fits of rff_svm() and
# rff_ridge() with rbf_sigma (kernlab's inverse width) turned into bochner's
# length scale sigma = 1 / sqrt(2 rbf_sigma).

# caret and tidymodels packages ask for the time zone when they load; with
# TZ unset R runs timedatectl, which warns on machines without systemd.
utc <- function(env = parent.frame()) {
  if (is.na(Sys.getenv("TZ", unset = NA))) withr::local_envvar(TZ = "UTC", .local_envir = env)
}

# The engine asks rff_svm() for probabilities where it has them; comparisons
# with plain rff_svm() fits turn that off.
no_prob <- if ("probability" %in% names(formals(bochner:::rff_svm.default))) {
  list(probability = FALSE)
} else list()
parsnip_fit <- function(...) do.call(bochner_parsnip_fit, c(list(...), no_prob))

test_that("bochner_parsnip_fit maps parsnip's arguments to the machines'", {
  x <- as.matrix(iris[, 1:4])
  a <- parsnip_fit(x, iris$Species, cost = 2, rbf_sigma = 0.125, num_features = 64, seed = 1)
  b <- rff_svm(x, iris$Species, gaussian_kernel(sigma = 2), D = 64, cost = 2, seed = 1)
  expect_identical(a$weights, b$weights)
  # exp(-rbf_sigma r^2) is the same function as exp(-r^2 / (2 sigma^2))
  r <- c(0, 0.5, 1, 3)
  expect_equal(exp(-0.125 * r^2), exp(-r^2 / (2 * a$kernel$sigma^2)), tolerance = 1e-15)
  reg <- bochner_parsnip_fit(x[, -1], x[, 1], cost = 5, num_features = 64,
                             mode = "regression", seed = 1)
  ref <- rff_ridge(x[, -1], x[, 1], D = 64, lambda = 1 / (10 * 150), seed = 1)
  expect_identical(reg$weights, ref$weights)
  # unset parameters: the machines' defaults
  expect_identical(bochner_parsnip_fit(x[, -1], x[, 1], num_features = 64,
                                       mode = "regression", seed = 1)$weights,
                   rff_ridge(x[, -1], x[, 1], D = 64, seed = 1)$weights)
  expect_identical(parsnip_fit(x, iris$Species, num_features = 64, seed = 1)$weights,
                   rff_svm(x, iris$Species, D = 64, seed = 1)$weights)
  expect_error(bochner_parsnip_fit(x, iris$Species, rbf_sigma = -1), "'rbf_sigma'")
  expect_error(bochner_parsnip_fit(x, iris$Species, num_features = 0), "'num_features'")
})

test_that("the engine is registered and fits through parsnip", {
  utc()
  skip_if_not_installed("parsnip")
  expect_true(any(parsnip::show_engines("svm_rbf")$engine == "bochner"))
  spec <- do.call(parsnip::set_engine,
                  c(list(parsnip::svm_rbf(mode = "classification", cost = 2, rbf_sigma = 0.125),
                         "bochner", num_features = 64, seed = 1), no_prob))
  fit <- parsnip::fit(spec, Species ~ ., data = iris)
  ref <- rff_svm(as.matrix(iris[, 1:4]), iris$Species, gaussian_kernel(sigma = 2), D = 64,
                 cost = 2, seed = 1)
  pred <- predict(fit, iris[c(1, 51, 101, 120), ])
  expect_named(pred, ".pred_class")
  expect_identical(pred$.pred_class,
                   unname(predict(ref, as.matrix(iris[c(1, 51, 101, 120), 1:4]))))
  reg <- parsnip::fit(parsnip::set_engine(parsnip::svm_rbf(mode = "regression", cost = 5),
                                          "bochner", num_features = 64, seed = 1),
                      mpg ~ ., data = mtcars)
  refr <- rff_ridge(as.matrix(mtcars[, -1]), mtcars$mpg, D = 64, lambda = 1 / (10 * 32), seed = 1)
  expect_equal(predict(reg, mtcars)$.pred, unname(predict(refr, as.matrix(mtcars[, -1]))),
               tolerance = 1e-12)
})

test_that("parsnip hands sparse predictors to the engine", {
  utc()
  skip_if_not_installed("parsnip")
  skip_if_not_installed("Matrix")
  set.seed(1)
  x <- Matrix::rsparsematrix(100, 20, 0.3)
  colnames(x) <- paste0("v", 1:20)
  y <- factor(ifelse(as.matrix(x)[, 1] > 0, "a", "b"))
  spec <- do.call(parsnip::set_engine,
                  c(list(parsnip::svm_rbf(mode = "classification", cost = 1, rbf_sigma = 0.5),
                         "bochner", num_features = 64, seed = 1, scale = FALSE), no_prob))
  fit <- parsnip::fit_xy(spec, x = x, y = y)
  ref <- rff_svm(x, y, gaussian_kernel(1), D = 64, seed = 1, scale = FALSE)
  expect_identical(fit$fit$weights, ref$weights)
  expect_identical(predict(fit, x[1:5, ])$.pred_class, unname(predict(ref, x[1:5, ])))
})

test_that("class probabilities come through parsnip", {
  utc()
  skip_if_not_installed("parsnip")
  spec <- parsnip::set_engine(parsnip::svm_rbf(mode = "classification"), "bochner",
                              num_features = 64, seed = 1)
  fit <- parsnip::fit(spec, Species ~ ., data = iris)
  p <- predict(fit, iris[c(1, 51, 101), ], type = "prob")
  expect_named(p, paste0(".pred_", levels(iris$Species)))
  expect_equal(rowSums(as.matrix(p)), rep(1, 3), tolerance = 1e-12)
})

test_that("step_rff and step_nystrom add the maps' features", {
  utc()
  skip_if_not_installed("recipes")
  x <- iris[, 1:4]
  rec <- recipes::recipe(Species ~ ., data = iris)
  prepped <- recipes::prep(step_rff(rec, recipes::all_numeric_predictors(),
                                    num_features = 16, sigma = 1, seed = 3))
  baked <- recipes::bake(prepped, new_data = iris[1:5, ])
  map <- random_features(as.matrix(x), gaussian_kernel(1), D = 16, seed = 3)
  expect_identical(names(baked), c("Species", paste0("rff_", 1:16)))
  expect_equal(unname(as.matrix(baked[, -1])), unname(predict(map, as.matrix(x[1:5, ]))),
               tolerance = 0)
  # the Nystrom step, keeping the original columns
  prepped2 <- recipes::prep(step_nystrom(rec, recipes::all_numeric_predictors(),
                                         num_features = 10, sigma = "median", seed = 2,
                                         keep_original_cols = TRUE))
  baked2 <- recipes::bake(prepped2, new_data = NULL)
  ny <- nystrom_features(as.matrix(x), gaussian_kernel("median"), m = 10, seed = 2)
  expect_identical(names(baked2), c(names(iris), paste0("nystrom_", 1:10)))
  expect_equal(unname(as.matrix(baked2[, 6:15])), unname(predict(ny, as.matrix(x))),
               tolerance = 0)
  expect_identical(nrow(generics::tunable(prepped$steps[[1]])), 2L)
  expect_error(recipes::bake(prepped, new_data = iris[, -1]), "Sepal.Length")
})

test_that("a workflow with the engine and a step tunes over a grid", {
  utc()
  skip_if_not_installed("parsnip")
  skip_if_not_installed("recipes")
  skip_if_not_installed("workflows")
  skip_if_not_installed("tune")
  skip_if_not_installed("rsample")
  skip_if_not_installed("yardstick")
  skip_if_not_installed("dials")
  set.seed(1)
  folds <- rsample::vfold_cv(iris, v = 3)
  # model parameters: cost and the engine's num_features
  mod <- parsnip::set_engine(
    parsnip::svm_rbf(mode = "classification", cost = tune::tune(), rbf_sigma = 0.1),
    "bochner", num_features = tune::tune(), seed = 1)
  wf <- workflows::add_formula(workflows::add_model(workflows::workflow(), mod), Species ~ .)
  grid <- expand.grid(cost = c(0.5, 4), num_features = c(32L, 128L))
  res <- tune::tune_grid(wf, resamples = folds, grid = grid,
                         metrics = yardstick::metric_set(yardstick::accuracy))
  m <- tune::collect_metrics(res)
  expect_identical(nrow(m), 4L)
  expect_true(all(m$n == 3L))
  # iris with a Gaussian kernel: every setting is far better than chance
  expect_true(all(m$mean > 0.8))
  # recipe parameters: the step's num_features and sigma
  rec <- step_rff(recipes::recipe(Species ~ ., data = iris),
                  recipes::all_numeric_predictors(), num_features = tune::tune(),
                  sigma = tune::tune(), seed = 1)
  wf2 <- workflows::add_model(workflows::add_recipe(workflows::workflow(), rec),
                              parsnip::set_engine(parsnip::svm_rbf(mode = "classification"),
                                                  "bochner", num_features = 64, seed = 1))
  params <- tune::extract_parameter_set_dials(wf2)
  expect_setequal(params$name, c("num_features", "sigma"))
  res2 <- tune::tune_grid(wf2, resamples = folds,
                          grid = expand.grid(num_features = c(16L, 64L), sigma = c(1, 3)),
                          metrics = yardstick::metric_set(yardstick::accuracy))
  m2 <- tune::collect_metrics(res2)
  expect_identical(nrow(m2), 4L)
  expect_true(all(m2$mean > 0.7))
  expect_identical(nrow(tune::show_best(res2, metric = "accuracy", n = 1)), 1L)
})

test_that("the dials parameters have the documented ranges", {
  utc()
  skip_if_not_installed("dials")
  expect_identical(dials::range_get(rff_num_features(), original = TRUE),
                   list(lower = 64, upper = 2048))
  expect_equal(unlist(dials::range_get(rff_sigma(), original = TRUE)),
               c(lower = 0.1, upper = 100))
})

# The engine "bochner_falkon" (R/falkon-tidymodels.R): falkon() with cost
# turned into lambda = 1 / (C n) (logistic) or 1 / (2 C n) (squared).
test_that("falkon_parsnip_fit maps parsnip's arguments to falkon()'s", {
  x <- as.matrix(iris[, 1:4])
  a <- falkon_parsnip_fit(x, iris$Species, cost = 2, rbf_sigma = 0.125, num_centers = 40,
                          seed = 1, iter = 5)
  b <- falkon(x, iris$Species, gaussian_kernel(sigma = 2), m = 40,
              lambda = 1 / (2 * 150), loss = "logistic", seed = 1, iter = 5)
  expect_identical(a$alpha, b$alpha)
  expect_identical(a$loss, "logistic")
  reg <- falkon_parsnip_fit(x[, -1], x[, 1], cost = 5, num_centers = 30, mode = "regression",
                            seed = 1, iter = 5)
  ref <- falkon(x[, -1], x[, 1], m = 30, lambda = 1 / (2 * 5 * 150), seed = 1, iter = 5)
  expect_identical(reg$alpha, ref$alpha)
  expect_identical(reg$lambda, 1 / 1500)
  # more centres than rows asked for: all rows
  small <- falkon_parsnip_fit(x[1:20, -1], x[1:20, 1], num_centers = 64, mode = "regression",
                              seed = 1, iter = 3)
  expect_identical(small$m, 20L)
  expect_error(falkon_parsnip_fit(x, iris$Species, rbf_sigma = -1), "'rbf_sigma'")
  expect_error(falkon_parsnip_fit(x, iris$Species, num_centers = 0), "'num_centers'")
  expect_error(falkon_parsnip_fit(x, iris$Species, cost = 0), "'cost'")
})

test_that("the falkon engine fits, predicts classes and probabilities through parsnip", {
  utc()
  skip_if_not_installed("parsnip")
  expect_true(any(parsnip::show_engines("svm_rbf")$engine == "bochner_falkon"))
  spec <- parsnip::set_engine(parsnip::svm_rbf(mode = "classification", cost = 10,
                                               rbf_sigma = 0.125),
                              "bochner_falkon", num_centers = 40, seed = 1, iter = 5)
  fit <- parsnip::fit(spec, Species ~ ., data = iris)
  ref <- falkon(as.matrix(iris[, 1:4]), iris$Species, gaussian_kernel(sigma = 2),
                m = 40, lambda = 1 / (10 * 150), loss = "logistic", seed = 1, iter = 5)
  rows <- c(1, 51, 101, 120)
  expect_identical(predict(fit, iris[rows, ])$.pred_class,
                   unname(predict(ref, as.matrix(iris[rows, 1:4]))))
  p <- predict(fit, iris[rows, ], type = "prob")
  expect_named(p, paste0(".pred_", levels(iris$Species)))
  expect_equal(unname(as.matrix(p)),
               unname(predict(ref, as.matrix(iris[rows, 1:4]), type = "prob")), tolerance = 1e-14)
  reg <- parsnip::fit(parsnip::set_engine(parsnip::svm_rbf(mode = "regression"),
                                          "bochner_falkon", num_centers = 20, seed = 1),
                      mpg ~ ., data = mtcars)
  refr <- falkon(as.matrix(mtcars[, -1]), mtcars$mpg, m = 20, seed = 1)
  expect_equal(predict(reg, mtcars)$.pred, unname(predict(refr, as.matrix(mtcars[, -1]))),
               tolerance = 1e-12)
})

test_that("a workflow tunes the falkon engine's cost and centres", {
  utc()
  for (p in c("parsnip", "workflows", "tune", "rsample", "yardstick", "dials")) {
    skip_if_not_installed(p)
  }
  set.seed(1)
  folds <- rsample::vfold_cv(iris, v = 3)
  mod <- parsnip::set_engine(
    parsnip::svm_rbf(mode = "classification", cost = tune::tune(), rbf_sigma = 0.1),
    "bochner_falkon", num_centers = tune::tune(), seed = 1, iter = 5)
  wf <- workflows::add_formula(workflows::add_model(workflows::workflow(), mod), Species ~ .)
  grid <- expand.grid(cost = c(1, 100), num_centers = c(16L, 64L))
  res <- tune::tune_grid(wf, resamples = folds, grid = grid,
                         metrics = yardstick::metric_set(yardstick::accuracy,
                                                         yardstick::mn_log_loss))
  m <- tune::collect_metrics(res)
  expect_identical(nrow(m), 8L)
  expect_true(all(m$n == 3L))
  expect_true(all(m$mean[m$.metric == "accuracy"] > 0.8))
  expect_true(all(m$mean[m$.metric == "mn_log_loss"] < log(3)))
  expect_s3_class(falkon_num_centers(), "quant_param")
})
