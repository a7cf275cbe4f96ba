# falkon()'s squared-loss fit along the CG path, choosing lambda, the
# number of iterations and (growing) the number of centres on held-out rows
# when asked to (val not NULL); the logistic loss's fit is in
# R/falkon-logistic.R and sees the rows the same way.
#
# The fits see the training rows only through 'rows' (falkon_rows()):
#   rows$n                               the number of training rows
#   rows$pass(prep, U, V, w, keep_ku)    K_nm' diag(w) (K_nm U + V), one pass
#   rows$predict(prep, alpha)            K_nm alpha
#   rows$carry_scores(prep)              whether a CG path should carry K_nm alpha
#                                        along for the fitted values
# with V (n x k) and w (n, or n x k) in the rows' order.  A chunked fit
# gives the same interface summed over its chunks; the held-out rows 'val'
# (falkon_heldout()) are held in memory: list(x, Y, w, cls).

# The passes a CG path is expected to take at least (patience plus a few):
# a fit whose H = K_nm' W K_nm costs fewer passes than this forms H once
# (falkon_use_gram()).
falkon_gram_passes <- 10

# Whether a CG path with k right-hand sides for each of L lambdas forms H =
# K_nm' W K_nm once and iterates on it (m x m products) instead of passing
# over the rows at every iteration.  The pass that forms H takes K_nm I as
# K_nm and computes H's upper triangle (src/falkon.c): n m^2 / 2
# multiply-adds, as many as m / (4 k L) passes of 2 n m k L; and those
# passes, with few columns, run slower per multiply-add (at m = 1024 on
# Shuttle, 14 columns: 19 against H's 30 GFMA/s on 2 threads).
falkon_use_gram <- function(m, k, L, maxit) {
  m <= 4 * k * L * min(maxit, falkon_gram_passes)
}

# The CG operator on H: H = apply_knm(I) formed in one pass, then U -> H U.
falkon_gram_operator <- function(apply_knm, m, nthreads) {
  H <- apply_knm(diag(m))
  function(U) .Call(C_matprod, H, U, nthreads)
}

# lambda when nothing can be held out to choose it: 1e-6, the middle of the
# default grid.
falkon_fallback_lambda <- 1e-6

# Rows held in memory (x scaled, n x d).  K_nm = k(x, C) is cached for the
# centres in use when its n m entries fit 'cache_bytes' (and a quarter of
# memory_limit()): a pass is then two products on it instead of a kernel
# evaluation and two products, with the same numbers (src/falkon.c).  One
# K_nm is held at a time: new centres (a growth step) replace it.  With
# single = TRUE (falkon_single()) the kernel blocks and the cache are float
# (4 bytes an entry: twice the entries in the same cache_bytes) and the
# passes' products float, summed in double (src/sgemm.c).
falkon_rows <- function(x, nthreads, block_rows = 0, cache_bytes = 0, single = FALSE) {
  n <- nrow(x)
  cache <- new.env(parent = emptyenv())
  bytes <- if (single) 4 else 8
  fits_cache <- function(m) bytes * as.double(n) * m <= min(cache_bytes, memory_limit() / 4)
  cached_k <- function(prep) {
    if (!is.null(cache$K) && identical(cache$centres, prep$centres)) return(cache$K)
    cache$K <- NULL   # release the old one before the new is computed
    if (!fits_cache(prep$m)) return(NULL)
    cache$K <- .Call(C_falkon_kernel_cache, x, prep$centres, prep$code, prep$par,
                     as.double(block_rows), nthreads, single)
    cache$centres <- prep$centres
    cache$K
  }
  list(n = n, d = ncol(x), single = single,
       # without K_nm cached, the fitted values would cost a kernel
       # evaluation over the rows: a CG path carries them along instead
       # (with the cache they cost one product, less than carrying them)
       carry_scores = function(prep) !fits_cache(prep$m),
       pass = function(prep, U = NULL, V = NULL, w = NULL, keep_ku = FALSE) {
         falkon_collect(prep)
         falkon_knm_apply(prep, x, U = U, V = V, w = w, nthreads = nthreads,
                          block_rows = block_rows, keep_ku = keep_ku, K = cached_k(prep),
                          single = single)
       },
       predict = function(prep, alpha) {
         falkon_collect(prep)
         K <- cached_k(prep)
         if (is.null(K)) falkon_kernel_predict(prep, x, alpha, nthreads, block_rows)
         else if (single) .Call(C_sproduct, K, alpha, FALSE, nthreads)
         else .Call(C_matprod, K, alpha, nthreads)
       })
}

