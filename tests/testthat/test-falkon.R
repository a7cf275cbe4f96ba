# falkon(): the C passes against plain R, the CG solution against direct
# solves of the same systems, the logistic loss against glm(), identities
# (threads, block sizes, chunks, seeds) and refusals.

knm <- function(x, C, ker, U = NULL, V = NULL, w = NULL, init = NULL, block = 0, nth = 1L,
                K = NULL) {
  .Call(bochner:::C_falkon_knm_apply, x, C, bochner:::kernel_code(ker),
        bochner:::kernel_parameters(ker), U, V, w, init, as.double(block), FALSE, nth, K, FALSE)
}

test_that("the row pass equals K' diag(w) (K U + V) in plain R, edge sizes included", {
  set.seed(1)
  ker <- gaussian_kernel(1.3)
  # k <= 8: dot products; k = 12 and U = I: the packed product
  for (case in list(c(n = 200, m = 17, k = 3), c(n = 1, m = 1, k = 1), c(n = 50, m = 1, k = 2),
                    c(n = 1, m = 5, k = 1), c(n = 300, m = 30, k = 12))) {
    n <- case[["n"]]; m <- case[["m"]]; k <- case[["k"]]
    x <- matrix(rnorm(n * 3), n)
    C <- matrix(rnorm(m * 3), m)
    U <- matrix(rnorm(m * k), m)
    V <- matrix(rnorm(n * k), n)
    w <- runif(n)
    K <- kernel_matrix(ker, x, C)
    expect_equal(knm(x, C, ker, U, V, w), crossprod(K, w * (K %*% U + V)), tolerance = 1e-12)
    expect_equal(knm(x, C, ker, U = U), crossprod(K, K %*% U), tolerance = 1e-12)
    # U = I: H = K' W K from its upper triangle, exactly symmetric; not with V
    # added or one diagonal per column
    I <- diag(m)
    H <- knm(x, C, ker, I, w = w)
    expect_equal(H, crossprod(K, w * K), tolerance = 1e-12)
    expect_identical(H, t(H))
    VI <- matrix(rnorm(n * m), n)
    expect_equal(knm(x, C, ker, I, V = VI, w = w), crossprod(K, w * (K + VI)), tolerance = 1e-12)
    WI <- matrix(runif(n * m), n)
    expect_equal(knm(x, C, ker, I, w = WI), crossprod(K, WI * K), tolerance = 1e-12)
    both <- bochner:::falkon_knm_apply(list(centres = C, code = bochner:::kernel_code(ker),
                                            par = bochner:::kernel_parameters(ker)),
                                       x, U = U, nthreads = 1L, keep_ku = TRUE)
    expect_equal(attr(both, "ku"), K %*% U, tolerance = 1e-12)
    expect_equal(knm(x, C, ker, V = V), crossprod(K, V), tolerance = 1e-12)
    W <- matrix(runif(n * k), n)      # one diagonal per right-hand side
    expect_equal(knm(x, C, ker, U, w = W), crossprod(K, W * (K %*% U)), tolerance = 1e-12)
    alpha <- matrix(rnorm(m * k), m)
    expect_equal(bochner:::falkon_kernel_predict(list(centres = C, code = bochner:::kernel_code(ker),
                                                      par = bochner:::kernel_parameters(ker)),
                                                 x, alpha, 1L),
                 K %*% alpha, tolerance = 1e-12)
  }
  # other kernels go through the same pass
  x <- matrix(runif(120), 40)
  C <- x[1:7, ]
  U <- matrix(rnorm(14), 7)
  for (ker in list(laplace_kernel(0.7), matern_kernel(1, 2.5), polynomial_kernel(3))) {
    K <- kernel_matrix(ker, x, C)
    expect_equal(knm(x, C, ker, U), crossprod(K, K %*% U), tolerance = 1e-12)
  }
})

test_that("the package's Cholesky solves like solve(), the same for any thread count", {
  set.seed(13)
  for (m in c(5, 395)) {   # 395: panels of 96, column groups of 8 and a remainder of 3
    A <- crossprod(matrix(rnorm((m + 3) * m), m + 3))
    B <- matrix(rnorm(2 * m), m)
    X <- .Call(bochner:::C_ridge_solve, A, B, 0.25, 1L)
    expect_equal(X, solve(A + diag(0.25, m), B), tolerance = 1e-10)
    expect_identical(.Call(bochner:::C_ridge_solve, A, B, 0.25, 2L), X)
  }
  expect_error(.Call(bochner:::C_ridge_solve, -diag(3), diag(3), 0, 1L), "positive definite")
})

test_that("the package's Cholesky factor is chol()'s, and its solves backsolve()'s", {
  set.seed(15)
  for (m in c(1, 7, 300)) {   # 300: panels of 96 and a remainder of 12 (the solve: 64 and 44)
    A <- crossprod(matrix(rnorm((m + 3) * m), m + 3))
    B <- matrix(rnorm(9 * m), m)   # two groups of four right-hand sides and one left
    R <- .Call(bochner:::C_cholesky, A, 0.5, 1L)
    ref <- chol(A + diag(0.5, m))
    expect_equal(R, ref, tolerance = 1e-12)
    expect_identical(R[lower.tri(R)], numeric(sum(lower.tri(R))))
    expect_identical(.Call(bochner:::C_cholesky, A, 0.5, 2L), R)
    X <- .Call(bochner:::C_cholesky_solve, R, B)
    expect_equal(X, backsolve(ref, forwardsolve(ref, B, upper.tri = TRUE, transpose = TRUE)),
                 tolerance = 1e-10)
    # one factor and its solves are the ridge solve, bit for bit
    expect_identical(X, .Call(bochner:::C_ridge_solve, A, B, 0.5, 1L))
    # a column's solution does not depend on the columns solved beside it
    one <- vapply(1:9, function(j) .Call(bochner:::C_cholesky_solve, R, B[, j, drop = FALSE]),
                  numeric(m))
    expect_identical(matrix(one, m), X)
    # each substitution alone (blocked), for any thread count and right-hand
    # side by right-hand side
    tri <- function(B, op, nth = 1L) .Call(bochner:::C_triangular_solve, R, B, op, nth)
    Z <- tri(B, "left_t")
    expect_equal(Z, forwardsolve(ref, B, upper.tri = TRUE, transpose = TRUE), tolerance = 1e-10)
    expect_equal(tri(B, "left"), backsolve(ref, B), tolerance = 1e-10)
    expect_equal(tri(Z, "left"), X, tolerance = 1e-10)
    expect_equal(tri(t(B), "right"), t(forwardsolve(ref, B, upper.tri = TRUE, transpose = TRUE)),
                 tolerance = 1e-10)
    for (op in c("left_t", "left")) {
      one <- vapply(1:9, function(j) tri(B[, j, drop = FALSE], op), numeric(m))
      expect_identical(matrix(one, m), tri(B, op))
    }
    one <- vapply(1:9, function(j) tri(t(B[, j]), "right"), numeric(m))
    expect_identical(t(matrix(one, m)), tri(t(B), "right"))
  }
  # wide enough for both threads in the blocks' substitutions and their products
  B <- matrix(rnorm(300 * 2000), 300)
  for (op in c("left_t", "left"))
    expect_identical(.Call(bochner:::C_triangular_solve, R, B, op, 2L),
                     .Call(bochner:::C_triangular_solve, R, B, op, 1L))
  expect_identical(.Call(bochner:::C_triangular_solve, R, t(B), "right", 2L),
                   .Call(bochner:::C_triangular_solve, R, t(B), "right", 1L))
  expect_error(.Call(bochner:::C_cholesky, -diag(3), 0, 1L), "positive definite \\(pivot 1\\)")
  expect_error(.Call(bochner:::C_cholesky_solve, diag(3), diag(2)), "one row per row of 'R'")
  expect_error(.Call(bochner:::C_triangular_solve, diag(3), diag(2), "left_t", 1L),
               "one row per row of 'R'")
  expect_error(.Call(bochner:::C_triangular_solve, diag(3), diag(2), "right", 1L),
               "one column per row of 'R'")
  expect_error(.Call(bochner:::C_triangular_solve, diag(3), diag(3), TRUE, 1L), "'op' must be")
})

