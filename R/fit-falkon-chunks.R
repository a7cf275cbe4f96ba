# falkon() on data_chunks(): the in-memory algorithm with its passes over
# the rows spread over the chunks.  R only reads chunks, schedules them
# through future.apply (chunks_apply(), R/chunks.R) and folds their pass
# states in chunk order (C_falkon_pass_fold); each chunk's part of
# K_nm' (K_nm U + V) is the C routine of the in-memory pass (src/falkon.c),
# and the solver is the in-memory one (falkon_cg(), R/falkon-solve.R).

#' FALKON on data in chunks
#'
#' `falkon()` on a [data_chunks()] source fits the same model as on the
#' rows held in memory, reading each chunk where it is processed.
#'
#' **The passes.**  A survey pass gives the rows, the standardisation and
#' the classes; the held-out slice, the centres (uniform rows of the
#' training part) and, for a bandwidth rule, the evenly spaced rows the
#' rule looks at are then drawn by row number exactly as the in-memory fit
#' draws them (from R's generator, so `set.seed()` or `seed` reproduces the
#' fit) and fetched in a pass.  The right-hand side takes one pass, and
#' every conjugate-gradient iteration one more (or one pass forms
#' \eqn{H = K^T K} when there are few centres and many right-hand sides):
#' each chunk computes its part of \eqn{K^T K U} for its training rows with
#' the C routine of the in-memory fit, on its worker.
#'
#' **The same doubles as in memory.**  A pass sums over the rows in a
#' fixed order that depends on the rows' numbers only: groups of 1024
#' consecutive training rows (fewer with more than 1024 centres, down to 64,
#' so that a group's kernel rows stay within 8 MB of cache; the size
#' depends on the number of centres alone), each summed in row order, then
#' the groups' sums added along a fixed binary tree over the group numbers.
#' The in-memory pass does the same, whatever its threads and block size.
#' A chunk returns the tree nodes of its complete groups and, for a group
#' it shares with a neighbouring chunk, that group's rows (at most 1023
#' rows at each end); this session finishes those groups with the same kernel
#' evaluation and product, and folds the chunks' nodes in chunk order as
#' they arrive.  So the fit equals the fit of [falkon()] on the rows bound
#' together, bit for bit, under every plan (sequential, multisession, cluster,
#' future.batchtools) and for any chunk sizes, while the chunks of a pass
#' run at once.  The standardisation is the in-memory one to the bit (exact
#' column sums).  `passes = "chained"` runs the chunks of a pass one at a
#' time (the same fit, one worker busy at a time).
#'
#' **What it needs.**  The data's own columns, the response column `y` in
#' every chunk.  A worker holds one chunk and a block of rows times the
#' number of centres; this session holds the centres, the held-out rows
#' (at most `control$max_validation`), their kernel block, the
#' \eqn{m \times m} factors and, while a pass is folded, the states of a
#' wave of chunks (each up to \eqn{2 \log_2} of its groups tree nodes of
#' \eqn{m \times k}; with many columns the waves are shortened to keep
#' them under about 1 GB).
#'
#' **Defaults.**  The in-memory defaults, computed by the in-memory code:
#' the bandwidth rule on the same rows, the held-out slice choosing
#' `lambda` and the iterations, and the default number of centres grown
#' from `control$start_centers` while the held-out error improves (each
#' size fetches its new centres in one pass).
#'
#' Both losses: the logistic loss's Newton steps take their passes (and
#' the scores \eqn{K\alpha} of the training rows, bound in chunk order) the
#' same way.  This session holds the training rows' targets (one column per
#' class) as the in-memory fit does.
#'
#' **Landmarks.**  The rules that draw from a pool of rows (`"kmeans"`,
#' `"rpcholesky"`, and `"auto"`'s comparison) fetch that pool in one pass,
#' the rows the in-memory fit's pool holds, so they choose the same centres.
#'
#' **Limits.**  The leverage landmarks and case weights need the rows in
#' memory.
#'
#' @param x A [data_chunks()] source.
#' @param y The name of the response column, present in every chunk.
#' @param kernel,m,lambda,iter,scale,seed,control As for [falkon()].
#' @param tune As for [falkon()]: the learning's rows (at most 12000, the
#'   in-memory fit's draw) are fetched from the chunks in one pass, so the
#'   learned kernel and \eqn{\lambda} are the in-memory fit's; the fits
#'   at the learned and the rule's kernel that the held-out slice judges
#'   both run on the chunks.
#' @param loss As for [falkon()].
#' @param landmarks As for [falkon()], but not `"leverage"`.
#' @param weights Must be `NULL` on chunks.
#' @param passes `"parallel"` (the chunks of a pass at once) or `"chained"`
#'   (one after another); both give the in-memory fit to the bit, see
#'   Details.
#' @param nthreads Threads per worker, see [data_chunks()].
#' @param ... Nothing (unknown arguments are an error).
#' @return A `"falkon"` fit, as from [falkon()], with `chunks` (the rows of
#'   each chunk and the response's name); the training RMSE or accuracy
#'   comes from one more pass.
#' @examples
#' set.seed(1)
#' pieces <- lapply(1:3, function(i) {
#'   a <- runif(300, -3, 3)
#'   data.frame(a = a, b = runif(300), y = sin(a) + rnorm(300, sd = 0.1))
#' })
#' fit <- falkon(data_chunks(pieces), y = "y", m = 50, seed = 1)
#' fit
#' mem <- falkon(do.call(rbind, pieces)[c("a", "b")], do.call(rbind, pieces)$y,
#'               m = 50, seed = 1)
#' identical(fit$alpha, mem$alpha)
#' @export
falkon.data_chunks <- function(x, y, kernel = gaussian_kernel("sigest"), m = NULL,
                               lambda = "auto", loss = c("squared", "logistic"),
                               landmarks = c("auto", "uniform", "kmeans", "leverage", "rpcholesky"),
                               iter = "auto",
                               weights = NULL, scale = TRUE, seed = NULL, control = list(),
                               tune = c("none", "auto", "iso", "ard"),
                               nthreads = chunks_threads(), passes = c("parallel", "chained"),
                               ...) {
  take_renamed(environment(), "falkon()", ...)
  y <- check_chunk_y(y)
  loss <- check_choice(loss, c("squared", "logistic"), "loss")
  landmarks <- check_choice(landmarks, c("auto", landmark_rules), "landmarks")
  if (landmarks == "leverage") {
    stop_arg("landmarks", "= \"leverage\" needs the rows in memory; on data_chunks() ",
             "use \"uniform\", \"kmeans\" or \"rpcholesky\"")
  }
  if (!is.null(weights)) stop_arg("weights", "are not available on data_chunks()")
  check_kernel(kernel)
  lambda <- falkon_check_lambda(lambda)
  iter <- if (identical(iter, "auto")) "auto" else check_count(iter, "iter")
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  control <- falkon_control_list(control)
  nthreads <- check_threads(nthreads)
  passes <- check_choice(passes, c("parallel", "chained"), "passes")
  what <- "falkon"

  sv <- falkon_keep_rng(chunks_survey(x, y, what))
  info <- survey_response(sv, y)
  control <- falkon_resolve_objective(control, info$type)
  n <- sv$n
  grow <- is.null(m)
  m <- falkon_check_centers(m, matrix(0, 0L, sv$d), n)
  tune <- falkon_check_tune(tune, kernel, sv$d)
  scaling <- if (scale) survey_scaling(sv) else NULL
  input <- survey_input(sv, n)
  ctx <- list(chunks = x, y = y, names = sv$names, d = sv$d, scaling = scaling,
              levels = info$levels,
              first = cumsum(c(0, sv$rows))[seq_along(sv$rows)], rows = sv$rows,
              nthreads = nthreads, block_rows = control$block_rows, what = what,
              chained = passes == "chained")

  # the bandwidth rule looks at evenly spaced rows (no random draw), as in memory
  if (is.character(kernel$sigma)) {
    bw <- if (n > 1000L) unique(round(seq(1, n, length.out = 1000L))) else seq_len(n)
    kernel <- resolve_kernel(kernel, falkon_chunk_fetch(ctx, bw)$x)
  }
  # the learned kernel and lambda (tune) on the rows the in-memory fit
  # draws, one length scale per input folded into the standardisation
  seed <- falkon_tune_seed(seed, tune)
  loo <- falkon_loo_applies(n, loss, lambda, iter, control)
  fk <- falkon_tune_chunks(ctx, n, sv$d, kernel, tune, lambda, iter, m, control, seed,
                           info$levels, y, loo)
  fit_at <- function(k) {
    falkon_fit_chunked(ctx, k, n, info, y, m, grow, loss, landmarks, lambda, iter, seed,
                       nthreads, loo)
  }
  got <- falkon_fit_judged(fk, fit_at)
  out <- got$out
  scaling <- got$scaling
  fit <- new_falkon(out, list(type = info$type, levels = info$levels), loss, scaling, input, n,
                    NULL, falkon_landmarks_taken(m, landmarks, out))
  fit$tuning <- got$report
  fit$chunks <- list(rows = sv$rows, response = y)
  stat <- falkon_keep_rng(chunks_apply(x, falkon_chunk_score_task,
                                       list(object = fit, y = y, nthreads = nthreads), what,
                                       combine = chunks_add))
  if (info$type == "regression") fit$rmse <- sqrt(stat[1L] / stat[2L])
  else fit$accuracy <- stat[1L] / stat[2L]
  fit$call <- generic_call(match.call())
  fit
}

