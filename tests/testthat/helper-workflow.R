# The workflow table (issue 15, item 8): R modelling habits, each checked
# on bochner's machines and on kernlab::ksvm(), e1071::svm() and glmnet.
# bench/investigations/workflow.R prints the table into bench/investigations/workflow.md from these
# definitions; test-workflow.R checks that the recorded table
# (workflow_expected) is what the packages installed here do.
#
# Every check is a function of an adapter (how to fit and predict with one
# package) returning "yes", "no", or "n/a" where the package has no such
# interface (glmnet has no formula method).  An error is a "no".

wf_data <- function() {
  aq <- transform(airquality, high = factor(Temp > 80))[, c("high", "Ozone", "Solar.R", "Wind")]
  iris2 <- iris
  iris2$Size <- factor(ifelse(iris$Sepal.Length > 5.8, "big", "small"))
  list(aq = aq, f_aq = high ~ Ozone + Solar.R + Wind, complete = sum(stats::complete.cases(aq)),
       iris2 = iris2)
}

# Adapters: fit(formula, data, ...) through the package's formula method
# (NULL without one), fit_xy(x, y, ...), predict(fit, newdata, ...), and
# the name and value of a tuning argument for update().
workflow_adapters <- function() {
  out <- list()
  if (requireNamespace("bochner", quietly = TRUE)) {
    out$rff_svm <- list(
      label = "bochner::rff_svm", pkg = "bochner",
      fit = function(formula, data, ...) {
        do.call(bochner::rff_svm, list(formula = formula, data = data, D = 64, seed = 1, ...))
      },
      fit_xy = function(x, y, ...) do.call(bochner::rff_svm, list(x, y, D = 64, seed = 1, ...)),
      predict = function(fit, newdata, ...) stats::predict(fit, newdata, ...),
      param = "cost", get_param = function(fit) fit$cost)
    out$rff_ridge <- list(
      label = "bochner::rff_ridge", pkg = "bochner",
      fit = function(formula, data, ...) {
        do.call(bochner::rff_ridge, list(formula = formula, data = data, D = 64, seed = 1, ...))
      },
      fit_xy = function(x, y, ...) do.call(bochner::rff_ridge, list(x, y, D = 64, seed = 1, ...)),
      predict = function(fit, newdata, ...) stats::predict(fit, newdata, ...),
      param = "lambda", get_param = function(fit) fit$lambda)
  }
  if (requireNamespace("kernlab", quietly = TRUE)) {
    out$ksvm <- list(
      label = "kernlab::ksvm", pkg = "kernlab",
      fit = function(formula, data, ...) {
        do.call(kernlab::ksvm, list(formula, data = data, kpar = list(sigma = 0.1), ...))
      },
      fit_xy = function(x, y, ...) {
        do.call(kernlab::ksvm, list(as.matrix(x), y, kpar = list(sigma = 0.1), ...))
      },
      predict = function(fit, newdata, ...) kernlab::predict(fit, newdata, ...),
      fitted = function(fit) kernlab::fitted(fit),
      param = "C", get_param = function(fit) kernlab::param(fit)$C)
  }
  if (requireNamespace("e1071", quietly = TRUE)) {
    out$svm <- list(
      label = "e1071::svm", pkg = "e1071",
      fit = function(formula, data, ...) do.call(e1071::svm, list(formula, data = data, ...)),
      fit_xy = function(x, y, ...) do.call(e1071::svm, list(x, y, ...)),
      predict = function(fit, newdata, ...) stats::predict(fit, newdata, ...),
      param = "cost", get_param = function(fit) fit$cost)
  }
  if (requireNamespace("glmnet", quietly = TRUE)) {
    out$glmnet <- list(
      label = "glmnet::glmnet", pkg = "glmnet",
      fit = NULL,
      fit_xy = function(x, y, ...) {
        family <- if (nlevels(factor(y)) > 2L) "multinomial" else "binomial"
        do.call(glmnet::glmnet, list(as.matrix(x), y, family = family, ...))
      },
      predict = function(fit, newdata, ...) {
        stats::predict(fit, if (is.null(newdata)) NULL else as.matrix(newdata), s = 0.01,
                       type = "class", ...)
      },
      param = "alpha", get_param = function(fit) fit$call$alpha)
  }
  out
}

wf_yes <- function(ok) if (isTRUE(ok)) "yes" else "no"

