# What a sweep of the exported functions as a new user would call them
# found (2026-12-05): each block failed on main at 3b2639c before its fix.

test_that("a two-class rff_svm's cross-validation accuracy scores its held-out rows", {
  # two classes a wide gap apart: every fold's machine classifies its
  # held-out rows right, so the cross-validated accuracy is 1 (it was the
  # first class's share, every held-out row read as the first class)
  set.seed(2)
  x <- rbind(matrix(rnorm(120, -4), 60), matrix(rnorm(280, 4), 140))
  y <- factor(rep(c("a", "b"), c(60, 140)))
  fit <- rff_svm(x, y, D = 200, seed = 1, cross = 5)
  expect_equal(fit$cross_accuracy, 1)
  three <- rff_svm(x, factor(ifelse(x[, 1] > 0, ifelse(x[, 2] > 6, "c", "b"), "a")),
                   D = 200, seed = 1, cross = 5)
  expect_gt(three$cross_accuracy, 0.9)
})

# data with one far row, whose zero weight must drop it
far_row_data <- function() {
  set.seed(1)
  x <- cbind(a = rnorm(200), b = rnorm(200))
  y <- ifelse(rowSums(x^2) > 1.4, "out", "in")
  x[1, ] <- c(1000, -1000)
  list(x = x, y = y, w = c(0, rep(1, 199)))
}

test_that("a zero case weight drops its row from the standardisation and the bandwidth rule", {
  d <- far_row_data()
  keep <- -1
  yf <- factor(d$y)
  a <- rff_svm(d$x, yf, D = 200, seed = 1, weights = d$w)
  b <- rff_svm(d$x[keep, ], yf[keep], D = 200, seed = 1)
  expect_identical(a$scaling, b$scaling)
  expect_identical(a$kernel$sigma, b$kernel$sigma)
  expect_equal(predict(a, d$x[keep, ], type = "decision"),
               predict(b, d$x[keep, ], type = "decision"), tolerance = 1e-6)
  a <- rff_ridge(d$x, yf, D = 200, seed = 1, weights = d$w, lambda = 1e-3)
  b <- rff_ridge(d$x[keep, ], yf[keep], D = 200, seed = 1, lambda = 1e-3)
  expect_identical(a$scaling, b$scaling)
  expect_equal(predict(a, d$x[keep, ], type = "prob"), predict(b, d$x[keep, ], type = "prob"),
               tolerance = 1e-8)
  a <- falkon(d$x, yf, seed = 1, weights = d$w)
  b <- falkon(d$x[keep, ], yf[keep], seed = 1)
  expect_identical(a$scaling, b$scaling)
  expect_identical(a$kernel$sigma, b$kernel$sigma)
  yn <- d$x[, 1] * 0.01 + rnorm(200, sd = 0.1)
  a <- rff_gp(d$x, yn, D = 64, seed = 1, weights = d$w)
  b <- rff_gp(d$x[keep, ], yn[keep], D = 64, seed = 1)
  expect_identical(a$scaling, b$scaling)
})

test_that("unequal case weights standardise by the weighted mean and standard deviation", {
  set.seed(3)
  x <- cbind(rnorm(50), runif(50), 7)
  w <- rexp(50)
  s <- bochner:::rff_scaling(x, w)
  centre <- colSums(x * w) / sum(w)
  sd_w <- sqrt(colSums(w * sweep(x, 2, centre)^2) / sum(w) * 50 / 49)
  sd_w[3] <- 1                                  # a constant column keeps scale 1
  expect_equal(s$center, centre, tolerance = 1e-14)
  expect_equal(s$scale, sd_w, tolerance = 1e-14)
  # the weights' total does not matter; equal weights are no weights
  expect_equal(bochner:::rff_scaling(x, 10 * w), s, tolerance = 1e-14)
  expect_identical(bochner:::rff_scaling(x, rep(2, 50)), bochner:::rff_scaling(x))
  # sparse: scales only, the same standard deviations
  skip_if_not_installed("Matrix")
  xs <- Matrix::Matrix(x[, 1:2] * (abs(x[, 1:2]) > 0.5), sparse = TRUE)
  dense <- bochner:::rff_scaling(as.matrix(xs), w)
  expect_equal(bochner:::rff_scaling(xs, w)$scale, dense$scale, tolerance = 1e-12)
})

test_that("rff_gp's predict() without newdata pads na.exclude's rows with NA", {
  set.seed(1)
  d <- data.frame(x = rnorm(50))
  d$y <- sin(d$x) + rnorm(50, sd = 0.1)
  d$x[3] <- NA
  g <- rff_gp(y ~ x, data = d, D = 50, seed = 1, na.action = stats::na.exclude)
  expect_length(predict(g), 50)
  expect_true(is.na(predict(g)[3]))
  expect_equal(predict(g), fitted(g))
  expect_identical(dim(predict(g, interval = "confidence")), c(50L, 3L))
  expect_length(predict(g, se.fit = TRUE)$se.fit, 50)
})

