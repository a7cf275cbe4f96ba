# Plain-R references for the C routines, written from the formulas in
# design.md, not from the C code.

ref_sqdist <- function(x, y = x) {
  outer(seq_len(nrow(x)), seq_len(nrow(y)),
        Vectorize(function(i, j) sum((x[i, ] - y[j, ])^2)))
}

ref_kernel <- function(kernel, x, y = x) {
  pairwise <- function(f) {
    outer(seq_len(nrow(x)), seq_len(nrow(y)), Vectorize(function(i, j) f(x[i, ], y[j, ])))
  }
  s <- kernel$sigma
  switch(kernel$name,
    gaussian = pairwise(function(a, b) exp(-sum((a - b)^2) / (2 * s^2))),
    laplace = pairwise(function(a, b) exp(-sum(abs(a - b)) / s)),
    cauchy = pairwise(function(a, b) prod(1 / (1 + (a - b)^2 / s^2))),
    matern = pairwise(function(a, b) {
      nu <- kernel$nu
      z <- sqrt(2 * nu) * sqrt(sum((a - b)^2)) / s
      if (z == 0) 1 else 2^(1 - nu) / gamma(nu) * z^nu * besselK(z, nu)
    }),
    polynomial = pairwise(function(a, b) {
      t <- sum(a * b)
      sum(kernel$coef * t^(seq_along(kernel$coef) - 1))
    }),
    min = pairwise(function(a, b) kernel$offset + sum(pmin(a, b))))
}

ref_phase_map <- function(x, omega, phase) {
  sqrt(2 / ncol(omega)) * cos(sweep(x %*% omega, 2, phase, "+"))
}

ref_pair_map <- function(x, omega) {
  p <- x %*% omega
  z <- matrix(0, nrow(x), 2 * ncol(omega))
  z[, seq(1, by = 2, length.out = ncol(omega))] <- cos(p)
  z[, seq(2, by = 2, length.out = ncol(omega))] <- sin(p)
  z / sqrt(ncol(omega))
}

all_shift_invariant_kernels <- function() {
  list(gaussian = gaussian_kernel(0.9), laplace = laplace_kernel(1.3),
       cauchy = cauchy_kernel(0.8), matern_1.5 = matern_kernel(1.1, 1.5),
       matern_0.7 = matern_kernel(1.2, 0.7))
}