test_that("the fitted values, from a cached K_nm or carried along the path, equal predict()", {
  set.seed(14)
  x <- matrix(rnorm(1200), 600)
  y <- sin(2 * x[, 1]) + x[, 2] + rnorm(600, sd = 0.2)
  cls <- factor(ifelse(y > 0.3, "u", "v"))
  for (cache in c(4e9, 0)) {   # cached K_nm, and each pass evaluating the kernel
    ctl <- list(cache_bytes = cache)
    fr <- falkon(x, y, seed = 1, control = ctl)
    expect_equal(unname(fitted(fr)), unname(predict(fr, x)), tolerance = 1e-10)
    fc <- falkon(x, cls, seed = 1, control = ctl)
    expect_identical(unname(fitted(fc)), unname(predict(fc, x)))
    fl <- falkon(x, cls, loss = "logistic", m = 50, seed = 1, control = ctl)
    expect_identical(unname(fitted(fl)), unname(predict(fl, x)))
  }
  # without a held-out slice (lambda and iter given)
  f1 <- falkon(x, y, m = 40, lambda = 1e-4, iter = 10, seed = 1)
  expect_equal(unname(fitted(f1)), unname(predict(f1, x)), tolerance = 1e-10)
  # paths over the rows evaluating the kernel (more centres than H pays
  # for: 120 with one column, 240 with two; no cache), whose scores come
  # along the path, also warm-started (the candidates one after another)
  for (bytes in c(1e9, 0)) {
    ctl <- list(factor_bytes = bytes, cache_bytes = 0)
    fr <- falkon(x, y, m = 200, seed = 1, control = ctl)
    expect_equal(unname(fitted(fr)), unname(predict(fr, x)), tolerance = 1e-10)
    fc <- falkon(x, cls, m = 300, seed = 1, control = ctl)
    expect_identical(unname(fitted(fc)), unname(predict(fc, x)))
  }
})

test_that("the pass is identical for any thread count, block size and chunking", {
  set.seed(2)
  ker <- gaussian_kernel(2)
  x <- matrix(rnorm(3000 * 4), 3000)
  C <- x[sample(3000, 60), ]
  U <- matrix(rnorm(120), 60)
  w <- runif(3000)
  one <- knm(x, C, ker, U, w = w, nth = 1L)
  expect_identical(knm(x, C, ker, U, w = w, nth = 2L), one)
  expect_identical(knm(x, C, ker, U, w = w, block = 37, nth = 2L), one)
  expect_identical(knm(x, C, ker, U, w = w, block = 3000, nth = 1L), one)
  # chunks in order, their passes' states folded (test-falkon-chunks.R)
  chunked <- function(U) {
    part <- function(r) {
      .Call(bochner:::C_falkon_knm_part, x[r, ], C, bochner:::kernel_code(ker),
            bochner:::kernel_parameters(ker), U, NULL, w[r], 0, FALSE, 1L, r[1] - 1, 3000, FALSE)
    }
    st <- .Call(bochner:::C_falkon_pass_fold, part(1:1234), part(1235:3000), 3000, C,
                bochner:::kernel_code(ker), bochner:::kernel_parameters(ker))
    .Call(bochner:::C_falkon_pass_finish, st, NULL)
  }
  expect_identical(chunked(U), one)
  U12 <- matrix(rnorm(720), 60)
  one12 <- knm(x, C, ker, U12, w = w, nth = 1L)
  expect_identical(knm(x, C, ker, U12, w = w, block = 37, nth = 2L), one12)
  expect_identical(chunked(U12), one12)
  # the pass that forms H (U = I, upper triangles): the same for threads,
  # blocks and chunks, a partial group included
  I <- diag(60)
  H <- knm(x, C, ker, I, w = w, nth = 1L)
  expect_identical(knm(x, C, ker, I, w = w, nth = 2L), H)
  expect_identical(knm(x, C, ker, I, w = w, block = 37, nth = 2L), H)
  expect_identical(chunked(I), H)
  expect_identical(H, t(H))
})

