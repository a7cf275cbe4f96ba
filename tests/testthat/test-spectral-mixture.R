# The spectral mixture kernel against the formula of design.md section 2.7,
# written in plain R: k(tau) = sum_q w_q cos(2 pi tau.mu_q) prod_p exp(-tau_p^2 / (2 l_qp^2)).

ref_sm <- function(k, x, y = x) {
  out <- matrix(0, nrow(x), nrow(y))
  for (i in seq_len(nrow(x))) for (j in seq_len(nrow(y))) {
    tau <- x[i, ] - y[j, ]
    out[i, j] <- sum(sapply(seq_along(k$weights), function(q) {
      k$weights[q] * cos(2 * pi * sum(tau * k$means[q, ])) *
        prod(exp(-tau^2 / (2 * k$scales[q, ]^2)))
    }))
  }
  out
}

sm2 <- function() {
  spectral_mixture_kernel(weights = c(0.6, 0.3, 0.1),
                          means = rbind(c(0, 0), c(0.5, -0.2), c(1.2, 0.4)),
                          scales = rbind(c(2, 1), c(1.5, 3), c(0.7, 0.9)))
}

test_that("kernel_matrix of a spectral mixture matches the formula", {
  set.seed(1)
  x <- matrix(rnorm(14), 7, 2)
  y <- matrix(rnorm(6), 3, 2)
  k <- sm2()
  expect_equal(kernel_matrix(k, x), ref_sm(k, x), tolerance = 1e-12)
  expect_equal(kernel_matrix(k, x, y), ref_sm(k, x, y), tolerance = 1e-12)
  expect_equal(diag(kernel_matrix(k, x)), rep(1, 7))       # k(0) = sum of weights
  # one input, a vector per parameter; edge case of one row and one point
  k1 <- spectral_mixture_kernel(weights = 2, means = 0.3, scales = 4)
  expect_equal(kernel_matrix(k1, 1.5, 0)[1, 1], 2 * cos(2 * pi * 0.45) * exp(-1.5^2 / 32))
})

test_that("spectral_sample draws from the mixture: E cos(w.tau) = k(tau) / k(0)", {
  k <- sm2()
  set.seed(2)
  N <- 40000
  w <- spectral_sample(k, N, 2)
  expect_equal(dim(w), c(N, 2L))
  taus <- rbind(c(0.3, 0.1), c(1, -0.5), c(-0.4, 1.2))
  for (i in seq_len(nrow(taus))) {
    v <- cos(w %*% taus[i, ])
    target <- ref_sm(k, taus[i, , drop = FALSE], matrix(0, 1, 2))[1, 1] / sum(k$weights)
    # the CLT: the mean is within 4 standard errors
    expect_lt(abs(mean(v) - target), 4 * sd(v) / sqrt(N))
  }
  set.seed(3); a <- spectral_sample(k, 10, 2)
  set.seed(3); b <- spectral_sample(k, 10, 2)
  expect_identical(a, b)
})

test_that("random features of a spectral mixture approximate its kernel, scaled by k(0)", {
  k <- spectral_mixture_kernel(weights = c(1.5, 0.5), means = c(0, 0.8), scales = c(2, 3))
  set.seed(4)
  x <- matrix(runif(40, -2, 2), 40, 1)
  D <- 4000
  map <- random_features(x, k, D = D, type = "pair")
  Z <- predict(map, x)
  K <- kernel_matrix(k, x)
  # each term of the pair estimate lies in [-k(0), k(0)]: Hoeffding at level 1e-6
  # over the 1600 pairs gives |error| <= k(0) sqrt(2 log(2 / 1e-6) / D)
  expect_lt(max(abs(tcrossprod(Z) - K)), 2 * sqrt(2 * log(2e6) / D))
  expect_equal(diag(tcrossprod(Z)), rep(2, 40), tolerance = 1e-12)
})

test_that("an unresolved spectral mixture is resolved on the data where there is one", {
  set.seed(5)
  x <- matrix(rnorm(60), 30, 2)
  k <- spectral_mixture_kernel(q = 3)
  K <- kernel_matrix(k, x)
  expect_equal(diag(K), rep(1, 30))
  expect_equal(K, t(K))
  expect_gt(min(eigen(K, only.values = TRUE)$values), -1e-8)
  map <- random_features(x, k, D = 20)
  expect_equal(ncol(map$kernel$means), 2L)
  expect_output(print(k), "Q = 3 components \\(resolved on the data\\)")
  expect_output(print(sm2()), "Spectral mixture kernel")
})

