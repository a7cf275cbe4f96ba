#' Kernel two-sample test (maximum mean discrepancy)
#'
#' Tests whether two samples come from one distribution by the squared
#' maximum mean discrepancy (MMD) between them (Gretton et al. 2012), on
#' the exact kernel or on random Fourier or Nyström features.  The result
#' is an `"htest"` object that prints like [t.test()].
#'
#' **Statistic.**  For samples \eqn{x_1..x_m} and \eqn{y_1..y_n} the unbiased
#' U-statistic
#' \deqn{\mathrm{MMD}^2_u = \frac{1}{m(m-1)}\sum_{i \ne j} k(x_i, x_j) +
#'   \frac{1}{n(n-1)}\sum_{i \ne j} k(y_i, y_j) - \frac{2}{mn}\sum_{i,j} k(x_i, y_j).}{
#'   MMD^2_u = sum_{i != j} k(x_i, x_j) / (m(m-1)) + sum_{i != j} k(y_i, y_j) / (n(n-1))
#'   - 2 sum_{i,j} k(x_i, y_j) / (mn).}
#' With `method = "exact"` it takes the \eqn{(m+n)^2} Gram matrix.  On a
#' feature map \eqn{z} (`"rff"`, `"nystrom"`) the kernel is replaced by
#' \eqn{z(x) \cdot z(y)}, and the statistic is the squared distance between
#' the two samples' feature means less its bias,
#' \eqn{\|\bar z_x - \bar z_y\|^2 - \mathrm{tr}\,\hat S_x / m - \mathrm{tr}\,\hat S_y / n}{
#' ||zbar_x - zbar_y||^2 - tr(S_x) / m - tr(S_y) / n} (\eqn{\hat S}{S} the
#' samples' feature covariances): \eqn{O((m + n) D)} time and \eqn{O(D)}
#' memory beyond the data, the features being computed in row blocks.
#'
#' **p-value.**  `null = "permutation"` (the default): the pooled sample is
#' split at random into groups of \eqn{m} and \eqn{n}, `B` times; the
#' splits are drawn one after another from R's generator (so `set.seed()`
#' reproduces the p-value), and the statistics of all splits are computed
#' together, in C on the package's threaded product (\eqn{O((m + n) D B)}
#' on features), identical for any number of threads.  The p-value is
#' \eqn{(1 + \#\{T_b \ge T\}) / (B + 1)}{(1 + #{T_b >= T}) / (B + 1)}.  The
#' splits are kept as bits: \eqn{(m + n) B / 8} bytes (50 MB for two samples
#' of \eqn{10^6} rows and 200 permutations), besides the data.
#' `null = "gamma"`: the biased statistic \eqn{\|\hat\mu_x - \hat\mu_y\|^2}{||mu_x -
#' mu_y||^2} (= MMD^2_u plus the bias terms) is, under the null, close to a
#' weighted sum of chi-squares with mean \eqn{\mathrm{tr}\,C}{tr C} and variance
#' \eqn{2\,\mathrm{tr}\,C^2}{2 tr C^2}, where \eqn{C = \hat S_x / m + \hat S_y / n}{C
#' = S_x / m + S_y / n} is the covariance of the difference of the two mean
#' embeddings; the p-value is the upper tail of the gamma law with those two
#' moments.  On features \eqn{C} is \eqn{D \times D}{D x D} (computed in one
#' pass over the data, \eqn{O((m + n) D^2)}); for the exact kernel its
#' traces come from the doubly centred Gram blocks.  It needs no
#' permutations but is an approximation: permutation p-values are exact
#' for any sample size.
#'
#' **Kernel.**  The default is the Gaussian kernel with the median heuristic:
#' \eqn{\sigma}{sigma} is the median distance between rows of the pooled
#' sample (on an evenly spaced subsample of at most 1000 rows).  With
#' `method = "rff"` the features are [random_features()] with `D`
#' frequencies; with `"nystrom"`, [nystrom_features()] with `min(m, n_x + n_y)`
#' landmarks from the pooled sample.
#'
#' **Data in chunks.**  `x` (and `y`) may be [data_chunks()], or `data`
#' of the formula `value ~ group` (column names only): the test is the
#' in-memory test, with `method = "rff"` and a shift-invariant kernel.  The
#' bandwidth rule reads its rows in one pass, the splits are drawn in this
#' session, and each chunk receives the bits of its own rows and returns
#' its sums \eqn{Z^T L}, \eqn{L^T r}, \eqn{Z^T 1}, \eqn{1^T r} (the gamma
#' null: its centred cross products), added in chunk order under the
#' user's `future` plan.  The statistics equal the in-memory ones to
#' rounding, the splits and features exactly.  The exact and Nystrom
#' statistics need all rows in memory and are refused.
#'
#' @param x The first sample: a numeric matrix, a data frame of numeric
#'   columns or a numeric vector; or, for the formula method, a formula
#'   `response ~ group` (the response one or more columns, such as
#'   `cbind(a, b)`, and `group` with exactly two levels); or data in
#'   chunks ([data_chunks()]).
#' @param y The second sample, with the columns of `x`; for `x` in chunks,
#'   its chunks (or a matrix), unless `group` splits `x`.
#' @param kernel A kernel object; `NULL` (the default) is
#'   `gaussian_kernel("median")` on the pooled sample.
#' @param method `"rff"` (random Fourier features, the default),
#'   `"nystrom"` or `"exact"`.
#' @param D Number of random frequencies (`"rff"`).
#' @param m Number of Nystrom landmarks (`method = "nystrom"`); unset, the
#'   value of `D`'s default (256).  `D` given for it still works, with a
#'   message, until the next release.
#' @param null `"permutation"` or `"gamma"`, see Details.
#' @param B Number of permutations.
#' @param seed `NULL`, or a number: the features and permutations are then
#'   drawn from `set.seed(seed)` and the user's stream is left as it was.
#' @param precision `"auto"`, `"double"` or `"single"`: whether the centred
#'   cross product of the features (the gamma null's moments) is formed in
#'   single precision, the features rounded to float and summed in double
#'   every 256 rows; see [feature_precision] for the bound and the rule of
#'   `"auto"` (double below about \eqn{2^{36}} multiply-adds).  The
#'   permutation null and `method = "exact"` stay double.
#' @param nthreads Number of threads, see [bochner_threads()]; the result
#'   does not depend on it.
#' @param ... Options of [random_features()] (`type`, `sampling`) or
#'   [nystrom_features()] (`landmarks`) for the feature methods.
#' @return An object of class `"htest"`: `statistic` (MMD^2_u), `p.value`,
#'   `null.value`, `alternative`, `method`, `data.name`, and also
#'   `estimate` (the biased statistic \eqn{\|\hat\mu_x - \hat\mu_y\|^2}{||mu_x - mu_y||^2}),
#'   `null_statistics` (the permutation statistics), `kernel` (with
#'   \eqn{\sigma}{sigma} resolved), `sizes` and, for the feature methods,
#'   `map`.
#' @references Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. and
#'   Smola, A. (2012). A kernel two-sample test. \emph{Journal of Machine
#'   Learning Research} 13, 723-773.
#' @seealso [hsic_test()], `kernlab::kmmd()`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(400), 200, 2)
#' y <- matrix(rnorm(400, sd = 1.5), 200, 2)    # same mean, larger variance
#' mmd_test(x, y, D = 256)
#' mmd_test(x, y, method = "exact", null = "gamma")
#' # formula interface
#' df <- data.frame(v = c(x[, 1], y[, 1]), g = rep(c("a", "b"), each = 200))
#' mmd_test(v ~ g, data = df, B = 100)
#' @export
mmd_test <- function(x, ...) UseMethod("mmd_test")

