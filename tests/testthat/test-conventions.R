# R's modelling conventions (issue 15): formula methods with subset,
# weights and na.action as lm() has them, a stored call for update(),
# formula(), terms(), nobs(), model.frame(), and predict() on new data with
# missing values, no rows, no newdata or extra columns.

aq <- airquality          # Ozone and Solar.R have NAs
aq_complete <- na.omit(aq)
incomplete <- which(!stats::complete.cases(aq))

test_that("the formula comes first, by name as 'formula', or as 'x': the same fit", {
  a <- rff_svm(Species ~ ., data = iris, D = 32, seed = 1)
  b <- rff_svm(formula = Species ~ ., data = iris, D = 32, seed = 1)
  c <- rff_svm(x = Species ~ ., data = iris, D = 32, seed = 1)
  expect_identical(b$weights, a$weights)
  expect_identical(c$weights, a$weights)
  # stored under the name 'formula' either way, so update() can change it
  expect_identical(names(c$call)[2L], "formula")
  expect_identical(update(c, . ~ Petal.Length)$input$d, 1L)
  f <- Species ~ Petal.Length
  d <- rff_ridge(f, data = iris, D = 16, seed = 2)
  expect_identical(d$weights, rff_ridge(formula = f, data = iris, D = 16, seed = 2)$weights)
  expect_s3_class(kernel_kmeans(formula = ~ ., data = iris[, 1:4], centers = 3, seed = 1),
                  "kernel_kmeans")
  expect_s3_class(random_features(formula = ~ Sepal.Width, data = iris, D = 4), "random_features")
  expect_s3_class(nystrom_features(formula = ~ Sepal.Width, data = iris, m = 4, seed = 1),
                  "nystrom_features")
})

test_that("na.omit (the default) fits the complete rows, and says so in nobs()", {
  fit <- rff_ridge(Ozone ~ ., data = aq, D = 64, seed = 1)
  ref <- rff_ridge(Ozone ~ ., data = aq_complete, D = 64, seed = 1)
  expect_identical(fit$weights, ref$weights)
  expect_identical(fit$intercept, ref$intercept)
  expect_identical(nobs(fit), nrow(aq_complete))
  expect_identical(names(fitted(fit)), rownames(aq_complete))
  expect_s3_class(fit$na.action, "omit")
  # the same for the classifier, k-means and the maps
  aqc <- transform(aq, high = factor(Temp > 80))
  svm <- rff_svm(high ~ Ozone + Wind, data = aqc, D = 32, seed = 1)
  expect_identical(nobs(svm), sum(!is.na(aq$Ozone)))
  km <- kernel_kmeans(~ Ozone + Solar.R, data = aq, centers = 2, seed = 1)
  expect_identical(length(km$cluster), nrow(aq_complete))
  map <- random_features(~ Ozone + Wind, data = aq, D = 8, seed = 1)
  expect_identical(nobs(map), sum(!is.na(aq$Ozone)))
})

test_that("na.exclude pads fitted values, residuals and predict() without newdata with NA", {
  fit <- rff_ridge(Ozone ~ ., data = aq, D = 64, seed = 1, na.action = na.exclude)
  ref <- rff_ridge(Ozone ~ ., data = aq_complete, D = 64, seed = 1)
  expect_identical(fit$weights, ref$weights)
  f <- fitted(fit)
  expect_length(f, nrow(aq))
  expect_identical(unname(which(is.na(f))), incomplete)
  expect_identical(unname(f[-incomplete]), unname(fitted(ref)))
  r <- residuals(fit)
  expect_identical(unname(which(is.na(r))), incomplete)
  expect_equal(unname(r[-incomplete]), aq_complete$Ozone - unname(fitted(ref)), tolerance = 1e-12)
  expect_identical(predict(fit), f)
  expect_identical(predict(fit, newdata = NULL), f)
  # classes: NA in the factor of fitted classes
  aqc <- transform(aq, high = factor(Temp > 80))
  svm <- rff_svm(high ~ Ozone + Wind, data = aqc, D = 32, seed = 1, na.action = "na.exclude")
  expect_s3_class(fitted(svm), "factor")
  expect_identical(unname(which(is.na(fitted(svm)))), which(is.na(aq$Ozone)))
})

