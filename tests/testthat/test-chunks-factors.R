# Factor and character columns on chunks (issue 42, item 4): expanded with
# the levels of all the chunks, so that the chunked fit sees the columns the
# formula interface gives in memory, and equals the in-memory fit on the
# same rows (to the rounding of the sums, as in test-distributed.R).

factor_chunks <- function() {
  set.seed(11)
  n <- 600
  d <- data.frame(a = rnorm(n),
                  g = sample(c("x", "y", "z"), n, TRUE),
                  h = factor(sample(c("lo", "hi"), n, TRUE), levels = c("lo", "hi")),
                  b = runif(n))
  # chunk 1 lacks level "z" of g, which only later chunks have
  d$g[1:150][d$g[1:150] == "z"] <- "x"
  d$y <- d$a + (d$g == "y") - 2 * (d$h == "hi") + rnorm(n, sd = 0.1)
  d$cls <- factor(ifelse(d$y > 0, "pos", "neg"))
  dir <- tempfile("chunks")
  dir.create(dir)
  parts <- split(d, rep(1:4, each = n / 4))
  files <- vapply(seq_along(parts), function(i) {
    f <- file.path(dir, sprintf("part%d.csv", i))
    utils::write.csv(parts[[i]], f, row.names = FALSE)
    f
  }, "")
  # the rows as the chunks hold them: read back the same way (g and h
  # become character columns), bound in chunk order
  all <- do.call(rbind, lapply(files, utils::read.csv))
  list(files = files, all = all, parts = lapply(files, utils::read.csv))
}

test_that("the survey expands factors with the levels of every chunk", {
  fc <- factor_chunks()
  sv <- bochner:::chunks_survey(data_chunks(fc$parts), "y", "test")
  mem <- bochner:::formula_frame(y ~ a + g + h + b + cls, call("f", data = quote(all)),
                                 list2env(list(all = fc$all)), stats::na.omit)
  expect_identical(as.vector(sv$names), colnames(mem$x))
  expect_identical(attr(sv$names, "design")$xlevels, mem$xlevels)
  expect_equal(sv$n, nrow(fc$all))
  expect_equal(unname(sv$center), unname(colMeans(mem$x)), tolerance = 1e-14)
})

test_that("chunked ridge, SVM and k-means with factor columns equal the in-memory fits", {
  fc <- factor_chunks()
  ch <- data_chunks(fc$files)
  K <- gaussian_kernel(1)
  tol <- 1e-8
  # ridge, lambda chosen on the path by the same criterion: the same
  # lambda and predictions
  a <- rff_ridge(y ~ a + g + h + b, data = ch, kernel = K, D = 64, seed = 1)
  m <- rff_ridge(y ~ a + g + h + b, data = fc$all, kernel = K, D = 64, seed = 1)
  expect_identical(a$criterion, m$criterion)
  expect_identical(as.vector(a$input$names), m$input$names)
  expect_equal(a$lambda, m$lambda, tolerance = tol)
  expect_equal(predict(a, fc$all), predict(m, fc$all), tolerance = tol)
  # predict() on a data frame with the fit's columns, unseen levels refused
  new <- fc$all[1:3, ]
  new$g <- c("x", "w", "y")
  expect_error(predict(a, new), "never saw: w")
  # the default kernel rule resolves on the same expanded sample
  a2 <- rff_ridge(y ~ ., data = data_chunks(lapply(fc$parts, function(p) p[c("a", "g", "h", "b", "y")])),
                  D = 64, lambda = 1e-3, seed = 1)
  m2 <- rff_ridge(y ~ ., data = fc$all[c("a", "g", "h", "b", "y")], D = 64, lambda = 1e-3, seed = 1)
  expect_equal(a2$map$omega, m2$map$omega)
  expect_equal(predict(a2, fc$all), predict(m2, fc$all), tolerance = tol)
  # the SVM on classes, by CoCoA+ on chunks against dual coordinate descent:
  # the same classes on the training rows
  s <- rff_svm(cls ~ a + g + h + b, data = ch, kernel = K, D = 64, seed = 1)
  sm <- rff_svm(cls ~ a + g + h + b, data = fc$all, kernel = K, D = 64, seed = 1)
  expect_identical(as.vector(s$input$names), sm$input$names)
  expect_gt(mean(predict(s, fc$all) == predict(sm, fc$all)), 0.97)
  # kernel k-means: the same clusters
  k <- kernel_kmeans(~ a + g + h + b, data = ch, centers = 3, kernel = K, D = 64, seed = 1)
  km <- kernel_kmeans(~ a + g + h + b, data = fc$all, centers = 3, kernel = K, D = 64,
                      method = "rff", seed = 1)
  expect_identical(as.vector(k$input$names), km$input$names)
  expect_equal(unname(predict(k, fc$all)), unname(predict(km, fc$all)))
})
