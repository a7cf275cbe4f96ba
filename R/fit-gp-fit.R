# The steps of rff_gp.default() (R/fit-gp.R): the problem, its
# hyperparameters, and the one constructor of "rff_gp" fits.

# The problem rff_gp() optimises, on the standardised inputs xs and
# response ys: P (the rows kept, the kernel's parametrisation, the
# weights, the basis of the mean, the random draws), the resolved kernel
# and the starts of a spectral mixture, and theta's start and bounds.
gp_problem <- function(xs, ys, w, keep, kernel, D, method, sampling, mean, ard, signal, noise,
                       seed, nthreads) {
  d <- ncol(xs)
  sm <- identical(kernel$name, "spectral_mixture")
  starts <- NULL
  if (sm) {
    if (!sm_resolved(kernel)) {
      # with a basis, from what it leaves of the response (its least-squares
      # residual): the kernel then starts from the variation about the trend
      starts <- sm_starts(kernel, xs[keep, , drop = FALSE],
                          gp_basis_residual_ls(mean, xs[keep, , drop = FALSE], ys[keep]))
      kernel <- starts[[1L]]
    }
    if (ncol(kernel$means) != d) {
      stop_arg("kernel", "has means for ", ncol(kernel$means), " input(s) but x has ", d)
    }
    if (method == "rff" && D < kernel$q) {
      stop_arg("D", "must be at least the number of mixture components (", kernel$q, ")")
    }
  } else {
    kernel <- resolve_kernel(kernel, xs[keep, , drop = FALSE])
  }
  # a kernel given with one length scale per input is ARD whatever 'ard' says: its
  # scales were once folded silently into their geometric mean
  ard <- ard || (!sm && length(kernel$sigma) > 1L)
  P <- list(x = xs[keep, , drop = FALSE], y = ys[keep], n = sum(keep), d = d, method = method,
            kind = if (sm) "sm" else "standard", ard = ard && !sm, nthreads = nthreads,
            half_log_w = 0)
  basis <- gp_basis_spec(mean, xs[keep, , drop = FALSE])
  if (!is.null(basis)) {
    if (P$n <= basis$p) stop_arg("mean", "= \"", mean, "\" needs more rows than its ", basis$p,
                                 " coefficient(s)")
    P$H <- gp_basis(basis, P$x)
  }
  if (!is.null(w)) {
    # row i has noise variance s_n^2 / w_i: the exact GP adds it to the
    # diagonal; the features and response are scaled by sqrt(w_i) instead
    P$w <- w[keep]
    if (method == "rff") {
      P$sw <- sqrt(P$w)
      P$y <- P$sw * P$y
      P$half_log_w <- sum(log(P$w)) / 2
      if (!is.null(P$H)) P$H <- P$sw * P$H
    }
  }
  if (sm) {
    P$Q <- kernel$q
    theta <- gp_sm_theta(kernel, noise)
    lower <- c(rep(log(1e-6), P$Q), rep(-Inf, P$Q * d), rep(log(1e-4), P$Q * d), log(1e-3))
    upper <- c(rep(log(1e3), P$Q), rep(Inf, P$Q * d), rep(log(1e4), P$Q * d), log(10))
  } else {
    P$code <- kernel_code(kernel)
    unit <- kernel
    unit$sigma <- 1
    P$par <- kernel_parameters(unit)
    nl <- if (P$ard) d else 1L
    ell0 <- log(kernel$sigma)
    theta <- c(rep_len(ell0, nl), log(signal), log(noise))
    lower <- c(rep(log(1e-4), nl), log(1e-4), log(1e-3))
    upper <- c(rep(log(1e4), nl), log(1e3), log(10))
  }
  if (method == "rff") {
    draws <- with_seed(seed, gp_draws(kernel, D, d, sampling))
    P[names(draws)] <- draws
    # at least as many features as rows: the n x n form is the cheaper
    P$dual <- 2 * D >= P$n
  }
  list(P = P, kernel = kernel, starts = starts, theta = theta, lower = lower, upper = upper,
       basis = basis, sm = sm, noise = noise)
}

# A spectral mixture's parameters as theta (logs of the weights and scales).
gp_sm_theta <- function(k, noise) {
  c(log(pmax(k$weights, 1e-6)), k$means, log(k$scales), log(noise))
}

# The hyperparameters: the start, or its maximum of the marginal
# likelihood with optimize = TRUE; opt: optim()'s report (NULL without).
# On more than gp_pilot_rows rows (not a spectral mixture, whose starts are
# screened instead) the search runs first on an evenly spaced pilot of that
# many rows, and the search on all rows starts from the pilot's optimum: the
# pilot's evaluations cost a fraction of the full ones, and the full search
# then needs few (opt$pilot: the pilot's rows and evaluations).
gp_fit_hyper <- function(G, optimize, control) {
  P <- G$P
  theta <- G$theta
  if (!optimize) return(list(theta = theta, opt = NULL))
  if (length(G$starts) > 1L) {
    opt <- gp_multistart(lapply(G$starts, gp_sm_theta, noise = G$noise), P, G$lower, G$upper,
                         control)
    return(list(theta = opt$par, opt = opt))
  }
  if (!G$sm && !gp_scales_given(theta, P)) theta <- gp_start(theta, P, P$d)
  pilot <- NULL
  if (!G$sm && P$n > gp_pilot_rows) {
    pilot <- gp_search(theta, gp_pilot_problem(P, gp_pilot_rows), G$lower, G$upper, control)
    theta <- pilot$par
  }
  opt <- if (is.null(pilot)) gp_search(theta, P, G$lower, G$upper, control)
         else gp_optimise(theta, P, G$lower, G$upper, control)
  if (!is.null(pilot)) opt$pilot <- c(rows = gp_pilot_rows, evaluations = pilot$counts[[1L]])
  list(theta = opt$par, opt = opt)
}

