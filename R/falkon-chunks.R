# falkon() on data_chunks(): the in-memory algorithm with its passes over
# the rows spread over the chunks.  R only reads chunks, schedules them
# through future.apply (chunks_apply(), R/chunks.R) and adds their m x k
# results in chunk order; each chunk's K_nm' (K_nm U + V) is the same C
# routine as in memory (falkon_knm_apply(), src/falkon.c), and the solver
# is the in-memory one (falkon_cg(), R/falkon-solve.R).

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
#' every conjugate-gradient iteration one more: each chunk computes
#' \eqn{K_c^T K_c U} for its training rows with the C routine of the
#' in-memory fit, on its worker, and the results are added in chunk order.
#' So the fit is the same, bit for bit, under every plan (sequential,
#' multisession, cluster, future.batchtools), and equals the fit of
#' [falkon()] on the rows bound together up to rounding (the sums over rows
#' are grouped by chunk; about 1e-13 relative in practice).
#'
#' **What it needs.**  The data's own columns, the response column `y` in
#' every chunk.  A worker holds one chunk and a block of rows times the
#' number of centres; this session holds the centres, the held-out rows
#' (at most `control$max_validation`), their kernel block and the
#' \eqn{m \times m} factors.
#'
#' **Defaults.**  The in-memory defaults, computed by the in-memory code:
#' the bandwidth rule on the same rows, the held-out slice choosing
#' `lambda` and the iterations, and the default number of centres grown
#' from `control$start_centers` while the held-out error improves (each
#' size fetches its new centres in one pass).
#'
#' **Limits.**  The squared loss (regression, and classification by one-hot
#' targets) with uniform centres; the logistic loss, the k-means and
#' leverage landmarks and case weights need the rows in memory.
#'
#' @param x A [data_chunks()] source.
#' @param y The name of the response column, present in every chunk.
#' @param kernel,centers,lambda,iter,scale,seed,control As for [falkon()].
#' @param loss,landmarks Only `"squared"` and `"uniform"` on chunks.
#' @param weights Must be `NULL` on chunks.
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
#' fit <- falkon(data_chunks(pieces), y = "y", centers = 50, seed = 1)
#' fit
#' mem <- falkon(do.call(rbind, pieces)[c("a", "b")], do.call(rbind, pieces)$y,
#'               centers = 50, seed = 1)
#' max(abs(fit$alpha - mem$alpha)) / max(abs(mem$alpha))
#' @export
falkon.data_chunks <- function(x, y, kernel = gaussian_kernel("sigest"), centers = NULL,
                               lambda = "auto", loss = c("squared", "logistic"),
                               landmarks = c("uniform", "kmeans", "leverage"), iter = "auto",
                               weights = NULL, scale = TRUE, seed = NULL, control = list(),
                               nthreads = chunks_threads(), ...) {
  check_no_dots(...)
  y <- check_chunk_y(y)
  loss <- check_choice(loss, c("squared", "logistic"), "loss")
  if (loss != "squared") {
    stop_arg("loss", "= \"", loss, "\" needs the rows in memory; on data_chunks() falkon() ",
             "fits the squared loss")
  }
  landmarks <- check_choice(landmarks, c("uniform", "kmeans", "leverage"), "landmarks")
  if (landmarks != "uniform") {
    stop_arg("landmarks", "= \"", landmarks, "\" needs the rows in memory; on data_chunks() ",
             "the centres are uniform rows")
  }
  if (!is.null(weights)) stop_arg("weights", "are not available on data_chunks()")
  check_kernel(kernel)
  lambda <- falkon_check_lambda(lambda)
  iter <- if (identical(iter, "auto")) "auto" else check_count(iter, "iter")
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  control <- falkon_control_list(control)
  nthreads <- check_threads(nthreads)
  what <- "falkon"

  sv <- falkon_keep_rng(chunks_survey(x, y, what))
  info <- survey_response(sv, y)
  n <- sv$n
  grow <- is.null(centers)
  centers <- falkon_check_centers(centers, matrix(0, 0L, sv$d), n)
  scaling <- if (scale) survey_scaling(sv) else NULL
  input <- list(d = sv$d, names = sv$names, terms = NULL, xlevels = NULL, n = n)
  ctx <- list(chunks = x, y = y, names = sv$names, scaling = scaling, levels = info$levels,
              first = cumsum(c(0, sv$rows))[seq_along(sv$rows)], rows = sv$rows,
              nthreads = nthreads, block_rows = control$block_rows, what = what)

  # the bandwidth rule looks at evenly spaced rows (no random draw), as in memory
  if (is.character(kernel$sigma)) {
    bw <- if (n > 1000L) unique(round(seq(1, n, length.out = 1000L))) else seq_len(n)
    kernel <- resolve_kernel(kernel, falkon_chunk_fetch(ctx, bw)$x)
  }
  out <- with_seed(seed, {
    # the draws of the in-memory fit, in its order, by row number
    split <- falkon_split(n, lambda, iter, control)
    rows <- falkon_rows_chunks(ctx, split, info$type)
    if (grow && length(split$valid) > 0L) {
      falkon_fit_growing(centers, rows, kernel, "uniform", lambda, iter, control, nthreads)
    } else {
      centres <- if (is.matrix(centers)) rff_apply_scaling(centers, scaling)
                 else rows$centres(sample.int(rows$n_train, min(centers, rows$n_train)))
      dimnames(centres) <- NULL
      L <- if (identical(lambda, "auto")) length(control$lambdas) else length(lambda)
      falkon_check_memory(nrow(centres), rows$n_valid, L, rows$k, control)
      falkon_fit_squared(falkon_prepare(kernel, centres, nthreads), rows, lambda, iter, control,
                         nthreads)
    }
  })
  fit <- new_falkon(out, list(type = info$type, levels = info$levels), loss, scaling, input, n,
                    NULL)
  fit$chunks <- list(rows = sv$rows, response = y)
  stat <- falkon_keep_rng(chunks_apply(x, falkon_chunk_score_task,
                                       list(object = fit, y = y, nthreads = nthreads), what,
                                       combine = function(acc, r, i) if (is.null(acc)) r else acc + r))
  if (info$type == "regression") fit$rmse <- sqrt(stat[1L] / stat[2L])
  else fit$accuracy <- stat[1L] / stat[2L]
  fit$call <- generic_call(match.call())
  fit
}

