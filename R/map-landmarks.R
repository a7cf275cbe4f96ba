# How nystrom_features(), falkon(), kernel_kmeans(method = "nystrom") and
# step_nystrom() choose their landmarks (the rules are documented in
# ?nystrom_features): k-means++ seeding, recursive ridge leverage scores and
# randomly pivoted Cholesky, each returning the chosen rows of x.

# k(x_i, x_i) for every row, from the table of kernels (R/kernels.R): 1 for
# the shift-invariant kernels here.
kernel_diagonal <- function(kernel, x) kernel_info(kernel)$diagonal(kernel, x)

# Kernel k-means++ seeding in feature space (the greedy k-means++ of
# kernel_kmeans(), src/kmeans.c): the rows of x chosen as landmarks.  Over
# max(20 m, 10000) rows, from a uniform subsample of that many.  Should
# every row left coincide with a landmark (duplicated rows), the rest are
# drawn uniformly among the rows not chosen.
kmeanspp_landmarks <- function(kernel, x, m, nthreads) {
  pool_landmarks(x, m, max(20 * m, 10000), kernel, function(xp, diag) {
    .Call(C_kmeans_pp_kernel, xp, kernel_code(kernel), kernel_parameters(kernel), diag, m,
          nthreads)
  })
}

# m distinct rows of x chosen by 'pick' on a pool of them (all rows up to
# pool_max, else a uniform sample of that many): pick(xp, diag) returns
# positions in the pool (diag: the kernel's diagonal there); repeats are
# replaced in place, and a shortfall topped up, by uniform draws from the
# pool's other rows.  x: a matrix or a row_source().
pool_landmarks <- function(x, m, pool_max, kernel, pick) {
  p <- landmark_pool(x, pool_max, kernel)
  pool <- p$pool
  chosen <- pick(p$rows, p$diagonal)
  dup <- duplicated(chosen)
  short <- m - length(chosen)
  if (any(dup) || short > 0L) {
    free <- setdiff(seq_along(pool), chosen)
    extra <- free[sample.int(length(free), sum(dup) + short)]
    chosen[dup] <- extra[seq_len(sum(dup))]
    chosen <- c(chosen, extra[sum(dup) + seq_len(short)])
  }
  pool[chosen]
}

# The pool of the pool-based rules: all rows of x up to pool_max, else a
# uniform sample of that many (positions, sorted), those rows (double) and
# the kernel's diagonal there.
landmark_pool <- function(x, pool_max, kernel) {
  src <- row_source(x)
  pool <- if (src$n > pool_max) sort(sample.int(src$n, pool_max)) else seq_len(src$n)
  xp <- src$fetch(pool)
  storage.mode(xp) <- "double"
  list(pool = pool, rows = xp, diagonal = as.double(kernel_diagonal(kernel, xp)))
}

# Rows as the pool-based rules read them: how many (n), their columns (d),
# and fetch(positions) giving those rows.  A matrix (dense or sparse) is its
# own source; falkon() on data_chunks() passes one whose fetch reads the rows
# in a pass over the chunks, so that the rules draw what they draw in memory
# and take the same rows.
row_source <- function(x) {
  if (is.list(x) && is.function(x$fetch)) return(x)
  list(n = nrow(x), d = ncol(x), fetch = function(i) x[i, , drop = FALSE])
}

# The landmark rules of nystrom_features(), falkon() and step_nystrom().
landmark_rules <- c("uniform", "kmeans", "leverage", "rpcholesky")

# m distinct rows of x (a resolved kernel) by a landmark rule, from the
# current random stream: nystrom_features() and falkon() alike.  x: a
# matrix, or for every rule but "leverage" a row_source().
landmark_index <- function(landmarks, kernel, x, m, nthreads) {
  switch(landmarks,
    uniform = sample.int(row_source(x)$n, m),
    kmeans = kmeanspp_landmarks(kernel, x, m, nthreads),
    leverage = rls_landmarks(kernel, x, m, nthreads),
    rpcholesky = rpcholesky_landmarks(kernel, x, m, nthreads))
}