test_that("missing values refused by na.fail or na.pass are named by row, variable and role", {
  expect_error(rff_ridge(Ozone ~ ., data = aq, D = 8, na.action = na.fail),
               "'data' has a missing value \\(row 5, variable Ozone\\)")
  # an NA only in the response: the formula user hears of the response, not of 'y'
  expect_error(rff_ridge(Ozone ~ Wind, data = aq, D = 8, na.action = na.pass),
               "'data' has a missing value in the response \\(row 5, variable Ozone\\)")
  expect_error(rff_ridge(Wind ~ Solar.R, data = aq, D = 8, na.action = na.pass),
               "missing value in a predictor \\(row 5, variable Solar.R\\)")
  d <- data.frame(a = 1:6, y = factor(c("u", "v", NA, "v", "u", "v")))
  expect_error(rff_svm(y ~ a, data = d, D = 8, na.action = na.pass),
               "'data' has a missing value in the response \\(row 3, variable y\\)")
  # and na.omit drops that row
  expect_identical(nobs(rff_svm(y ~ a, data = d, D = 8, seed = 1)), 5L)
})

test_that("subset is evaluated in the data, as in lm()", {
  a <- rff_svm(Species ~ ., data = iris, subset = Sepal.Length > 5, D = 32, seed = 3)
  b <- rff_svm(Species ~ ., data = iris[iris$Sepal.Length > 5, ], D = 32, seed = 3)
  expect_identical(a$weights, b$weights)
  expect_identical(nobs(a), sum(iris$Sepal.Length > 5))
  rows <- c(1:40, 51:90, 101:140)
  c <- rff_ridge(Sepal.Length ~ ., data = iris, subset = rows, D = 32, seed = 3)
  expect_identical(c$weights, rff_ridge(Sepal.Length ~ ., data = iris[rows, ], D = 32,
                                        seed = 3)$weights)
  # subset with NA and na.omit together
  d <- rff_ridge(Ozone ~ Wind, data = aq, subset = Month == 5, D = 16, seed = 1)
  expect_identical(nobs(d), sum(aq$Month == 5 & !is.na(aq$Ozone)))
})

test_that("weights are evaluated in the data and reach the default method", {
  # the plumbing, whatever the default method does with them
  seen <- NULL
  record <- function(x, y = NULL, ...) {
    seen <<- list(x = x, y = y, dots = list(...))
    list(input = list())
  }
  d <- data.frame(a = c(1, 2, NA, 4, 5), y = c(1, 0, 1, 0, 1), w = c(0.5, 1, 2, 3, 0))
  call <- quote(rff_ridge(formula = y ~ a, data = d, weights = w, D = 4))
  fit <- bochner:::fit_formula(call, environment(), record, stats::na.omit, D = 4,
                               response = "y ~ a")
  expect_identical(seen$dots$weights, c(0.5, 1, 3, 0))   # row 3 dropped by na.omit
  expect_identical(seen$dots$D, 4)
  expect_identical(unname(seen$x[, "a"]), c(1, 2, 4, 5))
  # no weights: none passed on (so that methods without 'weights' still work)
  bochner:::fit_formula(quote(rff_ridge(formula = y ~ a, data = d)), environment(), record,
                        stats::na.omit, response = "y ~ a")
  expect_false("weights" %in% names(seen$dots))
  # weights from the formula's environment when not in the data
  ww <- c(1, 1, 1, 1, 2)
  bochner:::fit_formula(quote(rff_ridge(formula = y ~ a, data = d, weights = ww)),
                        environment(), record, stats::na.omit, response = "y ~ a")
  expect_identical(seen$dots$weights, c(1, 1, 1, 2))
})

test_that("case weights in the machines: unit weights change nothing", {
  a <- rff_ridge(Sepal.Length ~ ., data = iris, D = 32, seed = 1)
  b <- rff_ridge(Sepal.Length ~ ., data = iris, D = 32, seed = 1, weights = rep(1, 150))
  expect_equal(b$weights, a$weights, tolerance = 1e-10)
})

test_that("case weights in the SVM: unit weights change nothing", {
  a <- rff_svm(Species ~ ., data = iris, D = 32, seed = 1)
  b <- rff_svm(Species ~ ., data = iris, D = 32, seed = 1, weights = rep(1, 150))
  expect_equal(b$weights, a$weights, tolerance = 1e-10)
})

