# rff_svm() on data in chunks: CoCoA+ (Jaggi et al. 2014; Ma et al. 2015).
# Each round every chunk runs the in-memory solver's dual coordinate
# descent (src/svm.c, C_svm_local) on its own dual variables, started from
# the current weights, with the curvature scaled by the number of chunks;
# the session adds the chunks' weight updates in chunk order.  The binary
# problems (one-vs-one pairs, one-vs-rest, and the folds of the
# probabilities' cross-validation) are those of the in-memory fit
# (svm_problems(), svm_folds()), built on each chunk's rows.

#' @rdname chunked_fits
#' @export
rff_svm.data_chunks <- function(x, y, kernel = gaussian_kernel("sigest"), D = NULL,
                                cost = 1, loss = c("hinge", "squared_hinge"),
                                multiclass = c("ovo", "ovr"), probability = FALSE, cross = 0,
                                scale = TRUE, class.weights = NULL, tol = 0.1,
                                seed = NULL, map = NULL, nthreads = chunks_threads(),
                                rounds = 100, passes = 3, gap_tol = 0.03, ...) {
  take_renamed(environment(), "rff_svm()", ...)
  scale_given <- !missing(scale)
  y <- check_chunk_y(y)
  a <- svm_check_settings(kernel, D, cost, loss, multiclass, probability, cross, scale,
                          tol, map)
  rounds <- check_count(rounds, "rounds")
  passes <- check_count(passes, "passes")
  gap_tol <- check_positive(gap_tol, "gap_tol")
  nthreads <- check_threads(nthreads)
  what <- "rff_svm"
  token <- chunk_cache_token()
  on.exit(chunk_cache_release(token), add = TRUE)
  # the default D, once the survey knows the rows and classes
  D <- if (!is.null(a$D)) a$D else function(n, k, d) {
    svm_default_D(n, k, if (k == 2L) "binary" else a$multiclass, rff_feature_count(1, d, a$kernel))
  }
  out <- with_seed(seed, {
    st <- chunked_setup(x, y, a$kernel, D, a$scale, scale_given, map, NULL, what,
                        classes_only = TRUE)
    lev <- st$resp$levels
    k <- length(lev)
    spec <- list(k = k, multiclass = if (k == 2L) "binary" else a$multiclass,
                 cost = a$cost, cw = rff_class_weights(class.weights, lev),
                 nfolds = svm_nfolds(a$probability, a$cross))
    # each chunk's folds from a seed of its own, the same every round
    fold_seeds <- sample.int(.Machine$integer.max, length(x))
    sol <- cocoa_solve(x, y, st, spec, a$loss, a$tol, rounds, passes, gap_tol, fold_seeds,
                       token, nthreads, what)
    list(st = st, spec = spec, sol = sol, fold_seeds = fold_seeds)
  })
  st <- out$st
  a$D <- map_size(st$map)
  spec <- out$spec
  sol <- out$sol
  lev <- st$resp$levels
  main <- seq_len(sol$np)
  fit <- new_rff_svm(sol$w[, main, drop = FALSE], st$map, lev, spec$multiclass, sol$pairs, a,
                     spec$cw, rounds, TRUE, sol$iter[main], sol$converged[main],
                     sol$n_sv[main], sum(st$rows), st$scaling, st$input, fitted = NULL,
                     trace = sol$trace, chunks = list(rows = st$rows, response = y))
  # one more pass: the training accuracy, and the held-out decision values
  # of the folds for the probabilities and 'cross'
  firsts <- cumsum(c(1, st$rows))
  fin <- chunks_apply(x, svm_final_chunk_task,
                      list(y = y, fit = fit, spec = spec, w = sol$w, token = token,
                           nthreads = nthreads, total = sum(st$rows)),
                      what, per_chunk = lapply(seq_along(x), function(i) {
                        list(fold_seed = out$fold_seeds[i], first = firsts[i])
                      }),
                      combine = svm_final_combine)
  fit$accuracy <- fin$correct / fin$n
  yf <- factor(lev[fin$cl], levels = lev)   # the folds' rows' classes (none without folds)
  if (a$cross > 0L) {
    fit$cross <- a$cross
    fit$cross_accuracy <- mean(svm_classes(fit, fin$heldout) == yf)
  }
  # as in memory: the folds' held-out values where there are folds, else the training rows'
  fit$calibration <- if (spec$nfolds > 0L) {
    svm_calibration(fin$heldout, yf, NULL, fit, spec$nfolds)
  } else {
    svm_calibration(fin$train, factor(lev[fin$train_cl], levels = lev), NULL, fit, 0L)
  }
  if (!all(sol$converged)) {
    warning(sprintf(paste0("rff_svm: %d rounds over the chunks did not bring the relative ",
                           "duality gap below gap_tol = %g; increase 'rounds' or 'passes'"),
                    rounds, gap_tol), call. = FALSE)
  }
  fit
}

