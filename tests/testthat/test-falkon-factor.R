# The packed preconditioner of falkon() (src/falkon_factor.c): T and A in
# one m x m array against chol(), backsolve() and forwardsolve(); thread
# identity; lambda = "auto" fitting its candidates one after another
# (control$factor_bytes) against the simultaneous path; the memory guard.

packed <- function(C, ker, nth = 1L) {
  .Call(bochner:::C_falkon_factor, C, bochner:::kernel_code(ker),
        bochner:::kernel_parameters(ker), 1e-13, nth)
}
get_factor <- function(F, which) .Call(bochner:::C_falkon_factor_get, F, which)
precond <- function(F, lambda, s, nth = 1L) {
  .Call(bochner:::C_falkon_factor_precond, F, lambda, s, nth)
}
fsolve <- function(F, B, which, tr, nth = 1L) {
  .Call(bochner:::C_falkon_factor_solve, F, B, which, tr, nth)
}
tprod <- function(F, B, tr, nth = 1L) .Call(bochner:::C_falkon_factor_tprod, F, B, tr, nth)

test_that("the packed factors and their solves equal chol(), backsolve() and forwardsolve()", {
  set.seed(31)
  ker <- gaussian_kernel(1.5)
  # 1: no blocks; 250 and 517: tiles of 240, panels of 192, solve blocks of 96
  for (m in c(1, 7, 250, 517)) {
    C <- matrix(rnorm(m * 3), m)
    K <- kernel_matrix(ker, C)
    F <- packed(C, ker)
    T <- get_factor(F, 0L)
    # K is nearly singular: the factor is checked by its backward error (and
    # the solves and products against the same triangle below)
    expect_lt(max(abs(crossprod(T) - K - diag(1e-13 * m * mean(diag(K)), m))), 1e-10)
    expect_true(all(T[lower.tri(T)] == 0) && all(diag(T) > 0))
    Tref <- T
    expect_null(get_factor(F, 1L))        # no preconditioner yet
    B <- matrix(rnorm(m * 11), m)         # 11: a group of 8 columns and one of 3
    for (lam_s in list(c(1e-3, 1), c(1e-6, 0.3))) {
      expect_true(precond(F, lam_s[1], lam_s[2]))
      A <- get_factor(F, 1L)
      Aref <- chol(lam_s[2] * tcrossprod(T) / m + diag(lam_s[1], m))
      expect_lt(max(abs(A - Aref)) / max(abs(Aref)), 1e-10)
      expect_identical(get_factor(F, 0L), T)       # T untouched by the refactorisation
      for (tr in c(FALSE, TRUE)) {
        ref <- backsolve(Aref, B, transpose = tr)
        expect_lt(max(abs(fsolve(F, B, 1L, tr) - ref)) / max(abs(ref)), 1e-10)
        ref <- backsolve(Tref, B, transpose = tr)
        expect_lt(max(abs(fsolve(F, B, 0L, tr) - ref)) / max(abs(ref)), 1e-10)
        ref <- if (tr) crossprod(Tref, B) else Tref %*% B
        expect_lt(max(abs(tprod(F, B, tr) - ref)) / max(abs(ref)), 1e-10)
      }
    }
    expect_equal(get_factor(F, 2L), c(1e-6, 0.3, 1))
    # a copy is independent of the original
    F2 <- .Call(bochner:::C_falkon_factor_copy, F)
    expect_true(precond(F2, 1e-2, 1))
    expect_identical(get_factor(F, 1L), A)
  }
  # refused: a pivot that fails leaves T alone and no preconditioner
  C <- matrix(rnorm(30), 10)
  F <- packed(C, ker)
  T <- get_factor(F, 0L)
  expect_false(precond(F, -10, 1))
  expect_null(get_factor(F, 1L))
  expect_identical(get_factor(F, 0L), T)
  expect_error(fsolve(F, matrix(1, 10, 1), 1L, FALSE), "no preconditioner")
  expect_error(fsolve(F, matrix(1, 9, 1), 0L, FALSE), "one row per centre")
  expect_error(precond(list(), 1, 1), "FALKON factor")
  # a kernel with non-finite values on the centres
  expect_false(packed(matrix(c(0, 1e300), 2), polynomial_kernel(40, offset = 1e300)))
})

