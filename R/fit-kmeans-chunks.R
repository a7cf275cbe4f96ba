# kernel_kmeans() on data in chunks (see ?chunked_fits, R/distributed.R).

# Kernel k-means on random features (or Nystrom features).  Seeding, as in
# memory, by greedy k-means++ below kkm_parallel_from rows: the in-memory
# nstart starts replayed over the chunks from the same draws
# (R/kmeans-chunks-seed.R); from there by k-means|| over the chunks, the
# in-memory engine (src/kmeans.c) on the weighted candidates.  Then Lloyd's
# iterations over the chunks, all starts in each pass, every chunk running
# the C block step (C_kmeans_block) on its features; then, as in memory,
# Hartigan-Wong passes (R/kmeans-chunks-hartigan.R): the in-memory pass
# (C_kmeans_hartigan_block) run on one block of rows after another, chunk
# after chunk, the partition's state carried along (serial, but the same
# pass as over all rows).

#' @rdname chunked_fits
#' @name chunked_fits
#' @export
kernel_kmeans.data_chunks <- function(x, centers, kernel = NULL,
                                      method = c("rff", "nystrom"), D = 500, m = NULL,
                                      nstart = 10, max_iter = 100, seed = NULL, map = NULL,
                                      nthreads = chunks_threads(), rounds = 5,
                                      algorithm = c("Hartigan-Wong", "Lloyd"),
                                      seeding = c("auto", "kmeans++", "kmeans||"), ...) {
  take_renamed(environment(), "kernel_kmeans()", ...)
  if (missing(centers)) stop_arg("centers", "is required: the number of clusters")
  if (length(centers) != 1L) {
    stop_arg("centers", "must be the number of clusters for data in chunks (an initial ",
             "assignment of every row is not supported)")
  }
  k <- check_count(centers, "centers")
  if (!is.null(kernel)) check_kernel(kernel)
  method <- check_choice(method, c("rff", "nystrom"), "method")
  D <- nystrom_count(method, m, D, !missing(D), "kernel_kmeans()")
  if (is.null(map)) D <- check_count(D, "D")
  nstart <- check_count(nstart, "nstart")
  max_iter <- check_count(max_iter, "max_iter", upper = .Machine$integer.max - 1)
  rounds <- check_count(rounds, "rounds")
  algorithm <- check_choice(algorithm, c("Hartigan-Wong", "Lloyd"), "algorithm")
  seeding <- check_choice(seeding, c("auto", "kmeans++", "kmeans||"), "seeding")
  nthreads <- check_threads(nthreads)
  what <- "kernel_kmeans"
  sv <- chunks_survey(x, NULL, what, sample_rows = if (method == "nystrom") max(1000L, 2L * D) else 1000L)
  if (k > sv$n) stop_arg("centers", "asks for ", k, " clusters but the chunks have ", sv$n, " row(s)")
  # the in-memory rule: k-means++ below kkm_parallel_from rows
  if (seeding == "auto") seeding <- if (sv$n >= kkm_parallel_from) "kmeans||" else "kmeans++"
  input <- survey_input(sv)
  # the in-memory default: the clustering bandwidth rule, on the survey's
  # sample of rows (evenly spaced in every chunk, as in memory over the rows)
  bandwidth <- NULL
  if (is.null(kernel) && is.null(map)) {
    bandwidth <- kkm_bandwidth(sv$sample)
    kernel <- gaussian_kernel(bandwidth$sigma)
  }
  run <- with_seed(seed, {
    if (!is.null(map)) {
      check_feature_map(map, sv$d)
    } else if (method == "nystrom") {
      m <- min(D, nrow(sv$sample))
      nystrom_check_data(sv$sample, kernel, m, "uniform", "m")
      map <- draw_nystrom_map(sv$sample, resolve_kernel(kernel, sv$sample), m,
                              nthreads = nthreads)
    } else {
      if (!isTRUE(kernel$shift_invariant)) {
        stop_arg("kernel", "must be shift-invariant for method = \"rff\" (random Fourier features)")
      }
      map <- draw_feature_map(sv$sample, resolve_kernel(kernel, sv$sample), D)
    }
    if (seeding == "kmeans++") {
      run <- replay_fit(x, sv, map, k, nstart, max_iter, algorithm == "Hartigan-Wong",
                        nthreads, what)
    } else {
      seeded <- kmpar_seed(x, sv, map, k, rounds, nstart, max_iter, names = sv$names,
                           nthreads = nthreads, what = what)
      run <- chunked_lloyd(x, map, list(seeded$centers), max_iter, sv$names, nthreads,
                           what)[[1L]]
      if (algorithm == "Hartigan-Wong") {
        run <- chunked_hartigan(x, map, list(run), sv, max_iter, nthreads, what)[[1L]]
      }
      run$start_objectives <- seeded$start_objectives
    }
    run$map <- map
    run
  })
  map <- run$map
  # the in-memory constructor, without the rows' clusters and distances
  # (predict() gives them chunk by chunk)
  res <- c(run[c("size", "withinss", "totss", "iter", "converged", "trace", "reseeded",
                 "start_objectives")],
           list(cluster = NULL, distance = NULL, moves = if (is.null(run$moves)) 0L else run$moves))
  fit <- kkm_result(res, NULL, k, map$kernel, method, nstart)
  fit[c("map", "D", "centers", "input", "bandwidth", "algorithm", "seeding", "chunks")] <-
    list(map, map_size(map), run$centers, input, bandwidth, algorithm, seeding,
         list(rows = sv$rows))
  class(fit) <- c("kernel_kmeans_chunked", "kernel_kmeans")
  if (!fit$converged) {
    warning(sprintf("kernel k-means did not converge in %d iteration%s; increase 'max_iter'",
                    max_iter, if (max_iter == 1L) "" else "s"), call. = FALSE)
  }
  fit
}

