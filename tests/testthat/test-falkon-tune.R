# falkon(tune = ): lambda and the length scales learned by gradient of a
# held-out squared error, GCV or the Nystrom marginal likelihood
# (R/fit-falkon-tune.R, the objectives in
# R/fit-falkon-tune-objective.R).

tune_data <- function(n = 300, seed = 1, sd = 0.1) {
  set.seed(seed)
  x <- matrix(rnorm(n * 4), n, 4, dimnames = list(NULL, paste0("v", 1:4)))
  list(x = x, y = sin(2 * x[, 1]) + x[, 2]^2 / 3 + rnorm(n, sd = sd))
}

# central differences of f(theta)$value at theta, step h
fd_gradient <- function(f, theta, h = 1e-5) {
  vapply(seq_along(theta), function(i) {
    e <- replace(numeric(length(theta)), i, h)
    (f(theta + e)$value - f(theta - e)$value) / (2 * h)
  }, 0)
}

test_that("the tuning's gradient matches central finite differences", {
  d <- tune_data()
  set.seed(2)
  Y1 <- cbind(d$y)
  Y3 <- cbind(d$y, d$x[, 3] > 0, cos(d$x[, 4]))   # several columns, as for classes
  for (Y in list(Y1, Y3)) {
    folds <- bochner:::falkon_tune_folds(d$x, Y, 40)
    for (p in c(1L, 4L)) {
      theta <- c(log(1e-4), if (p == 1L) log(0.9) else log(c(0.7, 1.3, 2, 0.5)))
      f <- function(t) bochner:::falkon_tune_eval(t[-1], folds, p, 4, exp(t[1]), 1L)$value
      g <- bochner:::falkon_tune_eval(theta[-1], folds, p, 4, exp(theta[1]), 1L)$gradient
      h <- 1e-5
      fd <- vapply(seq_along(theta), function(i) {
        e <- replace(numeric(length(theta)), i, h)
        (f(theta + e) - f(theta - e)) / (2 * h)
      }, 0)
      # central differences err by O(h^2) times the third derivative, and
      # by the objective's rounding (1e-16) over h
      expect_equal(g, fd, tolerance = 1e-6, label = paste("p =", p, "k =", ncol(Y)))
    }
  }
})

# A small tuning problem (200 rows, 30 centres, three centred target
# columns) with its Gaussian kernel matrices in plain R at the scales s
objective_problem <- function(s = c(0.7, 1.3, 2, 0.5)) {
  d <- tune_data(200)
  set.seed(3)
  z <- d$x[sample(200, 30), ]
  Y3 <- cbind(d$y, d$x[, 3] > 0, cos(d$x[, 4]))
  Y3 <- sweep(Y3, 2, colMeans(Y3))
  gk <- function(a, b) exp(-outer(rowSums(a^2), rowSums(b^2), "+") / 2 + a %*% t(b))
  u <- sweep(d$x, 2, s, "/")
  zs <- sweep(z, 2, s, "/")
  list(pr = list(x = d$x, z = z, y = Y3), s = s, Knm = gk(u, zs), Kmm = gk(zs, zs))
}

# An objective's analytic gradient against central differences, for the
# Gaussian and Matern 3/2 kernels and one and three target columns
expect_objective_gradient <- function(objective, P, lam) {
  for (shape in list(bochner:::tune_gaussian, list(name = "matern", nu = 1.5))) {
    for (k in c(1L, 3L)) {
      pk <- replace(P$pr, "y", list(P$pr$y[, seq_len(k), drop = FALSE]))
      f <- function(t) objective(pk, exp(t[-1]), exp(t[1]), 1L, shape)
      theta <- c(log(lam), log(P$s))
      expect_equal(unname(f(theta)$gradient), fd_gradient(f, theta), tolerance = 1e-6,
                   label = paste(shape$name, "k =", k))
    }
  }
}

# A fit tuned by 'objective' on tune_data(400), in memory and on two
# chunks: the same learned kernel and predictions; the in-memory fit
expect_chunked_tuning <- function(objective) {
  d <- tune_data(400)
  df <- data.frame(d$x, y = d$y)
  ch <- data_chunks(list(df[1:150, ], df[151:400, ]))
  ctl <- falkon_control(tune_objective = objective)
  fm <- falkon(d$x, d$y, m = 50, tune = "ard", seed = 4, control = ctl)
  fc <- falkon(ch, y = "y", m = 50, tune = "ard", seed = 4, control = ctl)
  expect_identical(fc$tuning, fm$tuning)
  expect_identical(predict(fc, d$x), predict(fm, d$x))
  fm
}