# The outer rounds.  The session keeps each chunk's dual variables (sent to
# and from its worker each round, 8 bytes per row and binary problem) and
# the weights w of every problem.  In a round every chunk starts from the
# same w and runs the local solver with sigma' = K (the number of chunks),
# which makes adding the K updates safe: the dual objective never gets
# worse and the iterates converge to the optimum (Ma et al. 2015).  The
# chunk also returns its share of the primal and dual objectives at the
# round's start, so the duality gap P(w) - D(alpha) >= P(w) - P(w*) measures
# convergence; a problem whose relative gap is below gap_tol keeps its weights.
cocoa_solve <- function(x, y, st, spec, loss, tol, rounds, passes, gap_tol, fold_seeds,
                        token, nthreads, what) {
  K <- length(x)
  nf <- st$map$n_features
  np <- if (spec$multiclass == "ovo") spec$k * (spec$k - 1L) / 2L
        else if (spec$multiclass == "ovr") spec$k else 1L
  nprob <- np * (1L + spec$nfolds)
  w <- matrix(0, nf + 1L, nprob)
  alpha <- vector("list", K)
  trace <- NULL
  done <- rep(FALSE, nprob)
  iter <- rep(rounds, nprob)
  n_sv <- integer(nprob)
  args <- list(y = y, names = st$input$names, map = st$map, scaling = st$scaling,
               levels = st$resp$levels, spec = spec,
               loss = if (loss == "hinge") 1L else 2L, sigma = K, passes = passes,
               tol = tol, token = token, nthreads = nthreads)
  for (r in seq_len(rounds)) {
    seeds <- sample.int(.Machine$integer.max, K)
    per <- lapply(seq_len(K), function(i) {
      list(alpha = alpha[[i]], seed = seeds[i], fold_seed = fold_seeds[i])
    })
    args$active <- !done
    # the first round: every chunk solves its own problem alone (sigma' =
    # 1) and the K solutions are averaged (dual variables / K, feasible, with
    # their weights), a far better start than a first round at sigma' = K
    first <- r == 1L && K > 1L
    args$sigma <- if (first) 1 else K
    acc <- chunks_apply(x, cocoa_chunk_task, c(args, list(w = w)), what, per_chunk = per,
                        combine = function(acc, p, i) {
                          alpha[[i]] <<- p$alpha
                          p$alpha <- NULL
                          if (is.null(acc)) return(p)
                          for (f in c("dw", "loss", "asum", "a2", "n_sv")) acc[[f]] <- acc[[f]] + p[[f]]
                          acc
                        })
    if (first) {
      acc$dw <- acc$dw / K
      alpha <- lapply(alpha, function(a) lapply(a, `/`, K))
    }
    pairs <- acc$pairs
    ww <- colSums(w^2)
    primal <- 0.5 * ww + acc$loss
    dual <- acc$asum - 0.5 * ww - acc$a2
    gap <- primal - dual
    trace <- rbind(trace, data.frame(round = r, problem = which(!done),
                                     primal = primal[!done], dual = dual[!done],
                                     gap = gap[!done]))
    newly <- !done & gap <= gap_tol * abs(primal)
    iter[newly] <- r - 1L
    n_sv[newly] <- acc$n_sv0[newly]
    done <- done | newly
    if (all(done)) break
    # problems that converged keep their weights: their chunks' updates are
    # discarded, and so are the matching changes of the dual variables (the
    # next rounds leave them out)
    if (any(done)) {
      acc$dw[, done] <- 0
      for (i in seq_len(K)) alpha[[i]] <- cocoa_keep_alpha(alpha[[i]], per[[i]]$alpha, done)
    }
    w <- w + acc$dw
    n_sv[!done] <- acc$n_sv[!done]
  }
  list(w = w, iter = iter, converged = done, trace = trace, n_sv = n_sv, np = np,
       pairs = pairs)
}

