# Randomly pivoted Cholesky landmarks (src/rpcholesky.c: the block form with
# rejection sampling) against a plain-R reference drawing from the same
# generator, and as the landmarks of nystrom_features(), falkon(),
# step_nystrom() and kernel_kmeans().

# The reference, written from the papers (Chen, Epperly, Tropp & Webber 2025;
# Epperly, Tropp & Webber 2024): the residual diagonal r of the partial
# factor F starts at diag(K).  Each round draws b candidates from r (u * sum(r)
# located in cumsum(r)), forms their residual block G = K_SS - F_S F_S', and
# examines them in order with one uniform each: candidate a is accepted when
# u * r[s_a] < G[a, a], G then Schur-complemented on a.  The accepted pivots
# T extend F by H L^-T, H = K[, T] - F F_T', L L' = H[T, ].  b = 1: one
# candidate, always accepted, no rejection uniform (sequential RPCholesky).
# Residuals at most 64 eps max(diag K) count as zero; 20 rounds in a row
# with nothing accepted stop it.  Returns the pivots and the residual trace.
# start: NULL, or a result to continue from (its factor, residual and pivots).
ref_rpcholesky <- function(K, m, b = 1L, start = NULL) {
  n <- nrow(K)
  dg <- diag(K)
  zero <- 64 * .Machine$double.eps * max(dg, 0)
  r <- ifelse(dg > zero, dg, 0)
  F <- matrix(0, n, m)
  nf <- 0L
  piv <- integer()
  if (!is.null(start)) {
    piv <- start$index
    nf <- length(piv)
    F[, seq_len(nf)] <- start$F[, seq_len(nf)]
    r <- start$r
  }
  empty <- 0L
  while (nf < m) {
    cum <- cumsum(r)
    total <- cum[n]
    if (!(total > 0)) break
    locate <- function(u) {
      i <- findInterval(u * total, cum) + 1L
      if (i > n) i <- max(which(r > 0))
      i
    }
    old <- seq_len(nf)
    if (b == 1L) {
      T <- locate(runif(1))
    } else {
      S <- vapply(runif(b), locate, 1L)
      G <- K[S, S] - F[S, old, drop = FALSE] %*% t(F[S, old, drop = FALSE])
      T <- integer()
      for (a in seq_len(b)) {
        if (length(T) == m - nf) break
        u <- runif(1)
        if (S[a] %in% T || !(G[a, a] > 0) || !(u * r[S[a]] < G[a, a])) next
        T <- c(T, S[a])
        if (a < b) {
          i <- (a + 1L):b
          G[i, i] <- G[i, i] - outer(G[i, a], G[a, i]) / G[a, a]
        }
      }
      if (length(T) == 0L) {
        empty <- empty + 1L
        if (empty == 20L) break
        next
      }
      empty <- 0L
    }
    H <- K[, T, drop = FALSE] - F[, old, drop = FALSE] %*% t(F[T, old, drop = FALSE])
    L <- t(chol(H[T, , drop = FALSE]))
    Fn <- t(forwardsolve(L, t(H)))
    F[, nf + seq_along(T)] <- Fn
    r <- r - rowSums(Fn^2)
    r[r <= zero] <- 0
    r[T] <- 0
    piv <- c(piv, T)
    nf <- nf + length(T)
  }
  list(index = piv, trace = sum(r), F = F[, seq_len(nf), drop = FALSE], r = r)
}

rpc_call <- function(x, kernel, m, block, nthreads = 1L, state = NULL, keep = FALSE) {
  storage.mode(x) <- "double"
  .Call(bochner:::C_rpcholesky, x, bochner:::kernel_code(kernel),
        bochner:::kernel_parameters(kernel), as.double(diag(kernel_matrix(kernel, x))),
        as.integer(m), as.integer(block), as.integer(nthreads), state, keep)
}

