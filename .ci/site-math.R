# The pkgdown site's math as MathML, sourced by .ci/site-build.R.  pkgdown
# leaves formulas as TeX between \( \), \[ \] and $$ $$ (articles, and Rd's \eqn{}
# and \deqn{} on reference pages) for a MathJax or KaTeX script that this
# site does not load (both would come from a CDN).  So each such formula
# outside <pre> code is converted here by pandoc, all of a page's formulas
# in one call, and the page reads the same without network.
rd_math_to_mathml <- function(page_html, pandoc = Sys.which("pandoc")) {
  text <- paste(page_html, collapse = "\n")
  # the parts outside <pre>...</pre>: odd pieces are prose, even ones code
  pieces <- regmatches(text, gregexpr("(?s)<pre\\b.*?</pre>", text, perl = TRUE),
                       invert = NA)[[1L]]
  prose <- seq(1L, length(pieces), by = 2L)
  pattern <- "(?s)\\\\\\((.+?)\\\\\\)|\\\\\\[(.+?)\\\\\\]|\\$\\$(.+?)\\$\\$"
  found <- lapply(pieces[prose], function(p) regmatches(p, gregexpr(pattern, p, perl = TRUE))[[1L]])
  all <- unlist(found)
  if (!length(all)) return(page_html)
  unescape <- function(x) {
    for (e in list(c("&lt;", "<"), c("&gt;", ">"), c("&quot;", "\""), c("&#39;", "'"),
                   c("&amp;", "&"))) x <- gsub(e[1L], e[2L], x, fixed = TRUE)
    x
  }
  display <- startsWith(all, "$$") | startsWith(all, "\\[")
  tex <- trimws(unescape(substr(all, 3L, nchar(all) - 2L)))   # \( \), \[ \], $$ $$: 2 characters
  md <- paste0(ifelse(display, "$$", "$"), tex, ifelse(display, "$$", "$"),
               collapse = "\n\nRDMATHSEPARATOR\n\n")
  out <- system2(pandoc, c("-f", "markdown", "-t", "html", "--mathml"), input = md,
                 stdout = TRUE)
  out <- paste(out, collapse = "\n")
  html <- strsplit(out, "\\s*<p>RDMATHSEPARATOR</p>\\s*")[[1L]]
  if (length(html) != length(all)) stop("pandoc gave ", length(html), " formulas for ", length(all))
  html <- sub("^<p>", "", sub("</p>$", "", trimws(html)))
  k <- 0L
  for (i in seq_along(prose)) {
    n <- length(found[[i]])
    if (!n) next
    piece <- pieces[prose[i]]
    parts <- regmatches(piece, gregexpr(pattern, piece, perl = TRUE), invert = TRUE)[[1L]]
    pieces[prose[i]] <- paste0(c(rbind(parts[seq_len(n)], html[k + seq_len(n)]), parts[n + 1L]),
                               collapse = "")
    k <- k + n
  }
  strsplit(paste(pieces, collapse = ""), "\n", fixed = TRUE)[[1L]]
}
