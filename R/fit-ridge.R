#' Ridge regression on random features
#'
#' Fits ridge regression on random features of the data, which approximates
#' kernel ridge regression at \eqn{O(n D^2)} cost instead of the
#' \eqn{O(n^3)} of the \eqn{n \times n} Gram matrix.  A numeric `y` gives
#' regression; a factor (or character or logical) `y` gives classification
#' by regression on one-hot targets (one 0/1 column per class), each point
#' going to the class with the largest fitted value.
#'
#' **The problem.**  With the \eqn{n \times D} feature matrix \eqn{Z} (rows
#' \eqn{z(x_i)}) and targets \eqn{y} (a vector, or the one-hot matrix), the
#' fit minimises the penalised mean of squares
#' \deqn{\frac1n \|y - Z\beta - b\|^2 + \lambda \|\beta\|^2}{(1/n) ||y - Z beta - b||^2 + lambda ||beta||^2}
#' over the weights \eqn{\beta} and an unpenalised intercept \eqn{b}.  So
#' `lambda` is on the scale of a mean over the \eqn{n} training rows, as
#' [falkon()]'s and `glmnet`'s (with case weights, \eqn{n} is their sum):
#' the same `lambda` means the same model whatever \eqn{n}.  With
#' \eqn{z(x) \cdot z(y) \approx k(x, y)}, it is kernel ridge regression's
#' \eqn{(K + n\lambda I)^{-1} y}.  (Up to version 0.1.0 `lambda` was on the
#' scale of the sum, \eqn{n} times today's.)
#'
#' **What it approximates.**  Because the intercept is not penalised, the
#' fit is kernel ridge regression on the *centred* kernel: with
#' \eqn{K_c = (I - \frac1n 11^T) K (I - \frac1n 11^T)} it is
#' \eqn{\hat f(x) = \bar y + k_c(x)^T (K_c + n\lambda I)^{-1} (y - \bar y)}
#' (a constant shift of the function costs nothing), not the uncentred
#' \eqn{k(x, X)(K + n\lambda I)^{-1} y} that some texts write.
#'
#' **The solution.**  Centring the columns of \eqn{Z} and \eqn{y} removes the
#' intercept, \eqn{b = \bar y - \bar z \cdot \beta}; then
#' \eqn{\beta = (Z_c^T Z_c + n\lambda I)^{-1} Z_c^T y_c} by a Cholesky
#' factorisation of the \eqn{D \times D} matrix,
#' or, when \eqn{n < D}, the same \eqn{\beta = Z_c^T (Z_c Z_c^T +
#' n\lambda I)^{-1} y_c} from the \eqn{n \times n} side.  The products
#' \eqn{Z_c^T Z_c} and \eqn{Z_c^T y_c} are accumulated over blocks of rows
#' whose features are computed on the fly, so the \eqn{n \times D} feature
#' matrix is never held: memory is \eqn{O(D^2)} plus one block, whatever
#' \eqn{n}; predictions likewise work a block of rows at a time.  All the
#' columns of a classification's one-hot targets share the factorisation.
#' With case weights the sums of squares and the centring are weighted.
#'
#' **Choosing lambda.**  With `lambda = "auto"` (the default) or a vector of
#' values, one reduction of \eqn{Z_c^T Z_c} gives the fit at every
#' \eqn{\lambda} at once, and \eqn{\lambda} is chosen by
#' generalised cross-validation, `criterion = "gcv"`:
#' \eqn{\mathrm{RSS}(\lambda)/n \,/\, (1 - \mathrm{df}(\lambda)/n)^2} with
#' \eqn{\mathrm{df} = 1 + \sum_j e_j / (e_j + n\lambda)} over the eigenvalues
#' \eqn{e_j} of \eqn{Z_c^T Z_c} (this needs no
#' further pass over the data), or by exact leave-one-out,
#' `criterion = "loo"`: \eqn{\frac1n \sum_i (r_i / (1 - h_{ii}))^2} with
#' the leverages \eqn{h_{ii}} of the hat matrix (one more pass).  GCV
#' replaces every \eqn{h_{ii}} by their mean \eqn{\mathrm{df}/n}; near
#' interpolation (df close to \eqn{n}, typically with fewer rows than
#' features) it wrongly favours \eqn{\lambda \to 0} (on `mlbench`'s
#' Ionosphere, 82 % test accuracy against 95 % for leave-one-out's choice).
#' So `criterion = "auto"` (the default) uses GCV when its choice has
#' \eqn{\mathrm{df} \le n/10}, and leave-one-out otherwise.  The
#' default grid has 41 values, four a decade, from \eqn{1/n} times the
#' trace of \eqn{Z_c^T Z_c} (an almost constant fit) down to
#' \eqn{10^{-10}} of it.
#' The path is returned (`path`), and the fit is then solved at the chosen
#' \eqn{\lambda} by the Cholesky factorisation above.
#'
#' The path comes from the package's own C code, not from LAPACK: a
#' Householder reduction \eqn{Z_c^T Z_c = Q T Q^T} to a tridiagonal
#' \eqn{T} (its block updates on the package's matrix product, about
#' \eqn{\frac43 D^3} flops, under half of an eigendecomposition with
#' eigenvectors), the eigenvalues of \eqn{T} by the QL algorithm, with its
#' rotations applied to \eqn{Q^T Z_c^T y_c} only, which is all that GCV
#' needs; leave-one-out works with the rows \eqn{Q^T z_i} and factorisations
#' of the tridiagonal \eqn{T + n\lambda I}, \eqn{O(D)} per row and
#' \eqn{\lambda}.  The path is the exact one (not an approximation), and
#' it is the same, bit for bit, under any BLAS and for any number of
#' threads.  Its cost grows as \eqn{D^3} against the \eqn{n D^2} of the
#' pass that forms \eqn{Z_c^T Z_c}: with \eqn{n = 10^4} rows it was a sixth
#' to a half of that pass for \eqn{D \le 1024}, about as much at
#' \eqn{D = 2048} and twice as much at \eqn{D = 4000}, and 7 to 10 times
#' cheaper than LAPACK's eigendecomposition under the reference BLAS
#' (`bench/investigations/ridge_path.md`); a fixed `lambda` skips it.  From the
#' \eqn{n < D} side the same is done on the \eqn{n \times n} matrix
#' \eqn{Z_c Z_c^T}.
#'
#' **Probabilities.**  Every classification fit gives class probabilities,
#' `predict(type = "prob")`: a Platt sigmoid per class of its score (for
#' two classes, one of the difference of the two scores), normalised to sum
#' to one; see [rff_svm()].  By default the sigmoids are fitted to the
#' training rows' scores (all of them up to 50 000 rows, an even spread of
#' 50 000 beyond), which costs nothing more.  `probability = TRUE` fits
#' them to the exact leave-one-out scores at the chosen \eqn{\lambda}
#' instead, which takes the diagonal of the hat matrix: 2.7 to 5.4 times
#' the fit's time on the bench's sets.  With \eqn{\lambda} chosen from the
#' data the two are close (test log-loss within 2.6 % on five of seven bench
#' sets; DNA 12 % higher from the training scores, Shuttle 3.7 times lower,
#' where the leave-one-out scores of an interpolating fit are too spread:
#' `bench/investigations/ridge-probabilities.md`).
#'
#' **Reproducibility.**  Every product and the Cholesky factorisation run on
#' the package's own kernel, and so does the choice of \eqn{\lambda}, not on
#' R's BLAS and LAPACK: a fit is the same,
#' bit for bit, for any number of threads and with any BLAS library (the
#' reference BLAS, OpenBLAS, MKL), and predictions are identical however the
#' rows are split.
#'
#' **Bandwidth.**  Inputs are standardised with `scale = TRUE` and a
#' bandwidth rule is resolved on the scaled data, as in [rff_svm()].  The
#' default kernel is the Gaussian with the median heuristic,
#' `gaussian_kernel("median")`, not [rff_svm()]'s `"sigest"`: with `lambda`
#' chosen on the path the fit adapts to the bandwidth, and on the sets of
#' `bench/investigations/bandwidth.R` the median was the best rule for regression (test
#' RMSE 0.43 of the response's sd, against 0.46 for `"sigest"`) and within
#' 0.2 points of the best for classification.  `print()` names the rule
#' that gave the bandwidth.
#'
#' @inheritParams rff_svm
#' @param kernel A kernel object with a random feature map (see
#'   [random_features()]); the default is [gaussian_kernel()] with the
#'   median heuristic for the bandwidth (`sigma = "median"`, see Details).
#' @param y The response, one per row of `x`: a numeric vector for
#'   regression; a factor, or a character or logical vector, for
#'   classification (at least two classes).  No missing values.
#' @param lambda The penalty \eqn{\lambda} on the scale of the mean of
#'   squares (see Details): `"auto"` (the default) to choose it from a grid,
#'   a positive number, or a vector of candidates to choose from.
#' @param criterion How `lambda` is chosen from several: `"gcv"`
#'   (generalised cross-validation), `"loo"` (exact leave-one-out), or
#'   `"auto"` (the default: GCV where it is reliable, else leave-one-out;
#'   see Details).
#' @param probability For classification, fit the calibration for
#'   `predict(type = "prob")` to the exact leave-one-out scores; without it
#'   the sigmoids are fitted to the training scores (see Details).
#' @param weights `NULL`, or non-negative case weights, one per row of `x`:
#'   weighted least squares.  The standardisation and the bandwidth rule
#'   are weighted as in [rff_svm()]: zero drops a row, and an integer
#'   weight is the same problem as repeating the row at a given `sigma`
#'   with `scale = FALSE`.
#' @param D Number of random features.
#' @param precision `"auto"` (the default), `"double"` or `"single"`: the
#'   precision of \eqn{Z^T Z} on the primal side (\eqn{n} at least the
#'   number of features; see [feature_precision]: features rounded to float,
#'   the product summed in double, the solve and the path double).  `"auto"`
#'   keeps double with `lambda = "auto"`.
#' @return An object of class `"rff_ridge"`: a list with `weights` (a
#'   `n_features` \eqn{\times m} matrix, \eqn{m = 1} for regression and the
#'   number of classes for classification), `intercept` (\eqn{m} values),
#'   `type` (`"regression"` or `"classification"`), `levels` (the classes,
#'   or `NULL`), `fitted` (fitted values, or fitted classes), `residuals`
#'   (regression), the training
#'   `rmse` and `r.squared` (regression) or `accuracy` (classification),
#'   `lambda` (the one used), `path` (when it was chosen: a data frame of
#'   `lambda`, the degrees of freedom `df` and the criterion),
#'   `calibration` (classification: the sigmoids, with their `source`,
#'   `"training"` or `"leave-one-out"`), the feature `map`,
#'   `scaling`, the settings and `input`.
#' @seealso [predict.rff_ridge()], [rff_svm()], [random_features()].
#' @examples
#' # a smooth function from noisy samples
#' set.seed(1)
#' x <- runif(300, -3, 3)
#' y <- sin(2 * x) + rnorm(300, sd = 0.1)
#' fit <- rff_ridge(x, y, D = 200)
#' fit
#' grid <- seq(-3, 3, length.out = 7)
#' cbind(predicted = predict(fit, grid), truth = sin(2 * grid))
#'
#' head(fit$path)
#'
#' # classification through one-hot targets, with probabilities
#' fit2 <- rff_ridge(Species ~ ., data = iris, D = 200, seed = 1, probability = TRUE)
#' table(iris$Species, fitted(fit2))
#' round(predict(fit2, iris[c(1, 51, 101), ], type = "prob"), 3)
#' @md
#' @export
rff_ridge <- function(x, ...) UseMethod("rff_ridge")

