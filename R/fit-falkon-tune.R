# falkon(tune = ): lambda and the Gaussian or Matern kernel's length
# scale (one, or one per input) learned before the fit, by gradient of a
# held-out squared error (the hold-out objective of Meanti, Carratino, De
# Vito and Rosasco, AISTATS 2022) on a subsample.  On n_s fitting rows and
# m_s uniform centres the Nystrom KRR solution is closed form,
#   alpha = (K_nm' K_nm + lambda n_s K_mm)^-1 K_nm' y,
# and the objective the mean over held-out rows of ||K_vm alpha - y_v||^2
# (one column per class for classes: the squared loss on the one-hot
# targets, whatever the fit's loss), minimised over log lambda and log
# sigma_j by a bounded limited-memory BFGS (tune_lbfgs_box()) with the
# analytic gradient, from the bandwidth rule and the best of
# control$lambdas.  Each evaluation costs O(n_s m_s (d + m_s)): the first
# stage runs on 3000 rows and 300 centres, a refinement from there on up to
# 12000 rows and 1000 centres; the full fit then runs at the learned kernel
# and lambda.  Case weights do not enter the
# tuning.  Every kernel matrix, product and Cholesky solve is the package's
# own (src/: kernels.c, products.c, cholesky.c), and the optimiser's sums
# R's, never R's BLAS or LAPACK, so the learned kernel and lambda are the
# same numbers under any BLAS and any thread count, as the fit is.
# control$tune_objective = "gcv" minimises the generalised cross-validation
# of the fit on its own rows instead (falkon_tune_gcv()), "ml" the Nystrom
# Gaussian process's marginal likelihood (falkon_tune_ml()), which "auto"
# (falkon_resolve_objective()) takes for a regression: measured against the
# held-out error in bench/investigations/falkon-ml.md and
# falkon-ml-regression.md, it was better on 11 of 13 regressions and worse
# on several classes; GCV (falkon-gcv.md) won on neither.
# The objectives and their gradients are in R/fit-falkon-tune-objective.R.

# The tuning's sizes: rows drawn (fitting and held-out together), centres,
# the pool below which 5-fold cross-validation replaces one held-out fifth,
# and the optimiser's iterations and stopping test: an iteration gaining
# less than factr * 2.2e-16 = 2.2e-4 of the objective ends it (optim()'s
# "low accuracy"), far below the held-out error's own sampling error (a
# relative 2-10 % on 300-3000 held-out rows).  Against factr = 1e9 it
# halved the evaluations; the test errors moved both ways within the
# splits' spread (means over five splits: Satellite 9.1 -> 9.5 %, spam
# 9.0 -> 7.9 %, Vehicle 15.0 -> 15.4 %, Ionosphere 9.7 -> 8.8 %; the sets of
# bench/investigations/falkon-tune.md).
falkon_tune_rows <- 3000L
falkon_tune_centres <- 300L
falkon_tune_cv_below <- 1500L
# Below falkon_tune_cv_below rows no fifth is left to judge one scale per
# input, and d scales minimising the cross-validated objective always beat
# the one they start from on it: with fewer than falkon_ard_rows rows per
# input they overfit it.  Leave-one-out at the learned scales (mean
# squared residual, five splits each): Ionosphere (7.5 rows per input)
# 0.062-0.101 against the rule's 0.092-0.113, for test error 5.7-11.4 %
# against 1.0-6.7 %; Sonar (2.4) 0.099-0.130 against 0.18-0.22, for
# 12.9-24.2 % against 12.9-19.4 %; Glass (16.7) 0.32-0.45 against
# 0.37-0.46, for 14.1-35.9 % against 25.0-32.8 %; Vehicle (33) a mean 15.1
# % against the rule's 18.7 %.  Below it one scale is learned.
falkon_ard_rows <- 20
falkon_tune_maxit <- 40L
falkon_tune_factr <- 1e12