test_that("the GCV objective is plain R's and its gradient matches finite differences", {
  P <- objective_problem()
  # n GCV = n^2 RSS / (n - tr H)^2 with the hat matrix of the Nystrom fit;
  # the factor's jitter (1e-10 n on A's diagonal, 2e-8 against lambda n =
  # 0.2) is left out of tr H = m - lambda n tr(A^-1 K_mm): 1e-7 relatively
  lam <- 1e-3
  H <- P$Knm %*% solve(crossprod(P$Knm) + lam * 200 * P$Kmm, t(P$Knm))
  Y3 <- P$pr$y
  ref <- 200^2 * sum((Y3 - H %*% Y3)^2) / (200 - sum(diag(H)))^2
  got <- bochner:::falkon_tune_gcv(P$pr, P$s, lam, 1L, bochner:::tune_gaussian)
  expect_equal(got$value, ref, tolerance = 1e-6)
  expect_objective_gradient(bochner:::falkon_tune_gcv, P, lam)
})

test_that("the marginal likelihood objective is plain R's and its gradient matches finite differences", {
  P <- objective_problem()
  # per column, the profiled Gaussian log likelihood of y ~ N(0, s^2 Sigma),
  # Sigma = K_nm (K_mm + jitter I)^-1 K_mn + lambda n I, by dense solves
  Y3 <- P$pr$y
  ref <- function(lam) {
    S <- P$Knm %*% solve(P$Kmm + diag(1e-6, 30), t(P$Knm)) + diag(lam * 200, 200)
    q <- colSums(Y3 * solve(S, Y3))
    sum(100 * log(2 * pi * q / 200) + 100) + 3 / 2 * determinant(S)$modulus[[1]]
  }
  # down to lambda = 1e-9, where a solve with A = K_mn K_nm + lambda n K_mm
  # by its explicit inverse was off by up to 0.5 a row
  for (lam in c(1e-3, 1e-9)) {
    got <- bochner:::falkon_tune_ml(P$pr, P$s, lam, 1L, bochner:::tune_gaussian)
    expect_equal(got$value, ref(lam), tolerance = 1e-8, label = paste("lambda", lam))
  }
  expect_objective_gradient(bochner:::falkon_tune_ml, P, 1e-3)
  # the objective's layout is GCV's, and a fit tuned by it runs in memory
  # and on chunks alike
  d <- tune_data(400)
  big <- bochner:::falkon_tune_folds(d$x, cbind(d$y), 50, 300, "ml")
  expect_identical(big$objective, "ml")
  expect_null(big$folds[[1]]$v)
  fm <- expect_chunked_tuning("ml")
  expect_false(identical(fm$tuning$sigma, expect_chunked_tuning("gcv")$tuning$sigma))
})

test_that("GCV tunes on rows none held out, and is judged on a fifth it never saw", {
  set.seed(5)
  x <- matrix(rnorm(2000 * 2), 2000)
  Y <- cbind(x[, 1] + rnorm(2000))
  small <- bochner:::falkon_tune_folds(x[1:400, ], Y[1:400, , drop = FALSE], 50, 300, "gcv")
  expect_length(small$folds, 1L)
  expect_null(small$folds[[1]]$v)
  expect_identical(nrow(small$folds[[1]]$x), 400L)
  expect_identical(small$nv, 400L)
  expect_null(small$check)
  big <- bochner:::falkon_tune_folds(x, Y, 50, 300, "gcv")
  fit_rows <- big$folds[[1]]$x
  held <- big$check$folds[[1]]$v
  expect_identical(nrow(fit_rows) + nrow(held), 2000L)
  expect_identical(big$nv, nrow(fit_rows))
  key <- function(a) paste(a[, 1], a[, 2])
  expect_length(intersect(key(fit_rows), key(held)), 0L)
  expect_error(falkon_control(tune_objective = "loo"), "tune_objective")
  # a GCV-tuned fit, in memory and on chunks the same
  d <- tune_data(400)
  fm <- expect_chunked_tuning("gcv")
  ho <- falkon(d$x, d$y, m = 50, tune = "ard", seed = 4,
               control = list(tune_objective = "heldout"))
  expect_false(identical(fm$tuning$sigma, ho$tuning$sigma))
})

