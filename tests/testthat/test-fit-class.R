# The parent class "bochner_fit" (R/fit-class.R): the machines share its
# methods, and coef() gives weights that reproduce predict() through
# plain-R arithmetic.

scaled <- function(fit, x) scale(x, fit$scaling$center, fit$scaling$scale)

test_that("every supervised machine's fit is a bochner_fit", {
  fits <- list(falkon = falkon(mpg ~ wt + hp, data = mtcars, m = 10, seed = 1),
               rff_ridge = rff_ridge(mpg ~ wt + hp, data = mtcars, D = 16, seed = 1),
               rff_svm = rff_svm(Species ~ ., data = iris, D = 16, seed = 1),
               rff_gp = rff_gp(mpg ~ wt + hp, data = mtcars, D = 16, seed = 1))
  for (name in names(fits)) {
    fit <- fits[[name]]
    expect_identical(class(fit), c(name, "bochner_fit"))
    expect_identical(nobs(fit), if (name == "rff_svm") 150L else 32L)
    expect_identical(all.vars(formula(fit))[1L], if (name == "rff_svm") "Species" else "mpg")
    expect_identical(nrow(model.frame(fit)), nobs(fit))
    expect_length(fitted(fit), nobs(fit))
    expect_output(print(fit), ".")
  }
  expect_error(residuals(fits$rff_svm), "rff_svm fit is a classification")
})

test_that("coef() of rff_ridge and rff_svm reproduces the decision values", {
  x <- as.matrix(mtcars[, c("wt", "hp", "disp")])
  fit <- rff_ridge(x, mtcars$mpg, D = 32, seed = 2)
  b <- coef(fit)
  expect_named(b, c("(Intercept)", paste0("z", 1:32)))
  map <- fit$map
  Z <- sqrt(2 / 32) * cos(scaled(fit, x) %*% map$omega + rep(map$phase, each = nrow(x)))
  expect_equal(unname(predict(fit, x)), unname(drop(cbind(1, Z) %*% b)), tolerance = 1e-10)
  # classes: one column per class, the decision values of predict()
  fit <- rff_svm(as.matrix(iris[, 1:4]), iris$Species, D = 16, seed = 3, multiclass = "ovr")
  B <- coef(fit)
  expect_identical(dim(B), c(17L, 3L))
  Z <- predict(fit$map, scaled(fit, as.matrix(iris[, 1:4])))
  expect_equal(unname(predict(fit, iris[, 1:4], type = "decision")),
               unname(cbind(1, Z) %*% B), tolerance = 1e-10)
})

test_that("coef() of falkon gives alpha with its centres", {
  x <- as.matrix(mtcars[, c("wt", "hp")])
  fit <- falkon(x, mtcars$mpg, m = 12, seed = 4)
  b <- coef(fit)
  C <- attr(b, "centres")
  expect_identical(dim(C), c(12L, 2L))
  xs <- scaled(fit, x)
  d2 <- outer(rowSums(xs^2), rowSums(C^2), "+") - 2 * xs %*% t(C)
  K <- exp(-pmax(d2, 0) / (2 * fit$kernel$sigma^2))
  expect_equal(unname(predict(fit, x)), unname(drop(cbind(1, K) %*% b)), tolerance = 1e-8)
})

test_that("coef() of rff_gp gives the posterior mean's weights", {
  x <- as.matrix(mtcars[, c("wt", "hp")])
  fit <- rff_gp(x, mtcars$mpg, D = 16, seed = 5)
  b <- coef(fit)
  expect_identical(names(b)[1:3], c("(Intercept)", "cos1", "sin1"))
  proj <- scaled(fit, x) %*% fit$omega
  Z <- matrix(0, nrow(x), 32)
  Z[, c(TRUE, FALSE)] <- cos(proj)
  Z[, c(FALSE, TRUE)] <- sin(proj)
  expect_equal(unname(predict(fit, x)), unname(drop(cbind(1, Z) %*% b)), tolerance = 1e-8)
  fit <- rff_gp(x, mtcars$mpg, method = "exact", seed = 5)
  expect_length(coef(fit), 33L)
})

test_that("predict() without newdata answers for a formula GP (issue 42 item 3)", {
  fit <- rff_gp(mpg ~ wt + hp, data = mtcars, D = 32, seed = 6)
  expect_equal(predict(fit), fitted(fit))
  with_se <- predict(fit, se.fit = TRUE)
  expect_equal(with_se, predict(fit, mtcars, se.fit = TRUE))
  expect_identical(dim(predict(fit, interval = "prediction")), c(32L, 3L))
})

test_that("plot() of a falkon fit draws residuals, or says why not (issue 42 item 7)", {
  fit <- falkon(mpg ~ wt + hp, data = mtcars, m = 10, seed = 7)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit), fit)
  cls <- falkon(Species ~ ., data = iris, m = 10, seed = 7)
  expect_error(plot(cls), "falkon fit is a\\s+classification: use predict")
})