#' @rdname mmd_test
#' @export
mmd_test.default <- function(x, y, kernel = NULL, method = c("rff", "nystrom", "exact"),
                             D = 256, m = NULL, null = c("permutation", "gamma"), B = 200,
                             seed = NULL, precision = c("auto", "double", "single"),
                             nthreads = bochner_threads(), ...) {
  data.name <- paste(deparse1(substitute(x)), "and", deparse1(substitute(y)))
  data <- stat_data(x, y, missing(y), paired = FALSE, min_rows = 2L, what = "the second sample")
  x <- data$x
  y <- data$y
  D <- nystrom_count(stat_method(method), m, D, !missing(D), "mmd_test()")
  o <- stat_test_options(method, null, D, B, nthreads, precision = precision)
  kernel <- stat_kernel(kernel, rbind_sample(x, y), "kernel")
  with_seed(seed, mmd_run(x, y, kernel, o$method, o$D, o$null, o$B, o$nthreads, o$precision,
                          data.name, ...))
}

#' @rdname mmd_test
#' @param data,subset,na.action For the formula method: a data frame with
#'   the formula's variables, an optional subset of its rows, and what to do
#'   with missing values.
#' @export
mmd_test.formula <- function(x, data = NULL, ..., subset, na.action = stats::na.omit) {
  if (inherits(data, "data_chunks")) return(mmd_chunks_formula(x, data, ..., extra = !missing(subset)))
  call <- match.call()
  names(call)[names(call) == "x"] <- "formula"
  split <- two_sample_frame(call, parent.frame(), x)
  out <- mmd_test.default(split$x, split$y, ...)
  out$data.name <- split$name
  out
}

