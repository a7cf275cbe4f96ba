# How many centres falkon() fits on: grown along the held-out error or
# fixed, for the in-memory and the chunked fits alike.

# The grow-or-fixed orchestration of falkon(), in memory and on chunks: with
# the default m and the squared loss the centres grow along the held-out
# error, else the fit is at m centres (or at the matrix m).  train: the
# training rows as the landmark rules read them (a matrix or a
# row_source()); centres_at(idx, k) gives scaled centres: the training rows
# at positions idx, or with idx NULL k centres by the landmark rule (or the
# matrix k); release() drops what the caller need not hold while a fixed
# fit runs.  landmarks = "auto" is "uniform" but for the grown centres of
# classes (falkon_growth_centres()).
falkon_fit_centres <- function(m, grow, loss, landmarks, train, ntr, centres_at, release, kernel,
                               rows, Y, w, val, lambda, iter, control, nthreads, n = 0, d = 0) {
  force(d)   # before release() may drop the data it is read from
  given <- is.matrix(m)
  if (grow && loss == "squared" && !is.null(val)) {
    m <- min(m, ntr)   # centres are training rows
    pick <- falkon_growth_centres(landmarks, m, ntr, train, centres_at, kernel, !is.null(val$cls),
                                  control, nthreads)
    return(falkon_fit_growing(m, pick, kernel, rows, Y, w, val, lambda, iter, control, nthreads))
  }
  uniform <- landmarks %in% c("uniform", "auto")
  centres <- centres_at(if (uniform && !given) sample.int(ntr, min(m, ntr)), m)
  release()
  falkon_fit_fixed(kernel, centres, uniform && !given, rows, Y, w, val, lambda, iter, loss,
                   control, nthreads, n, d)
}

# The centres of the growth, pick(k): list(centres, rule, nested), where
# centres of one rule are nested (the first k of one order) when 'nested',
# so that a step warm-starts from the last when both have that rule.
# Uniform: prefixes of one random order.  RPCholesky: one run continued (rpcholesky_grower()), on
# a pool of max(4 m, 10000) rows.  k-means++ and leverage: drawn afresh
# (not nested).  "auto", for classes: RPCholesky when its first step's
# pivots leave under half of the uniform centres' residual on the pool
# (falkon_rpcholesky_wins()), up to falkon_rpc_most centres, and uniform
# centres beyond; otherwise, and for regression, uniform (the same draws as
# "uniform": the probe's draws are undone when it loses).
falkon_growth_centres <- function(landmarks, max_m, ntr, train, centres_at, kernel, classes,
                                  control, nthreads) {
  order <- if (landmarks %in% c("uniform", "auto")) sample.int(ntr, max_m)
  first <- NULL   # the probe's uniform centres, the first step's should it lose
  uniform <- function(k) {
    if (!is.null(first) && k == nrow(first$centres)) return(first)
    list(centres = centres_at(order[seq_len(k)], k), rule = "uniform", nested = TRUE)
  }
  if (landmarks %in% c("kmeans", "leverage")) {
    return(function(k) list(centres = centres_at(NULL, k), rule = landmarks, nested = FALSE))
  }
  start <- min(control$start_centers, max_m)
  most <- if (landmarks == "auto") min(max_m, falkon_rpc_most) else max_m
  if (landmarks == "uniform" || (landmarks == "auto" && !classes)) return(uniform)
  restore_rng <- if (landmarks == "auto") rng_restorer()
  grower <- rpcholesky_grower(kernel, train, max(4 * most, 10000), nthreads)
  if (landmarks == "auto") {
    first <- uniform(start)
    if (!falkon_rpcholesky_wins(grower, start, first$centres, kernel, nthreads)) {
      restore_rng()
      rm(grower)   # the closure returned need not hold its pool and factor
      return(uniform)
    }
  }
  function(k) {
    if (k > most) return(uniform(k))
    idx <- grower$pivots(k)
    # the steps grow: no pivot beyond these will be wanted (at 1024 centres
    # on 10000 rows the factor is 82 MB)
    if (k >= most) grower$release()
    list(centres = centres_at(idx, k), rule = "rpcholesky", nested = TRUE)
  }
}

# RPCholesky's centres are the default's where they are worth their cost:
# at most this many (pool x m^2 work, 10^10 multiply-adds on 10000 rows; at
# 4096 centres on 16384 rows 2.7 x 10^11, more than a default fit).
falkon_rpc_most <- 1024L

# Whether k RPCholesky pivots on the grower's pool leave under half the
# residual trace of k uniform centres (a matrix), and those leave at
# least 1e-3 of the trace (below that, either approximates the kernel to
# rounding): the data is clustered or low-dimensional, where RPCholesky's
# centres stop the growth earlier at equal error
# (bench/investigations/rpcholesky-auto.md).  Both traces are taken on the
# same 2000 rows of the pool, evenly spaced (the uniform residual, tr(K_PP)
# - |T^-T K_UP|^2 with T = chol(K_UU) from the fit's own factor, costs k^2
# a row: on all of Letter's 10000 it was half the probe's 0.1 s).
falkon_rpcholesky_wins <- function(grower, k, centres, kernel, nthreads) {
  grower$pivots(k)
  np <- length(grower$pool)
  at <- unique(round(seq(1, np, length.out = min(np, 2000))))
  total <- sum(grower$diagonal[at])
  rpc <- sum(grower$residual()[at])
  prep <- falkon_prepare(kernel, centres, nthreads)
  kup <- .Call(C_kernel_matrix, prep$code, prep$par, prep$centres,
               grower$rows[at, , drop = FALSE], nthreads)
  uniform <- total - sum(factor_solve(prep$F, kup, 0L, TRUE, nthreads)^2)
  uniform > 1e-3 * total && rpc < 0.5 * uniform
}