# Randomly pivoted Cholesky in its block form with rejection sampling
# (src/rpcholesky.c) on a pool of the rows: all of them up to max(4 m, 10000),
# else a uniform sample of that many, which bounds its pool x m factor.  Should
# the residual vanish before m pivots (fewer distinct rows than m, a
# finite-rank kernel), the rest are drawn uniformly from the pool.  'block':
# candidates per round; 50 took 2.3 s for m = 1000 of n = 20000 (d = 10) on 2
# loaded cores, against 3.4 s for 20, 2.4 s for 100 and 30 s for the
# sequential algorithm (block = 1: a pass over the factor per pivot).
rpcholesky_landmarks <- function(kernel, x, m, nthreads, block = 50L) {
  # the C routine holds a pool x m factor, 4 m^2 doubles from m = 2500 (3.2 GB
  # at m = 10^4), and pool x block columns beside it: refused like any fit's
  # state when that exceeds the guard (?bochner_memory)
  pool_max <- max(4 * m, 10000)
  src <- row_source(x)
  pool <- min(src$n, pool_max)
  check_memory(list("the factor" = c(pool, m), "the candidates' columns" = c(pool, block),
                    "the pool of rows" = c(pool, src$d)),
               "landmarks = \"rpcholesky\"", "m")
  pool_landmarks(x, m, pool_max, kernel, function(xp, diag) {
    .Call(C_rpcholesky, xp, kernel_code(kernel), kernel_parameters(kernel), diag, m,
          as.integer(block), nthreads, NULL, FALSE)$index
  })
}

# Randomly pivoted Cholesky pivots that grow (falkon()'s centres): on one
# pool of the rows (all up to pool_max, else a uniform sample), pivots(m)
# gives m rows of x (positions), the first ones those of the last call:
# each call continues the last run's factor (src/rpcholesky.c), so a growth
# to m costs what one run to m costs, and its fits can warm-start.  A
# shortfall (the residual vanished) is topped up by uniform draws from the
# pool, kept by later calls too.  residual(): the residual diagonal of the
# kernel on the pool after the last call (its diagonal before any).
# release(): drop the factor; pivots(m) then serves only m up to the last's.
rpcholesky_grower <- function(kernel, x, pool_max, nthreads, block = 50L) {
  p <- landmark_pool(x, pool_max, kernel)
  pool <- p$pool
  xp <- p$rows
  dg <- p$diagonal
  state <- NULL
  released <- FALSE
  chosen <- integer()
  pivots <- function(m) {
    m <- min(m, length(pool))
    if (m <= length(chosen)) return(pool[chosen[seq_len(m)]])
    if (released) stop("internal: the pivots' factor was released")
    check_memory(list("the factor" = c(length(pool), m),
                      "the candidates' columns" = c(length(pool), block)),
                 "landmarks = \"rpcholesky\"", "m")
    out <- .Call(C_rpcholesky, xp, kernel_code(kernel), kernel_parameters(kernel), dg, m,
                 as.integer(block), nthreads, state, TRUE)
    state <<- out$state
    got <- setdiff(out$index, chosen)
    short <- m - length(chosen) - length(got)
    if (short > 0L) {
      free <- setdiff(seq_along(pool), c(chosen, got))
      got <- c(got, free[sample.int(length(free), short)])
    }
    chosen <<- c(chosen, got)
    pool[chosen]
  }
  list(pivots = pivots, pool = pool, rows = xp, diagonal = dg,
       residual = function() if (is.null(state)) dg else state$r,
       release = function() {
         state <<- NULL
         released <<- TRUE
       })
}