# falkon()'s fit on data_chunks() at one kernel fk (falkon_tune_chunks():
# kernel, lambda, control, scaling), with the in-memory fit's draws in its
# order, by row number (the passes leave the random stream alone):
# list(out, scaling, kernel), as falkon_fit_memory().
falkon_fit_chunked <- function(ctx, fk, n, info, y, m, grow, loss, landmarks, lambda, iter,
                               seed, nthreads, loo = FALSE) {
  kernel <- fk$kernel
  control <- fk$control
  ctx$scaling <- scaling <- fk$scaling
  if (loo) {
    # a small set (falkon_loo_applies()): all its rows in memory, the in-memory fit's worker
    got <- falkon_chunk_fetch(ctx, seq_len(n))
    cls <- if (!is.null(info$levels)) chunk_classes(got$y, info$levels, y)
    out <- with_seed(seed, falkon_fit_loo(got$x, chunk_targets(got$y, info$levels, y), cls,
                                          rep(1, n), info$levels, m, kernel, landmarks, scaling,
                                          control$loo_grid, nthreads))
    return(list(out = out, scaling = scaling, kernel = kernel))
  }
  out <- with_seed(seed, {
    # the held-out slice the arguments given ask for: a learned lambda keeps
    # it, and with it the calibrated probabilities
    split <- falkon_split(n, lambda, iter, control)
    ctx$drop <- falkon_chunk_rows(ctx, split$valid)
    ntr <- length(split$train)
    got <- falkon_chunk_fetch(ctx, split$valid, train_y = TRUE)
    Y <- chunk_targets(got$ytrain, info$levels, y)
    wt <- rep(1, ntr)
    val <- NULL
    if (length(split$valid)) {
      val <- list(x = got$x, Y = chunk_targets(got$y, info$levels, y), w = rep(1, length(got$y)),
                  cls = if (!is.null(info$levels)) match(as.character(got$y), info$levels))
    }
    ctx$single <- falkon_single(control, ntr, if (is.matrix(m)) nrow(m) else m, ncol(Y))
    rows <- falkon_rows_chunks(ctx)
    centres_at <- function(idx) {   # training rows at positions idx
      g <- split$train[idx]
      o <- sort(unique(g))
      cm <- falkon_chunk_fetch(ctx, o)$x[match(g, o), , drop = FALSE]
      dimnames(cm) <- NULL
      cm
    }
    # the training rows as the landmark rules read them: each fetch one pass
    train <- list(n = ntr, d = ctx$d, fetch = centres_at)
    given <- function(idx, k) {     # uniform draws, the rule's or the centres given
      if (is.null(idx)) return(falkon_centres(k, train, kernel, landmarks, scaling, nthreads))
      centres_at(idx)
    }
    res <- falkon_fit_centres(m, grow, loss, landmarks, train, ntr, given, function() NULL,
                              kernel, rows, Y, wt, val, fk$lambda, iter, control, nthreads)
    res$precision <- if (rows$single) "single" else "double"
    res$calibration <- falkon_calibrate(res, val, info$levels)
    if (is.null(res$calibration) && loss == "squared" && !is.null(info$levels)) {
      res$calibration <- falkon_calibrate_training(res, ntr, function(idx) {
        g <- split$train[idx]
        o <- sort(unique(g))
        got <- falkon_chunk_fetch(ctx, o)
        at <- match(g, o)
        list(x = got$x[at, , drop = FALSE], cls = chunk_classes(got$y, info$levels, y)[at])
      }, wt, info$levels, nthreads)
    }
    res$heldout_loss <- falkon_heldout_losses(res$valid_scores, val, loss)
    res
  })
  list(out = out, scaling = scaling, kernel = kernel)
}