# The rows of one chunk's features, a block at a time: f(Z, rows) for each
# block, results in a list.
chunk_feature_blocks <- function(map, x, nthreads, f) {
  n <- nrow(x)
  lapply(row_blocks(n, rff_block_rows(n, map$n_features)), function(idx) {
    f(transform_features(map, x[idx, , drop = FALSE], nthreads), idx)
  })
}

# Squared distances of the rows of Z to the rows of C (as in memory).
centre_distances <- function(Z, C, nthreads) .Call(C_kmeans_centre_distances, Z, C, nthreads)

# k-means|| (Bahmani, Moseley, Vattani, Kumar and Vassilvitskii 2012): a
# first centre uniform over all rows; 'rounds' passes, each keeping every
# row independently with probability min(1, l d^2 / phi) (l = 2k, d^2 the
# squared distance to the nearest candidate, phi their sum over all rows);
# one pass counting the rows nearest each candidate; then k-means++ on the
# candidates weighted by the counts.  Each chunk draws its uniforms from a
# seed drawn here, and returns only the rows that can be kept (those with
# l d^2 / u above its own share of phi): the sample is exact, and the same
# for every plan.
kmpar_seed <- function(x, sv, map, k, rounds, nstart, max_iter, names, nthreads, what) {
  g <- sample.int(sv$n, 1L)
  ch <- findInterval(g - 1, cumsum(c(0, sv$rows)), rightmost.closed = FALSE)
  row <- g - sum(sv$rows[seq_len(ch - 1L)])
  cand <- chunks_apply(x, kmpar_fetch_task, list(names = names, map = map, row = row,
                                                 nthreads = nthreads), what, which = ch)[[1L]]
  ell <- 2 * k
  for (r in seq_len(rounds)) {
    seeds <- sample.int(.Machine$integer.max, length(x))
    got <- chunks_apply(x, kmpar_sample_task,
                        list(names = names, map = map, cand = cand, ell = ell, nthreads = nthreads),
                        what, per_chunk = lapply(seeds, function(s) list(seed = s)))
    phi <- sum(vapply(got, `[[`, numeric(1), "phi"))
    if (!(phi > 0)) break
    for (piece in got) {
      keep <- piece$ratio > phi
      if (any(keep)) cand <- rbind(cand, piece$z[keep, , drop = FALSE])
    }
  }
  weights <- chunks_apply(x, kmpar_weight_task,
                          list(names = names, map = map, cand = cand, nthreads = nthreads), what,
                          combine = chunks_add)
  cluster_candidates(cand, weights, k, nstart, max_iter, nthreads)
}