# trace(K - K_hat) for the Nystrom approximation on the rows P (K_PP of full rank)
nystrom_trace <- function(K, P) {
  KP <- K[, P, drop = FALSE]
  sum(diag(K)) - sum(KP * t(solve(K[P, P, drop = FALSE], t(KP))))
}

set.seed(21)
xr <- rbind(matrix(rnorm(120, sd = 0.5), 60), matrix(rnorm(30, 3), 15))

test_that("the pivots are the plain-R reference's from the same seed", {
  kernels <- list(gaussian_kernel(1), laplace_kernel(2), matern_kernel(1, nu = 2.5),
                  polynomial_kernel(2))
  for (kern in kernels) for (block in c(1L, 7L, 50L)) for (m in c(1L, 12L, 75L)) {
    label <- paste(kern$name, block, m)
    K <- kernel_matrix(kern, xr)
    set.seed(5)
    got <- rpc_call(xr, kern, m, block)
    after_c <- runif(1)
    set.seed(5)
    ref <- ref_rpcholesky(K, m, block)
    after_r <- runif(1)
    expect_identical(got$index, as.integer(ref$index), label = label)
    # the two sum in different orders: rounding of a few eps per entry and pivot
    expect_lt(abs(got$trace - ref$trace), 1e-8 * sum(diag(K)), label = label)
    # the same uniforms were drawn: the generator is where the reference left it
    expect_identical(after_c, after_r, label = label)
  }
  # the polynomial kernel of degree 2 in 2 dimensions has rank 6: the
  # residual vanishes after 6 pivots
  set.seed(1)
  expect_length(rpc_call(xr, polynomial_kernel(2), 20, 1L)$index, 6L)
  # one row; one column
  set.seed(2)
  expect_identical(rpc_call(matrix(0.5), gaussian_kernel(1), 1, 50)$index, 1L)
  x1 <- matrix(xr[, 1])
  set.seed(3)
  got <- rpc_call(x1, gaussian_kernel(0.3), 10, 4)
  set.seed(3)
  expect_identical(got$index, as.integer(ref_rpcholesky(kernel_matrix(gaussian_kernel(0.3), x1),
                                                        10, 4)$index))
})

test_that("a run continued from its state draws what the reference continues to draw", {
  kern <- gaussian_kernel(1)
  K <- kernel_matrix(kern, xr)
  for (block in c(1L, 7L, 50L)) for (mm in list(c(5L, 30L), c(12L, 45L), c(30L, 31L))) {
    label <- paste(block, mm[1], mm[2])
    set.seed(5)
    a <- rpc_call(xr, kern, mm[1], block, keep = TRUE)
    b <- rpc_call(xr, kern, mm[2], block, state = a$state, keep = TRUE)
    after_c <- runif(1)
    set.seed(5)
    ra <- ref_rpcholesky(K, mm[1], block)
    rb <- ref_rpcholesky(K, mm[2], block, start = ra)
    after_r <- runif(1)
    expect_identical(b$index, as.integer(rb$index), label = label)
    expect_identical(b$index[seq_len(mm[1])], a$index, label = label)
    expect_identical(after_c, after_r, label = label)
    # the state: the factor (a row's per column), the residual, the pivots; the
    # two sum in different orders (entries of F are at most 1 here)
    expect_identical(dim(b$state$F), c(mm[2], nrow(xr)))
    expect_lt(max(abs(t(b$state$F) - rb$F)), 1e-9, label = label)
    expect_lt(max(abs(b$state$r - rb$r)), 1e-9, label = label)
    expect_identical(b$state$index, b$index)
    expect_lt(abs(b$trace - nystrom_trace(K, b$index)), 1e-8 * sum(diag(K)), label = label)
  }
  # no state returned unless kept; a state that does not fit is refused
  set.seed(1)
  expect_null(rpc_call(xr, kern, 4, 5L)$state)
  st <- rpc_call(xr, kern, 4, 5L, keep = TRUE)$state
  expect_error(rpc_call(xr, kern, 3, 5L, state = st), "'state' does not match")
  expect_error(rpc_call(xr[-1, ], kern, 6, 5L, state = st), "'state' does not match")
  expect_error(rpc_call(xr, kern, 6, 5L, state = list(1)), "'state' must be")
  # a run whose residual vanished keeps the pivots it found; continuing adds none
  x <- xr[rep(1:5, 4), ]
  set.seed(6)
  s5 <- rpc_call(x, kern, 8, 50L, keep = TRUE)
  expect_identical(dim(s5$state$F), c(5L, nrow(x)))
  expect_identical(rpc_call(x, kern, 12, 50L, state = s5$state)$index, s5$index)
})