# The refinement's sizes (falkon_tune_refine()): rows drawn (the first
# stage's are a random subset of them), centres and iterations.  Scales
# learned on 300 centres suit 300 centres: at n = 10^5, d = 20 (the fit at
# 4000 centres) they lost to the rule's bandwidth on the held-out slice
# (MSE 0.302 against 0.290) and, learned on 12000 rows and 1000 centres,
# won (0.250; test RMSE 0.511 against 0.543); diamonds 0.1061 -> 0.0985.
falkon_refine_rows <- 12000L
falkon_refine_centres <- 1000L
falkon_refine_maxit <- 15L

# The choices of falkon(tune = ), the default first.
falkon_tune_modes <- c("none", "auto", "iso", "ard")

# The kernel a fit uses on its scaled rows xs: the bandwidth rule resolved
# (on the rows of positive case weight), lambda and the length scales
# learned when 'tune' asks (with the fit's seed), and ARD length scales
# folded into the standardisation (so that the centres, passes and
# predict() see x / sigma, R/kernel-ard.R).  Returns
# list(kernel, lambda, control, report (with tune only), scaling, xs), and
# with a learned kernel and a held-out slice or leave-one-out ('loo',
# falkon_loo_applies()) to judge it, 'rule': the same for the rule's
# kernel, which falkon_fit_judged() fits beside it.
falkon_fit_kernel <- function(x, xs, scaling, kernel, tune, lambda, iter, Y, m, control, seed,
                              nthreads, loo = FALSE, weights = NULL) {
  kernel <- resolve_kernel(kernel, weighted_rows(xs, weights))
  rows <- function(pool) list(x = xs[pool, , drop = FALSE], Y = Y[pool, , drop = FALSE])
  fk <- falkon_learn(rows, nrow(xs), kernel, tune, lambda, iter, m, control, seed, nthreads,
                     list(kernel = kernel, lambda = lambda, control = control, scaling = scaling,
                          xs = xs), loo)
  if (!is.null(kernel_ard(fk$kernel))) {
    scaling <- ard_scaling(scaling, fk$kernel, ncol(x))
    xs <- falkon_dense_rows(rff_apply_scaling(x, scaling))
  }
  c(fk, list(scaling = scaling, xs = xs))
}

# The same for a fit on data_chunks() (R/fit-falkon-chunks.R), whose
# bandwidth rule is resolved: the tuning's rows are the in-memory fit's
# draw, fetched in one pass (scaled by ctx$scaling), so that the learned
# kernel and lambda are the in-memory fit's.  Returns list(kernel, lambda,
# control, report, scaling) and 'rule' as falkon_fit_kernel().
falkon_tune_chunks <- function(ctx, n, d, kernel, tune, lambda, iter, m, control, seed, levels,
                               y, loo = FALSE) {
  check_ard_length(kernel, d)
  rows <- function(pool) {
    got <- falkon_chunk_fetch(ctx, pool)
    list(x = got$x, Y = chunk_targets(got$y, levels, y))
  }
  fk <- falkon_learn(rows, n, kernel, tune, lambda, iter, m, control, seed, ctx$nthreads,
                     list(kernel = kernel, lambda = lambda, control = control,
                          scaling = ctx$scaling), loo)
  c(fk, list(scaling = ard_scaling(ctx$scaling, fk$kernel, d)))
}

# The tuning shared by both: the rule's kernel untuned; else lambda and the
# length scales learned, with the fit's seed, on the rows of
# falkon_tune_pool() that rows(pool) returns (list(x, Y)).  Returns
# list(kernel, lambda, control, report), and 'rule' (the rule's kernel, for
# falkon_fit_judged()) when the fit's held-out slice, or with 'loo' its
# leave-one-out error, is to judge the two.
falkon_learn <- function(rows, n, kernel, tune, lambda, iter, m, control, seed, nthreads, rule,
                         loo = FALSE) {
  if (tune == "none") return(list(kernel = kernel, lambda = lambda, control = control))
  learned <- with_seed(seed, {
    pool <- falkon_tune_pool(n, lambda, iter, control, loo)
    got <- rows(pool)
    falkon_tune_widen(falkon_tune(got$x, got$Y, kernel, lambda, tune, m, control, nthreads),
                      control, attr(pool, "heldout"))
  })
  c(falkon_tune_learned(learned),
    if ((learned$heldout || loo) && !identical(learned$report$chosen, "rule")) list(rule = rule))
}