# Each row: the behaviour, in words, and its check.
workflow_behaviours <- list(
  na_predictors = list(
    text = "fits data with NA in predictors by default (incomplete rows dropped)",
    check = function(m, d) {
      fit <- if (!is.null(m$fit)) m$fit(d$f_aq, d$aq) else m$fit_xy(d$aq[-1], d$aq$high)
      wf_yes(length(m$fitted(fit)) == d$complete || NROW(m$predict(fit, d$aq[1:4, -1])) == 4L)
    }),
  na_response = list(
    text = "an NA only in the response drops the row",
    check = function(m, d) {
      x <- iris
      x$Species[3] <- NA
      fit <- if (!is.null(m$fit)) m$fit(Species ~ ., x) else m$fit_xy(x[-5], x$Species)
      wf_yes(!is.null(fit))
    }),
  formula_by_name = list(
    text = "`formula =` by name",
    check = function(m, d) {
      if (is.null(m$fit) || is.null(m$fit_named)) return("n/a")
      wf_yes(!is.null(m$fit_named(Species ~ ., iris)))
    }),
  factors = list(
    text = "factor predictors in a formula",
    check = function(m, d) {
      if (is.null(m$fit)) return("n/a")
      fit <- m$fit(Species ~ Size + Petal.Length, d$iris2)
      wf_yes(length(m$predict(fit, d$iris2[1:5, ])) == 5L)
    }),
  subset = list(
    text = "`subset =`",
    check = function(m, d) {
      if (is.null(m$fit)) return("n/a")
      fit <- m$fit(Species ~ ., iris, subset = iris$Sepal.Length > 5)
      wf_yes(length(m$fitted(fit)) == sum(iris$Sepal.Length > 5))
    }),
  weights = list(
    text = "case weights (`weights =`) change the fit",
    check = function(m, d) {
      w <- ifelse(iris$Species == "versicolor", 20, 1)
      plain <- if (!is.null(m$fit)) m$fit(Species ~ ., iris) else m$fit_xy(iris[-5], iris$Species)
      weighted <- if (!is.null(m$fit)) m$fit(Species ~ ., iris, weights = w)
                  else m$fit_xy(iris[-5], iris$Species, weights = w)
      wf_yes(!identical(m$predict(plain, iris[-5]), m$predict(weighted, iris[-5])))
    }),
  na_exclude = list(
    text = "`na.action = na.exclude` pads `fitted()` with NA",
    check = function(m, d) {
      if (is.null(m$fit)) return("n/a")
      fit <- m$fit(d$f_aq, d$aq, na.action = stats::na.exclude)
      wf_yes(length(m$fitted(fit)) == nrow(d$aq))
    }),
  update = list(
    text = "`update(fit, <cost> = )` refits",
    check = function(m, d) {
      fit <- if (!is.null(m$fit)) m$fit(Species ~ ., iris) else m$fit_xy(iris[-5], iris$Species)
      # the updated call, evaluated as with the package attached
      args <- stats::setNames(list(fit, 0.5, FALSE), c("object", m$param, "evaluate"))
      refit <- eval(do.call(stats::update, args), asNamespace(m$pkg))
      wf_yes(isTRUE(all.equal(m$get_param(refit), 0.5)))
    }),
  formula = list(
    text = "`formula(fit)`",
    check = function(m, d) {
      if (is.null(m$fit)) return("n/a")
      f <- stats::formula(m$fit(d$f_aq, d$aq))
      wf_yes(inherits(f, "formula") && all(all.vars(d$f_aq) %in% all.vars(f)))
    }),
  nobs = list(
    text = "`nobs(fit)`",
    check = function(m, d) {
      fit <- if (!is.null(m$fit)) m$fit(d$f_aq, d$aq)
             else m$fit_xy(d$aq[stats::complete.cases(d$aq), -1],
                           d$aq$high[stats::complete.cases(d$aq)])
      wf_yes(stats::nobs(fit) == d$complete)
    }),
  model_frame = list(
    text = "`model.frame(fit)`",
    check = function(m, d) {
      if (is.null(m$fit)) return("n/a")
      wf_yes(nrow(stats::model.frame(m$fit(d$f_aq, d$aq))) == d$complete)
    }),
  predict_null = list(
    text = "`predict(fit, newdata = NULL)` gives the fitted values",
    check = function(m, d) {
      fit <- if (!is.null(m$fit)) m$fit(Species ~ ., iris) else m$fit_xy(iris[-5], iris$Species)
      wf_yes(NROW(m$predict(fit, NULL)) == 150L)
    }),
  predict_zero = list(
    text = "`predict()` on zero rows gives an empty result",
    check = function(m, d) {
      fit <- if (!is.null(m$fit)) m$fit(Species ~ ., iris) else m$fit_xy(iris[-5], iris$Species)
      wf_yes(NROW(m$predict(fit, iris[0, if (is.null(m$fit)) -5 else TRUE])) == 0L)
    }),
  predict_na = list(
    text = "`predict()` gives NA for an incomplete new row, in place (default call)",
    check = function(m, d) {
      cc <- stats::complete.cases(d$aq)
      fit <- if (!is.null(m$fit)) m$fit(d$f_aq, d$aq) else m$fit_xy(d$aq[cc, -1], d$aq$high[cc])
      p <- m$predict(fit, d$aq[1:6, -1])
      wf_yes(NROW(p) == 6L && all(is.na(if (is.matrix(p)) p[5:6, ] else p[5:6])) &&
               !anyNA(if (is.matrix(p)) p[1:4, ] else p[1:4]))
    }),
  predict_na_exclude = list(
    text = "... and with `predict(..., na.action = na.exclude)`",
    check = function(m, d) {
      cc <- stats::complete.cases(d$aq)
      fit <- if (!is.null(m$fit)) m$fit(d$f_aq, d$aq) else m$fit_xy(d$aq[cc, -1], d$aq$high[cc])
      p <- m$predict(fit, d$aq[1:6, -1], na.action = stats::na.exclude)
      wf_yes(NROW(p) == 6L && all(is.na(if (is.matrix(p)) p[5:6, ] else p[5:6])) &&
               !anyNA(if (is.matrix(p)) p[1:4, ] else p[1:4]))
    }),
  extra_columns = list(
    text = "a fit on `iris[, 1:4]` predicts on `iris` (columns matched by name)",
    check = function(m, d) {
      fit <- m$fit_xy(iris[, 1:4], iris$Species)
      wf_yes(identical(m$predict(fit, iris), m$predict(fit, iris[, 1:4])))
    })
)

