# The in-memory fits of kernel_kmeans() by method: exact (the Gram matrix),
# rff and nystrom (Lloyd on a feature map, or mini-batches), and the fitted
# object they share.

# The features and centres Lloyd's k-means holds (check_memory(), R/checks.R).
kkm_check_memory <- function(n, nf, k, arg) {
  check_memory(list("the feature matrix" = c(n, nf), "the centres and their sums" = c(2 * k, nf)),
               "kernel_kmeans()", arg)
}

kkm_fit_exact <- function(x, start, kernel, nstart, max_iter, seed, nthreads,
                          algo = kkm_algo_default) {
  n <- nrow(x)
  if (kernel$name == "min" && any(x < 0)) stop_arg("x", "must be non-negative for the min kernel")
  # the refusal that names the way out (method = "rff") before the generic one
  limit <- kkm_gram_limit()
  if (kkm_gram_bytes(n, start$k) > limit) {
    kkm_gram_refusal(n, start$k, sprintf("but only %s is available%s", format_bytes(limit),
                                         attr(limit, "source")))
  }
  check_allocation(n, n, "the Gram matrix", arg = "x")
  resolved <- resolve_kernel(kernel, x)
  res <- with_seed(seed, tryCatch(
    .Call(C_kmeans_gram, kernel_inputs(resolved, x), kernel_code(resolved),
          kernel_parameters(resolved),
          start$k, algo$weights, start$init, algo$hartigan, algo$seeding, nstart,
          max_iter, nthreads),
    error = function(e) {
      if (is_allocation_error(e)) {
        kkm_gram_refusal(n, start$k, "and allocating them failed")
      }
      stop(e)
    }))
  train <- x
  dimnames(train) <- list(NULL, colnames(x))
  fit <- kkm_result(res, x, start$k, resolved, "exact", nstart)
  fit$x <- train
  fit$centre_sqnorm <- res$centre_sqnorm
  fit
}

kkm_fit_rff <- function(x, start, kernel, D, nstart, max_iter, seed, nthreads, map = NULL,
                        algo = kkm_algo_default, batch = NULL) {
  if (!is.null(map)) {
    return(with_seed(seed, kkm_lloyd_on_map(x, start, map, nstart, max_iter, nthreads,
                                            "the features of 'x'", arg = "map",
                                            algo = algo, batch = batch)))
  }
  fourier <- isTRUE(kernel$shift_invariant)
  if (!fourier && is.null(utils::getS3method("build_feature_map", class(kernel)[1L],
                                             optional = TRUE))) {
    stop_arg("kernel", "must be shift-invariant for method = \"rff\" (random Fourier ",
             "features); the ", kernel$name, " kernel has no random feature map here: ",
             "use method = \"exact\"")
  }
  if (is.null(batch)) kkm_check_memory(nrow(x), rff_feature_count(D, ncol(x), kernel), start$k, "D")
  resolved <- resolve_kernel(kernel, x)
  # one stream: the map's draws, then the seeding
  with_seed(seed, {
    map <- draw_feature_map(x, resolved, D)
    kkm_lloyd_on_map(x, start, map, nstart, max_iter, nthreads,
                     "the random features of 'x'", arg = "D", algo = algo, batch = batch)
  })
}

# Nystrom: min(D, n) landmarks by a landmark rule (uniform by default, as in
# nystrom_features()), then the same k-means as on random features, on the
# rank-restricted Nystrom map (Wang, Gittens & Mahoney 2019: with uniform
# landmarks, a (1 + eps) approximation of the kernel k-means objective).  One
# stream: the landmarks, then the seeding.
kkm_fit_nystrom <- function(x, start, kernel, D, nstart, max_iter, seed, nthreads,
                            algo = kkm_algo_default, batch = NULL, landmarks = "uniform") {
  nystrom_check_data(x, kernel, min(D, nrow(x)), landmarks, "m")
  if (is.null(batch)) kkm_check_memory(nrow(x), min(D, nrow(x)), start$k, "m")
  resolved <- resolve_kernel(kernel, x)
  with_seed(seed, {
    map <- draw_nystrom_map(x, resolved, min(D, nrow(x)), landmarks, nthreads = nthreads)
    fit <- kkm_lloyd_on_map(x, start, map, nstart, max_iter, nthreads,
                            "the Nystrom features of 'x'", arg = "m", algo = algo,
                            batch = batch)
  })
  fit$method <- "nystrom"
  fit
}

# Lloyd's k-means on the features of x under a map ('what' and 'arg' say what
# would not fit in memory, and which argument to change).
kkm_lloyd_on_map <- function(x, start, map, nstart, max_iter, nthreads, what, arg,
                             algo = kkm_algo_default, batch = NULL) {
  if (!is.null(batch)) return(kkm_minibatch(x, start$k, map, batch, nstart, max_iter, nthreads, algo))
  check_allocation(nrow(x), map$n_features, what, arg = arg)
  Z <- stats::predict(map, x, nthreads = nthreads)
  res <- .Call(C_kmeans_lloyd, Z, start$k, algo$weights, start$init, algo$hartigan, algo$seeding,
               nstart, max_iter, nthreads)
  fit <- kkm_result(res, x, start$k, map$kernel, "rff", nstart)
  fit$map <- map
  fit$D <- map_size(map)
  fit$centers <- res$centers
  dimnames(fit$centers) <- list(seq_len(start$k), NULL)
  fit
}