# The in-memory engine on the k-means|| candidates weighted by the rows
# nearest to them: nstart starts of weighted k-means++ (greedy, as in
# memory), Lloyd and Hartigan-Wong (C_kmeans_lloyd).  Candidates no row is
# nearest to carry no weight and are left out; with fewer candidates than
# k, the missing centres repeat the first ones, and the empty clusters of
# the first pass over the chunks are re-seeded as in memory.
cluster_candidates <- function(cand, weights, k, nstart, max_iter, nthreads) {
  keep <- weights > 0
  cand <- cand[keep, , drop = FALSE]
  weights <- as.double(weights[keep])
  if (nrow(cand) <= k) {
    C <- cand[rep_len(seq_len(nrow(cand)), k), , drop = FALSE]
    return(list(centers = C, start_objectives = NA_real_))
  }
  res <- .Call(C_kmeans_lloyd, cand, k, weights, NULL, TRUE, 0L, nstart, max_iter, nthreads)
  list(centers = res$centers, start_objectives = res$start_objectives)
}

kmpar_fetch_task <- function(raw, i, names, map, row, nthreads) {
  x <- chunk_xy(raw, NULL, names)$x
  transform_features(map, x[row, , drop = FALSE], nthreads)
}

kmpar_sample_task <- function(raw, i, names, map, cand, ell, nthreads, seed) {
  x <- chunk_xy(raw, NULL, names)$x
  u <- with_seed(seed, stats::runif(nrow(x)))
  parts <- chunk_feature_blocks(map, x, nthreads, function(Z, idx) {
    d2 <- .Call(C_kmeans_block, Z, cand, NULL, NULL, 0L, nthreads)$distance
    list(Z = Z, d2 = d2, idx = idx)
  })
  d2 <- unlist(lapply(parts, `[[`, "d2"))
  phi <- sum(d2)
  ratio <- ell * d2 / u
  keep <- ratio > phi
  z <- do.call(rbind, lapply(parts, function(p) p$Z[keep[p$idx], , drop = FALSE]))
  list(phi = phi, ratio = ratio[keep], z = z)
}

kmpar_weight_task <- function(raw, i, names, map, cand, nthreads) {
  x <- chunk_xy(raw, NULL, names)$x
  counts <- chunk_feature_blocks(map, x, nthreads, function(Z, idx) {
    .Call(C_kmeans_block, Z, cand, NULL, NULL, 0L, nthreads)$counts
  })
  Reduce(`+`, counts)
}

# One Lloyd pass on a chunk, for every start at once (centers and own: one
# matrix per start; the features are computed once): each row to its
# nearest centre (ties to the lowest number, the distances as in memory),
# the per-cluster sums of the features, counts and sums of squared norms,
# the chunk's feature mean and sum of squares about it (for totss), and its
# k rows farthest from their centres (to re-seed empty clusters).
lloyd_chunk_task <- function(raw, i, names, map, centers, nthreads, own = NULL) {
  x <- chunk_xy(raw, NULL, names)$x
  parts <- chunk_feature_blocks(map, x, nthreads, function(Z, idx) {
    lapply(seq_along(centers), function(s) lloyd_block(Z, idx, centers[[s]], own[[s]], nthreads))
  })
  lapply(seq_along(centers), function(s) lloyd_fold_blocks(lapply(parts, `[[`, s), nrow(x)))
}

