# The fits and predictions on data in chunks (data_chunks(), R/chunks.R):
# per-chunk work on the workers of the user's future plan, summaries
# combined here in chunk order.

#' Fits on data in chunks
#'
#' [rff_ridge()], [rff_svm()] and [kernel_kmeans()] on data described by
#' [data_chunks()]: each chunk is read and processed by a worker of the
#' user's [future::plan()] (through [future.apply::future_lapply()]), and
#' only per-chunk summaries come back to this session.  Each fit first makes
#' one pass (the survey) for the number of rows, the column means and
#' standard deviations (`scale = TRUE`), the classes of the response and a
#' sample of at most about 1000 rows, evenly spaced in every chunk, on which
#' `sigma = "median"` is resolved and the feature map drawn; the map is then
#' sent to the workers.  The fitted objects are those of the in-memory fits,
#' without the per-row components (`fitted`, `residuals`, `cluster`,
#' `distance`): `predict(fit, chunks)` gives them, one element per chunk (or
#' one file per chunk with `output =`, a directory).  They add `chunks`, the
#' rows per chunk.
#'
#' **Ridge regression** is exact: each chunk returns \eqn{Z_c^T Z_c},
#' \eqn{Z_c^T Y_c}, the means and the sum of squares of the response about
#' its mean, centred at the chunk's own means, computed by the stream of the
#' in-memory fit; they are combined in chunk order by the pairwise update of
#' Chan, Golub and LeVeque (the centred cross-products of a union are the
#' parts' plus \eqn{n_a n_b / n \, \delta \delta^T}{n_a n_b / n delta delta'}
#' for the difference \eqn{\delta}{delta} of the means), and the same
#' Cholesky solve follows.  The training RMSE and \eqn{R^2} come from the
#' moments, \eqn{\|Y_c - Z_c\beta\|^2 = Y_c^TY_c - 2\beta^TZ_c^TY_c +
#' \beta^T Z_c^TZ_c \beta}{RSS = Yc'Yc - 2 beta'Zc'Yc + beta'Zc'Zc beta}.
#' The fit is the same, bit for bit, under every plan and number of workers
#' (the order of the sums is fixed), and agrees with the in-memory fit on the
#' row-bound data, given the same feature map and `scale`, to rounding
#' only: the in-memory fit accumulates one sum over all rows in blocks about
#' the first block's means, the chunked fit one per chunk about its own, so
#' the additions happen in a different order.  `sigma = "median"` is
#' resolved on a different sample of rows than in memory, so pass a number,
#' or a `map`, to compare the two.
#'
#' **Kernel k-means** (`method = "rff"`, or `"nystrom"` with `D` landmarks
#' drawn uniformly from the survey's sample) seeds by k-means||
#' (Bahmani et al. 2012): a first centre uniform over all rows, `rounds`
#' passes each keeping every row with probability
#' \eqn{\min(1, 2k\, d^2 / \phi)}{min(1, 2k d^2 / phi)} (\eqn{d^2} its squared
#' distance to the nearest candidate, \eqn{\phi}{phi} their sum), a pass
#' counting the rows nearest each candidate, and k-means++ on the weighted
#' candidates; then Lloyd's iterations, one pass each, every chunk returning
#' its per-cluster sums, counts and sums of squared norms.  The uniforms
#' of each chunk come from seeds drawn in this session, so the fit is the
#' same for every plan given the seed.  Given the same starting assignment
#' Lloyd's iterations visit the same clusterings as [kernel_kmeans()] in
#' memory (the distances are computed by the same code), with centres equal
#' to rounding.  Empty clusters take the row farthest from its centre, as in
#' memory.
#'
#' **The SVM** is trained by CoCoA+ (Jaggi et al. 2014, Ma et al. 2015):
#' in each round every chunk runs `passes` passes of the dual coordinate
#' descent of [rff_svm()] on its own dual variables against the current
#' weights, with the curvature scaled by the number of chunks \eqn{K}, and
#' the \eqn{K} weight updates are added.  The dual objective never
#' decreases and the iterates converge to the solution of the in-memory
#' problem; the fit stops when the duality gap, an upper bound on the
#' distance of the primal objective to its minimum, is below `tol` times the
#' primal objective.  The gap per round is kept in `trace`.  The dual
#' variables, 8 bytes per row and binary problem, are kept in this session
#' and travel with their chunks.  More chunks mean smaller steps: rounds
#' grow with \eqn{K}.  The local solver is written in R (the in-memory C
#' solver does not start from given weights), so expect about a microsecond
#' per row and feature and pass.  With more than two classes the chunked
#' SVM solves one-vs-rest problems (the in-memory default is one-vs-one),
#' and it has no `probability` or `cross`.
#'
#' @param x Data in chunks, from [data_chunks()].
#' @param y The name of the response column, present in every chunk.  For
#'   `rff_ridge()` a numeric column gives regression, a factor, character or
#'   logical column classification; for `rff_svm()` the classes.
#' @param kernel,D,lambda,scale,seed,map,cost,loss,class.weights As for the
#'   in-memory fits ([rff_ridge()], [rff_svm()], [kernel_kmeans()]); for
#'   chunks, `lambda = "auto"` (or a vector) is chosen by generalised
#'   cross-validation, which needs only the combined moments (the in-memory
#'   fit's exact leave-one-out would need another pass over the chunks).
#' @param centers For `kernel_kmeans()`, the number of clusters.
#' @param method For `kernel_kmeans()`, `"rff"` or `"nystrom"`.
#' @param nstart,iter.max Starts (each seeded anew) and Lloyd iterations per
#'   start.
#' @param rounds For `kernel_kmeans()`, the sampling passes of the k-means||
#'   seeding; for `rff_svm()`, the most outer rounds.
#' @param passes For `rff_svm()`, the local passes per chunk and round.
#' @param tol For `rff_svm()`, the stopping tolerance on the relative
#'   duality gap.
#' @param nthreads Threads per worker; by default one when the plan has
#'   several workers, else [bochner_threads()].
#' @param ... Unused.
#' @return The fitted object of the in-memory method, see Details.
#' @references Bahmani, B., Moseley, B., Vattani, A., Kumar, R. and
#'   Vassilvitskii, S. (2012). Scalable k-means++. *Proceedings of the VLDB
#'   Endowment* 5(7), 622--633.
#'
#'   Chan, T. F., Golub, G. H. and LeVeque, R. J. (1983). Algorithms for
#'   computing the sample variance: analysis and recommendations. *The
#'   American Statistician* 37(3), 242--247.
#'
#'   Ma, C., Smith, V., Jaggi, M., Jordan, M. I., Richtarik, P. and Takac, M.
#'   (2015). Adding vs. averaging in distributed primal-dual optimization.
#'   *Proceedings of the 32nd International Conference on Machine Learning*.
#' @seealso [data_chunks()], `vignette("scale-out", package = "bochner")`.
#' @examples
#' set.seed(1)
#' pieces <- lapply(1:3, function(i) {
#'   a <- runif(150, -3, 3)
#'   b <- runif(150, -3, 3)
#'   data.frame(a = a, b = b, y = sin(a) * cos(b) + rnorm(150, sd = 0.1),
#'              class = factor(ifelse(a^2 + b^2 < 4, "in", "out")))
#' })
#' reg <- lapply(pieces, function(p) p[c("a", "b", "y")])
#' cls <- lapply(pieces, function(p) p[c("a", "b", "class")])
#' fit <- rff_ridge(data_chunks(reg), y = "y", kernel = gaussian_kernel(1), D = 100,
#'                  seed = 1)
#' fit
#' # the same fit in memory, to rounding
#' all <- do.call(rbind, reg)
#' fit0 <- rff_ridge(all[c("a", "b")], all$y, map = fit$map, scale = FALSE)
#' fit1 <- rff_ridge(data_chunks(reg), y = "y", map = fit$map, scale = FALSE)
#' max(abs(fit1$weights - fit0$weights))
#'
#' km <- kernel_kmeans(data_chunks(lapply(reg, function(p) p[c("a", "b")])), 3,
#'                     gaussian_kernel(1), D = 50, seed = 1)
#' km
#'
#' svm <- rff_svm(data_chunks(cls), y = "class", kernel = gaussian_kernel(1), D = 32,
#'                seed = 1, passes = 2, tol = 0.05)
#' svm
#' tail(svm$trace, 3)
#' @name chunked_fits
#' @md
NULL

