# rdata_to_arrow(): the C stream object, its consumption by pyarrow,
# zero copy, object and column selection, chunking and errors.

test_that("rdata_to_arrow returns a live stream external pointer with the right class", {
  f <- save_rda(x = data.frame(a = 1:3, b = c("u", "v", "w")))
  s <- rdata_to_arrow(f)
  expect_identical(class(s), c("rdarrow_array_stream", "nanoarrow_array_stream"))
  expect_identical(typeof(s), "externalptr")
  expect_true(rdarrow:::stream_is_live_impl(s))
  expect_identical(attr(s, "rdarrow_object"), "x")
  expect_identical(attr(s, "rdarrow_nrow"), 3)
  expect_match(rdarrow:::xptr_address_impl(s), "^[0-9]+$")
  expect_false(identical(rdarrow:::xptr_address_impl(s), "0"))
  expect_identical(rdarrow:::stream_for_consumer(s), s)
})

test_that("print() shows object, rows and schema, and says when consumed", {
  skip_if_no_pyarrow()
  f <- save_rda(cars2 = data.frame(speed = c(4L, 7L), dist = c(2.5, NA), who = c("a", "b")))
  s <- rdata_to_arrow(f)
  out <- capture.output(res <- print(s))
  expect_identical(res, s)
  expect_match(out[[1]], "cars2", fixed = TRUE)
  expect_no_match(out[[1]], "consumed")
  expect_true(any(grepl("rows: 2", out, fixed = TRUE)))
  for (col in c("speed", "dist", "who")) {
    expect_true(any(grepl(paste0("^\\s+", col, ": "), out)), label = col)
  }
  py_import(s)
  out2 <- capture.output(print(s))
  expect_match(out2[[1]], "(already consumed)", fixed = TRUE)
  expect_true(any(grepl("rows: 2", out2, fixed = TRUE)))
})

test_that("importing into pyarrow consumes the stream; a second consumer gets an rdarrow_error", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:5, b = letters[1:5])
  f <- save_rda(df = df)
  s <- rdata_to_arrow(f)
  tab <- py_import(s)
  py_validate(tab)
  expect_identical(py_nrow(tab), 5L)
  expect_false(rdarrow:::stream_is_live_impl(s))
  expect_error(rdarrow:::stream_for_consumer(s), class = "rdarrow_error")
  expect_error(rdarrow:::stream_for_consumer(s), "already consumed")
  # pyarrow refuses the released stream (an error, not a crash)
  expect_error(py_import(s))
  # the table imported first is still intact
  expect_identical(py_values(tab, "a"), 1:5)
  expect_identical(py_values(tab, "b"), letters[1:5])
})

test_that("the arrow methods refuse a consumed stream with an rdarrow_error", {
  skip_if_no_pyarrow()
  skip_if_not_installed("arrow")
  f <- save_rda(df = data.frame(a = 1:3))
  s <- rdata_to_arrow(f)
  py_import(s)
  expect_error(arrow::as_arrow_table(s), class = "rdarrow_error")
  expect_error(arrow::as_record_batch_reader(s), class = "rdarrow_error")
})

test_that("an unconsumed stream is released by the garbage collector", {
  f <- save_rda(df = data.frame(a = 1:1000, s = as.character(1:1000)))
  for (i in 1:20) s <- rdata_to_arrow(f)
  rm(s)
  expect_no_error(gc())
  s <- rdata_to_arrow(f)
  expect_true(rdarrow:::stream_is_live_impl(s))
})

test_that("the table survives the stream object and the file", {
  skip_if_no_pyarrow()
  f <- save_rda(df = data.frame(a = c(1.5, 2.5), s = c("x", "y")))
  s <- rdata_to_arrow(f)
  tab <- py_import(s)
  rm(s)
  unlink(f)
  gc()
  py_validate(tab)
  expect_identical(py_values(tab, "a"), c(1.5, 2.5))
  expect_identical(py_values(tab, "s"), c("x", "y"))
})

