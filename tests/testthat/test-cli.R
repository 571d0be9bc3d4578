# The `rdarrow` command-line tool (crate src/rust/rdarrow-cli), run on files
# written by save()/saveRDS(). The binary is built once per session with
# cargo from the source tree; the tests skip where that is not possible
# (no cargo, or an installed package without its sources).

# cli_binary() and run_cli() are in helper-cli.R.

cli_fixture <- function(env = parent.frame()) {
  dir <- withr::local_tempdir(.local_envir = env)
  df <- data.frame(
    id = 1:4,
    grp = factor(c("a", "b", "a", NA)),
    x = c(1.5, NA, -2, 1e10),
    s = c("u", NA, "w\u00e9", ""),
    flag = c(TRUE, FALSE, NA, TRUE),
    stringsAsFactors = FALSE
  )
  v <- c(10L, NA, 30L)
  m <- matrix(1:6, nrow = 2)
  rdata <- file.path(dir, "several.RData")
  save(df, v, m, file = rdata)
  rds <- file.path(dir, "frame.rds")
  saveRDS(df, rds)
  list(dir = dir, df = df, rdata = rdata, rds = rds)
}

test_that("ls prints an aligned table of the objects", {
  fx <- cli_fixture()
  r <- run_cli(c("ls", fx$rdata))
  expect_equal(r$status, 0L)
  expect_match(r$stdout[1], "^name +class +type +length +rows +columns +bytes$")
  expect_length(r$stdout, 4L)
  expect_match(r$stdout[2], "^df +data\\.frame +list +5 +4 +5 +[0-9]+$")
  expect_match(r$stdout[3], "^v +integer +integer +3 +- +- +[0-9]+$")
  expect_match(r$stdout[4], "^m +matrix/array +integer +6 +2 +3 +[0-9]+$")
  # columns line up: every line is as wide as the header
  expect_equal(length(unique(nchar(r$stdout))), 1L)
  # the byte counts are the package's
  objs <- rdata_objects(fx$rdata)
  bytes <- as.numeric(sub(".* ([0-9]+)$", "\\1", r$stdout[-1]))
  expect_equal(bytes, objs$bytes)

  r <- run_cli(c("ls", fx$rds))
  expect_equal(r$status, 0L)
  expect_match(r$stdout[2], "^frame +data\\.frame +list +5 +4 +5 +[0-9]+$")
})

test_that("ls --json gives one record per object", {
  fx <- cli_fixture()
  r <- run_cli(c("ls", "--json", fx$rdata))
  expect_equal(r$status, 0L)
  json <- paste(r$stdout, collapse = "\n")
  objs <- rdata_objects(fx$rdata)
  if (requireNamespace("jsonlite", quietly = TRUE)) {
    got <- jsonlite::fromJSON(json, simplifyVector = TRUE)
    expect_equal(got$name, c("df", "v", "m"))
    expect_equal(got$class, c("data.frame", "integer", "matrix/array"))
    expect_equal(got$type, c("list", "integer", "integer"))
    expect_equal(got$length, c(5, 3, 6))
    expect_equal(got$rows, c(4, NA, 2))
    expect_equal(got$columns, c(5, NA, 3))
    expect_equal(got$bytes, objs$bytes)
  } else {
    flat <- gsub("\\s+", "", json)
    expect_match(flat, sprintf(
      '{"name":"df","class":"data.frame","type":"list","length":5,"rows":4,"columns":5,"bytes":%d}',
      as.integer(objs$bytes[1])), fixed = TRUE)
    expect_match(flat, '"name":"v","class":"integer","type":"integer","length":3,"rows":null,"columns":null', fixed = TRUE)
  }
  r <- run_cli(c("ls", "--json", fx$rds))
  expect_equal(r$status, 0L)
  expect_match(gsub("\\s+", "", paste(r$stdout, collapse = "")), '^\\[\\{"name":"frame","class":"data.frame"')
})

test_that("to-arrow writes an IPC file pyarrow and polars read", {
  skip_if_no_pyarrow()
  fx <- cli_fixture()
  # default output: beside the input, with the extension .arrow
  r <- run_cli(c("to-arrow", fx$rds))
  expect_equal(r$status, 0L)
  out <- file.path(fx$dir, "frame.arrow")
  expect_true(file.exists(out))
  expect_equal(rawToChar(readBin(out, "raw", 6L)), "ARROW1")

  ipc <- reticulate::import("pyarrow.ipc", convert = FALSE)
  tab <- ipc$open_file(out)$read_all()
  expect_equal(py_nrow(tab), 4L)
  expect_equal(py_names(tab), names(fx$df))
  expect_equal(py_values(tab, "id"), fx$df$id)
  expect_equal(py_values(tab, "x"), fx$df$x)
  expect_equal(py_values(tab, "s"), fx$df$s)
  expect_equal(py_values(tab, "flag"), fx$df$flag)
  expect_equal(py_strings(tab, "grp"), as.character(fx$df$grp))
  expect_match(py_type(tab, "grp"), "^dictionary<values=string, indices=int8")

  skip_if_not(reticulate::py_module_available("polars"), "polars is not available")
  pl <- reticulate::import("polars", convert = FALSE)
  pdf <- pl$read_ipc(out)
  expect_equal(reticulate::py_to_r(pdf$height), 4L)
  as_r <- function(col) {
    x <- reticulate::py_to_r(pdf$get_column(col)$to_list())
    unlist(lapply(x, function(v) if (is.null(v)) NA else v))
  }
  expect_equal(as_r("id"), fx$df$id)
  expect_equal(as_r("x"), fx$df$x)
  expect_equal(as_r("s"), fx$df$s)
  expect_equal(as_r("grp"), as.character(fx$df$grp))
})

