# FALKON's solver: the preconditioner and conjugate gradient on the
# preconditioned system (the logistic loss's Newton steps, built on them,
# are in R/falkon-logistic.R).  These
# are internal building blocks, also for the chunked fit (falkon on
# data_chunks): everything that touches the n rows goes through one
# operator, apply_knm(U, V, w) = K_nm' diag(w) (K_nm U + V) (an m x k
# matrix), which falkon_knm_apply() computes in one pass over rows held in
# memory; a chunked pass runs the same C routine on each chunk and folds
# their states in chunk order (R/falkon-chunks.R), the in-memory result bit
# for bit.  Everything here is O(m^2 k) in R per
# iteration; the n m work is in C (src/falkon.c).

# Relative jitter of the centres' Gram matrix: T = chol(K_mm + eps m d I),
# d the mean of K_mm's diagonal (1 for the shift-invariant kernels), as in
# the FALKON reference code (eps m I, eps about 1e-13 in double precision).
# A float fit whose passes multiply in float (more than 8 right-hand sides,
# src/falkon.h) with a candidate lambda below 1e-7 takes float's machine
# epsilon, 2^-23 (falkon_jitter()): T^-1 multiplies the rounding of K_nm
# and of the passes' coefficients by up to 1 / sqrt(eps m), and at 1e-13
# that noise, in K_mm's smallest directions, is what a penalty of 1e-8 no
# longer holds down (Letter lost 0.43 points; at 2^-23 it gained 0.02:
# bench/investigations/falkon-precision.md).  At larger lambdas the penalty
# does, and with double products on float values (at most 8 columns) the
# operator is the same in every pass: there the jitter of double keeps the
# fits within 0.1 point of double's, where float's cost two-class
# synth_class_1e5 0.36 points.  FALKON's float default is 1e-5, its
# benchmark scripts use 1e-6 and 1e-7.
falkon_eps <- 1e-13
falkon_eps_single <- 2^-23

# Single-precision passes with more than this many right-hand sides multiply in
# float: src/falkon.h's bochner_falkon_float_products(), which a test holds this to.
falkon_float_products_above <- 8L

# The jitter of a fit on float (single) or double K_nm with 'columns' targets solving
# for the candidate penalties 'lambdas' ("auto": the control's) in one path.
falkon_jitter <- function(single, lambdas, control, columns) {
  if (identical(lambdas, "auto")) lambdas <- control$lambdas
  if (isTRUE(single) && columns * length(lambdas) > falkon_float_products_above &&
      min(lambdas) < falkon_single_min_lambda) falkon_eps_single
  else falkon_eps
}

# The centres' factor and what every pass needs: list(centres (m x d),
# code, par (the resolved kernel's C parameters), kernel, m, F).  F is the
# packed preconditioner (src/falkon_factor.c): one m x m array, allocated
# and owned by C, that holds T (upper, T'T = K_mm + shift I, K_mm computed
# straight into it, the shift raised until the factorisation succeeds) and
# the A of the last falkon_precond() in its lower half.  'kernel' must be
# resolved (no bandwidth rule left).  eps: the jitter (falkon_jitter()).
falkon_prepare <- function(kernel, centres, nthreads, eps = falkon_eps) {
  code <- kernel_code(kernel)
  par <- kernel_parameters(kernel)
  F <- .Call(C_falkon_factor, centres, code, par, eps, nthreads)
  if (isFALSE(F)) {
    stop_arg("kernel", "gives non-finite values on the centres: scale the data or change ",
             "the kernel's parameters")
  }
  if (is.null(F)) stop_arg("m", "give a Gram matrix that is not positive semi-definite")
  list(centres = centres, code = code, par = par, kernel = kernel, m = nrow(centres), F = F)
}

# The preconditioner's second factor for one lambda and curvature s (the
# mean of the loss's second derivative, 1 for the squared loss): the upper
# A with A'A = s T T' / m + lambda I, formed in place in the factor F (by
# default the fit's own, replacing the A it held).  Returns F.
falkon_precond <- function(prep, lambda, s = 1, nthreads, F = prep$F) {
  ok <- .Call(C_falkon_factor_precond, F, lambda, s, nthreads)
  if (!ok) stop_arg("lambda", "is too small for the preconditioner (", format(lambda), ")")
  F
}

