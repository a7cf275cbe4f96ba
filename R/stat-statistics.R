# Shared pieces of the kernel statistics (mmd_test(), hsic_test(),
# kernel_pca(), kernel_cca()): feature maps built for a statistic, features
# streamed in row blocks, centred cross products, the gamma null, "htest"
# objects, and the symmetric eigen-solver on the package's own product.

stat_method <- function(method) check_choice(method, c("rff", "nystrom", "exact"), "method")

stat_null <- function(null, auto = FALSE) {
  check_choice(null, c(if (auto) "auto", "permutation", "gamma"), "null")
}

# The two data sets of a statistic as matrices: paired variables (HSIC,
# CCA) need the same rows, two samples (MMD) the same columns; each needs
# at least min_rows rows.
stat_data <- function(x, y, y_missing, paired, min_rows, what) {
  x <- as_data_matrix(x, "x")
  if (y_missing) stop_arg("y", "is required: ", what)
  y <- as_data_matrix(y, "y")
  if (paired && nrow(y) != nrow(x)) stop_arg("y", "has ", nrow(y), " rows but 'x' has ", nrow(x))
  if (!paired && ncol(y) != ncol(x)) {
    stop_arg("y", "has ", ncol(y), " columns but 'x' has ", ncol(x))
  }
  if (nrow(x) < min_rows) stop_arg("x", "needs at least ", min_rows, " rows")
  if (nrow(y) < min_rows) stop_arg("y", "needs at least ", min_rows, " rows")
  list(x = x, y = y)
}

# The options shared by the two tests, validated.
stat_test_options <- function(method, null, D, B, nthreads, auto = FALSE, precision = "auto") {
  null <- stat_null(null, auto)
  list(method = stat_method(method), null = null, D = check_count(D, "D"),
       B = if (null != "gamma") check_count(B, "B") else 0L,
       nthreads = check_threads(nthreads), precision = check_precision(precision[1L]))
}

# Whether the feature moments of n rows and D features (stat_feature_moments()) are formed
# in single precision: the feature solvers' rule (feature_single(), ?feature_precision),
# the product large and, where a ridge 'penalty' is added to Zc'Zc (kernel_cca()), that
# ridge large next to the float product's typical error.
stat_single <- function(precision, n, D, penalty = Inf) {
  feature_single(precision, n, D, 1, penalty)
}

# The printed note of a fit whose cross product was single precision.
stat_precision_text <- function(x) {
  if (identical(x$precision, "single")) ", cross product in single precision" else ""
}

# The kernel with sigma = "median" resolved on x; a missing kernel is the
# Gaussian with the median heuristic.
stat_kernel <- function(kernel, x, arg) {
  if (is.null(kernel)) kernel <- gaussian_kernel("median")
  check_kernel(kernel, arg)
  resolve_kernel(kernel, x)
}

# A feature map for a statistic (a resolved kernel): random Fourier
# features (D frequencies, options of random_features() in '...') or a
# Nystrom map of min(D, n) landmarks drawn from x (options of
# nystrom_features(): landmarks, tol), its options checked here.
stat_map <- function(x, kernel, method, D, nthreads, ...) {
  if (method == "rff") {
    o <- feature_map_options(...)
    return(draw_feature_map(x, kernel, D, o$type, o$sampling, o$method, o$opts))
  }
  o <- nystrom_options(...)
  m <- min(D, nrow(x))
  nystrom_check_data(x, kernel, m, o$landmarks, "m")
  draw_nystrom_map(x, kernel, m, o$landmarks, o$tol, nthreads)
}

# Rows per block of streamed features: about 16 MB for the block's 'ncol'
# columns (its features and what the consumer keeps beside them, such as
# the permutation labels), at least 256 rows: large enough that the
# threads share each block's products evenly and R's per-block work is
# small beside them.
stat_block_rows <- function(n, ncol) max(1L, min(n, max(256L, 2^21 %/% max(1L, ncol))))

# Centred cross product of the features of x, streamed in row blocks (the
# n x D feature matrix is never held): list(zz = Zc'Zc, zbar, n).  With a
# second map and data y (same rows), the features of both side by side.
# single: Zc'Zc by the single-precision product (stat_single()).
stat_feature_moments <- function(map, x, nthreads, map2 = NULL, y = NULL, single = FALSE) {
  nf <- map$n_features + if (is.null(map2)) 0L else map2$n_features
  check_allocation(nf, nf, "the feature cross product", arg = "D")
  blocks <- row_blocks(nrow(x), stat_block_rows(nrow(x), 2L * nf))
  state <- NULL
  for (idx in blocks) {
    z <- transform_features(map, x[idx, , drop = FALSE], nthreads)
    if (!is.null(map2)) z <- cbind(z, transform_features(map2, y[idx, , drop = FALSE], nthreads))
    state <- .Call(C_stat_moments_step, state, z, single, nthreads)
  }
  .Call(C_stat_moments_finish, state, nthreads)
}

# The p-value where the gamma law's moments vanish (a sample whose kernel
# matrix is constant: every point the same): NA, said.
gamma_undefined <- function() {
  warning("the gamma approximation is undefined here (its null mean or variance is 0: ",
          "a sample's points all coincide, or the kernel sees them so); the p-value is NA. ",
          "Use null = \"permutation\"", call. = FALSE)
  NA_real_
}

