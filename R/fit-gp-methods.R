# print, summary, plot, logLik and the model generics of rff_gp fits.

#' @importFrom stats logLik simulate
NULL

gp_title <- function(x) {
  if (x$method == "exact") return("Exact Gaussian process regression")
  sprintf("Gaussian process regression on %d random Fourier features (D = %d frequencies)",
          2L * x$D, x$D)
}

gp_hyper_lines <- function(x) {
  h <- x$hyper
  f <- function(v) paste(format(signif(v, 4)), collapse = ", ")
  where <- if (is.null(x$scaling)) "" else " (standardised inputs)"
  if (x$kind == "sm") {
    return(c(sprintf("  spectral mixture, %d components%s:", length(h$weights), where),
             sprintf("    weights %s", f(h$weights)),
             sprintf("    means (frequencies) %s", f(h$means)),
             sprintf("    length scales %s", f(h$scales)),
             sprintf("  noise sd %s", f(h$noise))))
  }
  c(sprintf("  kernel: %s; length scale%s%s: %s", kernel_label(x$kernel),
            if (length(h$lengthscale) > 1L) "s (ARD)" else "", where, f(h$lengthscale)),
    sprintf("  signal sd %s, noise sd %s", f(h$signal), f(h$noise)))
}

# The mean's line: the basis and its coefficients (response units, on the
# centred and scaled basis columns).
gp_mean_line <- function(x) {
  b <- x$basis
  if (is.null(b)) return(NULL)
  sprintf("  mean: %s basis (vague prior), coefficients %s", b$type,
          paste(format(signif(b$coefficients, 4)), collapse = ", "))
}

#' @export
print.rff_gp <- function(x, ...) {
  cat(gp_title(x), "\n", sep = "")
  cat(c(gp_hyper_lines(x), gp_mean_line(x)), sep = "\n")
  how <- if (!x$optimized) "hyperparameters as given"
         else sprintf("hyperparameters by marginal likelihood (L-BFGS-B, %d evaluations%s%s)",
                      x$optim$counts[[1L]],
                      if (is.null(x$optim$pilot)) ""
                      else sprintf(" after %d on a %d-row pilot", x$optim$pilot[["evaluations"]],
                                   x$optim$pilot[["rows"]]),
                      if (x$optim$convergence == 0L) "" else ", not converged")
  cat(sprintf("  log marginal likelihood %.4g; %s\n", x$logLik, how))
  if (!is.null(x$laplace)) {
    cat(sprintf("  predictive variance with the uncertainty of %d hyperparameter(s) (Laplace)\n",
                length(x$laplace$free)))
  }
  if (is.null(x$chunks)) {
    cat(sprintf("  %d observations, training RMSE %.4g\n", x$n, sqrt(mean(x$residuals^2))))
  } else {
    cat(chunked_description(x), "\n", sep = "")
  }
  invisible(x)
}

#' @export
summary.rff_gp <- function(object, ...) {
  if (is.null(object$residuals)) {
    stop_arg("object", "was fitted on data_chunks() and keeps no residuals: ",
             "predict() on the chunks gives the fitted values")
  }
  r <- object$residuals
  y <- object$fitted + r
  structure(list(fit = object, residuals = stats::quantile(r),
                 rmse = sqrt(mean(r^2)), r.squared = 1 - sum(r^2) / sum((y - mean(y))^2),
                 theta = object$theta, logLik = object$logLik),
            class = "summary.rff_gp")
}

#' @export
print.summary.rff_gp <- function(x, ...) {
  print(x$fit)
  cat("Residuals:\n")
  print(signif(x$residuals, 4))
  cat(sprintf("Training RMSE %.4g, R-squared %.4f\n", x$rmse, x$r.squared))
  cat("Parameters (log scale, standardised units):\n")
  print(signif(x$theta, 4))
  invisible(x)
}

#' @export
logLik.rff_gp <- function(object, ...) {
  structure(object$logLik, df = length(object$theta), nobs = fit_nobs(object), class = "logLik")
}