# The fit at the kernel of falkon_learn() (fit_at(k) fits at kernel list
# k), and with a 'rule' also at the rule's, the better on the held-out
# slice kept (falkon_keep_better()).  Returns fit_at()'s list with the
# tuning's 'report' (NULL untuned).
falkon_fit_judged <- function(fk, fit_at) {
  rule <- fk$rule
  fk$rule <- NULL
  got <- fit_at(fk)
  if (is.null(rule)) return(c(got, list(report = fk$report)))
  falkon_keep_better(got, fit_at(rule), fk$report)
}

# What the fit takes of the tuning's list: kernel, lambda, control, report.
falkon_tune_learned <- function(learned) {
  list(kernel = learned$kernel, lambda = learned$lambda, control = learned$control,
       report = learned$report)
}

# The rows the tuning draws on: the fit's training rows (the held-out
# slice falkon_split() draws first, with the fit's seed, is left out, so
# that it can judge the learned kernel against the rule's), all of them or
# falkon_refine_rows at random (sorted); with 'loo' (a fit without a slice,
# judged by leave-one-out) every row.  Attribute "heldout": whether the fit
# holds a slice out.
falkon_tune_pool <- function(n, lambda, iter, control, loo = FALSE) {
  if (loo) return(structure(seq_len(n), heldout = FALSE))
  split <- falkon_split(n, lambda, iter, control)
  train <- split$train
  if (length(train) > falkon_refine_rows) {
    train <- sort(train[sample.int(length(train), falkon_refine_rows)])
  }
  structure(train, heldout = length(split$valid) > 0L)
}

# A learned lambda, with the fit's held-out slice ('heldout') to choose:
# it regularised the tuning's few thousand rows and few hundred centres,
# and the fit, larger, may want less; its held-out path chooses between it
# and the candidates below it (control$lambdas).  The marginal likelihood's
# lambda is the noise it infers, not the held-out error's optimum, and it
# can go to the range's lower end where the held-out error wants more:
# then every candidate competes.  Diamonds (bench/investigations/
# falkon-tune.md) learned 1e-8; with it alone on the path the centres'
# growth stopped at 1024 and the test RMSE was 0.1125 (the rule's 0.1105),
# with every candidate the fit grew to 3062 and reached 0.1045.  Without a
# slice it is the fit's lambda.  Adds 'heldout' to the list.
falkon_tune_widen <- function(learned, control, heldout) {
  lam <- learned$report$lambda
  if (heldout && !is.null(lam)) {
    others <- if (identical(learned$report$criterion, "ml")) control$lambdas
              else control$lambdas[control$lambdas < lam]
    learned$control$lambdas <- sort(unique(c(lam, others)), decreasing = TRUE)
    learned$lambda <- "auto"
  }
  c(learned, list(heldout = heldout))
}

# The seed of a tuned fit: given, or drawn from R's stream when NULL, so
# that the tuning and the fit draw the same held-out slice.
falkon_tune_seed <- function(seed, tune) {
  if (is.null(seed) && tune != "none") sample.int(.Machine$integer.max, 1L) else seed
}