# One factor per lambda, each holding its A: the fit's own for the first,
# copies (m x m each) for the others, all from G = T T' / m formed once.
# For a few candidates at once (falkon_sequential() says when they fit in
# memory).
falkon_precond_all <- function(prep, lambdas, nthreads) {
  if (length(lambdas) > 1L) falkon_keep_g(prep, nthreads)
  lapply(seq_along(lambdas), function(g) {
    F <- if (g == 1L) prep$F else .Call(C_falkon_factor_copy, prep$F)
    falkon_precond(prep, lambdas[g], 1, nthreads, F)
  })
}

# Keep G = T T' / m beside the factor (one more m x m array), so that each
# later preconditioner copies it instead of forming it (m^3 / 3 flops): for
# fits that refactor often and are not short of memory.  Call it before the
# first falkon_precond().
falkon_keep_g <- function(prep, nthreads) {
  invisible(.Call(C_falkon_factor_keep_g, prep$F, nthreads))
}

# T U (trans = FALSE) or T' U, from the factor's upper half in place.
falkon_tprod <- function(prep, U, trans, nthreads) {
  .Call(C_falkon_factor_tprod, prep$F, U, trans, nthreads)
}

# K_nm' diag(w) (K_nm U + V) over the rows of x (in memory), plus init;
# with keep_ku = TRUE (and U given), K_nm U (n x k) as attribute "ku".
# K: NULL, or the cached k(x, centres) (n x m), read instead of evaluated
# (in float with single = TRUE, the kernel blocks and products then float).
falkon_knm_apply <- function(prep, x, U = NULL, V = NULL, w = NULL, init = NULL,
                             nthreads, block_rows = 0, keep_ku = FALSE, K = NULL,
                             single = FALSE) {
  out <- .Call(C_falkon_knm_apply, x, prep$centres, prep$code, prep$par, U, V, w, init,
               as.double(block_rows), keep_ku, nthreads, K, single)
  if (is.list(out)) out <- structure(out[[1L]], ku = out[[2L]])
  out
}

# K_nm alpha for the rows of x.
falkon_kernel_predict <- function(prep, x, alpha, nthreads, block_rows = 0) {
  .Call(C_falkon_predict, x, prep$centres, prep$code, prep$par, alpha, as.double(block_rows),
        nthreads)
}

# T^-1 B or A^-1 B (trans = FALSE), T'^-1 B or A'^-1 B (trans = TRUE), from
# the factor F in place (which: 0 for T, 1 for A).
factor_solve <- function(F, B, which, trans, nthreads) {
  .Call(C_falkon_factor_solve, F, B, which, trans, nthreads)
}

# x with column j multiplied by a[j]: sweep(x, 2L, a, "*"), the same doubles
# without its checks (a CG iteration makes several, on small matrices).
col_scale <- function(x, a) x * rep(a, each = nrow(x))