test_that("tune_objective = 'auto' is the marginal likelihood for a regression, the held-out error for classes", {
  d <- tune_data(400)
  reg <- falkon(d$x, d$y, m = 50, tune = "iso", seed = 4)
  expect_identical(reg$tuning$criterion, "ml")
  ml <- falkon(d$x, d$y, m = 50, tune = "iso", seed = 4, control = list(tune_objective = "ml"))
  expect_identical(ml$tuning, reg$tuning)
  cls <- falkon(d$x, d$y > median(d$y), m = 50, tune = "iso", seed = 4)
  expect_identical(cls$tuning$criterion, "heldout")
  # on chunks the same resolution, from the response surveyed
  on_chunks <- function(y) {
    df <- data.frame(d$x, y = y)
    falkon(data_chunks(list(df[1:150, ], df[151:400, ])), y = "y", m = 50, tune = "iso",
           seed = 4)$tuning
  }
  expect_identical(on_chunks(d$y), reg$tuning)
  expect_identical(on_chunks(d$y > median(d$y)), cls$tuning)
})

test_that("the Matern kernel's gradient matches central finite differences", {
  d <- tune_data()
  set.seed(2)
  folds <- bochner:::falkon_tune_folds(d$x, cbind(d$y), 40)
  # nu = 1/2 (k / r), 3/2 and 5/2 (the kernel blocks' closed forms at nu - 1),
  # the Bessel forms below and above nu = 1, and a smoothness where R's
  # gamma() and besselK() would overflow
  for (nu in c(0.5, 0.8, 1.5, 2.2, 2.5, 200)) {
    sh <- bochner:::tune_shape(matern_kernel(1, nu = nu))
    for (p in c(1L, 4L)) {
      theta <- c(log(1e-4), if (p == 1L) log(0.9) else log(c(0.7, 1.3, 2, 0.5)))
      ev <- function(t) bochner:::falkon_tune_eval(t[-1], folds, p, 4, exp(t[1]), 1L, sh)
      g <- ev(theta)$gradient
      # at nu = 1/2, k = exp(-r) turns the rounding of r^2 at the pairs of a
      # centre with itself (about 1e-16) into 1e-8 in k, noise of 1e-8 / h
      # in the differences: a longer step there, whose O(h^2) error is the
      # tolerance
      h <- if (nu == 0.5) 1e-3 else 1e-5
      fd <- vapply(seq_along(theta), function(i) {
        e <- replace(numeric(length(theta)), i, h)
        (ev(theta + e)$value - ev(theta - e)$value) / (2 * h)
      }, 0)
      expect_equal(g, fd, tolerance = if (nu == 0.5) 1e-4 else 1e-6,
                   label = paste("nu =", nu, "p =", p))
    }
  }
  # the Bessel forms (R's below nu = 1, the kernel blocks' above) are the
  # closed forms where both apply
  a <- d$x[1:30, ]
  for (nu in c(0.5, 1.5, 2.5)) {
    closed <- bochner:::tune_kernels(a, NULL, list(name = "matern", nu = nu), 1L)$D
    bessel <- bochner:::tune_kernels(a, NULL, list(name = "matern", nu = nu + 1e-9), 1L)$D
    off <- row(closed) != col(closed)
    expect_equal(bessel[off], closed[off], tolerance = 1e-7, label = paste("nu =", nu))
  }
})

test_that("falkon(tune = 'ard') learns the Matern kernel's length scales", {
  d <- tune_data()
  fit <- falkon(d$x, d$y, m = 60, kernel = matern_kernel("median", nu = 3/2), tune = "ard",
                seed = 3)
  expect_identical(fit$kernel$name, "matern")
  expect_identical(fit$kernel$nu, 3/2)
  expect_length(fit$kernel$sigma, 4)
  expect_true(isTRUE(fit$kernel$sigma_learned))
  expect_lt(fit$tuning$objective[["end"]], fit$tuning$objective[["start"]])
  # the two inputs the response ignores get the longest scales
  expect_lt(max(fit$kernel$sigma[1:2]), min(fit$kernel$sigma[3:4]))
  # "auto" learns it too
  expect_identical(falkon(d$x, d$y, m = 60, kernel = matern_kernel("median"), tune = "auto",
                          seed = 3)$tuning$mode, "ard")
  # and a fit on chunks learns the in-memory fit's scales
  df <- data.frame(d$x, y = d$y)
  ch <- data_chunks(list(df[1:120, ], df[121:300, ]))
  k12 <- matern_kernel("median", nu = 1/2)
  fc <- falkon(ch, y = "y", m = 50, kernel = k12, tune = "ard", seed = 4)
  fm <- falkon(d$x, d$y, m = 50, kernel = k12, tune = "ard", seed = 4)
  expect_identical(fc$kernel$sigma, fm$kernel$sigma)
  expect_identical(fc$tuning, fm$tuning)
  expect_identical(predict(fc, d$x), predict(fm, d$x))
})