test_that("the grower's pivots are nested, whatever the steps", {
  kern <- gaussian_kernel(1)
  g <- function(steps) {
    set.seed(3)
    gr <- bochner:::rpcholesky_grower(kern, xr, 10000, 1L)
    lapply(steps, gr$pivots)
  }
  a <- g(c(10L, 40L, 60L))
  expect_identical(a[[2]][1:10], a[[1]])
  expect_identical(a[[3]][1:40], a[[2]])
  expect_identical(anyDuplicated(a[[3]]), 0L)
  # a smaller step after a larger one is its prefix, with no draws
  set.seed(3)
  gr <- bochner:::rpcholesky_grower(kern, xr, 10000, 1L)
  p40 <- gr$pivots(40L)
  before <- .Random.seed
  expect_identical(gr$pivots(15L), p40[1:15])
  expect_identical(.Random.seed, before)
  # released, it serves what it has and refuses more
  gr$release()
  expect_identical(gr$pivots(40L), p40)
  expect_error(gr$pivots(41L), "released")
  # duplicated rows: the shortfall is topped up from the pool and kept
  x <- xr[rep(1:5, 4), ]
  set.seed(4)
  gd <- bochner:::rpcholesky_grower(kern, x, 10000, 1L)
  p8 <- gd$pivots(8L)
  p12 <- gd$pivots(12L)
  expect_identical(p12[1:8], p8)
  expect_identical(anyDuplicated(p12), 0L)
})

test_that("the trace returned is trace(K - K_hat) on distinct pivots, whatever the threads", {
  kern <- gaussian_kernel(0.8)
  K <- kernel_matrix(kern, xr)
  for (block in c(1L, 10L)) {
    set.seed(4)
    got <- rpc_call(xr, kern, 30, block)
    expect_identical(anyDuplicated(got$index), 0L)
    expect_lt(abs(got$trace - nystrom_trace(K, got$index)), 1e-8 * sum(diag(K)))
    # bit for bit with two threads
    set.seed(4)
    expect_identical(rpc_call(xr, kern, 30, block, nthreads = 2L), got)
  }
  # every row: nothing left
  set.seed(5)
  all <- rpc_call(xr, kern, nrow(xr), 10L)
  expect_setequal(all$index, seq_len(nrow(xr)))
  expect_lt(all$trace, 1e-8 * nrow(xr))
})

test_that("nystrom_features(landmarks = \"rpcholesky\") takes the reference's rows", {
  kern <- gaussian_kernel(1.5)
  set.seed(11)
  map <- nystrom_features(xr, kern, m = 20, landmarks = "rpcholesky")
  set.seed(11)
  ref <- ref_rpcholesky(kernel_matrix(kern, xr), 20, 50)
  expect_identical(map$index, as.integer(ref$index))
  expect_identical(map$method, "rpcholesky")
  # the Nystrom error of the map is the trace the factorisation ends with
  Z <- predict(map, xr)
  expect_lt(abs(nrow(xr) - sum(Z^2) - ref$trace), 1e-8 * nrow(xr))
  # seed = and set.seed() give the same map; the thread count changes nothing
  a <- nystrom_features(xr, kern, m = 20, landmarks = "rpcholesky", seed = 9, nthreads = 1)
  b <- nystrom_features(xr, kern, m = 20, landmarks = "rpcholesky", seed = 9, nthreads = 2)
  set.seed(9)
  c <- nystrom_features(xr, kern, m = 20, landmarks = "rpcholesky")
  expect_identical(a$index, b$index)
  expect_identical(a$index, c$index)
})

