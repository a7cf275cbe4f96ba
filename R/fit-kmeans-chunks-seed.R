# kernel_kmeans() on chunks from the same seed as in memory (seeding =
# "kmeans++"): the in-memory engine's nstart starts (src/kmeans.c, km_fit:
# greedy weighted k-means++, Lloyd, Hartigan-Wong, the lowest objective
# kept), each step a pass over the chunks in which every chunk runs the C
# block routines on its features.  The uniforms are drawn here, all at
# once, in the order the in-memory fit draws them (start after start: one
# for the first centre, then 2 + floor(log k) per further centre); Lloyd
# and Hartigan-Wong draw none.  So the same seed picks the same rows and
# ends at the same centres and objective (to rounding: sums are folded
# chunk by chunk rather than row by row).

# The nstart runs, the best one returned with every start's objective.
replay_fit <- function(x, sv, map, k, nstart, max_iter, hartigan, nthreads, what) {
  seeds <- replay_plus_plus(x, sv, map, k, nstart, nthreads, what)
  runs <- chunked_lloyd(x, map, seeds, max_iter, sv$names, nthreads, what)
  if (hartigan) runs <- chunked_hartigan(x, map, runs, sv, max_iter, nthreads, what)
  obj <- vapply(runs, `[[`, numeric(1), "tot.withinss")
  run <- runs[[which.min(obj)]]   # the first of equal objectives, as in memory
  run$start_objectives <- obj
  run
}

# Greedy k-means++ (km_plus_plus) for every start in the same passes.  Per
# centre: a pass in which each chunk returns, per start, the potential of
# each trial point (C_kmeans_pp_block), the sum over its rows of
# min(d^2 to the centres chosen, d^2 to the trial); the trial of lowest
# total potential is chosen, and its per-chunk potentials are the chunks'
# totals of d^2 for the next draws.  A draw u gives the target u * total:
# the chunk where the running sum of the chunk totals passes it, then the
# row there by the in-memory rule (one pass over those chunks only).
replay_plus_plus <- function(x, sv, map, k, nstart, nthreads, what) {
  trials <- 2L + as.integer(floor(log(k)))
  u <- matrix(stats::runif(nstart * (1 + (k - 1) * trials)), ncol = nstart)
  n <- as.double(sv$n)
  draw_row <- function(v) pmin(floor(n * v), n - 1) + 1   # the in-memory uniform draw
  seeds <- vector("list", nstart)
  req <- data.frame(start = seq_len(nstart), target = NA_real_, row = draw_row(u[1L, ]))
  totals <- NULL
  for (c in seq_len(k)) {
    if (c > 1L) req <- replay_targets(u[1L + (c - 2L) * trials + seq_len(trials), , drop = FALSE],
                                      totals, draw_row)
    got <- replay_locate(x, sv, map, seeds, req, nthreads, what)
    cand <- lapply(seq_len(nstart), function(r) got[req$start == r, , drop = FALSE])
    pot <- chunks_apply(x, replay_pot_task, list(names = sv$names, map = map, seeds = seeds,
                                                 trials = cand, nthreads = nthreads), what)
    totals <- matrix(0, length(x), nstart)
    for (r in seq_len(nstart)) {
      P <- do.call(rbind, lapply(pot, `[[`, r))   # chunks x trials
      best <- which.min(colSums(P))
      seeds[[r]] <- rbind(seeds[[r]], cand[[r]][best, , drop = FALSE])
      totals[, r] <- P[, best]
    }
  }
  seeds
}