test_that("falkon(tune = 'ard') learns one length scale per input and fits at it", {
  d <- tune_data()
  fit <- falkon(d$x, d$y, m = 60, tune = "ard", seed = 3)
  s <- fit$kernel$sigma
  expect_length(s, 4)
  expect_true(isTRUE(fit$kernel$sigma_learned))
  expect_identical(fit$tuning$sigma, s)
  # 300 rows: leave-one-out chooses lambda at the learned kernel
  expect_true("loo" %in% names(fit$validation))
  # with a slice held out, its path chooses between the learned lambda and
  # the candidates below it (the held-out objective's), or all of them (the
  # marginal likelihood's, a regression's default)
  sliced <- falkon(d$x, d$y, m = 60, tune = "ard", seed = 3, control = list(loo_rows = 0))
  expect_identical(unique(sliced$validation$lambda),
                   sort(c(sliced$tuning$lambda, 1e-4, 1e-6, 1e-8), decreasing = TRUE))
  widen <- function(criterion, heldout = TRUE) {
    learned <- list(report = list(lambda = 1e-7, criterion = criterion), lambda = 1e-7,
                    control = falkon_control())
    bochner:::falkon_tune_widen(learned, falkon_control(), heldout)
  }
  expect_identical(widen("ml")$control$lambdas, c(1e-4, 1e-6, 1e-7, 1e-8))
  expect_identical(widen("heldout")$control$lambdas, c(1e-7, 1e-8))
  expect_identical(widen("gcv")$lambda, "auto")
  expect_identical(widen("ml", heldout = FALSE)$lambda, 1e-7)
  # the two inputs the response ignores get the longest scales
  expect_lt(max(s[1:2]), min(s[3:4]))
  expect_lt(fit$tuning$objective[["end"]], fit$tuning$objective[["start"]])
  # a regression's default criterion, the marginal likelihood, on all 300 rows
  expect_identical(fit$tuning$criterion, "ml")
  expect_identical(fit$tuning$folds, 1L)
  ho <- falkon(d$x, d$y, m = 60, tune = "ard", seed = 3,
               control = list(tune_objective = "heldout"))
  expect_identical(ho$tuning$folds, 5L)               # 300 rows: five folds
  expect_match(paste(capture.output(print(fit)), collapse = "\n"), "ARD, learned")
  # reproducible from the seed; predictions of the learned kernel's fit
  again <- falkon(d$x, d$y, m = 60, tune = "ard", seed = 3)
  expect_identical(again$alpha, fit$alpha)
  expect_identical(predict(again, d$x[1:5, ]), predict(fit, d$x[1:5, ]))
  # one length scale; a lambda given is kept, only the scale learned
  iso <- falkon(d$x, d$y, m = 60, tune = "iso", lambda = 1e-5, seed = 3)
  expect_length(iso$kernel$sigma, 1)
  expect_identical(iso$lambda, 1e-5)
  expect_null(iso$tuning$lambda)
  expect_null(falkon(d$x, d$y, m = 60, seed = 3)$tuning)
})

test_that("a lambda learned at an end of its range is marked and printed", {
  d <- tune_data()
  # candidates no lower than 1e-2: a smooth response under little noise wants less
  # (a slice chooses lambda among them: loo_rows = 0)
  low <- falkon(d$x, d$y, m = 60, tune = "ard", seed = 3,
                control = falkon_control(lambdas = c(1e-1, 1e-2), loo_rows = 0))
  expect_identical(low$tuning$lambda_edge, "lower")
  expect_equal(low$lambda, 1e-2, tolerance = 1e-12)   # exp(log(1e-2))
  expect_match(paste(capture.output(print(low)), collapse = "\n"),
               "lambda learned at the smallest of control$lambdas", fixed = TRUE)
  noisy <- tune_data(sd = 0.5)
  inside <- falkon(noisy$x, noisy$y, m = 60, tune = "ard", seed = 2)
  expect_identical(inside$tuning$chosen, "ard")
  expect_gt(inside$tuning$lambda, 1e-8)
  expect_null(inside$tuning$lambda_edge)
  expect_false(any(grepl("lambda learned", capture.output(print(inside)))))
  rng <- log(c(1e-8, 1))
  expect_identical(bochner:::falkon_tune_edge(rng[1], rng), "lower")
  expect_identical(bochner:::falkon_tune_edge(rng[2], rng), "upper")
  expect_null(bochner:::falkon_tune_edge(log(1e-4), rng))
})