test_that("the pass on a cached K_nm is the evaluated pass, bit for bit", {
  set.seed(21)
  ker <- gaussian_kernel(1.7)
  x <- matrix(rnorm(900 * 3), 900)
  C <- x[sample(900, 40), ]
  K <- kernel_matrix(ker, x, C)
  U <- matrix(rnorm(80), 40)
  V <- matrix(rnorm(1800), 900)
  w <- runif(900)
  init <- matrix(rnorm(80), 40)
  for (nth in 1:2) for (block in c(0, 37)) {
    expect_identical(knm(x, C, ker, U, V, w, init, block, nth, K = K), knm(x, C, ker, U, V, w, init))
    expect_identical(knm(x, C, ker, V = V, block = block, nth = nth, K = K), knm(x, C, ker, V = V))
  }
  expect_error(knm(x, C, ker, U, K = K[, -1]), "'K'")
  # the cache as the fit builds it: kernel_matrix(), bit for bit, any blocks
  code <- bochner:::kernel_code(ker)
  par <- bochner:::kernel_parameters(ker)
  expect_identical(.Call(bochner:::C_falkon_kernel_cache, x, C, code, par, 0, 1L, FALSE), K)
  expect_identical(.Call(bochner:::C_falkon_kernel_cache, x, C, code, par, 37, 2L, FALSE), K)
  for (k2 in list(laplace_kernel(0.8), matern_kernel(1, 1.5), matern_kernel(1, 0.8))) {
    K2 <- kernel_matrix(k2, x, C)
    for (block in c(0, 37)) {
      expect_identical(.Call(bochner:::C_falkon_kernel_cache, x, C, bochner:::kernel_code(k2),
                             bochner:::kernel_parameters(k2), block, 2L, FALSE), K2)
    }
  }
  # a fit holding K_nm equals one evaluating it every pass
  y <- factor(x[, 1] + x[, 2]^2 > 1)
  a <- falkon(x, y, m = 60, seed = 2)
  b <- falkon(x, y, m = 60, seed = 2, control = list(cache_bytes = 0))
  expect_identical(a$alpha, b$alpha)
  expect_identical(a$iter, b$iter)
})

test_that("conjugate gradient reaches the direct solve of the Nystrom system", {
  set.seed(3)
  n <- 200
  x <- matrix(rnorm(n * 2), n)
  y <- sin(2 * x[, 1]) + x[, 2]^2 + rnorm(n, sd = 0.1)
  w <- rexp(n)
  # 25 centres: a pass per iteration; 20 (at most 2 k L 10 for k = L = 1):
  # K_nm' W K_nm formed once (falkon_fit_squared())
  for (m in c(25, 20)) {
    C <- x[1:m, ]
    ker <- gaussian_kernel(0.4)     # K_mm's condition number about 1e4: alpha itself is
    lambda <- 1e-3                  # accurate to 1e-12, not only K alpha
    fit <- falkon(x, y, kernel = ker, m = C, lambda = lambda, iter = 300, scale = FALSE,
                  weights = w, control = list(tol = 1e-15))
    K <- kernel_matrix(ker, x, C)
    Kmm <- kernel_matrix(ker, C)
    wn <- w * n / sum(w)
    yc <- y - sum(wn * y) / sum(wn)
    alpha <- solve(crossprod(K, wn * K) + lambda * n * Kmm, crossprod(K, wn * yc))
    expect_equal(drop(fit$alpha), drop(alpha), tolerance = 1e-8)
    expect_equal(unname(fit$fitted), drop(K %*% alpha) + sum(wn * y) / sum(wn), tolerance = 1e-8)
    expect_null(fit$validation)
  }
})

test_that("a candidate retired from the CG path keeps its coefficients; the others run on", {
  set.seed(4)
  n <- 300
  x <- matrix(rnorm(n * 3), n)
  Y <- cbind(sin(2 * x[, 1]) + rnorm(n, sd = 0.1), x[, 2] * x[, 3])
  ker <- gaussian_kernel(0.3)
  prep <- bochner:::falkon_prepare(ker, x[1:40, ], 1L)
  lams <- c(1e-2, 1e-5)
  factors <- bochner:::falkon_precond_all(prep, lams, 1L)
  apply_knm <- function(U) bochner:::falkon_knm_apply(prep, x, U = U, nthreads = 1L)
  rhs <- bochner:::falkon_knm_apply(prep, x, V = Y, nthreads = 1L) / n
  cg <- function(iter, callback = NULL) {
    bochner:::falkon_cg(apply_knm, rhs, prep, factors, lams, n, iter, callback = callback,
                        nthreads = 1L)
  }
  # group 1 leaves after iteration 3; group 2 stops at 10
  both <- cg(10, function(alpha, t, ...) if (t == 3) 1L else FALSE)
  expect_equal(both$iter, 10L)
  expect_identical(both$alpha[, 1:2], cg(3)$alpha[, 1:2])
  alone <- bochner:::falkon_cg(apply_knm, rhs, prep, factors[2], lams[2], n, 10, nthreads = 1L)
  expect_equal(both$alpha[, 3:4], alone$alpha, tolerance = 1e-12)
  # the path ends when every group has left
  expect_equal(cg(10, function(alpha, t, ...) if (t == 2) 1:2 else FALSE)$iter, 2L)
})

test_that("the scores carried along the CG path are K_nm alpha, cold or warm-started", {
  set.seed(4)
  n <- 300
  x <- matrix(rnorm(n * 3), n)
  Y <- cbind(sin(2 * x[, 1]) + rnorm(n, sd = 0.1), x[, 2] * x[, 3])
  prep <- bochner:::falkon_prepare(gaussian_kernel(0.3), x[1:40, ], 1L)
  lams <- c(1e-2, 1e-5)
  factors <- bochner:::falkon_precond_all(prep, lams, 1L)
  Knm <- kernel_matrix(gaussian_kernel(0.3), x, x[1:40, ])
  apply_knm <- function(U) bochner:::falkon_knm_apply(prep, x, U = U, nthreads = 1L, keep_ku = TRUE)
  rhs <- bochner:::falkon_knm_apply(prep, x, V = Y, nthreads = 1L) / n
  seen <- NULL
  cold <- bochner:::falkon_cg(apply_knm, rhs, prep, factors, lams, n, 8, nthreads = 1L,
                              callback = function(alpha, t, k_alpha) {
                                if (t == 5) seen <<- list(alpha = alpha, k_alpha = k_alpha)
                                if (t == 3) 1L else FALSE
                              })
  # the first group retired after iteration 3: its scores stay with its alpha
  expect_equal(cold$k_alpha, Knm %*% cold$alpha, tolerance = 1e-10)
  expect_equal(seen$k_alpha, Knm %*% seen$alpha, tolerance = 1e-10)
  # a warm start needs K_nm alpha0: the residual's pass gives it
  a0 <- cold$alpha[, 3:4]
  q <- bochner:::falkon_knm_apply(prep, x, U = a0, V = -Y, nthreads = 1L, keep_ku = TRUE)
  expect_equal(attr(q, "ku"), Knm %*% a0, tolerance = 1e-12)
  warm <- bochner:::falkon_cg(apply_knm, NULL, prep, factors[2], lams[2], n, 4, nthreads = 1L,
                              alpha0 = a0, resid0 = -q / n, k_alpha0 = attr(q, "ku"))
  expect_equal(warm$k_alpha, Knm %*% warm$alpha, tolerance = 1e-10)
  # without K_nm alpha0 a warm start carries none
  expect_null(bochner:::falkon_cg(apply_knm, NULL, prep, factors[2], lams[2], n, 4,
                                  nthreads = 1L, alpha0 = a0, resid0 = -q / n)$k_alpha)
  # the squared-loss fit carries them when its passes evaluate the kernel
  # (130 centres: more than H pays for with one column), not on a cached K_nm
  prep <- bochner:::falkon_prepare(gaussian_kernel(0.3), x[1:130, ], 1L)
  Knm <- kernel_matrix(gaussian_kernel(0.3), x, x[1:130, ])
  ctl <- bochner:::falkon_control_list(list())
  val <- list(x = x[1:50, ], Y = Y[1:50, 1, drop = FALSE], w = rep(1, 50), cls = NULL)
  for (cache in c(0, 1e9)) {
    rows <- bochner:::falkon_rows(x, 1L, cache_bytes = cache)
    expect_identical(rows$carry_scores(prep), cache == 0)
    res <- bochner:::falkon_fit_squared(prep, rows, Y[, 1, drop = FALSE], rep(1, n), val,
                                        "auto", "auto", ctl, 1L)
    if (cache == 0) expect_equal(res$train_scores, Knm %*% res$alpha, tolerance = 1e-10)
    else expect_null(res$train_scores)
  }
})