lloyd_block <- function(Z, idx, centers, own, nthreads) {
  b <- .Call(C_kmeans_block, Z, centers, NULL, own, nrow(centers), nthreads)
  list(sums = b$sums, counts = b$counts, s2 = b$s2, zsum = b$zsum, zz = b$zz,
       far = list(d = b$far_distance, cluster = b$cluster[b$far], row = idx[b$far],
                  z = Z[b$far, , drop = FALSE]))
}

lloyd_fold_blocks <- function(parts, rows) {
  out <- parts[[1L]]
  k <- length(out$counts)
  for (p in parts[-1L]) {
    for (f in c("sums", "counts", "s2", "zsum", "zz")) out[[f]] <- out[[f]] + p[[f]]
    far <- list(d = c(out$far$d, p$far$d), cluster = c(out$far$cluster, p$far$cluster),
                row = c(out$far$row, p$far$row), z = rbind(out$far$z, p$far$z))
    keep <- utils::head(order(-far$d, far$row), k)
    out$far <- list(d = far$d[keep], cluster = far$cluster[keep], row = far$row[keep],
                    z = far$z[keep, , drop = FALSE])
  }
  n <- as.double(rows)   # products of counts overflow integers
  out$n <- n
  out$zbar <- out$zsum / n
  out$m2 <- max(0, out$zz - n * sum(out$zbar^2))
  out
}

# lloyd_combine for every start of a pass
lloyd_combine_starts <- function(acc, p, i) {
  if (is.null(acc)) return(lapply(p, function(q) lloyd_combine(NULL, q, i)))
  Map(function(a, q) lloyd_combine(a, q, i), acc, p)
}

lloyd_combine <- function(acc, p, i) {
  p$far$chunk <- rep(i, length(p$far$d))
  if (is.null(acc)) return(p)
  m <- moments_merge(acc$n, acc$zbar, p$n, p$zbar)
  acc$m2 <- acc$m2 + p$m2 + sum(m$delta^2) * m$f
  acc$zbar <- m$mean
  acc$n <- m$n
  acc$sums <- acc$sums + p$sums
  acc$counts <- acc$counts + p$counts
  acc$s2 <- acc$s2 + p$s2
  acc$far <- list(d = c(acc$far$d, p$far$d), cluster = c(acc$far$cluster, p$far$cluster),
                  row = c(acc$far$row, p$far$row), chunk = c(acc$far$chunk, p$far$chunk),
                  z = rbind(acc$far$z, p$far$z))
  acc
}

# Distributed Lloyd from the centres C (a list: one matrix per start, all
# starts advanced in the same passes): pass t assigns every row to the
# centres of pass t - 1 and returns the sums of the new clusters; a start
# stops when its new means equal the old (no row moved), as the in-memory
# run stops when no point moves.  An empty cluster takes the row farthest
# from its centre among clusters of two or more (as in memory), from the
# candidates the chunks returned.  One run per start.
chunked_lloyd <- function(x, map, C, max_iter, names, nthreads, what) {
  st <- lapply(C, function(c) list(C = c, trace = numeric(0), reseeded = 0L, t = 0L,
                                   converged = FALSE, done = FALSE))
  totss <- NA_real_
  repeat {
    live <- which(!vapply(st, `[[`, logical(1), "done"))
    if (!length(live)) break
    args <- list(names = names, map = map, centers = lapply(st[live], `[[`, "C"),
                 nthreads = nthreads)
    accs <- chunks_apply(x, lloyd_chunk_task, args, what, combine = lloyd_combine_starts)
    if (is.na(totss)) totss <- accs[[1L]]$m2
    # as in memory, empty clusters of the first assignment take the rows
    # farthest from the means of their own clusters: one more pass
    empty <- which(vapply(seq_along(live), function(j) {
      st[[live[j]]]$t == 0L && any(accs[[j]]$counts == 0)
    }, logical(1)))
    if (length(empty)) {
      args$centers <- args$centers[empty]
      args$own <- lapply(accs[empty], function(a) a$sums / pmax(a$counts, 1))
      far <- chunks_apply(x, lloyd_chunk_task, args, what, combine = lloyd_combine_starts)
      for (q in seq_along(empty)) accs[[empty[q]]]$far <- far[[q]]$far
    }
    for (j in seq_along(live)) st[[live[j]]] <- lloyd_advance(st[[live[j]]], accs[[j]], max_iter)
  }
  lapply(st, function(s) {
    acc <- s$acc
    dimnames(s$Cnew) <- list(seq_len(nrow(s$Cnew)), NULL)
    list(size = as.integer(acc$counts), withinss = s$withinss,
         tot.withinss = sum(s$withinss), totss = totss, iter = s$t, converged = s$converged,
         trace = s$trace, reseeded = s$reseeded, centers = s$Cnew, sums = acc$sums,
         counts = acc$counts, s2 = acc$s2,
         assigned = if (s$fixed == 0L) s$assigned)
  })
}