# ---------------------------------------------------------------------------
# Shared set-up

# The survey, the standardisation and the feature map of a chunked fit.
# The map is drawn here, from the survey's sample (sigma = "median"
# resolved on the standardised sample), and shipped to the workers.
chunked_setup <- function(x, y, kernel, D, scale, scale_given, map, seed, what,
                          classes_only = FALSE) {
  sv <- chunks_survey(x, y, what)
  resp <- if (is.null(y)) NULL else survey_response(sv, y, classes_only)
  if (!is.null(map)) {
    check_feature_map(map, sv$d)
    if (scale && scale_given) {
      stop_arg("scale", "must be FALSE with 'map': the map was fitted on the data as given")
    }
    scale <- FALSE
  }
  scaling <- if (scale) survey_scaling(sv) else NULL
  if (is.null(map)) {
    xs <- rff_apply_scaling(sv$sample, scaling)
    map <- with_seed(seed, rff_build_map(xs, kernel, D))
  }
  input <- list(d = sv$d, names = sv$names, terms = NULL, xlevels = NULL, n = sv$n)
  list(survey = sv, resp = resp, scaling = scaling, map = map, input = input,
       rows = sv$rows)
}

chunked_description <- function(object) {
  if (is.null(object$chunks)) return(NULL)
  sprintf("  fitted on %d chunks (%s rows)", length(object$chunks$rows),
          format(sum(object$chunks$rows), big.mark = ","))
}

# ---------------------------------------------------------------------------
# Ridge regression: Zc'Zc, Zc'Yc and the means per chunk, combined in chunk
# order by the pairwise update, then the same solve as in memory.