test_that("summary() of a logistic falkon names its held-out log-loss", {
  set.seed(2)
  x <- cbind(a = rnorm(400), b = rnorm(400))
  y <- factor(ifelse(rowSums(x^2) > 1.4, "out", "in"))
  fit <- falkon(x, y, loss = "logistic", m = 100, seed = 1)
  out <- capture.output(summary(fit))
  expect_true(any(grepl("^Held-out log-loss: best", out)))
  expect_false(any(grepl("error rate", out)))
})

test_that("rff_gp() refuses classes as a regression, whatever their number", {
  expect_error(rff_gp(cbind(rnorm(30)), factor(rep("a", 30))), "must be numeric")
  expect_error(rff_gp(cbind(rnorm(30)), rep(c("a", "b"), 15)), "must be numeric")
})

test_that("sigma = \"sigest\" takes kernlab's quantiles of the distances between distinct rows", {
  set.seed(1)
  x <- matrix(rbinom(600, 1, 0.5), 200, 3)      # 8 distinct rows: many pairs coincide
  d <- as.vector(stats::dist(x))
  q <- stats::quantile(d[d != 0]^2, c(0.1, 0.9), names = FALSE)
  s <- attr(kernel_matrix(gaussian_kernel("sigest"), x), "sigma")
  expect_equal(s, 1 / sqrt(1 / q[2] + 1 / q[1]), tolerance = 1e-14)
  y <- factor(ifelse(x[, 1] + x[, 2] > 1, "a", "b"))
  expect_s3_class(rff_svm(x, y, D = 64, seed = 1), "rff_svm")
  skip_if_not_installed("Matrix")
  xs <- Matrix::Matrix(x, sparse = TRUE)
  expect_equal(bochner:::median_heuristic(xs, "gaussian", rule = "sigest"), s, tolerance = 1e-14)
  expect_equal(bochner:::median_heuristic(xs, "cauchy", rule = "sigest"),
               bochner:::median_heuristic(x, "cauchy", rule = "sigest"), tolerance = 1e-14)
  expect_error(kernel_matrix(gaussian_kernel("sigest"), matrix(1, 5, 2)), "no two rows differ")
})

test_that("sparse data: Maclaurin maps, kernel_approx_error() and the min kernel's check", {
  skip_if_not_installed("Matrix")
  set.seed(1)
  x <- matrix(rnorm(400) * (runif(400) > 0.6), 100) / 2
  xs <- Matrix::Matrix(x, sparse = TRUE)
  for (k in list(exponential_dot_kernel(2), polynomial_kernel(2))) {
    a <- random_features(xs, k, D = 20, method = "maclaurin", seed = 1)
    b <- random_features(x, k, D = 20, method = "maclaurin", seed = 1)
    expect_equal(predict(a, xs), predict(b, x), tolerance = 1e-12)
  }
  map <- random_features(x, gaussian_kernel(1), D = 20, seed = 1)
  expect_equal(kernel_approx_error(map, xs), kernel_approx_error(map, x), tolerance = 1e-12)
  expect_error(random_features(xs, min_kernel(), D = 20),
               "'x' must be non-negative for the min kernel \\(the first negative value is at row")
})

test_that("kernel_matrix() pairs named columns of y with x's by name", {
  d <- data.frame(a = c(0, 1, 2), b = c(0, 10, 20))
  k <- gaussian_kernel(1)
  expect_equal(kernel_matrix(k, d, d[, c("b", "a")]), kernel_matrix(k, d, d))
  expect_error(kernel_matrix(k, d, data.frame(a = 1, z = 2)),
               "'y' must have the columns of 'x'; it lacks b")
  # unnamed columns pair by position
  expect_equal(kernel_matrix(k, as.matrix(d), unname(as.matrix(d))), kernel_matrix(k, d, d),
               ignore_attr = TRUE)
})

test_that("clear messages: sigest in spectral_sample(), a null without variance, kernel PCA", {
  expect_error(spectral_sample(gaussian_kernel("sigest"), 5, 2),
               "sigma = \"sigest\", which is resolved on data")
  expect_warning(p <- mmd_test(matrix(1, 10, 2), matrix(2, 10, 2), kernel = gaussian_kernel(1),
                               method = "exact", null = "gamma")$p.value,
                 "gamma approximation is undefined")
  expect_true(is.na(p))
  set.seed(1)
  x <- matrix(rnorm(200, sd = 30), 50)
  expect_error(kernel_pca(x, exponential_dot_kernel(0.01), method = "exact"),
               "'kernel' gives non-finite values on 'x'")
  p <- kernel_pca(iris[, 1:4], rank = 2)
  expect_error(predict(p, iris[, 1:3]), "the kernel PCA was fitted on 4")
})

