# rff_ridge() on data in chunks (see ?chunked_fits, R/distributed.R).

# Ridge regression: Zc'Zc, Zc'Yc and the means per chunk, combined in chunk
# order by the pairwise update, then the same solve as in memory.  The
# choice of lambda is the in-memory one: GCV from the moments, and where
# the criterion asks for it, exact leave-one-out from one more pass, each
# chunk's rows through the in-memory routine (ridge_loo_rows()).

#' @rdname chunked_fits
#' @export
rff_ridge.data_chunks <- function(x, y, kernel = gaussian_kernel("median"), D = 1024,
                                  lambda = "auto", criterion = c("auto", "gcv", "loo"),
                                  scale = TRUE, seed = NULL, map = NULL,
                                  precision = c("auto", "double", "single"),
                                  nthreads = chunks_threads(), ...) {
  check_no_dots(..., .who = "rff_ridge()")
  scale_given <- !missing(scale)
  y <- check_chunk_y(y)
  check_kernel(kernel)
  D <- check_count(D, "D")
  lambda <- ridge_check_lambda(lambda)
  criterion <- check_choice(criterion, c("auto", "gcv", "loo"), "criterion")
  precision <- check_precision(precision)
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  if (!is.null(map)) D <- map_size(map)
  nthreads <- check_threads(nthreads)
  what <- "rff_ridge"
  st <- chunked_setup(x, y, kernel, D, scale, scale_given, map, seed, what)
  map <- st$map
  nf <- map$n_features
  check_allocation(nf, nf, "the normal equations", arg = "D")
  check_memory(list("the moments Z'Z" = c(nf, nf), "their eigenvectors" = c(nf, nf),
                    "the Cholesky factor" = c(nf, nf)), "rff_ridge() on chunks", "D")
  args <- list(y = y, names = st$input$names, map = map, scaling = st$scaling,
               levels = st$resp$levels, nthreads = nthreads)
  single <- ridge_single(precision, sum(st$rows), nf, lambda, NULL)
  ne <- chunks_apply(x, ridge_chunk_task, c(args, list(single = single)), what,
                     combine = moments_combine)
  # the in-memory solve and choice on the combined moments
  sys <- c(list(side = "primal", single = single), ne)
  sys$rows <- ne$n
  loo <- function(spec, grid) {
    chunks_apply(x, ridge_loo_chunk_task,
                 c(args, list(spec = spec, sys = sys[c("side", "zbar", "ybar", "n")],
                              grid = grid)),
                 what, combine = chunks_add)
  }
  chosen <- ridge_choose(sys, lambda, criterion, loo, NULL, nthreads, ne$n)
  lambda <- chosen$lambda
  path <- chosen$path
  sol <- ridge_solve(sys, ne$n * lambda, nthreads)
  beta <- sol$beta
  fit <- new_rff_ridge(sol, st$resp, map, D, lambda, path,
                       if (!is.null(path)) names(path)[3L], ne$n, st$scaling, st$input)
  fit$chunks <- list(rows = st$rows, response = y)
  fit$precision <- if (single) "single" else "double"
  if (st$resp$type == "regression") {
    # RSS = ||Yc - Zc beta||^2 from the moments, without another pass
    rss <- max(0, ne$yy - 2 * sum(beta * ne$zy) + sum(beta * (ne$zz %*% beta)))
    fit$rmse <- sqrt(rss / ne$n)
    fit$r.squared <- if (ne$yy > 0) 1 - rss / ne$yy else NA_real_
  } else {
    # one more pass: the training accuracy, and the scores the calibration fits
    tr <- chunked_training_scores(fit, x, y, st$rows, nthreads, what)
    fit$accuracy <- tr$correct / tr$n
    fit$calibration <- calibrate_scores(tr$scores, factor(fit$levels[tr$cls], levels = fit$levels),
                                        source = "training")
  }
  fit
}

# A chunk's centred moments: list(zz, zy, zbar, ybar, n, yy), through the
# same stream over row blocks as the in-memory fit.
ridge_chunk_task <- function(raw, i, y, names, map, scaling, levels, nthreads, single) {
  xy <- chunk_xy(raw, y, names)
  xs <- rff_apply_scaling(xy$x, scaling)
  Y <- chunk_targets(xy$y, levels, y)
  n <- nrow(xs)
  blocks <- row_blocks(n, ridge_block_rows(n, map$n_features))
  block <- function(b) {
    idx <- blocks[[b]]
    list(transform_features(map, xs[idx, , drop = FALSE], nthreads), Y[idx, , drop = FALSE])
  }
  ne <- moments_fold(block, length(blocks), nthreads, single)
  ne$yy <- colSums(sweep(Y, 2L, ne$ybar, check.margin = FALSE)^2)
  ne
}

# A chunk's leave-one-out sums for the grid, centred on the whole data's
# means (sys holds them and n).
ridge_loo_chunk_task <- function(raw, i, y, names, map, scaling, levels, nthreads, spec, sys,
                                 grid) {
  xy <- chunk_xy(raw, y, names)
  xs <- rff_apply_scaling(xy$x, scaling)
  ridge_loo_rows(spec, sys, grid, map, xs, chunk_targets(xy$y, levels, y), NULL, nthreads)
}

# Pairwise combination of centred moments (moments_merge()).
moments_combine <- function(a, b, i = NULL) {
  if (is.null(a)) return(b)
  z <- moments_merge(a$n, a$zbar, b$n, b$zbar)
  y <- moments_merge(a$n, a$ybar, b$n, b$ybar)
  list(zz = a$zz + b$zz + z$f * tcrossprod(z$delta),
       zy = a$zy + b$zy + z$f * tcrossprod(z$delta, y$delta),
       zbar = z$mean, ybar = y$mean, n = z$n, yy = a$yy + b$yy + z$f * y$delta^2)
}

