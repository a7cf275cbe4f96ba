# Class probabilities from decision values, as libsvm and kernlab::ksvm
# compute them: a sigmoid fitted to decision values the model did not see
# in training (cross-validated for rff_svm, leave-one-out for rff_ridge);
# one-vs-one pairs combined by pairwise coupling, one-vs-rest sigmoids
# normalised to sum to one.

# The training rows whose own decision values calibrate rff_svm() and
# rff_ridge() by default (without probability = TRUE): all of them up to
# calibration_rows, beyond that every s-th, so that data in chunks, whose
# decision values for every row would not fit in memory, gives the same
# rows (the rows 'first' to first + count - 1 of 'total').
calibration_rows <- 50000
calibration_subset <- function(total, first = 1, count = total) {
  stride <- max(1, ceiling(total / calibration_rows))
  g <- first - 1 + seq_len(count)   # the rows' positions among all the fit's rows
  which((g - 1) %% stride == 0)
}

# Platt's sigmoid P(y = +1 | f) = 1 / (1 + exp(A f + B)), fitted by the
# Newton method with backtracking of Lin, Lin and Weng (2007), with Platt's
# regularised targets, and case weights w in the likelihood.
platt_fit <- function(f, positive, w = NULL) {
  keep <- is.finite(f)
  if (!is.null(w)) keep <- keep & w > 0
  f <- f[keep]
  positive <- positive[keep]
  w <- if (is.null(w)) rep(1, length(f)) else w[keep]
  prior1 <- sum(w[positive])
  prior0 <- sum(w[!positive])
  target <- ifelse(positive, (prior1 + 1) / (prior1 + 2), 1 / (prior0 + 2))
  A <- 0
  B <- log((prior0 + 1) / (prior1 + 1))
  # -log-likelihood, stable for either sign of t: (target - [t < 0]) t + log(1 + e^-|t|)
  objective <- function(A, B) {
    t <- f * A + B
    sum(w * ((target - (t < 0)) * t + log1p(exp(-abs(t)))))
  }
  fval <- objective(A, B)
  for (it in seq_len(100L)) {
    p <- stats::plogis(-(f * A + B))
    q <- 1 - p
    d2 <- w * p * q
    h11 <- sum(f^2 * d2) + 1e-12
    h22 <- sum(d2) + 1e-12
    h21 <- sum(f * d2)
    d1 <- w * (target - p)
    g1 <- sum(f * d1)
    g2 <- sum(d1)
    if (abs(g1) < 1e-5 && abs(g2) < 1e-5) break
    det <- h11 * h22 - h21^2
    dA <- -(h22 * g1 - h21 * g2) / det
    dB <- -(-h21 * g1 + h11 * g2) / det
    gd <- g1 * dA + g2 * dB
    step <- 1
    while (step >= 1e-10) {
      newf <- objective(A + step * dA, B + step * dB)
      if (newf < fval + 1e-4 * step * gd) break
      step <- step / 2
    }
    if (step < 1e-10) break
    A <- A + step * dA
    B <- B + step * dB
    fval <- newf
  }
  c(A = A, B = B)
}

platt_apply <- function(ab, f) stats::plogis(-(f * ab[["A"]] + ab[["B"]]))

# A calibration from scores of training rows (held out, or the fit's own:
# 'source', which print() names): for two classes one sigmoid of
# s[, 1] - s[, 2] (or of the one decision value); for more, one sigmoid per
# one-vs-rest column, or per one-vs-one pair (pairs: a 2-row matrix of
# class indices, the first the positive one).
calibrate_scores <- function(scores, y, weights = NULL, pairs = NULL, source = NULL) {
  lev <- levels(y)
  k <- length(lev)
  yi <- as.integer(y)
  cal <- if (k == 2L) {
    f <- if (ncol(scores) == 1L) scores[, 1L] else scores[, 1L] - scores[, 2L]
    list(type = "binary", levels = lev, sigmoids = list(platt_fit(f, yi == 1L, weights)))
  } else if (is.null(pairs)) {
    sig <- lapply(seq_len(k), function(c) platt_fit(scores[, c], yi == c, weights))
    list(type = "ovr", levels = lev, sigmoids = sig)
  } else {
    sig <- lapply(seq_len(ncol(pairs)), function(p) {
      rows <- yi == pairs[1L, p] | yi == pairs[2L, p]
      platt_fit(scores[rows, p], yi[rows] == pairs[1L, p], weights[rows])
    })
    list(type = "ovo", levels = lev, sigmoids = sig, pairs = pairs)
  }
  cal$source <- source
  cal
}