test_that("pyarrow sees the producer's buffers: no copy for int32, float64 and utf8", {
  skip_if_no_pyarrow()
  df <- data.frame(i = c(1L, NA, 3L, 4L), d = c(0.5, NA, NaN, 2), s = c("a", NA, "", "dd"),
                   stringsAsFactors = FALSE)
  f <- save_rda(df = df)
  res <- rdarrow:::rdata_to_arrow_impl(f, NULL, NULL, NULL, "UTC", "", 10000L)
  expect_named(res, c("stream", "object", "nrow", "schema", "addresses", "warnings", "shape"))
  expect_identical(res$shape, "data.frame")
  expect_identical(res$object, "df")
  expect_identical(res$nrow, 4)
  expect_length(res$addresses, 3L)
  expect_true(all(is.finite(res$addresses) & res$addresses > 0))
  tab <- py_import(res$stream)
  py_validate(tab)
  bufs <- lapply(0:2, function(i) py_fun("buffer_addresses")(tab$column(as.integer(i))$chunk(0L)))
  produced <- format(res$addresses, scientific = FALSE, trim = TRUE)
  # int32 and float64: buffer 1 (after validity) holds the values
  expect_identical(bufs[[1]][[2]], produced[[1]])
  expect_identical(bufs[[2]][[2]], produced[[2]])
  # utf8: [validity, offsets, data]; rdarrow reports its buffer 1 = the data
  expect_identical(bufs[[3]][[3]], produced[[3]])
  # and the values are right
  expect_identical(py_values(tab, "i"), df$i)
  expect_identical(py_values(tab, "s"), df$s)
})

test_that("object = NULL takes the only data frame, even beside other objects", {
  skip_if_no_pyarrow()
  f <- save_rda(v = 1:3, df = data.frame(a = 1:2), w = letters)
  s <- rdata_to_arrow(f)
  expect_identical(attr(s, "rdarrow_object"), "df")
  tab <- py_import(s)
  expect_identical(py_names(tab), "a")
  expect_identical(py_nrow(tab), 2L)
})

test_that("object = NULL with two data frames is an error listing both", {
  f <- save_rda(first_df = data.frame(a = 1), second_df = data.frame(b = 2))
  err <- expect_error(rdata_to_arrow(f), class = "rdarrow_error")
  expect_match(conditionMessage(err), "first_df", fixed = TRUE)
  expect_match(conditionMessage(err), "second_df", fixed = TRUE)
})

test_that("object = NULL with no data frame is an error listing the objects", {
  f <- save_rda(vec_one = 1:3, vec_two = letters)
  err <- expect_error(rdata_to_arrow(f), class = "rdarrow_error")
  expect_match(conditionMessage(err), "vec_one", fixed = TRUE)
  expect_match(conditionMessage(err), "vec_two", fixed = TRUE)
})

test_that("an unknown object name is an rdarrow_error naming the objects present", {
  f <- save_rda(alpha = data.frame(a = 1), beta = 1:3)
  err <- expect_error(rdata_to_arrow(f, object = "nope"), class = "rdarrow_error")
  expect_match(conditionMessage(err), "nope", fixed = TRUE)
  expect_match(conditionMessage(err), "alpha", fixed = TRUE)
  expect_match(conditionMessage(err), "beta", fixed = TRUE)
})

test_that("closures, environments and other non-data objects are refused with what they are", {
  f <- save_rda(fn = function(x) x + 1, en = new.env(), sym = quote(a),
                df = data.frame(a = 1))
  err <- expect_error(rdata_to_arrow(f, object = "fn"), class = "rdarrow_error")
  expect_match(conditionMessage(err), "function|closure")
  err <- expect_error(rdata_to_arrow(f, object = "en"), class = "rdarrow_error")
  expect_match(conditionMessage(err), "environment")
  err <- expect_error(rdata_to_arrow(f, object = "sym"), class = "rdarrow_error")
  expect_match(conditionMessage(err), "symbol|name")
})

test_that("an unknown column in col_select is an rdarrow_error", {
  f <- save_rda(df = data.frame(a = 1, b = 2))
  err <- expect_error(rdata_to_arrow(f, col_select = "nope"), class = "rdarrow_error")
  expect_match(conditionMessage(err), "nope", fixed = TRUE)
  expect_error(rdata_to_arrow(f, col_select = 3), class = "rdarrow_error")
  expect_error(rdata_to_arrow(f, col_select = 0), class = "rdarrow_error")
  expect_error(rdata_to_arrow(f, col_select = NA_character_), class = "rdarrow_error")
  expect_error(rdata_to_arrow(f, chunk_size = 0), class = "rdarrow_error")
  expect_error(rdata_to_arrow(f, object = c("a", "b")), class = "rdarrow_error")
  expect_error(rdata_to_arrow(tempfile()), class = "rdarrow_error")
})

