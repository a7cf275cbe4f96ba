# Exact column sums (src/exact_moments.c): the standardisation of the
# chunked fits equals the in-memory one whatever the chunks.

exact_moments <- function(x) {
  bochner:::column_moments_exact(bochner:::column_sums_exact(x), nrow(x))
}

test_that("the exact column moments are the plain ones, correctly rounded", {
  set.seed(1)
  x <- cbind(rnorm(500), runif(500, 1e6, 1e6 + 1), rexp(500))
  m <- exact_moments(x)
  expect_equal(m[[1L]], colMeans(x), tolerance = 1e-15)
  ref <- colSums(sweep(x, 2L, colMeans(x))^2)
  expect_equal(m[[2L]], ref, tolerance = 1e-12)
  # sums that cancel: 1e16 + 1 - 1e16 is 1 exactly (plain summation gives 0)
  y <- matrix(c(1e16, 1, -1e16, 2), ncol = 1L)
  expect_identical(exact_moments(y)[[1L]], 3 / 4)
  # a large mean and a small spread: the centred sum of squares is exact
  z <- matrix(1e8 + c(-1, 0, 1), ncol = 1L)
  expect_identical(exact_moments(z)[[2L]], 2)
  # non-finite values propagate as in colMeans()
  w <- cbind(c(1, Inf, 2), c(1, NaN, 2), c(-Inf, 0, 1))
  m <- exact_moments(w)
  expect_identical(m[[1L]][c(1L, 3L)], c(Inf, -Inf))
  expect_true(is.nan(m[[1L]][2L]))
})

test_that("the exact column moments do not depend on the grouping or order of the rows", {
  set.seed(2)
  x <- matrix(rnorm(3000, mean = 3, sd = 1e-3) * 10^runif(3000, -3, 3), 1000, 3)
  whole <- exact_moments(x)
  for (cuts in list(c(1, 333, 334, 1000), c(1, 1, 2, 999))) {
    g <- findInterval(seq_len(1000), unique(cuts), left.open = FALSE)
    parts <- lapply(split(seq_len(1000), g), function(r) {
      bochner:::column_sums_exact(x[r, , drop = FALSE])
    })
    acc <- Reduce(function(a, b) bochner:::column_sums_exact(a = a, b = b), rev(parts))
    expect_identical(bochner:::column_moments_exact(acc, 1000), whole)
  }
  expect_identical(exact_moments(x[sample(1000), ]), whole)
  # the survey of chunks gives the in-memory standardisation, to the bit
  ch <- data_chunks(list(x[1:10, ], x[11:700, ], x[701:1000, ]))
  sv <- bochner:::chunks_survey(ch, NULL, "test")
  expect_identical(bochner:::survey_scaling(sv), bochner:::rff_scaling(x))
})
