# mmd_test(), hsic_test(), kernel_pca(), kernel_cca() against plain-R
# references written from the formulas (design.md 2.7), and against
# kernlab, dHSIC and stats::cancor() where installed.

ref_mmd_u <- function(K, m) {
  n <- nrow(K) - m
  ix <- seq_len(m)
  iy <- m + seq_len(n)
  Kxx <- K[ix, ix]
  Kyy <- K[iy, iy]
  (sum(Kxx) - sum(diag(Kxx))) / (m * (m - 1)) + (sum(Kyy) - sum(diag(Kyy))) / (n * (n - 1)) -
    2 * mean(K[ix, iy])
}

ref_hsic <- function(K, L) {
  n <- nrow(K)
  H <- diag(n) - 1 / n
  sum(diag(K %*% H %*% L %*% H)) / n^2
}

two_samples <- function(m = 30, n = 40, d = 2, shift = 0.5) {
  set.seed(11)
  list(x = matrix(rnorm(m * d), m, d), y = matrix(rnorm(n * d, mean = shift), n, d))
}

test_that("exact MMD^2 is the U-statistic, and its biased form is kernlab's", {
  s <- two_samples()
  k <- gaussian_kernel(1.3)
  r <- mmd_test(s$x, s$y, k, method = "exact", B = 20, seed = 1)
  K <- ref_kernel(k, rbind(s$x, s$y))
  expect_equal(unname(r$statistic), ref_mmd_u(K, 30), tolerance = 1e-12)
  biased <- mean(K[1:30, 1:30]) + mean(K[31:70, 31:70]) - 2 * mean(K[1:30, 31:70])
  expect_equal(unname(r$estimate), biased, tolerance = 1e-12)
  expect_s3_class(r, "htest")
  skip_if_not_installed("kernlab")
  km <- suppressMessages(kernlab::kmmd(s$x, s$y, kernel = "rbfdot",
                                       kpar = list(sigma = 1 / (2 * 1.3^2))))
  expect_lt(abs(unname(r$estimate) / kernlab::mmdstats(km)[1]^2 - 1), 1e-10)
})

test_that("MMD^2 on features equals the U-statistic of the kernel z(x).z(y)", {
  s <- two_samples()
  for (method in c("rff", "nystrom")) {
    size <- if (method == "nystrom") list(m = 25) else list(D = 25)
    r <- do.call(mmd_test, c(list(s$x, s$y, gaussian_kernel(1), method = method, B = 10,
                                  seed = 2), size))
    Z <- predict(r$map, rbind(s$x, s$y))
    expect_equal(unname(r$statistic), ref_mmd_u(tcrossprod(Z), 30), tolerance = 1e-10)
    g <- do.call(mmd_test, c(list(s$x, s$y, gaussian_kernel(1), method = method,
                                  null = "gamma", seed = 2), size))
    expect_equal(unname(g$statistic), unname(r$statistic), tolerance = 1e-10)
  }
})

test_that("the permutation C routines agree and draw uniform splits", {
  s <- two_samples()
  k <- gaussian_kernel(1)
  # the same splits (same seed): the Gram path on ZZ' and the feature stream
  r <- mmd_test(s$x, s$y, k, method = "rff", D = 20, B = 50, seed = 3)
  Z <- predict(r$map, rbind(s$x, s$y))
  set.seed(3)
  invisible(random_features(s$x, k, D = 20))   # advance the stream past the map's draws
  g <- .Call(bochner:::C_mmd_perm_gram, tcrossprod(Z), 30L, 50L, 1L)
  K <- tcrossprod(Z)
  via_gram <- bochner:::mmd_from_sums(g$a, g$b, g$d, sum(K), sum(diag(K)), 30, 40)
  expect_equal(via_gram[-1L], r$null_statistics, tolerance = 1e-10)
  expect_equal(via_gram[1L], unname(r$statistic), tolerance = 1e-10)
  # 4 rows into 2 + 2: six splits, each as likely (chi-square, 5 d.o.f.)
  K4 <- ref_kernel(k, rbind(s$x[1:2, ], s$y[1:2, ]))
  splits <- utils::combn(4, 2)
  values <- apply(splits, 2L, function(i) ref_mmd_u(K4[c(i, setdiff(1:4, i)), c(i, setdiff(1:4, i))], 2))
  set.seed(4)
  g4 <- .Call(bochner:::C_mmd_perm_gram, K4, 2L, 1200L, 1L)
  null <- bochner:::mmd_from_sums(g4$a, g4$b, g4$d, sum(K4), sum(diag(K4)), 2, 2)[-1L]
  hit <- vapply(null, function(v) which.min(abs(values - v)), 1L)
  expect_true(all(abs(values[hit] - null) < 1e-12))
  # splits {1,2} and {3,4} give the same statistic (the groups swap): pool them
  counts <- tabulate(hit, 6)
  pooled <- c(counts[1] + counts[6], counts[2] + counts[5], counts[3] + counts[4])
  expect_gt(stats::chisq.test(pooled)$p.value, 1e-3)
})

