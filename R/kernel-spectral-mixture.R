#' Spectral mixture kernel
#'
#' The kernel of Wilson and Adams (2013) whose spectral density is a mixture
#' of \eqn{Q} Gaussians (and their mirror images, so that the kernel is
#' real):
#' \deqn{k(\tau) = \sum_{q=1}^{Q} w_q \cos(2\pi\, \tau \cdot \mu_q)
#'   \exp\Big(-\sum_p \frac{\tau_p^2}{2 \ell_{qp}^2}\Big),}{k(tau) = sum_q
#'   w_q cos(2 pi tau.mu_q) exp(-sum_p tau_p^2 / (2 l_qp^2)),}
#' with \eqn{\tau = x - y}, weights \eqn{w_q \ge 0}, mean frequencies
#' \eqn{\mu_q} (in cycles per unit of the inputs: component \eqn{q} has
#' period \eqn{1/\mu_q}) and length scales \eqn{\ell_{qp}}.  In Wilson and
#' Adams' notation the spectral variances are
#' \eqn{v_{qp} = 1/(2\pi \ell_{qp})^2}.  By Bochner's theorem the
#' frequencies of the kernel are \eqn{\omega = 2\pi s}, with \eqn{s} drawn
#' from component \eqn{q} (chosen with probability \eqn{w_q / \sum w}),
#' \eqn{N(\pm\mu_q, \mathrm{diag}(v_q))} with a random sign; that is what
#' [spectral_sample()] and [random_features()] draw.  Unlike the other
#' kernels, \eqn{k(0) = \sum_q w_q}, the prior variance; feature maps are
#' scaled by it.
#'
#' With `weights`, `means` and `scales` the kernel is fixed.  Without them
#' (only `q`), it is resolved on the data where it is first used: by
#' [rff_gp()] from the empirical spectrum of the response (see there) and
#' then learned by marginal likelihood; elsewhere ([kernel_matrix()],
#' [random_features()], [kernel_kmeans()], ...), where there is no
#' response, by the simpler rule for several inputs: all means but the
#' first spread up to \eqn{1/(2\pi\ell)}, weights \eqn{1/Q}, length scales
#' on a geometric grid from \eqn{1/4} to twice the median distance
#' between rows (the median heuristic).
#'
#' The kernel works with [kernel_matrix()] (exactly, in C),
#' [spectral_sample()], [random_features()] (`sampling = "iid"`; its
#' density is neither isotropic nor a product of one-dimensional laws, so
#' `"orthogonal"`, `"structured"` and `"qmc"` are refused) and everything
#' built on those.
#'
#' @param q Number of components \eqn{Q}, a positive whole number (ignored
#'   when `weights` is given).
#' @param weights `NULL`, or the \eqn{Q} non-negative weights \eqn{w_q}
#'   (not all zero).
#' @param means `NULL`, or the mean frequencies: a \eqn{Q \times d} matrix
#'   (a vector of \eqn{Q} values for one input).
#' @param scales `NULL`, or the positive length scales \eqn{\ell_{qp}}, of
#'   the same shape as `means` (or one per component, used for every input).
#' @return An object of class `c("spectral_mixture_kernel",
#'   "bochner_kernel")`.
#' @references Wilson, A. G. and Adams, R. P. (2013). Gaussian process
#'   kernels for pattern discovery and extrapolation. \emph{Proceedings of
#'   the 30th International Conference on Machine Learning}.
#' @seealso [rff_gp()], which learns the parameters;
#'   [shift_invariant_kernels].
#' @examples
#' k <- spectral_mixture_kernel(weights = c(0.7, 0.3), means = c(0, 1),
#'                              scales = c(5, 10))
#' k
#' tau <- seq(0, 3, by = 0.5)
#' kernel_matrix(k, tau, 0)
#' set.seed(1)
#' w <- spectral_sample(k, 20000, 1)
#' mean(cos(w * 1.5)); kernel_matrix(k, 1.5, 0)
#' @export
spectral_mixture_kernel <- function(q = 4, weights = NULL, means = NULL, scales = NULL) {
  given <- c(!is.null(weights), !is.null(means), !is.null(scales))
  if (any(given) && !all(given)) {
    stop_arg(c("weights", "means", "scales")[!given][1L], "must be given with the others: ",
             "give all of 'weights', 'means' and 'scales', or none (learned from the data)")
  }
  if (!any(given)) {
    q <- check_count(q, "q")
    return(new_kernel("spectral_mixture", q = q, weights = NULL, means = NULL,
                      scales = NULL))
  }
  if (!is.numeric(weights) || length(weights) < 1L || any(!is.finite(weights))) {
    stop_arg("weights", "must be a vector of finite numbers")
  }
  if (any(weights < 0) || !any(weights > 0)) {
    stop_arg("weights", "must be non-negative and not all zero")
  }
  Q <- length(weights)
  means <- sm_matrix(means, Q, NULL, "means")
  scales <- sm_matrix(scales, Q, ncol(means), "scales")
  if (any(scales <= 0)) stop_arg("scales", "must be positive")
  new_kernel("spectral_mixture", q = Q, weights = as.double(weights), means = means,
             scales = scales)
}

# means or scales as a Q x d matrix; scales may give one value per component.
sm_matrix <- function(v, Q, d, arg) {
  if (!is.numeric(v) || any(!is.finite(v))) stop_arg(arg, "must be finite numbers")
  if (is.null(dim(v))) {
    if (length(v) != Q) stop_arg(arg, "must have one row per weight (", Q, "), got ", length(v))
    v <- matrix(as.double(v), Q, if (is.null(d)) 1L else d)
  }
  v <- matrix(as.double(v), nrow(v), ncol(v))
  if (nrow(v) != Q) stop_arg(arg, "must have one row per weight (", Q, "), got ", nrow(v))
  if (!is.null(d) && ncol(v) != d) stop_arg(arg, "must have ", d, " column(s), as 'means' has")
  v
}