# The training rows of a chunked fit as the fits of R/falkon-fit.R see them
# (falkon_rows()): $n, $pass(prep, U, V, w, keep_ku) and $predict(prep,
# alpha), each one pass over the chunks, and $carry_scores().  V and w
# (rows in training order) are cut by chunk and sent to the chunk's worker
# only.  A chunk's part of a pass is the state of src/falkon.c's pass over
# its rows (numbered as the training rows of the whole fit): the sums of
# its complete row groups and the rows of the groups it shares with its
# neighbours (their x rows, at most 1023 at each end); the states are
# folded in chunk order as they come (C_falkon_pass_fold) and finished into
# the in-memory result, bit for bit.  K U and K alpha are bound in order.
falkon_rows_chunks <- function(ctx) {
  counts <- ctx$rows - lengths(ctx$drop)
  start <- cumsum(c(0, counts))
  total <- sum(counts)
  slice <- function(v, c) {
    if (is.null(v)) return(NULL)
    idx <- start[c] + seq_len(counts[c])
    if (is.matrix(v)) v[idx, , drop = FALSE] else v[idx]
  }
  run <- function(prep, U, V, w, keep_ku, predict = NULL) {
    per <- lapply(seq_along(ctx$rows), function(c) {
      list(drop = ctx$drop[[c]], V = slice(V, c), w = slice(w, c), row0 = start[c])
    })
    args <- list(names = ctx$names, scaling = ctx$scaling,
                 lite = prep[c("centres", "code", "par")], U = U, keep_ku = keep_ku,
                 alpha = predict, nthreads = ctx$nthreads, block_rows = ctx$block_rows,
                 y = ctx$y, total = total, single = isTRUE(ctx$single))
    if (!is.null(predict)) {
      parts <- falkon_keep_rng(chunks_apply(ctx$chunks, falkon_pass_task, args, ctx$what,
                                            per_chunk = per))
      return(do.call(rbind, parts))
    }
    fold <- function(acc, part, i) {
      ku <- attr(part, "ku")
      state <- .Call(C_falkon_pass_fold, acc$state, part, as.double(total), prep$centres,
                     prep$code, prep$par)
      list(state = state, ku = if (keep_ku) c(acc$ku, list(ku)))
    }
    # "chained": one chunk at a time (a wave of one); the same result
    k <- if (is.null(U)) ncol(V) else ncol(U)
    wave <- if (ctx$chained) 1L else falkon_pass_wave(max(counts), prep$m, k)
    acc <- falkon_keep_rng(chunks_apply(ctx$chunks, falkon_pass_task, args, ctx$what,
                                        combine = fold, init = list(state = NULL, ku = NULL),
                                        per_chunk = per, wave = wave))
    out <- .Call(C_falkon_pass_finish, acc$state, NULL)
    if (keep_ku) attr(out, "ku") <- do.call(rbind, acc$ku)
    out
  }
  list(n = total, single = isTRUE(ctx$single),
       # a chunked fit keeps no fitted values
       carry_scores = function(prep) FALSE,
       pass = function(prep, U = NULL, V = NULL, w = NULL, keep_ku = FALSE) {
         run(prep, U, V, w, keep_ku)
       },
       predict = function(prep, alpha) run(prep, NULL, NULL, NULL, FALSE, predict = alpha))
}

