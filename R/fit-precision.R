#' Single precision in the feature solvers
#'
#' [rff_gp()] (`control = list(precision = )`) and [rff_ridge()]
#' (`precision =`) take the same switch as [falkon_control()]:
#' `"double"`, `"single"` or `"auto"`.  Their cost on many rows is the
#' \eqn{m \times m} matrix \eqn{Z^T Z} of the \eqn{n \times m} random
#' features, \eqn{n m^2 / 2} multiply-adds.  With `"single"` each block of
#' features is rounded to float and \eqn{Z^T Z} is formed by the package's
#' single-precision product (float operands, float sums within blocks of
#' 256 rows, summed in double across them: about twice the multiply-adds per
#' instruction of the double product); \eqn{Z^T y} is the same rounded
#' features times \eqn{y} in double.  The Cholesky factorisation, the
#' solves, the marginal likelihood (or the choice of \eqn{\lambda}) and
#' everything returned stay double.  The gradient of [rff_gp()]'s marginal
#' likelihood, the \eqn{n \times n} (dual) forms (\eqn{n} at most \eqn{m})
#' and the leave-one-out pass of [rff_ridge()] stay double.
#'
#' **The error bound.**  Rounding an entry of \eqn{Z} to float changes it by
#' at most \eqn{2^{-24}} relative; a product of two floats is exact in
#' double, so the rounding moves an entry of \eqn{Z^T Z} by at most about
#' \eqn{2^{-23} (|Z|^T |Z|)_{jk}}.  The float sums within each block of 256
#' rows add at most \eqn{1.6 \times 10^{-5} (|Z|^T |Z|)_{jk}} (\eqn{\gamma_{256}},
#' src/sgemm.c; the rounding errors being random, about
#' \eqn{10^{-6}} on average), and the sums across blocks are double, so the
#' bound does not grow with \eqn{n}.  (For [rff_ridge()] \eqn{Z} is the
#' centred features.)  The fit is then the double fit of slightly perturbed
#' features: the predictions move by about that perturbation times the
#' condition of \eqn{Z^T Z + \lambda I}, small where the penalty (the
#' noise variance \eqn{s_n^2} of the GP, \eqn{n\lambda} of ridge) is not
#' tiny next to the errors of \eqn{Z^T Z}.
#'
#' **The marginal likelihood.**  Its data term \eqn{y^T y - \alpha^T Z^T y}
#' cancels: the float rounding of \eqn{Z^T y} (about \eqn{10^{-7}} of
#' \eqn{y^T y}) reached \eqn{\log p(y)} divided by \eqn{2 s_n^2}, 7.3
#' nats at the bench's \eqn{n = 10^6}.  In single precision the term is
#' \eqn{|y - Z\alpha|^2 + s_n^2 |\alpha|^2} instead, from one more pass over
#' the rows in double (in memory or over the chunks; \eqn{O(nm)}), where an
#' error in \eqn{\alpha} enters to second order; what remains is the
#' log-determinant's error, \eqn{\mathrm{tr}(A^{-1} E) / 2}.  (With a
#' `mean` of basis functions the restricted likelihood keeps the cancelling
#' form.)  The gradient of the search uses the same residual.
#'
#' **The path of [rff_ridge()].**  With `lambda = "auto"` the double path
#' goes down to \eqn{10^6} machine epsilons of the largest eigenvalue; in
#' single precision it stops at \eqn{10^3 \cdot 2^{-23}} of it (of the
#' trace for the default grid), where a float \eqn{Z^T Z + \lambda I} is
#' still positive definite: below that the single system failed its
#' Cholesky factorisation in the tests.  When the double path's choice lies
#' below that floor (as the generalised cross-validation of random features
#' often chooses), the single fit chooses another \eqn{\lambda}.
#'
#' **`"auto"`.**  `"single"` where both hold: the product is large,
#' \eqn{n m^2 / 2 \ge 2^{36}} multiply-adds (about 3 s of the double
#' product on one core: below it the saving is not worth a difference), and
#' the penalty is large next to the typical error of \eqn{Z^T Z},
#' \eqn{q = 2^{-24} \sqrt{n / m}\, s^2 / p \le 2^{-12}}, where \eqn{s^2}
#' is the kernel's variance (\eqn{s_f^2}, or a spectral mixture's total
#' weight; 1 for ridge) and \eqn{p} the penalty (\eqn{s_n^2}, or
#' \eqn{n} times the smallest \eqn{\lambda}).  [rff_ridge()] with
#' `lambda = "auto"` stays double: its path reaches \eqn{10^{-10}} of the trace of \eqn{Z^T Z}, below the
#' float product's resolution.  [rff_gp()] decides from the starting values
#' for its search, and again at the optimum for the returned fit.
#'
#' **The evidence** (`bench/investigations/feature-precision.md`, from
#' `feature-precision.R`; 2 idle cores of an AMD EPYC, Zen 5).  [rff_gp()] at
#' \eqn{n = 10^6}, \eqn{d = 10}, \eqn{D = 1024}, fixed hyperparameters
#' (\eqn{q = 1.3 \times 10^{-4}}): single took 13.9 s on two threads against
#' double's 23.5 s (23.6 s against 42.6 s on one), its predictive means within
#' \eqn{4.2 \times 10^{-5}} and variances within \eqn{1.9 \times 10^{-5}}
#' (relative) of double's on 1000 test rows, the log likelihood within 0.025
#' nats.  [rff_ridge()] at `lambda = 1e-6` on the same data: 0.70 of the
#' time, predictions within \eqn{1.4 \times 10^{-6}}; at `lambda = "auto"`
#' the double path chose \eqn{7 \times 10^{-11}}, below the float floor,
#' and the single fit (\eqn{7 \times 10^{-6}}) predicted another function.
#' Over \eqn{n} of \eqn{2 \times 10^4} and \eqn{10^5}, \eqn{D} of 256 and 512
#' and four noise levels, every fit with \eqn{q \le 2^{-12}} had means within
#' \eqn{2.6 \times 10^{-5}} and variances within \eqn{1.4 \times 10^{-5}};
#' two above it (\eqn{q = 2.9 \times 10^{-4}} and \eqn{2.6 \times 10^{-3}},
#' \eqn{n / 2D} = 20) had means off by \eqn{1.2} and \eqn{1.9 \times
#' 10^{-4}}.
#'
#' **The kernel statistics.**  [hsic_test()] and [mmd_test()] (their gamma
#' null), [kernel_pca()] and [kernel_cca()] take `precision =` too: the
#' centred cross product \eqn{Z_c^T Z_c} of their features (the features
#' less the first block's means, rounded to float) by the same product,
#' with the same bound; the column sums, means and everything after stay
#' double.  `"auto"` is the rule above with no penalty (for [kernel_cca()]
#' its ridge, \eqn{n \lambda} on \eqn{Z_c^T Z_c}).  Under independence an
#' entry of the cross block is about \eqn{\sqrt{n}} times the features'
#' variance and its float error about \eqn{10^{-6} \sqrt{n}} times it (the
#' blocks' random errors, summed in double), so the statistic moves by
#' about \eqn{10^{-6}} relative, far below its sampling spread.  The
#' evidence is in `bench/investigations/statistics-precision.md`.  The
#' permutation nulls and the exact (Gram matrix) methods stay double.
#'
#' Results are identical for any thread count at a given precision.  A fit
#' on [data_chunks()] equals the in-memory fit at the same precision up to
#' the order of its double sums when its chunks hold multiples of 256 rows
#' ([rff_gp()]); otherwise the float blocks fall on other rows and the two
#' agree within the bound above.  The fit records its precision in
#' `fit$precision`.
#'
#' @name feature_precision
#' @seealso [rff_gp()], [rff_ridge()], [falkon_control()].
NULL