test_that("a kept G gives the same preconditioners, shared by the copies", {
  set.seed(35)
  ker <- gaussian_kernel(1)
  C <- matrix(rnorm(300 * 3), 300)
  F1 <- packed(C, ker)
  F2 <- packed(C, ker)
  expect_true(precond(F2, 0.5, 1))
  bochner:::falkon_keep_g(list(F = F2), 1L)    # drops the A it held
  expect_null(get_factor(F2, 1L))
  expect_identical(get_factor(F2, 0L), get_factor(F1, 0L))
  F3 <- .Call(bochner:::C_falkon_factor_copy, F2)
  for (l in c(1e-3, 1e-6)) {
    precond(F1, l, 0.4)
    precond(F2, l, 0.4)
    precond(F3, l, 0.4)
    expect_identical(get_factor(F2, 1L), get_factor(F1, 1L))
    expect_identical(get_factor(F3, 1L), get_factor(F1, 1L))
  }
})

test_that("the packed factors, solves and products are identical for 1 and 2 threads", {
  set.seed(32)
  ker <- gaussian_kernel(2)
  m <- 700
  C <- matrix(rnorm(m * 4), m)
  F1 <- packed(C, ker, 1L)
  F2 <- packed(C, ker, 2L)
  expect_identical(get_factor(F2, 0L), get_factor(F1, 0L))
  precond(F1, 1e-5, 0.6, 1L)
  precond(F2, 1e-5, 0.6, 2L)
  expect_identical(get_factor(F2, 1L), get_factor(F1, 1L))
  B <- matrix(rnorm(m * 70), m)
  for (tr in c(FALSE, TRUE)) {
    for (which in 0:1) expect_identical(fsolve(F1, B, which, tr, 2L), fsolve(F1, B, which, tr, 1L))
    expect_identical(tprod(F1, B, tr, 2L), tprod(F1, B, tr, 1L))
  }
})

test_that("lambda = \"auto\" one candidate at a time picks the simultaneous path's lambda", {
  set.seed(33)
  n <- 1500
  x <- matrix(runif(n * 2, -2, 2), n)
  y <- sin(2 * x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.05)
  ker <- gaussian_kernel(0.7)
  ctl <- list(lambdas = c(1e-1, 1e-3, 1e-5, 1e-7), tol = 1e-14)
  both <- falkon(x, y, kernel = ker, m = 150, seed = 2, iter = 300, control = ctl)
  one <- falkon(x, y, kernel = ker, m = 150, seed = 2, iter = 300,
                control = c(ctl, factor_bytes = 0))
  expect_equal(one$lambda, both$lambda)
  # the candidates were tried from the largest, each improving on the last
  # but the one that stopped them
  tried <- unique(one$validation$lambda)
  expect_identical(tried, ctl$lambdas[seq_along(tried)])
  best <- vapply(tried, function(l) min(one$validation$error[one$validation$lambda == l]), 0)
  if (length(tried) > 1L) expect_true(all(diff(best[-length(best)]) < 0))
  if (length(tried) < length(ctl$lambdas)) expect_gte(best[length(best)], best[length(best) - 1L])
  expect_lt(max(abs(predict(one, x[1:50, ]) - predict(both, x[1:50, ]))), 0.05)
})

test_that("one candidate at a time: the lambda chosen and its alpha solve the Nystrom system", {
  # held-out targets made by the Nystrom solution of lambda = 1e-3 on the
  # training rows: its path converges to error 0, the others cannot, so
  # both paths must choose it, and its alpha is that solution
  set.seed(34)
  n <- 400
  m <- 80
  ker <- gaussian_kernel(1)
  x <- matrix(rnorm(n * 2), n)
  y <- sin(x[, 1]) + rnorm(n, sd = 0.1)
  prep <- bochner:::falkon_prepare(ker, x[seq_len(m), ], 1L)
  rows <- bochner:::falkon_rows(x, 1L)
  Knm <- kernel_matrix(ker, x, x[seq_len(m), ])
  T <- get_factor(prep$F, 0L)
  astar <- solve(crossprod(Knm) + 1e-3 * n * crossprod(T), crossprod(Knm, y - mean(y)))
  val <- list(x = x, Y = Knm %*% astar + mean(y), w = rep(1, n), cls = NULL)
  H <- crossprod(Knm) + 1e-3 * n * crossprod(T)
  b <- crossprod(Knm, y - mean(y))
  for (bytes in c(1e9, 0)) {
    ctl <- bochner:::falkon_control_list(list(lambdas = c(1e-1, 1e-3, 1e-5), tol = 1e-14,
                                              factor_bytes = bytes))
    res <- bochner:::falkon_fit_squared(prep, rows, matrix(y), rep(1, n), val, "auto", 200, ctl,
                                        1L)
    expect_equal(res$lambda, 1e-3)
    # K_mm is nearly singular: alpha is checked by the system's residual
    # and the fitted values, not entry by entry
    expect_lt(max(abs(H %*% res$alpha - b)) / max(abs(b)), 1e-5)
    expect_lt(max(abs(Knm %*% (res$alpha - astar))), 1e-3)
    expect_setequal(unique(res$validation$lambda), c(1e-1, 1e-3, 1e-5))
  }
})