# Chunks per wave of a pass: a chunk's state holds up to 2 log2(groups) + 2
# tree nodes of m x k doubles and two partial groups (src/falkon.c); with
# many columns (H = K' K, k = m) a wave's states are kept under about 1 GB
# in this session, but with at least two chunks per worker.
falkon_pass_wave <- function(rows, m, k, group = 1024, budget = 2^30) {
  nodes <- 2 * ceiling(log2(rows / group + 2)) + 2
  bytes <- 8 * (nodes * m * k + 2 * group * (m + k))
  wave <- chunks_wave()
  workers <- chunks_workers()
  least <- if (is.finite(workers)) 2L * workers else wave
  as.integer(max(1, min(wave, max(least, floor(budget / bytes)))))
}

# Global row numbers 'idx' as local row numbers per chunk (a list, one
# entry per chunk).
falkon_chunk_rows <- function(ctx, idx) {
  chunk <- findInterval(idx - 1, ctx$first)
  lapply(seq_along(ctx$rows), function(c) idx[chunk == c] - ctx$first[c])
}

# One pass fetching the rows 'index' (sorted global numbers), scaled, with
# their responses, and the column sums of the training rows' targets (the
# rows not held out).
falkon_chunk_fetch <- function(ctx, index, train_y = FALSE) {
  want <- falkon_chunk_rows(ctx, index)
  per <- lapply(seq_along(ctx$rows), function(c) list(want = want[[c]], drop = ctx$drop[[c]]))
  if (is.null(ctx$drop)) per <- lapply(want, function(w) list(want = w, drop = integer()))
  parts <- falkon_keep_rng(chunks_apply(ctx$chunks, falkon_fetch_task,
                                        list(y = ctx$y, names = ctx$names, train_y = train_y),
                                        ctx$what, per_chunk = per))
  list(index = index,
       x = rff_apply_scaling(do.call(rbind, lapply(parts, `[[`, "x")), ctx$scaling),
       y = unlist(lapply(parts, `[[`, "y"), use.names = FALSE),
       ytrain = unlist(lapply(parts, `[[`, "ytrain"), use.names = FALSE))
}

