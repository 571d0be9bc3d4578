# R -> Arrow type mapping, checked from pyarrow's side of the C stream.

test_that("logical becomes bool with NA as null", {
  skip_if_no_pyarrow()
  tab <- to_py_table(data.frame(x = c(TRUE, NA, FALSE, TRUE)))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "bool")
  expect_identical(py_values(tab, "x"), c(TRUE, NA, FALSE, TRUE))
  expect_identical(py_null_positions(tab, "x"), 1L)
})

test_that("integer becomes int32 with NA as null, extremes intact", {
  skip_if_no_pyarrow()
  x <- c(1L, NA, .Machine$integer.max, -.Machine$integer.max, 0L)
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "int32")
  expect_identical(as.integer(py_values(tab, "x")), x)
  expect_identical(py_null_positions(tab, "x"), 1L)
})

test_that("double becomes float64: NA is null, NaN stays NaN, -0/Inf/extremes exact", {
  skip_if_no_pyarrow()
  x <- c(1.5, NA, NaN, -0, Inf, -Inf, .Machine$double.xmax, .Machine$double.xmin,
         5e-324, pi)
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "double")
  # NA is null and only NA; NaN is a NaN value, not null
  expect_identical(py_null_positions(tab, "x"), 1L)
  expect_identical(py_nan_positions(tab, "x"), 2L)
  got <- py_values(tab, "x")
  expect_length(got, length(x))
  expect_identical(got[-(2:3)], x[-(2:3)])
  expect_true(is.nan(got[[3]]))
  # -0 keeps its sign
  expect_identical(1 / got[[4]], -Inf)
  expect_identical(got[[9]], 5e-324)
})

test_that("character becomes utf8: UTF-8 and latin1 transcoded, empty kept, NA null", {
  skip_if_no_pyarrow()
  latin <- iconv("caf\u00e9 na\u00efve", from = "UTF-8", to = "latin1")
  expect_identical(Encoding(latin), "latin1")
  utf8 <- "\u00fcber \u2713 \u65e5\u672c \U0001F600"
  x <- c("plain", latin, utf8, "", NA, "a\"b\\c\nd")
  tab <- to_py_table(data.frame(x = x, stringsAsFactors = FALSE))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "string")
  got <- py_values(tab, "x")
  expect_identical(got, enc2utf8(x))
  expect_identical(got[[2]], "caf\u00e9 na\u00efve")
  expect_identical(py_null_positions(tab, "x"), 4L)
  # the empty string is a value, not a null
  expect_identical(got[[4]], "")
})

test_that("a character column that is all latin1 is transcoded", {
  skip_if_no_pyarrow()
  x <- iconv(c("\u00e0", "\u00e7\u00e0", "\u00ff\u00fe"), from = "UTF-8", to = "latin1")
  tab <- to_py_table(data.frame(x = x, stringsAsFactors = FALSE))
  py_validate(tab)
  expect_identical(py_values(tab, "x"), c("\u00e0", "\u00e7\u00e0", "\u00ff\u00fe"))
})

test_that("factor becomes dictionary<int8, string> with levels and NA as null", {
  skip_if_no_pyarrow()
  x <- factor(c("b", "a", NA, "c", "b"), levels = c("c", "b", "a", "unused"))
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  expect_identical(py_type(tab, "x"),
                   "dictionary<values=string, indices=int8, ordered=0>")
  info <- py_fun("dict_info")(tab$column("x"))
  expect_identical(info$index, "int8")
  expect_identical(info$value, "string")
  expect_false(info$ordered)
  expect_identical(unlist(info$levels), levels(x))
  idx <- vapply(info$indices, function(i) if (is.null(i)) NA_integer_ else as.integer(i), 1L)
  expect_identical(idx, as.integer(x) - 1L)
  expect_identical(py_values(tab, "x"), as.character(x))
})

test_that("ordered factor becomes an ordered dictionary", {
  skip_if_no_pyarrow()
  x <- factor(c("lo", "hi", "mid", NA), levels = c("lo", "mid", "hi"), ordered = TRUE)
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  expect_identical(py_type(tab, "x"),
                   "dictionary<values=string, indices=int8, ordered=1>")
  info <- py_fun("dict_info")(tab$column("x"))
  expect_true(info$ordered)
  expect_identical(unlist(info$levels), c("lo", "mid", "hi"))
  expect_identical(py_values(tab, "x"), as.character(x))
})

