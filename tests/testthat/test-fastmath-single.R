# The single-precision exp, cos and sin of src/fastmath.c (bochner_*_f: double arguments,
# float results, for float kernel blocks and features) against R's exp, cos and sin of
# the same doubles: within 1 ulp of float (the bound of fastmath.c's header; 1e-20
# absolute for results below 1e-13), libm's value rounded beyond the reductions.
fast_f <- function(x, what, scale = 1) .Call(bochner:::C_fast_math_f, as.double(x), what, scale)

f32 <- function(x) readBin(writeBin(as.vector(x), raw(), size = 4), "double", n = length(x), size = 4)
# a float's ulp at the size of y (normal floats; the subnormal floor below)
ulp_f <- function(y) 2^(pmax(floor(log2(abs(y))), -126) - 23)
ulps <- function(got, ref) {
  ok <- is.finite(ref) & ref != 0
  max(abs(got[ok] - ref[ok]) / ulp_f(ref[ok]))
}

test_that("float exp is within 1 ulp of exp() and exact at the edges", {
  set.seed(21)
  x <- c(runif(2e5, -87, 88), rnorm(1e5), runif(1e4, -1e-6, 1e-6), -(0:200) / 2, 0:80)
  expect_lt(ulps(fast_f(x, 0L), exp(x)), 1)
  # a scale, as the Gaussian kernel's -1 / (2 sigma^2)
  d2 <- rexp(1e5, 0.1)
  expect_lt(ulps(fast_f(d2, 0L, -0.37), exp(-0.37 * d2)), 1)
  # every length around the vector width and the block of 512
  for (n in c(1:9, 511:513, 1025L)) {
    x <- runif(n, -50, 50)
    expect_lt(ulps(fast_f(x, 0L), exp(x)), 1)
  }
  expect_identical(fast_f(0, 0L), 1)
  # outside [-708, 709], Inf, NaN: libm rounded to float (0, subnormals, Inf)
  special <- c(-1e4, -709, -745, -103.5, -88, 89, 710, 1e4, Inf, -Inf, NaN, NA)
  expect_identical(fast_f(special, 0L), f32(exp(special)))
  long <- runif(3000, -5, 5); at <- sample(3000, 7); long[at] <- c(Inf, -Inf, NaN, 800, -800, NA, 1e300)
  got <- fast_f(long, 0L)
  expect_identical(got[at], f32(exp(long[at])))
  expect_lt(ulps(got[-at], exp(long[-at])), 1)
  expect_error(.Call(bochner:::C_fast_math_f, 1:3, 0L, 1), "double")
})

test_that("float cos and sin are within 1 ulp of cos() and sin() on [-1e5, 1e5]", {
  set.seed(22)
  x <- c(runif(2e5, -1e5, 1e5), runif(2e5, -10, 10), rnorm(1e5, sd = 100))
  for (what in 1:2) {
    f <- if (what == 1L) cos else sin
    ref <- f(x)
    got <- fast_f(x, what)
    expect_lt(ulps(got, ref), 1)
    expect_lt(max(abs(got - ref)), 6e-8)               # half a float ulp of 1, and some
  }
  # near multiples of pi/2, where one of them vanishes: the absolute bound
  k <- c(-300:300, sample(-63000:63000, 2000))
  near <- c(outer(k * pi / 2, c(-1e-9, -1e-6, 0, 1e-6, 1e-9), `+`))
  for (what in 1:2) {
    f <- if (what == 1L) cos else sin
    ref <- f(near)
    got <- fast_f(near, what)
    big <- abs(ref) >= 1e-13
    expect_lt(ulps(got[big], ref[big]), 1)
    # results below 1e-13 (the doubles nearest k pi / 2): the reduction's pi / 2 has 86
    # bits, an absolute error of 3e-22 at |x| = 1e5
    expect_lt(max(abs(got[!big] - ref[!big])), 1e-20)
  }
  # the phase map's scaled cosine, and the scale's sign
  expect_lt(max(abs(fast_f(x, 3L, 0.25) - f32(0.25 * cos(x)))), 3e-8)
  expect_lt(max(abs(fast_f(x[1:100], 2L, -2) + 2 * sin(x[1:100]))), 2.4e-7)
  # signed zeros, the 1e5 cutoff and beyond (libm), Inf and NaN
  expect_identical(1 / fast_f(-0, 2L), -Inf)
  expect_identical(fast_f(0, 1L), 1)
  special <- c(1e5, -1e5, 1e5 + 0.1, 3e5, 1e10, -1e22, Inf, -Inf, NaN, NA)
  expect_identical(fast_f(special, 1L), suppressWarnings(f32(cos(special))))
  expect_identical(fast_f(special, 2L), suppressWarnings(f32(sin(special))))
})
