# A million-row frame through the C stream, values compared in full.

test_that("a 1e6-row data frame round-trips its values through pyarrow", {
  skip_if_no_pyarrow()
  n <- 1e6L
  set.seed(42)
  i <- sample.int(.Machine$integer.max, n, replace = TRUE) - 1e9L
  i[sample.int(n, 1000)] <- NA
  d <- rnorm(n) * 1e6
  d[sample.int(n, 1000)] <- NA
  d[c(7L, n)] <- c(NaN, -0)
  s <- sprintf("row-%d-\u00e9", seq_len(n))
  s[sample.int(n, 1000)] <- NA
  s[c(1L, 500000L)] <- ""
  b <- sample(c(TRUE, FALSE, NA), n, replace = TRUE)
  fac <- factor(sample(c(letters, NA), n, replace = TRUE))
  df <- data.frame(i = i, d = d, s = s, b = b, f = fac, stringsAsFactors = FALSE)
  f <- save_rda(big = df)

  res <- rdarrow:::rdata_to_arrow_impl(f, NULL, NULL, NULL, "UTC", "", 10000L)
  expect_identical(res$nrow, as.double(n))
  tab <- py_import(res$stream)
  expect_no_error(py_validate(tab))
  expect_identical(py_nrow(tab), n)
  expect_identical(py_names(tab), names(df))

  # zero copy for the big buffers too
  produced <- format(res$addresses, scientific = FALSE, trim = TRUE)
  expect_identical(py_fun("buffer_addresses")(tab$column(0L)$chunk(0L))[[2]], produced[[1]])
  expect_identical(py_fun("buffer_addresses")(tab$column(1L)$chunk(0L))[[2]], produced[[2]])
  expect_identical(py_fun("buffer_addresses")(tab$column(2L)$chunk(0L))[[3]], produced[[3]])

  # int32 and float64: the values buffer, byte for byte where not null
  vals <- withr::local_tempfile()
  expect_identical(as.integer(py_fun("dump_values")(tab$column("i"), vals)), n)
  got_i <- readBin(vals, "integer", n = n, size = 4L, endian = "little")
  expect_identical(py_null_positions(tab, "i"), which(is.na(i)) - 1L)
  expect_identical(got_i[!is.na(i)], i[!is.na(i)])

  expect_identical(as.integer(py_fun("dump_values")(tab$column("d"), vals)), n)
  got_d <- readBin(vals, "double", n = n, size = 8L, endian = "little")
  expect_identical(py_null_positions(tab, "d"), which(is.na(d) & !is.nan(d)) - 1L)
  expect_identical(py_nan_positions(tab, "d"), 6L)
  keep <- !is.na(d)
  expect_identical(got_d[keep], d[keep])
  expect_identical(1 / got_d[[n]], -Inf)

  # strings: all values, joined in Python
  joined <- py_fun("joined_strings")(tab$column("s"), "<NULL>")
  got_s <- strsplit(joined, "\x1f", fixed = TRUE)[[1]]
  # strsplit drops a trailing empty field; the last value is not empty here
  expect_length(got_s, n)
  exp_s <- ifelse(is.na(s), "<NULL>", s)
  expect_identical(got_s, exp_s)
  expect_identical(py_null_positions(tab, "s"), which(is.na(s)) - 1L)

  # logical and factor: null positions and counts
  expect_identical(py_null_positions(tab, "b"), which(is.na(b)) - 1L)
  pc <- py_pc()
  trues <- reticulate::py_to_r(pc$sum(tab$column("b"))$as_py())
  expect_equal(trues, sum(b, na.rm = TRUE))
  expect_identical(py_null_positions(tab, "f"), which(is.na(fac)) - 1L)
  arr <- tab$column("f")$combine_chunks()
  expect_identical(unlist(reticulate::py_to_r(arr$dictionary$to_pylist())), levels(fac))
  expect_identical(py_fun("type_str")(tab, "f"), "dictionary<values=string, indices=int8, ordered=0>")
  py_fun("dump_values")(arr$indices, vals)
  codes <- readBin(vals, "integer", n = n, size = 1L, signed = TRUE)
  expect_identical(codes[!is.na(fac)], as.integer(fac)[!is.na(fac)] - 1L)
})

test_that("a 1e6-row frame in chunks keeps every value and batch size", {
  skip_if_no_pyarrow()
  n <- 1e6L
  df <- data.frame(i = seq_len(n), d = seq_len(n) / 4)
  f <- save_rda(big = df)
  reader <- py_import_reader(rdata_to_arrow(f, chunk_size = 300000))
  expect_identical(as.integer(unlist(py_fun("batch_sizes")(reader))),
                   c(300000L, 300000L, 300000L, 100000L))
  tab <- py_import(rdata_to_arrow(f, chunk_size = 300000))
  py_validate(tab)
  vals <- withr::local_tempfile()
  py_fun("dump_values")(tab$column("i"), vals)
  expect_identical(readBin(vals, "integer", n = n, size = 4L, endian = "little"), df$i)
  py_fun("dump_values")(tab$column("d"), vals)
  expect_identical(readBin(vals, "double", n = n, size = 8L, endian = "little"), df$d)
})