test_that("tuning works for classes and the logistic loss, and refuses other kernels", {
  d <- tune_data()
  cls <- factor(ifelse(d$x[, 1] + d$x[, 2]^2 > 1, "a", ifelse(d$x[, 3] > 0, "b", "c")))
  fit <- falkon(d$x, cls, m = 60, tune = "ard", seed = 4)
  expect_length(fit$kernel$sigma, 4)
  lg <- falkon(d$x, cls, m = 60, tune = "iso", loss = "logistic", seed = 1)
  expect_true(all(rowSums(predict(lg, d$x[1:4, ], type = "prob")) - 1 < 1e-12))
  expect_error(falkon(d$x, d$y, m = 60, kernel = laplace_kernel("median"), tune = "ard"),
               "'tune' = \"ard\" learns the length scales of the Gaussian and Matern kernels")
  # "auto" leaves kernels it cannot learn alone
  expect_null(falkon(d$x, d$y, m = 60, kernel = laplace_kernel("median"), tune = "auto",
                     seed = 1)$tuning)
  expect_error(falkon(d$x, d$y, tune = "yes"), "'tune' must be one of")
})

test_that("falkon on chunks learns the in-memory fit's kernel and lambda", {
  d <- tune_data(400)
  df <- data.frame(d$x, y = d$y)
  ch <- data_chunks(list(df[1:150, ], df[151:280, ], df[281:400, ]))
  fc <- falkon(ch, y = "y", m = 50, tune = "ard", seed = 4)
  fm <- falkon(d$x, d$y, m = 50, tune = "ard", seed = 4)
  expect_identical(fc$kernel$sigma, fm$kernel$sigma)
  expect_identical(fc$lambda, fm$lambda)
  expect_identical(fc$tuning, fm$tuning)
  expect_identical(fc$alpha, fm$alpha)
  expect_identical(predict(fc, d$x), predict(fm, d$x))
})

test_that("from 1500 rows one fifth is held out and one scale per input is judged on another", {
  d <- tune_data(1600, seed = 5)
  set.seed(1)
  folds <- bochner:::falkon_tune_folds(d$x, cbind(d$y), 30)
  expect_length(folds$folds, 1L)
  expect_equal(folds$nv, 320)
  expect_equal(nrow(folds$check$folds[[1]]$v), 320)
  # the second fifth shares no row with the first
  key <- function(m) apply(m, 1, paste, collapse = ",")
  expect_length(intersect(key(folds$folds[[1]]$v), key(folds$check$folds[[1]]$v)), 0L)
  # the tuning draws from the fit's training rows: 1800 less its held-out 180
  # (loo_rows = 0: a slice instead of leave-one-out)
  d <- tune_data(1800, seed = 5)
  fit <- falkon(d$x, d$y, m = 30, tune = "ard", seed = 2, control = list(loo_rows = 0))
  expect_identical(fit$tuning$rows, 1620L)
  expect_identical(fit$tuning$folds, 1L)
  expect_true(fit$tuning$chosen %in% c("iso", "ard", "rule"))
  expect_length(fit$kernel$sigma, if (fit$tuning$chosen == "ard") 4L else 1L)
  # the second fifth's scores are reported, and the least is the one chosen
  expect_named(fit$tuning$check, c("iso", "ard", "rule"))
  expect_true(all(is.finite(fit$tuning$check)))
  expect_identical(names(which.min(fit$tuning$check)), fit$tuning$chosen)
  # below 1500 rows the objective is cross-validated: no second fifth
  expect_null(falkon(d$x[1:600, ], d$y[1:600], m = 30, tune = "ard", seed = 2)$tuning$check)
  # the rule's bandwidth, kept when the learned scales do no better on the
  # second fifth, is the untuned fit
  if (fit$tuning$chosen == "rule") {
    expect_identical(fit$kernel$sigma,
                     falkon(d$x, d$y, m = 30, seed = 2, control = list(loo_rows = 0))$kernel$sigma)
  }
})

