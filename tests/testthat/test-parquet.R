# Parquet out and in: rdata_to_parquet(), parquet_to_rdata(), the command
# line's to-parquet, Parquet datasets, and what arrow R, pyarrow (full
# validation), Polars and DuckDB read from the files rdarrow writes.

parquet_frame <- function(n = 5000L) {
  set.seed(42)
  data.frame(
    id = seq_len(n),
    x = replace(rnorm(n), c(3L, 7L), c(NA, NaN)),
    flag = rep(c(TRUE, FALSE, NA), length.out = n),
    word = replace(rep(c("alpha", "b\u00e9ta", "", "gamma"), length.out = n), 5L, NA),
    # levels not in the order they appear, one unused, NAs: the file's
    # dictionary must be the levels themselves
    grp = factor(replace(rep(c("mid", "lo", "hi"), length.out = n), 4L, NA),
                 levels = c("lo", "unused", "mid", "hi")),
    day = as.Date("2000-01-01") + (seq_len(n) %% 9000L),
    stamp = as.POSIXct(1.5e9 + runif(n, 0, 3e8), origin = "1970-01-01", tz = "UTC"),
    sec = as.POSIXct(1.6e9 + seq_len(n), origin = "1970-01-01", tz = "America/New_York"),
    stringsAsFactors = FALSE
  )
}

py_bin <- function() {
  py <- Sys.getenv("RETICULATE_PYTHON")
  if (!nzchar(py) || !file.exists(py)) {
    skip("RETICULATE_PYTHON is not set (tools/test.sh sets it to .venv/bin/python): the Python readers cannot be checked")
  }
  py
}

