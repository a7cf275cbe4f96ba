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
#' fit minimises the penalised sum of squares
#' \deqn{\|y - Z\beta - b\|^2 + \lambda \|\beta\|^2}{||y - Z beta - b||^2 + lambda ||beta||^2}
#' over the weights \eqn{\beta} and an unpenalised intercept \eqn{b}.  So
#' `lambda` is on the scale of a sum over the \eqn{n} training rows, not of a
#' mean: the same `lambda` regularises less as \eqn{n} grows, and
#' `lambda / n` is the penalty of the mean-squared-error form.  With
#' \eqn{z(x) \cdot z(y) \approx k(x, y)}, it is the \eqn{\lambda} of kernel
#' ridge regression.
#'
#' **What it approximates.**  Because the intercept is not penalised, the
#' fit is kernel ridge regression on the *centred* kernel: with
#' \eqn{K_c = (I - \frac1n 11^T) K (I - \frac1n 11^T)} it is
#' \eqn{\hat f(x) = \bar y + k_c(x)^T (K_c + \lambda I)^{-1} (y - \bar y)}
#' (a constant shift of the function costs nothing), not the uncentred
#' \eqn{k(x, X)(K + \lambda I)^{-1} y} that some texts write.
#'
#' **The solution.**  Centring the columns of \eqn{Z} and \eqn{y} removes the
#' intercept, \eqn{b = \bar y - \bar z \cdot \beta}; then
#' \eqn{\beta = (Z_c^T Z_c + \lambda I)^{-1} Z_c^T y_c} by a Cholesky
#' factorisation of the \eqn{D \times D} matrix,
#' or, when \eqn{n < D}, the same \eqn{\beta = Z_c^T (Z_c Z_c^T +
#' \lambda I)^{-1} y_c} from the \eqn{n \times n} side.  The products
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
#' \eqn{\mathrm{df} = 1 + \sum_j e_j / (e_j + \lambda)} over the eigenvalues
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
#' default grid has 41 values, four a decade, from the trace of
#' \eqn{Z_c^T Z_c} (an almost constant fit) down to \eqn{10^{-10}} of it.
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
#' of the tridiagonal \eqn{T + \lambda I}, \eqn{O(D)} per row and
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
#' **Probabilities.**  For classification, `probability = TRUE` computes the
#' exact leave-one-out decision values at the chosen \eqn{\lambda} (one
#' more pass) and fits a Platt sigmoid per class to them (for two classes,
#' one to the difference of the two scores), normalised to sum to one; see
#' [rff_svm()].
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
#' @param lambda The penalty \eqn{\lambda} on the scale of the sum of
#'   squares (see Details): `"auto"` (the default) to choose it from a grid,
#'   a positive number, or a vector of candidates to choose from.
#' @param criterion How `lambda` is chosen from several: `"gcv"`
#'   (generalised cross-validation), `"loo"` (exact leave-one-out), or
#'   `"auto"` (the default: GCV where it is reliable, else leave-one-out;
#'   see Details).
#' @param probability For classification, fit the calibration for
#'   `predict(type = "prob")`.
#' @param weights `NULL`, or non-negative case weights, one per row of `x`:
#'   weighted least squares (an integer weight is the same problem as
#'   repeating the row).
#' @param D Number of random features.
#' @return An object of class `"rff_ridge"`: a list with `weights` (a
#'   `n_features` \eqn{\times m} matrix, \eqn{m = 1} for regression and the
#'   number of classes for classification), `intercept` (\eqn{m} values),
#'   `type` (`"regression"` or `"classification"`), `levels` (the classes,
#'   or `NULL`), `fitted` (fitted values, or fitted classes), `residuals`
#'   (regression), the training
#'   `rmse` and `r.squared` (regression) or `accuracy` (classification),
#'   `lambda` (the one used), `path` (when it was chosen: a data frame of
#'   `lambda`, the degrees of freedom `df` and the criterion),
#'   `calibration` (with `probability = TRUE`), the feature `map`,
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
                              seed = NULL, map = NULL, nthreads = bochner_threads(), ...) {
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
  scaling <- if (scale) rff_scaling(x) else NULL
  xs <- rff_apply_scaling(x, scaling)
  if (is.null(map)) map <- with_seed(seed, rff_build_map(xs, kernel, D, map_args))
  nf <- map$n_features
  sys <- if (n >= nf) ridge_primal_system(map, xs, resp$Y, weights, nthreads)
         else ridge_dual_system(map, xs, resp$Y, weights, nthreads)
  path <- NULL
  if (length(lambda) != 1L || is.character(lambda)) {
    path <- ridge_path(ridge_spectrum(sys, nthreads), sys, lambda, criterion, map, xs, resp$Y, weights, nthreads)
    lambda <- path$lambda[attr(path, "chosen")]
  }
  sol <- ridge_solve(sys, lambda, nthreads)
  fitted <- feature_decision(map, xs, sol$beta, sol$intercept, nthreads)
  fit <- new_rff_ridge(sol, resp, map, D, lambda, path,
                       if (!is.null(path)) names(path)[3L], n, scaling, input,
                       case_weights = weights)
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
    if (probability) {
      loo <- ridge_loo_scores(sys, lambda, fitted, resp$Y, map, xs, weights, nthreads)
      fit$calibration <- calibrate_scores(loo, resp$y, weights)
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
# the n x D feature matrix.  Dual (n < D): the n x n matrix Zs Zs' of the
# rows Zs = W^(1/2) Zc.  Either carries the weighted means zbar and ybar,
# the total weight n, and yy, the weighted centred sum of squares of each
# column of Y.
ridge_primal_system <- function(map, xs, Y, weights, nthreads) {
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
                                .Call(C_crossprod_stream, block, length(blocks), environment(),
                                      nthreads))
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

#' Predict with random-feature ridge regression
#'
#' @param object A fit from [rff_ridge()].
#' @param newdata Data with the columns the model was fitted on (matched by
#'   name where both have names), or a data frame with the formula's
#'   variables for a fit with a formula; extra columns are ignored.
#'   Without `newdata` (or with `NULL`), the fitted values (or classes) of
#'   the training data.
#' @param type For regression, `"response"` (or `"decision"`, the same) for
#'   the predicted values.  For classification, `"class"` (or `"response"`,
#'   the same) for the predicted classes, `"decision"` for the fitted
#'   one-hot scores, one column per class, or `"prob"` for the class
#'   probabilities of a fit with `probability = TRUE`.  The default is
#'   `"response"`.
#' @inheritParams predict.rff_svm
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A numeric vector (regression), a factor with the training levels,
#'   or a numeric matrix of scores.
#' @examples
#' fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 100, seed = 1)
#' predict(fit, mtcars[1:3, ])
#' @md
#' @export
predict.rff_ridge <- function(object, newdata,
                              type = c("response", "class", "decision", "prob"),
                              na.action = stats::na.pass, nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, type = type, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(..., .who = "predict()")
  type <- fit_predict_type(object, type, c("response", "class", "decision", "prob"),
                           if (is.null(object$calibration)) "a fit with probability = TRUE")
  if (missing(newdata) || is.null(newdata)) {
    return(fit_training_predictions(object, type, c("class", "response")))
  }
  dec <- rff_new_decision(object, newdata, nthreads, na.action)
  if (object$type == "regression") return(stats::setNames(drop(dec), rownames(dec)))
  colnames(dec) <- object$levels
  switch(type,
         decision = dec,
         prob = rff_complete_rows(dec, function(d) calibrated_probabilities(object$calibration, d)),
         rff_complete_rows(dec, function(d) rff_decision_classes(d, object$levels)))
}

fit_description.rff_ridge <- function(x) {
  kern <- kernel_summary(x$kernel)
  what <- if (x$type == "regression") "regression"
          else sprintf("classification, %d classes by one-hot targets", length(x$levels))
  c(sprintf("Ridge %s on %d random features, lambda = %s%s", what, x$n_features,
            format(signif(x$lambda, 4)),
            if (is.null(x$path)) "" else sprintf(" (chosen by %s from %d values)",
                                                 if (x$criterion == "gcv") "GCV" else "leave-one-out",
                                                 nrow(x$path))),
    paste0("  ", kern, if (!is.null(x$scaling)) "; inputs standardised" else ""),
    training_fit_lines(x, sprintf("  training RMSE %.4g, R-squared %.4f on %d rows", x$rmse,
                                  x$r.squared, x$n)))
}

#' @export
summary.rff_ridge <- function(object, ...) {
  out <- c(list(description = fit_description(object),
                weight_norm = sqrt(colSums(object$weights^2)),
                intercept = object$intercept),
           training_summary(object))
  structure(out, class = "summary.rff_ridge")
}

#' @export
print.summary.rff_ridge <- function(x, ...) {
  cat(x$description, sep = "\n")
  cat("\nNorm of the feature weights:", paste(signif(x$weight_norm, 4), collapse = ", "), "\n")
  cat("Intercept:", paste(signif(x$intercept, 4), collapse = ", "), "\n")
  print_training_summary(x)
  invisible(x)
}

# The one constructor of "rff_ridge" fits, in memory and on chunks: the
# solution 'sol' (beta, intercept), the response's type and classes, and
# the fit's settings; '...' adds what only one path has.
new_rff_ridge <- function(sol, resp, map, D, lambda, path, criterion, n, scaling, input, ...) {
  fit <- structure(c(list(weights = sol$beta, intercept = sol$intercept, type = resp$type,
                          levels = resp$levels, kernel = map$kernel, D = D,
                          n_features = map$n_features, lambda = lambda, path = path,
                          criterion = criterion, n = n),
                     list(...), list(map = map, scaling = scaling, input = input)),
                   class = bochner_fit_class("rff_ridge"))
  if (resp$type != "regression") {
    colnames(fit$weights) <- resp$levels
    names(fit$intercept) <- resp$levels
  }
  fit
}