#' @rdname rff_ridge
#' @export
rff_ridge.default <- function(x, y, kernel = gaussian_kernel("median"), D = 1024,
                              lambda = "auto", criterion = c("auto", "gcv", "loo"),
                              probability = FALSE, weights = NULL, scale = TRUE,
                              seed = NULL, map = NULL, precision = c("auto", "double", "single"),
                              nthreads = bochner_threads(), ...) {
  map_args <- rff_map_args(..., map = map, who = "rff_ridge()")
  scale_given <- !missing(scale)
  x <- as_data_matrix(x, "x", sparse = TRUE)
  n <- nrow(x)
  resp <- ridge_response(y, n)
  weights <- check_case_weights(weights, n)
  check_kernel(kernel)
  D <- check_count(D, "D")
  lambda <- ridge_check_lambda(lambda)
  criterion <- check_choice(criterion, c("auto", "gcv", "loo"), "criterion")
  probability <- check_flag(probability, "probability")
  precision <- check_precision(precision)
  if (probability && resp$type == "regression") {
    stop_arg("probability", "= TRUE needs classes in 'y'; this is a regression")
  }
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  if (!is.null(map)) {
    scale <- rff_map_scale(map, x, scale, scale_given)
    D <- map_size(map)
  }
  nthreads <- check_threads(nthreads)
  ridge_check_memory(n, ncol(x), D, rff_feature_count(D, ncol(x), kernel, map, map_args),
                     ncol(resp$Y))

  input <- input_description(x)
  scaling <- if (scale) rff_scaling(x, weights) else NULL
  xs <- rff_apply_scaling(x, scaling)
  if (is.null(map)) map <- with_seed(seed, rff_build_map(xs, kernel, D, map_args, weights))
  nf <- map$n_features
  single <- n >= nf && ridge_single(precision, n, nf, lambda, weights)
  sys <- if (n >= nf) ridge_primal_system(map, xs, resp$Y, weights, nthreads, single)
         else ridge_dual_system(map, xs, resp$Y, weights, nthreads)
  sys$single <- single
  rows <- ridge_rows(n, weights)
  chosen <- ridge_choose(sys, lambda, criterion,
                         ridge_loo_source(sys, map, xs, resp$Y, weights, nthreads), weights,
                         nthreads, rows)
  lambda <- chosen$lambda
  path <- chosen$path
  sol <- ridge_solve(sys, rows * lambda, nthreads)
  fitted <- feature_decision(map, xs, sol$beta, sol$intercept, nthreads)
  fit <- new_rff_ridge(sol, resp, map, D, lambda, path,
                       if (!is.null(path)) names(path)[3L], n, scaling, input,
                       case_weights = weights)
  fit$precision <- if (single) "single" else "double"
  if (resp$type == "regression") {
    fit$fitted <- stats::setNames(drop(fitted), rownames(x))
    res <- resp$y - fit$fitted
    fit$residuals <- res
    w <- if (is.null(weights)) rep(1, n) else weights
    fit$rmse <- sqrt(sum(w * res^2) / sum(w))
    fit$r.squared <- if (sys$yy > 0) 1 - sum(w * res^2) / sys$yy else NA_real_
  } else {
    fit$fitted <- rff_decision_classes(fitted, resp$levels)
    names(fit$fitted) <- rownames(x)
    fit$accuracy <- mean(fit$fitted == resp$y)
    fit$calibration <- if (probability) {
      loo <- ridge_loo_scores(sys, rows * lambda, fitted, resp$Y, map, xs, weights, nthreads)
      calibrate_scores(loo, resp$y, weights, source = "leave-one-out")
    } else {
      keep <- calibration_subset(n)
      calibrate_scores(fitted[keep, , drop = FALSE], resp$y[keep], weights[keep],
                       source = "training")
    }
  }
  fit$call <- generic_call(match.call())
  fit
}