test_that("the spectral mixture refuses bad input, naming the argument", {
  expect_error(spectral_mixture_kernel(q = 0), "'q'")
  expect_error(spectral_mixture_kernel(weights = 1, means = 0), "'scales'")
  expect_error(spectral_mixture_kernel(weights = c(-1, 2), means = 1:2, scales = 1:2),
               "'weights'")
  expect_error(spectral_mixture_kernel(weights = c(1, 2), means = 1:3, scales = 1:2), "'means'")
  expect_error(spectral_mixture_kernel(weights = c(1, 2), means = 1:2, scales = c(1, 0)),
               "'scales'")
  expect_error(spectral_sample(spectral_mixture_kernel(2), 5, 1), "'kernel'")
  expect_error(spectral_sample(sm2(), 5, 3), "do not fit 3 input columns")
  x <- matrix(rnorm(20), 10, 2)
  expect_error(kernel_matrix(sm2(), x[, 1, drop = FALSE]), "kernel_matrix")
  expect_error(random_features(x, sm2(), D = 8, sampling = "qmc"), "'sampling'")
  expect_error(random_features(x, sm2(), D = 8, sampling = "orthogonal"), "'sampling'")
})

test_that("kernel_matrix of a spectral mixture is the same for any thread count", {
  set.seed(6)
  x <- matrix(rnorm(600), 300, 2)
  expect_identical(kernel_matrix(sm2(), x, nthreads = 1), kernel_matrix(sm2(), x, nthreads = 2))
})

test_that("a spectral mixture on one input starts from six variants of the spectrum", {
  t <- seq(0, 10, length.out = 200)
  y <- drop(scale(0.3 * t + sin(2 * pi * t) + 0.5 * sin(4 * pi * t)))
  st <- bochner:::sm_starts(spectral_mixture_kernel(q = 4), matrix(t), y)
  expect_length(st, 6L)
  base <- st[[1L]]
  # the periodogram finds 1 and 2 cycles per unit, component 1 is the trend
  expect_equal(base$means[1], 0)
  expect_equal(sort(base$means[2:3]), c(1, 2), tolerance = 0.02)
  split <- st[[2L]]
  expect_equal(split$means[4], 0)
  expect_equal(split$scales[4], diff(range(t)) / 10)
  expect_equal(sum(split$weights), sum(base$weights))
  expect_equal(st[[3L]]$scales, 3 * base$scales)
  # two components, or several inputs: one start
  expect_length(bochner:::sm_starts(spectral_mixture_kernel(q = 2), matrix(t), y), 1L)
  # rff_gp screens every start with a short search and continues the best:
  # the end is at least as likely as every screened start (at D = 60 the
  # screening uses all the frequencies, so the likelihoods are comparable)
  fit <- rff_gp(t, y, kernel = spectral_mixture_kernel(q = 3), D = 60, seed = 1, scale = FALSE)
  expect_length(fit$optim$screen, 6L)
  expect_gte(-fit$optim$value, max(fit$optim$screen) - 1e-8)
  # and not worse than one full search from the periodogram's start
  one <- rff_gp(t, y, kernel = bochner:::sm_initialise(spectral_mixture_kernel(q = 3),
                                                       matrix(t), y),
                D = 60, seed = 1, scale = FALSE)
  expect_gte(as.numeric(logLik(fit)), as.numeric(logLik(one)) - 1)
})

test_that("the screened multistart keeps every component's share of the frequencies", {
  P <- list(comp = sort(rep_len(1:4, 2048)), Dq = rep(512L, 4), eps = matrix(rnorm(2048), 1),
            n = 100)
  small <- bochner:::gp_fewer_frequencies(P, 8L)
  expect_identical(small$Dq, rep(64L, 4))
  expect_identical(ncol(small$eps), 256L)
  expect_identical(small$eps[1, 1:64], P$eps[1, 1:64])
  # a small D is not cut below 128 frequencies
  P2 <- list(comp = sort(rep_len(1:3, 60)), Dq = rep(20L, 3), eps = matrix(rnorm(60), 1), n = 100)
  expect_identical(ncol(bochner:::gp_fewer_frequencies(P2, 8L)$eps), 60L)
})
