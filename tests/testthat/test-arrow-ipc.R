# rdata_to_ipc(): Arrow IPC file and stream output, read back by pyarrow.

ipc_frame <- function() {
  df <- data.frame(
    i = c(1L, NA, 3L, -4L, 5L),
    d = c(0.5, NA, NaN, -0, Inf),
    s = c("a", NA, "", "\u00e9\u2713", "long string value"),
    b = c(TRUE, FALSE, NA, TRUE, TRUE),
    f = factor(c("x", "y", NA, "x", "z")),
    dt = as.Date(c("2020-01-01", NA, "1969-12-31", "2000-02-29", "2024-06-01")),
    t = .POSIXct(c(0, 1.5, NA, 1e9, -1), tz = "UTC"),
    stringsAsFactors = FALSE
  )
  df$i64 <- bit64::as.integer64(c("9007199254740993", NA, "0", "-1", "42"))
  df$l <- list(1:2, NULL, integer(0), 3L, c(NA, 4L))
  attr(df, "label") <- "ipc test"
  attr(df$d, "units") <- "kg"
  df
}

read_ipc <- function(path, format) {
  pa <- py_pa()
  if (format == "file") pa$ipc$open_file(path)$read_all() else pa$ipc$open_stream(path)$read_all()
}

check_ipc_table <- function(tab, df, label) {
  expect_no_error(py_validate(tab))
  expect_identical(py_nrow(tab), nrow(df), label = label)
  expect_identical(py_names(tab), names(df), label = label)
  expect_identical(py_values(tab, "i"), df$i, label = label)
  d <- py_values(tab, "d")
  expect_identical(py_null_positions(tab, "d"), 1L, label = label)
  expect_identical(py_nan_positions(tab, "d"), 2L, label = label)
  expect_identical(d[-(2:3)], as.vector(unclass(df$d))[-(2:3)], label = label)
  expect_identical(1 / d[[4]], -Inf, label = label)
  expect_identical(py_values(tab, "s"), df$s, label = label)
  expect_identical(py_values(tab, "b"), df$b, label = label)
  expect_identical(py_values(tab, "f"), as.character(df$f), label = label)
  expect_identical(py_type(tab, "f"), "dictionary<values=string, indices=int8, ordered=0>",
                   label = label)
  expect_identical(py_type(tab, "dt"), "date32[day]", label = label)
  expect_identical(py_ints(tab, "dt"), as.numeric(unclass(df$dt)), label = label)
  expect_identical(py_type(tab, "t"), "timestamp[ms, tz=UTC]", label = label)
  expect_identical(py_ints(tab, "t"), as.numeric(unclass(df$t)) * 1e3, label = label)
  expect_identical(py_type(tab, "i64"), "int64", label = label)
  expect_identical(py_strings(tab, "i64"), as.character(df$i64), label = label)
  expect_identical(py_type(tab, "l"), "list<item: int32>", label = label)
  expect_identical(py_null_positions(tab, "l"), 1L, label = label)
  md <- py_r_metadata(tab$schema)
  expect_false(is.null(md), label = label)
  expect_identical(md$attributes, list(label = "ipc test"), label = label)
  expect_identical(md$columns$d, list(attributes = list(units = "kg"), columns = NULL),
                   label = label)
}

test_that("every IPC format and compression is readable by pyarrow with the right values", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "UTC")
  df <- ipc_frame()
  f <- save_rda(df = df)
  for (format in c("file", "stream")) {
    for (compression in c("uncompressed", "lz4", "zstd")) {
      label <- paste(format, compression)
      out <- withr::local_tempfile(fileext = ".arrow")
      res <- withVisible(rdata_to_ipc(f, out, format = format, compression = compression))
      expect_false(res$visible, label = label)
      expect_identical(res$value, out, label = label)
      expect_true(file.exists(out), label = label)
      tab <- read_ipc(out, format)
      check_ipc_table(tab, df, label)
    }
  }
})

