# Objects as real data files hold them: strings whose bytes are not valid
# text, matrix and POSIXlt columns, attributes the Arrow types cannot say,
# arrow R's own objects and the Matrix package's sparse matrices. Each goes
# every way to Arrow and back (helper-routes.R) and comes back as it was;
# the Arrow it makes is read by pyarrow, Polars and DuckDB without error.

utf8_marked <- function(...) {
  x <- c(...)
  Encoding(x) <- "UTF-8"
  x
}

bad_strings_frame <- function() {
  d <- data.frame(
    # bytes of a legacy single-byte encoding and damaged text, marked UTF-8
    notes = utf8_marked("ok", "a\xcc_b", "x\xd5g", NA,
                        "Jos\xe9 \x93quoted\x94", # Windows-1252
                        "Caf\x8e cr\x8fme",       # Mac Roman
                        "cut \xe2\x82",           # a truncated UTF-8 sequence
                        "caf\xc3\xa9"),           # valid UTF-8
    n = 1:8, stringsAsFactors = FALSE)
  lat <- c("caf\xe9", "na\xefve", "plain", NA, "\xfcber", "a", "b", "c")
  Encoding(lat) <- "latin1"
  d$latin1 <- lat
  unk <- c("caf\xe9", "abc", NA, "d", "e", "f", "g", "h")
  d$unknown <- unk
  byt <- c("\x93q\x94", "caf\xc3\xa9", "z", NA, "y", "x", "w", "v")
  Encoding(byt) <- "bytes"
  d$bytes <- byt
  d$f <- factor(utf8_marked("a", "b\xe9", "a", NA, "c", "b\xe9", "a", "c"))
  d$l <- list("x", utf8_marked("y\xff", "z"), NULL, "w", "v", "u", "t", "s")
  d
}

test_that("strings that are not valid text convert, with a warning, and come back byte for byte", {
  d <- bad_strings_frame()
  f <- save_rds(d)
  w <- NULL
  s <- withCallingHandlers(rdata_to_arrow(f), warning = function(cnd) {
    w <<- c(w, list(cnd))
    invokeRestart("muffleWarning")
  })
  msgs <- vapply(w, conditionMessage, "")
  expect_true(all(vapply(w, inherits, TRUE, "rdarrow_warning")))
  # the column, how many strings, the first row
  expect_true(any(grepl("column 'notes': 5 strings are not valid text (the first is in row 2)", msgs, fixed = TRUE)), info = paste(msgs, collapse = "\n"))
  expect_true(any(grepl("column 'unknown': 1 string is not valid text (the first is in row 1)", msgs, fixed = TRUE)))
  expect_true(any(grepl("column 'f': 1 factor level is not valid text (the first is level 2)", msgs, fixed = TRUE)))
  expect_true(any(grepl("column 'l': 1 string is not valid text", msgs, fixed = TRUE)))
  expect_false(any(grepl("column 'latin1'", msgs, fixed = TRUE)))
  # the rule: single-byte text read as Windows-1252, damaged UTF-8 with U+FFFD
  skip_if_not_installed("arrow")
  tab <- arrow::as_arrow_table(s)
  notes <- as.vector(tab$notes)
  expect_identical(notes[2:3], c("a\u00cc_b", "x\u00d5g"))
  expect_identical(notes[5], "Jos\u00e9 \u201cquoted\u201d")
  expect_identical(notes[6], "Caf\u017d cr\u008fme")
  expect_identical(notes[7], "cut \ufffd")
  expect_identical(notes[8], "caf\u00e9")
  expect_true(all(validUTF8(notes[!is.na(notes)])))
  expect_every_route(d, "strings not valid text")
  expect_every_route(d$notes, "a character vector of them")
})

test_that("the encoding files of the peer corpus come back identical by every route", {
  peers <- Sys.getenv("RDARROW_PEERS_DIR")
  if (!nzchar(peers)) skip("RDARROW_PEERS_DIR is not set (tools/test.sh sets it): the peer corpus cannot be read")
  files <- list.files(peers, pattern = "encod|utf8|8859|latin", recursive = TRUE, full.names = TRUE)
  skip_if(length(files) == 0L, "no encoding files in the peer corpus")
  n <- 0L
  for (f in files) {
    objs <- tryCatch(if (grepl("\\.rds$", f, ignore.case = TRUE)) list(x = readRDS(f)) else load_objects(f),
                     error = function(e) NULL)
    for (o in names(objs)) {
      expect_every_route(objs[[o]], paste(basename(f), o))
      n <- n + 1L
    }
  }
  expect_gt(n, 5L)
})