# The response of 'formula' (response ~ group) split by the two levels of
# group: list(x, y, name).
two_sample_frame <- function(call, env, formula) {
  if (!inherits(formula, "formula") || length(formula) != 3L) {
    stop_arg("formula", "must be a two-sided formula such as value ~ group")
  }
  mf <- call[c(1L, match(c("formula", "data", "subset", "na.action"), names(call), 0L))]
  mf[[1L]] <- quote(stats::model.frame)
  if (is.null(mf$na.action)) mf$na.action <- quote(stats::na.omit)
  frame <- eval(mf, env)
  if (ncol(frame) != 2L) stop_arg("formula", "must have one grouping variable on the right: value ~ group")
  g <- factor(frame[[2L]])
  if (nlevels(g) != 2L) {
    stop_arg("formula", "needs a grouping variable with exactly two levels (",
             names(frame)[2L], " has ", nlevels(g), ")")
  }
  v <- frame[[1L]]
  if (!is.numeric(v)) stop_arg("formula", "needs a numeric response")
  v <- as.matrix(v)
  lev <- levels(g)
  list(x = v[g == lev[1L], , drop = FALSE], y = v[g == lev[2L], , drop = FALSE],
       name = paste(deparse1(formula[[2L]]), "by", names(frame)[2L],
                    sprintf("(%s vs %s)", lev[1L], lev[2L])))
}

# The pooled sample for the median heuristic: evenly spaced rows of each
# sample (at most 500 of each), not a copy of all of them.
rbind_sample <- function(x, y, most = 500L) {
  pick <- function(a) a[unique(round(seq(1, nrow(a), length.out = min(nrow(a), most)))), ,
                        drop = FALSE]
  rbind(pick(x), pick(y))
}

mmd_run <- function(x, y, kernel, method, D, null, B, nthreads, precision, data.name, ...) {
  map <- NULL
  if (method == "exact") {
    if (length(list(...))) check_no_dots(...)
    r <- mmd_exact(x, y, kernel, null, B, nthreads)
  } else {
    map <- stat_map(if (method == "nystrom") rbind(x, y) else x, kernel, method, D, nthreads, ...)
    r <- mmd_features(x, y, map, null, B, nthreads, precision)
  }
  mmd_htest(r, kernel, method, map, null, B, nrow(x), nrow(y), data.name)
}

# The "htest" of the statistics r (mmd_exact(), mmd_perm_result(),
# mmd_gamma_result()).
mmd_htest <- function(r, kernel, method, map, null, B, m, n, data.name) {
  p <- if (null == "permutation") perm_p_value(r$statistic, r$null) else
    gamma_upper(r$biased, r$mean, r$var)
  stat_htest(r$statistic, "MMD^2_u", p,
             sprintf("Kernel two-sample test (MMD): %s; %s",
                     stat_method_text(method, map, kernel), stat_null_text(null, B)),
             data.name, "MMD^2",
             list(estimate = c("||mu_x - mu_y||^2" = r$biased), null_statistics = r$null,
                  kernel = kernel, sizes = c(m = as.double(m), n = as.double(n)), map = map))
}

# MMD^2_u of every split from a = l'Kl, b = l'K1, d = l'diag(K) (l the
# 0/1 labels of the first group), total = 1'K1 and trace = tr K.
mmd_from_sums <- function(a, b, d, total, trace, m, n) {
  m <- as.double(m)
  n <- as.double(n)
  sxx <- a - d
  syy <- total - 2 * b + a - (trace - d)
  sxy <- b - a
  sxx / (m * (m - 1)) + syy / (n * (n - 1)) - 2 * sxy / (m * n)
}