check_precision <- function(precision) {
  check_choice(precision, c("auto", "double", "single"), "precision")
}

# rff_gp()'s control: its precision (default "auto") and the optim() controls without it.
gp_control_precision <- function(control) {
  if (!is.list(control)) stop_arg("control", "must be a list of optim() controls")
  nm <- names(control)
  if (length(control) && (is.null(nm) || any(!nzchar(nm)))) {
    stop_arg("control", "must name its entries, such as list(maxit = 100)")
  }
  # optim()'s L-BFGS-B controls that keep the search a maximisation of the
  # likelihood with its analytic gradient (not fnscale, parscale or ndeps)
  unknown <- setdiff(nm, c(names(gp_control_checks), "precision"))
  if (length(unknown)) {
    stop_arg("control", "has entries rff_gp() does not take: ", paste(unknown, collapse = ", "),
             " (it takes ", paste(c(names(gp_control_checks), "precision"), collapse = ", "), ")")
  }
  for (k in intersect(nm, names(gp_control_checks))) {
    control[[k]] <- gp_control_checks[[k]](control[[k]], k)
  }
  precision <- check_precision(if (is.null(control$precision)) "auto" else control$precision)
  control$precision <- NULL
  list(precision = precision, control = control)
}
gp_control_checks <- list(
  maxit = function(v, k) check_count(v, paste0("control$", k)),
  factr = function(v, k) check_positive(v, paste0("control$", k)),
  pgtol = function(v, k) check_number(v, paste0("control$", k), lower = 0),
  lmm = function(v, k) check_count(v, paste0("control$", k)),
  trace = function(v, k) check_count(v, paste0("control$", k), lower = 0),
  REPORT = function(v, k) check_count(v, paste0("control$", k))
)

# Whether Z'Z (n rows, m features) is formed in float: "single" always, "double" never,
# "auto" when the product is large and the penalty large next to its typical error (the
# rule and its evidence: ?feature_precision).  scale2: the kernel's variance; penalty:
# the ridge added to Z'Z (s_n^2, or n lambda).
feature_single <- function(precision, n, m, scale2, penalty) {
  if (precision != "auto") return(precision == "single")
  n <- as.double(n)
  q <- 2^-24 * sqrt(n / m) * scale2 / penalty
  n * m^2 / 2 >= feature_single_min_work && is.finite(q) && q <= feature_single_max_q
}
feature_single_min_work <- 2^36
feature_single_max_q <- 2^-12

# rff_gp()'s choice on its problem at theta (the primal form only; the n x n form stays
# double).
gp_single <- function(precision, G, theta = G$theta) {
  P <- G$P
  if (P$method != "rff" || isTRUE(P$dual)) return(FALSE)
  nt <- length(theta)
  scale2 <- if (G$sm) sum(exp(theta[seq_len(P$Q)])) else exp(2 * theta[nt - 1L])
  feature_single(precision, P$n, 2 * ncol(P$eps), scale2, exp(2 * theta[nt]))
}