#' @rdname formula_interface
#' @export
rff_ridge.formula <- function(formula, data = NULL, ..., subset, weights,
                              na.action = stats::na.omit) {
  fit_formula(match.call(), parent.frame(), rff_ridge.default, na.action, ...,
              chunked = rff_ridge.data_chunks,
              response = "y ~ a + b")
}

# The response as a target matrix: the values for regression, one-hot
# columns for classification.
ridge_response <- function(y, n) {
  if (missing(y) || is.null(y)) stop_arg("y", "is required: the response for each row of 'x'")
  if (is.factor(y) || is.character(y) || is.logical(y)) {
    y <- rff_class_response(y, n)
    Y <- matrix(0, n, nlevels(y))
    Y[cbind(seq_len(n), as.integer(y))] <- 1
    return(list(type = "classification", y = y, levels = levels(y), Y = Y))
  }
  if (!is.numeric(y) || !is.null(dim(y)) && !(is.matrix(y) && ncol(y) == 1L)) {
    stop_arg("y", "must be a numeric vector (regression) or a factor (classification)")
  }
  y <- as.double(y)
  if (length(y) != n) stop_arg("y", "has length ", length(y), " but 'x' has ", n, " row(s)")
  if (anyNA(y)) stop_arg("y", "contains NA (at position ", which(is.na(y))[1L], ")")
  if (any(!is.finite(y))) stop_arg("y", "contains infinite values")
  list(type = "regression", y = y, levels = NULL, Y = matrix(y, ncol = 1L))
}

