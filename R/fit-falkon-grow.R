# How many centres falkon() fits on: grown along the held-out error or
# fixed, for the in-memory and the chunked fits alike.

# The grow-or-fixed orchestration of falkon(), in memory and on chunks: with
# the default m and the squared loss the centres grow along the held-out
# error, else the fit is at m centres (or at the matrix m).  centres_at(idx,
# k) gives scaled centres: the training rows at positions idx of a uniform
# draw, or with idx NULL k centres by the landmark rule (or the matrix k);
# release() drops what the caller need not hold while a fixed fit runs.
# The random draws are those of the two paths before they shared this.
falkon_fit_centres <- function(m, grow, loss, uniform, ntr, centres_at, release, kernel, rows,
                               Y, w, val, lambda, iter, control, nthreads, n = 0, d = 0) {
  force(d)   # before release() may drop the data it is read from
  given <- is.matrix(m)
  if (grow && loss == "squared" && !is.null(val)) {
    m <- min(m, ntr)   # centres are training rows
    order <- if (uniform) sample.int(ntr, m)
    pick <- function(k) centres_at(if (uniform) order[seq_len(k)], k)
    return(falkon_fit_growing(m, pick, uniform, kernel, rows, Y, w, val, lambda, iter,
                              control, nthreads))
  }
  centres <- centres_at(if (uniform && !given) sample.int(ntr, min(m, ntr)), m)
  release()
  falkon_fit_fixed(kernel, centres, uniform && !given, rows, Y, w, val, lambda, iter, loss,
                   control, nthreads, n, d)
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
# centres_for(m): the m centres (nested: the first m of one order when
# 'nested', so that warm starts apply).
falkon_fit_growing <- function(max_m, centres_for, nested, kernel, rows, Y, w, val, lambda,
                               iter, control, nthreads) {
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
    prep <- falkon_prepare(kernel, centres_for(m), nthreads)
    alpha0 <- if (nested && !is.null(prev)) {
      rbind(prev$alpha, matrix(0, m - prev$prep$m, ncol(prev$alpha)))
    }
    res <- falkon_fit_squared(prep, rows, Y, w, val, lam, iter, step_control, nthreads, alpha0)
    path <- rbind(path, data.frame(m = m, lambda = res$lambda, iter = res$iter,
                                   error = res$error))
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