test_that("col_select by names and by positions follows the order of col_select", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:3, b = c("x", "y", "z"), c = c(1.5, 2.5, 3.5),
                   d = factor(c("p", "q", "p")))
  f <- save_rda(df = df)
  tab <- py_import(rdata_to_arrow(f, col_select = c("c", "a")))
  py_validate(tab)
  expect_identical(py_names(tab), c("c", "a"))
  expect_identical(py_values(tab, "c"), df$c)
  expect_identical(py_values(tab, "a"), df$a)

  tab <- py_import(rdata_to_arrow(f, col_select = c(4, 2)))
  py_validate(tab)
  expect_identical(py_names(tab), c("d", "b"))
  expect_identical(py_values(tab, "d"), as.character(df$d))
  expect_identical(py_values(tab, "b"), df$b)
  expect_identical(py_type(tab, "d"), "dictionary<values=string, indices=int8, ordered=0>")

  tab <- py_import(rdata_to_arrow(f, col_select = 2L))
  expect_identical(py_names(tab), "b")
  expect_identical(py_nrow(tab), 3L)
})

test_that("col_select keeps the metadata of the selected columns only", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:2, b = 3:4)
  attr(df$a, "units") <- "cm"
  attr(df$b, "units") <- "kg"
  f <- save_rda(df = df)
  tab <- py_import(rdata_to_arrow(f, col_select = "b"))
  md <- py_r_metadata(tab$schema)
  expect_identical(names(md$columns), "b")
  expect_identical(md$columns$b$attributes$units, "kg")
})

test_that("with chunk_size, a data frame is read from the file batch by batch as the consumer asks", {
  skip_if_not_installed("arrow")
  n <- 20000L
  set.seed(7)
  df <- data.frame(id = seq_len(n), x = rnorm(n), w = sample(c("a", "b", NA), n, TRUE),
                   g = factor(sample(c("lo", "hi"), n, TRUE), levels = c("lo", "mid", "hi")),
                   d = as.Date("2020-01-01") + seq_len(n), stringsAsFactors = FALSE)
  f <- tempfile(fileext = ".RData")
  save(df, file = f)  # gzip: its stream is spilled, the batches read back from the spill
  r <- arrow::as_record_batch_reader(rdata_to_arrow(f, chunk_size = 6000))
  sizes <- integer()
  while (!is.null(b <- r$read_next_batch())) sizes <- c(sizes, b$num_rows)
  expect_identical(sizes, c(6000L, 6000L, 6000L, 2000L))
  expect_identical(as.data.frame(arrow::as_arrow_table(rdata_to_arrow(f, chunk_size = 6000))), df)
  # a bad request is an error before any batch
  expect_error(rdata_to_arrow(f, object = "nope", chunk_size = 10), class = "rdarrow_error")
})

test_that("chunk_size = 2 on five rows gives batches of 2, 2 and 1", {
  skip_if_no_pyarrow()
  df <- data.frame(i = 1:5, s = c("a", "b", NA, "d", "e"),
                   f = factor(c("x", "y", "x", NA, "z")), d = c(0.5, NA, 2, 3, 4))
  f <- save_rda(df = df)
  s <- rdata_to_arrow(f, chunk_size = 2)
  expect_identical(attr(s, "rdarrow_nrow"), 5)
  reader <- py_import_reader(s)
  expect_identical(as.integer(unlist(py_fun("batch_sizes")(reader))), c(2L, 2L, 1L))

  tab <- py_import(rdata_to_arrow(f, chunk_size = 2))
  py_validate(tab)
  batches <- reticulate::py_len(tab$to_batches())
  expect_identical(as.integer(batches), 3L)
  expect_identical(py_values(tab, "i"), df$i)
  expect_identical(py_values(tab, "s"), df$s)
  expect_identical(py_values(tab, "f"), as.character(df$f))
  expect_identical(py_values(tab, "d"), df$d)
  expect_identical(py_null_positions(tab, "s"), 2L)
  expect_identical(py_null_positions(tab, "f"), 3L)
})

test_that("chunk_size at or above the row count gives one batch; 1 gives one per row", {
  skip_if_no_pyarrow()
  f <- save_rda(df = data.frame(i = 1:5))
  sizes <- function(chunk) {
    as.integer(unlist(py_fun("batch_sizes")(py_import_reader(rdata_to_arrow(f, chunk_size = chunk)))))
  }
  expect_identical(sizes(5), 5L)
  expect_identical(sizes(1e6), 5L)
  expect_identical(sizes(1), rep(1L, 5))
  expect_identical(sizes(NULL), 5L)
})