# The number of centres grown until the held-out error stops improving:
# m = start, 4 start, 16 start, ... up to max_m, each fit warm-started from
# the last (the centres are nested prefixes of one random order, so the
# last fit's alpha padded with zeros is the same function).  Stops when a
# step improves the held-out error by less than control$grow_gain
# (relative; for classes also by less than control$grow_min absolute and
# two held-out points), keeping the better of the last two; for classes
# any step also stops when its error is below 2 grow_min.  With
# lambda = "auto" the first step tries every candidate and each later one
# the last choice and the next smaller candidate (more centres rarely want
# more penalty), or with more than 8 classes only the next smaller, so
# that the passes carry k right-hand sides where k is large and they cost
# most (on Letter's 26 classes this kept the accuracy of trying both at
# 80 % of the time; on spam the last choice was the better one).
# Easy problems stop at a few hundred centres; hard ones grow to max_m.
# For classes a first step with held-out error above control$grow_jump
# goes straight to max_m (when the next size is at most half of it), and
# every step but the last stops its path at control$grow_patience.
# centres_for(m): list(centres, rule, nested) (falkon_growth_centres()): a
# step warm-starts from the last when both have one rule, nested.
falkon_fit_growing <- function(max_m, centres_for, kernel, rows, Y, w, val, lambda, iter,
                               control, nthreads) {
  start <- min(control$start_centers, max_m)
  sizes <- unique(c(start * 4^(0:floor(log(max_m / start, 4))), max_m))
  prev <- NULL
  path <- NULL
  step_control <- control
  while (length(sizes)) {
    m <- sizes[1L]
    sizes <- sizes[-1L]
    # a step with a larger one after it only warm-starts that one and
    # decides whether to grow: it stops at a shorter patience
    step_control$patience <- if (length(sizes)) min(control$patience, control$grow_patience)
                             else control$patience
    lam <- lambda
    if (identical(lambda, "auto") && !is.null(prev)) {
      below <- control$lambdas[control$lambdas <= prev$lambda * (1 + 1e-9)]
      # the last choice and the next smaller while that makes at most 16
      # right-hand sides; with more classes the next smaller only
      lam <- if (2L * ncol(Y) <= 16L) below[seq_len(min(2L, length(below)))]
             else below[min(2L, length(below))]
    }
    falkon_check_memory(m, NROW(val$x), if (is.numeric(lam)) length(lam)
                        else length(control$lambdas), ncol(Y), control, rows$n,
                        if (is.null(rows$d)) 0 else rows$d)
    prep <- NULL   # the last step's factor goes before the next is allocated
    got <- centres_for(m)
    prep <- falkon_prepare(kernel, got$centres, nthreads,
                           falkon_jitter(rows$single, lam, control, ncol(Y)))
    alpha0 <- if (!is.null(prev) && got$nested && identical(got$rule, prev$landmarks)) {
      rbind(prev$alpha, matrix(0, m - prev$prep$m, ncol(prev$alpha)))
    }
    res <- falkon_fit_squared(prep, rows, Y, w, val, lam, iter, step_control, nthreads, alpha0)
    res$landmarks <- got$rule
    path <- rbind(path, data.frame(m = m, lambda = res$lambda, iter = res$iter,
                                   error = res$error, landmarks = got$rule))
    # classes: a step must gain grow_min (absolute) and two held-out points
    # (less is noise)
    slack <- if (is.null(val$cls)) 0 else max(2 / nrow(val$x), control$grow_min)
    if (!is.null(prev) && !(res$error < (1 - control$grow_gain) * prev$error - slack)) {
      if (prev$error <= res$error) res <- prev
      break
    }
    # classes: any step, whose next would gain about half its error at most
    # (as measured), stops below 2 grow_min (on bench/suites/machines.R's Shuttle
    # split a fit went 256 -> 1024 centres, 1.4 -> 0.40 % held-out error,
    # then to 4096 for 0.25 %: 12-15 s instead of 3.3, for 0.11 point of
    # test accuracy)
    if (!is.null(val$cls) && res$error < 2 * control$grow_min) break
    # classes: a first step this far from grow_min will grow past the next
    # size too (each step gains at most about half the error): go straight
    # to the largest, warm-started from this one, unless the next size is
    # over half the largest (nearly as costly, and it may be the fit kept)
    if (!is.null(val$cls) && is.null(prev) && res$error > control$grow_jump &&
        length(sizes) > 1L && 2 * sizes[1L] <= max_m) {
      sizes <- utils::tail(sizes, 1L)
    }
    prev <- res
  }
  res$centres_path <- path
  res
}