falkon_fetch_task <- function(raw, i, y, names, train_y, want, drop) {
  xy <- chunk_xy(raw, y, names)
  r <- if (is.numeric(xy$y)) xy$y else as.character(xy$y)
  list(x = xy$x[want, , drop = FALSE], y = r[want],
       ytrain = if (train_y) { if (length(drop)) r[-drop] else r })
}

# A chunk's part of a pass, on its worker: the state of the pass
# K' diag(w) (K U + V) over its training rows, rows row0 + 1 .. of the
# pass's 'total' (the in-memory routine), or K_c alpha with 'alpha'.
falkon_pass_task <- function(raw, i, names, scaling, lite, U, keep_ku, alpha, nthreads,
                             block_rows, y, total, drop, V, w, row0, single = FALSE) {
  xs <- rff_apply_scaling(chunk_xy(raw, y, names)$x, scaling)
  if (length(drop)) xs <- xs[-drop, , drop = FALSE]
  if (!is.null(alpha)) return(falkon_kernel_predict(lite, xs, alpha, nthreads, block_rows))
  .Call(C_falkon_knm_part, xs, lite$centres, lite$code, lite$par, U, V, w,
        as.double(block_rows), keep_ku, nthreads,
        as.double(row0), as.double(total), single)
}

# A pass leaves R's random stream as it was (a scheduler such as
# future.batchtools draws from it in this session), so that the fit's draws
# are those of the in-memory fit under every plan.
falkon_keep_rng <- function(expr) {
  restore <- rng_restorer()
  on.exit(restore())
  expr
}

# The training error of a chunk: c(squared error, rows) or c(right, rows).
falkon_chunk_score_task <- function(raw, i, object, y, nthreads) {
  # the chunk's design matrix (factors coded as the fit's), scored as
  # predict() scores its rows: predict() itself wants a formula fit's data
  # frame, not the coded matrix
  xy <- chunk_xy(raw, y, object$input$names)
  f <- falkon_scores(object, rff_apply_scaling(xy$x, object$scaling), nthreads)
  if (object$type == "regression") c(sum((drop(f) - xy$y)^2), nrow(f))
  else c(sum(as.character(falkon_score_classes(object, f)) == as.character(xy$y)), nrow(f))
}