test_that("chunked struct, list and dictionary columns slice correctly", {
  skip_if_no_pyarrow()
  df <- data.frame(i = 1:5)
  df$l <- list(1:2, NULL, 3L, integer(0), 4:6)
  df$sub <- data.frame(a = c(1.5, 2.5, 3.5, 4.5, 5.5), b = c("v", "w", "x", "y", NA))
  f <- save_rda(df = df)
  tab <- py_import(rdata_to_arrow(f, chunk_size = 2))
  py_validate(tab)
  got <- reticulate::py_to_r(tab$column("l")$to_pylist())
  expect_identical(lapply(got, function(v) if (is.null(v)) NULL else as.integer(unlist(v))),
                   list(1:2, NULL, 3L, integer(0), 4:6))
  sub <- reticulate::py_to_r(tab$column("sub")$to_pylist())
  expect_identical(vapply(sub, function(v) v$a, 1), df$sub$a)
  expect_identical(vapply(sub, function(v) if (is.null(v$b)) NA_character_ else v$b, ""),
                   df$sub$b)
})

test_that("a zero-row frame with chunk_size gives a valid empty stream", {
  skip_if_no_pyarrow()
  f <- save_rda(df = data.frame(a = integer(), b = character()))
  tab <- py_import(rdata_to_arrow(f, chunk_size = 2))
  py_validate(tab)
  expect_identical(py_nrow(tab), 0L)
  expect_identical(py_names(tab), c("a", "b"))
})

test_that("an .rds data frame converts the same way", {
  skip_if_no_pyarrow()
  df <- data.frame(a = c(1L, NA), b = c("x", "y"), f = factor(c("u", "v")))
  g <- save_rds(df)
  s <- rdata_to_arrow(g)
  expect_identical(attr(s, "rdarrow_nrow"), 2)
  tab <- py_import(s)
  py_validate(tab)
  expect_identical(py_names(tab), names(df))
  expect_identical(py_values(tab, "a"), df$a)
  expect_identical(py_values(tab, "b"), df$b)
  expect_identical(py_values(tab, "f"), as.character(df$f))
  tab2 <- py_import(rdata_to_arrow(g, col_select = "b", chunk_size = 1))
  expect_identical(py_names(tab2), "b")
  expect_identical(py_values(tab2, "b"), df$b)
})

test_that("a vector in an .rds file becomes one column named as rdarrow names the object", {
  skip_if_no_pyarrow()
  g <- withr::local_tempfile(fileext = ".rds")
  saveRDS(c(1.5, NA, 3), g)
  tab <- py_import(rdata_to_arrow(g))
  py_validate(tab)
  expect_identical(py_nrow(tab), 3L)
  expect_identical(py_values(tab, 0L), c(1.5, NA, 3))
  # the same name that rdata_objects() and read_rdata() give it
  expect_identical(py_names(tab), rdata_objects(g)$name)
  expect_identical(py_names(tab), names(read_rdata(g)))
})

test_that("object = the name rdata_objects() gives works for an .rds file", {
  skip_if_no_pyarrow()
  g <- withr::local_tempfile(fileext = ".rds")
  saveRDS(iris, g)
  name <- rdata_objects(g)$name
  expect_length(name, 1L)
  s <- rdata_to_arrow(g, object = name)
  tab <- py_import(s)
  py_validate(tab)
  expect_identical(py_nrow(tab), 150L)
  expect_identical(py_names(tab), names(iris))
  expect_identical(py_values(tab, "Sepal.Length"), iris$Sepal.Length)
  expect_identical(py_values(tab, "Species"), as.character(iris$Species))

  out <- withr::local_tempfile(fileext = ".arrow")
  rdata_to_ipc(g, out, object = name)
  tab2 <- py_pa()$ipc$open_file(out)$read_all()
  py_validate(tab2)
  expect_identical(py_values(tab2, "Petal.Width"), iris$Petal.Width)
})

test_that("a wrong object name for an .rds file is a clear error, not an internal one", {
  g <- withr::local_tempfile(fileext = ".rds")
  saveRDS(data.frame(x = c(1.5, 2.5)), g)
  res <- tryCatch(rdata_to_arrow(g, object = "nope"), error = function(e) e)
  if (inherits(res, "error")) {
    expect_s3_class(res, "rdarrow_error")
    expect_no_match(conditionMessage(res), "internal", fixed = TRUE)
  } else {
    # accepted: then it must be the file's data frame, fully readable
    skip_if_no_pyarrow()
    tab <- py_import(res)
    py_validate(tab)
    expect_identical(py_values(tab, "x"), c(1.5, 2.5))
  }
})

test_that("a data frame whose names attribute is an ALTREP wrapper converts", {
  skip_if_no_pyarrow()
  df <- list(a = 1, b = 2, c = 3)
  attr(df, "names") <- .Internal(wrap_meta(c("a", "b", "c"), 0L, 0L))
  df <- structure(df, class = "data.frame", row.names = 1L)
  f <- save_rda(df = df)
  expect_identical(names(read_rdata(f)$df), c("a", "b", "c"))
  s <- rdata_to_arrow(f)
  tab <- py_import(s)
  py_validate(tab)
  expect_identical(py_names(tab), c("a", "b", "c"))
  expect_identical(py_values(tab, "c"), 3)
})