sm_resolved <- function(kernel) !is.null(kernel$weights)

sm_parameters <- function(kernel) {
  if (!sm_resolved(kernel)) {
    stop_arg("kernel", "is a spectral mixture whose parameters are not set yet: give ",
             "'weights', 'means' and 'scales', or fit it to data (rff_gp() learns them)")
  }
  c(kernel$q, kernel$weights, kernel$means, kernel$scales)
}

sm_parameter_text <- function(kernel) {
  if (!sm_resolved(kernel)) {
    return(sprintf("Q = %d components (resolved on the data)", kernel$q))
  }
  f <- function(v) paste(format(signif(v, 4)), collapse = ", ")
  paste0("Q = ", kernel$q, ", weights = (", f(kernel$weights), "), means = (",
         f(kernel$means), "), scales = (", f(kernel$scales), ")")
}

# The starting values of a spectral mixture on data x (already scaled as the
# fit scales them) and, where given, the response y.  One input and a
# response: the empirical spectrum of y after removing its least-squares
# line (a periodogram on a grid from 1.5 cycles over the range up to the
# Nyquist frequency of the median spacing): component 1 at frequency 0 for
# the trend (length scale the range, weight the variance of the line), the
# others at the highest peaks (length scales half the range, weights the
# residual variance shared in proportion to the peaks' power).  Otherwise
# the rule in ?spectral_mixture_kernel.  Variants (several starting points,
# for rff_gp() to keep the best marginal likelihood): split = TRUE gives a
# second component at frequency 0 with a tenth of the range as length scale
# (medium-term changes of the trend) in place of the weakest peak; stretch
# multiplies every length scale.
sm_initialise <- function(kernel, x, y = NULL, split = FALSE, stretch = 1) {
  Q <- kernel$q
  d <- ncol(x)
  v <- if (is.null(y)) 1 else max(stats::var(y), .Machine$double.eps)
  if (d == 1L && !is.null(y) && Q > 1L && length(unique(x[, 1L])) > 3L) {
    t <- x[, 1L]
    span <- diff(range(t))
    slope <- stats::cov(t, y) / stats::var(t)
    r <- y - mean(y) - slope * (t - mean(t))
    keep <- unique(round(seq(1, length(t), length.out = min(length(t), 2000L))))
    tt <- t[keep]
    rr <- r[keep]
    gap <- stats::median(diff(sort(unique(tt))))
    freq <- seq(1.5 / span, 1 / (2 * gap), length.out = 1000L)
    arg <- 2 * pi * outer(tt, freq)
    power <- colSums(rr * cos(arg))^2 + colSums(rr * sin(arg))^2
    peaks <- which(diff(sign(diff(power))) < 0) + 1L
    peaks <- utils::head(peaks[order(power[peaks], decreasing = TRUE)], Q - 1L)
    if (length(peaks) < Q - 1L) {      # too few peaks: spread the rest over the grid
      extra <- round(seq(1, 1000, length.out = Q + 1L))[-1L]
      peaks <- c(peaks, setdiff(extra, peaks))[seq_len(Q - 1L)]
    }
    vr <- stats::var(r)
    w <- c(max(v - vr, 0.05 * v), vr * power[peaks] / sum(power[peaks]))
    means <- c(0, freq[peaks])
    scales <- c(span, rep(span / 2, Q - 1L))
    if (split && Q > 2L) {
      w[Q] <- w[Q] + 0.1 * w[1L]
      w[1L] <- 0.9 * w[1L]
      means[Q] <- 0
      scales[Q] <- span / 10
    }
    means <- matrix(means, Q, 1L)
    scales <- matrix(scales * stretch, Q, 1L)
  } else {
    base <- median_heuristic(x, "gaussian")
    ell <- base * exp(seq(log(0.25), log(2), length.out = Q))
    scales <- matrix(ell, Q, d)
    means <- matrix((seq_len(Q) - 1) / (2 * pi * Q * ell), Q, d)
    w <- rep(v / Q, Q)
  }
  kernel$weights <- w
  kernel$means <- means
  kernel$scales <- scales
  kernel$resolved_on_data <- TRUE
  kernel
}

# The starting kernels of a spectral mixture on one input with a response:
# the periodogram start and its variants (see sm_initialise); one start
# otherwise.
sm_starts <- function(kernel, x, y) {
  if (ncol(x) != 1L || kernel$q < 3L) return(list(sm_initialise(kernel, x, y)))
  grid <- expand.grid(split = c(FALSE, TRUE), stretch = c(1, 3, 0.3))
  lapply(seq_len(nrow(grid)), function(i) {
    sm_initialise(kernel, x, y, split = grid$split[i], stretch = grid$stretch[i])
  })
}

# E||w||^2 of the spectral mixture: sum_q (w_q / sum w) (|2 pi mu_q|^2 + sum_p 1/l_qp^2)
sm_moment <- function(kernel, d) {
  sm_parameters(kernel)
  p <- kernel$weights / sum(kernel$weights)
  sum(p * (rowSums((2 * pi * kernel$means)^2) + rowSums(1 / kernel$scales^2)))
}

# k(0) of a kernel: the prior variance (1 for the others).
kernel_variance <- function(kernel) {
  if (identical(kernel$name, "spectral_mixture") && sm_resolved(kernel)) sum(kernel$weights)
  else 1
}
