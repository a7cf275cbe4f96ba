# mlr3: learners for falkon(), rff_gp(), rff_svm() and rff_ridge() in mlr3's
# dictionary mlr_learners.  mlr3, paradox and R6 stay suggested packages:
# the learners' R6 classes are made when mlr3 is loaded (at once when it
# already is, else by a hook on its loading, set in .onLoad), and added to
# mlr_learners as mlr3's extension packages add theirs.

#' mlr3 learners
#'
#' With mlr3 installed, loading it (or bochner, when mlr3 is loaded) adds
#' six learners to its dictionary `mlr3::mlr_learners`, for
#' `mlr3::lrn()`, resampling, benchmarking and tuning:
#'
#' | id | fits | predict types |
#' |---|---|---|
#' | `classif.falkon` | [falkon()] (`loss = "logistic"` unless set) | `"response"`, `"prob"` |
#' | `regr.falkon` | [falkon()] | `"response"` |
#' | `regr.rff_gp` | [rff_gp()] | `"response"`, `"se"` |
#' | `classif.rff_svm` | [rff_svm()] | `"response"`, `"prob"` |
#' | `classif.rff_ridge` | [rff_ridge()] on classes | `"response"`, `"prob"` |
#' | `regr.rff_ridge` | [rff_ridge()] | `"response"` |
#'
#' **Parameters** are the arguments of the functions, by the same names and
#' with the same defaults (`D`, `lambda`, `cost`, `m`, `loss`,
#' `scale`, `seed`, `nthreads`, ...), plus `sigma`: the length scale of
#' the Gaussian kernel ([gaussian_kernel()]), a number or one of the
#' bandwidth rules `"median"` and `"sigest"`; unset, the function's default
#' kernel.  Any other kernel goes in `kernel` (a kernel object; not with
#' `sigma`).  `predict_type = "prob"` fits with `probability = TRUE`
#' ([rff_svm()], [rff_ridge()]); [falkon()]'s classes are fitted with the
#' logistic loss unless `loss = "squared"` is set, and either gives
#' probabilities calibrated on falkon's held-out slice.  [falkon()]'s `m` above the number
#' of training rows is lowered to it, so that a tuning range suits every
#' resampling fold.  `regr.rff_gp`'s `"se"` is the standard error of the
#' posterior mean ([predict.rff_gp()]'s `se.fit`), or, with the predict
#' parameter `interval = "prediction"`, of a new observation (the noise
#' added).  All learners take case weights (a task column with the role
#' `"weights_learner"`) and numeric, integer and logical features; factors
#' need encoding first (mlr3pipelines' `po("encode")`), missing values
#' imputing.
#'
#' **Tuning ranges.**  `bochner_search_space(learner)` gives the ranges the
#' package uses elsewhere (its dials parameters and caret grids), as a
#' paradox search space on the log scale for `mlr3tuning`: `sigma` 0.1 to
#' 100 ([rff_sigma()]), `D` 64 to 2048 ([rff_num_features()]), `m`
#' 128 to 8192 ([falkon_num_centers()]), `cost` \eqn{2^{-5}}{2^-5} to
#' \eqn{2^8}{2^8} (as [rff_svm_caret]'s random search), `lambda`
#' \eqn{10^{-8}}{1e-8} to \eqn{10^{-2}}{1e-2} for falkon and ridge regression
#' alike (one scale: a mean over rows).  For `regr.rff_gp`, whose kernel parameters are
#' learned by marginal likelihood, only `D`.
#'
#' Fits are those of the functions called directly: the same data and
#' arguments give the same predictions.  With `seed` set, a fit draws from
#' R's default generator seeded by it, as the function does in a new
#' session, whatever generator the caller uses (mlr3 runs each resampling
#' iteration on an L'Ecuyer-CMRG stream of its own, under which
#' `set.seed(seed)` would draw other numbers); without it, from the
#' caller's stream.
#'
#' @param learner An mlr3 learner of bochner, or its id
#'   (`"classif.rff_svm"`, ...).
#' @return `bochner_search_space()`: a `paradox::ParamSet`.
#' @name mlr_learners_bochner
#' @aliases mlr_learners_classif.falkon mlr_learners_regr.falkon
#'   mlr_learners_regr.rff_gp mlr_learners_classif.rff_svm
#'   mlr_learners_classif.rff_ridge mlr_learners_regr.rff_ridge
#' @examples
#' # (tsk("sonar") is a data set of the mlbench package)
#' if (requireNamespace("mlr3", quietly = TRUE) && requireNamespace("mlbench", quietly = TRUE)) {
#'   library(mlr3)
#'   # 3-fold cross-validation of the SVM on random features
#'   learner <- lrn("classif.rff_svm", D = 128, seed = 1, predict_type = "prob")
#'   set.seed(1)
#'   rr <- resample(tsk("sonar"), learner, rsmp("cv", folds = 3))
#'   rr$aggregate(msrs(c("classif.ce", "classif.auc")))
#'
#'   # a GP's predictions with standard errors
#'   gp <- lrn("regr.rff_gp", D = 64, seed = 1, predict_type = "se")
#'   gp$train(tsk("mtcars"))
#'   head(as.data.table(gp$predict(tsk("mtcars"))), 3)
#'
#'   # the tuning ranges
#'   bochner_search_space("classif.falkon")
#' }
#' \donttest{
#' # tuning cost and bandwidth by random search with mlr3tuning
#' if (requireNamespace("mlr3tuning", quietly = TRUE) &&
#'     requireNamespace("mlbench", quietly = TRUE)) {
#'   library(mlr3tuning)
#'   learner <- lrn("classif.rff_svm", D = 128, seed = 1)
#'   space <- bochner_search_space(learner)
#'   space$subset(c("cost", "sigma"))
#'   set.seed(2)
#'   instance <- tune(tnr("random_search"), tsk("sonar"), learner,
#'                    rsmp("cv", folds = 3), msr("classif.ce"),
#'                    term_evals = 6, search_space = space)
#'   instance$result[, c("cost", "sigma", "classif.ce")]
#' }
#' }
NULL