test_that("only a fall of the error rate or a real fall of the squared error is progress", {
  prog <- bochner:::falkon_progress(NULL)
  e <- function(rate, mse) structure(rate + 1e-6 * mse, rate = rate, mse = mse)
  prog <- bochner:::falkon_progress(prog, e(0.1, 1), 1L, 0.01)
  expect_equal(prog$iter, 1L)
  # the tie-break falls by 0.5 %: no progress
  prog <- bochner:::falkon_progress(prog, e(0.1, 0.995), 2L, 0.01)
  expect_equal(prog$iter, 1L)
  # 1.5 % below the squared error at the last progress (not at the last iteration)
  prog <- bochner:::falkon_progress(prog, e(0.1, 0.985), 3L, 0.01)
  expect_equal(prog$iter, 3L)
  # the error rate falls, the squared error rises: progress, and the
  # squared error is measured from there
  prog <- bochner:::falkon_progress(prog, e(0.09, 1.2), 4L, 0.01)
  expect_equal(c(prog$iter, prog$rate, prog$mse), c(4, 0.09, 1.2))
  # a higher error rate is no progress, however low the squared error
  expect_equal(bochner:::falkon_progress(prog, e(0.1, 0.5), 5L, 0.01)$iter, 4L)
  expect_equal(bochner:::falkon_progress(prog, e(0.09, 1.1), 5L, 0.01)$iter, 5L)
  # regression: the squared error alone (rate Inf)
  reg <- bochner:::falkon_progress(bochner:::falkon_progress(NULL), e(Inf, 2), 1L, 0.01)
  expect_equal(bochner:::falkon_progress(reg, e(Inf, 1.99), 2L, 0.01)$iter, 1L)
  expect_equal(bochner:::falkon_progress(reg, e(Inf, 1.97), 2L, 0.01)$iter, 2L)
  expect_error(falkon_control(path_gain = 0), "path_gain")
  expect_error(falkon_control(tie_gain = 1), "tie_gain")
})

test_that("classes stop on tie_gain and regression on path_gain", {
  ctl <- falkon_control(path_gain = 0.02, tie_gain = 0.05)
  expect_identical(bochner:::falkon_path_gain(FALSE, TRUE, ctl), 0.05)
  expect_identical(bochner:::falkon_path_gain(FALSE, FALSE, ctl), 0.02)
  expect_identical(bochner:::falkon_path_gain(TRUE, TRUE, ctl), 0)
  expect_identical(bochner:::falkon_path_gain(TRUE, FALSE, ctl), 0)
  # a regression path over the rows (300 centres, one lambda: no H) answers to
  # path_gain, and tie_gain leaves it alone
  set.seed(8)
  x <- matrix(rnorm(1500 * 2), 1500, 2)
  reg <- sin(2 * x[, 1]) * cos(x[, 2])
  fit <- function(...) {
    set.seed(1)
    falkon(x, reg, m = 300, lambda = 1e-9, nthreads = 1, control = falkon_control(...))
  }
  expect_lt(fit(path_gain = 0.9)$iter, fit(path_gain = 0.001)$iter)
  expect_identical(fit(tie_gain = 0.9)$alpha, fit(tie_gain = 0.001)$alpha)
})

test_that("with every row a centre and a small lambda it is exact kernel ridge", {
  set.seed(4)
  n <- 60
  x <- matrix(runif(n * 2), n)
  y <- cos(3 * x[, 1]) - x[, 2] + rnorm(n, sd = 0.05)
  ker <- gaussian_kernel(0.5)
  lambda <- 1e-5
  fit <- falkon(x, y, kernel = ker, m = x, lambda = lambda, iter = 2000, scale = FALSE,
                control = list(tol = 1e-15))
  K <- kernel_matrix(ker, x)
  ybar <- mean(y)
  beta <- solve(K + lambda * n * diag(n), y - ybar)      # exact kernel ridge
  xnew <- matrix(runif(20), 10)
  expect_equal(unname(predict(fit, xnew)), drop(kernel_matrix(ker, xnew, x) %*% beta) + ybar,
               tolerance = 1e-6)
})

test_that("the logistic loss matches glm() on the same Nystrom features", {
  set.seed(5)
  n <- 400
  x <- matrix(rnorm(n * 2), n)
  p <- plogis(1.5 * x[, 1] - x[, 2]^2 + 0.5)
  y <- factor(ifelse(runif(n) < p, "b", "a"))
  C <- x[1:8, ]
  ker <- gaussian_kernel(1.5)
  fit <- falkon(x, y, kernel = ker, m = C, lambda = 1e-12, loss = "logistic", iter = 100,
                scale = FALSE, control = list(newton_steps = 12, tol = 1e-15))
  K <- kernel_matrix(ker, x, C)
  b0 <- qlogis(mean(y == "b"))
  ref <- suppressWarnings(glm(y ~ 0 + K, family = binomial, offset = rep(b0, n)))
  expect_equal(unname(predict(fit, x, type = "prob")[, "b"]), unname(fitted(ref)),
               tolerance = 1e-6)
  pr <- predict(fit, x, type = "prob")
  expect_equal(unname(rowSums(pr)), rep(1, n))
  expect_identical(predict(fit, x), factor(colnames(pr)[max.col(pr, "first")], levels = c("a", "b")),
                   ignore_attr = TRUE)
})