# The training rows of a chunked fit for the fits of R/falkon-fit.R (see
# falkon_rows_memory()): one pass now fetches the held-out rows and sums the
# training rows' targets; rhs() and apply() are one pass over the chunks
# each; centres() fetches rows in one pass.
falkon_rows_chunks <- function(ctx, split, type) {
  ctx$drop <- falkon_chunk_rows(ctx, split$valid)
  got <- falkon_chunk_fetch(ctx, split$valid)
  ntr <- length(split$train)
  nv <- length(split$valid)
  offset <- got$ysum / ntr
  vresp <- NULL
  if (nv > 0L) {
    Yv <- chunk_targets(got$y, ctx$levels, ctx$y)
    vresp <- list(type = type, Y = Yv, y = if (type != "regression") max.col(Yv, ties.method = "first"))
  }
  list(n_train = ntr, n_valid = nv, k = length(offset), offset = offset,
       rhs = function(prep) falkon_chunk_pass(ctx, prep, offset = offset) / ntr,
       apply = function(prep) function(U) falkon_chunk_pass(ctx, prep, U = U),
       validation = function(prep) {
         if (nv == 0L) return(NULL)
         w <- rep(1, nv)
         list(K = .Call(C_kernel_matrix, prep$code, prep$par, got$x, prep$centres, ctx$nthreads),
              w = w, error = function(f) falkon_heldout_error(f, vresp, seq_len(nv), w))
       },
       centres = function(idx) {
         g <- split$train[idx]
         o <- sort(unique(g))
         falkon_chunk_fetch(ctx, o)$x[match(g, o), , drop = FALSE]
       },
       landmarks = function(m) stop_arg("landmarks", "must be \"uniform\" on data_chunks()"))
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
falkon_chunk_fetch <- function(ctx, index) {
  want <- falkon_chunk_rows(ctx, index)
  per <- lapply(seq_along(ctx$rows), function(c) list(want = want[[c]], drop = ctx$drop[[c]]))
  if (is.null(ctx$drop)) per <- lapply(want, function(w) list(want = w, drop = integer()))
  parts <- falkon_keep_rng(chunks_apply(ctx$chunks, falkon_fetch_task,
                                        list(y = ctx$y, names = ctx$names, levels = ctx$levels),
                                        ctx$what, per_chunk = per))
  list(index = index,
       x = rff_apply_scaling(do.call(rbind, lapply(parts, `[[`, "x")), ctx$scaling),
       y = unlist(lapply(parts, `[[`, "y"), use.names = FALSE),
       ysum = Reduce(`+`, lapply(parts, `[[`, "ysum")))
}

falkon_fetch_task <- function(raw, i, y, names, levels, want, drop) {
  xy <- chunk_xy(raw, y, names)
  Y <- chunk_targets(xy$y, levels, y)
  if (length(drop)) Y <- Y[-drop, , drop = FALSE]
  r <- xy$y[want]
  list(x = xy$x[want, , drop = FALSE], y = if (is.null(levels)) r else as.character(r),
       ysum = colSums(Y))
}

# One pass: the sum over chunks, in chunk order, of K_c' (K_c U) (with U) or
# K_c' (Y_c - offset) (without), over each chunk's training rows.
falkon_chunk_pass <- function(ctx, prep, U = NULL, offset = NULL) {
  lite <- prep[c("centres", "code", "par")]
  per <- lapply(ctx$drop, function(d) list(drop = d))
  falkon_keep_rng(chunks_apply(
    ctx$chunks, falkon_pass_task,
    list(y = ctx$y, names = ctx$names, scaling = ctx$scaling, levels = ctx$levels, lite = lite,
         U = U, offset = offset, nthreads = ctx$nthreads, block_rows = ctx$block_rows),
    ctx$what, combine = function(acc, r, i) if (is.null(acc)) r else acc + r, per_chunk = per))
}

# A pass leaves R's random stream as it was (a scheduler such as
# future.batchtools draws from it in this session), so that the fit's draws
# are those of the in-memory fit under every plan.
falkon_keep_rng <- function(expr) {
  genv <- globalenv()
  had <- exists(".Random.seed", envir = genv, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = genv, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = genv)
          else if (exists(".Random.seed", envir = genv, inherits = FALSE)) {
            rm(".Random.seed", envir = genv)
          })
  expr
}