test_that("matrix columns become fixed-size lists that every consumer reads, and come back", {
  d <- data.frame(n = c(10, 20, 30))
  d$y <- cbind(succ = 1:3, fail = 4:6)
  d2 <- data.frame(x = 1:5)
  d2$p <- poly(1:5, 2)
  d3 <- data.frame(x = 1:2)
  d3$m <- I(matrix(c(1.5, 2, 3, 4), 2, dimnames = list(NULL, c("a", "b"))))
  d4 <- data.frame(x = 1:3)
  d4$m <- matrix(c("a", "b", "c", "d", "e", NA), 3)
  d5 <- data.frame(x = 1:3)
  d5$m <- matrix(numeric(0), 3, 0)
  d6 <- data.frame(x = integer(0))
  d6$m <- matrix(numeric(0), 0, 2)
  for (k in list(list(d, "cbind() response"), list(d2, "poly() terms"), list(d3, "I(matrix)"),
                 list(d4, "character matrix"), list(d5, "no columns"), list(d6, "no rows"))) {
    expect_every_route(k[[1]], k[[2]])
  }
  # the Arrow type, and what the consumers see
  f <- save_rds(d)
  dir <- local_tempdir()
  ipc <- file.path(dir, "m.arrow")
  pq <- file.path(dir, "m.parquet")
  rdata_to_ipc(f, ipc)
  rdata_to_parquet(f, pq)
  out <- rt_python(c(
    "import sys, pyarrow.ipc as ipc, pyarrow.parquet as pq, polars as pl, duckdb",
    "t = ipc.open_file(sys.argv[1]).read_all()",
    "print(t.schema.field('y').type)",
    "print(t.column('y').to_pylist())",
    "print(pl.read_ipc(sys.argv[1]).schema['y'])",
    "print(pq.read_table(sys.argv[2]).schema.field('y').type)",
    "print(duckdb.sql('select typeof(y) from t limit 1').fetchall()[0][0])"
  ), ipc, pq)
  expect_identical(out, c("fixed_size_list<item: int32>[2]", "[[1, 4], [2, 5], [3, 6]]",
                          "Array(Int32, shape=(2,))", "fixed_size_list<item: int32>[2]", "INTEGER[2]"))
})

test_that("POSIXlt columns and objects become timestamps in their zone and come back", {
  lt <- as.POSIXlt(c("2020-01-01 10:00:00", "2021-06-01 12:30:00", NA), tz = "America/New_York")
  d <- data.frame(x = 1:3)
  d$t <- lt
  expect_every_route(d, "POSIXlt from strptime")
  lt2 <- as.POSIXlt(as.POSIXct(c("2020-01-01 10:00:00.25", "2021-06-01 12:30:00", "2021-11-07 01:30:00"),
                               tz = "America/New_York"))
  d2 <- data.frame(x = 1:3)
  d2$t <- lt2
  expect_every_route(d2, "POSIXlt from POSIXct")
  expect_every_route(lt2, "a POSIXlt object")
  expect_every_route(as.POSIXlt(.POSIXct(c(1e9, 2e9), tz = "Asia/Kolkata")), "POSIXlt in Kolkata")
  expect_every_route(data.frame(x = 1:2, t = I(as.POSIXlt(c("2020-06-01 10:00:00", "1901-01-01"), tz = "Europe/Berlin"))),
                     "I(POSIXlt) in Berlin")
  expect_every_route(as.POSIXlt(c("2020-03-01 01:02:03", "2024-02-29 23:59:59"), tz = "UTC"), "POSIXlt in UTC")
  # the timestamps: the instants, in the zone
  skip_if_not_installed("arrow")
  tab <- arrow::as_arrow_table(rdata_to_arrow(save_rds(d2)))
  expect_identical(tab$schema$t$type$ToString(), "timestamp[ms, tz=America/New_York]")
  expect_equal(as.numeric(as.vector(tab$t)), as.numeric(as.POSIXct(lt2)))
})