# Run a Python script in a child process; its standard output lines.
run_py <- function(code, ...) {
  script <- tempfile(fileext = ".py")
  on.exit(unlink(script))
  writeLines(code, script)
  out <- suppressWarnings(system2(py_bin(), c(script, ...), stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop(paste(out, collapse = "\n"))
  out
}

test_that("a data frame goes to Parquet and comes back identical, in one row group or many", {
  df <- parquet_frame()
  f <- save_rda(df = df)
  for (rows in list(NULL, 1000, 777)) {
    pq <- tempfile(fileext = ".parquet")
    expect_identical(rdata_to_parquet(f, pq, row_group_size = rows), pq)
    out <- tempfile(fileext = ".rds")
    parquet_to_rdata(pq, out)
    expect_identical(readRDS(out), df)
    # arrow R, whose reader takes each row group's dictionary from the file
    skip_if_not_installed("arrow")
    expect_identical(as.data.frame(arrow::read_parquet(pq)), df)
  }
})

test_that("the compressed file's stream is spilled beside the sink and removed", {
  df <- parquet_frame(20000L)
  dir <- tempfile("spill")
  dir.create(dir)
  f <- file.path(dir, "in.RData")
  save(df, file = f, compress = "xz")
  pq <- file.path(dir, "out.parquet")
  rdata_to_parquet(f, pq, row_group_size = 3000)
  expect_setequal(list.files(dir, all.files = TRUE, no.. = TRUE), c("in.RData", "out.parquet"))
  out <- file.path(dir, "back.rds")
  parquet_to_rdata(pq, out)
  back <- readRDS(out)
  expect_identical(back$stamp, df$stamp)
  expect_identical(back$word, df$word)
})

test_that("arrow R reads rdarrow's Parquet as it reads its own", {
  skip_if_not_installed("arrow")
  df <- parquet_frame()
  f <- save_rda(df = df)
  pq <- tempfile(fileext = ".parquet")
  rdata_to_parquet(f, pq)
  got <- as.data.frame(arrow::read_parquet(pq))
  expect_identical(got, df)
  # and rdarrow reads arrow R's own Parquet
  own <- tempfile(fileext = ".parquet")
  arrow::write_parquet(df, own)
  out <- tempfile(fileext = ".rds")
  parquet_to_rdata(own, out)
  expect_identical(readRDS(out)$word, df$word)
  expect_identical(readRDS(out)$sec, df$sec)
  # arrow_to_rdata() takes a Dataset over Parquet files
  ds <- arrow::open_dataset(pq)
  out2 <- tempfile(fileext = ".rds")
  arrow_to_rdata(ds, out2)
  expect_identical(readRDS(out2), df)
})

test_that("pyarrow (full validation), Polars and DuckDB read the file with the expected types and values", {
  df <- parquet_frame()
  f <- save_rda(df = df)
  pq <- tempfile(fileext = ".parquet")
  rdata_to_parquet(f, pq, row_group_size = 2000)
  out <- run_py(c(
    "import sys, pyarrow.parquet as pq, polars as pl, duckdb",
    "path = sys.argv[1]",
    "t = pq.read_table(path)",
    "t.validate(full=True)",
    "print('rows', t.num_rows, pq.ParquetFile(path).metadata.num_row_groups)",
    "for f in t.schema: print('type', f.name, f.type)",
    "print('nulls', t.column('x').null_count, t.column('word').null_count)",
    "print('word5', t.column('word')[5].as_py())",
    "chunks = t.column('grp').chunks",
    "print('levels', len(chunks), all(c.dictionary.to_pylist() == ['lo', 'unused', 'mid', 'hi'] for c in chunks))",
    "print('grp', t.column('grp').to_pylist()[:5])",
    "print('duckdb grp', [r[0] for r in duckdb.sql(f\"select grp from '{path}' limit 5\").fetchall()])",
    "d = pl.read_parquet(path)",
    "print('polars', d.height, d['id'].sum(), d['grp'].dtype)",
    "print('duckdb', duckdb.sql(f\"select count(*), sum(id), count(word) from '{path}'\").fetchall()[0])"
  ), pq)
  n <- nrow(df)
  expect_true(sprintf("rows %d 3", n) %in% out)
  types <- sub("^type ", "", grep("^type ", out, value = TRUE))
  expect_identical(types, c("id int32", "x double", "flag bool", "word string",
                            "grp dictionary<values=string, indices=int8, ordered=0>",
                            "day date32[day]", "stamp double",
                            "sec timestamp[ms, tz=America/New_York]"))
  expect_true("nulls 1 1" %in% out)
  # each row group's dictionary is the factor's levels, unused one included
  expect_true("levels 3 True" %in% out)
  expect_true("grp ['mid', 'lo', 'hi', None, 'lo']" %in% out)
  expect_true("duckdb grp ['mid', 'lo', 'hi', None, 'lo']" %in% out)
  expect_true(sprintf("word5 %s", df$word[6]) %in% out)
  expect_true(sprintf("polars %d %.0f Categorical", n, sum(as.numeric(df$id))) %in% out)
  expect_true(sprintf("duckdb (%d, %.0f, %d)", n, sum(as.numeric(df$id)), sum(!is.na(df$word))) %in% out)
})

test_that("every codec writes a file that comes back identical", {
  df <- parquet_frame(2000L)
  f <- save_rda(df = df)
  for (codec in c("zstd", "snappy", "gzip", "lz4", "uncompressed")) {
    pq <- tempfile(fileext = ".parquet")
    rdata_to_parquet(f, pq, compression = codec)
    out <- tempfile(fileext = ".rds")
    parquet_to_rdata(pq, out)
    expect_identical(readRDS(out), df, info = codec)
  }
  expect_error(rdata_to_parquet(f, tempfile(fileext = ".parquet"), compression = "snappy", compression_level = 3),
               class = "rdarrow_error", regexp = "no levels")
})

test_that("a sink named for the other format is an error naming the right function", {
  df <- parquet_frame(10L)
  f <- save_rda(df = df)
  for (ext in c(".arrow", ".feather")) {
    sink <- tempfile(fileext = ext)
    expect_error(rdata_to_parquet(f, sink), class = "rdarrow_error", regexp = "rdata_to_ipc\\(\\)")
    expect_false(file.exists(sink))
  }
  sink <- tempfile(fileext = ".parquet")
  expect_error(rdata_to_ipc(f, sink), class = "rdarrow_error", regexp = "rdata_to_parquet\\(\\)")
  expect_false(file.exists(sink))
})

test_that("a corrupt or truncated Parquet file is a clear error and writes nothing", {
  df <- parquet_frame(3000L)
  f <- save_rda(df = df)
  pq <- tempfile(fileext = ".parquet")
  rdata_to_parquet(f, pq)
  bytes <- readBin(pq, "raw", file.size(pq))
  bad <- tempfile(fileext = ".parquet")
  writeBin(bytes[seq_len(length(bytes) %/% 2)], bad)
  out <- tempfile(fileext = ".rds")
  expect_error(parquet_to_rdata(bad, out), class = "rdarrow_error", regexp = "Parquet")
  expect_false(file.exists(out))
  flipped <- bytes
  mid <- length(bytes) %/% 3
  flipped[mid:(mid + 200)] <- as.raw(0xff)
  writeBin(flipped, bad)
  res <- tryCatch(parquet_to_rdata(bad, out), rdarrow_error = function(e) e)
  if (!inherits(res, "rdarrow_error")) expect_true(file.exists(out)) else expect_false(file.exists(out))
  expect_error(parquet_to_rdata(f, out), class = "rdarrow_error", regexp = "not a Parquet file")
  # an unwritable sink: the old file untouched, nothing left beside it
  expect_error(rdata_to_parquet(f, file.path(tempfile("missing"), "x.parquet")), class = "rdarrow_error")
})

test_that("a Parquet type R cannot hold is an error naming the column; the old sink stays", {
  # DuckDB writes an INTERVAL column as Parquet's INTERVAL (Arrow's
  # interval type, which has no R equivalent)
  dir <- tempfile("rdarrow-interval-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  pq <- file.path(dir, "span.parquet")
  run_py(c(
    "import sys, duckdb",
    "duckdb.sql(f\"copy (select 1 as id, interval 1 day as span) to '{sys.argv[1]}' (format parquet)\")"
  ), pq)
  out <- file.path(dir, "old.rds")
  saveRDS(head(mtcars), out)
  before <- readBin(out, "raw", file.size(out))
  err <- expect_error(parquet_to_rdata(pq, out), class = "rdarrow_error_unsupported")
  expect_match(conditionMessage(err), "column 'span'.*Interval", fixed = FALSE)
  expect_identical(readBin(out, "raw", file.size(out) + 1), before)
  expect_identical(sort(list.files(dir, all.files = TRUE, no.. = TRUE)), c("old.rds", "span.parquet"))
})

test_that("rdata_to_dataset() writes Parquet by default, which arrow reads back", {
  skip_if_not_installed("arrow")
  df <- parquet_frame(300L)
  f1 <- save_rda(df = df)
  dir <- tempfile("ds")
  rdata_to_dataset(f1, dir)
  expect_identical(list.files(dir), "part-0.parquet")
  got <- as.data.frame(arrow::open_dataset(dir))
  expect_identical(got$word, df$word)
  expect_identical(got$id, df$id)
})

test_that("the command line writes Parquet and reads it back by its magic bytes", {
  df <- parquet_frame(4000L)
  f <- save_rda(df = df)
  pq <- tempfile(fileext = ".parquet")
  res <- run_cli(c("to-parquet", f, "-o", pq, "--row-group-size", "4000"))
  expect_equal(res$status, 0L, info = paste(res$stderr, collapse = "\n"))
  out <- tempfile(fileext = ".rds")
  res <- run_cli(c("to-rdata", pq, "-o", out))
  expect_equal(res$status, 0L, info = paste(res$stderr, collapse = "\n"))
  expect_identical(readRDS(out), df)
  res <- run_cli(c("to-parquet", f, "-o", tempfile(fileext = ".arrow")))
  expect_false(res$status == 0L)
  expect_match(paste(res$stderr, collapse = "\n"), "to-arrow")
})

test_that("a factor without levels comes back without levels, through Parquet as through IPC", {
  df <- data.frame(f = factor(c(NA, NA), levels = character(0)), o = factor(c(NA, NA), levels = character(0), ordered = TRUE),
                   g = factor(c("a", NA)), x = 1:2)
  f <- save_rda(df = df)
  pq <- tempfile(fileext = ".parquet")
  rdata_to_parquet(f, pq)
  out <- tempfile(fileext = ".rds")
  parquet_to_rdata(pq, out)
  expect_identical(readRDS(out), df)
  ipc <- tempfile(fileext = ".arrow")
  rdata_to_ipc(f, ipc)
  out2 <- tempfile(fileext = ".rds")
  ipc_to_rdata(ipc, out2)
  expect_identical(readRDS(out2), df)
  # arrow R reads the file's factor as it is
  expect_identical(levels(as.data.frame(arrow::read_parquet(pq))$f), character(0))
})
