# Build the pkgdown site of the package in the current directory into
# commandArgs()[1] (default docs/), with the installed bochner (the caller
# puts a freshly installed copy first in R_LIBS).  Every warning (pkgdown's
# "Topics missing from index", a broken link, an example or vignette that
# warns through pkgdown, ...) is printed and makes the build fail.
args <- commandArgs(TRUE)
dest <- if (length(args)) args[1] else "docs"
if (!requireNamespace("pkgdown", quietly = TRUE)) {
  cat("site-build: pkgdown is not installed\n"); quit(status = 2)
}
cat("site-build: bochner", format(packageVersion("bochner")), "from",
    find.package("bochner"), "with pkgdown", format(packageVersion("pkgdown")), "\n")
# No network look-ups (pkgdown asks CRAN and Bioconductor whether the package
# is there, for a sidebar link): the site is the same with or without one.
options(pkgdown.internet = FALSE)
warnings <- character()
t0 <- proc.time()[["elapsed"]]
ok <- tryCatch({
  withCallingHandlers(
    pkgdown::build_site(".", override = list(destination = dest),
                        preview = FALSE, devel = FALSE,
                        new_process = FALSE, install = FALSE),
    warning = function(w) {
      msg <- conditionMessage(w)
      warnings <<- c(warnings, msg)
      cat("site-build: WARNING:", msg, "\n")
      invokeRestart("muffleWarning")
    })
  TRUE
}, error = function(e) {
  cat("site-build: ERROR:", conditionMessage(e), "\n"); FALSE
})
secs <- round(proc.time()[["elapsed"]] - t0)
n <- length(list.files(dest, pattern = "[.]html$", recursive = TRUE))
cat(sprintf("site-build: %s, %d HTML pages in %s, %d warnings, %d s\n",
            if (ok) "built" else "FAILED", n, normalizePath(dest, mustWork = FALSE),
            length(warnings), secs))
quit(status = if (ok && !length(warnings)) 0 else 1)