test_that("to-arrow picks objects, compresses, chunks and writes streams to stdout", {
  skip_if_no_pyarrow()
  fx <- cli_fixture()
  ipc <- reticulate::import("pyarrow.ipc", convert = FALSE)

  # a vector by name, zstd-compressed, in batches of 2 rows
  out <- file.path(fx$dir, "v.arrow")
  r <- run_cli(c("to-arrow", fx$rdata, "--object", "v", "-o", out,
                 "--compression", "zstd", "--chunk-size", "2"))
  expect_equal(r$status, 0L)
  rd <- ipc$open_file(out)
  expect_equal(reticulate::py_to_r(rd$num_record_batches), 2L)
  tab <- rd$read_all()
  expect_equal(py_names(tab), "v")
  expect_equal(py_values(tab, "v"), c(10L, NA, 30L))

  # the stream format on standard output
  s <- file.path(fx$dir, "df.arrows")
  r <- run_cli(c("to-arrow", fx$rdata, "--format", "stream", "-o", "-"), stdout_file = s)
  expect_equal(r$status, 0L)
  tab <- ipc$open_stream(s)$read_all()
  expect_equal(py_values(tab, "id"), fx$df$id)
  expect_equal(py_values(tab, "s"), fx$df$s)

  # the file format on standard output (buffered)
  f <- file.path(fx$dir, "df-stdout.arrow")
  r <- run_cli(c("to-arrow", fx$rdata, "--columns", "x,id", "-o", "-"), stdout_file = f)
  expect_equal(r$status, 0L)
  tab <- ipc$open_file(f)$read_all()
  expect_equal(py_names(tab), c("x", "id"))
  expect_equal(py_values(tab, "x"), fx$df$x)
})

test_that("to-rdata turns a pyarrow IPC file or stream into a loadable data frame", {
  skip_if_no_pyarrow()
  fx <- cli_fixture()
  pa <- py_pa()
  ipc <- reticulate::import("pyarrow.ipc", convert = FALSE)
  code <- paste(
    "import pyarrow as pa",
    "def make_table():",
    "    return pa.table({",
    "        'a': pa.array([1, None, 3], pa.int32()),",
    "        'b': pa.array(['x', None, 'z\\u00e9']),",
    "        'c': pa.array([0.5, 1.5, None]),",
    "        'f': pa.array(['u', 'v', 'u']).dictionary_encode(),",
    "        'l': pa.array([True, None, False]),",
    "    })",
    sep = "\n"
  )
  main <- reticulate::py_run_string(code, convert = FALSE)
  tab <- main$make_table()
  arrow_file <- file.path(fx$dir, "py.arrow")
  w <- ipc$new_file(arrow_file, tab$schema)
  w$write_table(tab)
  w$close()
  arrow_stream <- file.path(fx$dir, "py_stream.arrows")
  w <- ipc$new_stream(arrow_stream, tab$schema)
  w$write_table(tab)
  w$close()

  expected <- data.frame(
    a = c(1L, NA, 3L),
    b = c("x", NA, "z\u00e9"),
    c = c(0.5, 1.5, NA),
    f = factor(c("u", "v", "u")),
    l = c(TRUE, NA, FALSE),
    stringsAsFactors = FALSE
  )

  out <- file.path(fx$dir, "py.RData")
  r <- run_cli(c("to-rdata", arrow_file, "-o", out))
  expect_equal(r$status, 0L)
  e <- new.env()
  expect_equal(load(out, envir = e), "py") # default name: the input's stem
  expect_identical(e$py, expected)

  out2 <- file.path(fx$dir, "named.RData")
  r <- run_cli(c("to-rdata", arrow_stream, "-o", out2, "--name", "tbl",
                 "--compress", "xz", "--level", "6", "--threads", "2"))
  expect_equal(r$status, 0L)
  expect_equal(readBin(out2, "raw", 6L), as.raw(c(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00))) # xz
  e <- new.env()
  expect_equal(load(out2, envir = e), "tbl")
  expect_identical(e$tbl, expected)

  out3 <- file.path(fx$dir, "py.rds")
  r <- run_cli(c("to-rdata", arrow_file, "-o", out3, "--compress", "bzip2"))
  expect_equal(r$status, 0L)
  expect_identical(readRDS(out3), expected)

  out4 <- file.path(fx$dir, "plain.RData")
  r <- run_cli(c("to-rdata", arrow_file, "-o", out4, "--compress", "none"))
  expect_equal(r$status, 0L)
  expect_equal(rawToChar(readBin(out4, "raw", 5L)), "RDX3\n")
  e <- new.env()
  expect_equal(load(out4, envir = e), "py")
  expect_identical(e$py, expected)
})