test_that("multinomial logistic fits give probabilities that beat the class frequencies", {
  set.seed(6)
  fit <- falkon(Species ~ ., data = iris, loss = "logistic", seed = 1)
  pr <- predict(fit, iris, type = "prob")
  expect_equal(dim(pr), c(150L, 3L))
  expect_equal(unname(rowSums(pr)), rep(1, 150))
  ll <- -mean(log(pr[cbind(1:150, as.integer(iris$Species))]))
  expect_lt(ll, 0.2 * log(3))
  expect_gt(mean(predict(fit, iris) == iris$Species), 0.93)
})

test_that("fits are reproducible with set.seed() or seed =, and do not depend on threads", {
  set.seed(7)
  x <- matrix(rnorm(1200), 600)
  y <- factor(x[, 1] * x[, 2] > 0)
  set.seed(11)
  a <- falkon(x, y, m = 50, nthreads = 1)
  set.seed(11)
  b <- falkon(x, y, m = 50, nthreads = 2)
  expect_identical(a$alpha, b$alpha)
  expect_identical(a$lambda, b$lambda)
  c1 <- falkon(x, y, m = 50, seed = 3, control = list(block_rows = 17))
  c2 <- falkon(x, y, m = 50, seed = 3)
  expect_identical(c1$alpha, c2$alpha)
  expect_gt(mean(predict(a, x) == y), 0.9)
  # large enough for the fit and its passes to use two threads
  x <- matrix(rnorm(6000), 3000)
  y <- factor(x[, 1] * x[, 2] > 0)
  a <- falkon(x, y, m = 1000, seed = 4, nthreads = 1)
  b <- falkon(x, y, m = 1000, seed = 4, nthreads = 2)
  expect_identical(a$alpha, b$alpha)
  expect_identical(a$iter, b$iter)
})

test_that("default centres grow fourfold while the held-out error falls", {
  set.seed(13)
  x <- matrix(runif(6000), 3000)
  y <- sin(6 * x[, 1]) * cos(4 * x[, 2]) + rnorm(3000, sd = 0.05)
  fit <- falkon(x, y, seed = 1, control = list(start_centers = 16))
  path <- fit$centres_path
  expect_equal(path$m[1], 16)
  expect_gt(nrow(path), 1)
  expect_true(all(diff(path$m) > 0))
  expect_true(fit$m %in% path$m)
  expect_equal(fit$lambda, path$lambda[path$m == fit$m])
  # each step kept improved by control$grow_gain, except possibly the last
  e <- path$error
  if (length(e) > 2L) expect_true(all(e[2:(length(e) - 1)] < 0.97 * e[1:(length(e) - 2)]))
  expect_identical(falkon(x, y, seed = 1, control = list(start_centers = 16))$alpha, fit$alpha)
  # after the first step the last lambda or the next smaller one
  lams <- falkon_control()$lambdas
  for (i in seq_len(nrow(path))[-1]) {
    j <- match(path$lambda[i - 1], lams)
    expect_true(path$lambda[i] %in% lams[c(j, min(j + 1, length(lams)))])
  }
  expect_lt(sqrt(mean((predict(fit, x) - sin(6 * x[, 1]) * cos(4 * x[, 2]))^2)), 0.05)
  # fewer training rows than the default number of centres (some are held out)
  small <- falkon(iris[, 1:4], iris$Species, seed = 1)
  expect_lte(small$m, small$n_train)
  expect_gt(mean(fitted(small) == iris$Species), 0.9)
  # classes: an easy problem stops after the first step (held-out error
  # under 2 grow_min); a step gaining less than grow_min ends the growth
  set.seed(14)
  x2 <- matrix(rnorm(8000), 4000)
  easy <- factor(x2[, 1] + rnorm(4000, sd = 0.05) > 0)   # a few points of noise
  fe <- falkon(x2, easy, seed = 1, control = list(start_centers = 32, grow_min = 0.05))
  expect_equal(nrow(fe$centres_path), 1L)
  expect_lt(fe$centres_path$error, 0.1)
  fe2 <- falkon(x2, easy, seed = 1, control = list(start_centers = 32, grow_min = 1e-4))
  expect_gt(fe2$centres_path$error[1], 2e-4)
  expect_gt(nrow(fe2$centres_path), 1L)
  # ... and so does any later step under 2 grow_min (here 16 -> 64 centres,
  # 2.75 % then 1.25 % held-out error; 256 would gain less than grow_min)
  fl <- falkon(x2, easy, seed = 1, control = list(start_centers = 16, grow_min = 0.01))
  e <- fl$centres_path$error
  expect_gt(length(e), 1L)
  expect_true(all(e[-length(e)] >= 0.02))
  expect_lt(e[length(e)], 0.02)
  expect_equal(fl$m, fl$centres_path$m[length(e)])
  hard <- factor(sin(3 * x2[, 1]) * cos(3 * x2[, 2]) > 0)
  # (grow_min = 0.01: 32 -> 128 -> 512 centres, 14 %, 3 %, 2.25 %; above
  # 2 grow_min throughout, so the gain decides)
  fh <- falkon(x2, hard, seed = 1, control = list(start_centers = 32, grow_min = 0.01,
                                                  grow_jump = 1))
  e <- fh$centres_path$error
  expect_gt(length(e), 2L)
  expect_true(all(-diff(e)[-(length(e) - 1)] >= 0.01))   # kept growing while it gained
  expect_lt(e[length(e) - 1] - e[length(e)], 0.01 + 0.03 * e[length(e) - 1])   # stopped
  # a first step above grow_jump goes straight to the most centres (1581
  # here; the next size, 128, is under half of them)
  most <- falkon_default_centers(4000)
  fj <- falkon(x2, hard, seed = 1,
               control = list(start_centers = 32, grow_min = 0.05, grow_jump = 0.01))
  expect_gt(fj$centres_path$error[1], 0.01)
  expect_equal(fj$centres_path$m[1:2], c(32, most))
  # ... but not when the next size (800) is over half of them
  fn <- falkon(x2, hard, seed = 1,
               control = list(start_centers = 200, grow_min = 0.001, grow_jump = 0.01))
  expect_gt(fn$centres_path$error[1], 0.01)
  expect_equal(fn$centres_path$m[1:2], c(200, 800))
  # grow_patience shortens every step's path but the last
  fp <- falkon(x2, hard, seed = 1,
               control = list(start_centers = 32, grow_jump = 1, grow_patience = 1,
                              grow_min = 1e-4))
  fq <- falkon(x2, hard, seed = 1,
               control = list(start_centers = 32, grow_jump = 1, grow_patience = 5,
                              patience = 5, grow_min = 1e-4))
  expect_lte(fp$centres_path$iter[1], fq$centres_path$iter[1])
  expect_error(falkon_control(grow_patience = 0), "grow_patience")
  expect_error(falkon_control(grow_jump = -1), "grow_jump")
  expect_error(falkon_control(newton_patience = 0), "newton_patience")
})