test_that("factor index width follows the number of levels (127/128, 32767/32768)", {
  skip_if_no_pyarrow()
  width <- function(n) {
    lev <- sprintf("l%05d", seq_len(n))
    x <- factor(c(lev[[n]], lev[[1]], NA), levels = lev)
    tab <- to_py_table(data.frame(x = x))
    py_validate(tab)
    info <- py_fun("dict_info")(tab$column("x"))
    expect_identical(length(info$levels), as.integer(n))
    expect_identical(py_values(tab, "x"), as.character(x))
    info$index
  }
  expect_identical(width(1), "int8")
  expect_identical(width(127), "int8")
  expect_identical(width(128), "int16")
  expect_identical(width(32767), "int16")
  expect_identical(width(32768), "int32")
  expect_identical(width(40000), "int32")
})

test_that("factor levels in latin1 are transcoded", {
  skip_if_no_pyarrow()
  lev <- iconv(c("\u00e9t\u00e9", "hiver"), from = "UTF-8", to = "latin1")
  x <- factor(c(lev[2], lev[1]), levels = lev)
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  expect_identical(py_values(tab, "x"), c("hiver", "\u00e9t\u00e9"))
})

test_that("Date becomes date32, fractional Date becomes timestamp[us]", {
  skip_if_no_pyarrow()
  d <- as.Date(c("1970-01-01", "2024-02-29", NA, "1900-01-01", "2262-04-11"))
  df <- data.frame(d = d)
  df$di <- structure(c(1L, NA, -1L, 0L, 19000L), class = "Date")
  df$frac <- structure(c(1.5, 0, NA, -0.25, 2), class = "Date")
  tab <- to_py_table(df)
  # every column must pass pyarrow's full validation
  for (nm in names(df)) {
    col <- tab$column(nm)
    expect_no_error(col$validate(full = TRUE))
  }
  expect_identical(py_type(tab, "d"), "date32[day]")
  expect_identical(py_ints(tab, "d"), as.numeric(unclass(d)))
  expect_identical(py_type(tab, "di"), "date32[day]")
  expect_identical(py_ints(tab, "di"), as.numeric(unclass(df$di)))
  # fractional days, which arrow R truncates, keep their doubles; the
  # class travels in the "r" metadata, so arrow R restores the Date
  expect_identical(py_type(tab, "frac"), "double")
  expect_identical(py_values(tab, "frac"), c(1.5, 0, NA, -0.25, 2))
  expect_identical(py_r_metadata(tab$schema)$columns$frac$attributes, list(class = "Date"))
})

test_that("POSIXct becomes a timestamp in the tzone attribute's zone, at the coarsest exact unit", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "UTC")
  df <- data.frame(
    utc = .POSIXct(c(1704164645.5, NA, -1.25, 0), tz = "UTC"),
    ny = .POSIXct(c(1710054000, 1e9, 0, 1), tz = "America/New_York")
  )
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_type(tab, "utc"), "timestamp[ms, tz=UTC]")
  expect_identical(py_type(tab, "ny"), "timestamp[s, tz=America/New_York]")
  expect_identical(py_ints(tab, "utc"), c(1704164645500, NA, -1250, 0))
  expect_identical(py_ints(tab, "ny"), as.numeric(unclass(df$ny)))
})

test_that("POSIXct finer than any unit keeps its doubles, with its class in the metadata", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "UTC")
  # a value that no unit divides back to the same double (R's own
  # arithmetic, as the way back does it: count / 10^9)
  cand <- 1.5e9 + seq(0.1, 0.9, length.out = 1000) / 7
  lost <- cand[round(cand * 1e9) / 1e9 != cand & round(cand * 1e6) / 1e6 != cand]
  expect_true(length(lost) > 0)
  secs <- c(lost[[1]], NA, 2)
  df <- data.frame(t = .POSIXct(secs, tz = "America/New_York"))
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_type(tab, "t"), "double")
  expect_identical(py_values(tab, "t"), secs)
  expect_identical(py_r_metadata(tab$schema)$columns$t$attributes,
                   list(class = c("POSIXct", "POSIXt"), tzone = "America/New_York"))
})

test_that("POSIXct keeps microseconds", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "UTC")
  secs <- c(1704164645.123456, 0.000001, 1.000001, -0.5)
  tab <- to_py_table(data.frame(t = .POSIXct(secs, tz = "UTC")))
  py_validate(tab)
  got <- py_ints(tab, "t")
  expect_identical(got, round(secs * 1e6))
})

test_that("POSIXct without tzone takes the session's zone", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "Europe/Paris")
  x <- .POSIXct(c(0, 86400.5))
  expect_null(attr(x, "tzone"))
  tab <- to_py_table(data.frame(t = x))
  py_validate(tab)
  expect_identical(py_type(tab, "t"), "timestamp[ms, tz=Europe/Paris]")
  expect_identical(py_ints(tab, "t"), c(0, 86400500))
})