test_that("falkon() on chunks with a factor or character column is the in-memory fit", {
  set.seed(1)
  d <- data.frame(a = rnorm(400), g = factor(sample(c("x", "y"), 400, TRUE)))
  d$y <- d$a + (d$g == "y") + rnorm(400, sd = 0.1)
  pieces <- unname(split(d, rep(1:2, each = 200)))
  mem <- falkon(y ~ ., data = d, m = 20, seed = 1)
  ch <- falkon(data_chunks(pieces), y = "y", m = 20, seed = 1)
  expect_equal(ch$rmse, mem$rmse, tolerance = 1e-12)
  expect_equal(predict(ch, d), predict(mem, d), tolerance = 1e-12)
  d$g <- as.character(d$g)
  d$cls <- factor(ifelse(d$y > 0.5, "hi", "lo"))
  pieces <- unname(split(d[c("a", "g", "cls")], rep(1:2, each = 200)))
  mem <- falkon(cls ~ a + g, data = d, m = 20, seed = 1)
  ch <- falkon(data_chunks(pieces), y = "cls", m = 20, seed = 1)
  expect_identical(ch$accuracy, mem$accuracy)
})

test_that("predict() of an rff_gp takes data_chunks(), one prediction per chunk", {
  set.seed(1)
  d <- data.frame(a = rnorm(600), b = runif(600))
  d$y <- sin(d$a) + d$b + rnorm(600, sd = 0.1)
  pieces <- unname(split(d, rep(1:3, each = 200)))
  gp <- rff_gp(data_chunks(pieces), y = "y", D = 32, seed = 1)
  p <- predict(gp, data_chunks(pieces))
  expect_length(p, 3)
  expect_equal(p[[2]], predict(gp, pieces[[2]][c("a", "b")]), ignore_attr = TRUE)
  se <- predict(gp, data_chunks(pieces), se.fit = TRUE)
  expect_equal(se[[3]]$se.fit, predict(gp, pieces[[3]][c("a", "b")], se.fit = TRUE)$se.fit,
               ignore_attr = TRUE)
})

test_that("a chunk's task draws from the session's generators, whatever the worker's", {
  # mirai's daemons run L'Ecuyer-CMRG: the same seed would draw other numbers
  task <- function(raw, i) { set.seed(7); runif(3) }
  want <- { set.seed(7); runif(3) }
  handle <- list(i = 1L, n = 1L, data = matrix(1))
  old <- RNGkind("L'Ecuyer-CMRG")
  on.exit(RNGkind(old[1L], old[2L], old[3L]))
  set.seed(1)
  before <- .Random.seed
  got <- bochner:::chunk_worker(handle, task, list(), source = NULL, reader = NULL,
                                progress = FALSE, what = "test", rng_kind = old)
  expect_identical(got, want)
  expect_identical(.Random.seed, before)          # the worker's generator is back
  expect_identical(RNGkind()[1L], "L'Ecuyer-CMRG")
})

test_that("every chunk needs the same input columns, with or without factor columns", {
  set.seed(1)
  mk <- function() {
    d <- data.frame(a = rnorm(100), b = runif(100), g = factor(sample(c("x", "y"), 100, TRUE)))
    d$y <- d$a + d$b + rnorm(100, sd = 0.1)
    d
  }
  P <- list(mk(), mk())
  Q <- P
  Q[[2]]$extra <- rnorm(100)
  expect_error(rff_ridge(data_chunks(Q), y = "y", D = 16, seed = 1),
               "rff_ridge: chunk 2 has extra that chunk 1 has not; every chunk needs the same")
  N <- lapply(Q, function(p) p[setdiff(names(p), "g")])
  expect_error(rff_ridge(data_chunks(N), y = "y", D = 16, seed = 1),
               "chunk 2 has extra that chunk 1 has not")
  N <- lapply(P, function(p) p[c("a", "b", "y")])
  N[[2]] <- N[[2]][c("b", "a", "y")]
  expect_error(rff_ridge(data_chunks(N), y = "y", D = 16, seed = 1),
               "chunk 2 has chunk 1's columns in another order")
  # with factors the columns are taken by name
  Q <- P
  Q[[2]] <- Q[[2]][c("g", "b", "a", "y")]
  expect_equal(coef(rff_ridge(data_chunks(Q), y = "y", D = 16, seed = 1)),
               coef(rff_ridge(data_chunks(P), y = "y", D = 16, seed = 1)))
})