# With many centres for the memory budget (prep$lean, set by the fits from
# falkon_lean()), a collection before each pass over the rows: the scratch
# of the last pass and of the factorisations (R_alloc'd, tens of MB at m =
# 10^4) is otherwise freed only when R next collects, and several of them
# add up to hundreds of MB.  A pass then costs seconds; a collection
# milliseconds.
falkon_collect <- function(prep) {
  if (isTRUE(prep$lean)) invisible(gc(verbose = FALSE))
}

# Progress along a CG path, for its patience, in the order of
# falkon_heldout_error(): an iteration makes progress when the held-out
# error rate falls below its value at the last progress (classes), or stays
# there while the held-out squared error falls by the fraction 'gain'.  The
# fit kept is still the least held-out error; only when to stop looking
# differs.  A fall of the tie-break alone is no progress: on
# bench/suites/machines.R's Shuttle split the error rate was flat from iteration 13
# of 33 while the squared error fell by 0.1-0.5 % an iteration.  For
# regression the rate is Inf throughout.  prog: list(rate, mse, iter), from
# falkon_progress(NULL).
falkon_progress <- function(prog, e, t, gain) {
  if (is.null(prog)) return(list(rate = Inf, mse = Inf, iter = 0L))
  mse <- attr(e, "mse")
  rate <- attr(e, "rate")
  if (rate < prog$rate || (rate == prog$rate && mse < (1 - gain) * prog$mse)) {
    prog <- list(rate = rate, mse = mse, iter = t)
  }
  prog
}

# The fall of the held-out squared error that counts as progress
# (falkon_progress()): where an iteration is a product with H, which costs
# next to nothing, any fall, and no candidate leaves the path (on
# bench/investigations/falkon-defaults.R's Shuttle split the 256-centre path on H reached
# 0.5 % held-out error, and so stopped the growth, only after falls of
# under 1 %); where it is a pass over the rows, control$path_gain for
# regression, and for classes, where it only breaks ties of the error
# rate, control$tie_gain.
falkon_path_gain <- function(on_h, classes, control) {
  if (on_h) 0 else if (classes) control$tie_gain else control$path_gain
}

# Whether a CG path over the rows carries the training rows' scores K_nm
# alpha (n x k for each of L lambdas) along: when those, the passes' K_nm U
# and the best iterate's copy, three n x k L arrays, take at most a
# sixteenth of memory_limit().
falkon_track_scores <- function(n, k, L) {
  24 * as.double(n) * k * L <= memory_limit() / 16
}

# Whether lambda = "auto" fits its candidates one after another: when the
# factors of all L at once (one m x m array each) would hold more than
# control$factor_bytes or a quarter of memory_limit().
falkon_sequential <- function(m, L, control) {
  L > 1L && 8 * as.double(m)^2 * L > min(control$factor_bytes, memory_limit() / 4)
}

# The fit's prep without its factor (m x m), which no later step needs: a
# result kept while the next is fitted (the growth steps) does not hold it.
falkon_unfactored <- function(prep) {
  prep$F <- NULL
  prep
}