#' Plot a Gaussian process fit of one input
#'
#' The posterior mean over the range of the input with its pointwise bands
#' (the darker band for the function, `interval = "confidence"`, the lighter
#' one for new observations, `"prediction"`) and the training points (kept
#' by fits of at most 10000 rows), with a legend.  The axes are named after
#' the formula's variables for a formula fit, or the input's column name.
#'
#' @param x A fit from [rff_gp()] on one input.
#' @param level Coverage of the bands.
#' @param n Number of points of the curve.
#' @param xlim,ylim,xlab,ylab,main As in [graphics::plot()]; `xlim` also
#'   sets the range the curve covers (to show an extrapolation).  By
#'   default the labels are the variables' names and the title says which
#'   GP it is.
#' @param legend Where the legend goes (a keyword of
#'   [graphics::legend()], such as `"topleft"`), or `NULL` for none.
#' @param ... Passed on to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(4)
#' d <- data.frame(time = runif(60, 0, 5))
#' d$signal <- sin(d$time) + rnorm(60, sd = 0.2)
#' fit <- rff_gp(signal ~ time, data = d, D = 64)
#' plot(fit)
#' @export
plot.rff_gp <- function(x, level = 0.95, n = 200, xlim = NULL, ylim = NULL, xlab = NULL,
                        ylab = NULL, main = NULL, legend = "topleft", ...) {
  if (x$input$d != 1L) stop_arg("x", "must be a fit on one input to plot (it has ", x$input$d, ")")
  n <- check_count(n, "n", lower = 2)
  if (is.null(xlim)) xlim <- x$input$range[, 1L]
  grid <- seq(xlim[1L], xlim[2L], length.out = n)
  nd <- matrix(grid, ncol = 1L, dimnames = list(NULL, x$input$names))
  if (!is.null(x$input$terms)) nd <- stats::setNames(data.frame(grid), x$input$names)
  conf <- predict(x, nd, interval = "confidence", level = level)
  pred <- predict(x, nd, interval = "prediction", level = level)
  pts <- x$data
  if (is.null(ylim)) ylim <- range(pred[, 2:3], if (!is.null(pts)) pts$y)
  labels <- gp_axis_labels(x)
  if (is.null(xlab)) xlab <- labels[1L]
  if (is.null(ylab)) ylab <- labels[2L]
  if (is.null(main)) main <- if (x$method == "exact") "Exact GP regression"
                             else sprintf("GP regression on random features (D = %d)", x$D)
  graphics::plot(grid, conf[, 1L], type = "n", xlim = xlim, ylim = ylim, xlab = xlab,
                 ylab = ylab, main = main, ...)
  band <- function(m, col) {
    graphics::polygon(c(grid, rev(grid)), c(m[, 2L], rev(m[, 3L])), col = col, border = NA)
  }
  fills <- c(grDevices::adjustcolor("steelblue", 0.2), grDevices::adjustcolor("steelblue", 0.45))
  band(pred, fills[1L])
  band(conf, fills[2L])
  if (!is.null(pts)) graphics::points(pts$x[, 1L], pts$y, pch = 20, cex = 0.6)
  graphics::lines(grid, conf[, 1L], lwd = 2, col = "navy")
  if (!is.null(legend)) {
    pct <- sprintf("%g%%", 100 * level)
    shown <- c("posterior mean", paste(pct, "band of the function"),
               paste(pct, "band of new observations"), if (!is.null(pts)) "training data")
    has <- !is.null(pts)
    graphics::legend(legend, legend = shown, bty = "n", cex = 0.8, border = NA,
                     fill = c(NA, fills[2:1], if (has) NA), col = c("navy", NA, NA, if (has) "black"),
                     lwd = c(2, NA, NA, if (has) NA), pch = c(NA, NA, NA, if (has) 20))
  }
  invisible(x)
}

# The axes' names: the formula's input and response, else the input's
# column name and "response".
gp_axis_labels <- function(x) {
  tt <- if (!is.null(x$terms)) x$terms else x$input$terms
  if (!is.null(tt)) {
    vars <- vapply(as.list(attr(tt, "variables"))[-1L], function(v) paste(deparse(v), collapse = ""), "")
    resp <- attr(tt, "response")
    return(c(attr(tt, "term.labels")[1L], if (resp > 0L) vars[resp] else "response"))
  }
  c(if (is.null(x$input$names)) "x" else x$input$names[1L], "response")
}