# The fit kept when falkon(tune = ) learned a kernel: the learned one's
# 'fit' or the rule's 'rule' (both list(out, ...) on the same held-out
# slice, centres drawn alike).  The tuning chose the learned kernel on a
# few hundred centres, and at the fit's m its scales can lose (Satellite,
# DNA: bench/investigations/falkon-tune.md); the fit's slice, which the
# tuning never saw, decides by the fit's own criterion (squared error,
# error rate or log-loss), a tie to the learned kernel.  A significance
# margin (the rule kept only when better by twice the paired losses'
# standard error) was tried: it let DNA's learned scales through (test
# error 4.4 -> 6.8 %) to save Ionosphere's one split in five decided by
# one row of 24.  A small fit without a slice (falkon_fit_loo()) compares
# the two fits' mean squared leave-one-out residuals instead.  The tuning
# saw those rows, so they flatter the learned kernel; with at least
# falkon_ard_rows rows per learned scale the learned kernel kept was worse
# than the rule's by over 0.2 point (1 % of RMSE) on 3 of the 31 small-set
# splits of bench/investigations/falkon-tune.md, and the rule kept
# Ionosphere's 3.6 % where the slice of 24 rows had let learned scales
# through at 9.5 %.
# The report gets the two mean losses.
falkon_keep_better <- function(fit, rule, report) {
  e <- c(rule = mean(rule$out$heldout_loss), learned = mean(fit$out$heldout_loss))
  lost <- isTRUE(e[["learned"]] > e[["rule"]])
  report$heldout <- e
  keep <- if (lost) rule else fit
  if (lost) {
    report$chosen <- "rule"
    report$lambda <- report$lambda_edge <- NULL
    report$sigma <- rule$kernel$sigma
  }
  keep$report <- report
  keep
}

# tune = "auto" | "none" | "iso" | "ard", resolved to what is done: "auto"
# is "ard" (one scale per input) for the kernels the tuning learns, the
# radial ones (tune_kernels()), nothing for the others.
falkon_tuned_kernels <- c("gaussian", "matern")
falkon_check_tune <- function(tune, kernel, d) {
  tune <- check_choice(tune, falkon_tune_modes, "tune")
  if (tune == "none") return(tune)
  learns <- kernel$name %in% falkon_tuned_kernels
  if (tune == "auto") {
    if (!learns) return("none")
    tune <- "ard"
  }
  if (!learns) {
    stop_arg("tune", "= \"", tune, "\" learns the length scales of the Gaussian and Matern ",
             "kernels; the ", kernel_label(kernel), " kernel is not tuned: use tune = \"none\"")
  }
  if (tune == "ard" && d == 1L) tune <- "iso"
  tune
}