test_that("attributes the mapping cannot say come back: functions, formulas, lists, named levels", {
  skip_if_not_installed("nlme")
  d <- data.frame(x = 1:3)
  attr(d, "fns") <- list(f = function(x) x + 1, g = mean)
  attr(d, "ginfo") <- list(a = list(1, "b"), sp = stats::splinefun(1:3, c(1, 4, 9)))
  attr(d, "formula") <- y ~ x | g
  expect_every_route(d, "attributes holding functions, lists, a formula")
  f <- factor(c("a", "b", "a"))
  levels(f) <- c(A = "a", B = "b")
  expect_every_route(data.frame(f = f), "a factor with named levels")
  for (n in c("Orthodont", "Oats", "bdf", "RatPupWeight", "Alfalfa")) {
    e <- new.env()
    utils::data(list = n, package = "nlme", envir = e)
    expect_every_route(e[[n]], paste("nlme's", n))
  }
  # list elements without an Arrow value (calls, functions) are null in
  # Arrow and travel in the metadata; lists of tibbles stay tibbles
  expect_every_route(list(f = function(x) x, e = quote(a + b), n = 1), "a list holding a function and a call")
  fits <- data.frame(x = 1:2)
  fits$model <- list(y ~ x, NULL)
  expect_every_route(fits, "a list column holding a formula")
  expect_every_route(tibble::tibble(l = list(tibble::tibble(z = 1), NULL)), "a list column of tibbles")
  if (requireNamespace("bench", quietly = TRUE)) {
    bm <- bench::mark(sum(1:10), min_iterations = 3, check = FALSE, memory = FALSE)
    expect_every_route(bm, "a bench_mark tibble")
  }
  m <- matrix(list(1 + 2i, 3i, 4 + 0i, c(5i, 1)), 2)
  expect_every_route(list(m = m), "a list holding a list-mode matrix")
  expect_every_route(datasets::Harman23.cor, "a list holding a matrix")
})

test_that("arrow R's Array, ChunkedArray and Scalar and nanoarrow's arrays and streams are written as R vectors", {
  skip_if_not_installed("arrow")
  skip_if_not_installed("nanoarrow")
  back <- function(x) {
    f <- local_tempfile(fileext = ".rds")
    arrow_to_rdata(x, f)
    readRDS(f)
  }
  expect_identical(back(arrow::Array$create(1:3)), 1:3)
  expect_identical(back(arrow::chunked_array(1:3, 4:5)), 1:5)
  expect_identical(back(arrow::Scalar$create(3.5)), 3.5)
  expect_identical(back(arrow::Array$create(factor(c("a", "b")))), factor(c("a", "b")))
  expect_identical(back(arrow::Array$create(data.frame(a = 1:2, b = c("x", "y")))),
                   data.frame(a = 1:2, b = c("x", "y")))
  expect_identical(back(nanoarrow::as_nanoarrow_array(data.frame(a = 1:2))), data.frame(a = 1:2))
  expect_identical(back(nanoarrow::as_nanoarrow_array(c(1.5, NA))), c(1.5, NA))
  expect_identical(back(nanoarrow::basic_array_stream(list(nanoarrow::as_nanoarrow_array(1:2),
                                                           nanoarrow::as_nanoarrow_array(3L)))), 1:3)
  expect_identical(back(arrow::record_batch(a = 1:2)), data.frame(a = 1:2))
  expect_error(arrow_to_rdata(list(1), local_tempfile(fileext = ".rds")), class = "rdarrow_error")
})

test_that("a vector's stream is its own array for as_arrow_array(), as_chunked_array() and as_nanoarrow_array()", {
  skip_if_not_installed("arrow")
  skip_if_not_installed("nanoarrow")
  f <- save_rds(c(a = 1.5, b = 2))
  a <- arrow::as_arrow_array(rdata_to_arrow(f))
  expect_s3_class(a, "Array")
  expect_identical(a$type$ToString(), "double")
  expect_identical(as.vector(a), c(1.5, 2))
  ca <- arrow::as_chunked_array(rdata_to_arrow(f))
  expect_s3_class(ca, "ChunkedArray")
  expect_identical(ca$type$ToString(), "double")
  na <- nanoarrow::as_nanoarrow_array(rdata_to_arrow(f))
  expect_identical(nanoarrow::infer_nanoarrow_schema(na)$format, "g")
  expect_identical(nanoarrow::convert_array(na), c(1.5, 2))
  f2 <- save_rds(factor(c("u", "v", "u")))
  expect_identical(arrow::as_arrow_array(rdata_to_arrow(f2))$type$ToString(),
                   "dictionary<values=string, indices=int8>")
  f3 <- save_rds(data.frame(a = 1:2))
  expect_identical(arrow::as_arrow_array(rdata_to_arrow(f3))$type$ToString(), "struct<a: int32>")
  expect_s3_class(arrow::as_arrow_table(rdata_to_arrow(f3)), "Table")
})