test_that("factor_bytes is checked and the memory guard counts the factors", {
  expect_error(falkon_control(factor_bytes = -1), "factor_bytes")
  expect_error(falkon_control(factor_bytes = "a"), "factor_bytes")
  x <- matrix(rnorm(400), 200)
  y <- rnorm(200)
  expect_error(falkon(x, y, control = list(factor_bytes = NA)), "factor_bytes")
  ctl <- bochner:::falkon_control_list(list())
  expect_false(bochner:::falkon_sequential(1000, 3, ctl))
  expect_true(bochner:::falkon_sequential(1e4, 3, ctl))
  expect_false(bochner:::falkon_sequential(1e4, 1, ctl))
  old <- options(bochner.max_bytes = 8 * 3000^2)
  on.exit(options(old))
  expect_true(bochner:::falkon_sequential(2000, 3, ctl))   # a quarter of the limit
  expect_error(bochner:::falkon_check_memory(3000, 100, 3, 1, ctl), "'m' is too large")
  expect_silent(bochner:::falkon_check_memory(1000, 100, 3, 1, ctl))
  # the data's copies count: 10^6 rows of 20 columns are 320 MB more
  expect_error(bochner:::falkon_check_memory(1000, 100, 3, 1, ctl, 1e6, 20), "'m' is too large")
})

test_that("many uniform centres choose lambda on their first quarter, then fit it on all", {
  # 200 centres: three candidates' factors (8 m^2 each) exceed factor_bytes,
  # their first 50 fit it, so lambda is chosen on those 50 (all candidates
  # in one path) and the 200-centre fit runs that lambda, warm-started
  set.seed(35)
  n <- 1200
  x <- matrix(runif(n * 2, -2, 2), n)
  y <- sin(2 * x[, 1]) * cos(x[, 2]) + rnorm(n, sd = 0.1)
  ker <- gaussian_kernel(0.7)
  ctl <- list(lambdas = c(1e-2, 1e-4, 1e-6), factor_bytes = 5e5, start_centers = 32, loo_rows = 0)
  expect_identical(bochner:::falkon_pilot_size(200, 3, bochner:::falkon_control_list(ctl)), 50)
  expect_null(bochner:::falkon_pilot_size(100, 3, bochner:::falkon_control_list(ctl)))
  expect_null(bochner:::falkon_pilot_size(200, 3,
                                          bochner:::falkon_control_list(c(ctl["lambdas"],
                                                                          factor_bytes = 0))))
  fit <- falkon(x, y, kernel = ker, m = 200, seed = 4, control = ctl)
  expect_identical(fit$centres_path$m, c(50, 200))
  expect_identical(fit$m, 200L)
  expect_identical(fit$lambda, fit$centres_path$lambda[1])
  expect_identical(unique(fit$validation$lambda), fit$lambda)
  # the same two steps by hand, from the fit's centres and the same split
  ctl_l <- bochner:::falkon_control_list(ctl)
  set.seed(4)
  split <- bochner:::falkon_split(n, "auto", "auto", ctl_l)
  xs <- bochner:::rff_apply_scaling(x, fit$scaling)
  rows <- bochner:::falkon_rows(xs[split$train, ], 1L)
  resp <- bochner:::ridge_response(y, n)
  val <- bochner:::falkon_heldout(xs, resp, rep(1, n), split$valid)
  Y <- resp$Y[split$train, , drop = FALSE]
  w <- rep(1, length(split$train))
  p50 <- bochner:::falkon_prepare(fit$kernel, fit$centres[1:50, ], 1L)
  first <- bochner:::falkon_fit_squared(p50, rows, Y, w, val, "auto", "auto", ctl_l, 1L)
  expect_setequal(unique(first$validation$lambda), ctl$lambdas)
  expect_identical(first$lambda, fit$lambda)
  p200 <- bochner:::falkon_prepare(fit$kernel, fit$centres, 1L)
  full <- bochner:::falkon_fit_squared(p200, rows, Y, w, val, first$lambda, "auto", ctl_l, 1L,
                                       rbind(first$alpha, matrix(0, 150, 1)))
  expect_identical(unname(fit$alpha), unname(full$alpha))
  # centres given as a matrix keep the candidates one after another
  fm <- falkon(x, y, kernel = ker, m = x[1:200, ], seed = 4, control = ctl)
  expect_null(fm$centres_path)
  expect_identical(unique(fm$validation$lambda), ctl$lambdas[seq_along(unique(fm$validation$lambda))])
})

