# tidymodels: the parsnip engine "bochner" for svm_rbf(), and the dials
# parameters of the engine and of the recipes steps (R/recipes.R).  parsnip,
# dials and recipes stay suggested packages: the engine is registered when
# parsnip is loaded (now, if it already is, or by a hook on its loading).

#' The parsnip engine "bochner" for svm_rbf()
#'
#' With parsnip installed, `parsnip::svm_rbf() |> parsnip::set_engine("bochner")`
#' fits [rff_svm()] (mode `"classification"`) or [rff_ridge()] (mode
#' `"regression"`) on random Fourier features of the Gaussian kernel, and
#' works in workflows, [tune::tune_grid()] and the rest of tidymodels.  The
#' engine is registered when parsnip is loaded; nothing needs calling.
#'
#' **Parameters.**
#' * `cost`: the SVM's cost \eqn{C}.  For regression, ridge's penalty is
#'   \eqn{\lambda = 1/(2Cn)} on \eqn{n} training rows (the SVM objective
#'   \eqn{\frac12\|w\|^2 + C \sum \mathrm{loss}}{||w||^2 / 2 + C sum(loss)}
#'   divided by \eqn{Cn}: ridge's `lambda` is per row);
#'   unset, [rff_ridge()]'s default `lambda`.
#' * `rbf_sigma`: parsnip's (and kernlab's) inverse width,
#'   \eqn{k(x, y) = \exp(-\mathrm{rbf\_sigma}\,\|x - y\|^2)}{k(x, y) =
#'   exp(-rbf_sigma ||x - y||^2)}.  bochner's [gaussian_kernel()] takes a
#'   length scale, \eqn{\exp(-\|x - y\|^2 / (2\sigma^2))}{exp(-||x - y||^2 /
#'   (2 sigma^2))}, so the engine uses \eqn{\sigma = 1/\sqrt{2\,
#'   \mathrm{rbf\_sigma}}}{sigma = 1 / sqrt(2 rbf_sigma)}.  Unset, the
#'   machine's default kernel (its bandwidth rule on the standardised
#'   training data).
#' * `margin` is not used (neither machine has an epsilon-insensitive loss).
#' * Engine arguments (`set_engine("bochner", ...)`): `num_features`, the
#'   number of random features `D` (default the machine's: [rff_svm()]'s
#'   chosen from the rows and classes, [rff_ridge()]'s 1024; tunable with
#'   [rff_num_features()]), and any other argument of [rff_svm()] or
#'   [rff_ridge()] such as `seed`, `scale` or `loss`.  Classification fits
#'   ask for probabilities (`probability = TRUE`) when [rff_svm()] offers
#'   them, so `predict(type = "prob")` works.
#'
#' The engine accepts sparse predictors (parsnip passes a `dgCMatrix`), see
#' [sparse_input].
#'
#' `bochner_parsnip_fit()` is the function the engine calls; it is exported
#' for parsnip, not meant to be called directly.
#'
#' @param x,y Predictors (a matrix, data frame or sparse matrix) and outcome
#'   (a factor for classification, numeric for regression).
#' @param cost,rbf_sigma See above; `NULL` for the defaults.
#' @param num_features Number of random features `D`.
#' @param mode `"classification"` or `"regression"`.
#' @param ... Further arguments of [rff_svm()] or [rff_ridge()].
#' @return A fit from [rff_svm()] or [rff_ridge()].
#' @examples
#' fit <- bochner_parsnip_fit(iris[, 1:4], iris$Species, cost = 1, rbf_sigma = 0.1,
#'                            num_features = 128, seed = 1)
#' table(predict(fit, iris[, 1:4]), iris$Species)
#' if (requireNamespace("parsnip", quietly = TRUE)) {
#'   spec <- parsnip::set_engine(parsnip::svm_rbf(mode = "classification", cost = 1),
#'                               "bochner", num_features = 128, seed = 1)
#'   fit <- parsnip::fit(spec, Species ~ ., data = iris)
#'   head(predict(fit, iris))
#' }
#' @export
bochner_parsnip_fit <- function(x, y, cost = NULL, rbf_sigma = NULL, num_features = NULL,
                                mode = c("classification", "regression"), ...) {
  mode <- check_choice(mode, c("classification", "regression"), "mode")
  if (!is.null(cost)) check_positive(cost, "cost")
  if (!is_sparse_matrix(x) && !is.data.frame(x)) x <- as.matrix(x)
  args <- list(x = x, y = y, ...)
  if (!is.null(num_features)) args$D <- check_count(num_features, "num_features")
  # unset parameters keep the machines' defaults
  if (!is.null(rbf_sigma)) {
    args$kernel <- gaussian_kernel(sigma = 1 / sqrt(2 * check_positive(rbf_sigma, "rbf_sigma")))
  }
  if (mode == "classification") {
    if (!is.null(cost)) args$cost <- cost
    if ("probability" %in% names(formals(rff_svm.default)) && is.null(args$probability)) {
      args$probability <- TRUE
    }
    do.call(rff_svm.default, args)
  } else {
    if (!is.null(cost)) args$lambda <- 1 / (2 * cost * NROW(x))
    do.call(rff_ridge.default, args)
  }
}