test_that("a tuned classification fit keeps its calibrated probabilities, in memory and on chunks", {
  d <- tune_data()
  cls <- factor(ifelse(d$x[, 1] + d$x[, 2]^2 > 1, "a", ifelse(d$x[, 3] > 0, "b", "c")))
  fit <- falkon(d$x, cls, m = 60, tune = "ard", seed = 1)
  expect_identical(fit$calibration$type, "softmax")
  pr <- predict(fit, d$x[1:5, ], type = "prob")
  expect_equal(unname(rowSums(pr)), rep(1, 5))
  expect_true(all(pr > 0 & pr < 1))
  # lambda learned and iter given: the held-out slice that lambda = "auto"
  # asks for stays, and calibrates the scores as without tuning
  fixed_iter <- falkon(d$x, cls, m = 60, tune = "iso", iter = 10, seed = 1)
  expect_identical(fixed_iter$calibration$type, "softmax")
  expect_lte(fixed_iter$iter, 10L)   # the best iteration on that slice, up to iter
  # on chunks: the same rows learn, fit and calibrate, so the same numbers
  df <- data.frame(d$x, cls = cls)
  ch <- data_chunks(list(df[1:150, ], df[151:300, ]))
  fc <- falkon(ch, y = "cls", m = 60, tune = "ard", seed = 1)
  expect_identical(fc$kernel$sigma, fit$kernel$sigma)
  expect_identical(fc$calibration, fit$calibration)
  expect_identical(predict(fc, d$x[1:5, ], type = "prob"), pr)
})

test_that("the learned kernel and lambda do not depend on the thread count", {
  # the tuning runs small folds on one thread (falkon_tune()); the objective
  # below is evaluated on two
  d <- tune_data(2000, seed = 6)
  fits <- lapply(1:2, function(th) falkon(d$x, d$y, m = 210, tune = "ard", seed = 7,
                                          nthreads = th))
  expect_identical(fits[[2]]$kernel$sigma, fits[[1]]$kernel$sigma)
  expect_identical(fits[[2]]$lambda, fits[[1]]$lambda)
  expect_identical(fits[[2]]$tuning, fits[[1]]$tuning)
  # and one evaluation of the objective, bit for bit
  set.seed(1)
  folds <- bochner:::falkon_tune_folds(d$x, cbind(d$y), 210)
  ev <- lapply(1:2, function(th) bochner:::falkon_tune_eval(log(c(0.7, 1.3, 2, 0.5)), folds,
                                                            4L, 4L, 1e-5, th))
  expect_identical(ev[[2]], ev[[1]])
})

test_that("the tuning calls nothing that runs on R's BLAS or LAPACK", {
  # what R hands to the BLAS or LAPACK (optim's L-BFGS-B and nlminb do
  # their vector steps with ddot and daxpy), so that a BLAS's rounding would
  # move the learned kernel; walked through every package function the
  # tuning reaches
  blas <- c("%*%", "crossprod", "tcrossprod", "chol", "chol2inv", "solve", "backsolve",
            "forwardsolve", "qr", "qr.solve", "svd", "eigen", "determinant", "det", "optim",
            "nlminb", "nlm", "lm.fit", "La.svd")
  ns <- asNamespace("bochner")
  seen <- character()
  found <- character()
  walk <- function(name) {
    seen <<- c(seen, name)
    f <- get(name, envir = ns)
    calls <- unique(c(all.names(body(f)), unlist(lapply(formals(f), all.names))))
    found <<- c(found, paste0(name, ": ", intersect(calls, blas)))
    own <- calls[vapply(calls, function(n) exists(n, envir = ns, inherits = FALSE) &&
                          is.function(get(n, envir = ns)), NA)]
    for (n in setdiff(own, seen)) walk(n)
  }
  walk("falkon_tune")
  # the walk reaches the objective, its products and the optimiser
  expect_true(all(c("falkon_tune_fold", "falkon_tune_gcv", "falkon_tune_ml", "tune_kernels",
                    "ard_gradient_terms",
                    "tune_lbfgs_box") %in% seen))
  expect_identical(found[!grepl(": $", found)], character())
})

