# The logistic loss of falkon(): Newton steps (Meanti et al. 2020,
# LogisticFalkon), each solved by falkon_cg() (R/falkon-solve.R) on the
# rows' operator, and the fit along a decreasing lambda that keeps the step
# of least held-out log-loss.  The squared loss is in R/falkon-fit.R.

# Class probabilities from scores f (n x k): k = 1 a binary model's
# log-odds of the second class, else softmax over the k columns.
falkon_probabilities <- function(f) {
  if (ncol(f) == 1L) return(stats::plogis(f))
  e <- exp(f - row_max(f))
  e / rowSums(e)
}

# The weighted mean log-loss of scores f against targets Y (n x k, 0/1).
falkon_logloss <- function(f, Y, w) {
  sum(w * falkon_logloss_rows(f, Y)) / sum(w)
}

# The log-loss of each row.
falkon_logloss_rows <- function(f, Y) {
  if (ncol(f) == 1L) {
    return(-(Y[, 1L] * stats::plogis(f[, 1L], log.p = TRUE) +
             (1 - Y[, 1L]) * stats::plogis(-f[, 1L], log.p = TRUE)))
  }
  mx <- row_max(f)
  mx + log(rowSums(exp(f - mx))) - rowSums(f * Y)
}

# Newton's method on (1/n) sum w_i loss(y_i, offset + K alpha) +
# (lambda / 2) alpha' T'T alpha, lambda following the decreasing 'schedule'
# (the last value is the target), 'cg_iter[t]' CG iterations for step t.
# Each step solves H delta = -g with the per-class diagonal of the Hessian,
# H_c = K' diag(w p_c (1 - p_c)) K / n + lambda T'T (the multinomial
# Hessian's cross-class terms are left out), preconditioned with A'A = s T
# T' / m + lambda I for the mean curvature s, then halves the step until
# the objective decreases (K delta comes from the CG's passes, so the line
# search costs no pass).  'Y' are the 0/1 targets (one column for two classes), 'w' the
# case weights (mean 1), 'offset' the fixed intercepts (k values).
# callback(alpha, f_step, t) sees the iterate after each step and may
# return TRUE to stop.
falkon_newton <- function(prep, rows, Y, w, offset, schedule, cg_iter, nthreads,
                          callback = NULL) {
  n <- rows$n
  k <- ncol(Y)
  alpha <- matrix(0, prep$m, k)
  f <- matrix(offset, n, k, byrow = TRUE)
  # products with T read its upper half in place (no transposed copy)
  penalty <- function(a, lambda) lambda / 2 * sum(falkon_tprod(prep, a, FALSE, nthreads)^2)
  steps <- 0L
  for (t in seq_along(schedule)) {
    lambda <- schedule[t]
    p <- falkon_probabilities(f)
    curv <- w * p * (1 - p)
    grad <- rows$pass(prep, V = p - Y, w = w) / n +
      lambda * falkon_tprod(prep, falkon_tprod(prep, alpha, FALSE, nthreads), TRUE, nthreads)
    s <- max(mean(curv), 1e-8)
    falkon_precond(prep, lambda, s, nthreads)
    apply_h <- function(U) rows$pass(prep, U = U, w = curv, keep_ku = TRUE)
    sol <- falkon_cg(apply_h, -grad, prep, list(prep$F), lambda, n, cg_iter[t],
                     nthreads = nthreads)
    delta <- sol$alpha
    Kd <- if (is.null(sol$k_alpha)) rows$predict(prep, delta) else sol$k_alpha
    obj <- falkon_logloss(f, Y, w) + penalty(alpha, lambda)
    step <- 1
    repeat {
      f_new <- f + step * Kd
      a_new <- alpha + step * delta
      obj_new <- falkon_logloss(f_new, Y, w) + penalty(a_new, lambda)
      if (is.finite(obj_new) && obj_new <= obj || step < 1e-4) break
      step <- step / 2
    }
    if (is.finite(obj_new) && obj_new <= obj) {
      alpha <- a_new
      f <- f_new
    }
    steps <- t
    if (!is.null(callback) && isTRUE(callback(alpha, t))) break
  }
  list(alpha = alpha, f = f, steps = steps)
}

# The logistic loss's targets and offsets: two classes give one score (the
# log-odds of the second level), more one score per class.
falkon_logistic_targets <- function(Y, w) {
  if (ncol(Y) == 2L) Y <- Y[, 2L, drop = FALSE]
  prior <- colSums(Y * w) / sum(w)
  prior <- pmin(pmax(prior, 1e-6), 1 - 1e-6)
  list(Y = Y, offset = if (ncol(Y) == 1L) stats::qlogis(prior) else log(prior))
}

# lambda's schedule: 1e-1, 1e-2, ... (a factor of 10 a step) down to the
# target, then 'extra' more steps at the target.  Against a factor of 100
# a step, the finer path gave better probabilities (test log-loss, 100 vs
# 10: Satellite 0.264 vs 0.222, spam 0.234 vs 0.207, Vehicle 0.438 vs
# 0.395; DNA the other way, 0.134 vs 0.144) for about 20 % more time.
falkon_schedule <- function(target, extra) {
  top <- -1
  bottom <- log10(target)
  s <- if (bottom < top) 10^seq(top, bottom, by = -1) else numeric()
  s <- s[s > target * (1 + 1e-9)]
  c(s, rep(target, 1L + extra))
}

falkon_fit_logistic <- function(prep, rows, Y, w, val, lambda, iter, control, nthreads) {
  prep$lean <- falkon_lean(prep$m, control)
  # every Newton step refactors A: G is kept unless memory is short
  if (!prep$lean) falkon_keep_g(prep, nthreads)
  ntr <- rows$n
  wt <- falkon_unit_weights(w)
  wv <- if (is.null(wt)) rep(1, ntr) else wt
  tg <- falkon_logistic_targets(Y, wv)
  target <- if (!identical(lambda, "auto")) min(lambda)
            else if (is.null(val)) falkon_fallback_lambda else min(control$lambdas)
  schedule <- falkon_schedule(target, control$newton_steps)
  # the early steps (larger lambda, better conditioned) need fewer iterations
  cg_iter <- if (identical(iter, "auto")) ifelse(schedule > target, 5L, 10L)
             else rep(iter, length(schedule))
  path <- NULL
  best <- list(error = Inf)
  callback <- NULL
  if (!is.null(val)) {
    Yv <- falkon_logistic_targets(val$Y, val$w)$Y
    score <- falkon_heldout_scorer(prep, val, control, nthreads)
    callback <- function(alpha, t) {
      f <- sweep(score(alpha), 2L, tg$offset, "+", check.margin = FALSE)
      e <- falkon_logloss(f, Yv, val$w)
      path <<- rbind(path, data.frame(step = t, lambda = schedule[t], error = e))
      if (e < best$error) best <<- list(error = e, step = t, alpha = alpha, valid_scores = f)
      t - best$step >= control$newton_patience
    }
  }
  res <- falkon_newton(prep, rows, tg$Y, wv, tg$offset, schedule, cg_iter, nthreads, callback)
  alpha <- res$alpha
  steps <- res$steps
  if (!is.null(best$alpha)) {
    alpha <- best$alpha
    steps <- best$step
  }
  list(alpha = alpha, offset = tg$offset, prep = falkon_unfactored(prep), lambda = schedule[steps],
       iter = sum(cg_iter[seq_len(steps)]), steps = steps, validation = path, n_train = ntr,
       error = best$error, valid_scores = best$valid_scores)
}