# A multinomial calibration of k score columns (falkon's one-hot or
# logistic scores; one column: a binary model's log-odds of the second
# class, taken as the scores (0, f)): P(y = c | f) = softmax(a f + b)_c, a
# temperature a and a bias per class (b_1 = 0), by the weighted log-loss
# of held-out rows.  Against regularised targets, as Platt's sigmoid: a row
# counts (N + 1) / (N + 2) for its class and 1 / (N + 2) shared by the
# others (N the held-out weight), so that a held-out slice the scores
# separate does not send the temperature to infinity.  (Platt's per-class
# counts n_c in place of N capped DNA's confident rows near 0.99: test
# log-loss 0.146 against 0.142, bench/investigations/probabilities.md.)
# The loss is convex in (a, b) (z = a f + b is linear in them), and
# Newton's method with a backtracking line search from (1, 0) reaches its
# minimum in a few steps: a step's Hessian, (k x k), costs about what one
# softmax does.  It replaced optim(method = "BFGS"), which took 0.28 s on
# Letter's held-out slice (1400 rows, 26 classes: 11 % of the fit) against
# 0.06 s in 7 Newton steps, and stopped short of the minimum where the
# loss is flat (Shuttle: 0.024447 against Newton's 0.024221).  The Hessian
# is factored by the package's Cholesky, so the calibration, as the fit,
# does not depend on R's BLAS.
softmax_calibration <- function(scores, cls, w, levels) {
  f <- if (ncol(scores) == 1L) cbind(0, scores) else scores
  k <- ncol(f)
  keep <- stats::complete.cases(f) & (if (is.null(w)) TRUE else w > 0)
  f <- f[keep, , drop = FALSE]
  cls <- cls[keep]
  w <- if (is.null(w)) rep(1, nrow(f)) else w[keep]
  N <- sum(w)
  Y <- outer(cls, seq_len(k), "==") * 1
  hit <- (N + 1) / (N + 2)
  Tg <- Y * hit + (1 - Y) * (1 - hit) / (k - 1)
  w <- w / sum(w)
  prob <- function(th) {
    z <- th[1L] * f + rep(c(0, th[-1L]), each = nrow(f))
    e <- exp(z - row_max(z))
    e / rowSums(e)
  }
  loss <- function(P) -sum(w * Tg * log(pmax(P, 1e-300)))
  th <- c(1, rep(0, k - 1L))
  P <- prob(th)
  value <- loss(P)
  for (it in seq_len(100L)) {
    step <- softmax_newton_step(f, P, Tg, w)
    # the Newton decrement: the loss's fall the quadratic model predicts
    fall <- -sum(step$gradient * step$direction)
    if (!(fall > 1e-14)) break
    s <- 1
    repeat {
      Pn <- prob(th + s * step$direction)
      vn <- loss(Pn)
      if (vn <= value - 1e-4 * s * fall || s < 1e-10) break
      s <- s / 2
    }
    if (!(vn < value)) break
    th <- th + s * step$direction
    P <- Pn
    value <- vn
  }
  list(type = "softmax", levels = levels, temperature = th[1L], bias = c(0, th[-1L]),
       columns = ncol(scores), logloss = value)
}

# Newton's direction for softmax_calibration()'s loss at the probabilities
# P (rows x k) of the scores f against the targets Tg, row weights w
# summing to one: the gradient g in (a, b_2..b_k) and -H^-1 g, where H =
# sum_i w_i J_i' (diag(p_i) - p_i p_i') J_i with J_i = [f_i, e_2, .., e_k].
softmax_newton_step <- function(f, P, Tg, w) {
  k <- ncol(f)
  R <- (P - Tg) * w
  g <- unname(c(sum(R * f), colSums(R)[-1L]))
  WP <- P * w
  pf <- rowSums(P * f)
  h_aa <- sum(WP * f^2) - sum(w * pf^2)
  h_ab <- unname(colSums(WP * f) - colSums(WP * pf))[-1L]
  h_bb <- (diag(colSums(WP), k) - .Call(C_crossprod, P * sqrt(w), 1L))[-1L, -1L, drop = FALSE]
  H <- rbind(c(h_aa, h_ab), cbind(h_ab, h_bb))
  # a ridge of 1e-12 keeps the factor defined where a class's
  # probabilities vanish (its bias then barely moves the loss); where
  # rounding still leaves H not positive definite, steepest descent
  Rh <- tryCatch(.Call(C_cholesky, H, 1e-12, 1L), error = function(e) NULL)
  d <- if (is.null(Rh)) -g else -.Call(C_cholesky_solve, Rh, cbind(g))[, 1L]
  list(gradient = g, direction = d)
}