# The learned kernel and lambda from the scaled rows xs and their targets
# Y (n x k, the rows of falkon_tune_pool()): list(kernel, lambda, control,
# report).  'lambda' is the fit's argument: "auto" is learned (and becomes
# control$lambdas, the range falkon_single() reads), given values are kept
# (the first is the tuning's).  nthreads: the package's products' threads
# (the numbers do not depend on them).
falkon_tune <- function(xs, Y, kernel, lambda, mode, m, control, nthreads) {
  m <- if (is.matrix(m)) nrow(m) else m
  # the first stage on falkon_tune_rows of the rows, the refinement on all
  first <- if (nrow(xs) > falkon_tune_rows) sort(sample.int(nrow(xs), falkon_tune_rows))
           else seq_len(nrow(xs))
  objective <- if (is.null(control$tune_objective)) "heldout" else control$tune_objective
  probs <- falkon_tune_folds(xs[first, , drop = FALSE], Y[first, , drop = FALSE], m,
                             falkon_tune_centres, objective)
  n_threads <- nthreads
  # one thread unless a fold's K_nm'K_nm is large: an evaluation is about
  # twenty products of a few milliseconds each, whose parallel regions
  # gained at most 1.4x on an idle machine and lost 3-5x on a busy one
  # (2400 x 300 folds, AMD EPYC, 2 cores at load 5.6: 26-34 ms an
  # evaluation on one thread, 68-143 ms on two), as falkon() keeps small
  # fits on one thread; at falkon_tune_rows and _centres that is one thread
  if (as.double(nrow(probs$folds[[1L]]$x)) * probs$centres^2 < 2^28) nthreads <- 1L
  d <- ncol(xs)
  shape <- tune_shape(kernel)
  s0 <- exp(mean(log(kernel$sigma)))
  fixed <- if (identical(lambda, "auto")) NULL else lambda[1L]
  evals <- 0L
  run <- function(theta, p, lam) {
    evals <<- evals + 1L
    falkon_tune_eval(theta, probs, p, d, lam, nthreads, shape)
  }
  # lambda's start: the best of the candidates at the rule's bandwidth
  lams <- if (is.null(fixed)) control$lambdas else fixed
  v0 <- vapply(lams, function(l) run(log(s0), 1L, l)$value, 0)
  lam0 <- lams[which.min(v0)]
  # lambda within the range of the fit's candidates (the float cache's rule,
  # falkon_single(), reads that range)
  lam_range <- log(c(min(control$lambdas), 1))
  iso <- falkon_tune_optim(c(if (is.null(fixed)) log(lam0), log(s0)), 1L, fixed, run, lam_range)
  n_lam <- as.integer(is.null(fixed))
  theta_of <- function(par) if (n_lam) par[-1L] else par
  lambda_of <- function(par) if (n_lam) exp(par[1L]) else fixed
  judge <- function(r, p) {
    if (is.null(probs$check)) return(r$value)
    evals <<- evals + 1L
    falkon_tune_eval(theta_of(r$par), probs$check, p, d, lambda_of(r$par), nthreads,
                     shape)$value
  }
  cands <- list(iso = list(r = iso, p = 1L))
  if (mode == "ard" && (!is.null(probs$check) || nrow(xs) >= falkon_ard_rows * d)) {
    start <- c(iso$par[seq_len(n_lam)], rep(iso$par[n_lam + 1L], d))
    cands$ard <- list(r = falkon_tune_optim(start, d, fixed, run, lam_range), p = d)
  }
  # the learned kernel is kept only if it also does better on a fifth the
  # optimisation did not hold out than the scale(s) it started from (with
  # d scales the held-out error it minimised overstates the gain: spam and
  # Satellite in bench/investigations/falkon-tune.md); below
  # falkon_tune_cv_below rows the objective is cross-validated already
  if (!is.null(probs$check)) {
    cands$rule <- list(r = list(par = c(if (n_lam) log(lam0), log(s0)), value = min(v0)),
                       p = 1L)
  }
  score <- vapply(cands, function(cn) judge(cn$r, cn$p), 0)
  chosen <- names(cands)[which.min(score)]
  best <- cands[[chosen]]$r
  report <- list(mode = mode, criterion = objective, chosen = chosen,
                 start = c(lambda = lam0, sigma = s0),
                 objective = c(start = min(v0), end = best$value), evaluations = evals,
                 rows = probs$rows, centres = probs$centres, folds = length(probs$folds),
                 check = if (!is.null(probs$check)) score)
  if (chosen != "rule" && nrow(xs) > falkon_tune_rows) {
    best <- falkon_tune_refine(best$par, cands[[chosen]]$p, xs, Y, m, fixed, lam_range,
                               n_threads, shape, objective)
    report$objective[["end"]] <- best$value
    report$evaluations <- report$evaluations + best$evaluations
    report[c("rows", "centres", "folds")] <- best[c("rows", "centres", "folds")]
  }
  if (chosen == "rule") {
    # the fit as without tuning: the rule's bandwidth, lambda chosen as usual
    return(list(kernel = kernel, lambda = lambda, control = control,
                report = c(report, list(lambda = NULL, sigma = kernel$sigma))))
  }
  sigma <- exp(theta_of(best$par))
  lam <- if (is.null(fixed)) lambda_of(best$par) else lambda
  kernel$sigma <- sigma
  kernel$sigma_from_median <- kernel$sigma_from_sigest <- kernel$gamma <- NULL
  kernel$sigma_learned <- TRUE
  report <- c(report, list(lambda = if (is.null(fixed)) lam, sigma = sigma,
                           lambda_edge = if (is.null(fixed)) falkon_tune_edge(best$par[1L], lam_range)))
  if (is.null(fixed)) control$lambdas <- lam
  list(kernel = kernel, lambda = lam, control = control, report = report)
}