#' @rdname chunked_fits
#' @export
rff_ridge.data_chunks <- function(x, y, kernel = gaussian_kernel("median"), D = 1024,
                                  lambda = "auto", scale = TRUE, seed = NULL, map = NULL,
                                  nthreads = chunks_threads(), ...) {
  check_no_dots(...)
  scale_given <- !missing(scale)
  y <- check_chunk_y(y)
  check_kernel(kernel)
  D <- check_count(D, "D")
  lambda <- ridge_check_lambda(lambda)
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
  ne <- chunks_apply(x, ridge_chunk_task, args, what, combine = moments_combine)
  # the in-memory solve on the combined moments; lambda = "auto" by GCV,
  # which needs only the moments (exact leave-one-out would need another
  # pass over the chunks)
  sys <- c(list(side = "primal"), ne)
  sys$rows <- ne$n
  path <- NULL
  if (length(lambda) != 1L || is.character(lambda)) {
    path <- ridge_path(ridge_spectrum(sys), sys, lambda, "gcv", map, NULL, NULL, NULL, nthreads)
    lambda <- path$lambda[attr(path, "chosen")]
  }
  sol <- ridge_solve(sys, lambda, nthreads)
  beta <- sol$beta
  intercept <- sol$intercept
  fit <- structure(list(weights = beta, intercept = intercept, type = st$resp$type,
                        levels = st$resp$levels, kernel = map$kernel, D = D,
                        n_features = nf, lambda = lambda, path = path,
                        criterion = if (!is.null(path)) "gcv", n = ne$n, map = map,
                        scaling = st$scaling, input = st$input, fitted = NULL,
                        chunks = list(rows = st$rows, response = y)),
                   class = "rff_ridge")
  if (st$resp$type == "regression") {
    # RSS = ||Yc - Zc beta||^2 from the moments, without another pass
    rss <- max(0, ne$yy - 2 * sum(beta * ne$zy) + sum(beta * (ne$zz %*% beta)))
    fit$rmse <- sqrt(rss / ne$n)
    fit$r.squared <- if (ne$yy > 0) 1 - rss / ne$yy else NA_real_
  } else {
    colnames(fit$weights) <- st$resp$levels
    names(fit$intercept) <- st$resp$levels
    fit$accuracy <- chunked_accuracy(fit, x, y, nthreads, what)
  }
  fit
}

# A chunk's centred moments: list(zz, zy, zbar, ybar, n, yy), through the
# same stream over row blocks as the in-memory fit.
ridge_chunk_task <- function(raw, i, y, names, map, scaling, levels, nthreads) {
  xy <- chunk_xy(raw, y, names)
  xs <- rff_apply_scaling(xy$x, scaling)
  Y <- chunk_targets(xy$y, levels, y)
  n <- nrow(xs)
  blocks <- row_blocks(n, ridge_block_rows(n, map$n_features))
  block <- function(b) {
    idx <- blocks[[b]]
    list(transform_features(map, xs[idx, , drop = FALSE], nthreads), Y[idx, , drop = FALSE])
  }
  ne <- .Call(C_crossprod_stream, block, length(blocks), environment(), nthreads)
  ne$yy <- colSums(sweep(Y, 2L, ne$ybar, check.margin = FALSE)^2)
  ne
}

# Pairwise combination of centred moments (Chan, Golub and LeVeque 1983):
# with delta the difference of the means, the centred cross-products of
# the union are the sum of the parts' plus n_a n_b / n delta delta'.
moments_combine <- function(a, b, i = NULL) {
  if (is.null(a)) return(b)
  n <- a$n + b$n
  f <- a$n * b$n / n
  dz <- b$zbar - a$zbar
  dy <- b$ybar - a$ybar
  list(zz = a$zz + b$zz + f * tcrossprod(dz),
       zy = a$zy + b$zy + f * tcrossprod(dz, dy),
       zbar = a$zbar + dz * (b$n / n), ybar = a$ybar + dy * (b$n / n), n = n,
       yy = a$yy + b$yy + f * dy^2)
}

# Training accuracy of a classifier on its chunks: one more pass.
chunked_accuracy <- function(fit, x, y, nthreads, what) {
  counts <- chunks_apply(x, accuracy_chunk_task,
                         list(object = fit, y = y, nthreads = nthreads), what,
                         combine = function(acc, r, i) if (is.null(acc)) r else acc + r)
  counts[1L] / counts[2L]
}

accuracy_chunk_task <- function(raw, i, object, y, nthreads) {
  xy <- chunk_xy(raw, y, object$input$names)
  pred <- stats::predict(object, xy$x, type = "class", nthreads = nthreads)
  c(sum(as.character(pred) == as.character(xy$y)), length(pred))
}

# ---------------------------------------------------------------------------
# Predictions per chunk

# predict() of any fitted object on chunked newdata: a list with one result
# per chunk, in order; or, with 'output' (a directory, or one path per
# chunk), .rds files written by the workers, whose paths are returned.
# Files are first written under temporary names and renamed once every
# chunk has succeeded; on failure they are removed.
predict_chunks <- function(object, newdata, ..., output = NULL, nthreads = chunks_threads()) {
  nthreads <- check_threads(nthreads)
  what <- paste0("predict.", class(object)[1L])
  paths <- NULL
  if (!is.null(output)) {
    if (!is.character(output) || anyNA(output) ||
        !(length(output) == 1L || length(output) == length(newdata))) {
      stop_arg("output", "must be a directory, or one file path per chunk")
    }
    paths <- if (length(output) == 1L && length(newdata) > 1L || dir.exists(output[1L])) {
      if (!dir.exists(output)) stop_arg("output", "is not an existing directory: ", output)
      file.path(output, sprintf("prediction-%0*d.rds", nchar(length(newdata)),
                                seq_len(length(newdata))))
    } else output
    if (any(file.exists(paths))) {
      stop_arg("output", "would overwrite an existing file: ", paths[file.exists(paths)][1L])
    }
  }
  args <- list(object = object, dots = list(...), nthreads = nthreads, paths = paths)
  res <- tryCatch(chunks_apply(newdata, predict_chunk_task, args, what),
                  error = function(e) {
                    if (!is.null(paths)) unlink(paste0(paths, ".part"))
                    stop(e)
                  })
  if (is.null(paths)) return(res)
  ok <- file.rename(paste0(paths, ".part"), paths)
  if (!all(ok)) {
    unlink(c(paths, paste0(paths, ".part")))
    stop(what, ": could not rename the finished prediction files into 'output'", call. = FALSE)
  }
  invisible(paths)
}

