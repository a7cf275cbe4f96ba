# rff_gp() on data in chunks (see ?chunked_fits).  The in-memory search is
# already shaped for it: starting values, then a pilot search on
# gp_pilot_rows evenly spaced rows, then a few evaluations of the full
# likelihood.  On chunks the pilot's rows (and the bandwidth rule's) are
# fetched in one pass, and each evaluation of the full likelihood is a pass
# whose chunks return the in-memory routine's sums over their rows (Z'Z,
# Z'y, y'y; for the gradient M and the column sums of src/gp.c), added in
# chunk order.  Data of at most gp_pilot_rows rows are fetched whole and
# fitted as in memory.

#' @rdname chunked_fits
#' @export
rff_gp.data_chunks <- function(x, y, kernel = gaussian_kernel("median"), D = NULL, ard = NULL,
                               optimize = TRUE, signal = NULL, noise = NULL, scale = TRUE,
                               seed = NULL, control = list(),
                               sampling = c("iid", "orthogonal", "qmc"),
                               nthreads = chunks_threads(), ...) {
  gp_chunks_no_dots(...)
  y <- check_chunk_y(y)
  check_shift_invariant(kernel)
  if (identical(kernel$name, "spectral_mixture")) {
    stop_arg("kernel", "= spectral_mixture_kernel() needs the rows in memory (its starts ",
             "look at all of them); on data_chunks() use a standard kernel")
  }
  sampling <- check_choice(sampling, c("iid", "orthogonal", "qmc"), "sampling")
  if (sampling == "orthogonal") check_isotropic(kernel, "orthogonal")
  if (!is.null(ard)) ard <- check_flag(ard, "ard")
  optimize <- check_flag(optimize, "optimize")
  scale <- check_flag(scale, "scale")
  pc <- gp_control_precision(control)
  nthreads <- check_threads(nthreads)
  what <- "rff_gp"

  sv <- falkon_keep_rng(chunks_survey(x, y, what))
  if (survey_response(sv, y)$type != "regression") {
    stop_arg("y", "must name a numeric column: rff_gp() is a regression")
  }
  n <- sv$n
  if (n < 2L) stop_arg("x", "must have at least two rows")
  ard <- gp_check_ard(ard, optimize, n, sv$d)
  scaling <- if (scale) survey_scaling(sv) else NULL
  ctx <- list(chunks = x, y = y, names = sv$names, scaling = scaling,
              first = cumsum(c(0, sv$rows))[seq_along(sv$rows)], rows = sv$rows,
              nthreads = nthreads, what = what)
  mom <- gp_chunk_moments(ctx)
  if (!(mom$sd > 0)) stop_arg("y", "is constant: there is nothing to model")
  D <- if (is.null(D)) gp_default_D(n) else check_count(D, "D")
  gp_check_memory(min(n, gp_pilot_rows), sv$d, D, "rff")
  signal <- if (is.null(signal)) 1 else check_positive(signal, "signal") / mom$sd
  noise <- if (is.null(noise)) 0.1 else check_positive(noise, "noise") / mom$sd

  # the rows the in-memory fit looks at without a pass: the bandwidth
  # rule's (median_heuristic()) and the pilot's, evenly spaced
  pilot <- if (n > gp_pilot_rows) unique(round(seq(1, n, length.out = gp_pilot_rows)))
           else seq_len(n)
  bw <- if (n > 1000L) unique(round(seq(1, n, length.out = 1000L))) else seq_len(n)
  got <- falkon_keep_rng(falkon_chunk_fetch(ctx, sort(unique(c(pilot, bw)))))
  rows_of <- function(i) got$x[match(i, got$index), , drop = FALSE]
  kernel <- resolve_kernel(kernel, rows_of(bw))
  ys <- (got$y[match(pilot, got$index)] - mom$mean) / mom$sd
  G <- gp_problem(rows_of(pilot), ys, NULL, rep(TRUE, length(pilot)), kernel, D, "rff", sampling,
                  "centred", ard, signal, noise, seed, nthreads)
  if (n > gp_pilot_rows) G$P <- gp_rows_chunks(G$P, ctx, n, mom)
  G$P$single <- gp_single(pc$precision, G)
  hyper <- gp_fit_hyper(G, optimize, pc$control)
  G$P$single <- gp_single(pc$precision, G, hyper$theta)    # "auto" again at the optimum
  fit <- new_rff_gp(G, hyper$theta, hyper$opt, D, optimize, FALSE, mom$mean, mom$sd, scaling,
                    n, NULL)
  fit$input <- survey_input(sv, n)
  fit$input$range <- mom$range
  fit$chunks <- list(rows = sv$rows, response = y)
  fit$call <- generic_call(match.call())
  fit
}