# The learned parameters 'par' (p scales) refined on all the tuning's rows
# xs (at most falkon_refine_rows) and falkon_refine_centres centres, from
# where the first stage left them, for at most falkon_refine_maxit
# iterations: list(par, value, evaluations, rows, centres, folds).
falkon_tune_refine <- function(par, p, xs, Y, m, fixed, lam_range, nthreads,
                               shape = tune_gaussian, objective = "heldout") {
  probs <- falkon_tune_folds(xs, Y, m, falkon_refine_centres, objective)
  if (as.double(nrow(probs$folds[[1L]]$x)) * probs$centres^2 < 2^28) nthreads <- 1L
  evals <- 0L
  run <- function(theta, p, lam) {
    evals <<- evals + 1L
    falkon_tune_eval(theta, probs, p, ncol(xs), lam, nthreads, shape)
  }
  r <- falkon_tune_optim(par, p, fixed, run, lam_range, falkon_refine_maxit)
  c(r, list(evaluations = evals, rows = probs$rows, centres = probs$centres,
            folds = length(probs$folds)))
}

# Which end of its range a learned log lambda sits at ("lower" or "upper"),
# NULL inside it: the box (tune_lbfgs_box()) holds it exactly at a bound
# that the objective pushes against, a choice the range could not make.
# print() says so (fit_description.falkon()).
falkon_tune_edge <- function(log_lambda, lam_range) {
  if (log_lambda <= lam_range[1L]) "lower" else if (log_lambda >= lam_range[2L]) "upper"
}

# The folds of the tuning on its rows: one held-out fifth (five folds below
# falkon_tune_cv_below rows), uniform centres among each fold's fitting
# rows; targets centred on the fitting rows (the fit's offset).  With one
# fifth, 'check' is a second (its own centres), on which "ard" is judged.
# With objective "gcv" or "ml" there is one problem without held-out rows
# (v NULL: falkon_tune_gcv(), falkon_tune_ml()): all the rows below
# falkon_tune_cv_below, else four fifths, and 'check' holds out the fifth
# left, which the optimisation never saw.
falkon_tune_folds <- function(xs, Y, m, centres = falkon_tune_centres, objective = "heldout") {
  np <- nrow(xs)
  pool <- seq_len(np)
  fold <- sample(rep_len(1:5, np))
  small <- np < falkon_tune_cv_below
  ms <- min(m, centres)
  problem <- function(f, held = TRUE) {
    fit <- pool[fold != f]
    val <- pool[fold == f]
    cen <- fit[sample.int(length(fit), min(ms, length(fit)))]
    mu <- colMeans(Y[fit, , drop = FALSE])
    list(x = xs[fit, , drop = FALSE], z = xs[cen, , drop = FALSE],
         v = if (held) xs[val, , drop = FALSE],
         y = sweep(Y[fit, , drop = FALSE], 2L, mu),
         yv = if (held) sweep(Y[val, , drop = FALSE], 2L, mu))
  }
  if (objective != "heldout") {
    f <- if (small) 0L else 1L
    out <- list(folds = list(problem(f, held = FALSE)), rows = np, centres = min(ms, np),
                nv = sum(fold != f), objective = objective)
    if (!small) out$check <- list(folds = list(problem(1L)), nv = sum(fold == 1L))
    return(out)
  }
  use <- if (small) 1:5 else 1L
  folds <- lapply(use, problem)
  out <- list(folds = folds, rows = np, centres = min(ms, np), nv = sum(fold %in% use))
  if (length(use) == 1L) out$check <- list(folds = list(problem(2L)), nv = sum(fold == 2L))
  out
}