# The C folds over feature blocks, as R drives them: the MMD's (labels
# drawn at the start) and the centred cross product's.
mmd_fold <- function(zs, N, m, B, nthreads) {
  bits <- .Call(bochner:::C_mmd_draw, as.double(N), as.double(m), B)
  st <- .Call(bochner:::C_mmd_fold_start, bits, 0, as.double(N), as.double(m), B, ncol(zs[[1L]]))
  for (z in zs) st <- .Call(bochner:::C_mmd_fold_step, st, z, nthreads)
  .Call(bochner:::C_mmd_fold_finish, st)
}
moments_fold <- function(zs, nthreads, single = FALSE) {
  st <- NULL
  for (z in zs) st <- .Call(bochner:::C_stat_moments_step, st, z, single, nthreads)
  .Call(bochner:::C_stat_moments_finish, st, nthreads)
}

test_that("the feature stream draws uniform splits of every shape, in any row blocks", {
  # with Z the identity (D = N), S = Z'L is the label matrix itself
  for (nm in list(c(4, 2), c(5, 2), c(5, 3), c(6, 1), c(6, 5), c(7, 3))) {
    N <- nm[1]
    m <- nm[2]
    set.seed(sum(nm))
    out <- mmd_fold(list(diag(N)), N, m, 3000L, 1L)
    L <- out$S
    expect_identical(L[, 1L], rep(c(1, 0), c(m, N - m)))
    expect_true(all(L == 0 | L == 1))
    expect_true(all(colSums(L) == m))
    key <- apply(L[, -1L], 2L, paste, collapse = "")
    # every m-subset equally likely: chi-square over choose(N, m) cells
    counts <- table(factor(key, levels = unique(key)))
    expect_length(counts, choose(N, m))
    expect_gt(stats::chisq.test(as.vector(counts))$p.value, 1e-3)
  }
  # the coin path at a larger N: each row in the first group half the time
  set.seed(17)
  L <- mmd_fold(list(diag(400)), 400, 200, 2000L, 1L)$S[, -1L]
  expect_true(all(colSums(L) == 200))
  expect_lt(max(abs(rowMeans(L) - 0.5)), 5 * sqrt(0.25 / 2000))
  # row blocks and threads change nothing: S, q, s, Q from Z and the labels
  set.seed(18)
  Z <- matrix(runif(300 * 100), 300)
  cuts <- list(1:300, 1:77, 78:211, 212:300)
  one <- function(blocks, nthreads) {
    set.seed(19)
    mmd_fold(lapply(blocks, function(b) Z[b, , drop = FALSE]), 300, 120, 70L, nthreads)
  }
  a <- one(cuts[1], 1L)
  expect_identical(one(cuts[-1], 1L), a)
  expect_identical(one(cuts[-1], 2L), a)
  set.seed(19)
  L <- mmd_fold(list(diag(300)), 300, 120, 70L, 1L)$S
  expect_equal(a$S, crossprod(Z, L), tolerance = 1e-13)
  expect_equal(a$q, drop(crossprod(L, rowSums(Z^2))), tolerance = 1e-13)
  expect_equal(a$s, colSums(Z), tolerance = 1e-13)
  expect_equal(a$Q, sum(Z^2), tolerance = 1e-13)
})

