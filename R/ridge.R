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
#' ridge regression, \eqn{\hat f(x) = k(x, X)(K + \lambda I)^{-1} y} (with
#' centred \eqn{y}).
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
#' \eqn{n}; predictions likewise work a block of rows at a time.
#'
#' **Reproducibility.**  Every product and the Cholesky factorisation run on
#' the package's own kernel, not on R's BLAS and LAPACK: a fit is the same,
#' bit for bit, for any number of threads and with any BLAS library (the
#' reference BLAS, OpenBLAS, MKL), and predictions are identical however the
#' rows are split.
#'
#' Inputs are standardised with `scale = TRUE` and `sigma = "median"` is
#' resolved on the scaled data, as in [rff_svm()].
#'
#' @inheritParams rff_svm
#' @param y The response, one per row of `x`: a numeric vector for
#'   regression; a factor, or a character or logical vector, for
#'   classification (at least two classes).  No missing values.
#' @param lambda The penalty \eqn{\lambda}, a positive number, on the scale
#'   of the sum of squares (see Details).  The default, 0.01, suits
#'   standardised inputs with the median bandwidth and a few hundred to a
#'   few thousand rows with little noise; noisier data want more.  As in any
#'   ridge regression, choose it by cross-validation when it matters.
#' @param D Number of random features.
#' @return An object of class `"rff_ridge"`: a list with `weights` (a
#'   `n_features` \eqn{\times m} matrix, \eqn{m = 1} for regression and the
#'   number of classes for classification), `intercept` (\eqn{m} values),
#'   `type` (`"regression"` or `"classification"`), `levels` (the classes,
#'   or `NULL`), `fitted` (fitted values, or fitted classes), `residuals`
#'   (regression), the training
#'   `rmse` and `r.squared` (regression) or `accuracy` (classification),
#'   `lambda`, the feature `map`, `scaling`, the settings and `input`.
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
#' # classification through one-hot targets
#' fit2 <- rff_ridge(Species ~ ., data = iris, D = 200, seed = 1)
#' table(iris$Species, fitted(fit2))
#' @md
#' @export
rff_ridge <- function(x, ...) UseMethod("rff_ridge")

#' @rdname rff_ridge
#' @export
rff_ridge.default <- function(x, y, kernel = gaussian_kernel("median"), D = 1024,
                              lambda = 0.01, scale = TRUE, seed = NULL, map = NULL,
                              nthreads = bochner_threads(), ...) {
  check_no_dots(...)
  scale_given <- !missing(scale)
  x <- as_data_matrix(x, "x")
  resp <- ridge_response(y, nrow(x))
  check_kernel(kernel)
  D <- check_count(D, "D")
  lambda <- check_positive(lambda, "lambda")
  scale <- rff_check_scale(kernel, check_flag(scale, "scale"))
  if (!is.null(map)) {
    scale <- rff_map_scale(map, x, scale, scale_given)
    D <- map_size(map)
  }
  nthreads <- check_threads(nthreads)

  input <- input_description(x)
  scaling <- if (scale) rff_scaling(x) else NULL
  xs <- rff_apply_scaling(x, scaling)
  if (is.null(map)) map <- with_seed(seed, rff_build_map(xs, kernel, D))
  n <- nrow(xs)
  nf <- map$n_features
  sol <- if (n >= nf) ridge_primal(map, xs, resp$Y, lambda, nthreads)
         else ridge_dual(map, xs, resp$Y, lambda, nthreads)
  beta <- sol$beta
  intercept <- sol$intercept
  fitted <- feature_decision(map, xs, beta, intercept, nthreads)
  fit <- structure(list(weights = beta, intercept = intercept, type = resp$type,
                        levels = resp$levels, kernel = map$kernel, D = D,
                        n_features = nf, lambda = lambda, n = n, map = map,
                        scaling = scaling, input = input),
                   class = "rff_ridge")
  if (resp$type == "regression") {
    fit$fitted <- stats::setNames(drop(fitted), rownames(x))
    res <- resp$y - fit$fitted
    fit$residuals <- res
    fit$rmse <- sqrt(mean(res^2))
    tss <- sum((resp$y - mean(resp$y))^2)
    fit$r.squared <- if (tss > 0) 1 - sum(res^2) / tss else NA_real_
  } else {
    colnames(fit$weights) <- resp$levels
    names(fit$intercept) <- resp$levels
    fit$fitted <- rff_decision_classes(fitted, resp$levels)
    names(fit$fitted) <- rownames(x)
    fit$accuracy <- mean(fit$fitted == resp$y)
  }
  fit
}