test_that("sparse matrices convert to their stored entries, without densifying, and come back", {
  skip_if_not_installed("Matrix")
  sp <- Matrix::sparseMatrix(i = c(1, 3, 2), j = c(2, 3, 3), x = c(1.5, 2, NA), dims = c(3, 4))
  named <- sp
  dimnames(named) <- list(c("a", "b", "c"), c("w", "x", "y", "z"))
  kinds <- list(
    dgCMatrix = sp,
    dgTMatrix = methods::as(sp, "TsparseMatrix"),
    dgRMatrix = methods::as(sp, "RsparseMatrix"),
    lgCMatrix = sp > 1,
    ngCMatrix = methods::as(sp != 0, "nMatrix"),
    dimnames = named,
    all_zero = Matrix::sparseMatrix(i = integer(0), j = integer(0), x = numeric(0), dims = c(3, 3)),
    empty = Matrix::sparseMatrix(i = integer(0), j = integer(0), x = numeric(0), dims = c(0, 0)),
    dsCMatrix = Matrix::forceSymmetric(Matrix::sparseMatrix(i = c(1, 2), j = c(2, 2), x = c(1, 2), dims = c(2, 2))),
    dtCMatrix = Matrix::sparseMatrix(i = c(1, 1, 2), j = c(1, 2, 2), x = c(1, 2, 3), dims = c(2, 2), triangular = TRUE)
  )
  for (k in names(kinds)) expect_every_route(kinds[[k]], k)
  # the table: i, j from 1 as R counts, x
  skip_if_not_installed("arrow")
  tab <- as.data.frame(arrow::as_arrow_table(rdata_to_arrow(save_rds(named))))
  s <- Matrix::summary(named)
  expect_identical(tab$i, as.integer(s$i))
  expect_identical(tab$j, as.integer(s$j))
  expect_identical(tab$x, s$x)
  # memory proportional to the entries: a 1e6 x 1e6 matrix of 10 entries
  huge <- Matrix::sparseMatrix(i = 1:10 * 1000L, j = 1:10 * 99L, x = 1:10 + 0.5, dims = c(1e6, 1e6))
  expect_every_route(huge, "1e6 x 1e6 with 10 entries")
})

test_that("a sparse matrix whose slots do not fit, or whose table was changed, is an error saying which slot", {
  skip_if_not_installed("Matrix")
  sp <- Matrix::sparseMatrix(i = c(1, 3, 2), j = c(2, 3, 3), x = c(1.5, 2, 4), dims = c(3, 4))
  # slots set past the class's validity check, as a damaged file holds them
  bad_i <- sp
  bad_i@i[2] <- 7L
  expect_error(rdata_to_arrow(save_rds(bad_i)), "the sparse matrix's i[1] is 7, outside the 3 rows", fixed = TRUE, class = "rdarrow_error")
  bad_p <- sp
  bad_p@p[length(bad_p@p)] <- 9L
  expect_error(rdata_to_arrow(save_rds(bad_p)), "the sparse matrix's p[4] is 9 but i has 3 entries", fixed = TRUE, class = "rdarrow_error")
  bad_p2 <- sp
  bad_p2@p[2:3] <- c(2L, 1L)
  expect_error(rdata_to_arrow(save_rds(bad_p2)), "the sparse matrix's p[1] > p[2]", fixed = TRUE, class = "rdarrow_error")
  bad_x <- sp
  bad_x@x <- c(1, 2)
  expect_error(rdata_to_arrow(save_rds(bad_x)), "the sparse matrix's x has 2 values for 3 entries", class = "rdarrow_error")
  tr <- methods::as(sp, "TsparseMatrix")
  tr@j <- tr@j[-1]
  expect_error(rdata_to_arrow(save_rds(tr)), "the sparse matrix's i has 3 entries but j has 2", class = "rdarrow_error")
  # the table changed so that it no longer fits the matrix
  skip_if_not_installed("arrow")
  tab <- arrow::as_arrow_table(rdata_to_arrow(save_rds(sp)))
  out <- local_tempfile(fileext = ".rds")
  moved <- tab
  moved$i <- arrow::Array$create(c(1L, 9L, 2L))
  expect_error(arrow_to_rdata(moved, out), "outside 1..3: the table was changed", class = "rdarrow_error")
  expect_false(file.exists(out))
  unsorted <- tab
  unsorted$j <- arrow::Array$create(c(3L, 2L, 3L))
  expect_error(arrow_to_rdata(unsorted, out), "the table was changed", class = "rdarrow_error")
  expect_false(file.exists(out))
})