test_that("simulate() of a formula rff_gp draws at its training rows", {
  set.seed(1)
  d <- data.frame(t = runif(80, 0, 5))
  d$y <- sin(d$t) + rnorm(80, sd = 0.2)
  f <- rff_gp(y ~ t, data = d, D = 64, seed = 1)
  s <- simulate(f, nsim = 2, seed = 1)
  expect_identical(dim(s), c(80L, 2L))
  m <- rff_gp(matrix(d$t, dimnames = list(NULL, "t")), d$y, D = 64, seed = 1)
  expect_equal(unname(as.matrix(s)), unname(as.matrix(simulate(m, nsim = 2, seed = 1))))
})

test_that("a spectral mixture's given weights are the response's variances, as reported", {
  set.seed(5)
  x <- sort(runif(200, 0, 10))
  y <- sin(2 * pi * x / 2.5) + 0.1 * x + rnorm(200, sd = 0.15)
  k <- spectral_mixture_kernel(weights = c(0.5, 0.3), means = c(0, 0.9), scales = c(2, 1.5))
  f <- rff_gp(x, y, kernel = k, method = "exact", optimize = FALSE, noise = 0.2)
  expect_equal(f$hyper$weights, c(0.5, 0.3), tolerance = 1e-12)
  k2 <- spectral_mixture_kernel(weights = f$hyper$weights, means = f$hyper$means,
                                scales = f$hyper$scales)
  f2 <- rff_gp(x, y, kernel = k2, method = "exact", optimize = FALSE, noise = f$hyper$noise)
  expect_equal(f2$logLik, f$logLik, tolerance = 1e-10)
  expect_warning(rff_gp(x, y, kernel = k, method = "exact", optimize = FALSE, noise = 0.2,
                        signal = 3), "'signal' is not used with a spectral mixture")
})

test_that("rff_gp()'s control takes optim()'s L-BFGS-B settings that keep it a maximisation", {
  set.seed(1)
  x <- matrix(runif(100), 50)
  y <- sin(4 * x[, 1]) + rnorm(50, sd = 0.1)
  expect_error(rff_gp(x, y, D = 16, control = list(fnscale = -1)), "does not take: fnscale")
  expect_error(rff_gp(x, y, D = 16, control = list(maxitt = 5)), "does not take: maxitt")
  expect_error(rff_gp(x, y, D = 16, control = list(factr = -1)), "'control\\$factr' must be")
  expect_error(rff_gp(x, y, D = 16, control = list(maxit = 0)), "'control\\$maxit'")
  expect_error(rff_gp(x, y, D = 16, control = list(5)), "must name its entries")
  expect_s3_class(rff_gp(x, y, D = 16, control = list(maxit = 5, factr = 1e7)), "rff_gp")
})

test_that("rff_tune() warns, and print() says, when the best sits at an end of its grid", {
  set.seed(1)
  x <- matrix(rnorm(300), 100)
  y <- x[, 1] + rnorm(100, sd = 0.1)
  expect_warning(t <- rff_tune(x, y, method = "ridge", D = 64, sigma = c(2, 4, 8),
                               lambda = c(1e-3, 1e-2, 1e-1), folds = 3, seed = 1),
                 "is the (smallest|largest) of its grid")
  expect_gt(length(t$edges), 0L)
  expect_output(print(t), "note: .* of its grid")
  # a grid of two is a comparison: no warning for it
  expect_length(bochner:::tune_edges(data.frame(sigma = c(1, 2)), list(sigma = 1), "sigma"), 0L)
})

test_that("nobs() and logLik() leave out rows of weight zero, as lm()", {
  set.seed(13)
  x <- matrix(runif(100, -2, 2), 50)
  y <- sin(2 * x[, 1]) + rnorm(50, sd = 0.3)
  w <- rep(1, 50)
  w[1:10] <- 0
  g <- rff_gp(x, y, weights = w, D = 30, seed = 1, optimize = FALSE)
  expect_identical(nobs(g), 40L)
  expect_identical(attr(logLik(g), "nobs"), 40L)
  expect_identical(nobs(rff_ridge(x, y, weights = w, D = 30, seed = 1)), 40L)
  expect_identical(nobs(lm(y ~ x, weights = w)), 40L)
  expect_error(predict(g, x[1:2, ], interval = "confidence", level = 1),
               "'level' must lie strictly between 0 and 1")
})

test_that("kernel_kmeans()'s exact method, refused for its size, names method = \"rff\"", {
  x <- matrix(rnorm(6e5), 3e5)        # a Gram matrix of 720 GB
  expect_error(kernel_kmeans(x, 3), "use method = \"rff\"")
})
