# Benchmark: the clustering bandwidth of kernel_kmeans(x, centers) (no
# kernel) against the median heuristic and other neighbour fractions, on
# rings (the demo's, the vignette's, the examples'), two moons (the
# kernel-machines vignette's, sd 0.15, and with sd 0.1 and 0.05), mlbench's
# smiley, spirals and 2dnormals (4 classes), iris, and mclust's banknote,
# thyroid and wdbc (scaled).  For each data set and seed the data are drawn
# anew (seed s), every rule gives a sigma, and kernel_kmeans() runs on the
# Gaussian kernel with that sigma, exact, nstart starts (the default fit
# otherwise).  Prints the mean adjusted Rand index, the number of seeds
# with ARI >= 0.99, and the mean sigma.  Needs mlbench and mclust.
#   Rscript bench/investigations/kmeans_bandwidth.R 20 10     # 20 seeds, nstart = 10
# frac10 is the package's rule (R/kmeans.R, kkm_bandwidth()).
suppressMessages(library(bochner))
ari <- function(a, b) {
  tab <- table(a, b); n <- sum(tab); c2 <- function(v) sum(v * (v - 1) / 2)
  s <- c2(tab); sa <- c2(rowSums(tab)); sb <- c2(colSums(tab)); e <- sa * sb / c2(n)
  (s - e) / ((sa + sb) / 2 - e)
}
rings <- function(m, sd) { a <- runif(2*m, 0, 2*pi); r <- rep(c(1,3), each=m) + rnorm(2*m, sd=sd)
  list(x = cbind(r*cos(a), r*sin(a)), y = rep(1:2, each = m), k = 2) }
moons <- function(m, sd = 0.15) { t1 <- runif(m, 0, pi); t2 <- runif(m, 0, pi)
  list(x = rbind(cbind(cos(t1), sin(t1)), cbind(1 - cos(t2), 0.5 - sin(t2))) + rnorm(4*m, sd=sd),
       y = rep(1:2, each = m), k = 2) }
ml <- function(o) list(x = o$x, y = as.integer(o$classes), k = nlevels(o$classes))
data(thyroid, package = "mclust"); data(wdbc, package = "mclust"); data(banknote, package = "mclust")
sets <- list(
  rings_demo = function() rings(1000, 0.15), rings_vig = function() rings(150, 0.15),
  rings_ex = function() rings(200, 0.1), moons = function() moons(200), moons10 = function() moons(200, 0.1), moons05 = function() moons(200, 0.05),
  smiley = function() ml(mlbench::mlbench.smiley(500)),
  spirals = function() ml(mlbench::mlbench.spirals(500, 1, 0.05)),
  normals4 = function() ml(mlbench::mlbench.2dnormals(500, 4)),
  iris = function() list(x = as.matrix(iris[, 1:4]), y = as.integer(iris$Species), k = 3),
  thyroid = function() list(x = scale(as.matrix(thyroid[, -1])), y = as.integer(thyroid$Diagnosis), k = 3), wdbc = function() list(x = scale(as.matrix(wdbc[, -(1:2)])), y = as.integer(wdbc$Diagnosis), k = 2),
  banknote = function() list(x = scale(as.matrix(banknote[, -1])), y = as.integer(banknote$Status), k = 2))
knn_d <- function(x, m) {
  n <- nrow(x); if (n > 1000) x <- x[unique(round(seq(1, n, length.out = 1000))), , drop = FALSE]
  D <- as.matrix(dist(x)); diag(D) <- Inf
  apply(D, 1, function(r) sort(r, partial = m)[m])
}
sigest <- function(x) { # kernlab sigest, frac 0.5 -> bochner sigma
  set.seed(NULL); q <- kernlab::sigest(x, scaled = FALSE); 1 / sqrt(2 * q[2]) }
fr <- function(f) function(x, k) { s <- min(nrow(x), 1000); median(knn_d(x, max(5, round(f * s)))) }
rules <- list(median = function(x, k) bochner:::median_heuristic(x, "gaussian"), frac07 = fr(0.07), frac10 = fr(0.1), frac15 = fr(0.15))

args <- commandArgs(TRUE)
seeds <- 1:as.integer(if (length(args)) args[1] else 20)
nstart <- as.integer(if (length(args) > 1) args[2] else 10)
which_sets <- if (length(args) > 2) strsplit(args[3], ",")[[1]] else names(sets)
res <- NULL
for (s in which_sets) for (seed in seeds) {
  set.seed(seed); d <- sets[[s]]()
  for (r in names(rules)) {
    sg <- rules[[r]](d$x, d$k)
    f <- kernel_kmeans(d$x, d$k, gaussian_kernel(sg), nstart = nstart, seed = seed, nthreads = 1)
    res <- rbind(res, data.frame(set = s, seed = seed, rule = r, sigma = sg, ari = ari(f$cluster, d$y)))
  }
}
agg <- aggregate(ari ~ set + rule, res, function(a) c(mean = mean(a), ok = sum(a >= 0.99)))
agg <- do.call(data.frame, agg)
print(reshape(agg[, c("set","rule","ari.mean")], idvar = "set", timevar = "rule", direction = "wide"), digits = 3)
print(reshape(agg[, c("set","rule","ari.ok")], idvar = "set", timevar = "rule", direction = "wide"))
sgm <- aggregate(sigma ~ set + rule, res, mean)
print(reshape(sgm, idvar = "set", timevar = "rule", direction = "wide"), digits = 3)