test_that("the call is stored, and update() refits with changed arguments", {
  fit <- rff_svm(Species ~ ., data = iris, D = 32, seed = 1)
  expect_identical(fit$call[[1L]], as.name("rff_svm"))
  up <- update(fit, cost = 10)
  expect_identical(up$cost, 10)
  expect_identical(up$weights, rff_svm(Species ~ ., data = iris, D = 32, seed = 1,
                                       cost = 10)$weights)
  # a new formula through update(), with its '.' as in lm
  small <- update(fit, . ~ Petal.Length + Petal.Width)
  expect_identical(small$input$d, 2L)
  # fits on matrices store their call too
  m <- rff_ridge(as.matrix(iris[, 2:4]), iris$Sepal.Length, D = 16, seed = 4)
  expect_identical(m$call[[1L]], as.name("rff_ridge"))
  expect_identical(update(m, lambda = 2)$lambda, 2)
  km <- kernel_kmeans(as.matrix(iris[, 1:4]), 3, seed = 1)
  expect_identical(update(km, centers = 2)$k, 2L)
  map <- random_features(as.matrix(iris[, 1:4]), D = 10, seed = 1)
  expect_identical(update(map, D = 20)$D, 20L)
  ny <- nystrom_features(~ ., data = iris[, 1:4], m = 5, seed = 1)
  expect_identical(update(ny, m = 7)$m, 7L)
})

test_that("formula(), terms(), nobs() and model.frame() answer as for lm", {
  fit <- rff_ridge(Ozone ~ Wind + Temp, data = aq, subset = Month > 5, D = 16, seed = 1)
  ref <- lm(Ozone ~ Wind + Temp, data = aq, subset = Month > 5)
  expect_equal(formula(fit), formula(ref), ignore_attr = TRUE)
  expect_s3_class(terms(fit), "terms")
  expect_identical(attr(terms(fit), "term.labels"), c("Wind", "Temp"))
  expect_identical(nobs(fit), nobs(ref))
  expect_identical(model.frame(fit), model.frame(ref), ignore_attr = "terms")
  # '.' expanded in formula()
  expect_setequal(all.vars(formula(rff_svm(Species ~ ., data = iris, D = 8, seed = 1))),
                  names(iris))
  km <- kernel_kmeans(~ Sepal.Length + Petal.Width, data = iris, centers = 2, seed = 1)
  expect_identical(all.vars(formula(km)), c("Sepal.Length", "Petal.Width"))
  expect_identical(nrow(model.frame(km)), 150L)
  # a fit on a matrix has no formula: a clear error
  m <- rff_svm(iris[, 1:4], iris$Species, D = 8, seed = 1)
  expect_error(formula(m), "not through a formula")
  expect_error(terms(m), "not through a formula")
  expect_identical(nobs(m), 150L)
})

test_that("predict() gives NA for incomplete new rows under na.pass and na.exclude", {
  fit <- rff_ridge(Ozone ~ ., data = aq, D = 64, seed = 1)
  full <- predict(fit, aq)
  expect_length(full, nrow(aq))
  miss <- which(!stats::complete.cases(aq[, -1]))   # the response does not matter
  expect_identical(unname(which(is.na(full))), miss)
  expect_identical(full[-miss], predict(fit, aq[-miss, ]))
  expect_identical(predict(fit, aq, na.action = na.exclude), full)
  expect_identical(predict(fit, aq, na.action = na.omit), full[-miss])
  expect_error(predict(fit, aq, na.action = na.fail), "'newdata' has missing values")
  # classes and decision values of the SVM
  svm <- rff_svm(Species ~ ., data = iris, D = 32, seed = 1)
  nd <- iris[1:6, ]
  nd$Petal.Width[2] <- NA
  cls <- predict(svm, nd)
  expect_true(is.na(cls[2]) && !anyNA(cls[-2]))
  expect_identical(levels(cls), levels(iris$Species))
  dec <- predict(svm, nd, type = "decision")
  expect_true(all(is.na(dec[2, ])) && !anyNA(dec[-2, ]))
  expect_identical(dec[-2, ], predict(svm, nd[-2, ], type = "decision"))
  # a fit on a matrix, new rows with NA and NaN
  m <- rff_ridge(as.matrix(iris[, 2:4]), iris$Sepal.Length, D = 16, seed = 4)
  x <- as.matrix(iris[1:4, 2:4])
  x[1, 2] <- NA
  x[3, 1] <- NaN
  p <- predict(m, x)
  expect_identical(unname(which(is.na(p))), c(1L, 3L))
  expect_identical(unname(p[c(2, 4)]), unname(predict(m, x[c(2, 4), ])))
  # infinite values are still refused
  x[2, 2] <- Inf
  expect_error(predict(m, x), "'newdata' contains NA, NaN or infinite")
})

