# The formula interface (R/formula.R): responses of every factor kind, and
# new data whose variables changed type since the fit (issue 24).

ordered_data <- function() {
  d <- iris
  d$o <- factor(cut(d$Sepal.Length, 3), ordered = TRUE)
  d
}

test_that("an ordered-factor response is classes, with its levels in order", {
  d <- ordered_data()
  plain <- d
  plain$o <- factor(plain$o, ordered = FALSE)
  svm <- rff_svm(o ~ Petal.Length + Petal.Width, data = d, D = 32, seed = 1)
  ref <- rff_svm(o ~ Petal.Length + Petal.Width, data = plain, D = 32, seed = 1)
  expect_identical(svm$levels, levels(d$o))
  expect_identical(levels(fitted(svm)), levels(d$o))
  expect_identical(fitted(svm), fitted(ref))
  expect_identical(predict(svm, d[1:5, ]), predict(ref, d[1:5, ]))
  expect_identical(svm$accuracy, ref$accuracy)
  ridge <- rff_ridge(o ~ Petal.Length + Petal.Width, data = d, D = 32, seed = 1)
  expect_identical(ridge$type, "classification")
  expect_identical(ridge$levels, levels(d$o))
  expect_equal(ridge$accuracy, mean(fitted(ridge) == as.character(d$o)))
  # the default methods too
  m <- rff_svm(as.matrix(d[, 3:4]), d$o, D = 16, seed = 2)
  expect_identical(levels(fitted(m)), levels(d$o))
})

test_that("a variable whose type changed since the fit is refused by name", {
  fit <- rff_ridge(Sepal.Length ~ ., data = iris, D = 16, seed = 1)
  nd <- iris[1:3, ]
  nd$Sepal.Width <- as.character(nd$Sepal.Width)
  expect_error(predict(fit, nd), "'newdata'.*'Sepal.Width'.*\"numeric\".*\"character\"")
  svm <- rff_svm(Species ~ ., data = iris, D = 16, seed = 1)
  nd <- iris[1:3, ]
  nd$Petal.Length <- factor(nd$Petal.Length)
  expect_error(predict(svm, nd), "'Petal.Length'.*\"factor\"")
  # a factor given as numbers
  d <- data.frame(y = mtcars$mpg, g = factor(mtcars$cyl), w = mtcars$wt)
  f <- rff_ridge(y ~ g + w, data = d, D = 16, seed = 1)
  expect_error(suppressWarnings(predict(f, data.frame(g = c(4, 6), w = 3))),
               "'g' was fitted with type \"factor\" but type \"numeric\"")
})

test_that("what does not change the type is still accepted", {
  d <- data.frame(y = mtcars$mpg, g = factor(mtcars$cyl), w = mtcars$wt)
  f <- rff_ridge(y ~ g + w, data = d, D = 16, seed = 1)
  ref <- predict(f, d[1:3, ])
  # characters for a factor (as lm), integers for numbers
  expect_identical(predict(f, data.frame(g = as.character(d$g[1:3]), w = d$w[1:3],
                                         row.names = rownames(d)[1:3])), ref)
  di <- d[1:3, ]
  di$w <- as.integer(round(di$w))
  expect_length(predict(f, di), 3L)
  # a column of nothing but NA (logical) is missing values of either type
  expect_true(all(is.na(predict(f, data.frame(g = NA, w = d$w[1:3])))))
  expect_true(all(is.na(predict(f, data.frame(g = d$g[1:3], w = NA)))))
})