# `formula =` by name needs the package's own function, not the adapter's
# positional call.
wf_fit_named <- list(
  rff_svm = function(f, data) bochner::rff_svm(formula = f, data = data, D = 16, seed = 1),
  rff_ridge = function(f, data) bochner::rff_ridge(formula = f, data = data, D = 16, seed = 1),
  ksvm = function(f, data) kernlab::ksvm(formula = f, data = data),
  svm = function(f, data) e1071::svm(formula = f, data = data)
)

# The table: one row per behaviour, one column per installed package.
workflow_table <- function(adapters = workflow_adapters()) {
  d <- wf_data()
  cells <- vapply(names(adapters), function(a) {
    m <- adapters[[a]]
    m$fit_named <- wf_fit_named[[a]]
    if (is.null(m$fitted)) m$fitted <- stats::fitted
    vapply(workflow_behaviours, function(b) {
      suppressWarnings(tryCatch(b$check(m, d), error = function(e) "no"))
    }, "")
  }, character(length(workflow_behaviours)))
  cells <- matrix(cells, nrow = length(workflow_behaviours),
                  dimnames = list(names(workflow_behaviours), names(adapters)))
  cells
}

# What bench/investigations/workflow.md records (kernlab 0.9-32, e1071 1.7-13, glmnet
# 4.1-6); "weights" for bochner is "yes" once the machines take case
# weights.
workflow_expected <- rbind(
  #                     rff_svm rff_ridge  ksvm   svm    glmnet
  na_predictors      = c("yes", "yes",    "yes", "yes", "no"),
  na_response        = c("yes", "yes",    "yes", "yes", "no"),
  formula_by_name    = c("yes", "yes",    "no",  "yes", "n/a"),
  factors            = c("yes", "yes",    "yes", "yes", "n/a"),
  subset             = c("yes", "yes",    "yes", "yes", "n/a"),
  weights            = c("yes", "yes",    "no",  "no",  "yes"),
  na_exclude         = c("yes", "yes",    "no",  "yes", "n/a"),
  update             = c("yes", "yes",    "no",  "yes", "yes"),
  formula            = c("yes", "yes",    "no",  "yes", "n/a"),
  nobs               = c("yes", "yes",    "no",  "no",  "yes"),
  model_frame        = c("yes", "yes",    "no",  "yes", "n/a"),
  predict_null       = c("yes", "yes",    "no",  "no",  "no"),
  predict_zero       = c("yes", "yes",    "no",  "yes", "yes"),
  predict_na         = c("yes", "yes",    "no",  "no",  "no"),
  predict_na_exclude = c("yes", "yes",    "no",  "yes", "no"),
  extra_columns      = c("yes", "yes",    "no",  "no",  "no")
)
colnames(workflow_expected) <- c("rff_svm", "rff_ridge", "ksvm", "svm", "glmnet")