# The dual variables of a chunk after a round, with those of converged
# problems restored to their values before it.
cocoa_keep_alpha <- function(new, old, done) {
  if (is.null(old)) old <- lapply(new, function(a) a * 0)
  new[done] <- old[done]
  new
}

# A chunk's features (transposed, D x n), classes and binary problems,
# kept on the worker between passes of one fit (chunk_cached()) so that a
# round costs the local solver, not the features.
svm_chunk_data <- function(raw, i, y, names, map, scaling, levels, spec, fold_seed, token,
                           nthreads) {
  chunk_cached(token, i, function() {
    xy <- chunk_xy(raw, y, names)
    cl <- chunk_classes(xy$y, levels, y)
    zt <- rff_features_t(map, rff_apply_scaling(xy$x, scaling), nthreads)
    # the squared norms of the rows' features, for every round's solver
    list(zt = zt, norms = colSums(zt^2), cl = cl, pr = svm_chunk_problems(cl, spec, fold_seed))
  })
}

# The binary problems of a chunk, as in memory: the fit's, then for each
# fold the same problems without that fold's rows (a problem may have no
# rows in a chunk).
svm_chunk_problems <- function(cl, spec, fold_seed) {
  probs <- svm_problems(cl, spec$k, spec$multiclass, spec$cost * spec$cw[cl], spec$cost, NULL)
  parts <- probs$parts
  folds <- NULL
  if (spec$nfolds > 0L) {
    folds <- with_seed(fold_seed, svm_chunk_folds(cl, spec$k, spec$nfolds))
    for (f in seq_len(spec$nfolds)) {
      for (p in probs$parts) {
        keep <- folds[p$rows] != f
        parts[[length(parts) + 1L]] <- list(rows = p$rows[keep], sign = p$sign[keep],
                                            cost = p$cost[keep])
      }
    }
  }
  c(svm_concatenate(parts), list(pairs = probs$pairs, folds = folds, np = probs$n))
}

# Stratified folds within a chunk: the rows of each class dealt round the
# folds in a random order (svm_folds() without its check for tiny classes,
# which concerns the whole data, not a chunk).
svm_chunk_folds <- function(cl, k, nfolds) {
  fold <- integer(length(cl))
  for (c in seq_len(k)) {
    idx <- which(cl == c)
    if (length(idx) > 0L) fold[idx] <- sample(rep_len(seq_len(nfolds), length(idx)))
  }
  fold
}

# A chunk's round: the local solver on the problems still 'active' (the
# others keep their dual variables and report nothing).
cocoa_chunk_task <- function(raw, i, y, names, map, scaling, levels, spec, loss, sigma,
                             passes, tol, token, nthreads, w, active, alpha, seed,
                             fold_seed) {
  dat <- svm_chunk_data(raw, i, y, names, map, scaling, levels, spec, fold_seed, token,
                        nthreads)
  pr <- dat$pr
  offs <- pr$offsets
  nprob <- length(offs) - 1L
  span <- function(p) seq.int(offs[p] + 1L, length.out = offs[p + 1L] - offs[p])
  split_alpha <- function(a) lapply(seq_len(nprob), function(p) a[span(p)])
  a0 <- if (is.null(alpha)) numeric(length(pr$rows)) else unlist(alpha, use.names = FALSE)
  on <- which(active)
  sub <- unlist(lapply(on, span))
  res <- with_seed(seed, .Call(C_svm_local, dat$zt, pr$rows[sub],
                               c(0L, cumsum(diff(offs)[on])), pr$sign[sub], pr$cost[sub],
                               loss, 1, w[, on, drop = FALSE], a0[sub], sigma, passes, tol,
                               TRUE, dat$norms, nthreads))
  a1 <- a0
  a1[sub] <- res$alpha
  full <- function(v) { out <- numeric(nprob); out[on] <- v; out }
  dw <- matrix(0, nrow(w), nprob)
  dw[, on] <- res$dw
  list(alpha = split_alpha(a1), dw = dw,
       loss = full(cocoa_start_loss(dat$zt, pr, on, w, loss, nthreads)), asum = full(res$asum),
       a2 = full(res$a2), pairs = pr$pairs,
       n_sv = vapply(split_alpha(a1), function(a) sum(a > 0), 0L),
       n_sv0 = vapply(split_alpha(a0), function(a) sum(a > 0), 0L))
}