test_that("the moments stream in single precision: within the float product's bound", {
  # Zs = Z less the first block's means, rounded to float, Zs'Zs by sgemm.c (float sums of
  # 256 rows added in double): |error| <= (1.6e-5 + 2^-23) |Zs|'|Zs| an entry; the sums
  # and means stay double, as in the double stream
  set.seed(21)
  Z <- matrix(rnorm(700 * 90, mean = 3), 700)
  parts <- function(blocks) lapply(blocks, function(b) Z[b, , drop = FALSE])
  cuts <- list(1:256, 257:512, 513:700)
  s1 <- moments_fold(parts(cuts), 1L, TRUE)
  expect_identical(moments_fold(parts(cuts), 2L, TRUE), s1)
  d <- moments_fold(parts(cuts), 1L)
  expect_identical(s1$zbar, d$zbar)
  expect_false(identical(s1$zz, d$zz))
  expect_true(isSymmetric(s1$zz, tol = 0))
  Zs <- sweep(Z, 2L, colMeans(Z[1:256, ]))
  bound <- (1.6e-5 + 2^-23) * crossprod(abs(Zs))
  expect_true(all(abs(s1$zz - crossprod(scale(Z, scale = FALSE))) <= bound))
  st <- .Call(bochner:::C_stat_moments_step, NULL, Z, FALSE, 1L)
  expect_error(.Call(bochner:::C_stat_moments_step, st, Z, TRUE, 1L), "precision")
})

test_that("the moments stream is the centred cross product, in any row blocks", {
  set.seed(20)
  Z <- matrix(rnorm(500 * 110, mean = 3), 500)
  run <- function(blocks, nthreads) {
    moments_fold(lapply(blocks, function(b) Z[b, , drop = FALSE]), nthreads)
  }
  cuts <- list(1:130, 131:131, 132:400, 401:500)
  m1 <- run(cuts, 1L)
  expect_identical(run(cuts, 2L), m1)
  Zc <- scale(Z, scale = FALSE)
  expect_equal(m1$zz, crossprod(Zc), tolerance = 1e-12)
  expect_true(isSymmetric(m1$zz, tol = 0))
  expect_equal(m1$zbar, colMeans(Z), tolerance = 1e-14)
  expect_identical(m1$n, 500)
  expect_equal(run(list(1:500), 2L)$zz, m1$zz, tolerance = 1e-12)
  expect_error(moments_fold(list(Z, Z[, 1:3]), 1L), "columns")
  # a finished fold is a result: it cannot be added to or finished again
  st <- .Call(bochner:::C_stat_moments_step, NULL, Z, FALSE, 1L)
  .Call(bochner:::C_stat_moments_finish, st, 1L)
  expect_error(.Call(bochner:::C_stat_moments_step, st, Z, FALSE, 1L), "finished")
  expect_error(.Call(bochner:::C_stat_moments_finish, st, 1L), "finished")
  expect_error(.Call(bochner:::C_stat_moments_step, list(1), Z, FALSE, 1L), "state")
  expect_error(.Call(bochner:::C_stat_moments_step, NULL, Z, NA, 1L), "single")
  ms <- .Call(bochner:::C_mmd_fold_start, .Call(bochner:::C_mmd_draw, 10, 4, 5L), 0, 10, 4, 5L, 3L)
  expect_error(.Call(bochner:::C_mmd_fold_step, ms, matrix(1, 11, 3), 1L), "beyond row N")
  expect_error(.Call(bochner:::C_mmd_fold_step, ms, matrix(1, 5, 2), 1L), "columns")
  ms <- .Call(bochner:::C_mmd_fold_step, ms, matrix(1, 5, 3), 1L)
  expect_error(.Call(bochner:::C_mmd_fold_finish, ms), "not N")
  expect_error(.Call(bochner:::C_mmd_fold_start, raw(8), 0, 100, 4, 1L, 3L), "fewer than N")
  expect_error(.Call(bochner:::C_mmd_fold_start, raw(12), 0, 10, 4, 1L, 3L), "8-byte words")
  expect_error(.Call(bochner:::C_mmd_fold_start, raw(8), 5, 5, 4, 1L, 3L), "greater than 'r0'")
  expect_error(.Call(bochner:::C_mmd_bits_slice, raw(16), 1L, 1, 0), "in order")
  expect_error(.Call(bochner:::C_mmd_draw, 10, 10, 2L), "between 1 and N - 1")
})