# The learners: the function each fits, its task type and what it offers.
mlr3_specs <- function() {
  both <- c("twoclass", "multiclass", "weights")
  list(
    classif.falkon = list(fun = "falkon", type = "classif", class = "LearnerClassifFalkon",
                          label = "FALKON Kernel Logistic / Ridge Regression",
                          predict_types = c("response", "prob"), properties = both),
    regr.falkon = list(fun = "falkon", type = "regr", class = "LearnerRegrFalkon",
                       label = "FALKON Kernel Ridge Regression",
                       predict_types = "response", properties = "weights"),
    regr.rff_gp = list(fun = "rff_gp", type = "regr", class = "LearnerRegrRffGp",
                       label = "Random Feature Gaussian Process",
                       predict_types = c("response", "se"), properties = "weights"),
    classif.rff_svm = list(fun = "rff_svm", type = "classif", class = "LearnerClassifRffSvm",
                           label = "Random Feature Support Vector Machine",
                           predict_types = c("response", "prob"), properties = both),
    classif.rff_ridge = list(fun = "rff_ridge", type = "classif", class = "LearnerClassifRffRidge",
                             label = "Random Feature Ridge Classifier",
                             predict_types = c("response", "prob"), properties = both),
    regr.rff_ridge = list(fun = "rff_ridge", type = "regr", class = "LearnerRegrRffRidge",
                          label = "Random Feature Ridge Regression",
                          predict_types = "response", properties = "weights")
  )
}