test_that("difftime becomes duration[s] scaled to seconds, for every unit", {
  skip_if_no_pyarrow()
  mult <- c(secs = 1, mins = 60, hours = 3600, days = 86400, weeks = 604800)
  for (u in names(mult)) {
    x <- as.difftime(c(1, NA, 0, -3, 2), units = u)
    tab <- to_py_table(data.frame(x = x))
    py_validate(tab)
    expect_identical(py_type(tab, "x"), "duration[s]", label = u)
    expect_identical(py_ints(tab, "x"), c(1, NA, 0, -3, 2) * mult[[u]], label = u)
  }
})

test_that("difftime in minutes whose seconds are whole stays duration[s]", {
  skip_if_no_pyarrow()
  tab <- to_py_table(data.frame(x = as.difftime(c(0.5, 1.25), units = "mins")))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "duration[s]")
  expect_identical(py_ints(tab, "x"), c(30, 75))
})

test_that("fractional difftime uses a finer duration unit, keeping the value", {
  skip_if_no_pyarrow()
  scale <- c("duration[ms]" = 1e3, "duration[us]" = 1e6, "duration[ns]" = 1e9)
  tab <- to_py_table(data.frame(x = as.difftime(c(1.5, 0.25, NA), units = "secs")))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "duration[ms]")
  expect_identical(py_ints(tab, "x"), c(1500, 250, NA))

  tab <- to_py_table(data.frame(x = as.difftime(c(0.5, 1.5), units = "hours")))
  expect_identical(py_type(tab, "x"), "duration[s]")
  expect_identical(py_ints(tab, "x"), c(1800, 5400))

  secs <- c(1.000001, 2e-6, 3)
  tab <- to_py_table(data.frame(x = as.difftime(secs, units = "secs")))
  py_validate(tab)
  ty <- py_type(tab, "x")
  expect_true(ty %in% c("duration[us]", "duration[ns]"), label = ty)
  expect_equal(py_ints(tab, "x") / scale[[ty]], secs, tolerance = 1e-12)

  tab <- to_py_table(data.frame(x = as.difftime(c(1e-9, 1), units = "secs")))
  expect_identical(py_type(tab, "x"), "duration[ns]")
  expect_identical(py_ints(tab, "x"), c(1, 1e9))
})

test_that("hms becomes time32[s], sub-second hms a finer time type", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:3)
  df$h <- hms::hms(c(3661, NA, 86399))
  df$ms <- hms::hms(c(1.5, 2, NA))
  df$us <- hms::hms(c(1.000001, 0, 60))
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_type(tab, "h"), "time32[s]")
  expect_identical(py_ints(tab, "h"), c(3661, NA, 86399))
  expect_identical(py_type(tab, "ms"), "time32[ms]")
  expect_identical(py_ints(tab, "ms"), c(1500, 2000, NA))
  ty <- py_type(tab, "us")
  expect_true(ty %in% c("time64[us]", "time64[ns]"), label = ty)
  scale <- if (ty == "time64[us]") 1e6 else 1e9
  expect_equal(py_ints(tab, "us") / scale, c(1.000001, 0, 60), tolerance = 1e-12)
})

test_that("integer64 becomes int64, NA null, values beyond 2^53 exact", {
  skip_if_no_pyarrow()
  s <- c("1", NA, "9007199254740993", "-9223372036854775807", "0", "9223372036854775807")
  tab <- to_py_table(data.frame(x = bit64::as.integer64(s)))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "int64")
  expect_identical(py_strings(tab, "x"), s)
  expect_identical(py_null_positions(tab, "x"), 1L)
})

test_that("raw becomes uint8", {
  skip_if_no_pyarrow()
  x <- as.raw(c(0, 255, 16, 1, 128))
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "uint8")
  expect_identical(as.integer(py_values(tab, "x")), as.integer(x))
})

test_that("complex becomes struct<re, im>", {
  skip_if_no_pyarrow()
  x <- c(1 + 2i, -0.5i, 3.25 - 1i)
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  expect_identical(py_type(tab, "x"), "struct<re: double, im: double>")
  got <- reticulate::py_to_r(tab$column("x")$to_pylist())
  expect_identical(vapply(got, function(v) v$re, 1), Re(x))
  expect_identical(vapply(got, function(v) v$im, 1), Im(x))
})