test_that("the file format is an Arrow file (ARROW1 magic), the stream format is not", {
  skip_if_no_pyarrow()
  f <- save_rda(df = data.frame(a = 1:3))
  out_file <- withr::local_tempfile(fileext = ".arrow")
  out_stream <- withr::local_tempfile(fileext = ".arrows")
  rdata_to_ipc(f, out_file)
  rdata_to_ipc(f, out_stream, format = "stream")
  head_file <- readBin(out_file, "raw", 6)
  expect_identical(rawToChar(head_file), "ARROW1")
  n <- file.size(out_file)
  con <- file(out_file, "rb")
  tail_file <- readBin(con, "raw", n)[(n - 5):n]
  close(con)
  expect_identical(rawToChar(tail_file), "ARROW1")
  expect_false(identical(readBin(out_stream, "raw", 6), charToRaw("ARROW1")))
  # the file format is Feather v2
  tab <- py_pa()$feather$read_table(out_file)
  expect_identical(py_values(tab, "a"), 1:3)
  # and pyarrow refuses to read the stream as a file
  expect_error(py_pa()$ipc$open_file(out_stream))
})

test_that("the default format is the uncompressed file format", {
  skip_if_no_pyarrow()
  df <- data.frame(a = rep(1:10, 1000), s = rep(letters[1:10], 1000))
  f <- save_rda(df = df)
  out <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(f, out)
  reader <- py_pa()$ipc$open_file(out)
  tab <- reader$read_all()
  py_validate(tab)
  expect_identical(py_values(tab, "a"), df$a)
  out2 <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(f, out2, format = "file", compression = "uncompressed")
  expect_identical(file.size(out), file.size(out2))
})

test_that("lz4 and zstd actually compress", {
  skip_if_no_pyarrow()
  df <- data.frame(a = rep(1:10, 10000), d = rep(c(0.5, 1.5), 50000),
                   s = rep(c("repeated text", "more repeated text"), 50000))
  f <- save_rda(df = df)
  sizes <- c()
  for (compression in c("uncompressed", "lz4", "zstd")) {
    out <- withr::local_tempfile(fileext = ".arrow")
    rdata_to_ipc(f, out, compression = compression)
    sizes[[compression]] <- file.size(out)
    tab <- read_ipc(out, "file")
    py_validate(tab)
    expect_identical(py_values(tab, "a"), df$a, label = compression)
  }
  expect_lt(sizes[["lz4"]], sizes[["uncompressed"]] / 2)
  expect_lt(sizes[["zstd"]], sizes[["uncompressed"]] / 2)
})

test_that("rdata_to_ipc() writes batches of 65536 rows by default, as write_feather() does", {
  skip_if_no_pyarrow()
  df <- data.frame(a = seq_len(150000) * 2L, g = factor(rep_len(c("x", "y", "z"), 150000)))
  f <- save_rda(df = df)
  out <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(f, out)
  reader <- py_pa()$ipc$open_file(out)
  n <- reticulate::py_to_r(reader$num_record_batches)
  sizes <- vapply(seq_len(n) - 1L, function(i) reticulate::py_to_r(reader$get_batch(as.integer(i))$num_rows), 1L)
  expect_identical(sizes, c(65536L, 65536L, 18928L))
  tab <- reader$read_all()
  py_validate(tab)
  expect_identical(py_values(tab, "a"), df$a)
  single <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(f, single, chunk_size = NULL)
  expect_identical(reticulate::py_to_r(py_pa()$ipc$open_file(single)$num_record_batches), 1L)
})

test_that("chunk_size gives IPC record batches of that size", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:5, s = c("a", "b", "c", NA, "e"))
  f <- save_rda(df = df)
  out <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(f, out, chunk_size = 2)
  reader <- py_pa()$ipc$open_file(out)
  expect_identical(reticulate::py_to_r(reader$num_record_batches), 3L)
  sizes <- vapply(0:2, function(i) reticulate::py_to_r(reader$get_batch(as.integer(i))$num_rows), 1L)
  expect_identical(sizes, c(2L, 2L, 1L))
  tab <- reader$read_all()
  py_validate(tab)
  expect_identical(py_values(tab, "s"), df$s)

  out2 <- withr::local_tempfile(fileext = ".arrows")
  rdata_to_ipc(f, out2, format = "stream", chunk_size = 2)
  reader2 <- py_pa()$ipc$open_stream(out2)
  expect_identical(as.integer(unlist(py_fun("batch_sizes")(reader2))), c(2L, 2L, 1L))
})

