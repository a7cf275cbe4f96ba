# Arguments that kernlab's and e1071's users write out of habit (C =,
# kpar =, gamma =, prob.model = ...): an unused argument of bochner's, but
# refused with the name bochner gives the same setting, so that the message
# says what to write instead.

# Refuse the arguments 'args' (a list, as list(...) gives) as unused; 'who'
# (the function, e.g. "rff_svm()", or NULL) picks the advice that applies.
stop_unused_args <- function(args, who = NULL) {
  nm <- names(args)
  nm <- if (is.null(nm)) rep("", length(args)) else nm
  shown <- ifelse(nzchar(nm), sprintf("'%s'", nm), "an unnamed argument")
  hints <- if (!is.null(who)) {
    unlist(Map(function(n, v) if (nzchar(n)) argument_habit(n, v, who), nm, args),
           use.names = FALSE)
  }
  stop("unused argument(s): ", paste(shown, collapse = ", "),
       if (length(hints)) paste0("; ", paste(hints, collapse = "; ")), call. = FALSE)
}

# What bochner calls the setting that kernlab or e1071 names 'name' (given
# 'value'), as advice for the function 'who'; NULL when there is none.
argument_habit <- function(name, value, who) {
  machine <- who %in% c("rff_svm()", "rff_ridge()", "falkon()")
  number <- is.numeric(value) && length(value) == 1L && !is.na(value) && is.finite(value) &&
    value > 0
  gauss <- function(sigma) sprintf("kernel = gaussian_kernel(sigma = %s)", format(signif(sigma, 4)))
  if (name %in% c("C", "Cost", "costs", "COST")) {
    if (who == "rff_svm()") {
      return(sprintf("the SVM's C is 'cost' here%s", if (number) sprintf(" (cost = %s)", format(value)) else ""))
    }
    if (machine) {
      return(sprintf("%s has no cost: it is regularised by 'lambda' (a larger lambda regularises more, as a smaller C does)", who))
    }
    return(NULL)
  }
  if (name %in% c("prob.model", "probability.model", "prob", "probabilities", "probs")) {
    if (who == "falkon()") {
      return("falkon() gives class probabilities with loss = \"logistic\" and predict(type = \"prob\")")
    }
    if (machine) {
      return(sprintf("'%s' is 'probability' here (probability = TRUE, then predict(type = \"prob\"))", name))
    }
    return(NULL)
  }
  if (name == "sigma") {
    if (is.character(value) && length(value) == 1L) {
      return(sprintf("the bandwidth is the kernel's: kernel = gaussian_kernel(sigma = \"%s\")", value))
    }
    return(paste0("the bandwidth is the kernel's: ", if (number) gauss(value) else "kernel = gaussian_kernel(sigma = )",
                  ", a length scale (kernlab's rbfdot(sigma = s) is an inverse width: ",
                  "gaussian_kernel(sigma = 1 / sqrt(2 * s)))"))
  }
  if (name == "gamma") {
    return(paste0(if (number) sprintf("gamma = %s is %s", format(value), gauss(1 / sqrt(2 * value)))
                  else "gamma = g is kernel = gaussian_kernel(sigma = 1 / sqrt(2 * g))",
                  " here (e1071's and scikit-learn's gamma = 1 / (2 sigma^2))"))
  }
  if (name == "kpar") {
    s <- if (is.list(value)) value$sigma
    if (is.numeric(s) && length(s) == 1L && !is.na(s) && is.finite(s) && s > 0) {
      return(sprintf("kernlab's kpar = list(sigma = %s) (rbfdot) is %s here (sigma = 1 / sqrt(2 * s))",
                     format(s), gauss(1 / sqrt(2 * s))))
    }
    if (identical(value, "automatic")) {
      return("kernlab's kpar = \"automatic\" (sigest) is kernel = gaussian_kernel(sigma = \"sigest\") here")
    }
    return(paste("a kernel's parameters go to its constructor: kernel = gaussian_kernel(sigma = ),",
                 "laplace_kernel(sigma = ), polynomial_kernel(degree = , scale = , offset = )"))
  }
  if (name == "scaled" && machine) return("'scaled' is 'scale' here")
  if (who == "predict()" && name %in% c("probability", "decision.values")) {
    return(sprintf("predict(type = \"%s\") gives the %s", if (name == "probability") "prob" else "decision",
                   if (name == "probability") "class probabilities" else "decision values"))
  }
  NULL
}

# A kernel given by kernlab's or e1071's name ("rbfdot", "radial") instead of
# a kernel object: which constructor it is here (for check_kernel()).
kernel_name_hint <- function(kernel) {
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel)) return("")
  ctor <- switch(tolower(kernel), rbfdot = , radial = , rbf = , gaussian = "gaussian_kernel()",
                 laplacedot = , laplace = , laplacian = "laplace_kernel()",
                 polydot = , polynomial = , poly = "polynomial_kernel()", NULL)
  if (is.null(ctor)) return(sprintf(", not a name (\"%s\")", kernel))
  sprintf(", not a name: \"%s\" is %s here", kernel, ctor)
}

# Arguments renamed by the one vocabulary of ?bochner_arguments (issue 37):
# the old name keeps working for one release, with a message naming the
# new one.  One entry per function, old = "new".
renamed_arguments <- list(
  "falkon()" = c(centers = "m"),
  "kernel_kmeans()" = c(iter.max = "max_iter"),
  "rff_svm()" = c(epsilon = "tol")
)

# The number of Nystrom landmarks of method = "nystrom", which 'D' (now the
# random frequencies only) used to give: 'm', or for one release 'D' given
# by its old meaning, with a message naming 'm'; without either, D's
# default, so that default fits are unchanged.  The count then travels as
# D inside the function.
nystrom_count <- function(method, m, D, D_given, who) {
  if (method != "nystrom") {
    if (!is.null(m)) stop_arg("m", "is the number of Nystrom landmarks: it needs method = \"nystrom\"")
    return(D)
  }
  if (!is.null(m)) return(check_count(m, "m"))
  if (D_given) {
    message(sprintf(paste("%s: with method = \"nystrom\" the number of landmarks is 'm';",
                          "'D' for it works until the next release"), who))
  }
  D
}

# The arguments '...' of 'who' less the renamed ones, whose values are
# assigned to their new names in 'env' (the caller's frame), each with a
# message.  Then check_no_dots() on what is left.
take_renamed <- function(env, who, ...) {
  dots <- renamed_dots(env, who, ...)
  do.call(check_no_dots, c(dots, list(.who = who)))
}

# The same, for a function whose '...' carries other arguments too: the
# arguments left, as a list; with env = NULL the renamed ones stay in it,
# under their new names.
renamed_dots <- function(env, who, ...) {
  dots <- list(...)
  table <- renamed_arguments[[who]]
  for (old in intersect(names(dots), names(table))) {
    new <- table[[old]]
    message(sprintf("%s: '%s' is now called '%s'; the old name works until the next release",
                    who, old, new))
    value <- dots[[old]]
    dots[[old]] <- NULL
    if (is.null(env)) dots[[new]] <- value else assign(new, value, envir = env)
  }
  dots
}
