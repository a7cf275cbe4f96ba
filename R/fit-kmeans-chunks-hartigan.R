# Hartigan-Wong passes of kernel_kmeans() on chunks (R/kmeans-chunks.R).

# Hartigan-Wong passes over the chunks from Lloyd's partitions (runs: one
# per start, all advanced in the same passes), as in memory (src/kmeans.c,
# km_run): each pass visits the chunks in order, one at a time, and each
# chunk's feature blocks in order, through the in-memory pass
# (C_kmeans_hartigan_block) with each start's sums, counts and live sets
# carried from block to block; a start stops when a pass makes no move (at
# most max_iter passes), and its sums are then recomputed from the rows.
# The clusters of the rows are kept here between passes (one integer per
# row and start).  The passes start, as in memory, from Lloyd's last
# partition: every row at its nearest of the centres Lloyd's last pass
# assigned to ('assigned'; if an empty cluster took a row in that pass,
# one more pass makes a partition of rows at their nearest centres).
chunked_hartigan <- function(x, map, runs, sv, max_iter, nthreads, what) {
  S <- length(runs)
  active <- rep(TRUE, S)
  far <- which(vapply(runs, function(r) is.null(r$assigned), logical(1)))
  if (length(far)) {
    accs <- chunks_apply(x, lloyd_chunk_task,
                         list(names = sv$names, map = map,
                              centers = lapply(runs[far], `[[`, "centers"), nthreads = nthreads),
                         what, combine = lloyd_combine_starts)
    for (j in seq_along(far)) {
      if (any(accs[[j]]$counts == 0)) {
        active[far[j]] <- FALSE
      } else {
        runs[[far[j]]][c("sums", "counts", "s2")] <- accs[[j]][c("sums", "counts", "s2")]
        runs[[far[j]]]$assigned <- runs[[far[j]]]$centers
      }
    }
  }
  state <- lapply(runs, function(run) {
    list(sums = run$sums, counts = as.double(run$counts),
         last = rep(as.double(sv$n), nrow(run$sums)))
  })
  first <- cumsum(c(0, sv$rows))
  clusters <- vector("list", length(x))   # per chunk, per start
  moves <- passes <- integer(S)
  fresh <- vector("list", S)
  visited <- FALSE
  while (any(active)) {
    act <- which(active)
    pass_moves <- integer(S)
    fresh[act] <- rep(list(list(sums = 0, s2 = 0)), length(act))
    for (c in seq_len(length(x))) {
      got <- chunks_apply(x, hartigan_chunk_task,
                          list(names = sv$names, map = map, state = state[act],
                               centers = if (!visited) lapply(runs[act], `[[`, "assigned"),
                               cluster = clusters[[c]][act],
                               base = (passes[act] + 1) * sv$n + first[c], window = sv$n,
                               nthreads = nthreads), what, which = c)[[1L]]
      if (is.null(clusters[[c]])) clusters[[c]] <- vector("list", S)
      for (j in seq_along(act)) {
        s <- act[j]
        clusters[[c]][[s]] <- got[[j]]$cluster
        state[[s]] <- got[[j]]$state
        pass_moves[s] <- pass_moves[s] + got[[j]]$moves
        fresh[[s]]$sums <- fresh[[s]]$sums + got[[j]]$sums
        fresh[[s]]$s2 <- fresh[[s]]$s2 + got[[j]]$s2
      }
    }
    visited <- TRUE
    for (s in act) {
      if (pass_moves[s] == 0L) {
        active[s] <- FALSE
        next
      }
      passes[s] <- passes[s] + 1L
      moves[s] <- moves[s] + pass_moves[s]
      # the objective after the pass, from the sums of its rows (no drift
      # from the updates)
      C <- fresh[[s]]$sums / state[[s]]$counts
      runs[[s]]$trace <- c(runs[[s]]$trace,
                           sum(pmax(0, fresh[[s]]$s2 - state[[s]]$counts * rowSums(C^2))))
      state[[s]]$sums <- fresh[[s]]$sums
      if (passes[s] >= max_iter) active[s] <- FALSE
    }
  }
  for (s in seq_len(S)) {
    if (passes[s] > 0L) {
      C <- fresh[[s]]$sums / state[[s]]$counts
      withinss <- pmax(0, fresh[[s]]$s2 - state[[s]]$counts * rowSums(C^2))
      runs[[s]]$trace[length(runs[[s]]$trace)] <- sum(withinss)
      dimnames(C) <- list(seq_len(nrow(C)), NULL)
      runs[[s]][c("size", "withinss", "tot.withinss", "centers")] <-
        list(as.integer(state[[s]]$counts), withinss, sum(withinss), C)
    }
    runs[[s]]$moves <- moves[s]
  }
  runs
}

# A chunk's part of a Hartigan-Wong pass, for each start given: its feature
# blocks in order, each through the in-memory pass with the start's state
# carried; per start the clusters of its rows (the nearest 'centers' on the
# first visit), the state after it, its moves and its per-cluster sums of z
# and ||z||^2 under its final clusters.
hartigan_chunk_task <- function(raw, i, names, map, state, centers, cluster, base, window,
                                nthreads) {
  x <- chunk_xy(raw, NULL, names)$x
  blocks <- row_blocks(nrow(x), rff_block_rows(nrow(x), map$n_features))
  out <- rep(list(list(cluster = integer(nrow(x)), moves = 0L, sums = 0, s2 = 0)), length(state))
  for (idx in blocks) {
    Z <- transform_features(map, x[idx, , drop = FALSE], nthreads)
    for (s in seq_along(state)) {
      cl <- if (is.null(cluster)) {
        .Call(C_kmeans_block, Z, centers[[s]], NULL, NULL, 0L, nthreads)$cluster
      } else {
        cluster[[s]][idx]
      }
      st <- state[[s]]
      h <- .Call(C_kmeans_hartigan_block, Z, cl, st$sums, st$counts, st$last,
                 base[s] + idx[1L] - 1, window, nthreads)
      state[[s]] <- list(sums = h$sums, counts = h$counts, last = h$last)
      out[[s]]$cluster[idx] <- h$cluster
      out[[s]]$moves <- out[[s]]$moves + h$moves
      out[[s]]$sums <- out[[s]]$sums + h$block_sums
      out[[s]]$s2 <- out[[s]]$s2 + h$block_s2
    }
  }
  for (s in seq_along(state)) out[[s]]$state <- state[[s]]
  out
}
