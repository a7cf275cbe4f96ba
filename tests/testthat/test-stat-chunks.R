# mmd_test() and hsic_test() on data_chunks() against the in-memory tests.
# The chunks' sums are added in another order than the in-memory fold's
# row blocks, so the statistics agree to rounding (relative 1e-12 of the
# sums they come from), the splits and maps exactly, the p-values exactly.

test_that("the MMD fold of the pooled rows in parts, each from its slice of the splits, adds up to the whole fold", {
  set.seed(31)
  N <- 300
  m <- 130
  B <- 40L
  Z <- matrix(runif(N * 20), N)
  bits <- .Call(bochner:::C_mmd_draw, N, m, B)
  whole <- .Call(bochner:::C_mmd_fold_finish,
                 .Call(bochner:::C_mmd_fold_step,
                       .Call(bochner:::C_mmd_fold_start, bits, 0, N, m, B, 20L), Z, 1L))
  # parts that start and end inside words and across them
  cuts <- list(1:1, 2:63, 64:65, 66:129, 130:131, 132:299, 300:300)
  parts <- lapply(cuts, function(r) {
    g0 <- r[1L] - 1
    w0 <- g0 %/% 64
    sl <- .Call(bochner:::C_mmd_bits_slice, bits, B, w0, (g0 + length(r) - 1) %/% 64)
    st <- .Call(bochner:::C_mmd_fold_start, sl, g0 - 64 * w0, g0 - 64 * w0 + length(r),
                m - 64 * w0, B, 20L)
    .Call(bochner:::C_mmd_fold_finish,
          .Call(bochner:::C_mmd_fold_step, st, Z[r, , drop = FALSE], 2L))
  })
  total <- Reduce(function(a, b) Map(`+`, a, b), parts)
  expect_equal(total$S, whole$S, tolerance = 1e-13)
  expect_equal(total$q, whole$q, tolerance = 1e-13)
  expect_equal(total$s, whole$s, tolerance = 1e-13)
  expect_equal(total$Q, whole$Q, tolerance = 1e-13)
  # with Z the identity, S is the labels themselves: exact
  labels <- function(Zi, rows) {
    Reduce(`+`, lapply(cuts, function(r) {
      g0 <- r[1L] - 1
      w0 <- g0 %/% 64
      sl <- .Call(bochner:::C_mmd_bits_slice, bits, B, w0, (g0 + length(r) - 1) %/% 64)
      st <- .Call(bochner:::C_mmd_fold_start, sl, g0 - 64 * w0, g0 - 64 * w0 + length(r),
                  m - 64 * w0, B, N)
      .Call(bochner:::C_mmd_fold_finish,
            .Call(bochner:::C_mmd_fold_step, st, Zi[r, , drop = FALSE], 1L))$S
    }))
  }
  full <- .Call(bochner:::C_mmd_fold_finish,
                .Call(bochner:::C_mmd_fold_step,
                      .Call(bochner:::C_mmd_fold_start, bits, 0, N, m, B, N), diag(N), 1L))$S
  expect_identical(labels(diag(N)), full)
  expect_identical(full[, 1L], rep(c(1, 0), c(m, N - m)))
})

stat_chunk_data <- function() {
  set.seed(32)
  x <- matrix(rnorm(3 * 420), 420, 3, dimnames = list(NULL, c("a", "b", "c")))
  y <- matrix(rnorm(3 * 250, sd = 1.2), 250, 3, dimnames = list(NULL, c("a", "b", "c")))
  list(x = x, y = y)
}

test_that("mmd_test() on two samples in chunks is the in-memory test", {
  d <- stat_chunk_data()
  cx <- data_chunks(list(d$x[1:37, ], d$x[38:101, ], d$x[102:420, ]))
  cy <- data_chunks(list(d$y[1, , drop = FALSE], d$y[2:250, ]))
  for (null in c("permutation", "gamma")) {
    a <- mmd_test(d$x, d$y, D = 64, B = 60, null = null, seed = 4)
    b <- mmd_test(cx, cy, D = 64, B = 60, null = null, seed = 4)
    expect_identical(b$kernel, a$kernel)
    expect_identical(b$map$omega, a$map$omega)
    expect_equal(b$statistic, a$statistic, tolerance = 1e-10)
    expect_equal(b$estimate, a$estimate, tolerance = 1e-10)
    expect_equal(b$null_statistics, a$null_statistics, tolerance = 1e-10)
    expect_equal(b$p.value, a$p.value, tolerance = 1e-10)
    expect_identical(b$sizes, a$sizes)
    expect_identical(b$method, a$method)
  }
  # the second sample may be in memory; the user's stream is left alone
  set.seed(9)
  before <- .Random.seed
  b <- mmd_test(cx, d$y, D = 64, B = 60, seed = 4)
  expect_identical(.Random.seed, before)
  expect_equal(b$statistic, mmd_test(d$x, d$y, D = 64, B = 60, seed = 4)$statistic,
               tolerance = 1e-10)
})