# The squared loss on the training rows with targets Y (n x k) and weights
# w; alpha0: NULL, or a start for every lambda (m x k), as when the centres
# grow.  Several candidate lambdas run in one CG path, each with its own
# factor, when they fit in memory (falkon_sequential()); else one after
# another from the largest in the fit's one factor (A refactored in place),
# each path warm-started from the previous best alpha, stopping at the first
# candidate whose best held-out error does not improve on the previous one.
# On passes that evaluate the kernel, the scores K_nm alpha of the training
# rows come along the path from the passes' K_nm U (falkon_cg()): the
# fitted values then cost no kernel evaluation over the rows (at 10^6 rows
# and 10^4 centres, most of a pass).  Not with K_nm cached (on Shuttle the
# n x k L arithmetic of every iteration cost more than the one product it
# saves), nor where the scores would be large.
# On H (falkon_use_gram()) the path runs again on passes over the rows
# ('gram' FALSE) when a CG column broke down: H's rounding, relative to its
# largest entries, swamps H z when z = T^-1 A^-1 u is large (K_mm near
# singular, lambda small), where the passes' K_nm' (K_nm z) stay definite
# (60 centres at learned ARD scales, lambda 1e-8: frozen at held-out MSE
# 0.66 on H, 0.02 on passes; tests/testthat/test-falkon-tune.R).
falkon_fit_squared <- function(prep, rows, Y, w, val, lambda, iter, control, nthreads,
                               alpha0 = NULL, gram = TRUE) {
  prep$lean <- falkon_lean(prep$m, control)
  ntr <- rows$n
  st <- falkon_squared_setup(Y, ntr, w, val, lambda, iter, control)
  wt <- st$wt
  offset <- st$offset
  k <- ncol(Y)
  L <- length(st$lambdas)
  apply_knm <- function(U) rows$pass(prep, U = U, w = wt)
  on_h <- gram && falkon_use_gram(prep$m, k, L, st$maxit)
  gain <- falkon_path_gain(on_h, !is.null(val$cls), control)
  if (on_h) {
    # few centres, many right-hand sides: H = K_nm' W K_nm (one pass with
    # U = I) costs what m / (4 k L) passes cost, and every iteration is
    # then the m x m product H U
    apply_knm <- falkon_gram_operator(apply_knm, prep$m, nthreads)
  }
  # the scores K_nm alpha come along on passes (see above)
  track <- !on_h && rows$carry_scores(prep) && falkon_track_scores(ntr, k, L)
  if (track) apply_knm <- function(U) rows$pass(prep, U = U, w = wt, keep_ku = TRUE)
  # a path over the rows that starts at alpha0 takes its first residual,
  # K_nm' W (Y - K_nm alpha0) / n, from one pass (U = alpha0, V = -Y) that
  # stands for the right-hand side's too: one pass fewer a warm start; the
  # pass's K_nm alpha0 starts the scores
  resid_at <- if (!on_h) function(a) {
    q <- rows$pass(prep, U = a, V = -st$Yc, w = wt, keep_ku = track)
    list(resid = -q / ntr, ku = attr(q, "ku"))
  }
  rhs <- if (on_h || is.null(alpha0)) rows$pass(prep, V = st$Yc, w = wt) / ntr
  score <- if (!is.null(val)) falkon_heldout_scorer(prep, val, control, nthreads)
  # one CG path over the candidates 'lams' (factors: one per candidate),
  # with the held-out error after every iteration
  path_for <- function(factors, lams, start) {
    Lg <- length(lams)
    path <- list()   # (iteration, lambda, error) a row: one frame at the end
    best <- list(error = Inf)
    # the path stops when the best of all candidates makes no progress for
    # patience iterations; before that, on passes over the rows, a
    # candidate that makes none of its own for as long leaves them (they
    # then carry fewer right-hand sides)
    prog_all <- falkon_progress(NULL)
    prog <- rep(list(prog_all), Lg)
    running <- rep(TRUE, Lg)
    callback <- NULL
    if (!is.null(val)) {
      callback <- function(alpha, t, k_alpha = NULL) {
        gs <- which(running)
        f <- score(alpha[, rep(running, each = k), drop = FALSE])
        for (i in seq_along(gs)) {
          g <- gs[i]
          fg <- f[, (i - 1L) * k + seq_len(k), drop = FALSE] + rep(offset, each = nrow(f))
          e <- falkon_heldout_error(fg, val)
          prog[[g]] <<- falkon_progress(prog[[g]], e, t, gain)
          prog_all <<- falkon_progress(prog_all, e, t, gain)
          e <- as.numeric(e)
          path[[length(path) + 1L]] <<- c(t, lams[g], e)
          if (e < best$error) {
            gcols <- (g - 1L) * k + seq_len(k)
            best <<- list(error = e, iter = t, lambda = lams[g],
                          alpha = alpha[, gcols, drop = FALSE], valid_scores = fg,
                          train_scores = if (!is.null(k_alpha)) k_alpha[, gcols, drop = FALSE])
          }
        }
        if (!identical(iter, "auto")) return(FALSE)
        if (t - prog_all$iter >= control$patience) return(TRUE)
        if (on_h) return(FALSE)
        out <- gs[t - vapply(prog[gs], `[[`, 0L, "iter") >= control$patience]
        running[out] <<- FALSE
        out
      }
    }
    r0 <- if (!is.null(start) && !is.null(resid_at)) resid_at(start)
    if (!is.null(start)) start <- start[, rep(seq_len(k), Lg), drop = FALSE]
    res <- falkon_cg(apply_knm, rhs, prep, factors, lams, ntr, st$maxit, tol = control$tol,
                     callback = callback, nthreads = nthreads, alpha0 = start,
                     resid0 = r0$resid, k_alpha0 = r0$ku)
    broke <<- broke || res$breakdown
    if (is.null(val) || is.null(best$alpha)) {
      best <- list(alpha = res$alpha[, seq_len(k), drop = FALSE], iter = res$iter,
                   lambda = lams[1L], error = NA_real_,
                   train_scores = if (!is.null(res$k_alpha))
                                    res$k_alpha[, seq_len(k), drop = FALSE])
    }
    list(best = best, path = falkon_path_frame(path))
  }
  broke <- FALSE
  run <- falkon_lambda_paths(path_for, prep, st$lambdas, !is.null(val), control, alpha0, nthreads)
  if (on_h && broke) {   # H's rounding broke CG down: see above
    return(falkon_fit_squared(prep, rows, Y, w, val, lambda, iter, control, nthreads, alpha0,
                              gram = FALSE))
  }
  best <- run$best
  list(alpha = best$alpha, offset = offset, prep = falkon_unfactored(prep), lambda = best$lambda,
       iter = best$iter, steps = NULL, validation = run$path, n_train = ntr, error = best$error,
       valid_scores = best$valid_scores, train_scores = best$train_scores)
}

