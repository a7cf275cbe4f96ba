# The settings of rff_svm() that do not depend on the data, checked once
# for the in-memory and the chunked fits alike.
svm_check_settings <- function(kernel, D, cost, loss, multiclass, probability, cross, scale,
                               tol, map) {
  check_kernel(kernel)
  # NULL: svm_default_D(), once the rows and classes are known
  D <- if (!is.null(map)) map_size(map) else if (!is.null(D)) check_count(D, "D")
  list(kernel = kernel, D = D,
       cost = check_positive(cost, "cost"),
       loss = check_choice(loss, c("hinge", "squared_hinge"), "loss"),
       multiclass = check_choice(multiclass, c("ovo", "ovr"), "multiclass"),
       probability = check_flag(probability, "probability"),
       cross = if (identical(cross, 0) || identical(cross, 0L)) 0L
               else check_count(cross, "cross", lower = 2),
       scale = rff_check_scale(kernel, check_flag(scale, "scale")),
       tol = check_positive(tol, "tol"))
}

# The default D: as many features as make one pass of the solver over all
# its binary problems touch about 2^26 feature entries (rows summed over the
# problems: n for two classes, (k - 1) n one-vs-one, k n one-vs-rest),
# rounded down to a multiple of 256 features, within [1024, 8192].  So up to
# 65 536 rows (two classes) the feature matrix stays under 512 MB and a
# pass costs what 1024 features cost there; beyond, D = 1024.  On small
# sets the extra features are cheap and bring the fit close to the exact
# kernel machine: 8192 against 1024 on
# DNA (2230 rows, 3 classes) raises the accuracy 0.933 -> 0.958 and
# lowers the log-loss 0.185 -> 0.143 (ksvm(prob.model = TRUE): 0.136);
# spam 0.222 -> 0.201 (ksvm 0.196); beyond 2^16 rows (two classes) it is
# 1024 (bench/investigations/svm-features.md).  'per' is the features per
# unit of D (2 for the pair map, d + 1 for the min kernel's indicators).
svm_default_D <- function(n, k, multiclass, per = 1) {
  rows <- n * switch(multiclass, binary = 1, ovo = k - 1, ovr = k)
  features <- min(8192, max(1024, 256 * floor(2^26 / (256 * rows))))
  as.integer(max(1, floor(features / per)))
}

# The fitted "rff_svm" object, in memory and on chunks: W holds the
# solver's weights ((n_features + 1) x problems, the intercepts in the last
# row); for two classes the second column is the negated first.
new_rff_svm <- function(W, map, levels, multiclass, pairs, settings, class.weights, max_iter,
                        shrinking, iter, converged, n_sv, n, scaling, input, ...) {
  nf <- map$n_features
  if (length(levels) == 2L) W <- cbind(W, -W)
  fit <- structure(list(weights = W[seq_len(nf), , drop = FALSE], intercept = W[nf + 1L, ],
                        levels = levels, k = length(levels), multiclass = multiclass,
                        pairs = pairs, kernel = map$kernel, D = settings$D, n_features = nf,
                        cost = settings$cost, loss = settings$loss,
                        class.weights = class.weights, tol = settings$tol,
                        max_iter = max_iter, shrinking = shrinking, iter = iter,
                        converged = converged, n_sv = n_sv, n = n, ..., map = map,
                        scaling = scaling, input = input),
                   class = bochner_fit_class("rff_svm"))
  colnames(fit$weights) <- names(fit$intercept) <- svm_problem_names(fit)
  fit
}

# The binary problems of rff_svm(), handed to the C solver (src/svm.c) as
# concatenated per-sample vectors: problem p has the samples
# offsets[p] + 1 .. offsets[p + 1] of rows (columns of the features), each
# with a label sign (+1 / -1) and a cost.  Two classes: one problem.  More:
# one per class against the rest (LIBLINEAR's scheme, the class's own
# samples cost its class weight, the rest 1), or one per pair of classes
# (libsvm's and kernlab's, each class at its class weight).  Rows of zero
# case weight are in no problem.
svm_problems <- function(yi, k, multiclass, sample_cost, cost, weights) {
  n <- length(yi)
  sample_cost <- rep_len(as.double(sample_cost), n)
  base_cost <- cost * (if (is.null(weights)) rep(1, n) else weights)
  live <- sample_cost > 0
  pairs <- NULL
  parts <- if (multiclass == "binary") {
    list(list(rows = which(live), sign = ifelse(yi[live] == 1L, 1L, -1L),
              cost = sample_cost[live]))
  } else if (multiclass == "ovr") {
    lapply(seq_len(k), function(c) {
      own <- yi == c
      list(rows = which(live), sign = ifelse(own[live], 1L, -1L),
           cost = ifelse(own, sample_cost, base_cost)[live])
    })
  } else {
    pairs <- utils::combn(k, 2L)
    lapply(seq_len(ncol(pairs)), function(p) {
      rows <- which(live & (yi == pairs[1L, p] | yi == pairs[2L, p]))
      list(rows = rows, sign = ifelse(yi[rows] == pairs[1L, p], 1L, -1L),
           cost = sample_cost[rows])
    })
  }
  c(svm_concatenate(parts), list(pairs = pairs))
}

