# rff_gp() on data_chunks(): the in-memory search, its sums over the rows
# from passes over the chunks.

gp_pieces <- function(n, seed = 1) {
  set.seed(seed)
  d <- data.frame(a = runif(n, -3, 3), b = runif(n, 0, 50))
  d$y <- sin(d$a) + cos(d$b / 8) + rnorm(n, sd = 0.2)
  split(d, ceiling(seq_len(n) / 1200))
}

test_that("rff_gp on chunks is the in-memory fit, beyond the pilot's rows and below", {
  pieces <- gp_pieces(4500)
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[c("a", "b")])
  for (ard in c(FALSE, TRUE)) {
    mem <- rff_gp(x, all$y, D = 64, ard = ard, seed = 1)
    ch <- rff_gp(data_chunks(pieces), y = "y", D = 64, ard = ard, seed = 1)
    # the same draws, pilot and evaluations; the sums over the rows differ in
    # their order only (1e-16 relative), which the search's line searches
    # carry into its steps: near the flat optimum (L-BFGS-B stops at a
    # relative change of 1e10 eps in L) a parameter moves by up to about the
    # square root of that, 1.5e-3, where the likelihood stays within 1e-9
    expect_identical(ch$optim$counts, mem$optim$counts)
    expect_identical(ch$optim$pilot, mem$optim$pilot)
    expect_equal(ch$theta, mem$theta, tolerance = 1e-5)
    expect_equal(ch$logLik, mem$logLik, tolerance = 1e-9)
    expect_equal(predict(ch, x[1:50, ]), predict(mem, x[1:50, ]), tolerance = 1e-5)
    expect_null(ch$residuals)
  }
  expect_identical(ch$n, 4500)
  expect_equal(unname(ch$input$range), unname(apply(x, 2L, range)))
  expect_output(print(ch), "fitted on 4 chunks")
  expect_error(summary(ch), "keeps no residuals")
  # the formula reaches the chunked fit
  fo <- rff_gp(y ~ a + b, data = data_chunks(pieces), D = 64, seed = 1, ard = TRUE)
  expect_equal(fo$theta, ch$theta, tolerance = 1e-12)
  # at most gp_pilot_rows rows: fetched whole and fitted as in memory
  few <- pieces[1:2]
  fx <- do.call(rbind, few)
  small <- rff_gp(data_chunks(few), y = "y", seed = 2)
  ref <- rff_gp(as.matrix(fx[c("a", "b")]), fx$y, seed = 2)
  expect_equal(small$theta, ref$theta, tolerance = 1e-5)
  expect_identical(small$D, ref$D)
})

test_that("rff_gp on chunks has the in-memory defaults and refuses what needs the rows", {
  f_mem <- formals(bochner:::rff_gp.default)
  f_ch <- formals(bochner:::rff_gp.data_chunks)
  shared <- setdiff(intersect(names(f_ch), names(f_mem)), c("x", "nthreads", "..."))
  expect_setequal(setdiff(names(f_mem), c(names(f_ch), "method", "mean", "weights", "laplace")),
                  character(0))
  for (a in shared) expect_identical(f_ch[[a]], f_mem[[a]], label = a)
  ch <- data_chunks(gp_pieces(300))
  expect_error(rff_gp(ch, "y", method = "exact"), "'method'.*data_chunks")
  expect_error(rff_gp(ch, "y", mean = "linear"), "'mean'")
  expect_error(rff_gp(ch, "y", weights = rep(1, 300)), "'weights'")
  expect_error(rff_gp(ch, "y", kernel = spectral_mixture_kernel(2)), "'kernel'")
  expect_error(rff_gp(ch, "y", bogus = 1), "unused argument")
  cl <- lapply(gp_pieces(300), function(p) transform(p, y = factor(y > 0)))
  expect_error(rff_gp(data_chunks(cl), "y"), "'y'.*numeric")
})

test_that("ard = NULL learns one length scale per input from 10 000 rows, in memory and on chunks", {
  rule <- bochner:::gp_check_ard
  expect_true(rule(NULL, TRUE, 10000, 2))
  expect_false(rule(NULL, TRUE, 9999, 2))
  expect_false(rule(NULL, TRUE, 10000, 1))
  expect_false(rule(NULL, FALSE, 10000, 2))    # fixed scales: nothing to learn
  expect_false(rule(FALSE, TRUE, 10000, 2))
  expect_true(rule(TRUE, TRUE, 10, 2))
  expect_error(rule(NA, TRUE, 10, 2), "'ard'")
  # the fits count the rows as the rule does (weight 0 rows do not count), and
  # a chunked fit of the same rows takes the same choice
  pieces <- gp_pieces(10000)
  all <- do.call(rbind, pieces)
  x <- as.matrix(all[c("a", "b")])
  quick <- list(maxit = 2)
  big <- rff_gp(x, all$y, D = 8, seed = 1, control = quick)
  expect_true(big$ard)
  expect_length(big$hyper$lengthscale, 2L)
  expect_false(rff_gp(x, all$y, D = 8, seed = 1, control = quick,
                      weights = rep(1:0, c(9999, 1)))$ard)
  expect_false(rff_gp(x[, 1], all$y, D = 8, seed = 1, control = quick)$ard)
  ch <- rff_gp(data_chunks(pieces), y = "y", D = 8, seed = 1, control = quick)
  expect_true(ch$ard)
  expect_equal(ch$theta, big$theta, tolerance = 1e-5)
  expect_false(rff_gp(data_chunks(pieces[-1]), y = "y", D = 8, seed = 1, control = quick)$ard)
})