# The requests for the rows the draws u (trials x starts) fall on: the
# target u * total placed in the chunks' running sums (the chunk where the
# running sum of the chunk totals first exceeds it, the target less the
# totals before it), or uniform rows where every row is at distance 0.
replay_targets <- function(u, totals, draw_row) {
  req <- lapply(seq_len(ncol(u)), function(r) {
    tot <- sum(totals[, r])
    if (!(tot > 0)) return(data.frame(start = r, target = NA_real_, row = draw_row(u[, r])))
    cum <- cumsum(totals[, r])
    target <- u[, r] * tot
    chunk <- vapply(target, function(t) {
      j <- which(cum > t)
      if (length(j)) j[1L] else max(which(totals[, r] > 0))   # rounding: the last row
    }, integer(1))
    data.frame(start = r, target = target - c(0, cum)[chunk], row = NA_real_, chunk = chunk)
  })
  do.call(rbind, lapply(req, function(q) {
    if (is.null(q$chunk)) q$chunk <- NA_integer_
    q
  }))
}

# The features of the requested rows (global 'row', or running-sum
# 'target' within chunk 'chunk' for start 'start'), in request order.
replay_locate <- function(x, sv, map, seeds, req, nthreads, what) {
  first <- cumsum(c(0, sv$rows))
  if (is.null(req$chunk)) req$chunk <- NA_integer_
  byrow <- !is.na(req$row)
  req$chunk[byrow] <- findInterval(req$row[byrow] - 1, first[-1L]) + 1L
  req$row[byrow] <- req$row[byrow] - first[req$chunk[byrow]]
  need <- sort(unique(req$chunk))
  got <- chunks_apply(x, replay_locate_task,
                      list(names = sv$names, map = map, seeds = seeds, req = req,
                           nthreads = nthreads), what, which = need)
  out <- matrix(0, nrow(req), map$n_features)
  for (j in seq_along(need)) out[req$chunk == need[j], ] <- got[[j]]
  out
}

# A chunk's requested rows: those given by number, and those whose target
# the running sum of d^2 (to the start's centres so far) passes, block
# after block (C_kmeans_pp_block locates it in its block, else the block's
# total is taken off the target); their features, in request order.
replay_locate_task <- function(raw, i, names, map, seeds, req, nthreads) {
  x <- chunk_xy(raw, NULL, names)$x
  req <- req[req$chunk == i, , drop = FALSE]
  row <- req$row
  left <- req$target
  last <- rep(NA_real_, length(seeds))
  out <- matrix(0, nrow(req), map$n_features)
  for (idx in row_blocks(nrow(x), rff_block_rows(nrow(x), map$n_features))) {
    if (!anyNA(row) && all(row < idx[1L])) break
    Z <- transform_features(map, x[idx, , drop = FALSE], nthreads)
    for (r in unique(req$start[is.na(row)])) {
      q <- which(is.na(row) & req$start == r)
      b <- .Call(C_kmeans_pp_block, Z, seeds[[r]], NULL, NULL, left[q], nthreads)
      hit <- b$pick > 0
      row[q[hit]] <- idx[b$pick[hit]]
      left[q[!hit]] <- left[q[!hit]] - b$total
      if (b$last > 0) last[r] <- idx[b$last]
    }
    mine <- which(!is.na(row) & row >= idx[1L] & row <= idx[length(idx)])
    out[mine, ] <- Z[row[mine] - idx[1L] + 1L, , drop = FALSE]
  }
  # a target past the chunk's total (rounding): its last row of positive
  # d^2, as the in-memory draw
  lost <- which(is.na(row))
  if (length(lost)) {
    row[lost] <- last[req$start[lost]]
    out[lost, ] <- transform_features(map, x[row[lost], , drop = FALSE], nthreads)
  }
  out
}

# A chunk's potentials: per start, for each of its trial points, the sum
# over the chunk's rows of min(d^2 to the centres so far, d^2 to the trial).
replay_pot_task <- function(raw, i, names, map, seeds, trials, nthreads) {
  x <- chunk_xy(raw, NULL, names)$x
  parts <- chunk_feature_blocks(map, x, nthreads, function(Z, idx) {
    lapply(seq_along(trials), function(r) {
      .Call(C_kmeans_pp_block, Z, seeds[[r]], trials[[r]], NULL, numeric(0), nthreads)$pot
    })
  })
  Reduce(function(a, b) Map(`+`, a, b), parts)
}