test_that("a residual that vanishes stops the pivots early; the rest are drawn uniformly", {
  x <- xr[rep(1:5, 4), ]
  set.seed(6)
  expect_length(rpc_call(x, gaussian_kernel(1), 12, 50)$index, 5L)
  map <- nystrom_features(x, gaussian_kernel(1), m = 12, landmarks = "rpcholesky", seed = 6)
  expect_identical(length(unique(map$index)), 12L)
  expect_identical(map$rank, 5L)
  expect_lt(kernel_approx_error(map, x)$max, 1e-8)
  # two distinct rows, sequential form
  x2 <- rbind(matrix(0, 5, 2), matrix(1, 5, 2))
  set.seed(2)
  expect_length(rpc_call(x2, gaussian_kernel(1), 6, 1L)$index, 2L)
})

test_that("over max(4 m, 10000) rows the pivots come from a uniform subsample", {
  set.seed(8)
  x <- matrix(runif(10100), ncol = 1)
  a <- nystrom_features(x, gaussian_kernel(0.1), m = 5, landmarks = "rpcholesky", seed = 2)
  b <- nystrom_features(x, gaussian_kernel(0.1), m = 5, landmarks = "rpcholesky", seed = 2)
  expect_identical(a$index, b$index)
  expect_identical(anyDuplicated(a$index), 0L)
  expect_true(all(a$index >= 1L & a$index <= 10100L))
  # the pool is the first draw of the stream
  set.seed(2)
  pool <- sort(sample.int(10100, 10000))
  expect_true(all(a$index %in% pool))
})

test_that("the Nystrom error is below uniform's on clusters and within the theorem's bound", {
  # a large cluster and 12 small ones far apart: uniform landmarks spend most
  # of themselves on the large one
  set.seed(12)
  centres <- 8 * cbind(cos(2 * pi * (1:12) / 12), sin(2 * pi * (1:12) / 12))
  x <- rbind(matrix(rnorm(400, sd = 0.4), ncol = 2),
             centres[rep(1:12, each = 5), ] + matrix(rnorm(120, sd = 0.4), ncol = 2))
  kern <- gaussian_kernel(0.8)
  K <- kernel_matrix(kern, x)
  m <- 30
  seeds <- 1:60
  rpc <- vapply(seeds, function(s) { set.seed(s); rpc_call(x, kern, m, 50)$trace }, 0)
  uni <- vapply(seeds, function(s) { set.seed(s); nystrom_trace(K, sample.int(nrow(x), m)) }, 0)
  # E[uniform's error] >= E[RPCholesky's]: the mean paired difference is
  # above zero by more than 3 of its standard errors (by the central limit
  # theorem a false failure has probability about 0.1 %, were the seeds not
  # fixed); measured, a mean of 15 against 42, 39 standard errors apart
  diff <- uni - rpc
  expect_gt(mean(diff), 3 * sd(diff) / sqrt(length(diff)))
  # Chen et al. (2025), Theorem 3.1 with epsilon = 1: for m >= r + r log(1 / eta),
  # E trace(K - K_hat) <= 2 trace(K - [[K]]_r), eta = trace(K - [[K]]_r) / trace(K);
  # the mean of 60 draws estimates the expectation, to 3 standard errors
  lambda <- pmax(eigen(K, symmetric = TRUE, only.values = TRUE)$values, 0)
  tail_r <- rev(cumsum(rev(lambda)))[-1L]   # tail_r[r] = sum of lambda beyond r
  r_ok <- which(seq_along(tail_r) + seq_along(tail_r) * log(sum(lambda) / tail_r) <= m)
  r <- max(r_ok)
  expect_gte(r, 5L)
  expect_lt(mean(rpc), 2 * tail_r[r] + 3 * sd(rpc) / sqrt(length(rpc)))
  # through nystrom_features(), the same comparison on its features
  err <- function(landmarks, seed) {
    Z <- predict(nystrom_features(x, kern, m = m, landmarks = landmarks, seed = seed), x)
    sum(diag(K)) - sum(Z^2)
  }
  rp <- vapply(1:20, function(s) err("rpcholesky", s), 0)
  un <- vapply(1:20, function(s) err("uniform", s), 0)
  expect_gt(mean(un - rp), 3 * sd(un - rp) / sqrt(20))
})