test_that("complex NA becomes null, not a NaN value", {
  skip_if_no_pyarrow()
  x <- c(1 + 2i, NA, 3 + 0i)
  tab <- to_py_table(data.frame(x = x))
  py_validate(tab)
  pc <- py_pc()
  col <- tab$column("x")$combine_chunks()
  # null either as the struct slot or in both children, as double NA is
  struct_null <- reticulate::py_to_r(col$is_null()$to_pylist())
  re_null <- reticulate::py_to_r(pc$is_null(col$field("re"))$to_pylist())
  im_null <- reticulate::py_to_r(pc$is_null(col$field("im"))$to_pylist())
  is_na <- unlist(struct_null) | (unlist(re_null) & unlist(im_null))
  expect_identical(is_na, c(FALSE, TRUE, FALSE))
})

test_that("a list column of integer vectors becomes list<int32>, NULL as null", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:4)
  df$l <- list(1:3, NULL, integer(0), c(NA, 5L))
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_type(tab, "l"), "list<item: int32>")
  expect_identical(py_null_positions(tab, "l"), 1L)
  got <- reticulate::py_to_r(tab$column("l")$to_pylist())
  expect_identical(as.integer(unlist(got[[1]])), 1:3)
  expect_null(got[[2]])
  expect_length(got[[3]], 0L)
  expect_null(got[[4]][[1]])
  expect_identical(as.integer(got[[4]][[2]]), 5L)
})

test_that("a list column of character vectors becomes list<string>", {
  skip_if_no_pyarrow()
  df <- data.frame(a = 1:3)
  df$l <- list(c("a", NA), character(0), "z")
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_type(tab, "l"), "list<item: string>")
  got <- reticulate::py_to_r(tab$column("l")$to_pylist())
  expect_identical(got[[1]][[1]], "a")
  expect_null(got[[1]][[2]])
  expect_length(got[[2]], 0L)
  expect_identical(unlist(got[[3]]), "z")
})

test_that("a data frame column becomes a struct (direct assignment and I())", {
  skip_if_no_pyarrow()
  df <- data.frame(x = 1:2)
  df$sub <- data.frame(a = 1:2, b = c("x", NA))
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_names(tab), c("x", "sub"))
  expect_identical(py_type(tab, "sub"), "struct<a: int32, b: string>")
  got <- reticulate::py_to_r(tab$column("sub")$to_pylist())
  expect_identical(as.integer(vapply(got, function(v) v$a, 1L)), 1:2)
  expect_identical(got[[1]]$b, "x")
  expect_null(got[[2]]$b)

  df2 <- data.frame(x = 1:2, sub = I(data.frame(a = 1:2, b = c("x", "y"))))
  expect_s3_class(df2$sub, "data.frame")
  tab2 <- to_py_table(df2)
  py_validate(tab2)
  expect_identical(py_names(tab2), c("x", "sub"))
  expect_identical(py_type(tab2, "sub"), "struct<a: int32, b: string>")
  got2 <- reticulate::py_to_r(tab2$column("sub")$to_pylist())
  expect_identical(vapply(got2, function(v) v$b, ""), c("x", "y"))
})

test_that("nested data frame columns with typed columns become nested structs", {
  skip_if_no_pyarrow()
  df <- data.frame(x = 1:2)
  inner <- data.frame(d = as.Date(c("2020-01-01", NA)))
  inner$f <- factor(c("u", "v"))
  df$s <- data.frame(k = c(1.5, 2.5))
  df$s$inner <- inner
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(
    py_type(tab, "s"),
    "struct<k: double, inner: struct<d: date32[day], f: dictionary<values=string, indices=int8, ordered=0>>>"
  )
})

test_that("zero-row data frames keep their columns and types", {
  skip_if_no_pyarrow()
  df <- data.frame(i = integer(), d = double(), s = character(), l = logical(),
                   f = factor(character(), levels = c("a", "b")))
  df$dt <- as.Date(character())
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_nrow(tab), 0L)
  expect_identical(py_names(tab), names(df))
  expect_identical(
    vapply(names(df), function(n) py_type(tab, n), ""),
    c(i = "int32", d = "double", s = "string", l = "bool",
      f = "dictionary<values=string, indices=int8, ordered=0>", dt = "date32[day]")
  )
})

test_that("zero-column data frames keep their row count", {
  skip_if_no_pyarrow()
  df <- data.frame(row.names = 1:3)
  expect_identical(dim(df), c(3L, 0L))
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(reticulate::py_to_r(tab$num_columns), 0L)
  expect_identical(py_nrow(tab), 3L)

  tab0 <- to_py_table(data.frame())
  py_validate(tab0)
  expect_identical(reticulate::py_to_r(tab0$num_columns), 0L)
  expect_identical(py_nrow(tab0), 0L)
})

