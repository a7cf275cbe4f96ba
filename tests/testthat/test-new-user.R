# What a new user hit on data no other test uses (issue 42): each block
# failed on the main of 2026-11-28 before its fix.

volcano_frame <- function() {
  v <- datasets::volcano
  d <- data.frame(x = c(row(v)), y = c(col(v)), height = c(v))
  set.seed(1)
  d[sample(nrow(d), 4245), ]
}

# A path's choice is inside it, or at an edge with a warning that says so.
expect_inside_or_warned <- function(expr) {
  warned <- NULL
  fit <- withCallingHandlers(expr, warning = function(w) {
    warned <<- conditionMessage(w)
    invokeRestart("muffleWarning")
  })
  k <- attr(fit$path, "chosen")
  if (k == 1L || k == nrow(fit$path)) {
    expect_match(warned, "was chosen: .*(bandwidth|grid)")
  } else {
    expect_null(warned)
  }
  fit
}

test_that("item 1-2: the volcano ridge fits, its automatic lambda leaves the grid's edge or warns", {
  skip_if_not_installed("MASS")
  d <- volcano_frame()
  # the default grid (41 values, to 1e-10 of the trace) chose its last value
  # silently; it extends itself while that is safe (to 2e-10 of the largest
  # eigenvalue), and a choice still at an edge warns, saying what to change
  fit <- expect_inside_or_warned(rff_ridge(height ~ x + y, data = d,
                                           kernel = gaussian_kernel(0.5), seed = 1))
  expect_lt(sqrt(mean(residuals(fit)^2)), 2.5)   # the default bandwidth: 5.4
  expect_inside_or_warned(rff_ridge(height ~ x + y, data = d, seed = 1))
  expect_inside_or_warned(rff_ridge(accel ~ times, data = MASS::mcycle, seed = 1))
  # the extension: a choice at the top of the grid (a constant response
  # explained by nothing) grows the grid upwards, then warns
  set.seed(3)
  x <- matrix(rnorm(200))
  top <- expect_inside_or_warned(rff_ridge(x, rnorm(200), seed = 1))
  expect_gt(nrow(top$path), 41L)
  # a grid of one's own is not extended, but its edge is reported
  x <- matrix(seq(0, 1, length.out = 100))
  y <- sin(6 * x[, 1])
  expect_warning(f3 <- rff_ridge(x, y, lambda = c(1, 0.1), seed = 1),
                 "the smallest value of 'lambda', was chosen")
  expect_identical(nrow(f3$path), 2L)
})

test_that("item 5: a numeric response is not turned into classes", {
  skip_if_not_installed("MASS")
  m <- MASS::mcycle
  m$accel <- round(m$accel)
  expect_error(rff_svm(accel ~ times, data = m), "'y' is numeric.*factor\\(y\\).*rff_ridge")
  expect_error(rff_svm(as.matrix(m["times"]), m$accel), "factor\\(y\\)")
  # 0/1 integers are numbers too; the factor works
  expect_error(rff_svm(matrix(1:10), rep(0:1, 5)), "is numeric")
  expect_s3_class(rff_svm(matrix(1:10), factor(rep(0:1, 5)), seed = 1), "rff_svm")
  # logicals and characters are classes
  expect_s3_class(rff_svm(matrix(1:10), rep(c(TRUE, FALSE), 5), seed = 1), "rff_svm")
  expect_s3_class(rff_svm(matrix(1:10), rep(c("a", "b"), 5), seed = 1), "rff_svm")
})

test_that("item 10: messages name rows by position, kernlab's type and drop = FALSE", {
  skip_if_not_installed("MASS")
  d <- data.frame(g = factor(rep(c("a", "b"), 20)), z = rnorm(40))
  d$y <- d$z + (d$g == "a") + rnorm(40, sd = 0.1)
  fit <- rff_ridge(y ~ g + z, data = d, D = 32, seed = 1)
  new <- data.frame(g = c("a", "a", "c"), z = 0, row.names = c("5", "17", "12781"))
  expect_error(predict(fit, new), "first in row 3, named \"12781\"")
  plain <- data.frame(g = c("a", "c"), z = 0)
  expect_error(predict(fit, plain), "first in row 2\\)")
  # kernlab's and e1071's 'type' is translated, not "must be phase or pair"
  expect_error(rff_svm(Species ~ ., data = iris, type = "C-svc"),
               "'type' is the feature map's.*\"C-svc\" is the classification rff_svm\\(\\) fits")
  expect_error(rff_svm(Species ~ ., data = iris, type = "eps-svr"), "a regression: rff_ridge")
  expect_s3_class(rff_svm(Species ~ ., data = iris, type = "pair", D = 32, seed = 1), "rff_svm")
  # one row given as a vector
  x <- matrix(rnorm(9 * 30), 30)
  f9 <- rff_ridge(x, x[, 1] + rnorm(30, sd = 0.1), D = 32, seed = 1)
  expect_error(predict(f9, x[1, ]), "drop = FALSE")
  expect_length(predict(f9, x[1, , drop = FALSE]), 1L)
  # summary of a falkon regression labels its held-out error as an RMSE
  m <- MASS::mcycle
  ff <- falkon(accel ~ times, data = m, seed = 1, control = list(loo_rows = 0))
  out <- capture.output(summary(ff))
  line <- grep("^Held-out (RMSE|error rate)", out, value = TRUE)
  expect_match(line, "^Held-out RMSE: best [0-9.]+")
  best <- min(ff$validation$error)
  expect_equal(as.numeric(sub(".*best ([0-9.e+-]+).*", "\\1", line)), sqrt(best), tolerance = 1e-3)
  fc <- falkon(Species ~ ., data = iris, seed = 1, control = list(loo_rows = 0))
  expect_match(grep("^Held-out (RMSE|error rate)", capture.output(summary(fc)), value = TRUE),
               "^Held-out error rate: best")
  # by default these small fits choose lambda by leave-one-out, and say so
  fl <- falkon(accel ~ times, data = m, seed = 1)
  line <- grep("^Leave-one-out", capture.output(summary(fl)), value = TRUE)
  expect_match(line, "^Leave-one-out RMSE: best [0-9.]+")
  expect_equal(as.numeric(sub(".*best ([0-9.e+-]+).*", "\\1", line)), sqrt(min(fl$validation$loo)),
               tolerance = 1e-3)
})

test_that("item 11: a GP plot names its axes after the formula, a short title, a legend", {
  set.seed(4)
  d <- data.frame(time = runif(60, 0, 5))
  d$signal <- sin(d$time) + rnorm(60, sd = 0.2)
  fit <- rff_gp(signal ~ time, data = d, D = 64, seed = 1)
  expect_identical(bochner:::gp_axis_labels(fit), c("time", "signal"))
  fm <- rff_gp(matrix(d$time, dimnames = list(NULL, "t")), d$signal, D = 64, seed = 1)
  expect_identical(bochner:::gp_axis_labels(fm), c("t", "response"))
  pdf(NULL)
  on.exit(dev.off())
  expect_no_error(plot(fit))
  expect_no_error(plot(fit, legend = NULL))
})
