# The real arrow and nanoarrow R packages as consumers of rdarrow's stream,
# and arrow R objects as input to arrow_to_rdata(). tools/test-env.sh builds
# both packages for the tests; without them these tests skip, saying so.

arrow_r_frame <- function() {
  df <- data.frame(
    i = c(1L, NA, 3L),
    d = c(0.5, NA, -Inf),
    s = c("a", NA, "\u00e9"),
    b = c(TRUE, NA, FALSE),
    f = factor(c("x", NA, "y")),
    day = as.Date(c("2020-01-01", NA, "1969-12-31")),
    stamp = .POSIXct(c(0, NA, 1.5e9 + 0.25), tz = "UTC"),
    stringsAsFactors = FALSE
  )
  attr(df, "label") <- "frame for arrow R"
  df
}

test_that("arrow::as_arrow_table() and as_record_batch_reader() read the stream with R's values", {
  skip_if_not_installed("arrow")
  df <- arrow_r_frame()
  f <- save_rda(df = df)
  tab <- arrow::as_arrow_table(rdata_to_arrow(f))
  expect_s3_class(tab, "Table")
  expect_identical(tab$num_rows, 3L)
  expect_identical(as.data.frame(tab), df)
  rdr <- arrow::as_record_batch_reader(rdata_to_arrow(f))
  expect_s3_class(rdr, "RecordBatchReader")
  expect_identical(as.data.frame(rdr$read_table()), df)
})

test_that("nanoarrow reads the stream as a nanoarrow_array_stream", {
  skip_if_not_installed("nanoarrow")
  df <- arrow_r_frame()[c("i", "d", "s", "b")]
  f <- save_rda(df = df)
  s <- nanoarrow::as_nanoarrow_array_stream(rdata_to_arrow(f))
  expect_s3_class(s, "nanoarrow_array_stream")
  schema <- nanoarrow::infer_nanoarrow_schema(s)
  expect_identical(names(schema$children), names(df))
  expect_identical(schema$children$i$format, "i")
  expect_identical(schema$children$d$format, "g")
  got <- nanoarrow::convert_array_stream(s)
  expect_identical(as.data.frame(got), df)
})

test_that("arrow_to_rdata() takes an arrow Table, RecordBatch and RecordBatchReader", {
  skip_if_not_installed("arrow")
  df <- arrow_r_frame()
  f <- save_rda(df = df)
  out <- tempfile(fileext = ".RData")
  on.exit(unlink(out))
  inputs <- list(
    table = function() arrow::as_arrow_table(rdata_to_arrow(f)),
    # (arrow R's as_record_batch(<Table>) drops the schema metadata: the
    # batch comes from the reader instead)
    batch = function() arrow::as_record_batch_reader(rdata_to_arrow(f))$read_next_batch(),
    reader = function() arrow::as_record_batch_reader(rdata_to_arrow(f))
  )
  for (k in names(inputs)) {
    arrow_to_rdata(inputs[[k]](), out, name = "df")
    e <- new.env()
    expect_identical(load(out, envir = e), "df", label = k)
    expect_identical(e$df, df, label = k)
  }
  # arrow R's own table of the frame comes back as arrow R restores it
  arrow_to_rdata(arrow::arrow_table(df), out, name = "df")
  e <- new.env()
  load(out, envir = e)
  expect_identical(e$df, as.data.frame(arrow::arrow_table(df)))
})