test_that("a pilot's lambda at the top of the candidates goes on down on all the centres", {
  # a rough surface: the pilot's 50 centres choose the largest candidate, 1e-4 (a choice
  # their few centres could not make), the 200 want 1e-6 (as argo2016's 2500 and 10^4
  # centres in bench/investigations/spatiotemporal.md)
  set.seed(36)
  n <- 1200
  x <- matrix(runif(n * 2, -2, 2), n)
  f0 <- function(x) sin(6 * x[, 1]) * cos(5 * x[, 2])
  y <- f0(x) + rnorm(n, sd = 0.05)
  ctl <- list(lambdas = c(1e-4, 1e-6, 1e-8), factor_bytes = 5e5, start_centers = 32, loo_rows = 0)
  fit <- falkon(x, y, kernel = gaussian_kernel(0.3), m = 200, seed = 4, control = ctl)
  expect_identical(fit$centres_path$lambda[1], 1e-4)
  v <- fit$validation
  expect_identical(unique(v$lambda)[1:2], c(1e-4, 1e-6))
  expect_lt(min(v$error[v$lambda == 1e-6]), min(v$error[v$lambda == 1e-4]))
  expect_lt(fit$lambda, 1e-4)
  # closer to the surface than the pilot's lambda on all the centres
  old <- falkon(x, y, kernel = gaussian_kernel(0.3), m = 200, seed = 4, lambda = 1e-4,
                control = ctl)
  xt <- matrix(runif(4000, -2, 2), 2000)
  expect_lt(mean((predict(fit, xt) - f0(xt))^2), mean((predict(old, xt) - f0(xt))^2))
})

test_that("a warm start's residual from one pass is the residual of the two passes", {
  # falkon_cg() from alpha0: resid0 = (K' Y - K' K alpha0) / n from one
  # pass, against the right-hand side and K' K alpha0 from two
  set.seed(36)
  n <- 600
  m <- 60
  x <- matrix(rnorm(n * 3), n)
  y <- cbind(sin(x[, 1]) + rnorm(n, sd = 0.1), cos(x[, 2]))
  ker <- gaussian_kernel(1.2)
  prep <- bochner:::falkon_prepare(ker, x[seq_len(m), ], 1L)
  rows <- bochner:::falkon_rows(x, 1L)
  lams <- c(1e-2, 1e-3)
  F <- bochner:::falkon_precond_all(prep, lams, 1L)
  a0 <- matrix(rnorm(m * 2, sd = 0.1), m)
  apply_knm <- function(U) rows$pass(prep, U = U)
  rhs <- rows$pass(prep, V = y) / n
  resid0 <- -rows$pass(prep, U = a0, V = -y) / n
  Knm <- kernel_matrix(ker, x, x[seq_len(m), ])
  expect_equal(resid0, crossprod(Knm, y - Knm %*% a0) / n, tolerance = 1e-12)
  start <- a0[, c(1, 2, 1, 2)]
  # K_mm is nearly singular: the fits are compared by their values K alpha
  two <- bochner:::falkon_cg(apply_knm, rhs, prep, F, lams, n, 60, tol = 1e-13,
                             nthreads = 1L, alpha0 = start)
  one <- bochner:::falkon_cg(apply_knm, NULL, prep, F, lams, n, 60, tol = 1e-13,
                             nthreads = 1L, alpha0 = start, resid0 = resid0)
  expect_lt(max(abs(Knm %*% (one$alpha - two$alpha))), 1e-8)
  # and both solve the Nystrom system of each lambda
  T <- get_factor(prep$F, 0L)
  for (g in 1:2) {
    lam <- lams[g]
    direct <- solve(crossprod(Knm) / n + lam * crossprod(T), crossprod(Knm, y) / n)
    expect_lt(max(abs(Knm %*% (one$alpha[, 2 * g - 1:0] - direct))), 1e-6)
  }
})

test_that("summary() shows the quarter that chose lambda and the fit on all centres", {
  set.seed(37)
  x <- matrix(runif(900 * 2, -2, 2), 900)
  y <- sin(2 * x[, 1]) + rnorm(900, sd = 0.1)
  fit <- falkon(x, y, kernel = gaussian_kernel(0.7), m = 200, seed = 1,
                control = list(factor_bytes = 5e5, start_centers = 32, loo_rows = 0))
  out <- capture.output(print(summary(fit)))
  at <- grep("Held-out error by number of centres", out)
  expect_length(at, 1L)
  expect_match(out[at + 2L], "^ +50 ")
  expect_match(out[at + 3L], "^ +200 ")
})