predict_chunk_task <- function(raw, i, object, dots, nthreads, paths) {
  names <- if (is.null(object$input$terms)) object$input$names else NULL
  x <- if (is.null(object$input$terms)) chunk_xy(raw, NULL, names)$x else raw
  pred <- do.call(stats::predict, c(list(object, x), dots, list(nthreads = nthreads)))
  if (is.null(paths)) return(pred)
  saveRDS(pred, paste0(paths[i], ".part"))
  TRUE
}

# ---------------------------------------------------------------------------
# Kernel k-means on random features: k-means|| seeding and Lloyd's
# iterations, each a pass in which every chunk returns its per-cluster sums,
# counts and sums of squared norms.

#' @rdname chunked_fits
#' @export
kernel_kmeans.data_chunks <- function(x, centers, kernel = gaussian_kernel("median"),
                                      method = c("rff", "nystrom"), D = 500, nstart = 1,
                                      iter.max = 100, seed = NULL, map = NULL,
                                      nthreads = chunks_threads(), rounds = 5, ...) {
  check_no_dots(...)
  if (missing(centers)) stop_arg("centers", "is required: the number of clusters")
  if (length(centers) != 1L) {
    stop_arg("centers", "must be the number of clusters for data in chunks (an initial ",
             "assignment of every row is not supported)")
  }
  k <- check_count(centers, "centers")
  check_kernel(kernel)
  method <- check_choice(method, c("rff", "nystrom"), "method")
  if (is.null(map)) D <- check_count(D, "D")
  nstart <- check_count(nstart, "nstart")
  iter.max <- check_count(iter.max, "iter.max", upper = .Machine$integer.max - 1)
  rounds <- check_count(rounds, "rounds")
  nthreads <- check_threads(nthreads)
  what <- "kernel_kmeans"
  sv <- chunks_survey(x, NULL, what, sample_rows = if (method == "nystrom") max(1000L, 2L * D) else 1000L)
  if (k > sv$n) stop_arg("centers", "asks for ", k, " clusters but the chunks have ", sv$n, " row(s)")
  input <- list(d = sv$d, names = sv$names, terms = NULL, xlevels = NULL, n = sv$n)
  with_seed(seed, {
    if (!is.null(map)) {
      check_feature_map(map, sv$d)
    } else if (method == "nystrom") {
      m <- min(D, nrow(sv$sample))
      map <- nystrom_features(sv$sample, kernel, m = m, nthreads = nthreads)
    } else {
      if (!isTRUE(kernel$shift_invariant)) {
        stop_arg("kernel", "must be shift-invariant for method = \"rff\" (random Fourier features)")
      }
      map <- random_features(sv$sample, resolve_kernel(kernel, sv$sample), D = D, type = "phase")
    }
    runs <- vector("list", nstart)
    for (r in seq_len(nstart)) {
      C0 <- kmpar_seed(x, sv, map, k, rounds, names = sv$names, nthreads = nthreads, what = what)
      runs[[r]] <- chunked_lloyd(x, map, C0, iter.max, sv$names, nthreads, what)
    }
  })
  obj <- vapply(runs, function(run) run$tot.withinss, numeric(1))
  best <- runs[[which.min(obj)]]
  fit <- structure(c(list(cluster = NULL), best[c("size", "withinss", "tot.withinss", "totss")],
                     list(betweenss = max(0, best$totss - best$tot.withinss)),
                     best[c("iter", "converged", "trace")],
                     list(start_objectives = obj, distance = NULL, reseeded = best$reseeded,
                          k = k, kernel = map$kernel, method = method, nstart = nstart,
                          map = map, D = map_size(map), centers = best$centers,
                          input = input, chunks = list(rows = sv$rows))),
                   class = c("kernel_kmeans_chunked", "kernel_kmeans"))
  if (!fit$converged) {
    warning(sprintf("kernel k-means did not converge in %d iteration%s; increase 'iter.max'",
                    iter.max, if (iter.max == 1L) "" else "s"), call. = FALSE)
  }
  fit
}

# The rows of one chunk's features, a block at a time: f(Z, rows) for each
# block, results in a list.
chunk_feature_blocks <- function(map, x, nthreads, f) {
  n <- nrow(x)
  lapply(row_blocks(n, rff_block_rows(n, map$n_features)), function(idx) {
    f(transform_features(map, x[idx, , drop = FALSE], nthreads), idx)
  })
}

# Squared distances of the rows of Z to the rows of C (as in memory).
centre_distances <- function(Z, C, nthreads) .Call(C_kmeans_centre_distances, Z, C, nthreads)

