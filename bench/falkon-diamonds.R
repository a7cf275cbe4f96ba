# diamonds (ggplot2) for the falkon benchmarks: log price on 9 predictors,
# the 3 factors one-hot (treatment coding), the same matrix for every method.
# Sourced by bench/falkon.R and bench/falkon-defaults.R (run from the package root).
falkon_diamonds_xy <- function() {
  e <- new.env(); utils::data(diamonds, package = "ggplot2", envir = e)
  dm <- as.data.frame(e$diamonds)
  for (v in c("cut", "color", "clarity")) dm[[v]] <- factor(as.character(dm[[v]]))
  x <- stats::model.matrix(~ carat + cut + color + clarity + depth + table + x + y + z,
                           dm)[, -1]
  list(x = x, y = log(dm$price))
}
