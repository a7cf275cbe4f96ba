# The fits and predictions on data in chunks (data_chunks(), R/chunks.R):
# per-chunk work on the workers of the user's future plan, summaries
# combined here in chunk order.

#' Fits on data in chunks
#'
#' [rff_ridge()], [rff_svm()], [rff_gp()] and [kernel_kmeans()] on data described by
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
#' drawn uniformly from the survey's sample) has the in-memory defaults: the
#' Gaussian kernel with the clustering bandwidth rule of [kernel_kmeans()]
#' (resolved on the survey's sample), `nstart = 10`, Hartigan-Wong passes
#' after Lloyd's, and `seeding = "auto"`: greedy k-means++ below 100 000
#' rows, k-means|| from there, the in-memory rule.
#'
#' With `seeding = "kmeans++"` the chunked fit *is* the in-memory fit run
#' over the chunks: from the same seed and feature map (for `method = "rff"`
#' the same `seed` draws the same map) it picks the same rows as seeds and
#' ends at the same partition and objective, to rounding (sums are folded
#' chunk by chunk instead of row by row), for any chunking and plan.  The
#' uniforms of all `nstart` starts are drawn in this session in the
#' in-memory order; each centre of greedy k-means++ then costs two passes,
#' run for all starts at once: one over the chunks holding the rows the
#' draws fall on (located by the running sum of the squared distances to
#' the centres so far, chunk totals first, then within the chunk, in C),
#' one over all chunks returning each trial's potential.  Lloyd's
#' iterations follow, all starts in the same passes, each pass every chunk
#' running the in-memory block step in C (nearest centres, per-cluster
#' sums, counts and sums of squared norms, the rows farthest from their
#' centres; empty clusters take the row farthest from its centre, as in
#' memory); then Hartigan-Wong passes for each start, and the start of
#' lowest objective is kept (the first of equal ones: starts that end at
#' the same partition can tie to rounding, so the labels of the clusters
#' may then differ from the in-memory fit's).  Cost: about \eqn{2k}
#' seeding passes and the Lloyd passes over the data, each
#' \eqn{O(n\,\mathrm{nstart}\,k D)}{O(n nstart k D)} (the seeding's
#' recomputes the distances to the centres so far, \eqn{O(n\,
#' \mathrm{nstart}\,k^2 D)}{O(n nstart k^2 D)} in all, rather than keep
#' 8 bytes per row and start), plus the serial Hartigan-Wong passes.
#'
#' With `seeding = "kmeans||"` (the default from 100 000 rows, where the
#' \eqn{2k} passes of k-means++ per start cost too much) it seeds by
#' k-means|| (Bahmani et al. 2012): a first centre uniform over all rows,
#' `rounds` passes each keeping every row with probability
#' \eqn{\min(1, 2k\, d^2 / \phi)}{min(1, 2k d^2 / phi)} (\eqn{d^2} its squared
#' distance to the nearest candidate, \eqn{\phi}{phi} their sum), and a pass
#' counting the rows nearest each candidate; the in-memory engine then
#' clusters the candidates weighted by these counts (greedy weighted
#' k-means++, Lloyd and Hartigan-Wong, `nstart` starts, keeping the best):
#' the starts cost no pass over the chunks, and one Lloyd run over the
#' chunks follows.  This differs from the in-memory k-means|| (which runs
#' `nstart` full starts), so the objective is near the in-memory one, not
#' equal.  The uniforms of each chunk come from seeds drawn in this
#' session, so the fit is the same for every plan given the seed.
#'
#' Given the same starting assignment Lloyd's iterations visit the same
#' clusterings as [kernel_kmeans()] in memory (the distances are computed
#' by the same code), with centres equal to rounding.  Each Hartigan-Wong
#' move changes two centres that the next row's test depends on, so a pass
#' visits the chunks one after another (one worker at a time), each chunk
#' running the in-memory pass in C on its rows in order with the
#' partition's sums, counts and live sets carried from chunk to chunk: the
#' same pass as over all rows in memory, serial.  This session keeps the
#' cluster of every row between passes (4 bytes a row).
#' `algorithm = "Lloyd"` stops after Lloyd's iterations, which run on every
#' worker at once.
#'
#' **The Gaussian process** ([rff_gp()]) searches its hyperparameters as in
#' memory, where the search already looks at few rows: the bandwidth rule
#' at 1000 evenly spaced rows and a pilot search on 4000 (fetched in one
#' pass), then the starting grid and the last evaluations of the full
#' marginal likelihood, each one pass (two with the gradient) whose chunks
#' return the in-memory routine's sums \eqn{Z^TZ}, \eqn{Z^Ty},
#' \eqn{y^Ty} (and the gradient's) over their rows.  The hyperparameters
#' and the posterior are the in-memory fit's to rounding.  At most 4000 rows
#' are fetched whole and fitted in memory.  The exact GP, a mean other than
#' `"centred"`, case weights, the Laplace approximation and spectral
#' mixtures need the rows in memory and are refused.
#'
#' **The SVM** is trained by CoCoA+ (Jaggi et al. 2014, Ma et al. 2015):
#' in each round every chunk runs at most `passes` passes of the in-memory
#' fit's dual coordinate descent (in C, with its shrinking and its local
#' stopping rule `tol`) on its own dual variables, started from the
#' current weights, with the curvature scaled by the number of chunks
#' \eqn{K}; the \eqn{K} weight updates are added.  The first round instead
#' solves each chunk's problem alone (curvature unscaled) and averages the
#' \eqn{K} solutions (dual variables divided by \eqn{K}: a feasible start
#' whose dual objective is at least the mean of the chunks' own).  A problem
#' that has converged is left out of the later rounds.  The dual objective
#' never decreases and the iterates converge to the solution of the in-memory
#' problem; the fit stops when the duality gap, an upper bound on the
#' distance of the primal objective to its minimum, is below `gap_tol` times the
#' primal objective.  The gap per round and binary problem is kept in
#' `trace`.  The binary problems are those of the in-memory fit: one-vs-one
#' by default (`multiclass`), and with `probability = TRUE` (or `cross`) the
#' same problems on 5 (or `cross`) stratified folds, each chunk's rows dealt
#' to the folds from a seed of its own, solved in the same rounds; a last
#' pass returns the held-out decision values, to which the sigmoids are
#' fitted as in memory (they are \eqn{8 n} bytes per binary problem in this
#' session).  The dual variables, 8 bytes per row and binary problem, are
#' kept in this session and travel with their chunks.  A worker keeps the
#' features of its chunks between rounds (at most
#' `getOption("bochner.chunk_cache_mb", 1024)` MB per process), so a round
#' costs the local solver; a worker that did not compute them (a new
#' `batchtools` job) computes them again, with the same result.  More
#' chunks mean smaller steps: rounds grow with \eqn{K}.
#'
#' @param x Data in chunks, from [data_chunks()].
#' @param y The name of the response column, present in every chunk.  For
#'   `rff_ridge()` a numeric column gives regression, a factor, character or
#'   logical column classification; for `rff_svm()` the classes.
#' @param kernel,D,lambda,criterion,scale,seed,map,cost,loss,class.weights,multiclass,probability,cross,tol As for the
#'   in-memory fits ([rff_ridge()], [rff_svm()], [kernel_kmeans()]); for
#'   `rff_ridge()`, `lambda = "auto"` (or a vector) is chosen as in memory:
#'   generalised cross-validation needs only the combined moments, and the
#'   exact leave-one-out (`criterion = "loo"`, or `"auto"` when GCV's choice
#'   has more than \eqn{n/10} degrees of freedom) one more pass over the
#'   chunks per grid scored.
#' @param ard,optimize,signal,noise,control,sampling For `rff_gp()`, as in
#'   memory.
#' @param precision For `rff_ridge()`, as in memory (see [feature_precision]);
#'   for `rff_gp()` it is an entry of `control`.
#' @param centers For `kernel_kmeans()`, the number of clusters.
#' @param method For `kernel_kmeans()`, `"rff"` or `"nystrom"`.
#' @param m For `kernel_kmeans(method = "nystrom")`, the number of
#'   landmarks, as in memory.
#' @param nstart,max_iter For `kernel_kmeans()`, the starts (with
#'   `seeding = "kmeans||"`, on the weighted k-means|| candidates), and the
#'   most Lloyd iterations (and Hartigan-Wong passes).
#' @param seeding For `kernel_kmeans()`, `"kmeans++"` (the in-memory fit
#'   over the chunks), `"kmeans||"` or `"auto"`: k-means|| from 100 000
#'   rows, k-means++ below, as in memory.  See Details.
#' @param algorithm For `kernel_kmeans()`, `"Hartigan-Wong"` (Lloyd's
#'   iterations, then Hartigan-Wong passes over the chunks) or `"Lloyd"`.
#' @param rounds For `kernel_kmeans()`, the sampling passes of the k-means||
#'   seeding; for `rff_svm()`, the most outer rounds.
#' @param passes For `rff_svm()`, the most local passes per chunk, round and
#'   binary problem.
#' @param gap_tol For `rff_svm()`, the stopping tolerance on the relative
#'   duality gap of the outer rounds (formerly `tol`, which is now the
#'   local solver's tolerance, as in memory).
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
#' svm <- rff_svm(data_chunks(cls), y = "class", D = 32, seed = 1, probability = TRUE)
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
    # a default D that depends on the rows and classes (rff_svm's)
    if (is.function(D)) D <- D(sum(sv$rows), length(resp$levels), sv$d)
    xs <- rff_apply_scaling(sv$sample, scaling)
    map <- with_seed(seed, rff_build_map(xs, kernel, D))
  }
  input <- survey_input(sv)
  list(survey = sv, resp = resp, scaling = scaling, map = map, input = input,
       rows = sv$rows)
}