# k-means|| (Bahmani, Moseley, Vattani, Kumar and Vassilvitskii 2012): a
# first centre uniform over all rows; 'rounds' passes, each keeping every
# row independently with probability min(1, l d^2 / phi) (l = 2k, d^2 the
# squared distance to the nearest candidate, phi their sum over all rows);
# one pass counting the rows nearest each candidate; then k-means++ on the
# candidates weighted by the counts.  Each chunk draws its uniforms from a
# seed drawn here, and returns only the rows that can be kept (those with
# l d^2 / u above its own share of phi): the sample is exact, and the same
# for every plan.
kmpar_seed <- function(x, sv, map, k, rounds, names, nthreads, what) {
  g <- sample.int(sv$n, 1L)
  ch <- findInterval(g - 1, cumsum(c(0, sv$rows)), rightmost.closed = FALSE)
  row <- g - sum(sv$rows[seq_len(ch - 1L)])
  cand <- chunks_apply(x, kmpar_fetch_task, list(names = names, map = map, row = row,
                                                 nthreads = nthreads), what, which = ch)[[1L]]
  ell <- 2 * k
  for (r in seq_len(rounds)) {
    seeds <- sample.int(.Machine$integer.max, length(x))
    got <- chunks_apply(x, kmpar_sample_task,
                        list(names = names, map = map, cand = cand, ell = ell, nthreads = nthreads),
                        what, per_chunk = lapply(seeds, function(s) list(seed = s)))
    phi <- sum(vapply(got, `[[`, numeric(1), "phi"))
    if (!(phi > 0)) break
    for (piece in got) {
      keep <- piece$ratio > phi
      if (any(keep)) cand <- rbind(cand, piece$z[keep, , drop = FALSE])
    }
  }
  weights <- chunks_apply(x, kmpar_weight_task,
                          list(names = names, map = map, cand = cand, nthreads = nthreads), what,
                          combine = function(acc, w, i) if (is.null(acc)) w else acc + w)
  weighted_kmeanspp(cand, weights, k, nthreads)
}

kmpar_fetch_task <- function(raw, i, names, map, row, nthreads) {
  x <- chunk_xy(raw, NULL, names)$x
  transform_features(map, x[row, , drop = FALSE], nthreads)
}

kmpar_sample_task <- function(raw, i, names, map, cand, ell, nthreads, seed) {
  x <- chunk_xy(raw, NULL, names)$x
  u <- with_seed(seed, stats::runif(nrow(x)))
  parts <- chunk_feature_blocks(map, x, nthreads, function(Z, idx) {
    dist <- centre_distances(Z, cand, nthreads)
    d2 <- dist[cbind(seq_len(nrow(dist)), max.col(-dist, ties.method = "first"))]
    list(Z = Z, d2 = d2, idx = idx)
  })
  d2 <- unlist(lapply(parts, `[[`, "d2"))
  phi <- sum(d2)
  ratio <- ell * d2 / u
  keep <- ratio > phi
  z <- do.call(rbind, lapply(parts, function(p) p$Z[keep[p$idx], , drop = FALSE]))
  list(phi = phi, ratio = ratio[keep], z = z)
}

kmpar_weight_task <- function(raw, i, names, map, cand, nthreads) {
  x <- chunk_xy(raw, NULL, names)$x
  counts <- chunk_feature_blocks(map, x, nthreads, function(Z, idx) {
    near <- max.col(-centre_distances(Z, cand, nthreads), ties.method = "first")
    tabulate(near, nrow(cand))
  })
  Reduce(`+`, counts)
}

# k-means++ on weighted points (rows of P): the first centre drawn with
# probability proportional to the weights, each further one to weight times
# squared distance to the nearest centre chosen.  Fewer distinct candidates
# than k leave duplicates, whose clusters the first pass re-seeds.
weighted_kmeanspp <- function(P, w, k, nthreads) {
  m <- nrow(P)
  first <- sample.int(m, 1L, prob = pmax(w, 0) + if (all(w <= 0)) 1 else 0)
  chosen <- first
  d2 <- drop(centre_distances(P, P[first, , drop = FALSE], nthreads))
  while (length(chosen) < k) {
    p <- w * d2
    nxt <- if (sum(p) > 0) sample.int(m, 1L, prob = p) else chosen[1L]
    chosen <- c(chosen, nxt)
    d2 <- pmin(d2, drop(centre_distances(P, P[nxt, , drop = FALSE], nthreads)))
  }
  P[chosen, , drop = FALSE]
}

# One Lloyd pass on a chunk: each row to its nearest centre (ties to the
# lowest number, the distances as in memory), the per-cluster sums of the
# features, counts and sums of squared norms, the chunk's feature mean and
# sum of squares about it (for totss), and its k rows farthest from their
# centres (to re-seed empty clusters).
lloyd_chunk_task <- function(raw, i, names, map, centers, nthreads, own = NULL) {
  x <- chunk_xy(raw, NULL, names)$x
  k <- nrow(centers)
  D <- ncol(centers)
  parts <- chunk_feature_blocks(map, x, nthreads, function(Z, idx) {
    dist <- centre_distances(Z, centers, nthreads)
    cl <- max.col(-dist, ties.method = "first")
    # 'own': the far rows by their distance to the mean of their own cluster
    if (!is.null(own)) dist <- centre_distances(Z, own, nthreads)
    d <- dist[cbind(seq_along(cl), cl)]
    sums <- matrix(0, k, D)
    rs <- rowsum(Z, cl, reorder = TRUE)
    sums[as.integer(rownames(rs)), ] <- rs
    far <- utils::head(order(-d, seq_along(d)), k)
    list(sums = sums, counts = tabulate(cl, k), s2 = tabulate_sum(cl, rowSums(Z^2), k),
         zsum = colSums(Z), far = list(d = d[far], cluster = cl[far], row = idx[far],
                                       z = Z[far, , drop = FALSE]))
  })
  out <- parts[[1L]]
  for (p in parts[-1L]) {
    out$sums <- out$sums + p$sums
    out$counts <- out$counts + p$counts
    out$s2 <- out$s2 + p$s2
    out$zsum <- out$zsum + p$zsum
    far <- list(d = c(out$far$d, p$far$d), cluster = c(out$far$cluster, p$far$cluster),
                row = c(out$far$row, p$far$row), z = rbind(out$far$z, p$far$z))
    keep <- utils::head(order(-far$d, far$row), k)
    out$far <- list(d = far$d[keep], cluster = far$cluster[keep], row = far$row[keep],
                    z = far$z[keep, , drop = FALSE])
  }
  n <- as.double(nrow(x))   # products of counts overflow integers
  out$n <- n
  out$zbar <- out$zsum / n
  out$m2 <- max(0, sum(out$s2) - n * sum(out$zbar^2))
  out
}