test_that("predict() on zero rows gives an empty result of the right type", {
  svm <- rff_svm(Species ~ ., data = iris, D = 16, seed = 1)
  cls <- predict(svm, iris[0, ])
  expect_s3_class(cls, "factor")
  expect_length(cls, 0L)
  expect_identical(levels(cls), levels(iris$Species))
  expect_identical(dim(predict(svm, iris[0, ], type = "decision")), c(0L, 3L))
  ridge <- rff_ridge(as.matrix(iris[, 2:4]), iris$Sepal.Length, D = 16, seed = 4)
  expect_identical(unname(predict(ridge, as.matrix(iris[0, 2:4]))), numeric(0))
})

test_that("predict() without newdata or with NULL gives the fitted values", {
  svm <- rff_svm(Species ~ ., data = iris, D = 16, seed = 1)
  expect_identical(predict(svm, NULL), fitted(svm))
  expect_identical(predict(svm), fitted(svm))
  ridge <- rff_ridge(Sepal.Length ~ ., data = iris, D = 16, seed = 1)
  expect_identical(predict(ridge, newdata = NULL), fitted(ridge))
})

test_that("extra named columns of newdata are ignored, permuted ones matched by name", {
  fit <- rff_svm(iris[, 1:4], iris$Species, D = 32, seed = 1)
  expect_identical(predict(fit, iris), predict(fit, iris[, 1:4]))
  expect_identical(predict(fit, iris[, c(5, 4, 3, 2, 1)], type = "decision"),
                   predict(fit, iris[, 1:4], type = "decision"))
  ridge <- rff_ridge(as.matrix(iris[, 2:3]), iris$Sepal.Length, D = 16, seed = 4)
  x <- cbind(extra = 1, as.matrix(iris[, 1:4]))
  expect_identical(predict(ridge, x), predict(ridge, as.matrix(iris[, 2:3])))
  # a column missing by name is still an error naming it
  expect_error(predict(fit, iris[, c(1, 2, 3, 5)]), "'newdata' lacks column\\(s\\).*Petal.Width")
})

test_that("kernel_approx_error() takes a map fitted through a formula", {
  map <- random_features(~ ., data = iris[, 1:4], kernel = gaussian_kernel(1), D = 200, seed = 7)
  ref <- random_features(as.matrix(iris[, 1:4]), gaussian_kernel(1), D = 200, seed = 7)
  a <- kernel_approx_error(map, iris)
  b <- kernel_approx_error(ref, iris[, 1:4])
  expect_identical(a$max, b$max)
  expect_identical(a$rms, b$rms)
  ny <- nystrom_features(~ Sepal.Length + Petal.Width, data = iris, m = 150, seed = 1)
  # m = n landmarks: the Nystrom map reproduces the Gram matrix up to rounding
  expect_lt(kernel_approx_error(ny, iris)$max, 1e-6)
})