# Conjugate gradient for (K_nm' W K_nm / n + lambda_g T'T) alpha = rhs, for
# several lambdas at once: 'factors' (each holding the A of its lambda,
# falkon_precond_all()) and 'lambdas' give L groups, and the k
# columns of rhs are solved for each, so the solution has L k columns (group
# g is columns (g - 1) k + 1:k).  apply_knm(U) returns K_nm' W K_nm U for
# all columns of U in one pass.  With alpha = T^-1 A^-1 beta, CG runs on
#   BHB(u) = A^-T (T^-T K_nm' W K_nm T^-1 A^-1 u / n + lambda A^-1 u)
# with right side A^-T T^-T rhs (Rudi et al. 2017, Algorithm 1), each
# column its own CG sharing the passes.  After iteration t, callback(alpha,
# t) may return TRUE to stop, or the indices of groups to retire: their
# columns keep their alpha and leave the passes (which then carry fewer
# right-hand sides), and the path stops when no group is left.  When
# apply_knm's results carry K_nm U as attribute "ku", K_nm alpha is
# accumulated too (callback(alpha, t, k_alpha) sees it) and returned as
# k_alpha: a Newton step needs no pass to evaluate its direction, and a
# squared-loss fit none for its fitted values.  A warm start needs
# k_alpha0 = K_nm alpha0 for it (the resid0 pass gives it).  Stops when
# every column's residual has fallen by 'tol' (relative) or after 'iter'
# iterations.  'breakdown': whether a column stopped at p'BHBp <= 0.
# resid0 (with alpha0): rhs - K_nm' W K_nm alpha0 / n (m x k), from one
# pass the caller combined with its right-hand side's (V = -Y, U = alpha0);
# rhs may then be NULL, and 'tol' is relative to the first residual.
falkon_cg <- function(apply_knm, rhs, prep, factors, lambdas, n, iter, tol = 1e-14,
                      callback = NULL, nthreads, alpha0 = NULL, resid0 = NULL,
                      k_alpha0 = NULL) {
  k <- if (is.null(rhs)) ncol(resid0) else ncol(rhs)
  L <- length(factors)
  group <- rep(seq_len(L), each = k)
  # A^-1 U or A^-T U for U holding the columns of groups gs, k each
  A_solve <- function(U, trans, gs = seq_len(L)) {
    for (i in seq_along(gs)) {
      cols <- (i - 1L) * k + seq_len(k)
      U[, cols] <- factor_solve(factors[[gs[i]]], U[, cols, drop = FALSE], 1L, trans, nthreads)
    }
    U
  }
  T_solve <- function(U, trans) factor_solve(factors[[1L]], U, 0L, trans, nthreads)
  lam <- rep(lambdas, each = k)
  # BHB u for the columns of groups gs, and z = T^-1 A^-1 u (the step in
  # alpha of a step u in beta)
  bhb <- function(u, gs) {
    v <- A_solve(u, FALSE, gs)
    z <- T_solve(v, FALSE)
    q <- apply_knm(z)
    list(value = A_solve(T_solve(q / n, TRUE) + col_scale(v, rep(lambdas[gs], each = k)),
                         TRUE, gs),
         z = z, ku = attr(q, "ku"))
  }
  each_group <- rep(seq_len(k), L)
  # NULL until the first pass shows whether the passes return K_nm U
  k_alpha <- NULL
  can_track <- is.null(alpha0) || !is.null(k_alpha0)
  b <- if (is.null(resid0)) A_solve(T_solve(rhs[, each_group, drop = FALSE], TRUE), TRUE)
  r <- b
  alpha <- alpha0
  if (is.null(alpha0)) {
    alpha <- matrix(0, nrow(b), ncol(b))
  } else {
    # warm start at beta0 = A T alpha0: r = b - BHB beta0, where A^-1 beta0
    # = T alpha0 and T^-1 A^-1 beta0 = alpha0 (no products with A, no solves);
    # the rows' part rhs - K' W K alpha0 / n from one pass, or resid0
    v0 <- .Call(C_falkon_factor_tprod, factors[[1L]], alpha0, FALSE, nthreads)
    r <- if (is.null(resid0)) {
      b - A_solve(T_solve(apply_knm(alpha0) / n, TRUE) + col_scale(v0, lam), TRUE)
    } else {
      A_solve(T_solve(resid0[, each_group, drop = FALSE], TRUE) - col_scale(v0, lam), TRUE)
    }
    if (is.null(b)) b <- r
  }
  p <- r
  rs <- colSums(r^2)
  rs0 <- pmax(colSums(b^2), .Machine$double.xmin)
  running <- rep(TRUE, L)
  done <- 0L
  breakdown <- FALSE
  for (t in seq_len(iter)) {
    active <- rs > tol^2 * rs0 & running[group]
    if (!any(active)) break
    gs <- which(running)
    cols <- running[group]
    h <- bhb(p[, cols, drop = FALSE], gs)
    pc <- p[, cols, drop = FALSE]
    ac <- active[cols]
    pAp <- colSums(pc * h$value)
    # pAp <= 0 cannot happen in exact arithmetic: rounding has made the
    # operator indefinite for that column, which then stops (breakdown)
    if (any(ac & !(pAp > 0))) breakdown <- TRUE
    a <- ifelse(ac & pAp > 0, rs[cols] / pAp, 0)
    alpha[, cols] <- alpha[, cols, drop = FALSE] + col_scale(h$z, a)
    if (can_track && !is.null(h$ku)) {
      if (is.null(k_alpha)) {
        k_alpha <- if (is.null(k_alpha0)) matrix(0, nrow(h$ku), k * L)
                   else k_alpha0[, each_group, drop = FALSE]
      }
      k_alpha[, cols] <- k_alpha[, cols, drop = FALSE] + col_scale(h$ku, a)
    }
    r[, cols] <- r[, cols, drop = FALSE] - col_scale(h$value, a)
    rs_new <- colSums(r[, cols, drop = FALSE]^2)
    p[, cols] <- r[, cols, drop = FALSE] + col_scale(pc, ifelse(ac, rs_new / rs[cols], 0))
    rs[cols] <- rs_new
    done <- t
    if (is.null(callback)) next
    out <- callback(alpha, t, k_alpha)
    if (isTRUE(out)) break
    if (is.numeric(out)) running[out] <- FALSE
    if (!any(running)) break
  }
  list(alpha = alpha, iter = done, residual = sqrt(rs / rs0),
       k_alpha = k_alpha, breakdown = breakdown)
}
