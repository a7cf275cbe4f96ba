# kernel_kmeans()'s settings: the clustering bandwidth, case weights, the
# initial centres and the limits of the exact Gram matrix.

# The clustering bandwidth (kernel = NULL): the median, over the rows of an
# evenly spaced subsample of at most 1000 rows, of the distance to the m-th
# nearest neighbour, m = max(5, round(0.1 * rows)).  A neighbourhood of a
# tenth of the data stays inside a cluster while the clusters are larger, so
# sigma follows the within-cluster scale rather than the spread of the whole
# set (the median heuristic), which merges clusters such as concentric rings.
# The fraction, not a fixed m, keeps sigma from shrinking as n grows.
# Evidence: bench/investigations/kmeans_bandwidth.R and bench/investigations/kmeans.md.  Deterministic: no
# random numbers are drawn.
kkm_bandwidth <- function(x, max_rows = 1000L, fraction = 0.1) {
  n <- nrow(x)
  if (n < 2L) stop_arg("x", "needs at least two rows to choose a bandwidth; give 'kernel'")
  if (n > max_rows) x <- x[unique(round(seq(1, n, length.out = max_rows))), , drop = FALSE]
  rows <- nrow(x)
  m <- min(rows - 1L, max(5L, as.integer(round(fraction * rows))))
  d2 <- as.matrix(stats::dist(x))
  diag(d2) <- Inf
  knn <- apply(d2, 1L, function(r) sort(r, partial = m)[m])
  sigma <- signif(stats::median(knn), 4)   # a number the user can type back
  rule <- sprintf("median distance to the %d-th nearest neighbour among %d rows", m, rows)
  if (!(sigma > 0)) {
    sigma <- signif(stats::median(d2[is.finite(d2)]), 4)
    rule <- "median distance (most rows coincide with their neighbours)"
    if (!(sigma > 0)) stop_arg("x", "has (nearly) all rows equal: no bandwidth can be chosen; give 'kernel'")
  }
  list(sigma = sigma, rule = rule, neighbour = m, rows = rows)
}

# From this many rows, seeding = "auto" is k-means||: its 5 rounds each make
# one pass over the data for all the candidates they draw, where k-means++
# makes k passes, one per centre.
kkm_parallel_from <- 1e5
kkm_algo_default <- list(hartigan = TRUE, seeding = 0L, weights = NULL)

# NULL, or non-negative finite case weights with a positive sum.
kkm_weights <- function(weights, n) {
  if (is.null(weights)) return(NULL)
  if (!is.numeric(weights) || is.matrix(weights) || length(weights) != n) {
    stop_arg("weights", "must be a numeric vector with one value per row of 'x' (", n, ")")
  }
  if (anyNA(weights) || any(!is.finite(weights))) stop_arg("weights", "contains NA or infinite values")
  if (any(weights < 0)) stop_arg("weights", "must be non-negative")
  if (!(sum(weights) > 0)) stop_arg("weights", "must not all be zero")
  as.double(weights)
}

# A fit on the rows of positive weight completed with the rows of weight 0
# (zero, indices into all_x): each joins its nearest cluster, adding nothing
# to the sums of squares.
kkm_add_zero_weight_rows <- function(fit, all_x, zero, nthreads) {
  n <- nrow(all_x)
  d <- predict(fit, all_x[zero, , drop = FALSE], type = "distance", nthreads = nthreads)
  cl_zero <- max.col(-d, ties.method = "first")
  if (fit$method == "exact") fit$x_cluster <- unname(fit$cluster)
  cluster <- integer(n)
  cluster[-zero] <- fit$cluster
  cluster[zero] <- cl_zero
  distance <- numeric(n)
  distance[-zero] <- fit$distance
  distance[zero] <- d[cbind(seq_along(zero), cl_zero)]
  names(cluster) <- rownames(all_x)
  w <- numeric(n)
  w[-zero] <- fit$weights
  fit$cluster <- cluster
  fit$distance <- distance
  fit$size <- tabulate(cluster, fit$k)
  fit$weights <- w
  fit
}

# `centers` as the number of clusters or an initial assignment.
kkm_centers <- function(centers, n) {
  if (is.matrix(centers) || is.data.frame(centers)) {
    stop_arg("centers", "must be the number of clusters or an initial assignment; ",
             "initial centres given as points are not supported (kernel k-means ",
             "centres live in feature space)")
  }
  if (is.factor(centers)) {
    if (length(centers) != n) {
      stop_arg("centers", "as a factor must have one value per row of 'x' (", n,
               "), not ", length(centers))
    }
    if (anyNA(centers)) stop_arg("centers", "contains NA")
    k <- nlevels(centers)
    if (k > n) stop_arg("centers", "has ", k, " levels but 'x' has only ", n, " row(s)")
    return(list(k = k, init = as.integer(centers)))
  }
  if (!is.numeric(centers) || length(centers) < 1L) {
    stop_arg("centers", "must be the number of clusters or an initial assignment (integers 1..k)")
  }
  if (length(centers) == 1L) {
    k <- check_count(centers, "centers")
    if (k > n) {
      stop_arg("centers", "asks for ", k, " clusters but 'x' has only ", n, " row(s)")
    }
    return(list(k = k, init = NULL))
  }
  if (length(centers) != n) {
    stop_arg("centers", "must be the number of clusters, or an initial assignment with ",
             "one value per row of 'x' (", n, "); it has length ", length(centers))
  }
  if (anyNA(centers) || any(!is.finite(centers))) stop_arg("centers", "contains NA or infinite values")
  if (any(centers != round(centers)) || any(centers < 1)) {
    stop_arg("centers", "as an initial assignment must hold whole numbers 1..k")
  }
  k <- max(centers)
  if (k > n) {
    stop_arg("centers", "assigns points to cluster ", k, " but 'x' has only ", n, " row(s)")
  }
  list(k = as.integer(k), init = as.integer(centers))
}

# Bytes the exact method may spend on its Gram matrix (R/checks.R).
kkm_gram_limit <- function() memory_limit(c("bochner.max_gram_bytes", "bochner.max_bytes"))

# The refusal names 'x' and what it would need, as check_allocation()'s,
# and the way out.
kkm_gram_refusal <- function(n, k, why) {
  stop_arg("x", sprintf(paste0("is too large for method = \"exact\": the %d x %d Gram matrix ",
                               "and the %d x %d cluster sums would need %s (8 n (n + k) bytes), ",
                               "%s; use method = \"rff\", which needs 8 n D bytes (%s with ",
                               "D = 500), or cluster a subsample"),
                        n, n, n, k, format_bytes(kkm_gram_bytes(n, k)), why,
                        format_bytes(8 * 500 * as.double(n))))
}

kkm_gram_bytes <- function(n, k) 8 * as.double(n) * (as.double(n) + k)