test_that("R's allocation failures are recognised in any language", {
  expect_true(bochner:::is_allocation_error(simpleError("cannot allocate vector of size 3.1 Gb")))
  expect_true(bochner:::is_allocation_error(
    simpleError("cannot allocate memory block of size 17179869184.0 Gb")))
  expect_false(bochner:::is_allocation_error(simpleError("'x' has no rows")))
  expect_false(bochner:::is_allocation_error(simpleError("cannot allocate")))
  # a real failure: 2^50 doubles are 8 PB, which no machine gives
  e <- tryCatch(numeric(2^50), error = identity)
  expect_true(bochner:::is_allocation_error(e))
  skip_if_not(exists("Sys.setLanguage", baseenv()), "Sys.setLanguage() needs R 4.2")
  translated <- function(lang) {
    old <- Sys.setLanguage(lang)
    on.exit(Sys.setLanguage(old))
    tmpl <- gettext("cannot allocate vector of size %0.1f Gb", domain = "R")
    e <- tryCatch(numeric(2^50), error = identity)
    list(tmpl = tmpl, msg = conditionMessage(e), hit = bochner:::is_allocation_error(e))
  }
  de <- translated("de")
  skip_if(identical(de$tmpl, "cannot allocate vector of size %0.1f Gb"),
          "R's German translations are not installed")
  expect_false(grepl("cannot allocate", de$msg, fixed = TRUE))
  expect_true(de$hit)
})