test_that("HSIC equals the plain-R formula and dHSIC, with dHSIC's gamma p-value", {
  set.seed(5)
  x <- matrix(rnorm(80), 40)
  y <- x[, 1]^2 + rnorm(40)
  kx <- gaussian_kernel(1.2)
  ky <- gaussian_kernel(0.8)
  r <- hsic_test(x, y, kx, ky, method = "exact", null = "gamma")
  expect_equal(unname(r$statistic), ref_hsic(ref_kernel(kx, x), ref_kernel(ky, matrix(y))),
               tolerance = 1e-12)
  f <- hsic_test(x, y, kx, ky, method = "rff", D = 30, B = 10, seed = 1)
  Zx <- predict(f$map_x, x)
  Zy <- predict(f$map_y, y)
  expect_equal(unname(f$statistic), ref_hsic(tcrossprod(Zx), tcrossprod(Zy)), tolerance = 1e-10)
  skip_if_not_installed("dHSIC")
  d <- dHSIC::dhsic.test(list(x, matrix(y)), kernel = "gaussian.fixed", bandwidth = c(1.2, 0.8),
                         method = "gamma")
  expect_lt(abs(40 * unname(r$statistic) / d$statistic - 1), 1e-10)
  expect_equal(r$p.value, d$p.value, tolerance = 1e-10)
})

test_that("the HSIC permutation routine permutes the second variable", {
  set.seed(6)
  x <- matrix(rnorm(3), 3)
  y <- matrix(rnorm(3), 3)
  Kc <- bochner:::centre_gram(ref_kernel(gaussian_kernel(1), x))
  Lc <- bochner:::centre_gram(ref_kernel(gaussian_kernel(1), y))
  perms <- rbind(c(1, 2, 3), c(1, 3, 2), c(2, 1, 3), c(2, 3, 1), c(3, 1, 2), c(3, 2, 1))
  values <- apply(perms, 1L, function(p) sum(Kc * Lc[p, p]))
  out <- .Call(bochner:::C_hsic_perm_gram, Kc, Lc, 600L, 2L)
  expect_equal(out[1L], sum(Kc * Lc), tolerance = 1e-14)
  hit <- vapply(out[-1L], function(v) which.min(abs(values - v)), 1L)
  expect_true(all(abs(values[hit] - out[-1L]) < 1e-12))
  expect_gt(stats::chisq.test(tabulate(hit, 6))$p.value, 1e-3)
})

test_that("results are identical for any thread count and reproducible with seed", {
  s <- two_samples(m = 300, n = 300)
  a <- mmd_test(s$x, s$y, D = 64, B = 30, seed = 9, nthreads = 1)
  b <- mmd_test(s$x, s$y, D = 64, B = 30, seed = 9, nthreads = 2)
  expect_identical(a$null_statistics, b$null_statistics)
  expect_identical(a$statistic, b$statistic)
  e1 <- mmd_test(s$x, s$y, method = "exact", B = 30, seed = 9, nthreads = 1)
  e2 <- mmd_test(s$x, s$y, method = "exact", B = 30, seed = 9, nthreads = 2)
  expect_identical(e1$null_statistics, e2$null_statistics)
  h1 <- hsic_test(s$x, s$y[, 1], method = "exact", B = 30, seed = 9, nthreads = 1)
  h2 <- hsic_test(s$x, s$y[, 1], method = "exact", B = 30, seed = 9, nthreads = 2)
  expect_identical(h1$null_statistics, h2$null_statistics)
  p1 <- kernel_pca(s$x, rank = 2, D = 64, seed = 9, nthreads = 1)
  p2 <- kernel_pca(s$x, rank = 2, D = 64, seed = 9, nthreads = 2)
  expect_identical(p1$x, p2$x)
  c1 <- kernel_cca(s$x, s$y, rank = 1, D = 32, seed = 9, nthreads = 1)
  c2 <- kernel_cca(s$x, s$y, rank = 1, D = 32, seed = 9, nthreads = 2)
  expect_identical(c1$cor, c2$cor)
})