# What a fit holds at its peak, refused before anything is allocated when
# it exceeds the memory available (check_memory(), R/checks.R): the primal
# side's D x D moments, their eigenvectors (the lambda path) and Cholesky
# factor, or the dual side's n x D features, their transpose and the n x n
# Gram matrix with its eigenvectors; and the frequencies.
ridge_check_memory <- function(n, d, D, nf, k) {
  parts <- if (n >= nf) {
    list("the moments Z'Z" = c(nf, nf), "their eigenvectors" = c(nf, nf),
         "the Cholesky factor" = c(nf, nf),
         "a block of features" = c(ridge_block_rows(n, nf), nf), "the right sides" = c(nf, k))
  } else {
    list("the feature matrix Z" = c(n, nf), "its centred transpose" = c(nf, n),
         "the Gram matrix ZZ'" = c(n, n), "its eigenvectors" = c(n, n))
  }
  parts[["the frequencies"]] <- c(d + 1, D)
  check_memory(parts, "rff_ridge()", "D")
}

# The regularised least-squares system, from the side with fewer unknowns.
# Primal (n >= D): Zc'WZc and Zc'WYc accumulated over row blocks of
# features computed on the fly (products.c): memory O(D^2 + block), never
# the n x D feature matrix; single: Z'Z of the features rounded to float
# (moments_fold(), ?feature_precision).  Dual (n < D): the n x n matrix Zs Zs' of the
# rows Zs = W^(1/2) Zc.  Either carries the weighted means zbar and ybar,
# the total weight n, and yy, the weighted centred sum of squares of each
# column of Y.
ridge_primal_system <- function(map, xs, Y, weights, nthreads, single = FALSE) {
  n <- nrow(xs)
  check_allocation(map$n_features, map$n_features, "the normal equations", arg = "D")
  blocks <- row_blocks(n, ridge_block_rows(n, map$n_features))
  prog <- progress_start(length(blocks), "rff_ridge: Z'Z over blocks of rows")
  on.exit(progress_done(prog))
  block <- function(i) {
    progress_tick(prog)
    idx <- blocks[[i]]
    z <- transform_features(map, xs[idx, , drop = FALSE], nthreads)
    if (is.null(weights)) list(z, Y[idx, , drop = FALSE])
    else list(z, Y[idx, , drop = FALSE], weights[idx])
  }
  ne <- with_sparse_frequencies(map, xs,   # sparse xs: t(W) once for all blocks
                                moments_fold(block, length(blocks), nthreads, single))
  c(list(side = "primal"), ne)
}

