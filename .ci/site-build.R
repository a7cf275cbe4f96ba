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
# Math: every page's formulas (articles and reference pages alike) are
# turned into MathML after the build (.ci/site-math.R), so the site reads
# the same without network.  pkgdown 2.1 and later could write the articles'
# MathML themselves, but they download their JavaScript assets (headroom,
# clipboard, ...) from a CDN at build time, which fails offline; Debian's
# 2.0.7 builds offline.
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
# downlit writes every example plot of a reference page with alt='' (it has
# no way to take one); name what drew it, so that screen readers say more
# than nothing and the site check's alt-text rule holds for every figure.
# Every page's formulas become MathML (.ci/site-math.R).
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1L])),
                 "site-math.R"))
if (ok) {
  for (page in list.files(file.path(dest, "reference"), pattern = "[.]html$", full.names = TRUE)) {
    html <- readLines(page, warn = FALSE)
    pattern <- "(class=[\"']r-plt img[\"']><img [^>]*?)alt=(\"\"|'')"
    hit <- grepl(pattern, html, perl = TRUE)
    topic <- sub("[.]html$", "", basename(page))
    html[hit] <- gsub(pattern, sprintf("\\1alt=\"A figure drawn by the example code of %s above\"", topic),
                      html[hit], perl = TRUE)
    maths <- rd_math_to_mathml(html)
    if (any(hit) || !identical(maths, html)) writeLines(maths, page)
  }
  for (page in list.files(dest, pattern = "[.]html$", full.names = TRUE, recursive = TRUE)) {
    if (basename(dirname(page)) == "reference") next
    html <- readLines(page, warn = FALSE)
    maths <- rd_math_to_mathml(html)
    if (!identical(maths, html)) writeLines(maths, page)
  }
}
secs <- round(proc.time()[["elapsed"]] - t0)
n <- length(list.files(dest, pattern = "[.]html$", recursive = TRUE))
cat(sprintf("site-build: %s, %d HTML pages in %s, %d warnings, %d s\n",
            if (ok) "built" else "FAILED", n, normalizePath(dest, mustWork = FALSE),
            length(warnings), secs))
quit(status = if (ok && !length(warnings)) 0 else 1)