falkon_pass_task <- function(raw, i, y, names, scaling, levels, lite, U, offset, nthreads,
                             block_rows, drop) {
  xy <- chunk_xy(raw, y, names)
  xs <- rff_apply_scaling(xy$x, scaling)
  V <- NULL
  if (is.null(U)) V <- sweep(chunk_targets(xy$y, levels, y), 2L, offset, check.margin = FALSE)
  if (length(drop)) {
    xs <- xs[-drop, , drop = FALSE]
    if (!is.null(V)) V <- V[-drop, , drop = FALSE]
  }
  k <- if (is.null(U)) ncol(V) else ncol(U)
  if (nrow(xs) == 0L) return(matrix(0, nrow(lite$centres), k))
  falkon_knm_apply(lite, xs, U = U, V = V, nthreads = nthreads, block_rows = block_rows)
}

# The training error of a chunk: c(squared error, rows) or c(right, rows).
falkon_chunk_score_task <- function(raw, i, object, y, nthreads) {
  xy <- chunk_xy(raw, y, object$input$names)
  pred <- stats::predict(object, xy$x, nthreads = nthreads)
  if (object$type == "regression") c(sum((pred - xy$y)^2), length(pred))
  else c(sum(as.character(pred) == as.character(xy$y)), length(pred))
}