chunked_description <- function(object) {
  if (is.null(object$chunks)) return(NULL)
  sprintf("  fitted on %d chunks (%s rows)", length(object$chunks$rows),
          format(sum(object$chunks$rows), big.mark = ","))
}

# The training accuracy of a classifier fitted on chunks (rows: the rows
# of each chunk), by one more pass, with the scores (type = "decision") and
# classes of the rows its default calibration fits (calibration_subset()).
chunked_training_scores <- function(fit, x, y, rows, nthreads, what) {
  firsts <- cumsum(c(1, rows))
  chunks_apply(x, training_scores_chunk_task,
               list(object = fit, y = y, total = sum(rows), nthreads = nthreads), what,
               per_chunk = lapply(seq_along(rows), function(i) list(first = firsts[i])),
               combine = function(acc, p, i) {
                 if (is.null(acc)) return(p)
                 list(correct = acc$correct + p$correct, n = acc$n + p$n,
                      scores = rbind(acc$scores, p$scores), cls = c(acc$cls, p$cls))
               })
}

training_scores_chunk_task <- function(raw, i, object, y, total, nthreads, first) {
  xy <- chunk_xy(raw, y, object$input$names)
  dec <- stats::predict(object, xy$x, type = "decision", nthreads = nthreads)
  cls <- match(as.character(xy$y), object$levels)
  keep <- calibration_subset(total, first, nrow(dec))
  list(correct = sum(max.col(dec, ties.method = "first") == cls), n = nrow(dec),
       scores = dec[keep, , drop = FALSE], cls = cls[keep])
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