test_that("an error about an .rds object does not name an empty object", {
  g <- withr::local_tempfile(fileext = ".rds")
  saveRDS(function(x) x, g)
  err <- expect_error(rdata_to_arrow(g), class = "rdarrow_error")
  expect_no_match(conditionMessage(err), "object ''", fixed = TRUE)
})

test_that("vectors, factors and Dates become one column named after the object", {
  skip_if_no_pyarrow()
  f <- save_rda(ints = c(3L, NA, 1L), chars = c("a", NA), fac = factor(c("lo", "hi", "lo")),
                days = as.Date(c("2020-01-01", NA)), dbl = c(a = 1.5, b = -2),
                lgl = c(NA, TRUE))
  check <- function(obj, type, values) {
    tab <- py_import(rdata_to_arrow(f, object = obj))
    py_validate(tab)
    expect_identical(py_names(tab), obj)
    expect_identical(py_type(tab, obj), type, label = obj)
    expect_identical(py_values(tab, obj), values, label = obj)
  }
  check("ints", "int32", c(3L, NA, 1L))
  check("chars", "string", c("a", NA))
  check("fac", "dictionary<values=string, indices=int8, ordered=0>", c("lo", "hi", "lo"))
  check("dbl", "double", c(1.5, -2))
  check("lgl", "bool", c(NA, TRUE))
  tab <- py_import(rdata_to_arrow(f, object = "days"))
  expect_identical(py_names(tab), "days")
  expect_identical(py_type(tab, "days"), "date32[day]")
  expect_identical(py_ints(tab, "days"), c(18262, NA))
})

test_that("matrices become a column per matrix column, named from colnames or V1..", {
  skip_if_no_pyarrow()
  m1 <- matrix(1:6, nrow = 2)
  m2 <- matrix(c(1.5, NA, 3, 4), nrow = 2, dimnames = list(c("r1", "r2"), c("alpha", "beta")))
  m3 <- matrix(c("a", "b", NA, "d", "e", "f"), nrow = 3, dimnames = list(NULL, c("x", "y")))
  f <- save_rda(m1 = m1, m2 = m2, m3 = m3)
  tab <- py_import(rdata_to_arrow(f, object = "m1"))
  py_validate(tab)
  expect_identical(py_names(tab), c("V1", "V2", "V3"))
  expect_identical(py_nrow(tab), 2L)
  for (j in 1:3) expect_identical(py_values(tab, paste0("V", j)), m1[, j])
  expect_identical(py_type(tab, "V1"), "int32")

  tab <- py_import(rdata_to_arrow(f, object = "m2"))
  py_validate(tab)
  expect_identical(py_names(tab), c("alpha", "beta"))
  expect_identical(py_values(tab, "alpha"), unname(m2[, 1]))
  expect_identical(py_values(tab, "beta"), unname(m2[, 2]))

  tab <- py_import(rdata_to_arrow(f, object = "m3", chunk_size = 2))
  py_validate(tab)
  expect_identical(py_names(tab), c("x", "y"))
  expect_identical(py_values(tab, "x"), m3[, 1])
  expect_identical(py_values(tab, "y"), m3[, 2])
})

test_that("rdata_to_arrow works across save() formats and compressions", {
  skip_if_no_pyarrow()
  df <- data.frame(a = c(1L, NA, 3L), s = c("\u00e9", "b", NA), d = c(0.1, 0.2, NA))
  variants <- list(
    list(compress = TRUE, ascii = FALSE, version = 3),
    list(compress = "bzip2", ascii = FALSE, version = 3),
    list(compress = "xz", ascii = FALSE, version = 3),
    list(compress = FALSE, ascii = FALSE, version = 3),
    list(compress = FALSE, ascii = TRUE, version = 3),
    list(compress = TRUE, ascii = FALSE, version = 2)
  )
  for (v in variants) {
    f <- withr::local_tempfile(fileext = ".rda")
    do.call(save, c(list("df", file = f), v))
    lab <- paste(names(v), unlist(v), collapse = ",")
    tab <- py_import(rdata_to_arrow(f))
    py_validate(tab)
    expect_identical(py_values(tab, "a"), df$a, label = lab)
    expect_identical(py_values(tab, "s"), df$s, label = lab)
    expect_identical(py_values(tab, "d"), df$d, label = lab)
  }
})