test_that("the tuning leaves the fit's held-out slice out, and the slice judges the learned kernel", {
  ctl <- falkon_control()
  set.seed(7)
  pool <- bochner:::falkon_tune_pool(20000, "auto", "auto", ctl)
  set.seed(7)
  split <- bochner:::falkon_split(20000, "auto", "auto", ctl)
  expect_length(pool, 12000)
  expect_true(attr(pool, "heldout"))
  expect_true(all(pool %in% split$train))
  expect_false(is.unsorted(pool))
  # lambda and the iterations given: nothing held out, every row tunes
  all <- bochner:::falkon_tune_pool(500, 1e-6, 20L, ctl)
  expect_identical(as.vector(all), 1:500)
  expect_false(attr(all, "heldout"))

  d <- tune_data()
  # learned scales that lose on the held-out rows give way to the rule's:
  # the fit is then the untuned one on the same slice, bit for bit (these
  # 300 rows would choose lambda by leave-one-out: loo_rows = 0 keeps the
  # slice)
  sl <- list(loo_rows = 0, tune_objective = "heldout")
  lost <- falkon(d$x, d$y, m = 60, tune = "ard", seed = 2, control = sl)
  plain <- falkon(d$x, d$y, m = 60, seed = 2, control = sl)
  expect_identical(lost$tuning$chosen, "rule")
  expect_gt(lost$tuning$heldout[["learned"]], lost$tuning$heldout[["rule"]])
  expect_identical(lost$alpha, plain$alpha)
  expect_identical(lost$kernel$sigma, plain$kernel$sigma)
  expect_match(paste(capture.output(print(lost)), collapse = "\n"), "the rule's kernel kept")
  # the rule's held-out loss is the untuned fit's squared error on its slice
  set.seed(2)
  sp <- bochner:::falkon_split(300, "auto", "auto", ctl)
  expect_equal(lost$tuning$heldout[["rule"]],
               mean((predict(plain, d$x[sp$valid, ]) - d$y[sp$valid])^2), tolerance = 1e-10)
  # learned scales that do better are kept
  won <- falkon(d$x, d$y, m = 60, tune = "ard", seed = 1, control = sl)
  expect_identical(won$tuning$chosen, "ard")
  expect_lte(won$tuning$heldout[["learned"]], won$tuning$heldout[["rule"]])
  expect_length(won$kernel$sigma, 4L)
  # on chunks the same judgement and the same fit
  ch <- data_chunks(split(data.frame(d$x, y = d$y), rep(1:3, each = 100)))
  for (s in 1:2) {
    fc <- falkon(ch, y = "y", m = 60, tune = "ard", seed = s, control = sl)
    fm <- if (s == 1) won else lost
    expect_identical(fc$tuning, fm$tuning)
    expect_identical(fc$alpha, fm$alpha)
  }
  # without a seed, the tuning and the fit still share one held-out slice:
  # reproducible from set.seed()
  set.seed(11)
  a <- falkon(d$x, d$y, m = 60, tune = "ard", control = sl)
  set.seed(11)
  b <- falkon(d$x, d$y, m = 60, tune = "ard", control = sl)
  expect_identical(a$alpha, b$alpha)
  expect_length(a$tuning$heldout, 2L)
})

test_that("on a small set the kernel is learned on every row and judged by leave-one-out", {
  d <- tune_data()
  loo_at <- function(f) f$validation$loo[attr(f$validation, "chosen")]
  fits <- lapply(1:3, function(s) falkon(d$x, d$y, m = 60, tune = "ard", seed = s))
  for (s in 1:3) {
    fit <- fits[[s]]
    plain <- falkon(d$x, d$y, m = 60, seed = s)
    expect_identical(fit$tuning$rows, 300L)            # no slice: every row tunes
    expect_true("loo" %in% names(fit$validation))
    # the rule's leave-one-out error is the untuned fit's, the kept fit's the lower
    expect_identical(fit$tuning$heldout[["rule"]], loo_at(plain))
    expect_identical(loo_at(fit), min(fit$tuning$heldout))
    if (fit$tuning$chosen == "rule") expect_identical(fit$alpha, plain$alpha)
  }
  # here the learned scales win at every seed: the two ignored inputs get the longest
  won <- fits[[1]]
  expect_identical(won$tuning$chosen, "ard")
  expect_lt(won$tuning$heldout[["learned"]], won$tuning$heldout[["rule"]])
  expect_lt(max(won$kernel$sigma[1:2]), min(won$kernel$sigma[3:4]))
  # print() names the judgement (the report of a fit the rule had won)
  lost <- won
  lost$tuning$chosen <- "rule"
  expect_match(paste(capture.output(print(lost)), collapse = "\n"),
               "the learned one lost by leave-one-out", fixed = TRUE)
  # on chunks the same learning, judgement and fit
  ch <- data_chunks(split(data.frame(d$x, y = d$y), rep(1:3, each = 100)))
  fc <- falkon(ch, y = "y", m = 60, tune = "ard", seed = 1)
  expect_identical(fc$tuning, won$tuning)
  expect_identical(fc$alpha, won$alpha)
  # below 20 rows per input (and 1500 rows) one length scale is learned, not four
  few <- falkon(d$x[1:70, ], d$y[1:70], tune = "ard", seed = 1)
  expect_false(identical(few$tuning$chosen, "ard"))
  expect_length(few$kernel$sigma, 1L)
})