#' @rdname rff_ridge
#' @export
rff_ridge.formula <- function(x, data = NULL, ...) {
  fit_formula(x, data, rff_ridge.default, response = "y ~ a + b", ...)
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

# beta = (Zc' Zc + lambda I)^{-1} Zc' Yc with Zc' Zc and Zc' Yc accumulated
# over row blocks of features computed on the fly (products.c): memory
# O(D^2 + block), never the n x D feature matrix.
ridge_primal <- function(map, xs, Y, lambda, nthreads) {
  n <- nrow(xs)
  check_allocation(map$n_features, map$n_features, "the normal equations", arg = "D")
  rows <- ridge_block_rows(n, map$n_features)
  blocks <- row_blocks(n, rows)
  block <- function(i) {
    idx <- blocks[[i]]
    list(transform_features(map, xs[idx, , drop = FALSE], nthreads), Y[idx, , drop = FALSE])
  }
  ne <- .Call(C_crossprod_stream, block, length(blocks), environment(), nthreads)
  beta <- ridge_cholesky_solve(ne$zz, ne$zy, lambda, nthreads)
  list(beta = beta, intercept = ne$ybar - colSums(beta * ne$zbar))
}

# Fewer rows than features: the same beta = Zc' (Zc Zc' + lambda I)^{-1} Yc
# from the n x n side (Z has fewer entries than Zc' Zc here).
ridge_dual <- function(map, xs, Y, lambda, nthreads) {
  check_allocation(nrow(xs), map$n_features, "the feature matrix", arg = "D")
  Z <- transform_features(map, xs, nthreads)
  zbar <- colMeans(Z)
  Zct <- t(sweep(Z, 2L, zbar, check.margin = FALSE))
  rm(Z)
  ybar <- colMeans(Y)
  Yc <- sweep(Y, 2L, ybar, check.margin = FALSE)
  alpha <- ridge_cholesky_solve(.Call(C_crossprod, Zct, nthreads), Yc, lambda, nthreads)
  beta <- .Call(C_matprod, Zct, alpha, nthreads)
  list(beta = beta, intercept = ybar - colSums(beta * zbar))
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
#'   variables for a fit with a formula.  Without `newdata`, the fitted
#'   values (or classes) of the training data.
#' @param type For regression, `"response"` (or `"decision"`, the same) for
#'   the predicted values.  For classification, `"class"` (or `"response"`,
#'   the same) for the predicted classes, or `"decision"` for the fitted
#'   one-hot scores, one column per class.  The default is `"response"`.
#' @param nthreads Number of threads, see [bochner_threads()].
#' @param ... Unused.
#' @return A numeric vector (regression), a factor with the training levels,
#'   or a numeric matrix of scores.
#' @examples
#' fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 100, seed = 1)
#' predict(fit, mtcars[1:3, ])
#' @md
#' @export
predict.rff_ridge <- function(object, newdata, type = c("response", "class", "decision"),
                              nthreads = bochner_threads(), ...) {
  if (!missing(newdata) && inherits(newdata, "data_chunks")) {
    return(predict_chunks(object, newdata, type = type, ...,
                          nthreads = if (missing(nthreads)) chunks_threads() else nthreads))
  }
  check_no_dots(...)
  type <- check_choice(type, c("response", "class", "decision"), "type")
  regression <- object$type == "regression"
  if (regression && type == "class") {
    stop_arg("type", "= \"class\" needs a classification fit; this one is a regression")
  }
  if (missing(newdata)) {
    if (regression || type != "decision") return(object$fitted)
    stop_arg("newdata", "is required for type = \"decision\"")
  }
  dec <- rff_new_decision(object, newdata, nthreads)
  if (regression) return(stats::setNames(drop(dec), rownames(dec)))
  colnames(dec) <- object$levels
  if (type == "decision") return(dec)
  rff_decision_classes(dec, object$levels)
}

#' @rdname predict.rff_ridge
#' @export
fitted.rff_ridge <- function(object, ...) object$fitted

rff_ridge_description <- function(x) {
  kern <- kernel_summary(x$kernel)
  what <- if (x$type == "regression") "regression"
          else sprintf("classification, %d classes by one-hot targets", length(x$levels))
  c(sprintf("Ridge %s on %d random features, lambda = %s", what, x$n_features,
            format(x$lambda)),
    paste0("  ", kern, if (!is.null(x$scaling)) "; inputs standardised" else ""),
    if (x$type == "regression") {
      sprintf("  training RMSE %.4g, R-squared %.4f on %d rows", x$rmse, x$r.squared, x$n)
    } else {
      c(sprintf("  classes: %s", paste(x$levels, collapse = ", ")),
        sprintf("  training accuracy %.4f on %d rows", x$accuracy, x$n))
    })
}

#' @export
print.rff_ridge <- function(x, ...) {
  cat(rff_ridge_description(x), sep = "\n")
  invisible(x)
}

#' @export
summary.rff_ridge <- function(object, ...) {
  out <- list(description = rff_ridge_description(object),
              weight_norm = sqrt(colSums(object$weights^2)),
              intercept = object$intercept)
  if (object$type == "regression") {
    out$residuals <- stats::quantile(object$residuals)
  } else {
    out$fitted_counts <- table(fitted = object$fitted)
  }
  structure(out, class = "summary.rff_ridge")
}

#' @export
print.summary.rff_ridge <- function(x, ...) {
  cat(x$description, sep = "\n")
  cat("\nNorm of the feature weights:", paste(signif(x$weight_norm, 4), collapse = ", "), "\n")
  cat("Intercept:", paste(signif(x$intercept, 4), collapse = ", "), "\n")
  if (!is.null(x$residuals)) {
    cat("\nResiduals of the training data:\n")
    print(signif(x$residuals, 4))
  }
  if (!is.null(x$fitted_counts)) {
    cat("\nPredicted classes of the training data:\n")
    print(x$fitted_counts)
  }
  invisible(x)
}