svm_concatenate <- function(parts) {
  sizes <- vapply(parts, function(p) length(p$rows), 0L)
  list(rows = as.integer(unlist(lapply(parts, `[[`, "rows"))),
       sign = as.integer(unlist(lapply(parts, `[[`, "sign"))),
       cost = as.double(unlist(lapply(parts, `[[`, "cost"))),
       offsets = as.integer(c(0L, cumsum(sizes))), n = length(parts), parts = parts)
}

# Stratified folds: within each class, the rows dealt round the folds in a
# random order (R's generator).
svm_folds <- function(y, nfolds) {
  fold <- integer(length(y))
  for (c in levels(y)) {
    idx <- which(y == c)
    if (length(idx) < 2L) {
      stop_arg("y", "has a class (\"", c, "\") with fewer than 2 rows: too few to ",
               "cross-validate ('cross' or 'probability = TRUE')")
    }
    fold[idx] <- sample(rep_len(seq_len(nfolds), length(idx)))
  }
  fold
}

# The fit's problems followed by, for each fold, the same problems without
# that fold's rows.
svm_with_folds <- function(probs, folds) {
  if (is.null(folds)) return(probs)
  svm_concatenate(c(probs$parts, svm_fold_parts(probs, folds)))
}

# For each fold, the problems of 'probs' without that fold's rows (parts
# for svm_concatenate()).
svm_fold_parts <- function(probs, folds) {
  parts <- list()
  for (f in sort(unique(folds))) {
    for (p in probs$parts) {
      keep <- folds[p$rows] != f
      if (!any(keep)) {
        stop("rff_svm: a cross-validation fold leaves a binary problem without training ",
             "rows; use fewer folds ('cross')", call. = FALSE)
      }
      parts[[length(parts) + 1L]] <- list(rows = p$rows[keep], sign = p$sign[keep],
                                          cost = p$cost[keep])
    }
  }
  parts
}

# The held-out decision values: row i's values from the problems trained
# without its fold (n x problems), the folds' problems in the solver's
# columns after 'first' (after the fit's own, by default).
svm_heldout_decision <- function(res, probs, folds, zt, nthreads, first = probs$n) {
  nf <- nrow(zt)
  np <- probs$n
  dec <- matrix(NA_real_, ncol(zt), np)
  for (f in sort(unique(folds))) {
    idx <- which(folds == f)
    cols <- first + np * (f - 1L) + seq_len(np)
    Wf <- res$w[, cols, drop = FALSE]
    d <- .Call(C_matprod, t(Wf[seq_len(nf), , drop = FALSE]), zt[, idx, drop = FALSE], nthreads)
    dec[idx, ] <- t(d) + rep(Wf[nf + 1L, ], each = length(idx))
  }
  dec
}

# The dual coordinate descent on the problems 'all' (svm_concatenate()),
# with the settings 's' of rff_svm(): the one call of the solver, for the
# fits and the cross-validations alike.
svm_solve <- function(zt, all, s, nthreads) {
  .Call(C_svm_dcd, zt, all$rows, all$offsets, all$sign, all$cost,
        if (s$loss == "hinge") 1L else 2L, 1, s$tol, s$max_iter, s$shrinking, nthreads)
}

# Support vectors (non-zero dual variables) per problem.
svm_support_counts <- function(alpha, offsets) {
  vapply(seq_len(length(offsets) - 1L), function(p) {
    sum(alpha[(offsets[p] + 1L):offsets[p + 1L]] > 0)
  }, 0L)
}

svm_problem_names <- function(fit) {
  switch(fit$multiclass,
         binary = fit$levels,
         ovr = fit$levels,
         ovo = paste(fit$levels[fit$pairs[1L, ]], fit$levels[fit$pairs[2L, ]], sep = "/"))
}

# Classes from decision values: the largest (one-vs-rest, two classes), or
# the most votes of the pairs (one-vs-one; ties to the first class, as
# libsvm).  Two classes' held-out values come as one column, positive for
# the first class.
svm_classes <- function(fit, dec) {
  if (fit$k == 2L && NCOL(dec) == 1L) dec <- cbind(dec, -dec)
  if (fit$multiclass != "ovo") return(rff_decision_classes(dec, fit$levels))
  k <- fit$k
  votes <- matrix(0L, nrow(dec), k)
  for (p in seq_len(ncol(fit$pairs))) {
    win <- ifelse(dec[, p] > 0, fit$pairs[1L, p], fit$pairs[2L, p])
    votes[cbind(seq_len(nrow(dec)), win)] <- votes[cbind(seq_len(nrow(dec)), win)] + 1L
  }
  cls <- factor(fit$levels[max.col(votes, ties.method = "first")], levels = fit$levels)
  names(cls) <- rownames(dec)
  cls
}

svm_warn_convergence <- function(fit, converged, max_iter, tol) {
  if (all(converged)) return(invisible())
  names <- svm_problem_names(fit)
  warning(sprintf(paste0("rff_svm: the solver reached max_iter = %d passes before the ",
                         "tolerance tol = %g%s; increase 'max_iter' or 'tol', ",
                         "or lower 'cost'"),
                  max_iter, tol,
                  if (fit$k > 2L) sprintf(" (problems %s)", paste(names[!converged], collapse = ", "))
                  else ""), call. = FALSE)
}