test_that("rdata_to_ipc selects objects like rdata_to_arrow and writes vectors and rds", {
  skip_if_no_pyarrow()
  f <- save_rda(a = data.frame(x = 1:2), b = data.frame(y = c("p", "q")), v = c(2.5, NA))
  out <- withr::local_tempfile(fileext = ".arrow")
  expect_error(rdata_to_ipc(f, out), class = "rdarrow_error")
  expect_false(file.exists(out))
  rdata_to_ipc(f, out, object = "b")
  tab <- read_ipc(out, "file")
  expect_identical(py_names(tab), "y")
  expect_identical(py_values(tab, "y"), c("p", "q"))
  rdata_to_ipc(f, out, object = "v")
  tab <- read_ipc(out, "file")
  expect_identical(py_names(tab), "v")
  expect_identical(py_values(tab, "v"), c(2.5, NA))

  g <- save_rds(data.frame(z = c(TRUE, NA)))
  out2 <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(g, out2, format = "stream", compression = "zstd")
  tab <- read_ipc(out2, "stream")
  py_validate(tab)
  expect_identical(py_values(tab, "z"), c(TRUE, NA))
})

test_that("a failed rdata_to_ipc leaves no file and keeps an existing one", {
  f <- save_rda(df = data.frame(a = 1:3), fn = function(x) x)
  out <- withr::local_tempfile(fileext = ".arrow")
  expect_error(rdata_to_ipc(f, out, object = "nope"), class = "rdarrow_error")
  expect_false(file.exists(out))
  expect_error(rdata_to_ipc(f, out, object = "fn"), class = "rdarrow_error")
  expect_false(file.exists(out))
  writeLines("keep me", out)
  expect_error(rdata_to_ipc(f, out, object = "fn"), class = "rdarrow_error")
  expect_identical(readLines(out), "keep me")
  expect_identical(list.files(dirname(out), pattern = paste0("^", basename(out), ".+")), character(0))
  expect_error(rdata_to_ipc(f, out, format = "parquet"))
  expect_error(rdata_to_ipc(f, out, compression = "gzip"))
  expect_error(rdata_to_ipc(f, c(out, out)), class = "rdarrow_error")
  expect_error(rdata_to_ipc(f, file.path(tempfile(), "no", "such", "dir.arrow")), class = "rdarrow_error")
})

test_that("rdata_to_ipc overwrites an existing file", {
  skip_if_no_pyarrow()
  f <- save_rda(df = data.frame(a = 1:3))
  out <- withr::local_tempfile(fileext = ".arrow")
  writeLines(strrep("x", 100000), out)
  rdata_to_ipc(f, out)
  tab <- read_ipc(out, "file")
  py_validate(tab)
  expect_identical(py_values(tab, "a"), 1:3)
})

test_that("polars reads the IPC file too", {
  skip_if_no_pyarrow()
  skip_if_not(reticulate::py_module_available("polars"), "polars is not available")
  df <- data.frame(a = c(1L, NA, 3L), s = c("x", "y", NA), d = c(1.5, 2.5, NA))
  f <- save_rda(df = df)
  out <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(f, out, compression = "zstd")
  pl <- reticulate::import("polars", convert = FALSE)
  pdf <- pl$read_ipc(out)
  expect_identical(reticulate::py_to_r(pdf$height), 3L)
  expect_identical(unlist(reticulate::py_to_r(pdf$columns)), c("a", "s", "d"))
  s <- reticulate::py_to_r(pdf$get_column("s")$to_list())
  expect_identical(s[1:2], list("x", "y"))
  expect_null(s[[3]])
})