# L-BFGS-B from theta; with per-input scales (ARD), one shared length scale
# first: from the start, the first steps along d free scales often jump to a
# poor local optimum.
gp_search <- function(theta, P, lower, upper, control) {
  d <- P$d
  first <- NULL
  if (P$ard && d > 1L && !gp_scales_given(theta, P)) {
    shared <- P
    shared$ard <- FALSE
    keep <- c(1L, d + 1L, d + 2L)
    first <- gp_optimise(theta[keep], shared, lower[keep], upper[keep], control)
    theta <- c(rep(first$par[1L], d), first$par[2:3])
  }
  opt <- gp_optimise(theta, P, lower, upper, control)
  if (!is.null(first)) opt$counts <- opt$counts + first$counts
  opt
}

# Whether theta starts from length scales the kernel gave per input (unequal): the
# search then starts there, not from a shared scale (gp_start(), gp_search()).
gp_scales_given <- function(theta, P) {
  P$kind == "standard" && P$ard && P$d > 1L && any(theta[seq_len(P$d)] != theta[1L])
}

# The problem P on 'rows' evenly spaced rows (no random numbers drawn): the
# same frequencies, weights and basis, restricted to those rows.
gp_pilot_rows <- 4000L
gp_pilot_problem <- function(P, rows) {
  if (!is.null(P$rows)) {
    # on chunks: the pilot's rows, fetched beforehand (gp_rows_chunks())
    Q <- P
    Q[c("rows", "pilot")] <- NULL
    Q$x <- P$pilot$x
    Q$y <- P$pilot$y
    Q$n <- nrow(Q$x)
    Q$dual <- 2 * ncol(P$eps) >= Q$n
    return(Q)
  }
  i <- unique(round(seq(1, P$n, length.out = rows)))
  Q <- P
  Q$x <- P$x[i, , drop = FALSE]
  Q$y <- P$y[i]
  Q$n <- length(i)
  if (!is.null(P$H)) Q$H <- P$H[i, , drop = FALSE]
  if (!is.null(P$w)) {
    Q$w <- P$w[i]
    if (!is.null(P$sw)) {
      Q$sw <- P$sw[i]
      Q$half_log_w <- sum(log(Q$w)) / 2
    }
  }
  if (!is.null(P$dual)) Q$dual <- 2 * ncol(P$eps) >= Q$n
  Q
}

# The one constructor of "rff_gp" fits: the posterior at theta, the
# learned kernel and what predictions need.
new_rff_gp <- function(G, theta, opt, D, optimize, laplace, y_center, y_scale, scaling, n, w) {
  P <- G$P
  basis <- G$basis
  sm <- G$sm
  method <- P$method
  post <- gp_posterior(theta, P)
  if (is.null(post)) {
    stop("rff_gp: the covariance is not numerically positive definite at these ",
         "hyperparameters; give a larger 'noise'", call. = FALSE)
  }
  h <- gp_unpack(theta, P)
  names(theta) <- gp_theta_names(P)
  fit <- list(method = method, kind = P$kind, ard = P$ard, D = if (method == "rff") D,
              theta = theta, P = P[c("kind", "ard", "d", "method", "code", "par", "Q",
                                     "eps", "comp", "Dq")],
              noise = h$noise, alpha = post$alpha, rinv = post$rinv,
              y_center = y_center, y_scale = y_scale, scaling = scaling, n = n,
              logLik = post$value - (P$n - if (is.null(basis)) 0 else basis$p) * log(y_scale),
              optimized = optimize,
              weights = w,
              optim = if (!is.null(opt)) list(convergence = opt$convergence,
                                              counts = opt$counts, message = opt$message,
                                              value = opt$value, screen = opt$screen,
                                              pilot = opt$pilot))
  if (!is.null(basis)) fit$basis <- gp_basis_fit(basis, post, P, y_scale)
  if (laplace) fit$laplace <- gp_laplace(theta, P, G$lower, G$upper)
  fit$kernel <- gp_learned_kernel(G$kernel, h)
  fit$hyper <- gp_hyper_report(h, P, y_scale)
  fit$precision <- if (isTRUE(P$single)) "single" else "double"
  fit$row_means <- attr(post$rss, "means")     # Z alpha of the rows, when a pass made them
  if (method == "rff") {
    fit$omega <- post$features$omega
    fit$amp <- post$features$amp
    # the dual posterior: rinv is the inverse factor of C = Z Z' + s_n^2 I,
    # and predictions need the training rows' features
    if (P$dual) fit$dual <- list(x = P$x, y = P$y, sw = P$sw, H = P$H)
  } else {
    fit$x_train <- P$x
    fit$prior_var <- if (sm) sum(h$weights) else h$signal^2
  }
  class(fit) <- bochner_fit_class("rff_gp")
  fit
}

# The hyperparameters in the response's units.
gp_hyper_report <- function(h, P, y_scale) {
  if (P$kind == "sm") {
    return(list(weights = h$weights * y_scale^2, means = h$means, scales = h$scales,
                noise = h$noise * y_scale))
  }
  ell <- if (P$ard) h$lengthscale else h$lengthscale[1L]
  list(lengthscale = ell, signal = h$signal * y_scale, noise = h$noise * y_scale)
}