# Recursive ridge leverage score sampling (Musco & Musco 2017, Algorithm 3
# and the authors' reference code): m distinct rows of x.
rls_landmarks <- function(kernel, x, m, nthreads) {
  n <- nrow(x)
  if (m >= n) return(seq_len(n))
  code <- kernel_code(kernel)
  par <- kernel_parameters(kernel)
  kmat <- function(a, b) .Call(C_kernel_matrix, code, par, a, b, nthreads)
  oversample <- max(1, log(m))
  # the target rank, as in the authors' code: O(k log k) samples give a
  # rank-k guarantee, and k = m / (4 log m) keeps every level's sample near
  # m (k = m / log m gave slightly lower errors but samples of 2-3 m, and
  # 7 times the time, at n = 5000, m = 500)
  k <- max(1L, ceiling(m / (4 * oversample)))
  levels <- max(1L, ceiling(log2(n / m)))
  sizes <- n
  for (i in seq_len(levels)) sizes[i + 1L] <- ceiling(sizes[i] / 2)
  perm <- sample.int(n)
  kdiag <- kernel_diagonal(kernel, x)
  # the base level: the first sizes[levels + 1] points of the permutation
  samp <- seq_len(sizes[levels + 1L])
  weights <- rep(1, length(samp))
  for (l in levels:1) {
    current <- perm[seq_len(sizes[l])]
    KS <- kmat(x[current, , drop = FALSE], x[current[samp], , drop = FALSE])
    # the weighted Gram matrix of the sample, W K_SS W
    A <- KS[samp, , drop = FALSE] * outer(weights, weights)
    A <- (A + t(A)) / 2
    lambda <- rls_lambda(A, k)
    # KS R KS' with R = (K_SS + lambda W^-2)^-1 = W (A + lambda I)^-1 W
    B <- t(KS) * weights
    solved <- rls_solve(A, B, lambda, nthreads)
    lambda <- solved$lambda
    quad <- colSums(B * solved$x)
    residual <- pmax(0, kdiag[current] - quad)
    if (l > 1L) {
      levs <- pmin(1, oversample * residual / lambda)
      samp <- which(stats::runif(sizes[l]) < levs)
      if (length(samp) == 0L) {
        # (very unlikely) nothing sampled: a uniform sample instead
        samp <- sort(sample.int(sizes[l], min(m, sizes[l])))
        levs[] <- min(m, sizes[l]) / sizes[l]
      }
      weights <- 1 / sqrt(levs[samp])
    } else {
      levs <- pmin(1, residual / lambda)
      positive <- which(levs > 0)
      if (length(positive) >= m) {
        samp <- positive[sample.int(length(positive), m, prob = levs[positive])]
      } else {
        # too few points with a positive score (duplicated rows): all of
        # them, topped up uniformly
        rest <- setdiff(seq_len(n), positive)
        samp <- c(positive, rest[sample.int(length(rest), m - length(positive))])
      }
    }
  }
  perm[samp]
}

# The ridge of a level: (tr(A) - sum of A's k largest eigenvalues) / k, the
# trace of the part of A beyond rank k over k; with a floor relative to A's
# scale (for a sample of at most k points, or a rank below k), where the
# reference code uses a fixed 1e-5.
rls_lambda <- function(A, k) {
  ns <- nrow(A)
  tr <- sum(diag(A))
  floor <- 1e-6 * max(tr / ns, .Machine$double.xmin)
  if (k >= ns) return(floor)
  values <- eigen(A, symmetric = TRUE, only.values = TRUE)$values
  max((tr - sum(values[seq_len(k)])) / k, floor)
}

# (A + lambda I)^-1 B on the package's Cholesky, and the ridge used: should
# rounding make the factorisation fail, a larger one.
rls_solve <- function(A, B, lambda, nthreads) {
  for (attempt in 1:8) {
    out <- tryCatch(.Call(C_ridge_solve, A, B, lambda, nthreads), error = function(e) NULL)
    if (!is.null(out)) return(list(x = out, lambda = lambda))
    lambda <- lambda * 10
  }
  stop("nystrom_features: leverage scores failed (the landmark Gram matrix is not ",
       "numerically positive semi-definite)", call. = FALSE)
}