test_that("mmd_test(value ~ group) on chunks splits each chunk as the in-memory formula does", {
  d <- stat_chunk_data()
  set.seed(33)
  df <- data.frame(rbind(d$x, d$y), g = factor(rep(c("u", "t"), c(420, 250)), c("u", "t", "z")))
  df <- df[sample(nrow(df)), ]
  ch <- data_chunks(list(df[1:200, ], df[201:203, ], df[204:670, ]))
  a <- mmd_test(cbind(a, b, c) ~ g, data = df, D = 32, B = 50, seed = 5)
  b <- mmd_test(cbind(a, b, c) ~ g, data = ch, D = 32, B = 50, seed = 5)
  expect_identical(b$data.name, a$data.name)
  expect_equal(b$statistic, a$statistic, tolerance = 1e-10)
  expect_equal(b$null_statistics, a$null_statistics, tolerance = 1e-10)
  expect_identical(b$sizes, a$sizes)
  # numeric group values order as factor() orders them (2 before 10)
  df$g <- ifelse(df$g == "u", 10, 2)
  ch <- data_chunks(list(df[1:300, ], df[301:670, ]))
  a <- mmd_test(a ~ g, data = df, D = 32, B = 30, seed = 6, null = "gamma")
  b <- mmd_test(a ~ g, data = ch, D = 32, B = 30, seed = 6, null = "gamma")
  expect_identical(b$data.name, a$data.name)
  expect_identical(b$sizes, a$sizes)
  expect_equal(b$p.value, a$p.value, tolerance = 1e-10)
})

test_that("hsic_test() on chunks is the in-memory test: the gamma null by a pass, permutations on the fetched rows", {
  set.seed(34)
  n <- 5200
  u <- rnorm(n)
  df <- data.frame(u = u, w = runif(n), v = u^2 + rnorm(n))
  ch <- data_chunks(list(df[1:1000, ], df[1001:1001, ], df[1002:n, ]))
  xy <- as.matrix(df[c("u", "w")])
  # n > 5000: "auto" takes the gamma law at these sizes
  a <- hsic_test(xy, df$v, D = 64, seed = 7, null = "gamma")
  b <- hsic_test(ch, y = "v", D = 64, seed = 7, null = "gamma")
  expect_identical(b$kernel_x, a$kernel_x)
  expect_identical(b$kernel_y, a$kernel_y)
  expect_equal(b$statistic, a$statistic, tolerance = 1e-10)
  expect_equal(b$p.value, a$p.value, tolerance = 1e-8)
  expect_identical(b$method, a$method)
  # single precision: the in-memory single test, within float's bound (the chunks' float
  # blocks fall on other rows)
  as <- hsic_test(xy, df$v, D = 64, seed = 7, null = "gamma", precision = "single")
  bs <- hsic_test(ch, y = "v", D = 64, seed = 7, null = "gamma", precision = "single")
  expect_false(identical(as$statistic, a$statistic))
  expect_equal(bs$statistic, as$statistic, tolerance = 1e-5)
  expect_equal(bs$statistic, a$statistic, tolerance = 1e-5)
  d <- stat_chunk_data()
  ms <- mmd_test(data_chunks(list(d$x[1:300, ], d$x[301:420, ])), data_chunks(list(d$y)), D = 64,
                 null = "gamma", seed = 3, precision = "single")
  md <- mmd_test(d$x, d$y, D = 64, null = "gamma", seed = 3, precision = "single")
  expect_equal(ms$statistic, md$statistic, tolerance = 1e-5)
  expect_equal(ms$p.value, md$p.value, tolerance = 1e-5)
  f <- hsic_test(v ~ u + w, data = ch, D = 64, seed = 7, null = "gamma")
  expect_identical(f$data.name, "u + w and v")
  expect_equal(f$statistic, a$statistic, tolerance = 1e-10)
  small <- data_chunks(list(df[1:150, ], df[151:400, ]))
  a <- hsic_test(xy[1:400, ], df$v[1:400], D = 32, B = 40, seed = 8)
  b <- hsic_test(small, y = "v", D = 32, B = 40, seed = 8)
  expect_match(b$method, "40 permutations")
  expect_equal(b$statistic, a$statistic, tolerance = 1e-12)
  expect_identical(b$null_statistics, a$null_statistics)
})

test_that("the kernel tests on chunks refuse what needs all rows in memory, by name", {
  d <- stat_chunk_data()
  cx <- data_chunks(list(d$x[1:200, ], d$x[201:420, ]))
  cy <- data_chunks(list(d$y))
  expect_error(mmd_test(cx, cy, method = "exact"), "method.*Gram matrix")
  expect_error(mmd_test(cx, cy, method = "nystrom"), "method.*landmarks")
  expect_error(mmd_test(cx), "'y' is required")
  expect_error(mmd_test(cx, cy, kernel = polynomial_kernel(2)), "shift-invariant")
  expect_error(mmd_test(cx, data_chunks(list(d$y[, 1:2]))), "chunk 1 has other columns")
  df <- data.frame(d$x, g = rep(c("p", "q", "r"), 140))
  expect_error(mmd_test(a ~ g, data = data_chunks(list(df))), "exactly two values")
  expect_error(mmd_test(log(a) ~ g, data = data_chunks(list(df))), "column names")
  expect_error(hsic_test(cx), "'y' must name")
  expect_error(hsic_test(cx, y = "zz"), "lacks column")
  expect_error(hsic_test(cx, y = "a", kernel_x = spectral_mixture_kernel(2)), "kernel_x")
})
