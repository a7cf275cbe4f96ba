# The machine header: what a figure was measured on.

# "1.02/0.94/1.44": the 1, 5 and 15 minute load averages
bench_load <- function() {
  tryCatch(paste(strsplit(readLines("/proc/loadavg"), " ")[[1L]][1:3], collapse = "/"),
           error = function(e) "?")
}

bench_lscpu <- function() {
  l <- tryCatch(suppressWarnings(system2("lscpu", stdout = TRUE, stderr = FALSE)),
                error = function(e) character())
  field <- function(k) {
    h <- grep(paste0("^", k, ":"), l, value = TRUE)
    if (length(h)) trimws(sub("^[^:]*:", "", h[1L])) else NA_character_
  }
  caches <- vapply(c("L1d", "L2", "L3"), function(k) {
    v <- field(paste(k, "cache"))
    if (is.na(v)) NA_character_ else paste(k, sub(" \\(.*", "", v))
  }, "")
  flags <- strsplit(field("Flags") %||% "", " ")[[1L]]
  simd <- intersect(c("avx2", "fma", "avx512f"), flags)
  # a VM's model name can be bare ("AMD EPYC"): family and model say which
  # generation (AMD family 25 is Zen 3/4, 26 is Zen 5)
  fm <- c(field("CPU family"), field("Model"))
  list(cpu = paste0(field("Model name") %||% "unknown CPU",
                    if (!anyNA(fm)) sprintf(" (family %s, model %s)", fm[1L], fm[2L])),
       caches = paste(caches[!is.na(caches)], collapse = ", "),
       simd = paste(simd, collapse = ", "))
}

`%||%` <- function(a, b) if (is.null(a) || length(a) == 0L || is.na(a[1L])) b else a

# The BLAS this process loaded: the shared objects mapped into it (what
# R_LD_LIBRARY_PATH chose), named "OpenBLAS 0.3.21", "reference BLAS" or the file.
bench_blas <- function() {
  maps <- character()
  if (file.exists("/proc/self/maps")) {
    maps <- unique(sub(".* ", "", grep("lib(open)?blas|libmkl|libblis",
                                       readLines("/proc/self/maps"), value = TRUE)))
  }
  open <- grep("libopenblas", maps, value = TRUE)
  if (length(open)) {
    v <- sub(".*libopenblas[a-z]*-r([0-9.]+)\\.so.*", "\\1", open[1L])
    return(if (identical(v, open[1L])) "OpenBLAS" else paste("OpenBLAS", v))
  }
  if (any(grepl("/blas/libblas", maps))) return("reference BLAS")
  b <- extSoftVersion()[["BLAS"]]
  if (nzchar(b)) basename(b) else "unknown BLAS"
}

bench_commit <- function() {
  h <- tryCatch(suppressWarnings(system2("git", c("rev-parse", "--short", "HEAD"),
                                         stdout = TRUE, stderr = FALSE)),
                error = function(e) character())
  if (length(h) == 0L) return("unknown")
  dirty <- tryCatch(suppressWarnings(system2(
    "git", c("status", "--porcelain", "--untracked-files=no", "--", "R", "src"),
    stdout = TRUE, stderr = FALSE)), error = function(e) character())
  paste0(h[1L], if (length(dirty)) "+changes in R/ or src/")
}

# Everything the page header and every CSV row carry.
bench_machine <- function() {
  cpu <- bench_lscpu()
  c(cpu, list(cores = parallel::detectCores(),
              ram_gb = tryCatch(round(as.numeric(gsub("[^0-9]", "", grep(
                "^MemTotal", readLines("/proc/meminfo"), value = TRUE))) / 2^20), error = function(e) NA),
              blas = bench_blas(), lapack = basename(La_library()),
              r = paste(R.version$major, R.version$minor, sep = "."),
              bochner = tryCatch(format(utils::packageVersion("bochner")),
                                 error = function(e) "not installed"),
              bochner_lib = tryCatch(dirname(find.package("bochner")), error = function(e) ""),
              commit = bench_commit(), load_start = bench_load()))
}