# A CG path's held-out errors, gathered as c(iteration, lambda, error) a row
# (an rbind() of one-row frames an iteration took about 28 ms of a 0.35 s
# Shuttle fit): data.frame(iter, lambda, error), NULL without rows.
falkon_path_frame <- function(rows) {
  if (!length(rows)) return(NULL)
  v <- matrix(unlist(rows), 3L)
  data.frame(iter = as.integer(v[1L, ]), lambda = v[2L, ], error = v[3L, ])
}

# falkon_fit_squared()'s weights (NULL for unit weights), targets centred
# at their weighted mean (offset), candidate lambdas (one, the smallest,
# without a held-out slice to choose) and iteration limit.
falkon_squared_setup <- function(Y, ntr, w, val, lambda, iter, control) {
  wt <- falkon_unit_weights(w)
  wy <- if (is.null(wt)) rep(1, ntr) else wt
  offset <- colSums(Y * wy) / sum(wy)
  lambdas <- if (!identical(lambda, "auto")) lambda
             else if (is.null(val)) falkon_fallback_lambda else control$lambdas
  if (is.null(val) && length(lambdas) > 1L) lambdas <- min(lambdas)
  list(wt = wt, offset = offset, Yc = sweep(Y, 2L, offset, check.margin = FALSE),
       lambdas = lambdas, maxit = if (identical(iter, "auto")) control$max_iter else iter)
}

# The CG paths of falkon_fit_squared() over the candidate lambdas: all in one
# path (one factor each), or, when their factors do not fit at once
# (falkon_sequential()), one candidate at a time from the largest, each
# warm-started from the best so far, until one does no better.
# path_for(factors, lambdas, start) runs one path: list(best, path).
falkon_lambda_paths <- function(path_for, prep, lambdas, held_out, control, alpha0, nthreads) {
  if (!held_out || !falkon_sequential(prep$m, length(lambdas), control)) {
    return(path_for(falkon_precond_all(prep, lambdas, nthreads), lambdas, alpha0))
  }
  best <- NULL
  path <- NULL
  start <- alpha0
  for (g in seq_along(lambdas)) {
    falkon_precond(prep, lambdas[g], 1, nthreads)
    run <- path_for(list(prep$F), lambdas[g], start)
    path <- rbind(path, run$path)
    improved <- is.null(best) || run$best$error < best$error
    if (improved) best <- run$best
    if (!improved) break
    start <- best$alpha
  }
  list(best = best, path = path)
}