# Mini-batch k-means (Sculley, 2010) on the features of x, which are never
# all in memory: the centres start from k-means (k-means++ or ||, then
# Hartigan-Wong if asked) with nstart starts on the features of one batch;
# then each step draws 'batch' rows, maps them, assigns them to the nearest
# centre and moves each centre to the running mean of all the points it was
# given so far (its count v_c: c <- (v_c c + sum of its new points) /
# (v_c + m_c), the per-point learning rate 1 / v_c).  Stops when no centre
# moves by more than 1e-3 of the root mean square distance of the batch to
# its centres, or after max_iter steps.  A last pass over x in row blocks
# assigns every row and gives the exact within and total sums of squares.
kkm_minibatch <- function(x, k, map, batch, nstart, max_iter, nthreads, algo) {
  n <- nrow(x)
  batch <- min(batch, n)
  w <- algo$weights
  wt <- function(idx) if (is.null(w)) rep(1, length(idx)) else w[idx]
  scale <- if (is.null(w)) n else sum(w)   # batch sums -> whole-data estimates
  first <- sort(sample.int(n, batch))
  Z <- transform_features(map, x[first, , drop = FALSE], nthreads)
  res <- .Call(C_kmeans_lloyd, Z, k, if (!is.null(w)) w[first], NULL, algo$hartigan,
               algo$seeding, nstart, 100L, nthreads)
  centers <- res$centers
  counts <- as.numeric(rowsum(wt(first), factor(res$cluster, seq_len(k)), reorder = TRUE))
  counts[is.na(counts)] <- 0
  trace <- sum(res$withinss) * scale / sum(wt(first))
  steps <- 0L
  converged <- FALSE
  while (steps < max_iter) {
    idx <- sort(sample.int(n, batch))
    Z <- transform_features(map, x[idx, , drop = FALSE], nthreads)
    # the Lloyd step of the chunked fit on the batch: nearest centres,
    # weighted sums and weights per cluster
    b <- .Call(C_kmeans_block, Z, centers, if (!is.null(w)) w[idx], NULL, 0L, nthreads)
    steps <- steps + 1L
    d_own <- b$distance
    wb <- wt(idx)
    trace <- c(trace, sum(wb * d_own) * scale / sum(wb))
    m <- b$counts
    sums <- b$sums
    updated <- (counts * centers + sums) / pmax(counts + m, 1)
    updated[m == 0, ] <- centers[m == 0, ]
    shift <- sqrt(max(rowSums((updated - centers)^2)))
    centers <- updated
    counts <- counts + m
    if (shift <= 1e-3 * sqrt(sum(wb * d_own) / sum(wb))) {
      converged <- TRUE
      break
    }
  }
  # the last pass: every row to its nearest centre, exact sums of squares
  cluster <- integer(n)
  distance <- numeric(n)
  zsum <- numeric(ncol(centers))
  zz <- 0
  for (idx in row_blocks(n, rff_block_rows(n, map$n_features))) {
    Z <- transform_features(map, x[idx, , drop = FALSE], nthreads)
    b <- .Call(C_kmeans_block, Z, centers, if (!is.null(w)) w[idx], NULL, 0L, nthreads)
    cluster[idx] <- b$cluster
    distance[idx] <- b$distance
    zsum <- zsum + b$zsum
    zz <- zz + b$zz
  }
  size <- tabulate(cluster, k)
  withinss <- as.numeric(rowsum(wt(seq_len(n)) * distance, factor(cluster, seq_len(k)),
                                reorder = TRUE))
  withinss[is.na(withinss)] <- 0
  res <- list(cluster = cluster, size = size, withinss = withinss, distance = distance,
              trace = c(trace, sum(withinss)), iter = steps, converged = converged,
              reseeded = 0L, start_objectives = res$start_objectives,
              totss = max(0, zz - sum(zsum^2) / scale), centers = centers, moves = 0L)
  fit <- kkm_result(res, x, k, map$kernel, "rff", nstart)
  fit$map <- map
  fit$D <- map_size(map)
  fit$centers <- centers
  dimnames(fit$centers) <- list(seq_len(k), NULL)
  fit$batch <- batch
  fit
}

kkm_result <- function(res, x, k, kernel, method, nstart) {
  cluster <- res$cluster
  names(cluster) <- rownames(x)
  tot <- sum(res$withinss)
  structure(list(cluster = cluster, size = res$size, withinss = res$withinss,
                 tot.withinss = tot, totss = res$totss,
                 betweenss = max(0, res$totss - tot),
                 iter = res$iter, converged = res$converged, trace = res$trace,
                 start_objectives = res$start_objectives, distance = res$distance,
                 reseeded = res$reseeded, moves = res$moves, k = k, kernel = kernel, method = method,
                 nstart = nstart),
            class = "kernel_kmeans")
}