# The parameter set of a learner: the function's arguments, by name.
mlr3_param_set <- function(id) {
  p <- asNamespace("paradox")
  p_dbl <- p$p_dbl
  p_int <- p$p_int
  p_lgl <- p$p_lgl
  p_fct <- p$p_fct
  p_uty <- p$p_uty
  tr <- "train"
  kernel_check <- function(x) {
    if (inherits(x, "bochner_kernel")) TRUE else "must be a kernel object of bochner"
  }
  common <- list(
    sigma = p_dbl(lower = 0, special_vals = list("median", "sigest"), tags = tr),
    kernel = p_uty(custom_check = kernel_check, tags = tr),
    scale = p_lgl(default = TRUE, tags = tr),
    seed = p_int(special_vals = list(NULL), default = NULL, tags = tr),
    nthreads = p_int(lower = 1L, tags = c("train", "predict", "threads"))
  )
  spec <- switch(id,
    classif.falkon = ,
    regr.falkon = c(list(
      m = p_int(lower = 1L, special_vals = list(NULL), default = NULL, tags = tr),
      lambda = p_dbl(lower = 0, special_vals = list("auto"), default = "auto", tags = tr),
      landmarks = p_fct(c("auto", landmark_rules), default = "auto", tags = tr),
      iter = p_int(lower = 1L, special_vals = list("auto"), default = "auto", tags = tr),
      control = p_uty(default = list(), tags = tr)),
      if (id == "classif.falkon") {
        list(loss = p_fct(c("squared", "logistic"), default = "squared", init = "logistic",
                          tags = tr))
      }),
    regr.rff_gp = list(
      D = p_int(lower = 1L, special_vals = list(NULL), default = NULL, tags = tr),
      ard = p_lgl(special_vals = list(NULL), default = NULL, tags = tr),
      optimize = p_lgl(default = TRUE, tags = tr),
      method = p_fct(c("rff", "exact"), default = "rff", tags = tr),
      signal = p_dbl(lower = 0, special_vals = list(NULL), default = NULL, tags = tr),
      noise = p_dbl(lower = 0, special_vals = list(NULL), default = NULL, tags = tr),
      control = p_uty(default = list(), tags = tr),
      sampling = p_fct(c("iid", "orthogonal", "qmc"), default = "iid", tags = tr),
      mean = p_fct(c("centred", "constant", "linear", "quadratic"), default = "centred",
                   tags = tr),
      laplace = p_lgl(default = FALSE, tags = tr),
      interval = p_fct(c("confidence", "prediction"), default = "confidence", tags = "predict")),
    classif.rff_svm = list(
      D = p_int(lower = 1L, special_vals = list(NULL), default = NULL, tags = tr),
      cost = p_dbl(lower = 0, default = 1, tags = tr),
      loss = p_fct(c("hinge", "squared_hinge"), default = "hinge", tags = tr),
      multiclass = p_fct(c("ovo", "ovr"), default = "ovo", tags = tr),
      cross = p_int(lower = 0L, default = 0L, tags = tr),
      class.weights = p_uty(default = NULL, tags = tr),
      tol = p_dbl(lower = 0, default = 0.1, tags = tr),
      max_iter = p_int(lower = 1L, default = 1000L, tags = tr),
      shrinking = p_lgl(default = TRUE, tags = tr)),
    classif.rff_ridge = ,
    regr.rff_ridge = list(
      D = p_int(lower = 1L, default = 1024L, tags = tr),
      lambda = p_dbl(lower = 0, special_vals = list("auto"), default = "auto", tags = tr),
      criterion = p_fct(c("auto", "gcv", "loo"), default = "auto", tags = tr))
  )
  do.call(p$ps, c(common, spec))
}

#' @rdname mlr_learners_bochner
#' @export
bochner_search_space <- function(learner) {
  id <- if (is.character(learner)) learner else if (inherits(learner, "Learner")) learner$id
  if (!is.character(id) || length(id) != 1L || !id %in% names(mlr3_specs())) {
    stop_arg("learner", "must be one of bochner's mlr3 learners or its id: ",
             paste(names(mlr3_specs()), collapse = ", "))
  }
  need_package("paradox", "bochner_search_space()")
  p <- asNamespace("paradox")
  log_dbl <- function(lower, upper) p$p_dbl(lower, upper, logscale = TRUE)
  log_int <- function(lower, upper) p$p_int(lower, upper, logscale = TRUE)
  sigma <- log_dbl(0.1, 100)
  D <- log_int(64L, 2048L)
  lambda <- log_dbl(1e-8, 1e-2)
  ranges <- switch(id,
    classif.falkon = ,
    regr.falkon = list(sigma = sigma, lambda = lambda, m = log_int(128L, 8192L)),
    regr.rff_gp = list(D = D),
    classif.rff_svm = list(sigma = sigma, cost = log_dbl(2^-5, 2^8), D = D),
    list(sigma = sigma, lambda = lambda, D = D))
  do.call(p$ps, ranges)
}

# The features of a task as a double matrix, columns by name (so that the
# fits match new data's columns by name, in any order).
mlr3_features <- function(task, cols = task$feature_names) {
  d <- task$data(cols = cols)
  x <- matrix(unlist(lapply(d, as.double), use.names = FALSE), nrow = nrow(d),
              dimnames = list(NULL, cols))
  x
}

# The case weights of a task: mlr3 >= 0.23 through the learner's
# .get_weights() (which honours use_weights), older ones from the task.
mlr3_weights <- function(private, task) {
  get <- private$.get_weights
  if (is.function(get)) return(get(task))
  if ("weights" %in% task$properties) task$weights$weight else NULL
}