#' Tuning parameters for tidymodels
#'
#' dials parameters for the `num_features` engine argument of the parsnip
#' engine `"bochner"` ([bochner_parsnip_fit()]) and of the recipes steps
#' [step_rff()] and [step_nystrom()], and for the steps' `sigma` (bochner's
#' length scale, see [gaussian_kernel()]); `falkon_num_centers()` for the
#' `num_centers` argument of the engine `"bochner_falkon"`
#' ([falkon_parsnip_fit()]).  They need the dials package.
#'
#' @param range The range, on the scale of `trans` (log2 for
#'   `rff_num_features()`: 64 to 2048 features by default, and
#'   `falkon_num_centers()`: 128 to 8192 centres; log10 for
#'   `rff_sigma()`: 0.1 to 100).
#' @param trans A transformation from the scales package.
#' @return A dials quantitative parameter.
#' @examples
#' if (requireNamespace("dials", quietly = TRUE)) {
#'   rff_num_features()
#'   dials::grid_regular(rff_num_features(), rff_sigma(), levels = 3)
#' }
#' @export
rff_num_features <- function(range = c(6L, 11L), trans = NULL) {
  count_param(range, trans, c(num_features = "# Random Features"), "rff_num_features()")
}

# A dials whole-number parameter on the log2 scale by default.
count_param <- function(range, trans, label, what) {
  check_param_range(range, trans)
  need_package("dials", what)
  if (is.null(trans)) trans <- scales_transform("log2")
  dials::new_quant_param(type = "integer", range = range, inclusive = c(TRUE, TRUE),
                         trans = trans, label = label, finalize = NULL)
}

#' @rdname rff_num_features
#' @export
rff_sigma <- function(range = c(-1, 2), trans = NULL) {
  check_param_range(range, trans)
  need_package("dials", "rff_sigma()")
  if (is.null(trans)) trans <- scales_transform("log10")
  dials::new_quant_param(type = "double", range = range, inclusive = c(TRUE, TRUE),
                         trans = trans, label = c(sigma = "Kernel Length Scale"),
                         finalize = NULL)
}

check_param_range <- function(range, trans) {
  if (!is.numeric(range) || length(range) != 2L || anyNA(range) || any(!is.finite(range)) ||
      range[1L] > range[2L]) {
    stop_arg("range", "must be two finite numbers, lower then upper")
  }
  if (!is.null(trans) && !inherits(trans, c("transform", "trans"))) {
    stop_arg("trans", "must be NULL or a transformation from the scales package")
  }
}

# scales >= 1.3 names its transformations transform_*, older ones *_trans.
scales_transform <- function(name) {
  ns <- asNamespace("scales")
  f <- get0(paste0("transform_", name), envir = ns, inherits = FALSE)
  if (is.null(f)) f <- get(paste0(name, "_trans"), envir = ns)
  f()
}

