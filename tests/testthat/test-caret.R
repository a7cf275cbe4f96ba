# The caret model list rff_svm_caret (R/caret.R): trains through
# caret::train(), and its fits are rff_svm()'s / rff_ridge()'s with caret's
# (kernlab's) sigma turned into bochner's length scale 1 / sqrt(2 sigma).

# caret and tidymodels packages ask for the time zone when they load; with
# TZ unset R runs timedatectl, which warns on machines without systemd.
utc <- function(env = parent.frame()) {
  if (is.na(Sys.getenv("TZ", unset = NA))) withr::local_envvar(TZ = "UTC", .local_envir = env)
}

test_that("the list's parts do what caret expects", {
  m <- rff_svm_caret
  expect_setequal(names(m), c("label", "library", "type", "loop", "parameters", "grid",
                              "fit", "predict", "prob", "sort", "levels", "tags"))
  x <- as.matrix(iris[, 1:4])
  g <- m$grid(x, iris$Species, len = 3)
  expect_identical(g$C, c(0.25, 0.5, 1))
  # the default grid starts at the machine's own default bandwidth: rff_svm()'s
  # sigest rule for classes, as kernlab's inverse width 1 / (2 s^2)
  s_svm <- rff_svm(x, iris$Species, D = 16, seed = 1)$kernel$sigma
  expect_true(all(g$sigma == 1 / (2 * s_svm^2)))
  expect_false(isTRUE(all.equal(g$sigma[1], 1 / (2 * median(dist(scale(x)))^2))))
  # and rff_ridge()'s median heuristic for a numeric response:
  # 1 / (2 m^2) for the median distance m of the standardised rows
  gr <- m$grid(x[, -1], x[, 1], len = 2)
  s_ridge <- rff_ridge(x[, -1], x[, 1], D = 16, seed = 1)$kernel$sigma
  expect_equal(gr$sigma[1], 1 / (2 * s_ridge^2), tolerance = 1e-12)
  expect_equal(gr$sigma[1], 1 / (2 * median(dist(scale(x[, -1])))^2), tolerance = 1e-12)
  # random search draws around the same sigma
  set.seed(3)
  gs <- m$grid(x, iris$Species, len = 20, search = "random")
  expect_true(all(gs$sigma > g$sigma[1] / 10 & gs$sigma < g$sigma[1] * 10))
  fit <- m$fit(x, iris$Species, NULL, data.frame(sigma = 0.125, C = 2, D = 64),
               levels(iris$Species), TRUE, FALSE, seed = 1)
  ref <- rff_svm(x, iris$Species, gaussian_kernel(sigma = 2), D = 64, cost = 2, seed = 1)
  expect_identical(fit$weights, ref$weights)
  expect_identical(m$predict(fit, iris[1:3, 1:4]), as.character(predict(ref, x[1:3, ])))
  reg <- m$fit(x[, -1], x[, 1], NULL, data.frame(sigma = 0.125, C = 5, D = 64), NULL, TRUE,
               FALSE, seed = 1)
  expect_identical(reg$lambda, 1 / (2 * 5 * 150))   # 1 / (2 C n), per row
  expect_identical(m$levels(fit), levels(iris$Species))
})

test_that("caret::train tunes the model", {
  utc()
  skip_if_not_installed("caret")
  set.seed(1)
  fit <- caret::train(iris[, 1:4], iris$Species, method = rff_svm_caret,
                      tuneGrid = expand.grid(sigma = 0.1, C = c(0.5, 4), D = 128),
                      trControl = caret::trainControl(method = "cv", number = 3),
                      seed = 1)
  expect_identical(nrow(fit$results), 2L)
  expect_true(all(fit$results$Accuracy > 0.8))
  pred <- predict(fit, iris[c(1, 51, 101), 1:4])
  expect_identical(levels(pred), levels(iris$Species))
  expect_identical(length(pred), 3L)
  set.seed(1)
  reg <- caret::train(mpg ~ ., data = mtcars, method = rff_svm_caret, tuneLength = 2,
                      trControl = caret::trainControl(method = "cv", number = 3), seed = 1)
  expect_identical(nrow(reg$results), 2L)
  expect_true(all(is.finite(reg$results$RMSE)))
})

