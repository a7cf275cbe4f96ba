# Randomly pivoted Cholesky (src/rpcholesky.c) against a plain-R reference
# drawing from the same generator, and as Nystrom landmarks.

# The reference: each pivot the first row whose cumulative residual (in
# double, in row order, rows of zero residual skipped) exceeds u times the
# total, u = runif(1); F's column g = K[, s] - F F[s, ]' scaled by
# 1 / sqrt(g[s]).
ref_rpcholesky <- function(K, k) {
  n <- nrow(K)
  res <- pmax(diag(K), 0)
  F <- matrix(0, n, 0)
  piv <- integer(0)
  trace <- numeric(0)
  while (length(piv) < k) {
    total <- Reduce(`+`, res, accumulate = TRUE)[n]
    if (!(total > 0)) break
    u <- runif(1)
    cs <- Reduce(`+`, ifelse(res > 0, res, 0), accumulate = TRUE)
    s <- which(res > 0 & cs > u * total)[1]
    if (is.na(s)) s <- max(which(res > 0))
    g <- K[, s] - if (ncol(F)) drop(F %*% F[s, ]) else 0
    if (!(g[s] > 0)) {
      res[s] <- 0
      next
    }
    g <- g / sqrt(g[s])
    res <- pmax(res - g^2, 0)
    res[s] <- 0
    F <- cbind(F, g)
    piv <- c(piv, s)
    trace <- c(trace, sum(res))
  }
  list(index = piv, trace = trace, F = unname(F))
}

rpc <- function(x, kernel, k, nthreads = 1L) {
  .Call(bochner:::C_rpcholesky, x, bochner:::kernel_code(kernel),
        bochner:::kernel_parameters(kernel), rep(1, nrow(x)), as.integer(k), nthreads)
}

test_that("the pivots, factor and residual trace equal the plain-R reference from the same seed", {
  set.seed(1)
  x <- rbind(matrix(rnorm(300, sd = 0.3), 150), matrix(rnorm(100, mean = 3), 50))
  ker <- gaussian_kernel(1)
  K <- kernel_matrix(ker, x)
  for (k in c(1L, 7L, 40L)) {
    set.seed(k)
    a <- rpc(x, ker, k)
    set.seed(k)
    r <- ref_rpcholesky(K, k)
    expect_identical(a$index, as.integer(r$index))
    expect_equal(a$F, r$F, tolerance = 1e-12)
    expect_equal(a$trace, r$trace, tolerance = 1e-9)
    # the factor reproduces the kernel's columns at the pivots exactly
    expect_equal(a$F %*% t(a$F[a$index, , drop = FALSE]), K[, a$index, drop = FALSE],
                 tolerance = 1e-10)
    # and the residual trace is the trace of K - F F'
    expect_equal(a$trace[k], sum(diag(K)) - sum(a$F^2), tolerance = 1e-9)
  }
  # the same for two threads, bit for bit
  set.seed(3)
  one <- rpc(x, ker, 25L, 1L)
  set.seed(3)
  expect_identical(rpc(x, ker, 25L, 2L), one)
})

test_that("a residual that vanishes stops the pivots early; bad input is refused", {
  x <- rbind(matrix(0, 5, 2), matrix(1, 5, 2))   # two distinct rows
  set.seed(2)
  a <- rpc(x, gaussian_kernel(1), 6L)
  expect_length(a$index, 2L)
  expect_identical(dim(a$F), c(10L, 2L))
  expect_error(rpc(x, gaussian_kernel(1), 11L), "'k'")
  expect_error(.Call(bochner:::C_rpcholesky, x, 1L, 1, rep(1, 3), 2L, 1L), "'diag'")
  expect_error(.Call(bochner:::C_rpcholesky, 1:3, 1L, 1, rep(1, 3), 2L, 1L), "'x'")
  # as landmarks, the pool is topped up uniformly to m distinct rows
  set.seed(2)
  map <- nystrom_features(x, gaussian_kernel(1), m = 4, landmarks = "rpcholesky")
  expect_identical(anyDuplicated(map$index), 0L)
  expect_length(map$index, 4L)
})

test_that("RPCholesky landmarks approximate the kernel better than uniform ones at equal m", {
  # three clusters of very different sizes: uniform landmarks spend most of
  # themselves on the large one.  The trace error tr(K - K_hat) over 20
  # seeds: RPCholesky's mean is below uniform's by more than three standard
  # errors of the difference (measured with m = 30: about 10 against 29; at
  # m = 12, too few for the large cluster, 68 against 76)
  set.seed(4)
  x <- rbind(matrix(rnorm(1600, sd = 0.5), 800), matrix(rnorm(60, 4, 0.5), 30),
             matrix(rnorm(20, -4, 0.5), 10))
  ker <- gaussian_kernel(0.7)
  K <- kernel_matrix(ker, x)
  trace_error <- function(landmarks, seed) {
    map <- nystrom_features(x, ker, m = 30, landmarks = landmarks, seed = seed)
    Z <- predict(map, x)
    sum(diag(K)) - sum(Z^2)
  }
  rp <- vapply(1:20, function(s) trace_error("rpcholesky", s), 0)
  un <- vapply(1:20, function(s) trace_error("uniform", s), 0)
  expect_lt(mean(rp), mean(un) - 3 * sqrt(var(rp) / 20 + var(un) / 20))
  # reproducible with seed, and through falkon()
  expect_identical(trace_error("rpcholesky", 7), trace_error("rpcholesky", 7))
  y <- sin(x[, 1]) + rnorm(nrow(x), sd = 0.1)
  f1 <- falkon(x, y, m = 20, landmarks = "rpcholesky", seed = 5)
  f2 <- falkon(x, y, m = 20, landmarks = "rpcholesky", seed = 5)
  expect_identical(f1$alpha, f2$alpha)
  expect_error(falkon(x, y, landmarks = "pivoted"), "'landmarks'")
})