test_that("permutation p-values hold their level (binomial bounds)", {
  # 150 null data sets, 5 % level: under the null the rejections are
  # Binomial(150, 0.05), mean 7.5; P(X > 17) < 1e-3
  set.seed(12)
  p <- vapply(seq_len(150), function(i) {
    x <- matrix(rnorm(40), 20)
    y <- matrix(rnorm(40), 20)
    c(mmd_test(x, y, gaussian_kernel(1), D = 32, B = 39)$p.value,
      hsic_test(x, y[, 1], method = "exact", B = 39)$p.value)
  }, numeric(2))
  expect_lte(sum(p[1, ] <= 0.05), 17)
  expect_lte(sum(p[2, ] <= 0.05), 17)
  # and the p-values are not stuck near 1: P(X < 50) < 1e-3 for Binomial(150, 1/2)
  expect_gte(sum(p[1, ] <= 0.5), 50)
  expect_gte(sum(p[2, ] <= 0.5), 50)
})

test_that("the tests have power where linear tests have none", {
  set.seed(13)
  x <- rnorm(150)
  y <- x^2 + rnorm(150, sd = 0.3)
  expect_lt(hsic_test(x, y, D = 64, B = 99)$p.value, 0.02)
  expect_lt(hsic_test(x, y, method = "exact", null = "gamma")$p.value, 0.01)
  a <- matrix(rnorm(300), 150)
  b <- matrix(rnorm(300, sd = 2), 150)
  expect_lt(mmd_test(a, b, D = 64, B = 99)$p.value, 0.02)
  expect_lt(mmd_test(a, b, D = 64, null = "gamma")$p.value, 0.01)
})

test_that("exact kernel PCA matches eigen() of the centred Gram matrix and kernlab::kpca", {
  x <- as.matrix(iris[seq(1, 150, by = 3), 1:4])
  k <- gaussian_kernel(1)
  fit <- kernel_pca(x, k, rank = 3, method = "exact", seed = 1)
  n <- nrow(x)
  H <- diag(n) - 1 / n
  e <- eigen(H %*% ref_kernel(k, x) %*% H, symmetric = TRUE)
  expect_equal(unname(fit$variance), e$values[1:3] / n, tolerance = 1e-10)
  ref_scores <- sweep(e$vectors[, 1:3], 2L, sqrt(e$values[1:3]), "*")
  expect_equal(abs(unname(fit$x)), abs(ref_scores), tolerance = 1e-8)
  expect_equal(unname(predict(fit, x)), unname(fit$x), tolerance = 1e-8)
  skip_if_not_installed("kernlab")
  kp <- kernlab::kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 3)
  r <- diag(stats::cor(kernlab::rotated(kp), fit$x))
  expect_true(all(abs(abs(r) - 1) < 1e-8))
  expect_equal(unname(kernlab::eig(kp)), unname(fit$variance), tolerance = 1e-10)
  expect_equal(abs(unname(kernlab::rotated(kp))), abs(unname(fit$x)) * sqrt(n), tolerance = 1e-8)
})