test_that("integer case weights are repeated rows", {
  set.seed(8)
  x <- matrix(rnorm(160), 80)
  y <- x[, 1] - x[, 2]^2 + rnorm(80, sd = 0.1)
  wt <- sample(1:3, 80, replace = TRUE)
  C <- x[1:10, ]
  ker <- gaussian_kernel(1)
  rows <- rep(1:80, wt)
  fr <- falkon(x[rows, ], y[rows], kernel = ker, m = C, lambda = 1e-3, iter = 200,
               scale = FALSE, control = list(tol = 1e-15))
  fw2 <- falkon(x, y, kernel = ker, m = C, lambda = 1e-3, iter = 200, scale = FALSE,
                weights = wt, control = list(tol = 1e-15))
  expect_equal(fw2$alpha, fr$alpha, tolerance = 1e-8)
})

test_that("formula, data frame and sparse input", {
  fit <- falkon(mpg ~ wt + hp + factor(cyl), data = mtcars, m = 20, lambda = 1e-3,
                iter = 30, seed = 1)
  expect_equal(nobs(fit), 32L)
  expect_equal(length(predict(fit, mtcars[1:5, ])), 5L)
  fit2 <- update(fit, lambda = 1e-2)
  expect_equal(fit2$lambda, 1e-2)
  expect_s3_class(formula(fit), "formula")
  expect_output(print(summary(fit)), "FALKON regression")
  expect_equal(length(residuals(fit)), 32L)
  skip_if_not_installed("Matrix")
  set.seed(9)
  d <- matrix(rbinom(600, 1, 0.2) * runif(600), 100)
  y <- d[, 1] + d[, 2] + rnorm(100, sd = 0.05)
  s <- Matrix::Matrix(d, sparse = TRUE)
  a <- falkon(s, y, m = 20, lambda = 1e-3, iter = 30, seed = 2)
  b <- falkon(d, y, m = 20, lambda = 1e-3, iter = 30, seed = 2)
  # (sparse data are scaled, not centred: the kernel's rounding differs)
  expect_equal(predict(a, s[1:10, ]), predict(b, d[1:10, ]), tolerance = 1e-9)
})

test_that("bad input is refused, naming the argument", {
  x <- matrix(rnorm(100), 50)
  y <- rnorm(50)
  expect_error(falkon(replace(x, 3, NA), y), "'x'")
  expect_error(falkon(x, replace(y, 2, NA)), "'y'")
  expect_error(falkon(x, factor(rep("a", 50))), "'y'.*one class")
  expect_error(falkon(x, y, m = 51), "'m'")
  expect_error(falkon(x, y, m = matrix(0, 3, 3)), "'m'")
  expect_error(falkon(x, y, lambda = 0), "'lambda'")
  expect_error(falkon(x, y, lambda = -1), "'lambda'")
  expect_error(falkon(x, y, loss = "logistic"), "'loss'")
  expect_error(falkon(x, y, iter = 0), "'iter'")
  expect_error(falkon(x, y, weights = rep(-1, 50)), "'weights'")
  expect_error(falkon(x, y, control = list(bogus = 1)), "'control'")
  expect_error(falkon(x, y, kernel = "gaussian"), "'kernel'")
  old <- options(bochner.max_bytes = 1000)
  on.exit(options(old))
  expect_error(falkon(x, y, m = 40), "'m'.*too large")
  options(old)
  fit <- falkon(x, y, m = 10, lambda = 1e-3, iter = 5)
  expect_error(predict(fit, matrix(0, 2, 3)), "'newdata'")
  expect_error(predict(fit, x, type = "class"), "'type'")
  fc <- falkon(x, factor(x[, 1] > 0), m = 10, lambda = 1e-3, iter = 5)
  # no held-out slice: probabilities all the same, calibrated on the training scores
  expect_equal(dim(predict(fc, x[1:4, ], type = "prob")), c(4L, 2L))
})