mlr3_train <- function(learner, private, task, spec) {
  pv <- learner$param_set$get_values(tags = "train")
  if (!is.null(pv$sigma)) {
    if (!is.null(pv$kernel)) {
      stop("set 'sigma' (the Gaussian kernel's length scale) or 'kernel', not both", call. = FALSE)
    }
    pv$kernel <- gaussian_kernel(sigma = pv$sigma)
  }
  pv$sigma <- NULL
  x <- mlr3_features(task)
  y <- task$truth()
  prob <- learner$predict_type == "prob"
  if (spec$fun == "falkon") {
    if (!is.null(pv$m)) pv$m <- min(pv$m, nrow(x))
  }
  if (spec$type == "classif" && spec$fun != "falkon") pv$probability <- prob
  w <- mlr3_weights(private, task)
  if (!is.null(w)) pv$weights <- w
  if (!is.null(pv$seed)) mlr3_default_generator()
  # called by name on symbols, so that the fit's call does not hold the data
  env <- list2env(list(x = x, y = y), parent = asNamespace("bochner"))
  do.call(paste0(spec$fun, ".default"), c(list(x = quote(x), y = quote(y)), pv), envir = env)
}

# With a seed the fit draws from R's default generators, as the function
# called in a new session does, whatever the caller's are: mlr3 runs
# resampling iterations as futures, each on an L'Ecuyer-CMRG stream, under
# which set.seed(seed) would draw other numbers.  The caller's generator
# and its state come back on exit.
mlr3_default_generator <- function(envir = parent.frame()) {
  genv <- globalenv()
  old <- get0(".Random.seed", envir = genv, inherits = FALSE)
  restore <- function() {
    if (is.null(old)) {
      rm(".Random.seed", envir = genv)
    } else {
      assign(".Random.seed", old, envir = genv)
    }
  }
  do.call(on.exit, list(as.call(list(restore)), add = TRUE), envir = envir)
  RNGkind("Mersenne-Twister", "Inversion", "Rejection")
  invisible()
}

mlr3_predict <- function(learner, task, spec) {
  pv <- learner$param_set$get_values(tags = "predict")
  model <- learner$model
  cols <- learner$state$feature_names
  x <- mlr3_features(task, if (is.null(cols)) task$feature_names else cols)
  threads <- if (is.null(pv$nthreads)) list() else list(nthreads = pv$nthreads)
  pred <- function(...) do.call(stats::predict, c(list(model, x, ...), threads))
  if (spec$type == "classif") {
    response <- as.character(pred(type = "class"))
    if (learner$predict_type != "prob") return(list(response = response))
    prob <- pred(type = "prob")
    dimnames(prob) <- list(NULL, colnames(prob))
    return(list(response = response, prob = prob))
  }
  if (learner$predict_type != "se") return(list(response = unname(pred())))
  p <- pred(se.fit = TRUE)
  se <- p$se.fit
  if (identical(pv$interval, "prediction")) se <- sqrt(se^2 + p$residual.scale^2)
  list(response = unname(p$fit), se = unname(se))
}

# R6 gives its methods self, private and super (for R CMD check's code scan)
utils::globalVariables(c("self", "private", "super"))

# The R6 class of a learner, inheriting from mlr3's LearnerClassif or
# LearnerRegr (made here, so that neither mlr3 nor R6 is needed to install
# or load bochner).
mlr3_learner_class <- function(id) {
  spec <- mlr3_specs()[[id]]
  base <- if (spec$type == "classif") mlr3::LearnerClassif else mlr3::LearnerRegr
  R6::R6Class(spec$class, inherit = base,
    public = list(
      initialize = function() {
        super$initialize(id = id, param_set = mlr3_param_set(id),
                         predict_types = spec$predict_types,
                         feature_types = c("logical", "integer", "numeric"),
                         properties = spec$properties, packages = "bochner",
                         label = spec$label, man = paste0("bochner::mlr_learners_", id))
      }
    ),
    private = list(
      .train = function(task) mlr3_train(self, private, task, spec),
      .predict = function(task) mlr3_predict(self, task, spec)
    )
  )
}

# Add the learners to mlr3's dictionary (when mlr3, paradox and R6 are
# there; an error is a warning: it must not stop mlr3 from loading).
register_mlr3 <- function(...) {
  ok <- all(vapply(c("mlr3", "paradox", "R6"), requireNamespace, logical(1), quietly = TRUE))
  if (!ok) return(invisible(FALSE))
  tryCatch({
    dict <- utils::getFromNamespace("mlr_learners", ns = "mlr3")
    for (id in names(mlr3_specs())) dict$add(id, mlr3_learner_class(id))
    invisible(TRUE)
  }, error = function(e) {
    warning("bochner could not add its learners to mlr3: ", conditionMessage(e), call. = FALSE)
    invisible(FALSE)
  })
}

# For .onLoad: register now if mlr3 is loaded, and whenever it is loaded.
register_mlr3_hook <- function() {
  if (isNamespaceLoaded("mlr3")) register_mlr3()
  setHook(packageEvent("mlr3", "onLoad"), function(...) register_mlr3(), action = "append")
  invisible(NULL)
}