test_that("kernel PCA on features is PCA of the centred features", {
  x <- as.matrix(iris[, 1:4])
  for (method in c("rff", "nystrom")) {
    size <- if (method == "nystrom") list(m = 40) else list(D = 40)
    fit <- do.call(kernel_pca, c(list(x, gaussian_kernel(1), rank = 2, method = method, seed = 2),
                                 size))
    Z <- predict(fit$map, x)
    pc <- stats::prcomp(Z)
    expect_equal(unname(fit$variance), pc$sdev[1:2]^2 * (150 - 1) / 150, tolerance = 1e-8)
    expect_equal(abs(unname(fit$x)), abs(unname(pc$x[, 1:2])), tolerance = 1e-7)
    expect_equal(predict(fit, x[1:4, ]), fit$x[1:4, ], tolerance = 1e-10, ignore_attr = TRUE)
  }
  s <- summary(fit)
  expect_equal(unname(s$importance[2, ]), unname(fit$variance / fit$total_variance))
  f <- kernel_pca(~ Sepal.Length + Petal.Width, data = iris, rank = 2, D = 30, seed = 1)
  expect_equal(dim(predict(f, iris[1:3, ])), c(3L, 2L))
})

test_that("kernel CCA with linear features and lambda -> 0 is cancor()", {
  set.seed(14)
  x <- matrix(rnorm(300), 100)
  y <- cbind(x[, 1] + rnorm(100), 0.5 * x[, 2] + rnorm(100))
  cc <- stats::cancor(x, y)
  lin <- polynomial_kernel(degree = 1, offset = 0)
  f <- kernel_cca(x, y, lin, lin, rank = 2, lambda = 1e-12, D = 10, seed = 1)
  expect_equal(f$cor, cc$cor, tolerance = 1e-8)
  ux <- scale(x, scale = FALSE) %*% cc$xcoef[, 1:2]
  expect_true(all(abs(abs(diag(stats::cor(ux, f$xvariates))) - 1) < 1e-8))
  expect_equal(predict(f, x, y)$x, f$xvariates, ignore_attr = TRUE, tolerance = 1e-10)
  e <- kernel_cca(x, y, lin, lin, rank = 2, lambda = 1e-9, method = "exact", seed = 1)
  expect_equal(e$cor, cc$cor, tolerance = 1e-6)
  expect_true(all(abs(abs(diag(stats::cor(ux, e$xvariates))) - 1) < 1e-6))
})

test_that("bad input is refused with the argument named", {
  x <- matrix(rnorm(20), 10)
  expect_error(mmd_test(x), "'y'")
  expect_error(mmd_test(x, matrix(1:3, 1)), "'y'")
  expect_error(mmd_test(x, x, method = "fast"), "'method'")
  expect_error(mmd_test(x, x, B = 0), "'B'")
  expect_error(mmd_test(x, x, D = -1), "'D'")
  expect_error(mmd_test(x, x, null = "chisq"), "'null'")
  expect_error(mmd_test(x, x, kernel = "rbf"), "'kernel'")
  expect_error(mmd_test(rbind(x, NA), x), "'x'")
  expect_error(mmd_test(value ~ g, data = data.frame(value = 1:9, g = rep(1:3, 3))), "'formula'")
  expect_error(hsic_test(x, x[1:5, ]), "'y'")
  expect_error(hsic_test(x, x, kernel_y = 1), "'kernel_y'")
  expect_error(kernel_pca(x, rank = 20, method = "exact"), "'rank'")
  expect_error(kernel_pca(x, rank = 0), "'rank'")
  expect_error(kernel_cca(x, x, lambda = -1), "'lambda'")
  expect_error(kernel_cca(x, x, method = "exact", lambda = 0), "'lambda'")
  fit <- kernel_pca(x, rank = 1, D = 5, seed = 1)
  expect_error(predict(fit, matrix(1, 2, 5)), "newdata")
})