# Upper-tail probability of the gamma law with the given mean and variance
# (the moment-matched approximation of a weighted sum of chi-squares).
gamma_upper <- function(t, mean, var) {
  if (!(mean > 0) || !(var > 0)) return(gamma_undefined())
  stats::pgamma(t, shape = mean^2 / var, scale = var / mean, lower.tail = FALSE)
}

# Permutation p-value: the observed statistic counts as one of the B + 1.
perm_p_value <- function(observed, null) (1 + sum(null >= observed)) / (length(null) + 1)

stat_htest <- function(statistic, name, p.value, method, data.name, null_name, extra = list()) {
  out <- list(statistic = stats::setNames(statistic, name), p.value = p.value,
              null.value = stats::setNames(0, null_name), alternative = "greater",
              method = method, data.name = data.name)
  structure(c(out, extra), class = "htest")
}

stat_method_text <- function(method, map, kernel) {
  how <- switch(method,
    exact = "exact kernel",
    rff = sprintf("random Fourier features, %d columns", map$n_features),
    nystrom = sprintf("Nystrom features, %d landmarks", map_size(map)))
  sprintf("%s, %s kernel (%s)", how, kernel_label(kernel), stat_kernel_text(kernel))
}

# A kernel's parameters, or its formula for kernels that are not
# shift-invariant (as print.random_features() shows them).
stat_kernel_text <- function(kernel) {
  if (kernel$shift_invariant) kernel_parameter_text(kernel)
  else paste("k(x, y) =", kernel_formula(kernel))
}

stat_null_text <- function(null, B) {
  if (null == "permutation") sprintf("p-value from %d permutations", B)
  else "p-value from the gamma approximation"
}

# The centred Gram matrix H K H (plain R arithmetic, no BLAS).
centre_gram <- function(K) {
  r <- rowMeans(K)
  K - outer(r, r, "+") + mean(r)
}

# Top 'rank' eigenpairs of a symmetric positive semi-definite operator A
# (given as apply_A(V), n x k -> n x k, on the package's own product) by
# block subspace iteration with Rayleigh-Ritz (Halko, Martinsson and Tropp
# 2011, Algorithm 4.4, with a Rayleigh-Ritz step each iteration): a block
# of rank + oversample columns, orthonormalised through the small
# eigenproblem of its Gram matrix; it stops when every wanted Ritz pair has
# residual ||A v - theta v|| <= tol * theta_1.  Only (rank + oversample)-
# square eigenproblems go to eigen(); the n-sized work is apply_A and the
# products.  The start block comes from R's generator (set.seed()).
subspace_eigen <- function(apply_A, n, rank, nthreads, tol = 1e-10, max_iter = 1000L,
                           oversample = 10L) {
  k <- min(n, rank + oversample)
  V <- orthonormal_block(matrix(stats::rnorm(n * k), n, k), nthreads)
  for (it in seq_len(max_iter)) {
    AV <- apply_A(V)
    T <- crossprod_small(V, AV, nthreads)
    e <- eigen((T + t(T)) / 2, symmetric = TRUE)
    AVU <- .Call(C_matprod, AV, e$vectors, nthreads)
    VU <- .Call(C_matprod, V, e$vectors, nthreads)
    want <- seq_len(min(rank, ncol(V)))
    res <- sqrt(colSums((AVU[, want, drop = FALSE] -
                           sweep(VU[, want, drop = FALSE], 2L, e$values[want], "*"))^2))
    if (all(res <= tol * max(e$values[1L], .Machine$double.xmin))) break
    Vn <- orthonormal_block(AVU, nthreads)
    if (is.null(Vn) || ncol(Vn) < length(want)) break   # the operator's rank is below 'rank'
    V <- Vn
  }
  converged <- all(res <= tol * max(e$values[1L], .Machine$double.xmin))
  if (!converged && it == max_iter) {
    warning("the eigen-solver stopped after ", max_iter, " iterations with a relative residual of ",
            format(max(res) / max(e$values[1L], .Machine$double.xmin), digits = 3),
            call. = FALSE)
  }
  list(values = e$values[want], vectors = VU[, want, drop = FALSE], iterations = it,
       converged = converged)
}

# t(a) %*% b on the package's product.
crossprod_small <- function(a, b, nthreads) .Call(C_matprod, t(a), b, nthreads)

# An orthonormal basis of the columns of Y (n x k): Y U Lambda^{-1/2} from
# the eigendecomposition of the k x k matrix Y'Y, applied twice (the second
# pass restores orthogonality lost to rounding); columns of relative size
# below 1e-10 are dropped, NULL when none is left.
orthonormal_block <- function(Y, nthreads) {
  for (pass in 1:2) {
    G <- crossprod_small(Y, Y, nthreads)
    e <- eigen((G + t(G)) / 2, symmetric = TRUE)
    keep <- e$values > 1e-20 * max(e$values[1L], .Machine$double.xmin)
    if (!any(keep)) return(NULL)
    W <- sweep(e$vectors[, keep, drop = FALSE], 2L, sqrt(e$values[keep]), "/")
    Y <- .Call(C_matprod, Y, W, nthreads)
  }
  Y
}