test_that("every classification fit with a held-out slice gives calibrated probabilities", {
  # the softmax calibration recovers a known temperature and biases: scores
  # f, classes drawn from softmax(2 f + b); 20 000 rows put the estimates'
  # standard errors near 0.02, so 0.1 is five of them
  set.seed(31)
  n <- 20000
  f <- matrix(rnorm(3 * n), n)
  b <- c(0, 0.5, -1)
  z <- 2 * f + rep(b, each = n)
  p <- exp(z) / rowSums(exp(z))
  cls <- apply(p, 1L, function(q) sample.int(3L, 1L, prob = q))
  cal <- bochner:::softmax_calibration(f, cls, NULL, c("a", "b", "c"))
  expect_equal(cal$temperature, 2, tolerance = 0.1 / 2)
  expect_equal(cal$bias, b, tolerance = 0.1)
  # one column, a binary model's log-odds: the sigmoid of a f + b
  f1 <- matrix(rnorm(n))
  y1 <- 1L + (runif(n) < plogis(0.5 * f1[, 1] - 0.3))
  c1 <- bochner:::softmax_calibration(f1, y1, NULL, c("a", "b"))
  expect_equal(c1$temperature, 0.5, tolerance = 0.1 / 0.5)
  expect_equal(c1$bias[2], -0.3, tolerance = 0.1 / 0.3)
  pr1 <- bochner:::calibrated_probabilities(c1, f1[1:5, , drop = FALSE])
  expect_equal(pr1[, 2], plogis(c1$temperature * f1[1:5, 1] + c1$bias[2]))
  # Newton's minimum is plain R's: the regularised targets' weighted
  # log-loss minimised by optim() far past its default tolerance, on scores
  # whose fourth class is rare (a flat direction, where BFGS had stopped
  # short), with case weights
  set.seed(34)
  n4 <- 600
  f4 <- matrix(rnorm(4 * n4, sd = 3), n4)
  c4 <- sample.int(4L, n4, replace = TRUE, prob = c(0.4, 0.4, 0.19, 0.01))
  f4[cbind(seq_len(n4), c4)] <- f4[cbind(seq_len(n4), c4)] + 2
  w4 <- runif(n4, 0.5, 1.5)
  ref_loss <- function(th) {
    z <- th[1] * f4 + rep(c(0, th[-1]), each = n4)
    lp <- z - log(rowSums(exp(z)))
    hit <- (sum(w4) + 1) / (sum(w4) + 2)
    Tg <- ifelse(outer(c4, 1:4, "=="), hit, (1 - hit) / 3)
    -sum(w4 / sum(w4) * Tg * lp)
  }
  ref <- optim(c(1, 0, 0, 0), ref_loss, method = "BFGS",
               control = list(reltol = 1e-15, maxit = 5000))
  c4fit <- bochner:::softmax_calibration(f4, c4, w4, letters[1:4])
  expect_equal(c4fit$logloss, ref_loss(c(c4fit$temperature, c4fit$bias[-1])), tolerance = 1e-12)
  expect_lte(c4fit$logloss, ref$value + 1e-12)
  expect_equal(c(c4fit$temperature, c4fit$bias[-1]), ref$par, tolerance = 1e-4)
  # the squared loss: probabilities from its one-hot scores, rows summing
  # to one, better than the class frequencies on held-out data
  set.seed(32)
  idx <- sample(150, 100)
  fit <- falkon(Species ~ ., data = iris[idx, ], seed = 1)
  expect_identical(fit$calibration$type, "softmax")
  pr <- predict(fit, iris[-idx, ], type = "prob")
  expect_equal(dim(pr), c(50L, 3L))
  expect_equal(unname(rowSums(pr)), rep(1, 50))
  expect_true(all(pr > 0 & pr < 1))
  ll <- -mean(log(pr[cbind(1:50, as.integer(iris$Species[-idx]))]))
  expect_lt(ll, 0.5 * log(3))
  # the logistic loss is calibrated too; without a held-out slice
  # (lambda and iter given) it gives its own probabilities
  lg <- falkon(Species ~ ., data = iris[idx, ], loss = "logistic", seed = 1)
  expect_false(is.null(lg$calibration))
  expect_null(falkon(Species ~ ., data = iris, loss = "logistic", lambda = 1e-6, iter = 10,
                     seed = 1)$calibration)
})

test_that("without a held-out slice the squared loss calibrates on the training scores", {
  set.seed(33)
  idx <- sample(150, 100)
  fit <- falkon(Species ~ ., data = iris[idx, ], lambda = 1e-4, iter = 10, seed = 1)
  expect_identical(fit$n_train, 100L)
  expect_identical(fit$calibration$source, "training")
  expect_output(print(fit), "calibrated on the training rows' scores")
  # the softmax fitted to predict()'s own scores of the training rows
  cal <- bochner:::softmax_calibration(predict(fit, iris[idx, ], type = "decision"),
                                       as.integer(iris$Species[idx]), rep(1, 100),
                                       levels(iris$Species))
  expect_equal(fit$calibration$temperature, cal$temperature, tolerance = 1e-10)
  expect_equal(fit$calibration$bias, cal$bias, tolerance = 1e-10)
  pr <- predict(fit, iris[-idx, ], type = "prob")
  expect_equal(unname(rowSums(pr)), rep(1, 50))
  ll <- -mean(log(pr[cbind(1:50, as.integer(iris$Species[-idx]))]))
  expect_lt(ll, 0.5 * log(3))
  # case weights enter the softmax's likelihood (as the fit's, scaled to mean 1)
  w <- rep(1:2, 50)
  fw <- falkon(Species ~ ., data = iris[idx, ], weights = w, lambda = 1e-4, iter = 10, seed = 1)
  cw <- bochner:::softmax_calibration(predict(fw, iris[idx, ], type = "decision"),
                                      as.integer(iris$Species[idx]), w / mean(w),
                                      levels(iris$Species))
  expect_equal(fw$calibration$temperature, cw$temperature, tolerance = 1e-10)
  expect_equal(fw$calibration$bias, cw$bias, tolerance = 1e-10)
})