# A fit on given centres (m x d).  With the squared loss, lambda = "auto",
# a held-out slice and more centres than the candidates' factors fit at
# once (falkon_sequential()), centres drawn uniformly in random order
# ('uniform') choose lambda on their first m / 4 (themselves a uniform
# sample; falkon_pilot_size()): every candidate in one CG path there, a
# pass costing a quarter of a full one.  The fit on all m centres then
# runs the chosen lambda, warm-started from that fit (its alpha padded with
# zeros is the same function).  The candidates one after
# another at full size, each with its own path and factorisation, took 20
# passes (387 of 457 s) at n = 10^6, m = 10^4 (git history: bench/falkon-notes.md at 6e0e28f).
# From the largest candidate the full fit goes on to smaller ones while they do better.
falkon_fit_fixed <- function(kernel, centres, uniform, rows, Y, w, val, lambda, iter, loss,
                             control, nthreads, n = 0, d = 0) {
  m <- nrow(centres)
  L <- if (identical(lambda, "auto")) length(control$lambdas) else length(lambda)
  eps <- falkon_jitter(rows$single, lambda, control, ncol(Y))
  mp <- if (loss == "squared" && uniform && identical(lambda, "auto") && !is.null(val)) {
    falkon_pilot_size(m, L, control)
  }
  if (is.null(mp)) {
    falkon_check_memory(m, NROW(val$x), L, ncol(Y), control, n, d)
    prep <- falkon_prepare(kernel, centres, nthreads, eps)
    fit_fn <- if (loss == "squared") falkon_fit_squared else falkon_fit_logistic
    return(fit_fn(prep, rows, Y, w, val, lambda, iter, control, nthreads))
  }
  falkon_check_memory(mp, NROW(val$x), L, ncol(Y), control, n, d)
  falkon_check_memory(m, NROW(val$x), 1L, ncol(Y), control, n, d)
  prep <- falkon_prepare(kernel, centres[seq_len(mp), , drop = FALSE], nthreads, eps)
  first <- falkon_fit_squared(prep, rows, Y, w, val, lambda, iter, control, nthreads)
  prep <- NULL   # its factors go before the full one is allocated
  prep <- falkon_prepare(kernel, centres, nthreads, eps)
  alpha0 <- rbind(first$alpha, matrix(0, m - mp, ncol(first$alpha)))
  # the largest candidate is a choice m / 4 centres could not make (too few for any less
  # penalty): the fit on all m then goes on down the candidates from it, one factor at a
  # time, while the held-out error falls (argo2016, m = 10^4: 1e-4 on 2500 centres and RMSE
  # 1.42 on all; 1e-8 and 1.18 so, bench/investigations/spatiotemporal.md).  From a choice
  # inside the grid it did not pay: at n = 10^6 (1e-6 -> 1e-8) it cost 56 % more time for
  # 0.1 % of test RMSE.
  run <- control
  down <- first$lambda
  if (first$lambda == max(control$lambdas)) {
    down <- control$lambdas
    run$factor_bytes <- 0
  }
  res <- falkon_fit_squared(prep, rows, Y, w, val, down, iter, run, nthreads, alpha0)
  res$centres_path <- data.frame(m = c(mp, m), lambda = c(first$lambda, res$lambda),
                                 iter = c(first$iter, res$iter), error = c(first$error, res$error),
                                 landmarks = "uniform")
  res
}

# The centres that choose lambda before a fit on m of them (falkon_fit_fixed()):
# m / 4, or fewer where the L candidates' factors would not fit at once; NULL
# where m itself fits them (no choice before the fit) or too few would.
falkon_pilot_size <- function(m, L, control) {
  if (!falkon_sequential(m, L, control)) return(NULL)
  mp <- floor(m / 4)
  while (mp >= 2 && falkon_sequential(mp, L, control)) mp <- floor(mp / 2)
  if (mp < min(control$start_centers, m / 4)) NULL else mp
}

# The scores offset + K alpha of all n rows, in their order, from what the
# fit already holds: the training rows' scores carried along the CG path
# (falkon_track_scores()) or else the cached K_nm (rows$predict reads it
# when it belongs to the fit's centres), and the held-out rows' scores of
# the kept point of the path; NULL when those are missing (the caller then
# evaluates the kernel).  The fitted values cost at most one product
# instead of a kernel evaluation over all rows.
falkon_fit_scores <- function(res, rows, split, n) {
  nv <- length(split$valid)
  if (nv && is.null(res$valid_scores)) return(NULL)
  ft <- if (!is.null(res$train_scores)) res$train_scores else rows$predict(res$prep, res$alpha)
  ft <- ft + rep(res$offset, each = nrow(ft))
  if (!nv) return(ft)
  f <- matrix(0, n, ncol(ft))
  f[split$train, ] <- ft
  f[split$valid, ] <- res$valid_scores
  f
}