tabulate_sum <- function(g, v, k) {
  s <- numeric(k)
  r <- rowsum(v, g, reorder = TRUE)
  s[as.integer(rownames(r))] <- r
  s
}

lloyd_combine <- function(acc, p, i) {
  p$far$chunk <- rep(i, length(p$far$d))
  if (is.null(acc)) return(p)
  n <- acc$n + p$n
  delta <- p$zbar - acc$zbar
  acc$m2 <- acc$m2 + p$m2 + sum(delta^2) * (acc$n * p$n / n)
  acc$zbar <- acc$zbar + delta * (p$n / n)
  acc$n <- n
  acc$sums <- acc$sums + p$sums
  acc$counts <- acc$counts + p$counts
  acc$s2 <- acc$s2 + p$s2
  acc$far <- list(d = c(acc$far$d, p$far$d), cluster = c(acc$far$cluster, p$far$cluster),
                  row = c(acc$far$row, p$far$row), chunk = c(acc$far$chunk, p$far$chunk),
                  z = rbind(acc$far$z, p$far$z))
  acc
}

# Distributed Lloyd from the centres C: pass t assigns every row to the
# centres of pass t - 1 and returns the sums of the new clusters; it stops
# when the new means equal the old (no row moved).  An empty cluster takes
# the row farthest from its centre among clusters of two or more (as in
# memory), from the candidates the chunks returned.
chunked_lloyd <- function(x, map, C, iter.max, names, nthreads, what) {
  trace <- numeric(0)
  reseeded <- 0L
  totss <- NA_real_
  converged <- FALSE
  t <- 0L
  repeat {
    acc <- chunks_apply(x, lloyd_chunk_task, list(names = names, map = map, centers = C,
                                                  nthreads = nthreads), what,
                        combine = lloyd_combine)
    if (is.na(totss)) totss <- acc$m2
    if (t == 0L && any(acc$counts == 0)) {
      # as in memory, empty clusters of the first assignment take the rows
      # farthest from the means of their own clusters: one more pass
      own <- acc$sums / pmax(acc$counts, 1)
      acc$far <- chunks_apply(x, lloyd_chunk_task,
                              list(names = names, map = map, centers = C, nthreads = nthreads,
                                   own = own), what, combine = lloyd_combine)$far
    }
    fix <- lloyd_fix_empty(acc)
    reseeded <- reseeded + fix$reseeded
    acc <- fix$acc
    Cnew <- acc$sums / acc$counts
    withinss <- pmax(0, acc$s2 - acc$counts * rowSums(Cnew^2))
    trace <- c(trace, sum(withinss))
    if (t > 0L && identical(Cnew, C)) {
      converged <- TRUE
      break
    }
    C <- Cnew
    if (t >= iter.max) break
    t <- t + 1L
  }
  dimnames(Cnew) <- list(seq_len(nrow(Cnew)), NULL)
  list(size = as.integer(acc$counts), withinss = withinss, tot.withinss = sum(withinss),
       totss = totss, iter = t, converged = converged, trace = trace, reseeded = reseeded,
       centers = Cnew)
}

lloyd_fix_empty <- function(acc) {
  fixed <- 0L
  far <- acc$far
  ord <- order(far$chunk, far$row)
  for (c in which(acc$counts == 0)) {
    best <- -1
    pick <- NA_integer_
    for (j in ord) {
      if (acc$counts[far$cluster[j]] > 1 && far$d[j] > best) {
        best <- far$d[j]
        pick <- j
      }
    }
    if (is.na(pick)) break
    z <- far$z[pick, ]
    old <- far$cluster[pick]
    acc$sums[old, ] <- acc$sums[old, ] - z
    acc$s2[old] <- acc$s2[old] - sum(z^2)
    acc$counts[old] <- acc$counts[old] - 1
    acc$sums[c, ] <- z
    acc$s2[c] <- sum(z^2)
    acc$counts[c] <- 1
    far$cluster[pick] <- c
    far$d[pick] <- 0
    fixed <- fixed + 1L
  }
  list(acc = acc, reseeded = fixed)
}

#' @export
summary.kernel_kmeans_chunked <- function(object, ...) {
  clusters <- data.frame(size = object$size, withinss = object$withinss,
                         mean_distance = object$withinss / object$size)
  rownames(clusters) <- seq_len(object$k)
  structure(list(description = c(kkm_description(object), chunked_description(object)),
                 clusters = clusters, tot.withinss = object$tot.withinss,
                 totss = object$totss, betweenss = object$betweenss, trace = object$trace,
                 start_objectives = object$start_objectives, reseeded = object$reseeded),
            class = "summary.kernel_kmeans")
}

