# The cost of passes whose sums do not depend on the grouping of the rows
# (issue 25): the row groups of 256 in global row numbers, summed along a
# fixed tree (src/falkon.c), against the one chain over all rows they
# replace.  Both versions cannot be loaded in one R process, so the command
# runs this script alternately with two libraries (the merged main and this
# branch) and compares CPU times (user + system) of the same work:
#   for i in 1 2; do for lib in <main lib> <branch lib>; do
#     R_LIBS=$lib Rscript bench/investigations/falkon-passes.R; done; done
# Work: (a) falkon() on Letter as bench/investigations/falkon-defaults.R fits it (2/3
# train by set.seed(1), default arguments), on one thread and on the
# default threads; (b) single passes K' (K U) on 20 000 x 16 rows with
# m = 1000 centres, k = 1 (a CG iteration) and k = 26, and H = K' K (U = I),
# each the median of 5 repeats.
suppressPackageStartupMessages({
  library(bochner)
  library(mlbench)
})
cpu <- function(expr, reps = 1L) {
  t <- vapply(seq_len(reps), function(i) {
    t0 <- proc.time()
    force(expr)
    t1 <- proc.time() - t0
    unname(t1[1] + t1[2])
  }, 0)
  stats::median(t)
}
cpu_expr <- function(f, reps) {
  t <- vapply(seq_len(reps), function(i) {
    t0 <- proc.time(); f(); t1 <- proc.time() - t0; unname(t1[1] + t1[2])
  }, 0)
  stats::median(t)
}
lib <- dirname(system.file(package = "bochner"))
data(LetterRecognition, envir = environment())
x <- as.matrix(LetterRecognition[, -1]); y <- LetterRecognition$lettr
set.seed(1)
test <- sample(nrow(x), round(nrow(x) / 3))
xtr <- x[-test, ]; ytr <- y[-test]
load <- scan("/proc/loadavg", what = "", n = 1, quiet = TRUE)
f1 <- cpu_expr(function() falkon(xtr, ytr, seed = 1, nthreads = 1), 1)
f2 <- cpu_expr(function() falkon(xtr, ytr, seed = 1), 1)
set.seed(2)
n <- 20000; m <- 1000
xs <- matrix(rnorm(n * 16), n)
C <- xs[sample(n, m), ]
ker <- gaussian_kernel(4)
code <- bochner:::kernel_code(ker); par <- bochner:::kernel_parameters(ker)
pass <- function(U, nth) function() .Call(bochner:::C_falkon_knm_apply, xs, C, code, par, U, NULL,
                                          NULL, NULL, 0, FALSE, nth, NULL, FALSE)
U1 <- matrix(rnorm(m), m); U26 <- matrix(rnorm(26 * m), m)
p1 <- cpu_expr(pass(U1, 1L), 5)
p26 <- cpu_expr(pass(U26, 1L), 5)
nh <- 5000
H <- function() .Call(bochner:::C_falkon_knm_apply, xs[1:nh, ], C, code, par, diag(m), NULL,
                      NULL, NULL, 0, FALSE, 1L, NULL, FALSE)
ph <- cpu_expr(H, 3)
cat(sprintf("%-40s load %s  letter_1thr %.2f  letter_default %.2f  pass_k1 %.3f  pass_k26 %.3f  H_5000 %.3f\n",
            lib, load, f1, f2, p1, p26, ph))