# Quasi-Newton over theta = (log lambda unless fixed, p log length scales)
# in the box of lambda's range and sigma in [0.01, 1000].
falkon_tune_optim <- function(start, p, fixed, run, lam_range, maxit = falkon_tune_maxit) {
  n_lam <- as.integer(is.null(fixed))
  fg <- function(theta) {
    r <- run(if (n_lam) theta[-1L] else theta, p, if (n_lam) exp(theta[1L]) else fixed)
    if (!n_lam) r$gradient <- r$gradient[-1L]
    r
  }
  lower <- c(if (n_lam) lam_range[1L], rep(log(1e-2), p))
  upper <- c(if (n_lam) lam_range[2L], rep(log(1e3), p))
  tune_lbfgs_box(start, fg, lower, upper, maxit, falkon_tune_factr)
}

# Minimises fg (theta -> list(value, gradient)) over the box [lower, upper]
# by limited-memory BFGS with the box by projection (the projected
# quasi-Newton step of Kelley, Iterative Methods for Optimization, 1999,
# 5.5): variables at a bound their gradient pushes against are held for
# the step, the rest move along the two-loop direction, backtracking until
# the value falls enough (Armijo).  Not optim(method = "L-BFGS-B") nor
# nlminb(): they do their vector arithmetic on the BLAS (ddot, daxpy), so
# their iterates, and the learned kernel, moved with the BLAS; every sum
# here is R's own.  Stops after maxit iterations, when an iteration lowers
# the value by less than factr machine epsilons relatively (L-BFGS-B's
# test), or when no step lowers it.  Returns list(par, value).
tune_lbfgs_box <- function(start, fg, lower, upper, maxit, factr, memory = 5L) {
  dot <- function(a, b) sum(a * b)
  x <- pmin(pmax(start, lower), upper)
  cur <- fg(x)
  S <- Y <- list()
  for (it in seq_len(maxit)) {
    g <- cur$gradient
    held <- (x <= lower & g > 0) | (x >= upper & g < 0)
    if (all(held)) break
    q <- replace(g, held, 0)
    k <- length(S)
    a <- numeric(k)
    for (i in rev(seq_len(k))) {
      a[i] <- dot(S[[i]], q) / dot(S[[i]], Y[[i]])
      q <- q - a[i] * Y[[i]]
    }
    if (k) q <- q * (dot(S[[k]], Y[[k]]) / dot(Y[[k]], Y[[k]]))
    for (i in seq_len(k)) q <- q + S[[i]] * (a[i] - dot(Y[[i]], q) / dot(S[[i]], Y[[i]]))
    dir <- -replace(q, held, 0)
    slope <- dot(dir, g)
    if (!k || slope >= 0) {
      # no curvature yet, or none that gives descent: steepest descent,
      # its first step of unit length as L-BFGS-B's
      S <- Y <- list()
      dir <- -replace(g, held, 0)
      slope <- dot(dir, g)
    }
    if (!(slope < 0)) break
    step <- if (length(S)) 1 else 1 / sqrt(-slope)
    for (tries in 1:30) {
      xn <- pmin(pmax(x + step * dir, lower), upper)
      if (all(xn == x)) return(list(par = x, value = cur$value))
      new <- fg(xn)
      if (is.finite(new$value) && new$value <= cur$value + 1e-4 * dot(g, xn - x)) break
      # the minimum of the quadratic through the value and slope at 0 and
      # the value at step, kept within [step / 10, step / 2]
      t <- if (is.finite(new$value)) {
        -slope * step^2 / (2 * (new$value - cur$value - slope * step))
      } else step / 10
      step <- min(max(t, step / 10), step / 2)
    }
    if (!(is.finite(new$value) && new$value < cur$value)) break
    s <- xn - x
    y <- new$gradient - g
    if (dot(s, y) > 1e-10 * dot(y, y)) {
      S <- c(utils::tail(S, memory - 1L), list(s))
      Y <- c(utils::tail(Y, memory - 1L), list(y))
    }
    done <- cur$value - new$value <=
      factr * .Machine$double.eps * max(abs(cur$value), abs(new$value), 1)
    x <- xn
    cur <- new
    if (done) break
  }
  list(par = x, value = cur$value)
}