#' @export
print.kernel_kmeans_chunked <- function(x, ...) {
  cat(kkm_description(x), chunked_description(x), sep = "\n")
  cat("\nWithin-cluster sum of squares by cluster, in feature space:\n")
  print(signif(x$withinss, 5))
  if (x$totss > 0) {
    cat(sprintf(" (between_SS / total_SS = %5.1f %%)\n", 100 * x$betweenss / x$totss))
  }
  cat("Clusters of the rows: predict(fit, chunks), one vector per chunk\n")
  invisible(x)
}

# ---------------------------------------------------------------------------
# SVM: CoCoA+ (Jaggi et al. 2014; Ma et al. 2015), the dual coordinate
# descent of the in-memory fit run on each chunk's own dual variables
# against the current weights, the chunks' weight updates added.

#' @rdname chunked_fits
#' @export
rff_svm.data_chunks <- function(x, y, kernel = gaussian_kernel("median"), D = 1024,
                                cost = 1, loss = c("hinge", "squared_hinge"), scale = TRUE,
                                class.weights = NULL, seed = NULL, map = NULL,
                                nthreads = chunks_threads(), rounds = 100, passes = 1,
                                tol = 0.01, ...) {
  check_no_dots(...)
  scale_given <- !missing(scale)
  y <- check_chunk_y(y)
  check_kernel(kernel)
  D <- check_count(D, "D")
  cost <- check_positive(cost, "cost")
  loss <- check_choice(loss, c("hinge", "squared_hinge"), "loss")
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  if (!is.null(map)) D <- map_size(map)
  rounds <- check_count(rounds, "rounds")
  passes <- check_count(passes, "passes")
  tol <- check_positive(tol, "tol")
  nthreads <- check_threads(nthreads)
  what <- "rff_svm"
  out <- with_seed(seed, {
    st <- chunked_setup(x, y, kernel, D, scale, scale_given, map, NULL, what,
                        classes_only = TRUE)
    lev <- st$resp$levels
    cw <- rff_class_weights(class.weights, lev)
    list(st = st, lev = lev, cw = cw,
         sol = cocoa_solve(x, y, st, lev, cost, cw, loss, rounds, passes, tol, nthreads, what))
  })
  st <- out$st
  lev <- out$lev
  k <- length(lev)
  sol <- out$sol
  nf <- st$map$n_features
  W <- sol$w
  if (k == 2L) W <- cbind(W, -W)
  fit <- structure(list(weights = W[seq_len(nf), , drop = FALSE],
                        intercept = stats::setNames(W[nf + 1L, ], lev),
                        levels = lev, k = k, multiclass = if (k == 2L) "binary" else "ovr",
                        kernel = st$map$kernel, D = D,
                        n_features = nf, cost = cost, loss = loss,
                        class.weights = out$cw, epsilon = tol, max_iter = rounds,
                        shrinking = FALSE, iter = sol$iter, converged = sol$converged,
                        n_sv = sol$n_sv, n = sum(st$rows), map = st$map,
                        scaling = st$scaling, input = st$input, fitted = NULL,
                        trace = sol$trace, chunks = list(rows = st$rows, response = y)),
                   class = "rff_svm")
  colnames(fit$weights) <- lev
  fit$accuracy <- chunked_accuracy(fit, x, y, nthreads, what)
  if (!all(sol$converged)) {
    warning(sprintf(paste0("rff_svm: %d rounds over the chunks did not bring the relative ",
                           "duality gap below tol = %g; increase 'rounds' or 'passes'"),
                    rounds, tol), call. = FALSE)
  }
  fit
}

# The outer rounds.  Each chunk keeps its dual variables (sent to and from
# its worker each round, 8 bytes per row and binary problem); w = sum of
# y_i alpha_i (z_i, 1) over all rows.  In a round every chunk starts from the
# same w and makes 'passes' passes of coordinate descent on the CoCoA+
# subproblem with sigma' = K (the number of chunks), which makes adding the
# K updates safe: the dual objective never gets worse and the iterates
# converge to the optimum (Ma et al. 2015).  The chunk also returns its
# share of the primal and dual objectives at the round's start, so the
# duality gap P(w) - D(alpha) >= P(w) - P(w*) measures convergence.
cocoa_solve <- function(x, y, st, lev, cost, cw, loss, rounds, passes, tol, nthreads, what) {
  k <- length(lev)
  nprob <- if (k == 2L) 1L else k
  costs <- if (k == 2L) list(cp = cost * cw[[1L]], cn = cost * cw[[2L]])
           else list(cp = cost * unname(cw), cn = rep(cost, k))
  K <- length(x)
  nf <- st$map$n_features
  w <- matrix(0, nf + 1L, nprob)
  alpha <- lapply(st$rows, function(n) matrix(0, n, nprob))
  trace <- NULL
  done <- rep(FALSE, nprob)
  iter <- rep(rounds, nprob)
  args <- list(y = y, names = st$input$names, map = st$map, scaling = st$scaling,
               levels = lev, costs = costs, loss = if (loss == "hinge") 1L else 2L,
               sigma = K, passes = passes, nthreads = nthreads)
  for (r in seq_len(rounds)) {
    seeds <- sample.int(.Machine$integer.max, K)
    per <- lapply(seq_len(K), function(i) list(alpha = alpha[[i]], seed = seeds[i]))
    acc <- chunks_apply(x, cocoa_chunk_task, c(args, list(w = w)), what, per_chunk = per,
                        combine = function(acc, p, i) {
                          alpha[[i]] <<- p$alpha
                          p$alpha <- NULL
                          if (is.null(acc)) p else list(dw = acc$dw + p$dw,
                                                        lossC = acc$lossC + p$lossC,
                                                        asum = acc$asum + p$asum,
                                                        a2 = acc$a2 + p$a2)
                        })
    ww <- colSums(w^2)
    primal <- 0.5 * ww + acc$lossC
    dual <- acc$asum - 0.5 * ww - acc$a2
    gap <- primal - dual
    trace <- rbind(trace, data.frame(round = r, problem = seq_len(nprob), primal = primal,
                                     dual = dual, gap = gap))
    newly <- !done & gap <= tol * abs(primal)
    iter[newly] <- r - 1L
    done <- done | newly
    if (all(done)) break
    # problems that converged keep their weights (their chunks' updates are
    # discarded, and so are the matching dual variables' changes)
    if (any(done)) {
      acc$dw[, done] <- 0
      for (i in seq_len(K)) alpha[[i]][, done] <- per[[i]]$alpha[, done]
    }
    w <- w + acc$dw
  }
  n_sv <- Reduce(`+`, lapply(alpha, function(a) colSums(a > 0)))
  list(w = w, iter = iter, converged = done, trace = trace, n_sv = n_sv)
}