test_that("the Arrow of every new kind is valid for pyarrow, Polars and DuckDB", {
  skip_if_not_installed("Matrix")
  dir <- local_tempdir()
  lt <- as.POSIXlt(as.POSIXct(c("2020-01-01 10:00:00", "2021-06-01 12:30:00", NA), tz = "America/New_York"))
  d <- data.frame(x = 1:3)
  d$t <- lt
  d$m <- cbind(a = 1:3, b = 4:6)
  objs <- list(strings = bad_strings_frame(), times_and_matrix = d,
               sparse = Matrix::sparseMatrix(i = c(1, 3), j = c(2, 3), x = c(1.5, 2), dims = c(3, 4)))
  paths <- character()
  for (o in names(objs)) {
    src <- file.path(dir, paste0(o, ".rds"))
    saveRDS(objs[[o]], src)
    ipc <- file.path(dir, paste0(o, ".arrow"))
    pq <- file.path(dir, paste0(o, ".parquet"))
    suppressWarnings(rdata_to_ipc(src, ipc))
    suppressWarnings(rdata_to_parquet(src, pq))
    paths <- c(paths, ipc, pq)
  }
  out <- rt_consumers_read(paths)
  expect_identical(sub(" ok .*", " ok", out), paste(paths, "ok"))
})

test_that("the command line warns on stderr about strings that are not valid text", {
  src <- save_rds(bad_strings_frame())
  out <- local_tempfile(fileext = ".arrow")
  r <- run_cli(c("to-arrow", src, "-o", out))
  expect_identical(r$status, 0L)
  expect_true(file.exists(out))
  expect_true(any(grepl("warning: .*column 'notes': 5 strings are not valid text", r$stderr)),
              info = paste(r$stderr, collapse = "\n"))
})

test_that("the command line's circle (to-arrow / to-parquet, then to-rdata) gives every new kind back", {
  skip_if_not_installed("Matrix")
  bad <- utf8_marked("ok", "a\xcc_b", NA)
  m <- data.frame(n = 1:3)
  m$y <- cbind(a = 1:3, b = 4:6)
  lt <- data.frame(x = 1:2)
  lt$t <- as.POSIXlt(as.POSIXct(c("2020-01-01 10:00", "2021-06-01 12:30"), tz = "America/New_York"))
  objs <- list(strings = data.frame(s = bad), matrix = m, posixlt = lt,
               sparse = Matrix::sparseMatrix(i = c(1, 3), j = c(2, 3), x = c(1.5, 2), dims = c(3, 4)))
  dir <- local_tempdir()
  for (k in names(objs)) {
    src <- file.path(dir, paste0(k, ".rds"))
    saveRDS(objs[[k]], src)
    for (step in list(c("to-arrow", ".arrow"), c("to-parquet", ".parquet"))) {
      mid <- file.path(dir, paste0(k, step[[2]]))
      out <- file.path(dir, paste0(k, "-back", step[[2]], ".rds"))
      expect_identical(run_cli(c(step[[1]], src, "-o", mid))$status, 0L)
      expect_identical(run_cli(c("to-rdata", mid, "-o", out))$status, 0L)
      expect(rt_same(readRDS(out), objs[[k]]), sprintf("%s by %s: not the same object back", k, step[[1]]))
    }
  }
})