# The in-memory options that need the rows in memory, refused by name.
gp_chunks_no_dots <- function(...) {
  dots <- list(...)
  memory_only <- c(method = "the exact GP needs the n x n kernel matrix",
                   mean = "a mean other than \"centred\" needs the basis of every row",
                   weights = "case weights are not available",
                   laplace = "the Laplace approximation needs the rows")
  for (nm in intersect(names(dots), names(memory_only))) {
    stop_arg(nm, "is not available on data_chunks(): ", memory_only[[nm]], "; fit in memory")
  }
  check_no_dots(..., .who = "rff_gp()")
}

# The response's mean and standard deviation (merged in chunk order, as
# the survey merges the columns' moments) and the inputs' ranges, in one
# pass.
gp_chunk_moments <- function(ctx) {
  parts <- falkon_keep_rng(chunks_apply(ctx$chunks, gp_moments_task,
                                        list(y = ctx$y, names = ctx$names), ctx$what))
  acc <- parts[[1L]]
  for (p in parts[-1L]) {
    mm <- moments_merge(acc$n, acc$mean, p$n, p$mean)
    acc$m2 <- acc$m2 + p$m2 + mm$f * mm$delta^2
    acc$n <- mm$n
    acc$mean <- mm$mean
    acc$range <- rbind(pmin(acc$range[1L, ], p$range[1L, ]), pmax(acc$range[2L, ], p$range[2L, ]))
  }
  list(n = acc$n, mean = acc$mean, sd = sqrt(acc$m2 / (acc$n - 1)), range = acc$range)
}

gp_moments_task <- function(raw, i, y, names) {
  xy <- chunk_xy(raw, y, names)
  r <- chunk_targets(xy$y, NULL, y)[, 1L]
  list(n = length(r), mean = mean(r), m2 = sum((r - mean(r))^2),
       range = apply(xy$x, 2L, range))
}

# P of the full data on chunks: the pilot's rows stay (gp_pilot_problem()
# takes them), the likelihood's sums come from passes (gp_rows_stats(),
# gp_rows_gradient()), and the primal (2D x 2D) form is used whatever D.
gp_rows_chunks <- function(P, ctx, n, mom) {
  P$pilot <- list(x = P$x, y = P$y)
  P$x <- NULL
  P$y <- NULL
  P$n <- n
  P$dual <- FALSE
  args <- list(y = ctx$y, names = ctx$names, scaling = ctx$scaling, center = mom$mean,
               yscale = mom$sd, nthreads = ctx$nthreads)
  pass <- function(task, more) {
    falkon_keep_rng(chunks_apply(ctx$chunks, task, c(args, more), ctx$what, combine = chunks_add))
  }
  P$rows <- list(
    stats = function(f, single) {
      pass(gp_stats_task, list(omega = f$omega, amp = f$amp, single = single))
    },
    rss = function(f, alpha) pass(gp_rss_task, list(omega = f$omega, amp = f$amp, alpha = alpha)),
    gradient = function(f, alpha, ainv, s2) {
      pass(gp_gradient_task, list(omega = f$omega, amp = f$amp, alpha = alpha, ainv = ainv,
                                  s2 = s2))
    })
  P
}

# A chunk's standardised rows, as the in-memory fit standardises them.
gp_chunk_rows <- function(raw, y, names, scaling, center, yscale) {
  xy <- chunk_xy(raw, y, names)
  list(x = rff_apply_scaling(xy$x, scaling), y = (chunk_targets(xy$y, NULL, y)[, 1L] - center) / yscale)
}

gp_stats_task <- function(raw, i, y, names, scaling, center, yscale, nthreads, omega, amp,
                          single) {
  r <- gp_chunk_rows(raw, y, names, scaling, center, yscale)
  st <- .Call(C_gp_stats, r$x, omega, amp, r$y, NULL, single, nthreads)
  list(st[[1L]], st[[2L]], sum(r$y^2))
}

gp_gradient_task <- function(raw, i, y, names, scaling, center, yscale, nthreads, omega, amp,
                             alpha, ainv, s2) {
  r <- gp_chunk_rows(raw, y, names, scaling, center, yscale)
  .Call(C_gp_gradient, r$x, omega, amp, r$y, NULL, alpha, ainv, s2, nthreads)
}

gp_rss_task <- function(raw, i, y, names, scaling, center, yscale, nthreads, omega, amp, alpha) {
  r <- gp_chunk_rows(raw, y, names, scaling, center, yscale)
  beta <- matrix(alpha * rep(amp, each = 2L))
  sum((r$y - drop(.Call(C_rff_decision, r$x, omega, NULL, 1, beta, 0, nthreads)))^2)
}