mmd_exact <- function(x, y, kernel, null, B, nthreads) {
  m <- nrow(x)
  n <- nrow(y)
  check_allocation(m + n, m + n, "the Gram matrix of the pooled sample", arg = "x")
  K <- gram_matrix(kernel, rbind(x, y), nthreads = nthreads)
  dimnames(K) <- NULL
  s <- .Call(C_mmd_perm_gram, K, m, B, nthreads)
  stats <- mmd_from_sums(s$a, s$b, s$d, sum(K), sum(diag(K)), m, n)
  ix <- seq_len(m)
  iy <- m + seq_len(n)
  Kxx <- K[ix, ix, drop = FALSE]
  Kyy <- K[iy, iy, drop = FALSE]
  Kxy <- K[ix, iy, drop = FALSE]
  biased <- mean(Kxx) + mean(Kyy) - 2 * mean(Kxy)
  out <- list(statistic = stats[1L], null = stats[-1L], biased = biased)
  if (null == "gamma") {
    # C = S_x / m + S_y / n: traces from the doubly centred Gram blocks
    cxx <- centre_gram(Kxx)
    cyy <- centre_gram(Kyy)
    cxy <- Kxy - outer(rowMeans(Kxy), colMeans(Kxy), "+") + mean(Kxy)
    m <- as.double(m)
    n <- as.double(n)
    tr_x <- sum(diag(cxx)) / (m - 1)
    tr_y <- sum(diag(cyy)) / (n - 1)
    hs_x <- sum(cxx^2) / (m - 1)^2
    hs_y <- sum(cyy^2) / (n - 1)^2
    hs_xy <- sum(cxy^2) / ((m - 1) * (n - 1))
    out$mean <- tr_x / m + tr_y / n
    out$var <- 2 * (hs_x / m^2 + hs_y / n^2 + 2 * hs_xy / (m * n))
  }
  out
}

mmd_features <- function(x, y, map, null, B, nthreads, precision = "double") {
  m <- as.double(nrow(x))
  n <- as.double(nrow(y))
  if (null == "permutation") {
    rows <- stat_block_rows(max(m, n), map$n_features + B + 1L)
    # the labels drawn first, then the features of each block added
    bits <- .Call(C_mmd_draw, m + n, m, B)
    state <- .Call(C_mmd_fold_start, bits, 0, m + n, m, B, map$n_features)
    state <- mmd_fold_rows(state, x, map, rows, nthreads)
    state <- mmd_fold_rows(state, y, map, rows, nthreads)
    return(mmd_perm_result(.Call(C_mmd_fold_finish, state), m, n, nthreads))
  }
  D <- map$n_features
  mmd_gamma_result(stat_feature_moments(map, x, nthreads, single = stat_single(precision, m, D)),
                   stat_feature_moments(map, y, nthreads, single = stat_single(precision, n, D)),
                   m, n)
}

# The features of the rows of x added to an MMD fold, 'rows' at a time.
mmd_fold_rows <- function(state, x, map, rows, nthreads) {
  for (idx in row_blocks(nrow(x), rows)) {
    z <- transform_features(map, x[idx, , drop = FALSE], nthreads)
    state <- .Call(C_mmd_fold_step, state, z, nthreads)
  }
  state
}

# The statistic and the permutation statistics from the fold's sums s
# (S = Z'L, q, s = Z'1, Q) of a first sample of m rows and a second of n.
mmd_perm_result <- function(s, m, n, nthreads) {
  a <- colSums(s$S^2)
  stats <- mmd_from_sums(a, as.vector(crossprod_small(s$S, matrix(s$s), nthreads)), s$q,
                         sum(s$s^2), s$Q, m, n)
  zx <- s$S[, 1L] / m
  zy <- (s$s - s$S[, 1L]) / n
  list(statistic = stats[1L], null = stats[-1L], biased = sum((zx - zy)^2))
}

# The statistic and the gamma null's moments from the two samples' feature
# moments (stat_feature_moments()).
mmd_gamma_result <- function(mx, my, m, n) {
  Sx <- mx$zz / (m - 1)
  Sy <- my$zz / (n - 1)
  biased <- sum((mx$zbar - my$zbar)^2)
  C <- Sx / m + Sy / n
  list(statistic = biased - sum(diag(Sx)) / m - sum(diag(Sy)) / n, null = NULL,
       biased = biased, mean = sum(diag(C)), var = 2 * sum(C^2))
}