test_that("the formula methods split and pair the data as the default methods", {
  set.seed(15)
  df <- data.frame(a = rnorm(40), b = rnorm(40), g = rep(c("u", "v"), 20))
  f <- mmd_test(cbind(a, b) ~ g, data = df, B = 20, seed = 1)
  d <- mmd_test(as.matrix(df[df$g == "u", 1:2]), as.matrix(df[df$g == "v", 1:2]), B = 20,
                seed = 1)
  expect_equal(f$statistic, d$statistic)
  expect_equal(f$p.value, d$p.value)
  expect_match(f$data.name, "by g")
  h <- hsic_test(b ~ a, data = df, method = "exact", null = "gamma")
  expect_equal(h$statistic, hsic_test(df$a, df$b, method = "exact", null = "gamma")$statistic)
})

test_that("the C entry points refuse malformed arguments without crashing", {
  pool <- list(NULL, 1L, -1L, 0L, NA, 2.5, "a", matrix(1, 3, 3), matrix(1, 3, 2), matrix(1L, 3, 3),
               matrix(0, 0, 0), matrix(1, 1, 1), list(1), function(i) matrix(1, 2, 2), 1e12,
               emptyenv(), globalenv(), c(1, 2),
               # the folds' states, open and of every kind
               .Call(bochner:::C_moments_step, NULL, matrix(1, 3, 3), matrix(1, 3, 2), NULL, FALSE, 1L),
               .Call(bochner:::C_stat_moments_step, NULL, matrix(1, 3, 3), FALSE, 1L),
               .Call(bochner:::C_mmd_fold_start, raw(16), 0, 3, 1, 2L, 3L), raw(16))
  routines <- list(bochner:::C_mmd_perm_gram, bochner:::C_mmd_fold_start,
                   bochner:::C_mmd_draw, bochner:::C_mmd_bits_slice,
                   bochner:::C_mmd_fold_step, bochner:::C_mmd_fold_finish,
                   bochner:::C_hsic_perm_gram, bochner:::C_stat_moments_step,
                   bochner:::C_stat_moments_finish, bochner:::C_moments_step,
                   bochner:::C_moments_finish)
  set.seed(16)
  for (i in seq_len(300)) {
    r <- routines[[sample.int(length(routines), 1L)]]
    args <- lapply(seq_len(r$numParameters), function(j) pool[[sample.int(length(pool), 1L)]])
    out <- tryCatch(suppressWarnings(do.call(.Call, c(list(r), args))),
                    error = function(e) "refused")
    expect_true(is.character(out) || is.list(out) || is.numeric(out) || is.raw(out) ||
                  typeof(out) == "externalptr")
  }
})

test_that("hsic_test's null = 'auto' permutes small samples and takes the gamma law where permutations cost too much", {
  set.seed(11)
  x <- rnorm(300)
  y <- x^2 + rnorm(300)
  a <- hsic_test(x, y, D = 64, seed = 3)
  p <- hsic_test(x, y, D = 64, seed = 3, null = "permutation")
  expect_identical(a$p.value, p$p.value)
  expect_match(a$method, "200 permutations")
  # B n Dx Dy above 2^35 on features: 5001 rows (past the Gram route) at D = 256
  expect_identical(bochner:::hsic_auto_null(5001, 256, 256, 200), "gamma")
  expect_identical(bochner:::hsic_auto_null(5000, 256, 256, 200), "permutation")
  expect_identical(bochner:::hsic_auto_null(300, NULL, NULL, 200), "permutation")
  expect_identical(bochner:::hsic_auto_null(14000, NULL, NULL, 200), "gamma")
  x <- rnorm(5200)
  y <- rnorm(5200)
  a <- hsic_test(x, y, D = 256, seed = 3)
  g <- hsic_test(x, y, D = 256, seed = 3, null = "gamma")
  expect_identical(a$p.value, g$p.value)
  expect_match(a$method, "gamma approximation")
  expect_error(hsic_test(x, y, null = "perm2"), "null")
})