test_that("beyond 3000 training rows the learned parameters are refined on more rows and centres", {
  d <- tune_data(4000, seed = 6)
  fit <- falkon(d$x, d$y, m = 80, tune = "ard", seed = 1)
  # 4000 rows less the fit's 400 held out; the first stage's 3000 are among them
  expect_identical(fit$tuning$rows, 3600L)
  expect_identical(fit$tuning$centres, 80L)
  expect_identical(fit$tuning$folds, 1L)
  # the refinement only takes steps that lower its own objective
  set.seed(3)
  Y <- cbind(d$y[1:3600])
  par <- c(log(1e-5), log(c(1.5, 2, 30, 30)))
  rng <- log(c(1e-8, 1))
  r <- bochner:::falkon_tune_refine(par, 4L, d$x[1:3600, ], Y, 80, NULL, rng, 1L)
  set.seed(3)
  probs <- bochner:::falkon_tune_folds(d$x[1:3600, ], Y, 80, 1000L)
  at_start <- bochner:::falkon_tune_eval(par[-1], probs, 4L, 4L, exp(par[1]), 1L)$value
  expect_lt(r$value, at_start)
  expect_identical(r$rows, 3600L)
  expect_gt(r$evaluations, 1L)
  # on chunks, the same refined kernel and fit
  ch <- data_chunks(split(data.frame(d$x, y = d$y), rep(1:4, each = 1000)))
  fc <- falkon(ch, y = "y", m = 80, tune = "ard", seed = 1)
  expect_identical(fc$tuning, fit$tuning)
  expect_identical(fc$alpha, fit$alpha)
})

test_that("a CG path on H = K'WK that loses definiteness reruns on passes over the rows", {
  # near-singular K_mm (two inputs all but switched off) and lambda 1e-8:
  # on H the small-lambda columns froze (held-out MSE 0.66 from the second
  # iteration on); on passes the same path goes on down
  d <- tune_data()
  k <- gaussian_kernel(c(1.710442, 7.340263, 1000, 274.207232))
  lams <- c(7.57e-8, 1e-8)
  expect_true(bochner:::falkon_use_gram(60, 1, 2, 8))
  expect_false(bochner:::falkon_use_gram(60, 1, 2, 6))
  on_h <- falkon(d$x, d$y, m = 60, kernel = k, seed = 1,
                 control = falkon_control(lambdas = lams, max_iter = 8, loo_rows = 0))
  on_rows <- falkon(d$x, d$y, m = 60, kernel = k, seed = 1,
                    control = falkon_control(lambdas = lams, max_iter = 6, loo_rows = 0))
  expect_lt(min(on_h$validation$error), 0.1)
  common <- seq_len(min(nrow(on_h$validation), nrow(on_rows$validation)))
  expect_gte(length(common), 10L)
  expect_identical(on_h$validation[common, ], on_rows$validation[common, ])
})

test_that("the box-constrained quasi-Newton finds optim's L-BFGS-B minimum", {
  # Rosenbrock in 6 variables: once the minimum inside the box, once on
  # its upper face
  fr <- function(p) sum(100 * (p[-1] - p[-6]^2)^2 + (1 - p[-6])^2)
  gr <- function(p) {
    g <- numeric(6)
    g[-6] <- -400 * p[-6] * (p[-1] - p[-6]^2) - 2 * (1 - p[-6])
    g[-1] <- g[-1] + 200 * (p[-1] - p[-6]^2)
    g
  }
  fg <- function(p) list(value = fr(p), gradient = gr(p))
  for (up in c(2, 0.5)) {
    got <- bochner:::tune_lbfgs_box(rep(c(-1.2, 1), 3), fg, rep(-2, 6), rep(up, 6), 500, 10)
    ref <- optim(rep(c(-1.2, 1), 3), fr, gr, method = "L-BFGS-B", lower = -2, upper = up,
                 control = list(maxit = 500, factr = 10))
    expect_equal(got$par, ref$par, tolerance = 1e-5)
    expect_equal(got$value, fr(got$par))
    expect_lte(got$value, ref$value + 1e-10)
  }
})
