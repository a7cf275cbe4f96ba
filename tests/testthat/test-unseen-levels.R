# Factor levels of new data that the fit never saw: an error naming the
# factor by default (as predict.lm), all-zero dummy columns with
# options(bochner.unseen_levels = "zero") (as kernlab::ksvm() and e1071).

breast_cancer_split <- function() {
  skip_if_not_installed("mlbench")
  data("BreastCancer", package = "mlbench", envir = environment())
  bc <- BreastCancer[, -1L]
  # this split leaves level 6 of Mitoses out of the training rows
  set.seed(3)
  i <- sample(nrow(bc), 466L)
  list(train = bc[i, ], test = bc[-i, ])
}

test_that("an unseen level is refused by default, naming the factor and the option", {
  d <- breast_cancer_split()
  expect_false("6" %in% d$train$Mitoses)
  fits <- list(rff_svm(Class ~ ., data = d$train, D = 64, seed = 1),
               rff_ridge(Class ~ ., data = d$train, D = 64, seed = 1),
               falkon(Class ~ ., data = d$train, m = 50, lambda = 1e-3, iter = 10,
                      seed = 1))
  for (fit in fits) {
    expect_error(predict(fit, d$test), "factor Mitoses that the fit never saw: 6", fixed = TRUE)
    expect_error(predict(fit, d$test), "bochner.unseen_levels", fixed = TRUE)
  }
})

test_that("unseen levels as all-zero dummies let a random split of BreastCancer predict", {
  d <- breast_cancer_split()
  withr::local_options(bochner.unseen_levels = "zero")
  complete <- stats::complete.cases(d$test)
  fits <- list(rff_svm(Class ~ ., data = d$train, D = 256, seed = 1),
               rff_ridge(Class ~ ., data = d$train, D = 256, seed = 1),
               falkon(Class ~ ., data = d$train, kernel = gaussian_kernel("median"), seed = 1))
  for (fit in fits) {
    p <- predict(fit, d$test)
    expect_s3_class(p, "factor")
    expect_identical(levels(p), levels(d$train$Class))
    expect_length(p, nrow(d$test))
    expect_false(anyNA(p[complete]))
    expect_true(all(is.na(p[!complete])))
    # the benign/malignant classes are easy: kernel SVMs reach about 0.97
    expect_gt(mean(p[complete] == d$test$Class[complete]), 0.9)
  }
})

test_that("an unseen level is coded exactly as a row of zeros in its dummy columns", {
  set.seed(2)
  n <- 60
  df <- data.frame(u = rnorm(n), f = factor(sample(c("a", "b", "c"), n, TRUE)))
  df$y <- df$u + c(a = 0, b = 1, c = -1)[as.character(df$f)] + rnorm(n, sd = 0.1)
  new <- data.frame(u = c(0.3, -1, 2), f = c("a", "d", "e"))
  # the same fit on the one-hot matrix, built by hand: every level a column
  x <- cbind(u = df$u, fa = df$f == "a", fb = df$f == "b", fc = df$f == "c") + 0
  xnew <- rbind(c(0.3, 1, 0, 0), c(-1, 0, 0, 0), c(2, 0, 0, 0))
  colnames(xnew) <- colnames(x)
  withr::local_options(bochner.unseen_levels = "zero")
  fr <- rff_ridge(y ~ u + f, data = df, D = 64, lambda = 0.1, seed = 4)
  mr <- rff_ridge(x, df$y, D = 64, lambda = 0.1, seed = 4)
  expect_equal(unname(predict(fr, new)), unname(predict(mr, xnew)), tolerance = 1e-12)
  # a character column at the fit, and a level in an interaction, too
  df2 <- transform(df, g = as.character(f))
  fi <- rff_ridge(y ~ u * g, data = df2, D = 64, lambda = 0.1, seed = 4)
  p <- predict(fi, data.frame(u = c(0.3, -1), g = c("a", "zz")))
  expect_false(anyNA(p))
  # the unseen row's design: u and u:g columns of "zz" all zero apart from u
  dm <- bochner:::design_for_newdata(fi$input$terms, fi$input$xlevels,
                                     data.frame(u = c(0.3, -1), g = c("a", "zz")))
  expect_equal(unname(dm[2, ]), c(-1, rep(0, ncol(dm) - 1L)))
  expect_equal(sum(dm[1, ] != 0), 3L)   # u, ga and u:ga
})

test_that("the option is checked and named", {
  fit <- rff_ridge(Sepal.Length ~ Species, data = iris, D = 16, seed = 1)
  withr::local_options(bochner.unseen_levels = "drop")
  expect_error(predict(fit, iris[1:2, ]), "options(bochner.unseen_levels)", fixed = TRUE)
  withr::local_options(bochner.unseen_levels = "error")
  expect_error(predict(fit, data.frame(Species = "daisy")), "factor Species", fixed = TRUE)
})