test_that("falkon and step_nystrom take rpcholesky centres, reproducibly", {
  set.seed(13)
  x <- matrix(runif(600, -2, 2), ncol = 2)
  y <- sin(2 * x[, 1]) + x[, 2]^2 + rnorm(300, sd = 0.1)
  a <- falkon(x, y, m = 40, landmarks = "rpcholesky", seed = 3)
  b <- falkon(x, y, m = 40, landmarks = "rpcholesky", seed = 3)
  expect_identical(a$centres, b$centres)
  expect_identical(a$alpha, b$alpha)
  expect_identical(nrow(a$centres), 40L)
  expect_identical(anyDuplicated(a$centres), 0L)
  expect_lt(a$rmse, 0.3)
  skip_if_not_installed("recipes")
  rec <- step_nystrom(recipes::recipe(~ ., data = data.frame(x)), recipes::all_predictors(),
                      num_features = 10, landmarks = "rpcholesky", seed = 1)
  baked <- recipes::bake(recipes::prep(rec), new_data = NULL)
  expect_identical(ncol(baked), 10L)
})

test_that("falkon's default centres: RPCholesky on clustered classes, else the uniform fit", {
  # two inputs: 256 RPCholesky pivots leave a residual trace far below half
  # of 256 uniform centres' (bench/investigations/rpcholesky-auto.md, A)
  set.seed(14)
  n <- 3000
  x2 <- matrix(rnorm(2 * n), ncol = 2)
  y2 <- factor(ifelse(x2[, 1] * x2[, 2] > 0, "a", "b"))
  f <- falkon(x2, y2, seed = 1)
  expect_identical(f$landmarks, "rpcholesky")
  expect_identical(f$centres_path$m[1], 256)
  expect_true(all(f$centres_path$landmarks == "rpcholesky"))
  expect_identical(falkon(x2, y2, seed = 1)$alpha, f$alpha)
  expect_gt(mean(predict(f, x2) == y2), 0.97)
  expect_output(print(f), "randomly pivoted")
  u <- falkon(x2, y2, seed = 1, landmarks = "uniform")
  expect_identical(u$landmarks, "uniform")
  expect_false(identical(u$centres, f$centres))
  # ten inputs: no gain, and the fit is the uniform one, bit for bit (the
  # probe's draws are undone); regression never probes
  x10 <- matrix(rnorm(10 * n), ncol = 10)
  y10 <- factor(x10[, 1] + x10[, 2] > 0)
  a <- falkon(x10, y10, seed = 2)
  u <- falkon(x10, y10, seed = 2, landmarks = "uniform")
  expect_identical(a$landmarks, "uniform")
  expect_identical(a$centres, u$centres)
  expect_identical(a$alpha, u$alpha)
  yr <- sin(2 * x2[, 1]) + x2[, 2] + rnorm(n, sd = 0.1)
  a <- falkon(x2, yr, seed = 3)
  u <- falkon(x2, yr, seed = 3, landmarks = "uniform")
  expect_identical(a$landmarks, "uniform")
  expect_identical(a$alpha, u$alpha)
  # the growth's centres: RPCholesky pivots nested up to falkon_rpc_most,
  # uniform centres beyond
  ns <- asNamespace("bochner")
  kern <- ns$resolve_kernel(gaussian_kernel(1), x2)
  # (64 pivots leave 5e-4 of the trace here, 64 uniform centres 4e-3)
  ctl <- falkon_control(start_centers = 64)
  at <- function(idx, k) x2[idx, , drop = FALSE]
  set.seed(5)
  pick <- ns$falkon_growth_centres("auto", 1100L, n, x2, at, kern, TRUE, ctl, 1L)
  p64 <- pick(64L)
  p256 <- pick(256L)
  expect_identical(p64$rule, "rpcholesky")
  expect_true(p64$nested)
  expect_identical(p256$centres[1:64, ], p64$centres)
  expect_identical(pick(1100L)$rule, "uniform")
  expect_identical(ns$falkon_growth_centres("auto", 1100L, n, x2, at, kern, FALSE, ctl,
                                            1L)(64L)$rule, "uniform")
})

