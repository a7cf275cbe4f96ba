# Progress bars (R/progress.R): silent unless asked for (or interactive),
# shown only after the delay, on stderr, and never changing results.

messages_of <- function(expr) {
  out <- character()
  withr_con <- textConnection("out", "w", local = TRUE)
  sink(withr_con, type = "message")
  on.exit({ sink(type = "message"); close(withr_con) })
  value <- force(expr)
  list(value = value, text = paste(out, collapse = "\n"))
}

test_that("the API is silent when disabled and draws a bar when enabled", {
  old <- options(bochner.progress = FALSE, bochner.progress_delay = 0)
  on.exit(options(old))
  expect_null(bochner:::progress_start(10, "x"))
  expect_null(bochner:::progress_tick(NULL))
  expect_null(bochner:::progress_done(NULL))
  options(bochner.progress = TRUE)
  res <- messages_of({
    p <- bochner:::progress_start(4, "four steps")
    for (i in 1:4) bochner:::progress_tick(p)
    bochner:::progress_done(p)
  })
  expect_match(res$text, "four steps")
  expect_match(res$text, "100%")
  # nothing before the delay has passed
  options(bochner.progress_delay = 3600)
  res <- messages_of({
    p <- bochner:::progress_start(4, "slow to show")
    for (i in 1:4) bochner:::progress_tick(p)
    bochner:::progress_done(p)
  })
  expect_identical(res$text, "")
})

test_that("the default follows interactive()", {
  old <- options(bochner.progress = NULL)
  on.exit(options(old))
  expect_identical(bochner:::progress_enabled(), interactive())
})

test_that("rff_ridge and predict show bars and give the same results", {
  set.seed(1)
  x <- matrix(rnorm(2 * 70000), 70000, 2)
  y <- sin(x[, 1]) + x[, 2]
  old <- options(bochner.progress = FALSE)
  on.exit(options(old))
  quiet <- rff_ridge(x, y, D = 128, seed = 1)
  map <- random_features(x, gaussian_kernel(1), D = 256, seed = 1)
  Z <- predict(map, x)
  options(bochner.progress = TRUE, bochner.progress_delay = 0)
  loud <- messages_of(rff_ridge(x, y, D = 128, seed = 1))
  expect_match(loud$text, "rff_ridge")
  expect_identical(loud$value$weights, quiet$weights)
  # 70000 x 256 features: computed in blocks of rows with a bar, the same Z
  shown <- messages_of(predict(map, x))
  expect_match(shown$text, "Random features: 70000 x 256")
  expect_identical(shown$value, Z)
})