# The largest entry of each row of z: the same doubles as apply(z, 1, max),
# without an R call per row (a held-out slice of 2000 rows took 5 ms a call,
# and the calibration calls it at every step of its search).
row_max <- function(z) {
  if (nrow(z) == 0L) return(numeric(0))
  z[cbind(seq_len(nrow(z)), max.col(z, ties.method = "first"))]
}

# Probabilities, one column per class, rows summing to 1.
calibrated_probabilities <- function(cal, scores) {
  lev <- cal$levels
  k <- length(lev)
  # no rows (empty newdata, or none complete): vapply() and matrix() would
  # lose the column count, so the empty answer is built directly
  if (nrow(scores) == 0L) return(matrix(numeric(0), 0L, k, dimnames = list(NULL, lev)))
  prob <- switch(cal$type,
    softmax = {
      f <- if (ncol(scores) == 1L) cbind(0, scores) else scores
      z <- cal$temperature * f + rep(cal$bias, each = nrow(f))
      e <- exp(z - row_max(z))
      e / rowSums(e)
    },
    binary = {
      f <- if (ncol(scores) == 1L) scores[, 1L] else scores[, 1L] - scores[, 2L]
      p <- platt_apply(cal$sigmoids[[1L]], f)
      cbind(p, 1 - p)
    },
    ovr = {
      p <- vapply(seq_len(k), function(c) platt_apply(cal$sigmoids[[c]], scores[, c]),
                  numeric(nrow(scores)))
      p <- matrix(p, nrow(scores))
      p / rowSums(p)
    },
    ovo = {
      r <- vapply(seq_along(cal$sigmoids),
                  function(p) platt_apply(cal$sigmoids[[p]], scores[, p]),
                  numeric(nrow(scores)))
      pairwise_coupling(matrix(r, nrow(scores)), cal$pairs, k)
    })
  prob <- matrix(prob, nrow(scores), dimnames = list(rownames(scores), lev))
  prob
}

# Pairwise coupling, method 2 of Wu, Lin and Weng (2004) as in libsvm:
# the p minimising sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2 on the
# simplex, by its fixed-point iteration, all rows at once.  r[, p] is
# P(class pairs[1, p] | pair p), clipped away from 0 and 1 as libsvm does.
pairwise_coupling <- function(r, pairs, k) {
  n <- nrow(r)
  r <- pmin(pmax(r, 1e-7), 1 - 1e-7)
  R <- array(0, c(n, k, k))            # R[, i, j] = P(i | i or j)
  for (p in seq_len(ncol(pairs))) {
    i <- pairs[1L, p]
    j <- pairs[2L, p]
    R[, i, j] <- r[, p]
    R[, j, i] <- 1 - r[, p]
  }
  Q <- array(0, c(n, k, k))
  for (t in seq_len(k)) {
    for (j in seq_len(k)) {
      if (j == t) next
      Q[, t, t] <- Q[, t, t] + R[, j, t]^2
      Q[, t, j] <- -R[, j, t] * R[, t, j]
    }
  }
  p <- matrix(1 / k, n, k)
  for (iter in seq_len(max(100L, k))) {
    Qp <- vapply(seq_len(k), function(t) rowSums(Q[, t, ] * p), numeric(n))
    Qp <- matrix(Qp, n)
    pQp <- rowSums(p * Qp)
    if (max(abs(Qp - pQp)) < 0.005 / k) break
    for (t in seq_len(k)) {
      diff <- (-Qp[, t] + pQp) / Q[, t, t]
      p[, t] <- p[, t] + diff
      pQp <- (pQp + diff * (diff * Q[, t, t] + 2 * Qp[, t])) / (1 + diff)^2
      Qp <- (Qp + diff * Q[, t, ]) / (1 + diff)
      p <- p / (1 + diff)
    }
  }
  p
}
