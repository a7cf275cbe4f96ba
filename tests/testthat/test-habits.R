# Arguments written out of kernlab's and e1071's habits are refused with
# bochner's name for the same setting (R/habits.R).

test_that("C, prob.model and scaled name cost, probability and scale", {
  x <- iris[, 1:4]
  y <- iris$Species
  expect_error(rff_svm(x, y, D = 8, C = 10), "'C'.*'cost' here \\(cost = 10\\)")
  expect_error(rff_svm(Species ~ ., data = iris, D = 8, C = 10), "'cost' here (cost = 10)",
               fixed = TRUE)
  expect_error(rff_svm(x, y, D = 8, prob.model = TRUE), "'prob.model' is 'probability' here")
  expect_error(rff_svm(x, y, D = 8, probability.model = TRUE),
               "'probability.model' is 'probability' here")
  expect_error(rff_svm(x, y, D = 8, Cost = 1), "'cost' here")
  expect_error(rff_svm(x, y, D = 8, scaled = FALSE), "'scaled' is 'scale' here")
  expect_error(rff_ridge(x, y, D = 8, prob.model = TRUE), "'probability' here")
  expect_error(rff_ridge(Sepal.Length ~ ., data = iris, D = 8, C = 1), "regularised by 'lambda'")
  expect_error(falkon(x, y, C = 1), "falkon\\(\\) has no cost.*'lambda'")
  expect_error(falkon(x, y, prob.model = TRUE), "loss = \"logistic\"", fixed = TRUE)
  # several at once: every one named, every one advised
  expect_error(rff_svm(x, y, D = 8, C = 2, prob.model = TRUE),
               "unused argument(s): 'C', 'prob.model'; the SVM's C is 'cost' here (cost = 2); ",
               fixed = TRUE)
  # with the data in chunks as well
  chunks <- data_chunks(list(iris[1:75, ], iris[76:150, ]))
  expect_error(rff_svm(chunks, y = "Species", D = 8, C = 3), "(cost = 3)", fixed = TRUE)
})

test_that("sigma, gamma and kpar name the kernel, with the conversion of the widths", {
  x <- iris[, 1:4]
  y <- iris$Species
  expect_error(rff_svm(x, y, D = 8, sigma = 0.5),
               "kernel = gaussian_kernel(sigma = 0.5), a length scale", fixed = TRUE)
  expect_error(rff_ridge(x, y, D = 8, sigma = "median"),
               "kernel = gaussian_kernel(sigma = \"median\")", fixed = TRUE)
  # gamma = 1 / (2 sigma^2): gamma = 0.125 is sigma = 2, gamma = 0.5 is sigma = 1
  expect_error(rff_svm(x, y, D = 8, gamma = 0.125),
               "gamma = 0.125 is kernel = gaussian_kernel(sigma = 2)", fixed = TRUE)
  expect_error(falkon(x, y, gamma = 0.5), "gaussian_kernel(sigma = 1)", fixed = TRUE)
  # kernlab's rbfdot(sigma = s) is exp(-s ||x - y||^2): sigma_here = 1 / sqrt(2 s)
  expect_error(rff_svm(x, y, D = 8, kpar = list(sigma = 2)),
               "kpar = list(sigma = 2) (rbfdot) is kernel = gaussian_kernel(sigma = 0.5)",
               fixed = TRUE)
  expect_error(rff_ridge(x, y, D = 8, kpar = "automatic"), "gaussian_kernel(sigma = \"sigest\")",
               fixed = TRUE)
  expect_error(kernel_kmeans(as.matrix(x), 3, kpar = list(sigma = 0.5)),
               "gaussian_kernel(sigma = 1)", fixed = TRUE)
  expect_error(kernel_kmeans(as.matrix(x), 3, C = 1), "unused argument\\(s\\): 'C'$")
  # the conversions are right: kernlab's rbfdot(sigma = 2) and e1071's gamma = 2 are the
  # kernel of gaussian_kernel(sigma = 0.5)
  a <- c(0.3, -1.2)
  b <- c(1.1, 0.4)
  k <- kernel_matrix(gaussian_kernel(sigma = 0.5), rbind(a), rbind(b))
  expect_equal(c(k), exp(-2 * sum((a - b)^2)))
})

test_that("a kernel given by kernlab's or e1071's name says which constructor it is", {
  x <- iris[, 1:4]
  y <- iris$Species
  expect_error(rff_svm(x, y, kernel = "rbfdot"), "\"rbfdot\" is gaussian_kernel() here",
               fixed = TRUE)
  expect_error(rff_ridge(x, y, kernel = "radial"), "\"radial\" is gaussian_kernel() here",
               fixed = TRUE)
  expect_error(falkon(x, y, kernel = "laplacedot"), "laplace_kernel()", fixed = TRUE)
  expect_error(kernel_kmeans(as.matrix(x), 3, kernel = "stringdot"), "not a name (\"stringdot\")",
               fixed = TRUE)
})

test_that("predict()'s e1071 arguments name predict's type", {
  fit <- rff_svm(Species ~ ., data = iris, D = 16, seed = 1)
  expect_error(predict(fit, iris[1:3, ], probability = TRUE), "predict(type = \"prob\")",
               fixed = TRUE)
  expect_error(predict(fit, iris[1:3, ], decision.values = TRUE),
               "predict(type = \"decision\")", fixed = TRUE)
  fr <- rff_ridge(Species ~ ., data = iris, D = 16, seed = 1)
  expect_error(predict(fr, iris[1:3, ], probability = TRUE), "type = \"prob\"", fixed = TRUE)
  # an argument with no counterpart stays a plain refusal
  expect_error(predict(fit, iris[1:3, ], foo = 1), "unused argument\\(s\\): 'foo'$")
})
