# falkon()'s two fits: the squared loss along the CG path and the logistic
# loss along its Newton steps, each choosing lambda and the number of steps
# on the held-out rows when asked to (split$valid not empty).

# lambda when nothing can be held out to choose it: 1e-6, the middle of the
# default grid.
falkon_fallback_lambda <- 1e-6

# The training rows' weights, rescaled to mean 1 (NULL when all are 1, so
# the C passes skip them).
falkon_train_weights <- function(w, train) {
  wt <- w[train]
  wt <- wt * (length(train) / sum(wt))
  if (all(wt == 1)) NULL else wt
}

# The held-out rows' kernel block k(X_val, C), held in memory, and their
# weights; NULL without held-out rows.
falkon_validation_block <- function(prep, xs, split, w, nthreads) {
  if (length(split$valid) == 0L) return(NULL)
  xv <- xs[split$valid, , drop = FALSE]
  list(K = .Call(C_kernel_matrix, prep$code, prep$par, xv, prep$centres, nthreads),
       w = w[split$valid])
}

# The held-out error of scores f (nv x k) against targets: the weighted
# squared error for regression; for classes, the error rate plus a
# millionth of the squared error to break ties.
falkon_heldout_error <- function(f, resp, valid, wv) {
  Y <- resp$Y[valid, , drop = FALSE]
  mse <- sum(wv * rowSums((f - Y)^2)) / sum(wv)
  if (resp$type == "regression") return(mse)
  wrong <- max.col(f, ties.method = "first") != as.integer(resp$y[valid])
  sum(wv * wrong) / sum(wv) + 1e-6 * mse
}

# The training rows as the squared-loss fits see them, so that the same fits
# serve rows in memory and rows in chunks (falkon_rows_chunks(),
# R/falkon-chunks.R): n_train, n_valid, k (target columns), offset (the
# targets' weighted mean), and
#   rhs(prep)         K' W (Y - offset) / n_train over the training rows
#   apply(prep)       a function of U giving K' W K U (one pass)
#   validation(prep)  NULL, or the held-out rows' kernel block K, weights w
#                     and error(f), the held-out error of their scores f
#   centres(idx)      the training rows at positions idx (uniform centres)
#   landmarks(m)      m centres by the landmark rule
falkon_rows_memory <- function(xs, resp, w, split, kernel, landmarks, control, nthreads) {
  train <- split$train
  ntr <- length(train)
  xt <- xs[train, , drop = FALSE]
  wt <- falkon_train_weights(w, train)
  Y <- resp$Y[train, , drop = FALSE]
  wy <- if (is.null(wt)) rep(1, ntr) else wt
  offset <- colSums(Y * wy) / sum(wy)
  Yc <- sweep(Y, 2L, offset, check.margin = FALSE)
  br <- control$block_rows
  list(n_train = ntr, n_valid = length(split$valid), k = ncol(Y), offset = offset,
       rhs = function(prep) {
         falkon_knm_apply(prep, xt, V = Yc, w = wt, nthreads = nthreads, block_rows = br) / ntr
       },
       apply = function(prep) {
         function(U) falkon_knm_apply(prep, xt, U = U, w = wt, nthreads = nthreads,
                                      block_rows = br)
       },
       validation = function(prep) {
         val <- falkon_validation_block(prep, xs, split, w, nthreads)
         if (!is.null(val)) val$error <- function(f) falkon_heldout_error(f, resp, split$valid, val$w)
         val
       },
       centres = function(idx) xt[idx, , drop = FALSE],
       landmarks = function(m) falkon_centres(m, xs, train, kernel, landmarks, NULL, nthreads))
}

# alpha0: NULL, or a start for every lambda (m x k), as when the centres grow.
falkon_fit_squared <- function(prep, rows, lambda, iter, control, nthreads, alpha0 = NULL) {
  ntr <- rows$n_train
  offset <- rows$offset
  val <- rows$validation(prep)
  lambdas <- if (!identical(lambda, "auto")) lambda
             else if (is.null(val)) falkon_fallback_lambda else control$lambdas
  if (is.null(val) && length(lambdas) > 1L) lambdas <- min(lambdas)
  maxit <- if (identical(iter, "auto")) control$max_iter else iter
  As <- lapply(lambdas, function(l) falkon_precond(prep, l, 1, nthreads))
  rhs <- rows$rhs(prep)
  apply_knm <- rows$apply(prep)
  k <- rows$k
  L <- length(lambdas)
  path <- NULL
  best <- list(error = Inf)
  callback <- NULL
  if (!is.null(val)) {
    callback <- function(alpha, t) {
      f <- .Call(C_matprod, val$K, alpha, nthreads)
      for (g in seq_len(L)) {
        cols <- (g - 1L) * k + seq_len(k)
        fg <- sweep(f[, cols, drop = FALSE], 2L, offset, "+", check.margin = FALSE)
        e <- val$error(fg)
        path <<- rbind(path, data.frame(iter = t, lambda = lambdas[g], error = e))
        if (e < best$error) {
          best <<- list(error = e, iter = t, lambda = lambdas[g],
                        alpha = alpha[, cols, drop = FALSE])
        }
      }
      identical(iter, "auto") && t - best$iter >= control$patience
    }
  }
  if (!is.null(alpha0)) alpha0 <- alpha0[, rep(seq_len(k), L), drop = FALSE]
  res <- falkon_cg(apply_knm, rhs, prep, As, lambdas, ntr, maxit, tol = control$tol,
                   callback = callback, nthreads = nthreads, alpha0 = alpha0)
  if (is.null(val) || is.null(best$alpha)) {
    best <- list(alpha = res$alpha[, seq_len(k), drop = FALSE], iter = res$iter,
                 lambda = lambdas[1L], error = NA_real_)
  }
  list(alpha = best$alpha, offset = offset, prep = prep, lambda = best$lambda,
       iter = best$iter, steps = NULL, validation = path, n_train = ntr, error = best$error)
}