# One start's step of chunked_lloyd from the sums of its pass.
lloyd_advance <- function(s, acc, max_iter) {
  fix <- lloyd_fix_empty(acc)
  s$reseeded <- s$reseeded + fix$reseeded
  # the centres this pass assigned to: the rows' nearest of them are the
  # partition of the sums (unless an empty cluster took a row)
  s$assigned <- s$C
  s$fixed <- fix$reseeded
  s$acc <- acc <- fix$acc
  s$Cnew <- acc$sums / acc$counts
  s$withinss <- pmax(0, acc$s2 - acc$counts * rowSums(s$Cnew^2))
  s$trace <- c(s$trace, sum(s$withinss))
  if (s$t > 0L && identical(s$Cnew, s$C)) {
    s$converged <- s$done <- TRUE
    return(s)
  }
  s$C <- s$Cnew
  if (s$t >= max_iter) {
    s$done <- TRUE
    return(s)
  }
  s$t <- s$t + 1L
  s
}

lloyd_fix_empty <- function(acc) {
  fixed <- 0L
  far <- acc$far
  ord <- order(far$chunk, far$row)
  for (c in which(acc$counts == 0)) {
    best <- -1
    pick <- NA_integer_
    for (j in ord) {
      if (acc$counts[far$cluster[j]] > 1 && far$d[j] > best) {
        best <- far$d[j]
        pick <- j
      }
    }
    if (is.na(pick)) break
    z <- far$z[pick, ]
    old <- far$cluster[pick]
    acc$sums[old, ] <- acc$sums[old, ] - z
    acc$s2[old] <- acc$s2[old] - sum(z^2)
    acc$counts[old] <- acc$counts[old] - 1
    acc$sums[c, ] <- z
    acc$s2[c] <- sum(z^2)
    acc$counts[c] <- 1
    far$cluster[pick] <- c
    far$d[pick] <- 0
    fixed <- fixed + 1L
  }
  list(acc = acc, reseeded = fixed)
}

#' @export
summary.kernel_kmeans_chunked <- function(object, ...) {
  clusters <- data.frame(size = object$size, withinss = object$withinss,
                         mean_distance = object$withinss / object$size)
  rownames(clusters) <- seq_len(object$k)
  structure(list(description = c(kkm_description(object), chunked_description(object)),
                 clusters = clusters, tot.withinss = object$tot.withinss,
                 totss = object$totss, betweenss = object$betweenss, trace = object$trace,
                 start_objectives = object$start_objectives, reseeded = object$reseeded),
            class = "summary.kernel_kmeans")
}

#' @export
print.kernel_kmeans_chunked <- function(x, ...) {
  cat(kkm_description(x), chunked_description(x), sep = "\n")
  cat("\nWithin-cluster sum of squares by cluster, in feature space:\n")
  print(signif(x$withinss, 5))
  if (x$totss > 0) {
    cat(sprintf(" (between_SS / total_SS = %5.1f %%)\n", 100 * x$betweenss / x$totss))
  }
  cat("Clusters of the rows: predict(fit, chunks), one vector per chunk\n")
  invisible(x)
}