test_that("bad input is refused with a clear message", {
  expect_error(nystrom_features(xr, gaussian_kernel(1), m = 5, landmarks = "cholesky"),
               "landmarks.*rpcholesky")
  expect_error(falkon(xr, xr[, 1], m = 5, landmarks = "pivoted"), "landmarks.*rpcholesky")
  expect_error(nystrom_features(xr, gaussian_kernel(1), m = 100, landmarks = "rpcholesky"),
               "m")
  kern <- gaussian_kernel(1)
  call <- function(x = xr, diag = rep(1, nrow(xr)), m = 3L, block = 5L) {
    .Call(bochner:::C_rpcholesky, x, bochner:::kernel_code(kern),
          bochner:::kernel_parameters(kern), diag, m, block, 1L, NULL, FALSE)
  }
  expect_error(call(m = 76L), "'m' must be at most the number of rows")
  expect_error(call(m = 0L), "'m'")
  expect_error(call(block = 0L), "'block'")
  expect_error(call(x = as.vector(xr)), "double matrix")
  expect_error(call(diag = 1), "one value per row")
})

test_that("a factor larger than the memory guard allows is refused before it is allocated", {
  # pool x m doubles: 10000 x 100 here (8 MB) against a 4 MB limit; falkon's own
  # guard counts its m x m objects (0.1 MB), not the pivoting's factor
  set.seed(15)
  x <- matrix(rnorm(20000 * 2), 20000)
  old <- options(bochner.max_bytes = 4e6)
  on.exit(options(old))
  expect_error(falkon(x, x[, 1], m = 100, landmarks = "rpcholesky", seed = 1),
               "'m' is too large: landmarks = \"rpcholesky\" would need .*the factor 10000 x 100")
  options(bochner.max_bytes = 2e7)
  expect_s3_class(falkon(x, x[, 1], m = 100, landmarks = "rpcholesky", seed = 1), "falkon")
})

test_that("kernel_kmeans(method = \"nystrom\") takes the landmark rule", {
  set.seed(14)
  x <- rbind(matrix(rnorm(100, sd = 0.3), 50), matrix(rnorm(100, 3, 0.3), 50))
  a <- kernel_kmeans(x, 2, gaussian_kernel(1), method = "nystrom", m = 20,
                     landmarks = "rpcholesky", seed = 2)
  set.seed(2)
  map <- nystrom_features(x, gaussian_kernel(1), m = 20, landmarks = "rpcholesky")
  expect_identical(a$map$index, map$index)
  expect_identical(as.vector(table(a$cluster)), c(50L, 50L))
  # the default is still uniform
  u <- kernel_kmeans(x, 2, gaussian_kernel(1), method = "nystrom", m = 20, seed = 2)
  expect_identical(u$map$method, "uniform")
  expect_error(kernel_kmeans(x, 2, gaussian_kernel(1), method = "nystrom", m = 20,
                             landmarks = "pivots"), "landmarks")
})