# The chunk's share of the primal loss at the round's starting weights w,
# sum_i C_i xi_i(w) for each problem in 'on' (hinge: xi = max(0, m); squared
# hinge: max(0, m)^2; m = 1 - y_i (w'z_i + w_bias)), from one product of
# the weights of all these problems with the chunk's features.
cocoa_start_loss <- function(zt, pr, on, w, loss, nthreads) {
  nf <- nrow(zt)
  M <- .Call(C_matprod, t(w[seq_len(nf), on, drop = FALSE]), zt, nthreads)
  vapply(seq_along(on), function(j) {
    idx <- seq.int(pr$offsets[on[j]] + 1L, length.out = pr$offsets[on[j] + 1L] - pr$offsets[on[j]])
    m <- pmax(0, 1 - pr$sign[idx] * (M[j, pr$rows[idx]] + w[nf + 1L, on[j]]))
    sum(pr$cost[idx] * if (loss == 1L) m else m^2)
  }, 0)
}

# The last pass on a chunk: its correct training classes, and for the
# folds the held-out decision values of its rows (from the problems
# trained without their fold) with their classes, or without folds the
# decision values of its rows among calibration_subset()'s (the chunk's
# rows are 'first' onwards of 'total').  Frees the chunk's cache.
svm_final_chunk_task <- function(raw, i, y, fit, spec, w, token, nthreads, total, fold_seed,
                                 first) {
  dat <- svm_chunk_data(raw, i, y, fit$input$names, fit$map, fit$scaling, fit$levels, spec,
                        fold_seed, token, nthreads)
  chunk_cache_release(token, i)
  nf <- fit$n_features
  np <- ncol(fit$weights) - (fit$k == 2L)
  n <- ncol(dat$zt)
  # the decision values of the fit and of every fold's problems, by one
  # product over the chunk's features (n x columns of W)
  W <- rbind(fit$weights, fit$intercept)[, seq_len(np), drop = FALSE]
  if (spec$nfolds > 0L) W <- cbind(W, w[, np + seq_len(np * spec$nfolds), drop = FALSE])
  all <- t(.Call(C_matprod, t(W[seq_len(nf), , drop = FALSE]), dat$zt, nthreads) + W[nf + 1L, ])
  dec <- all[, seq_len(np), drop = FALSE]
  if (fit$k == 2L) dec <- cbind(dec, -dec)
  out <- list(correct = sum(as.integer(svm_classes(fit, dec)) == dat$cl), n = n,
              heldout = NULL, cl = NULL, train = NULL, train_cl = NULL)
  if (spec$nfolds == 0L) {
    keep <- calibration_subset(total, first, n)
    out$train <- dec[keep, , drop = FALSE]
    out$train_cl <- dat$cl[keep]
  }
  if (spec$nfolds > 0L) {
    folds <- dat$pr$folds
    held <- matrix(NA_real_, n, np)
    for (f in seq_len(spec$nfolds)) {
      idx <- which(folds == f)
      if (length(idx)) held[idx, ] <- all[idx, np * f + seq_len(np), drop = FALSE]
    }
    out$heldout <- held
    out$cl <- dat$cl
  }
  out
}

svm_final_combine <- function(acc, p, i) {
  if (is.null(acc)) return(p)
  list(correct = acc$correct + p$correct, n = acc$n + p$n,
       heldout = rbind(acc$heldout, p$heldout), cl = c(acc$cl, p$cl),
       train = rbind(acc$train, p$train), train_cl = c(acc$train_cl, p$train_cl))
}