test_that("on too few rows for a held-out slice, lambda is chosen by exact leave-one-out", {
  # 60 rows hold out 6 < 10: the squared loss fits the centres' Nystrom
  # features Z = K_nm K_mm^(-1/2) by ridge regression with an intercept,
  # lambda on leave-one-out over every row (a fixed 1e-6 interpolated)
  set.seed(41)
  n <- 60
  x <- matrix(runif(2 * n, -2, 2), n)
  y <- sin(2 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.3)
  ker <- gaussian_kernel(0.4)     # K_mm's condition number about 1e5: alpha itself is
  fit <- falkon(x, y, kernel = ker, scale = FALSE, seed = 1)   # determined to 1e-10
  expect_true(is.na(fit$iter))
  expect_identical(fit$n_train, 60L)
  expect_named(fit$validation, c("lambda", "df", "loo"))
  # any N with N N' = K_mm^-1 gives the same fit: here the symmetric root
  C <- fit$centres
  e <- eigen(kernel_matrix(ker, C), symmetric = TRUE)
  N <- e$vectors %*% (t(e$vectors) / sqrt(e$values))
  Z <- kernel_matrix(ker, x, C) %*% N
  # brute-force leave-one-out at every lambda of the path: refit without row i
  loo_mse <- function(lambda) {
    mean(vapply(seq_len(n), function(i) {
      Zi <- Z[-i, ]
      zb <- colMeans(Zi)
      Zc <- sweep(Zi, 2, zb)
      beta <- solve(crossprod(Zc) + n * lambda * diag(ncol(Z)),
                    crossprod(Zc, y[-i] - mean(y[-i])))
      (y[i] - mean(y[-i]) - sum((Z[i, ] - zb) * beta))^2
    }, 0))
  }
  # (the penalty stays n lambda when a row is left out, as in rff_ridge();
  # the path's smallest lambda nearly interpolates, where the leave-one-out
  # residuals are ratios of vanishing numbers: not compared)
  pick <- c(1, which.min(fit$validation$loo), nrow(fit$validation) - 8)
  expect_equal(fit$validation$loo[pick], vapply(fit$validation$lambda[pick], loo_mse, 0),
               tolerance = 1e-6)
  expect_identical(fit$lambda, fit$validation$lambda[which.min(fit$validation$loo)])
  zb <- colMeans(Z)
  Zc <- sweep(Z, 2, zb)
  beta <- solve(crossprod(Zc) + n * fit$lambda * diag(ncol(Z)), crossprod(Zc, y - mean(y)))
  expect_equal(drop(fit$alpha), drop(N %*% beta), tolerance = 1e-7)
  expect_equal(fit$offset, mean(y) - sum(zb * beta), tolerance = 1e-9)
  expect_equal(unname(fit$fitted), drop(Z %*% beta) + fit$offset, tolerance = 1e-8)
  expect_equal(predict(fit, x[1:5, ]), unname(fit$fitted[1:5]), tolerance = 1e-8)
  expect_output(print(fit), "exact leave-one-out on all 60 rows")
  expect_output(print(summary(fit)), "Leave-one-out RMSE")
  # reproducible, and a different fit from the old fallback's interpolation
  expect_identical(falkon(x, y, kernel = ker, scale = FALSE, seed = 1)$alpha, fit$alpha)
  expect_lt(fit$rmse, sd(y))
  expect_gt(fit$rmse, 0.1)
  # up to control$loo_rows (2000) rows by default; loo_rows = 0 keeps a slice where one fits
  x3 <- matrix(runif(600, -2, 2), 300)
  y3 <- sin(2 * x3[, 1]) + rnorm(300, sd = 0.3)
  expect_true(is.na(falkon(x3, y3, seed = 1)$iter))
  held <- falkon(x3, y3, seed = 1, control = list(loo_rows = 0))
  expect_false(is.na(held$iter))
  expect_identical(held$n_train, 270L)
  expect_error(falkon_control(loo_rows = -1), "'loo_rows'")
  # case weights: rows of weight zero are rows left out, for the path too
  w <- rep(0:1, 30)
  C <- x[w == 1, ][1:20, ]
  fw <- falkon(x, y, kernel = ker, m = C, weights = w, scale = FALSE)
  fk <- falkon(x[w == 1, ], y[w == 1], kernel = ker, m = C, scale = FALSE)
  expect_equal(fw$lambda, fk$lambda)
  expect_equal(predict(fw, x[1:5, ]), predict(fk, x[1:5, ]), tolerance = 1e-8)
  # pure noise: leave-one-out wants the constant, at the top of the path, and says so
  set.seed(1)
  expect_warning(falkon(x, rnorm(n)), "falkon: lambda = .*the largest of the path")
})

test_that("the leave-one-out fit takes control$lambdas as its grid where they are given", {
  set.seed(42)
  n <- 80
  x <- matrix(runif(2 * n, -2, 2), n)
  y <- sin(2 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.3)
  ker <- gaussian_kernel(0.6)
  # the default candidates give way to rff_ridge's grid (41 values or more)
  def <- falkon(x, y, kernel = ker, seed = 1)
  expect_gte(nrow(def$validation), 41L)
  # candidates given: the path is on them, as given (largest first), and picks its least
  lams <- c(1e-3, 1e-1, 1e-5)
  fit <- falkon(x, y, kernel = ker, seed = 1, control = list(lambdas = lams))
  expect_identical(fit$validation$lambda, sort(lams, decreasing = TRUE))
  expect_identical(fit$lambda, fit$validation$lambda[which.min(fit$validation$loo)])
  # each lambda's leave-one-out error is the one-candidate fit's, whose
  # coefficients at the chosen lambda are the fit's
  one <- lapply(fit$validation$lambda, function(l) {
    falkon(x, y, kernel = ker, seed = 1, control = list(lambdas = l))
  })
  expect_equal(vapply(one, function(f) f$validation$loo, 0), fit$validation$loo,
               tolerance = 1e-10)
  best <- one[[which.min(fit$validation$loo)]]
  expect_equal(best$alpha, fit$alpha, tolerance = 1e-10)
  # a given grid whose edge wins says so, naming control$lambdas
  expect_warning(falkon(x, y, kernel = ker, seed = 1, control = list(lambdas = c(1e3, 1e2))),
                 "lambda = 100, the smallest value of control\\$lambdas, was chosen: .*extend")
})

test_that("a small classification fit by leave-one-out gives calibrated probabilities", {
  set.seed(42)
  n <- 80
  x <- matrix(rnorm(2 * n), n)
  cl <- factor(ifelse(x[, 1] + rnorm(n, sd = 0.5) > 0, "up", "down"))
  fit <- falkon(x, cl, seed = 2)
  expect_true(is.na(fit$iter))
  p <- predict(fit, x, type = "prob")
  expect_identical(colnames(p), levels(cl))
  expect_equal(unname(rowSums(p)), rep(1, n), tolerance = 1e-12)
  # the calibration saw leave-one-out scores: no near-certain probabilities
  # on rows the classes overlap at
  expect_gt(mean(apply(p, 1, max)), 0.6)
  expect_lt(mean(apply(p, 1, max)), 0.99)
  expect_gt(mean(predict(fit, x) == cl), 0.8)
  # the leave-one-out values from the path's spectrum are rff_ridge's from its inverse
  ns <- asNamespace("bochner")
  xs <- scale(x)
  map <- ns$falkon_loo_map(gaussian_kernel(1), xs[1:30, ], "uniform", 1L)
  Y <- cbind(as.numeric(cl == "down"), as.numeric(cl == "up"))
  sys <- ns$ridge_primal_system(map, xs, Y, NULL, 1L)
  ch <- ns$ridge_choose(sys, "auto", "loo", ns$ridge_loo_source(sys, map, xs, Y, NULL, 1L), NULL,
                        1L, n)
  sol <- ns$ridge_solve(sys, n * ch$lambda, 1L)
  f <- ns$feature_decision(map, xs, sol$beta, sol$intercept, 1L)
  expect_equal(ns$ridge_loo_values(ch$spec, sys, n * ch$lambda, map, xs, Y, NULL, 1L),
               ns$ridge_loo_scores(sys, n * ch$lambda, f, Y, map, xs, NULL, 1L), tolerance = 1e-8)
  # more centres given than rows (the dual side): probabilities still calibrated
  fd <- falkon(x[1:40, ], cl[1:40], m = x[1:50, ] + 0.01, seed = 2)
  expect_true(is.na(fd$iter))
  expect_equal(unname(rowSums(predict(fd, x, type = "prob"))), rep(1, n), tolerance = 1e-12)
})