test_that("gamma = takes the inverse width of kernlab, e1071 and scikit-learn", {
  x <- matrix(c(0, 1, 2.5, 0.3, -1, 0.7), 3)
  d2 <- as.matrix(dist(x))^2
  d1 <- as.matrix(dist(x, method = "manhattan"))
  # kernlab rbfdot(sigma = g), e1071 / scikit-learn gamma = g: exp(-g ||x - y||^2)
  g <- 0.3
  expect_equal(kernel_matrix(gaussian_kernel(gamma = g), x), exp(-g * d2), tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_equal(gaussian_kernel(gamma = g)$sigma, 1 / sqrt(2 * g))
  # scikit-learn laplacian_kernel(gamma = g): exp(-g ||x - y||_1)
  expect_equal(kernel_matrix(laplace_kernel(gamma = g), x), exp(-g * d1), tolerance = 1e-12,
               ignore_attr = TRUE)
  # cauchy: prod_j 1 / (1 + g (x_j - y_j)^2)
  ref <- outer(1:3, 1:3, Vectorize(function(i, j) prod(1 / (1 + g * (x[i, ] - x[j, ])^2))))
  expect_equal(kernel_matrix(cauchy_kernel(gamma = g), x), ref, tolerance = 1e-12,
               ignore_attr = TRUE)
  # kernlab's laplacedot(sigma = s) is Euclidean: matern_kernel(1 / s, nu = 1/2)
  s <- 0.8
  expect_equal(kernel_matrix(matern_kernel(1 / s, nu = 0.5), x), exp(-s * sqrt(d2)),
               tolerance = 1e-12, ignore_attr = TRUE)
  expect_output(print(gaussian_kernel(gamma = 0.125)), "sigma = 2 \\(from gamma = 0.125\\)")
  skip_if_not_installed("kernlab")
  expect_equal(kernel_matrix(gaussian_kernel(gamma = g), x),
               kernlab::kernelMatrix(kernlab::rbfdot(sigma = g), x)@.Data, tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_equal(kernel_matrix(matern_kernel(1 / s, nu = 0.5), x),
               kernlab::kernelMatrix(kernlab::laplacedot(sigma = s), x)@.Data,
               tolerance = 1e-12, ignore_attr = TRUE)
})

test_that("the kernel table gives the codes, parameters and labels the C side and prints use", {
  expect_identical(bochner:::kernel_code(gaussian_kernel(1)), 1L)
  expect_identical(bochner:::kernel_code(exponential_dot_kernel(1)), 7L)
  expect_identical(bochner:::kernel_parameters(matern_kernel(2, 2.5)), c(2, 2.5))
  expect_identical(bochner:::kernel_parameters(polynomial_kernel(2, 3, 1)), c(0, 2, 3, 1))
  expect_identical(bochner:::kernel_label(min_kernel()), "Min")
  expect_error(bochner:::kernel_code(structure(list(name = "nope"), class = "bochner_kernel")),
               "unknown kernel 'nope'")
  # k(x, x) from the table agrees with the exact Gram matrix's diagonal
  x <- matrix(runif(12), 4)
  for (k in list(gaussian_kernel(1), polynomial_kernel(3), polynomial_kernel(coef = c(1, 0, 2)),
                 min_kernel(2), exponential_dot_kernel(2))) {
    expect_equal(bochner:::kernel_diagonal(k, x), diag(kernel_matrix(k, x)), tolerance = 1e-12,
                 ignore_attr = TRUE)
  }
})

test_that("spectral_sample() says why sigma = \"median\" cannot be used without data", {
  expect_error(spectral_sample(gaussian_kernel("median"), 5, 2),
               "'kernel' has sigma = \"median\", which is resolved on data")
})

test_that("the one block-transform loop gives the same values for any block size", {
  with_rows <- function(rows, expr) {
    ns <- asNamespace("bochner")
    orig <- get("rff_block_rows", envir = ns)
    unlockBinding("rff_block_rows", ns)
    on.exit({
      assign("rff_block_rows", orig, envir = ns)
      lockBinding("rff_block_rows", ns)
    })
    assign("rff_block_rows", function(n, nf) min(n, rows), envir = ns)
    expr
  }
  set.seed(3)
  x <- matrix(rnorm(57 * 3), 57)
  map <- random_features(x, polynomial_kernel(2), D = 20, seed = 1)   # a map without C fusion
  Z <- predict(map, x)
  w <- matrix(rnorm(2 * map$n_features), ncol = 2)
  b <- c(0.5, -1)
  ref <- Z %*% w + rep(b, each = nrow(x))          # plain R
  whole <- bochner:::feature_decision(map, x, w, b, 1L)
  expect_equal(whole, ref, tolerance = 1e-12, ignore_attr = TRUE)
  expect_identical(with_rows(10L, bochner:::feature_decision(map, x, w, b, 1L)), whole)
  expect_identical(with_rows(10L, bochner:::transform_features_t(map, x, 1L)), t(Z))
  km <- kernel_kmeans(x, 3, polynomial_kernel(2), method = "rff", D = 20, seed = 2)
  d_whole <- predict(km, x, type = "distance")
  expect_identical(with_rows(7L, predict(km, x, type = "distance")), d_whole)
})

test_that("class rules see only the complete rows of decision values", {
  dec <- matrix(c(1, NA, -2, 0.5, NA, 3), 3, dimnames = list(c("a", "b", "c"), c("u", "v")))
  strict <- function(d) {
    stopifnot(!anyNA(d))      # as a one-vs-one vote or pairwise coupling would fail
    factor(c("u", "v")[max.col(d, ties.method = "first")], levels = c("u", "v"))
  }
  cls <- bochner:::rff_complete_rows(dec, strict)
  expect_identical(as.character(cls), c("u", NA, "v"))
  expect_identical(names(cls), c("a", "b", "c"))
  prob <- bochner:::rff_complete_rows(dec, function(d) {
    stopifnot(!anyNA(d))
    exp(d) / rowSums(exp(d))
  })
  expect_identical(dim(prob), c(3L, 2L))
  expect_true(all(is.na(prob[2, ])))
  expect_equal(rowSums(prob[-2, ]), c(a = 1, c = 1))
})

test_that("the issue's data sets fit through formulas: NAs, factors, regression", {
  skip_if_not_installed("mlbench")
  # mlbench 2.1-11 replaced the Pima data by a synthetic set of the same
  # shape (SynthDiabetes2: NAs in the same columns)
  sets <- utils::data(package = "mlbench")$results[, "Item"]
  name <- if ("PimaIndiansDiabetes2" %in% sets) "PimaIndiansDiabetes2" else "SynthDiabetes2"
  pima <- get(utils::data(list = name, package = "mlbench", envir = environment()))
  fit <- rff_svm(diabetes ~ ., data = pima, D = 128, seed = 1)
  expect_identical(nobs(fit), sum(stats::complete.cases(pima)))
  p <- predict(fit, pima[1:10, ], na.action = na.exclude)
  expect_identical(unname(is.na(p)), !stats::complete.cases(pima[1:10, -9]))
  bc <- get(utils::data("BreastCancer", package = "mlbench", envir = environment()))
  fit2 <- rff_svm(Class ~ . - Id, data = bc, D = 128, seed = 1)
  expect_gt(fit2$accuracy, 0.9)                     # factor predictors, one-hot coded
  expect_identical(nobs(fit2), sum(stats::complete.cases(bc)))
  fit3 <- rff_ridge(Ozone ~ ., data = airquality, D = 128, seed = 1)
  expect_identical(nobs(fit3), sum(stats::complete.cases(airquality)))
  expect_identical(update(fit, cost = 10)$cost, 10)
})