test_that("caret::train gives class probabilities", {
  utc()
  skip_if_not_installed("caret")
  set.seed(1)
  fit <- caret::train(iris[, 1:4], iris$Species, method = rff_svm_caret,
                      tuneGrid = expand.grid(sigma = 0.1, C = 1, D = 64),
                      trControl = caret::trainControl(method = "cv", number = 3,
                                                      classProbs = TRUE),
                      seed = 1)
  p <- predict(fit, iris[c(1, 51, 101), 1:4], type = "prob")
  expect_identical(names(p), levels(iris$Species))
  expect_equal(rowSums(p), rep(1, 3), tolerance = 1e-12, ignore_attr = TRUE)
})

# falkon_caret (R/falkon-tidymodels.R): fits are falkon()'s with caret's
# sigma turned into the length scale 1 / sqrt(2 sigma).
test_that("falkon_caret's parts do what caret expects", {
  m <- falkon_caret
  expect_setequal(names(m), names(rff_svm_caret))
  x <- as.matrix(iris[, 1:4])
  g <- m$grid(x, iris$Species, len = 3)
  expect_identical(g$lambda, 10^(-3:-5))
  # falkon()'s own default bandwidth, in kernlab's parametrisation
  f0 <- falkon(x, iris$Species, m = 20, lambda = 1e-3, iter = 2, seed = 1)
  expect_equal(g$sigma[1], 1 / (2 * f0$kernel$sigma^2), tolerance = 1e-12)
  expect_identical(g$m[1], falkon_default_centers(150))
  param <- data.frame(sigma = 0.125, lambda = 1e-4, m = 40)
  fit <- m$fit(x, iris$Species, NULL, param, levels(iris$Species), TRUE, FALSE, seed = 1, iter = 5)
  ref <- falkon(x, iris$Species, gaussian_kernel(sigma = 2), m = 40, lambda = 1e-4,
                seed = 1, iter = 5)
  expect_identical(fit$alpha, ref$alpha)
  expect_identical(m$predict(fit, iris[1:3, 1:4]), as.character(predict(ref, x[1:3, ])))
  pfit <- m$fit(x, iris$Species, NULL, param, levels(iris$Species), TRUE, TRUE, seed = 1, iter = 5)
  expect_identical(pfit$loss, "logistic")
  expect_equal(rowSums(as.matrix(m$prob(pfit, iris[1:3, 1:4]))), rep(1, 3), tolerance = 1e-12)
  # case weights reach falkon()
  w <- rep(1:2, 75)
  wfit <- m$fit(x, iris$Species, w, param, levels(iris$Species), TRUE, FALSE, seed = 1, iter = 5)
  expect_identical(wfit$alpha, falkon(x, iris$Species, gaussian_kernel(sigma = 2), m = 40,
                                      lambda = 1e-4, weights = w, seed = 1, iter = 5)$alpha)
})

test_that("caret::train tunes falkon", {
  utc()
  skip_if_not_installed("caret")
  set.seed(1)
  fit <- caret::train(iris[, 1:4], iris$Species, method = falkon_caret,
                      tuneGrid = expand.grid(sigma = 0.1, lambda = c(1e-3, 1e-6), m = 40),
                      trControl = caret::trainControl(method = "cv", number = 3), seed = 1)
  expect_identical(nrow(fit$results), 2L)
  expect_true(all(fit$results$Accuracy > 0.8))
  expect_identical(levels(predict(fit, iris[c(1, 51, 101), 1:4])), levels(iris$Species))
  set.seed(1)
  reg <- caret::train(mpg ~ ., data = mtcars, method = falkon_caret, tuneLength = 2,
                      trControl = caret::trainControl(method = "cv", number = 3), seed = 1)
  expect_identical(nrow(reg$results), 2L)
  expect_true(all(is.finite(reg$results$RMSE)))
})

test_that("the example runs its checked part without loading caret", {
  # loading caret alone takes seconds: the example's unconditional part uses
  # the model list directly, and caret::train() sits in a donttest section
  rd <- tools::Rd_db("bochner")[["rff_svm_caret.Rd"]]
  skip_if(is.null(rd), "no installed help database")
  out <- tempfile(fileext = ".R")
  on.exit(unlink(out))
  tools::Rd2ex(rd, out, commentDonttest = TRUE)
  code <- readLines(out)
  run <- code[!grepl("^\\s*#", code)]   # code outside donttest, less comments
  expect_true(any(grepl("rff_svm_caret$grid", run, fixed = TRUE)))
  expect_false(any(grepl("caret::", run, fixed = TRUE)))
  expect_true(any(grepl("caret::train", code, fixed = TRUE)))
})