test_that("to-arrow then to-rdata gives the data frame back", {
  fx <- cli_fixture()
  a <- file.path(fx$dir, "df.arrow")
  expect_equal(run_cli(c("to-arrow", fx$rdata, "-o", a, "--compression", "lz4"))$status, 0L)
  back <- file.path(fx$dir, "back.rds")
  expect_equal(run_cli(c("to-rdata", a, "-o", back))$status, 0L)
  expect_identical(readRDS(back), fx$df)
})

test_that("data errors exit with 1 and name the file", {
  fx <- cli_fixture()
  missing <- file.path(fx$dir, "missing.RData")
  r <- run_cli(c("to-arrow", missing))
  expect_equal(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "^rdarrow: error: .*missing\\.RData")

  r <- run_cli(c("ls", missing))
  expect_equal(r$status, 1L)

  # several data frames and no --object: the candidates are named
  two <- file.path(fx$dir, "two.RData")
  a <- data.frame(x = 1)
  b <- data.frame(y = 2)
  save(a, b, file = two)
  r <- run_cli(c("to-arrow", two))
  expect_equal(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "two\\.RData.*2 data frames.*'a', 'b'")
  r <- run_cli(c("to-arrow", two, "--object", "zz"))
  expect_equal(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "object 'zz' not found")

  # a truncated file: the object and the byte offset are named
  set.seed(1)
  df <- data.frame(x = rnorm(500))
  full <- file.path(fx$dir, "full.RData")
  save(df, file = full, compress = FALSE)
  cut <- file.path(fx$dir, "cut.RData")
  writeBin(readBin(full, "raw", 2000L), cut)
  r <- run_cli(c("to-arrow", cut, "-o", file.path(fx$dir, "cut.arrow")))
  expect_equal(r$status, 1L)
  msg <- paste(r$stderr, collapse = "\n")
  expect_match(msg, "cut\\.RData")
  expect_match(msg, "in object 'df', at byte [0-9]+")
  expect_false(file.exists(file.path(fx$dir, "cut.arrow")))

  # neither Arrow nor R data
  text <- file.path(fx$dir, "notes.txt")
  writeLines(c("not a data file", "at all"), text)
  r <- run_cli(c("to-rdata", text, "-o", file.path(fx$dir, "x.RData")))
  expect_equal(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "not an Arrow IPC file or stream")
  expect_false(file.exists(file.path(fx$dir, "x.RData")))
  # an R data file is rewritten as one (how a .qs file is rescued)
  r <- run_cli(c("to-rdata", fx$rdata, "-o", file.path(fx$dir, "x.RData")))
  expect_equal(r$status, 0L)
  a <- new.env()
  b <- new.env()
  load(fx$rdata, a)
  load(file.path(fx$dir, "x.RData"), b)
  expect_identical(as.list(b), as.list(a))
})

test_that("usage errors exit with 2", {
  fx <- cli_fixture()
  expect_equal(run_cli(character())$status, 2L)
  expect_equal(run_cli(c("frobnicate", fx$rdata))$status, 2L)
  expect_equal(run_cli(c("ls"))$status, 2L)
  expect_equal(run_cli(c("ls", fx$rdata, "--bogus"))$status, 2L)
  expect_equal(run_cli(c("to-arrow", fx$rdata, "--format", "csv"))$status, 2L)
  expect_equal(run_cli(c("to-arrow", fx$rdata, "--compression", "gzip"))$status, 2L)
  expect_equal(run_cli(c("to-arrow", fx$rdata, "--chunk-size", "0"))$status, 2L)
  r <- run_cli(c("to-rdata", fx$rdata)) # no -o
  expect_equal(r$status, 2L)
  expect_match(paste(r$stderr, collapse = "\n"), "--output")
  expect_equal(run_cli(c("to-rdata", "x.arrow", "-o", "x.RData", "--compress", "lzma"))$status, 2L)
  expect_equal(run_cli(c("to-rdata", "x.arrow", "-o", "x.RData", "--level", "12"))$status, 2L)
  expect_equal(run_cli(c("to-dataset", "-o", file.path(fx$dir, "ds")))$status, 2L)
  r <- run_cli("--help")
  expect_equal(r$status, 0L)
  expect_match(paste(r$stdout, collapse = "\n"), "to-dataset")
})