# The number of centres grown until the held-out error stops improving:
# m = start, 2 start, 4 start, ... up to max_m, each fit warm-started from
# the last (the centres are nested prefixes of one random order, so the
# last fit's alpha padded with zeros is the same function).  Stops when a
# doubling improves the held-out error by less than control$grow_gain
# (relative), keeping the better of the last two.  Easy problems stop at a
# few hundred centres; hard ones grow to max_m.
falkon_fit_growing <- function(max_m, rows, kernel, landmarks, lambda, iter, control,
                               nthreads) {
  max_m <- min(max_m, rows$n_train)
  start <- min(control$start_centers, max_m)
  sizes <- unique(c(start * 2^(0:floor(log2(max_m / start))), max_m))
  sizes <- sizes[sizes <= max_m]
  nested <- landmarks == "uniform"
  order <- if (nested) sample.int(rows$n_train, max_m)
  L <- if (identical(lambda, "auto")) length(control$lambdas) else length(lambda)
  prev <- NULL
  path <- NULL
  for (m in sizes) {
    falkon_check_memory(m, rows$n_valid, L, rows$k, control)
    centres <- if (nested) rows$centres(order[seq_len(m)]) else rows$landmarks(m)
    dimnames(centres) <- NULL
    prep <- falkon_prepare(kernel, centres, nthreads)
    alpha0 <- if (nested && !is.null(prev)) {
      rbind(prev$alpha, matrix(0, m - prev$prep$m, ncol(prev$alpha)))
    }
    res <- falkon_fit_squared(prep, rows, lambda, iter, control, nthreads, alpha0)
    path <- rbind(path, data.frame(centers = m, lambda = res$lambda, iter = res$iter,
                                   error = res$error))
    if (!is.null(prev) && !(res$error < (1 - control$grow_gain) * prev$error)) {
      if (prev$error <= res$error) res <- prev
      break
    }
    prev <- res
  }
  res$centres_path <- path
  res
}

# The logistic loss's targets and offsets: two classes give one score (the
# log-odds of the second level), more one score per class.
falkon_logistic_targets <- function(resp, w) {
  Y <- resp$Y
  if (ncol(Y) == 2L) Y <- Y[, 2L, drop = FALSE]
  prior <- colSums(Y * w) / sum(w)
  prior <- pmin(pmax(prior, 1e-6), 1 - 1e-6)
  list(Y = Y, offset = if (ncol(Y) == 1L) stats::qlogis(prior) else log(prior))
}

# lambda's schedule: 1e-1, 1e-3, ... (a factor of 100 a step) down to the
# target, then 'extra' more steps at the target.
falkon_schedule <- function(target, extra) {
  top <- -1
  bottom <- log10(target)
  s <- if (bottom < top) 10^seq(top, bottom, by = -2) else numeric()
  s <- s[s > target * (1 + 1e-9)]
  c(s, rep(target, 1L + extra))
}

falkon_fit_logistic <- function(prep, xs, resp, w, lambda, iter, split, control, nthreads) {
  train <- split$train
  ntr <- length(train)
  wt <- falkon_train_weights(w, train)
  wv <- if (is.null(wt)) rep(1, ntr) else wt
  tg <- falkon_logistic_targets(list(Y = resp$Y[train, , drop = FALSE]), wv)
  val <- falkon_validation_block(prep, xs, split, w, nthreads)
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
    Yv <- falkon_logistic_targets(list(Y = resp$Y[split$valid, , drop = FALSE]), val$w)$Y
    callback <- function(alpha, t) {
      f <- sweep(.Call(C_matprod, val$K, alpha, nthreads), 2L, tg$offset, "+",
                 check.margin = FALSE)
      e <- falkon_logloss(f, Yv, val$w)
      path <<- rbind(path, data.frame(step = t, lambda = schedule[t], error = e))
      if (e < best$error) best <<- list(error = e, step = t, alpha = alpha)
      t - best$step >= 2L
    }
  }
  res <- falkon_newton(prep, xs[train, , drop = FALSE], tg$Y, wv, tg$offset, schedule,
                       cg_iter, nthreads, callback, control$block_rows)
  alpha <- res$alpha
  steps <- res$steps
  if (!is.null(best$alpha)) {
    alpha <- best$alpha
    steps <- best$step
  }
  list(alpha = alpha, offset = tg$offset, prep = prep, lambda = schedule[steps],
       iter = sum(cg_iter[seq_len(steps)]), steps = steps, validation = path, n_train = ntr)
}
