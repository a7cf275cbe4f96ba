# The vectorised cos/sin of src/fastmath.c against base R's cos()/sin()
# (i.e. the C library): absolute error below 1e-15 for |x| <= 1e5, and
# bit-for-bit equal to libm beyond that and for NaN/NA/Inf.

fast_sincos <- function(x) .Call(bochner:::C_fast_sincos, as.double(x))

max_abs_err <- function(x) {
  r <- fast_sincos(x)
  c(cos = max(abs(r$cos - cos(x))), sin = max(abs(r$sin - sin(x))))
}

# x moved by k units in the last place (k small)
ulp_shift <- function(x, k) x + k * 2^(floor(log2(abs(x))) - 52)

test_that("fast_sincos returns a named list of two double vectors", {
  r <- fast_sincos(c(0, 1, 2))
  expect_type(r, "list")
  expect_named(r, c("cos", "sin"))
  expect_type(r$cos, "double")
  expect_length(r$sin, 3)
  expect_error(.Call(bochner:::C_fast_sincos, 1:3), "double")
  expect_error(.Call(bochner:::C_fast_sincos, "a"), "double")
  r0 <- fast_sincos(numeric(0))
  expect_identical(r0$cos, numeric(0))
  expect_identical(r0$sin, numeric(0))
})

test_that("cos and sin are within 1e-15 of libm on [-1e5, 1e5]", {
  set.seed(1)
  expect_lt(max(max_abs_err(runif(2e5, -1e5, 1e5))), 1e-15)
  expect_lt(max(max_abs_err(runif(2e5, -10, 10))), 1e-15)
  expect_lt(max(max_abs_err(rnorm(1e5, sd = 100))), 1e-15)
  # every length around the vector width and the internal block of 512
  for (n in c(1:9, 255:257, 511:513, 1023:1025)) {
    expect_lt(max(max_abs_err(runif(n, -1e5, 1e5))), 1e-15)
  }
})

test_that("cos and sin are accurate at the edges of the range reduction", {
  set.seed(2)
  # near multiples of pi/4 and pi/2, small and large k (up to |x| = 1e5)
  k <- c(-127323:-127290, -300:300, 127290:127323,
         sample(-127323:127323, 2000))
  base <- k * (pi / 4)
  x <- c(base, outer(base, c(-3:-1, 1:3), ulp_shift),
         outer(base, c(-1e-9, -1e-12, 1e-12, 1e-9), `+`))
  expect_lt(max(max_abs_err(x)), 1e-15)
  # half-way points of the reduction by pi, where the quadrant flips
  j <- c(-31831:-31800, -200:200, 31800:31830, sample(-31831:31830, 2000))
  half <- (j + 0.5) * pi
  x <- c(half, outer(half, c(-4:-1, 1:4), ulp_shift))
  expect_lt(max(max_abs_err(x)), 1e-15)
})

test_that("tiny values, zeros and subnormals", {
  tiny <- c(0, 5e-324, 2^-1074, 2^-1060, .Machine$double.xmin,
            .Machine$double.xmin * (1 - 2^-52), 1e-300, 1e-200, 1e-160,
            1e-150, 1e-20, 1e-10, 1e-8, 1e-5)
  x <- c(tiny, -tiny)
  r <- fast_sincos(x)
  expect_lt(max(abs(r$cos - cos(x))), 1e-15)
  expect_lt(max(abs(r$sin - sin(x))), 1e-15)
  expect_true(all(r$cos[abs(x) < 1e-10] == 1))
  # sin(x) == x for subnormal and tiny x, signs included
  small <- abs(x) < 1e-150
  expect_identical(r$sin[small], x[small])
  # sin(-0) is -0 and sin(0) is +0, like libm
  r0 <- fast_sincos(c(0, -0))
  expect_identical(1 / r0$sin, c(Inf, -Inf))
  expect_identical(r0$cos, c(1, 1))
})

test_that("values around the 1e5 cutoff and beyond it equal libm exactly", {
  set.seed(3)
  below <- c(1e5, ulp_shift(1e5, -(1:3)), 99999.9, 1e5 - 1e-6)
  x <- c(below, -below)
  expect_lt(max(max_abs_err(x)), 1e-15)
  above <- c(ulp_shift(1e5, 1:3), 100000.5, 1e6, 123456789.123, 2^31,
             2^52 + 1, 1e15, 1e22, 1e100, 1e300, .Machine$double.xmax,
             runif(1000, 1e5, 1e7), 10^runif(1000, 5, 308))
  x <- c(above, -above)
  r <- fast_sincos(x)
  expect_identical(r$cos, cos(x))
  expect_identical(r$sin, sin(x))
})

test_that("NaN, NA and Inf give what libm gives", {
  x <- c(NaN, NA, Inf, -Inf)
  r <- fast_sincos(x)
  expect_true(all(is.nan(r$cos[c(1, 3, 4)])))
  expect_true(all(is.nan(r$sin[c(1, 3, 4)])))
  expect_true(is.na(r$cos[2]) && is.na(r$sin[2]))
  expect_identical(r$cos, suppressWarnings(cos(x)))
  expect_identical(r$sin, suppressWarnings(sin(x)))
})

test_that("special values scattered in a long vector are patched individually", {
  set.seed(4)
  x <- runif(5000, -1e5, 1e5)
  special <- c(NaN, NA, Inf, -Inf, 1e6, -3e5, 1e300, 100000.5)
  pos <- sample(length(x), 400)
  x[pos] <- rep_len(special, 400)
  r <- fast_sincos(x)
  inside <- abs(x) <= 1e5 & !is.na(x)
  expect_lt(max(abs(r$cos[inside] - cos(x[inside]))), 1e-15)
  expect_lt(max(abs(r$sin[inside] - sin(x[inside]))), 1e-15)
  expect_identical(r$cos[!inside], suppressWarnings(cos(x[!inside])))
  expect_identical(r$sin[!inside], suppressWarnings(sin(x[!inside])))
})
