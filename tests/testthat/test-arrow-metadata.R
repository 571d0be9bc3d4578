# The "r" schema metadata: arrow R's serialized
# list(attributes = ..., columns = ...), read back from pyarrow.

md_of <- function(df, ..., .env = parent.frame()) {
  tab <- to_py_table(df, ..., .env = .env)
  py_validate(tab)
  py_r_metadata(tab$schema)
}

test_that("a plain data frame has no r metadata", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:2, b = c("x", "y"), f = factor(c("u", "v")))
  tab <- to_py_table(df)
  expect_null(py_fun("r_metadata")(tab$schema))
  # integer row names other than 1..n are data: kept, as character ones are
  rn <- md_of(data.frame(a = 1:3, row.names = c(5L, 10L, 20L)))$attributes$row.names
  expect_identical(rn, c(5L, 10L, 20L))
})

test_that("a custom top-level attribute is kept, names/row.names/class are not", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:2, b = c("x", "y"))
  attr(df, "label") <- "x"
  tab <- to_py_table(df)
  raw <- py_fun("r_metadata")(tab$schema)
  expect_type(raw, "character")
  # arrow R writes it with serialize(ascii = TRUE)
  expect_match(raw, "^A\n")
  md <- unserialize(charToRaw(raw))
  expect_identical(md, list(attributes = list(label = "x"),
                            columns = list(a = NULL, b = NULL)))
})

test_that("character row names are kept as a top-level attribute", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:3, row.names = c("r1", "r2", "r3"))
  md <- md_of(df)
  expect_identical(md$attributes$row.names, c("r1", "r2", "r3"))
  expect_null(md$attributes$class)
  expect_null(md$attributes$names)
  expect_identical(md$columns, list(a = NULL))
  # mtcars-like: character row names and nothing else
  md2 <- md_of(head(mtcars, 3))
  expect_identical(md2$attributes, list(row.names = rownames(head(mtcars, 3))))
})

test_that("a tibble drops its class; its other attributes are kept", {
  skip_if_no_pyarrow()
  skip_if_not_installed("tibble")
  tb <- tibble::tibble(a = 1:2, b = c("x", "y"))
  expect_null(md_of(tb))
  attr(tb, "label") <- "L"
  expect_identical(md_of(tb), list(attributes = list(label = "L"),
                                   columns = list(a = NULL, b = NULL)))
})

test_that("a data.table keeps its class and key but not .internal.selfref", {
  skip_if_no_pyarrow()
  skip_if_not_installed("data.table")
  dt <- data.table::data.table(a = 2:1, b = c("x", "y"))
  data.table::setkey(dt, a)
  expect_true(".internal.selfref" %in% names(attributes(dt)))
  tab <- to_py_table(dt)
  py_validate(tab)
  raw <- py_fun("r_metadata")(tab$schema)
  expect_no_match(raw, "internal.selfref", fixed = TRUE)
  md <- unserialize(charToRaw(raw))
  expect_identical(md$attributes$class, c("data.table", "data.frame"))
  expect_identical(md$attributes$sorted, "a")
  expect_false(".internal.selfref" %in% names(md$attributes))
  expect_identical(md$columns, list(a = NULL, b = NULL))
  expect_identical(py_values(tab, "a"), 1:2)
})

test_that("typed columns drop the attributes their Arrow type carries", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "UTC")
  df <- data.frame(
    f = factor(c("a", "b")),
    o = factor(c("lo", "hi"), levels = c("lo", "hi"), ordered = TRUE),
    d = as.Date(c("2020-01-01", "2020-01-02")),
    t = .POSIXct(c(0, 1), tz = "America/New_York")
  )
  df$dt <- as.difftime(c(1, 2), units = "hours")
  df$h <- hms::hms(c(1, 2))
  df$i64 <- bit64::as.integer64(1:2)
  expect_null(md_of(df))
})

test_that("other column attributes are kept under columns$<col>$attributes", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "UTC")
  df <- data.frame(a = 1:2, x = c(1.5, 2.5), k = c(3L, 4L))
  attr(df$x, "units") <- "cm"
  df$k <- structure(df$k, class = "myclass")
  df$f <- structure(factor(c("p", "q")), label = "a factor")
  df$d <- structure(as.Date(c("2020-01-01", NA)), label = "a date")
  df$t <- structure(.POSIXct(c(1, 2), tz = "UTC"), label = "a time")
  tab <- to_py_table(df)
  py_validate(tab)
  md <- py_r_metadata(tab$schema)
  expect_identical(names(md$columns), names(df))
  expect_null(md$columns$a)
  expect_identical(md$columns$x, list(attributes = list(units = "cm"), columns = NULL))
  expect_identical(md$columns$k, list(attributes = list(class = "myclass"), columns = NULL))
  expect_identical(md$columns$f, list(attributes = list(label = "a factor"), columns = NULL))
  expect_identical(md$columns$d, list(attributes = list(label = "a date"), columns = NULL))
  expect_identical(md$columns$t, list(attributes = list(label = "a time"), columns = NULL))
  expect_identical(md$attributes, list())
  # the classed columns still get their Arrow types
  expect_identical(py_type(tab, "k"), "int32")
  expect_identical(py_type(tab, "x"), "double")
  expect_identical(py_type(tab, "d"), "date32[day]")
  # whole seconds: the coarsest unit that keeps every value
  expect_identical(py_type(tab, "t"), "timestamp[s, tz=UTC]")
})

test_that("attributes of data frame columns nest under columns", {
  skip_if_no_pyarrow()
  df <- data.frame(id = 1:2)
  sub <- data.frame(a = c(1.5, 2.5), b = c("x", "y"))
  attr(sub$a, "units") <- "mm"
  attr(sub, "note") <- "inner"
  df$sub <- sub
  md <- md_of(df)
  expect_null(md$columns$id)
  expect_identical(md$columns$sub$attributes$note, "inner")
  expect_identical(md$columns$sub$columns$a, list(attributes = list(units = "mm"), columns = NULL))
  expect_null(md$columns$sub$columns$b)
  expect_false("row.names" %in% names(md$columns$sub$attributes))
  expect_false("names" %in% names(md$columns$sub$attributes))
})

test_that("non-ASCII attribute values survive the metadata (UTF-8 and latin1)", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:2)
  attr(df, "label") <- "\u00e9t\u00e9 \u2713"
  attr(df, "latin") <- iconv("caf\u00e9", from = "UTF-8", to = "latin1")
  md <- md_of(df)
  expect_identical(enc2utf8(md$attributes$label), "\u00e9t\u00e9 \u2713")
  expect_identical(enc2utf8(md$attributes$latin), "caf\u00e9")
})

test_that("a large attribute survives the metadata", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:2)
  big <- paste(rep(c("abc", "def", "ghi"), 60000), collapse = "-")
  attr(df, "big") <- big
  md <- md_of(df)
  # arrow R compresses metadata over 100 kB: accept either form
  if (is.raw(md)) md <- unserialize(memDecompress(md, type = "gzip"))
  expect_identical(md$attributes$big, big)
})

test_that("metadata is the same with chunk_size and col_select", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:5, b = 5:1)
  attr(df, "label") <- "lab"
  attr(df$b, "units") <- "u"
  expect_identical(md_of(df, chunk_size = 2),
                   list(attributes = list(label = "lab"),
                        columns = list(a = NULL, b = list(attributes = list(units = "u"),
                                                          columns = NULL))))
  expect_identical(md_of(df, col_select = "a"),
                   list(attributes = list(label = "lab"), columns = list(a = NULL)))
})