test_that("Nystrom landmarks are m in the statistics; D for them still works, with a message", {
  x <- as.matrix(iris[, 1:4])
  s <- two_samples()
  a <- kernel_pca(x, gaussian_kernel(1), method = "nystrom", m = 30, seed = 1)
  expect_message(b <- kernel_pca(x, gaussian_kernel(1), method = "nystrom", D = 30, seed = 1),
                 "'m'")
  expect_identical(a$variance, b$variance)
  expect_identical(bochner:::map_size(a$map), 30L)
  expect_error(kernel_pca(x, gaussian_kernel(1), m = 30), "'m'")
  expect_error(kernel_cca(x[, 1:2], x[, 3:4], method = "rff", m = 30), "'m'")
  expect_error(mmd_test(s$x, s$y, m = 10), "'m'")
  expect_error(hsic_test(x[, 1:2], x[, 3:4], method = "nystrom", m = 0), "'m'")
  expect_message(mmd_test(s$x, s$y, method = "nystrom", D = 20, B = 5, seed = 1), "'m'")
  expect_silent(hsic_test(x[, 1:2], x[, 3:4], method = "nystrom", m = 20, B = 5, seed = 1))
  expect_identical(
    kernel_cca(x[, 1:2], x[, 3:4], method = "nystrom", m = 25, rank = 1, seed = 1)$cor,
    suppressMessages(kernel_cca(x[, 1:2], x[, 3:4], method = "nystrom", D = 25, rank = 1,
                                seed = 1))$cor)
})

test_that("precision = 'single' in the kernel statistics: the double results within float's bound", {
  set.seed(41)
  n <- 3000
  x <- matrix(rnorm(n * 3), n)
  y <- cbind(x[, 1]^2 + rnorm(n, sd = 0.5), rnorm(n))
  z <- matrix(rnorm(1200 * 3, mean = 0.1), 1200)
  both <- function(f) list(single = f("single"), double = f("double"))
  rel <- function(a, b) max(abs(a - b)) / max(abs(b))
  h <- both(function(p) hsic_test(x, y, D = 200, null = "gamma", seed = 2, precision = p))
  expect_lt(rel(h$single$statistic, h$double$statistic), 1e-5)
  expect_lt(abs(h$single$p.value - h$double$p.value), 1e-6)
  mm <- both(function(p) mmd_test(x, z, D = 200, null = "gamma", seed = 3, precision = p))
  expect_lt(rel(mm$single$statistic, mm$double$statistic), 1e-5)
  expect_false(identical(mm$single$statistic, mm$double$statistic))
  pc <- both(function(p) kernel_pca(x, rank = 3, D = 150, seed = 4, precision = p))
  expect_identical(pc$single$precision, "single")
  expect_output(print(pc$single), "cross product in single precision")
  expect_output(print(kernel_cca(x, y, D = 50, seed = 5, precision = "single")),
                "single precision, lambda")
  expect_identical(pc$double$precision, "double")
  expect_lt(rel(pc$single$variance, pc$double$variance), 1e-5)
  expect_lt(rel(abs(pc$single$rotation), abs(pc$double$rotation)), 1e-3)
  cc <- both(function(p) kernel_cca(x, y, rank = 2, D = 120, seed = 5, precision = p))
  expect_identical(cc$single$precision, "single")
  expect_lt(rel(cc$single$cor, cc$double$cor), 1e-4)
  # "auto" keeps these small products in double, bit for bit
  expect_identical(kernel_pca(x, rank = 3, D = 150, seed = 4)$variance, pc$double$variance)
  expect_identical(hsic_test(x, y, D = 200, null = "gamma", seed = 2)$statistic,
                   h$double$statistic)
  expect_error(kernel_pca(x, precision = "half"), "precision")
  expect_error(mmd_test(x, z, precision = "half"), "precision")
})

test_that("'auto' forms the statistics' cross product in float where it is large", {
  single <- bochner:::stat_single
  expect_false(single("auto", 3000, 200))
  expect_true(single("auto", 1e6, 1024))                  # n D^2 / 2 = 5e11 > 2^36
  expect_false(single("auto", 1e6, 1024, 0))               # kernel_cca() with lambda = 0
  expect_true(single("auto", 1e6, 1024, 1e6 * 1e-3))
  expect_true(single("single", 10, 2))
  expect_false(single("double", 1e7, 4096))
})
