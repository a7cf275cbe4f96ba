# Class probabilities (R/calibration.R) when new data have no complete row:
# empty or all-NA results with one column per class, under every
# na.action, for both machines and for two or more classes (issue 24).

prob_fits <- function() {
  two <- droplevels(iris[iris$Species != "setosa", ])
  list(ovo = rff_svm(Species ~ ., data = iris, D = 32, seed = 1, probability = TRUE),
       ovr = rff_svm(Species ~ ., data = iris, D = 32, seed = 1, probability = TRUE,
                     multiclass = "ovr"),
       binary = rff_svm(Species ~ ., data = two, D = 32, seed = 1, probability = TRUE),
       ridge = rff_ridge(Species ~ ., data = iris, D = 32, seed = 1, probability = TRUE))
}

test_that("type = \"prob\" on new data without a complete row: NA rows or none", {
  nd <- iris[1:2, ]
  nd$Sepal.Width <- NA          # a column of NA is logical: missing numbers
  for (fit in prob_fits()) {
    lev <- fit$levels
    for (rows in list(1:2, 1L)) {
      for (na in list(na.pass, na.exclude)) {
        p <- predict(fit, nd[rows, ], type = "prob", na.action = na)
        expect_identical(dim(p), c(length(rows), length(lev)))
        expect_identical(colnames(p), lev)
        expect_true(all(is.na(p)))
      }
      p <- predict(fit, nd[rows, ], type = "prob", na.action = na.omit)
      expect_identical(dim(p), c(0L, length(lev)))
      expect_identical(colnames(p), lev)
      expect_error(predict(fit, nd[rows, ], type = "prob", na.action = na.fail),
                   "'newdata' has missing values")
      cls <- predict(fit, nd[rows, ], type = "class", na.action = na.omit)
      expect_length(cls, 0L)
      expect_identical(levels(cls), lev)
    }
  }
})

test_that("type = \"prob\" on zero rows: an empty matrix, one column per class", {
  for (fit in prob_fits()) {
    for (na in list(na.pass, na.omit, na.exclude, na.fail)) {
      p <- predict(fit, iris[0, ], type = "prob", na.action = na)
      expect_identical(dim(p), c(0L, length(fit$levels)))
      expect_identical(colnames(p), fit$levels)
    }
    # and on a matrix fit's zero-row matrix
  }
  m <- rff_svm(as.matrix(iris[, 1:4]), iris$Species, D = 16, seed = 1, probability = TRUE)
  expect_identical(dim(predict(m, as.matrix(iris[0, 1:4]), type = "prob")), c(0L, 3L))
})

test_that("probabilities of the complete rows are those of the rows alone", {
  nd <- iris[c(1, 51, 101, 2), ]
  nd$Petal.Length[2] <- NA
  for (fit in prob_fits()) {
    full <- predict(fit, nd, type = "prob")
    expect_true(all(is.na(full[2, ])))
    alone <- predict(fit, nd[-2, ], type = "prob")
    expect_equal(full[-2, ], alone)
    expect_equal(unname(rowSums(alone)), rep(1, 3), tolerance = 1e-12)
  }
})

test_that("calibrated_probabilities() on zero scores keeps the classes as columns", {
  for (cal in lapply(prob_fits(), `[[`, "calibration")) {
    k <- length(cal$levels)
    width <- switch(cal$type, binary = 1L, ovr = k, ovo = ncol(cal$pairs))
    p <- bochner:::calibrated_probabilities(cal, matrix(numeric(0), 0L, width))
    expect_identical(dim(p), c(0L, k))
    expect_identical(colnames(p), cal$levels)
  }
})