ridge_dual_system <- function(map, xs, Y, weights, nthreads) {
  check_allocation(nrow(xs), map$n_features, "the feature matrix", arg = "D")
  Z <- transform_features(map, xs, nthreads)
  w <- if (is.null(weights)) rep(1, nrow(Z)) else weights
  W <- sum(w)
  zbar <- colSums(Z * w) / W
  ybar <- colSums(Y * w) / W
  root <- sqrt(w)
  Zst <- t(sweep(Z, 2L, zbar, check.margin = FALSE) * root)
  rm(Z)
  Yc <- sweep(Y, 2L, ybar, check.margin = FALSE)
  Ys <- Yc * root
  list(side = "dual", K = .Call(C_crossprod, Zst, nthreads), Zst = Zst, Ys = Ys,
       zbar = zbar, ybar = ybar, n = W, yy = colSums(Yc^2 * w), rows = nrow(Ys))
}

# beta and the intercept at one lambda, by the package's Cholesky.
ridge_solve <- function(sys, lambda, nthreads) {
  beta <- if (sys$side == "primal") {
    ridge_cholesky_solve(sys$zz, sys$zy, lambda, nthreads)
  } else {
    .Call(C_matprod, sys$Zst, ridge_cholesky_solve(sys$K, sys$Ys, lambda, nthreads), nthreads)
  }
  list(beta = beta, intercept = sys$ybar - colSums(beta * sys$zbar))
}

# (A + lambda I)^{-1} B for a symmetric positive semi-definite A, by a
# Cholesky factorisation on the package's own product (src/cholesky.c):
# identical for any BLAS and thread count.
ridge_cholesky_solve <- function(A, B, lambda, nthreads) {
  tryCatch(.Call(C_ridge_solve, A, B, as.double(lambda), nthreads), error = function(e) {
    stop("rff_ridge: the regularised normal equations are numerically singular (",
         conditionMessage(e), "); increase 'lambda'", call. = FALSE)
  })
}

# Rows per block when accumulating Z'Z: about 16 MB of features, at least
# 256 rows (each block's product streams Z'Z through memory once).
ridge_block_rows <- function(n, nf) max(1L, min(n, max(256L, 2^21 %/% nf)))

# Whether the primal Z'Z is formed in float (?feature_precision): "auto" never with
# lambda = "auto" (its path reaches 1e-10 of the trace), else by feature_single() with
# the smallest penalty n lambda (the features' variance 1: cos pairs of size sqrt(1/D)).
ridge_single <- function(precision, n, nf, lambda, weights) {
  if (precision == "auto" && identical(lambda, "auto")) return(FALSE)
  rows <- if (is.null(weights)) n else sum(weights)
  feature_single(precision, n, nf, 1, rows * min(if (is.character(lambda)) 0 else lambda))
}