test_that("tibble and data.table give the same types and values as data.frame", {
  skip_if_no_pyarrow()
  skip_if_not_installed("tibble")
  skip_if_not_installed("data.table")
  withr::local_envvar(TZ = "UTC")
  df <- data.frame(i = c(1L, NA), d = c(0.5, NA), s = c("a", NA),
                   f = factor(c("u", NA)), dt = as.Date(c("2020-02-02", NA)),
                   t = .POSIXct(c(1, NA), tz = "UTC"), b = c(TRUE, NA))
  ref <- to_py_table(df)
  sig <- function(tab) {
    nms <- py_names(tab)
    list(names = nms,
         types = vapply(nms, function(n) py_type(tab, n), ""),
         values = lapply(setNames(nm = nms), function(n) py_strings(tab, n)))
  }
  tb <- tibble::as_tibble(df)
  expect_identical(class(tb), c("tbl_df", "tbl", "data.frame"))
  dt <- data.table::as.data.table(df)
  expect_identical(class(dt), c("data.table", "data.frame"))
  tab_tb <- to_py_table(tb)
  tab_dt <- to_py_table(dt)
  py_validate(tab_tb)
  py_validate(tab_dt)
  expect_identical(sig(tab_tb), sig(ref))
  expect_identical(sig(tab_dt), sig(ref))
})

test_that("a data frame with many types converts together", {
  skip_if_no_pyarrow()
  withr::local_envvar(TZ = "UTC")
  n <- 7L
  df <- data.frame(
    l = rep(c(TRUE, FALSE, NA), length.out = n),
    i = c(1:6, NA),
    d = c(1:6 / 3, NA),
    s = c(letters[1:6], NA),
    f = factor(c(letters[1:6], NA)),
    dt = as.Date("2020-01-01") + c(0:5, NA),
    t = .POSIXct(c(0:5, NA) * 3600, tz = "UTC")
  )
  df$dur <- as.difftime(c(0:5, NA), units = "mins")
  df$i64 <- bit64::as.integer64(c(0:5, NA))
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_nrow(tab), n)
  expect_identical(py_names(tab), names(df))
  for (nm in names(df)) {
    expect_identical(py_null_positions(tab, nm), which(is.na(df[[nm]])) - 1L, label = nm)
  }
  expect_identical(py_values(tab, "s"), df$s)
  expect_identical(py_values(tab, "d"), df$d)
  expect_identical(py_ints(tab, "dur"), c(0:5, NA) * 60)
})

test_that("strings that are not valid text become valid utf8, with a warning, never passed on as they are", {
  skip_if_no_pyarrow()
  bad_native <- c("caf\xe9", "ok")
  expect_identical(Encoding(bad_native), c("unknown", "unknown"))
  f <- save_rda(x = data.frame(s = bad_native))
  expect_warning(s <- rdata_to_arrow(f), "column 's': 1 string is not valid text", class = "rdarrow_warning")
  tab <- py_import(s)
  py_validate(tab)
  expect_identical(py_values(tab, "s"), c("caf\u00e9", "ok"))

  bytes <- c("abc", "\xff\xfe")
  Encoding(bytes) <- "bytes"
  f2 <- save_rda(x = data.frame(s = bytes))
  expect_warning(s2 <- rdata_to_arrow(f2), "column 's': 1 string is not valid text", class = "rdarrow_warning")
  tab2 <- py_import(s2)
  py_validate(tab2)
  expect_identical(py_values(tab2, "s"), c("abc", "\u00ff\u00fe"))
})

test_that("ALTREP columns (compact sequences, deferred strings, wrappers) convert", {
  skip_if_no_pyarrow()
  wrap <- function(x) .Internal(wrap_meta(x, 0L, 0L))
  df <- data.frame(a = 1:5, b = as.character(1:5), c = wrap(c(1.5, 2.5, 3, 4, NA)),
                   d = seq(1, 5, by = 1), e = wrap(c(letters[1:4], NA)),
                   stringsAsFactors = FALSE)
  df$f <- factor(wrap(c("x", "y", "x", "y", "x")))
  tab <- to_py_table(df)
  py_validate(tab)
  expect_identical(py_type(tab, "a"), "int32")
  expect_identical(py_values(tab, "a"), 1:5)
  expect_identical(py_values(tab, "b"), as.character(1:5))
  expect_identical(py_values(tab, "c"), c(1.5, 2.5, 3, 4, NA))
  expect_identical(py_type(tab, "d"), "double")
  expect_identical(py_values(tab, "d"), as.double(1:5))
  expect_identical(py_values(tab, "e"), c(letters[1:4], NA))
  expect_identical(py_values(tab, "f"), c("x", "y", "x", "y", "x"))
})