cocoa_chunk_task <- function(raw, i, y, names, map, scaling, levels, costs, loss, sigma,
                             passes, nthreads, w, alpha, seed) {
  xy <- chunk_xy(raw, y, names)
  cl <- chunk_classes(xy$y, levels, y)
  zt <- rbind(transform_features_t(map, rff_apply_scaling(xy$x, scaling), nthreads), 1)
  nprob <- ncol(w)
  dw <- matrix(0, nrow(w), nprob)
  lossC <- asum <- a2 <- numeric(nprob)
  with_seed(seed, for (p in seq_len(nprob)) {
    s <- if (nprob == 1L) ifelse(cl == 1L, 1, -1) else ifelse(cl == p, 1, -1)
    C <- ifelse(s > 0, costs$cp[p], costs$cn[p])
    margin <- pmax(0, 1 - s * drop(crossprod(zt, w[, p])))
    lossC[p] <- sum(C * if (loss == 1L) margin else margin^2)
    asum[p] <- sum(alpha[, p])
    a2[p] <- if (loss == 1L) 0 else sum(alpha[, p]^2 / (4 * C))
    res <- svm_local_dcd(zt, s, alpha[, p], w[, p], C, loss, sigma, passes)
    alpha[, p] <- res$alpha
    dw[, p] <- res$dw
  })
  list(alpha = alpha, dw = dw, lossC = lossC, asum = asum, a2 = a2)
}

# The local solver, the one place to swap for a warm-started C solver:
# 'passes' passes, in random order, of coordinate descent on
#   min_d  sum_i [-(a_i + d_i) + g_i (a_i + d_i)^2 / 2]
#          + w . A d + sigma / 2 ||A d||^2,   0 <= a_i + d_i <= U_i,
# A d = sum_i s_i d_i x_i (x_i a column of zt), g_i = 0 and U_i = C_i for
# the hinge, g_i = 1 / (2 C_i) and U_i = Inf for the squared hinge.  Each
# step is the closed-form update of the in-memory solver (R/svm.R, src/svm.c)
# with the curvature sigma ||x_i||^2 + g_i.  Returns the new dual variables
# and the update A d of the weights.
svm_local_dcd <- function(zt, s, a, w, C, loss, sigma, passes) {
  n <- ncol(zt)
  g <- if (loss == 1L) rep(0, n) else 1 / (2 * C)
  U <- if (loss == 1L) C else rep(Inf, n)
  qd <- sigma * colSums(zt^2) + g
  v <- w
  dw <- numeric(length(w))
  for (pass in seq_len(passes)) {
    for (i in sample.int(n)) {
      xi <- zt[, i]
      G <- s[i] * sum(v * xi) - 1 + g[i] * a[i]
      new <- min(max(a[i] - G / qd[i], 0), U[i])
      d <- new - a[i]
      if (d != 0) {
        a[i] <- new
        step <- (d * s[i]) * xi
        dw <- dw + step
        v <- v + sigma * step
      }
    }
  }
  list(alpha = a, dw = dw)
}

# ---------------------------------------------------------------------------
# kernel_approx_error() on chunks: a random sample of rows from a random
# sample of at most 'nchunks' chunks.
chunks_sample_rows <- function(x, names, rows = 2000L, nchunks = 4L) {
  which <- sort(sample.int(length(x), min(nchunks, length(x))))
  seeds <- sample.int(.Machine$integer.max, length(x))
  quota <- ceiling(rows / length(which))
  parts <- chunks_apply(x, sample_rows_task, list(names = names, quota = quota),
                        "kernel_approx_error", which = which,
                        per_chunk = lapply(seeds, function(s) list(seed = s)))
  do.call(rbind, parts)
}

sample_rows_task <- function(raw, i, names, quota, seed) {
  x <- chunk_xy(raw, NULL, names)$x
  take <- with_seed(seed, sort(sample.int(nrow(x), min(quota, nrow(x)))))
  x[take, , drop = FALSE]
}