need_package <- function(pkg, what) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    stop(what, " needs the ", pkg, " package; install it with install.packages(\"", pkg, "\")",
         call. = FALSE)
  }
}

# --- registration ------------------------------------------------------------

.onLoad <- function(libname, pkgname) {
  # parsnip may be loaded before or after bochner: register now, or when it is
  if (isNamespaceLoaded("parsnip")) register_parsnip_engines()
  setHook(packageEvent("parsnip", "onLoad"), function(...) register_parsnip_engines())
  register_mlr3_hook()   # the mlr3 learners (R/glue-mlr3.R), the same way
  invisible(NULL)
}

# The engines "bochner" (rff_svm / rff_ridge) and "bochner_falkon"
# (falkon(), R/falkon-tidymodels.R).
register_parsnip_engines <- function() {
  register_parsnip_engine()
  register_falkon_engine()
}

register_parsnip_engine <- function() {
  register_svm_rbf_engine("bochner", "bochner_parsnip_fit", "num_features", "rff_num_features")
}

# An engine of svm_rbf() on a bochner fitting function 'fun' taking x, y,
# cost, rbf_sigma, mode and a size argument 'size' (tuned by the dials
# parameter function 'size_param'); predictions by predict(type =).
register_svm_rbf_engine <- function(eng, fun, size, size_param) {
  engines <- tryCatch(parsnip::get_from_env("svm_rbf"), error = function(e) NULL)
  if (is.null(engines)) return(invisible(FALSE))        # a parsnip without svm_rbf
  fits <- parsnip::get_from_env("svm_rbf_fit")
  done <- !is.null(fits) && any(fits$engine == eng)
  if (done) return(invisible(TRUE))
  for (mode in c("classification", "regression")) {
    parsnip::set_model_engine("svm_rbf", mode = mode, eng = eng)
    parsnip::set_dependency("svm_rbf", eng = eng, pkg = "bochner", mode = mode)
    parsnip::set_fit(model = "svm_rbf", eng = eng, mode = mode,
                     value = list(interface = "matrix", protect = c("x", "y"),
                                  func = c(pkg = "bochner", fun = fun),
                                  defaults = list(mode = mode)))
    parsnip::set_encoding(model = "svm_rbf", eng = eng, mode = mode,
                          options = list(predictor_indicators = "one_hot",
                                         compute_intercept = FALSE, remove_intercept = TRUE,
                                         allow_sparse_x = TRUE))
  }
  parsnip::set_model_arg(model = "svm_rbf", eng = eng, parsnip = "cost",
                         original = "cost", func = list(pkg = "dials", fun = "cost"),
                         has_submodel = FALSE)
  parsnip::set_model_arg(model = "svm_rbf", eng = eng, parsnip = "rbf_sigma",
                         original = "rbf_sigma", func = list(pkg = "dials", fun = "rbf_sigma"),
                         has_submodel = FALSE)
  parsnip::set_model_arg(model = "svm_rbf", eng = eng, parsnip = size, original = size,
                         func = list(pkg = "bochner", fun = size_param), has_submodel = FALSE)
  pred <- function(type, post = NULL) {
    list(pre = NULL, post = post, func = c(fun = "predict"),
         args = list(object = quote(object$fit), newdata = quote(new_data), type = type))
  }
  parsnip::set_pred(model = "svm_rbf", eng = eng, mode = "classification",
                    type = "class", value = pred("class", function(x, object) unname(x)))
  parsnip::set_pred(model = "svm_rbf", eng = eng, mode = "classification",
                    type = "prob",
                    value = pred("prob", function(x, object) as.data.frame(unname_rows(x))))
  parsnip::set_pred(model = "svm_rbf", eng = eng, mode = "regression",
                    type = "numeric", value = pred("response", function(x, object) unname(x)))
  invisible(TRUE)
}

unname_rows <- function(x) {
  rownames(x) <- NULL
  x
}
