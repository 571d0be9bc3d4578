# Arrow -> R type mapping (as arrow R maps): tables made by pyarrow, in
# several record batches (one of them empty) of sliced arrays, with nulls
# in every column. Each table goes through as.data.frame(<stream>),
# arrow_to_rdata() to .RData and .rds, and ipc_to_rdata() of an IPC file
# and an lz4 IPC stream; all must agree (see aw_convert()).

# ---------------------------------------------------------------------------
# Integers

test_that("int8, int16, int32, uint8 and uint16 become integer", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    i8 = c("pa.int8()", "[1, None, -128, 127, 0, 5]"),
    i16 = c("pa.int16()", "[1, None, -32768, 32767, 0, 5]"),
    i32 = c("pa.int32()", "[1, None, -2147483647, 2147483647, 0, 5]"),
    u8 = c("pa.uint8()", "[1, None, 0, 255, 7, 5]"),
    u16 = c("pa.uint16()", "[1, None, 0, 65535, 7, 5]")
  )
  df <- aw_convert(tab)
  expect_identical(names(df), c("i8", "i16", "i32", "u8", "u16"))
  expect_identical(df$i8, c(1L, NA, -128L, 127L, 0L, 5L))
  expect_identical(df$i16, c(1L, NA, -32768L, 32767L, 0L, 5L))
  expect_identical(df$i32, c(1L, NA, -2147483647L, 2147483647L, 0L, 5L))
  expect_identical(df$u8, c(1L, NA, 0L, 255L, 7L, 5L))
  expect_identical(df$u16, c(1L, NA, 0L, 65535L, 7L, 5L))
})

test_that("int64 whose values all fit in an R integer becomes integer", {
  skip_if_no_pyarrow()
  tab <- aw_table(i64 = c("pa.int64()", "[1, None, -2147483647, 2147483647, 0, 5]"))
  x <- aw_column(tab, "i64")
  expect_identical(x, c(1L, NA, -2147483647L, 2147483647L, 0L, 5L))
})

test_that("int64 beyond the integer range becomes bit64 integer64, exact beyond 2^53", {
  skip_if_no_pyarrow()
  skip_if_not_installed("bit64")
  tab <- aw_table(i64 = c("pa.int64()",
                          "[1, None, 2**53 + 1, -(2**62) - 1, 9223372036854775807, -9223372036854775807, 0]"))
  x <- aw_column(tab, "i64")
  expect_s3_class(x, "integer64")
  expect_identical(typeof(x), "double")
  want <- bit64::as.integer64(c("1", NA, "9007199254740993", "-4611686018427387905",
                                "9223372036854775807", "-9223372036854775807", "0"))
  expect_identical(as.character(x), as.character(want))
  expect_identical(double_bits(x), double_bits(want))
  expect_identical(is.na(x), c(FALSE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE))
})

test_that("int64 holding -2^31 (R's NA_integer_) is integer64, not integer", {
  skip_if_no_pyarrow()
  skip_if_not_installed("bit64")
  tab <- aw_table(i64 = c("pa.int64()", "[1, -2147483648, None]"))
  x <- aw_column(tab, "i64")
  expect_s3_class(x, "integer64")
  expect_identical(as.character(x), c("1", "-2147483648", NA))
})

test_that("int64 that fits in one batch but not in another is integer64 for all rows", {
  skip_if_no_pyarrow()
  skip_if_not_installed("bit64")
  # batches: [1, None], [], [3], [2**40, 5]
  tab <- aw_table(i64 = c("pa.int64()", "[1, None, 3, 2**40, 5]"))
  x <- aw_column(tab, "i64")
  expect_s3_class(x, "integer64")
  expect_identical(as.character(x), c("1", NA, "3", "1099511627776", "5"))
})

test_that("uint32 and uint64 become double", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    u32 = c("pa.uint32()", "[1, None, 4294967295, 0, 5]"),
    u64 = c("pa.uint64()", "[1, None, 18446744073709551615, 2**53, 5]")
  )
  df <- aw_convert(tab)
  expect_identical(df$u32, c(1, NA, 4294967295, 0, 5))
  expect_identical(df$u64, c(1, NA, 2^64, 2^53, 5))
})

# ---------------------------------------------------------------------------
# Floating point, booleans

test_that("float16, float32 and float64 become double; null is NA, NaN stays NaN, -0 and Inf kept", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    f16 = c("pa.float16()", "[1.5, None, float('nan'), -0.0, float('inf'), 65504.0]"),
    f32 = c("pa.float32()", "[1.5, None, float('nan'), -0.0, float('-inf'), 0.1]"),
    f64 = c("pa.float64()", "[1.5, None, float('nan'), -0.0, float('inf'), 1e308]")
  )
  df <- aw_convert(tab)
  f32_01 <- readBin(writeBin(0.1, raw(), size = 4), "double", size = 4)
  expected <- list(f16 = c(1.5, NA, NaN, -0, Inf, 65504),
                   f32 = c(1.5, NA, NaN, -0, -Inf, f32_01),
                   f64 = c(1.5, NA, NaN, -0, Inf, 1e308))
  for (nm in names(expected)) {
    x <- df[[nm]]
    expect_identical(typeof(x), "double", label = nm)
    expect_null(attributes(x), label = nm)
    expect_identical(x, expected[[nm]], label = nm)
    # null is NA_real_, not NaN; NaN is NaN, not NA
    expect_identical(is.na(x) & !is.nan(x), c(FALSE, TRUE, FALSE, FALSE, FALSE, FALSE), label = nm)
    expect_identical(is.nan(x), c(FALSE, FALSE, TRUE, FALSE, FALSE, FALSE), label = nm)
    expect_identical(1 / x[4], -Inf, label = paste(nm, "keeps -0"))
  }
})

test_that("bool becomes logical, with nulls, across bit offsets", {
  skip_if_no_pyarrow()
  # 21 rows so that the slices start and end inside bitmap bytes
  tab <- aw_table(b = c("pa.bool_()", "[None if i % 5 == 0 else (i % 3 == 0) for i in range(21)]"),
                  .sizes = c(2, 0, 9, 10))
  x <- aw_column(tab, "b")
  i <- 0:20
  expect_identical(x, ifelse(i %% 5 == 0, NA, i %% 3 == 0))
})

# ---------------------------------------------------------------------------
# Strings and binaries

test_that("utf8, large_utf8 and string_view become character (UTF-8, empty strings, NA)", {
  skip_if_no_pyarrow()
  vals <- r"(["a", None, "", "na\u00efve caf\u00e9", "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8", "a string longer than twelve bytes"])"
  tab <- aw_table(s = c("pa.string()", vals),
                  ls = c("pa.large_string()", vals),
                  sv = c("pa.string_view()", vals))
  df <- aw_convert(tab)
  want <- c("a", NA, "", "na\u00efve caf\u00e9", "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8",
            "a string longer than twelve bytes")
  for (nm in c("s", "ls", "sv")) {
    x <- df[[nm]]
    expect_identical(x, want, label = nm)
    expect_null(attributes(x), label = nm)
    expect_identical(Encoding(x[4:5]), c("UTF-8", "UTF-8"), label = nm)
    expect_identical(nchar(x[4:5]), c(10L, 7L), label = nm)
    expect_true(is.na(x[2]), label = nm)
    expect_identical(x[3], "", label = nm)
  }
})

test_that("binary, large_binary, binary_view and fixed_size_binary become lists of raw (null -> NULL)", {
  skip_if_no_pyarrow()
  vals <- r"([b"abc", None, b"", b"\x00\xff\x10", b"0123456789abcdefXYZ"])"
  tab <- aw_table(b = c("pa.binary()", vals),
                  lb = c("pa.large_binary()", vals),
                  bv = c("pa.binary_view()", vals),
                  fb = c("pa.binary(3)", r"([b"abc", None, b"xyz", b"\x00\xff\x10", b"\x01\x02\x03"])"))
  df <- aw_convert(tab)
  want <- list(charToRaw("abc"), NULL, raw(0), as.raw(c(0x00, 0xff, 0x10)),
               charToRaw("0123456789abcdefXYZ"))
  for (nm in c("b", "lb", "bv")) {
    expect_identical(typeof(df[[nm]]), "list", label = nm)
    expect_identical(aw_bare(df[[nm]]), want, label = nm)
  }
  expect_identical(typeof(df$fb), "list")
  expect_identical(aw_bare(df$fb),
                   list(charToRaw("abc"), NULL, charToRaw("xyz"), as.raw(c(0x00, 0xff, 0x10)),
                        as.raw(1:3)))
})

# ---------------------------------------------------------------------------
# Dates, times, durations

test_that("date32 and date64 become Date", {
  skip_if_no_pyarrow()
  vals <- "[datetime.date(1970, 1, 1), None, datetime.date(2024, 2, 29), datetime.date(1969, 12, 31), datetime.date(1900, 1, 1)]"
  tab <- aw_table(d32 = c("pa.date32()", vals), d64 = c("pa.date64()", vals))
  df <- aw_convert(tab)
  want <- as.Date(c("1970-01-01", NA, "2024-02-29", "1969-12-31", "1900-01-01"))
  expect_identical(df$d32, want)
  expect_identical(df$d64, want)
})

test_that("timestamps of every unit become POSIXct in seconds, with the zone as tzone", {
  skip_if_no_pyarrow()
  units <- list(
    s = list(py = "[1700000000, None, -1, 0]", r = c(1700000000, NA, -1, 0)),
    ms = list(py = "[1700000000500, None, -1500, 0]", r = c(1700000000.5, NA, -1.5, 0)),
    us = list(py = "[1700000000250000, None, -1500000, 0]", r = c(1700000000.25, NA, -1.5, 0)),
    ns = list(py = "[1000125000000, None, -1500000000, 1700000000000000000]",
              r = c(1000.125, NA, -1.5, 1700000000))
  )
  for (u in names(units)) {
    tab <- aw_table(
      naive = c(sprintf("pa.timestamp('%s')", u), units[[u]]$py),
      utc = c(sprintf("pa.timestamp('%s', tz='UTC')", u), units[[u]]$py),
      ny = c(sprintf("pa.timestamp('%s', tz='America/New_York')", u), units[[u]]$py)
    )
    df <- aw_convert(tab)
    for (nm in c("naive", "utc", "ny")) {
      x <- df[[nm]]
      lab <- sprintf("timestamp[%s] %s", u, nm)
      expect_identical(class(x), c("POSIXct", "POSIXt"), label = lab)
      expect_identical(typeof(x), "double", label = lab)
      expect_identical(as.vector(unclass(x)), units[[u]]$r, label = lab)
    }
    expect_identical(attr(df$utc, "tzone"), "UTC", label = u)
    expect_identical(attr(df$ny, "tzone"), "America/New_York", label = u)
    tz <- attr(df$naive, "tzone")
    expect_true(is.null(tz) || identical(tz, ""), label = paste(u, "naive tzone is missing or empty"))
  }
})

test_that("sub-second units are divided into seconds exactly (value / 10^k, as arrow R does)", {
  skip_if_no_pyarrow()
  # values whose product with 1e-3 / 1e-6 / 1e-9 differs from the quotient
  ms <- c(1700000588620, 1700000257883, 44104823)
  us <- c(1700000579556327, 1700000438540986, 44104823)
  ns <- c(1700000579556327000, 3661125000000, 1000125000000)
  tab <- aw_table(
    ts_ms = c("pa.timestamp('ms', tz='UTC')", "[1700000588620, 1700000257883, 44104823]"),
    ts_us = c("pa.timestamp('us', tz='UTC')", "[1700000579556327, 1700000438540986, 44104823]"),
    ts_ns = c("pa.timestamp('ns', tz='UTC')", "[1700000579556327000, 3661125000000, 1000125000000]"),
    t_ms = c("pa.time32('ms')", "[44104823, 35698325, 67315324]"),
    t_us = c("pa.time64('us')", "[44104823000, 35698325000, 67315324]"),
    d_ms = c("pa.duration('ms')", "[1700000588620, 1700000257883, 44104823]"),
    d_us = c("pa.duration('us')", "[1700000579556327, 1700000438540986, 44104823]"),
    .sizes = 3
  )
  df <- aw_convert(tab)
  expect_identical(as.vector(unclass(df$ts_ms)), ms / 1e3)
  expect_identical(as.vector(unclass(df$ts_us)), us / 1e6)
  expect_identical(as.vector(unclass(df$ts_ns)), ns / 1e9)
  expect_identical(as.vector(unclass(df$t_ms)), c(44104823, 35698325, 67315324) / 1e3)
  expect_identical(as.vector(unclass(df$t_us)), c(44104823000, 35698325000, 67315324) / 1e6)
  expect_identical(as.vector(unclass(df$d_ms)), ms / 1e3)
  expect_identical(as.vector(unclass(df$d_us)), us / 1e6)
})

test_that("time32 and time64 become hms (difftime in seconds)", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    t32s = c("pa.time32('s')", "[0, None, 3661, 86399]"),
    t32ms = c("pa.time32('ms')", "[0, None, 3661500, 86399500]"),
    t64us = c("pa.time64('us')", "[0, None, 3661250000, 86399500000]"),
    t64ns = c("pa.time64('ns')", "[0, None, 3661125000000, 86399000000000]")
  )
  df <- aw_convert(tab)
  want <- list(t32s = c(0, NA, 3661, 86399), t32ms = c(0, NA, 3661.5, 86399.5),
               t64us = c(0, NA, 3661.25, 86399.5), t64ns = c(0, NA, 3661.125, 86399))
  for (nm in names(want)) {
    x <- df[[nm]]
    expect_identical(class(x), c("hms", "difftime"), label = nm)
    expect_identical(attr(x, "units"), "secs", label = nm)
    expect_identical(typeof(x), "double", label = nm)
    expect_identical(x, structure(want[[nm]], units = "secs", class = c("hms", "difftime")),
                     label = nm)
  }
})

test_that("durations of every unit become difftime in seconds", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    ds = c("pa.duration('s')", "[1, None, -90, 3600]"),
    dms = c("pa.duration('ms')", "[1500, None, -90000, 250]"),
    dus = c("pa.duration('us')", "[1500000, None, -250000, 0]"),
    dns = c("pa.duration('ns')", "[1500000000, None, -250000000, 86400000000000]")
  )
  df <- aw_convert(tab)
  want <- list(ds = c(1, NA, -90, 3600), dms = c(1.5, NA, -90, 0.25),
               dus = c(1.5, NA, -0.25, 0), dns = c(1.5, NA, -0.25, 86400))
  for (nm in names(want)) {
    x <- df[[nm]]
    expect_identical(class(x), "difftime", label = nm)
    expect_identical(attr(x, "units"), "secs", label = nm)
    expect_identical(x, structure(want[[nm]], class = "difftime", units = "secs"), label = nm)
  }
})

# ---------------------------------------------------------------------------
# Decimals

test_that("decimal128 and decimal256 become double", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    d128 = c("pa.decimal128(10, 2)", "[D('123.45'), None, D('-0.01'), D('99999999.99'), D('0')]"),
    d256 = c("pa.decimal256(40, 5)",
             "[D('1.5'), None, D('-12345678901234567890.12345'), D('0.00001'), D('7')]")
  )
  df <- aw_convert(tab)
  expect_identical(typeof(df$d128), "double")
  expect_identical(typeof(df$d256), "double")
  expect_null(attributes(df$d128))
  expect_equal(df$d128, c(123.45, NA, -0.01, 99999999.99, 0), tolerance = 1e-14)
  expect_equal(df$d256, c(1.5, NA, -12345678901234567890.12345, 0.00001, 7), tolerance = 1e-14)
  expect_identical(is.na(df$d128), c(FALSE, TRUE, FALSE, FALSE, FALSE))
  expect_identical(is.na(df$d256), c(FALSE, TRUE, FALSE, FALSE, FALSE))
})

# ---------------------------------------------------------------------------
# Dictionaries

test_that("dictionaries of strings become factors, for every index type", {
  skip_if_no_pyarrow()
  idx <- c("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
  cols <- lapply(idx, function(i) {
    c(sprintf("pa.dictionary(pa.%s(), pa.string())", i), r"(["b", "a", None, "c", "a", "b"])")
  })
  names(cols) <- idx
  tab <- do.call(aw_table, cols)
  # each batch has its own dictionary: ["b", "a"], [], ["c", "a", "b"]
  df <- aw_convert(tab)
  for (i in idx) {
    x <- df[[i]]
    expect_identical(class(x), "factor", label = i)
    expect_identical(as.character(x), c("b", "a", NA, "c", "a", "b"), label = i)
    expect_setequal(levels(x), c("a", "b", "c"))
    # levels unified in order of first appearance, as arrow R does
    expect_identical(x, factor(c("b", "a", NA, "c", "a", "b"), levels = c("b", "a", "c")),
                     label = i)
  }
})

test_that("ordered dictionaries become ordered factors", {
  skip_if_no_pyarrow()
  tab <- aw_table(o = c("pa.dictionary(pa.int32(), pa.string(), ordered=True)",
                        r"(["lo", "hi", None, "lo", "mid"])"), .sizes = 5)
  x <- aw_column(tab, "o")
  expect_identical(class(x), c("ordered", "factor"))
  expect_identical(x, factor(c("lo", "hi", NA, "lo", "mid"), levels = c("lo", "hi", "mid"),
                             ordered = TRUE))
})

test_that("a dictionary keeps unused entries as levels, in dictionary order", {
  skip_if_no_pyarrow()
  tab <- aw_table(f = c("", paste0(
    "PerBatch([pa.DictionaryArray.from_arrays(pa.array([0, 2, None, 2], pa.int8()), ",
    "pa.array(['z', 'y', 'x'])).slice(1, 3)])")))
  x <- aw_column(tab, "f")
  expect_identical(x, factor(c("x", NA, "x"), levels = c("z", "y", "x")))
})

test_that("the same dictionary in every batch gives the dictionary's levels", {
  skip_if_no_pyarrow()
  mk <- "pa.DictionaryArray.from_arrays(pa.array(%s, pa.int16()), pa.array(['p', 'q', 'r', 's']))"
  tab <- aw_table(f = c("", sprintf("PerBatch([%s, %s])",
                                    sprintf(mk, "[2, 0, None]"), sprintf(mk, "[1, 3, 2]"))))
  x <- aw_column(tab, "f")
  expect_identical(x, factor(c("r", "p", NA, "q", "s", "r"), levels = c("p", "q", "r", "s")))
})

test_that("different dictionaries per batch unify to the union of all entries, unused ones kept", {
  skip_if_no_pyarrow()
  mk <- "pa.DictionaryArray.from_arrays(pa.array(%s, pa.int32()), pa.array(%s))"
  tab <- aw_table(f = c("", sprintf("PerBatch([%s, %s, %s])",
                                    sprintf(mk, "[0, None]", "['x', 'y', 'z']"),
                                    sprintf(mk, "[0, 2]", "['z', 'y', 'w']"),
                                    sprintf(mk, "[1, 0]", "['y', 'x']"))))
  x <- aw_column(tab, "f")
  expect_false(anyDuplicated(levels(x)) > 0)
  expect_identical(x, factor(c("x", NA, "z", "w", "x", "y"), levels = c("x", "y", "z", "w")))
})

test_that("IPC streams with dictionary deltas and replacements are decoded", {
  skip_if_no_pyarrow()
  mk <- "pa.DictionaryArray.from_arrays(pa.array(%s, pa.int8()), pa.array(%s))"
  tab <- aw_table(f = c("", sprintf("PerBatch([%s, %s, %s])",
                                    sprintf(mk, "[0, 1]", "['a', 'b']"),
                                    sprintf(mk, "[2, None, 0]", "['a', 'b', 'c']"),
                                    sprintf(mk, "[0, 1]", "['z', 'a']"))))
  dir <- local_tempdir()
  ipc <- aw_write_ipc(tab, file.path(dir, "deltas.arrows"), "stream")
  st <- aw_ipc_stream_stats(ipc)
  expect_identical(st$deltas, 1L)
  expect_identical(st$replaced, 1L)
  out <- file.path(dir, "deltas.RData")
  ipc_to_rdata(ipc, out)
  x <- aw_load1(out, "deltas")$f
  expect_identical(x, factor(c("a", "b", "c", NA, "a", "z", "a"), levels = c("a", "b", "c", "z")))
  # and the same batches through the C stream
  y <- as.data.frame(aw_stream(tab))$f
  expect_identical(y, x)
})

test_that("an index pointing at a null dictionary entry gives NA", {
  skip_if_no_pyarrow()
  tab <- aw_table(f = c("", paste0(
    "PerBatch([pa.DictionaryArray.from_arrays(pa.array([2, 0, None, 1, 2], pa.int8()), ",
    "pa.array(['p', 'q', None]))])")))
  x <- aw_column(tab, "f")
  expect_s3_class(x, "factor")
  expect_identical(as.character(x), c(NA, "p", NA, "q", NA))
  expect_false("NA" %in% levels(x))
})

test_that("dictionaries of non-strings become the decoded values", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    di = c("", "PerBatch([pa.array([10, None, 20, 10, 30], pa.dictionary(pa.int8(), pa.int64()))])"),
    dd = c("", "PerBatch([pa.array([1.5, None, -2.0, 1.5, 1.5], pa.dictionary(pa.int16(), pa.float64()))])"),
    dt = c("", paste0(
      "PerBatch([pa.DictionaryArray.from_arrays(pa.array([0, None, 1, 0, None], pa.int32()), ",
      "pa.array([datetime.date(2020, 1, 1), datetime.date(2021, 6, 30)]))])"))
  )
  df <- aw_convert(tab)
  expect_identical(df$di, c(10L, NA, 20L, 10L, 30L))
  expect_identical(df$dd, c(1.5, NA, -2, 1.5, 1.5))
  expect_identical(df$dt, as.Date(c("2020-01-01", NA, "2021-06-30", "2020-01-01", NA)))
})

# ---------------------------------------------------------------------------
# Nested types

test_that("list, large_list, fixed_size_list, list_view and large_list_view become list columns", {
  skip_if_no_pyarrow()
  vals <- "[[1, 2], None, [], [3, None], [4, 5, 6]]"
  tab <- aw_table(
    l = c("pa.list_(pa.int32())", vals),
    ll = c("pa.large_list(pa.int32())", vals),
    lv = c("pa.list_view(pa.int32())", vals),
    llv = c("pa.large_list_view(pa.int32())", vals),
    fl = c("pa.list_(pa.int32(), 2)", "[[1, 2], None, [7, 8], [3, None], [4, 5]]")
  )
  df <- aw_convert(tab)
  want <- list(1:2, NULL, integer(0), c(3L, NA), 4:6)
  for (nm in c("l", "ll", "lv", "llv")) {
    expect_identical(typeof(df[[nm]]), "list", label = nm)
    expect_identical(aw_bare(df[[nm]]), want, label = nm)
  }
  expect_identical(typeof(df$fl), "list")
  expect_identical(aw_bare(df$fl), list(1:2, NULL, 7:8, c(3L, NA), 4:5))
})

test_that("lists of strings and of doubles convert their elements", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    ls = c("pa.list_(pa.string())", r"([["a", None], None, [], ["\u00e9"]])"),
    ld = c("pa.list_(pa.float64())", "[[1.5, None], None, [], [float('nan')]]")
  )
  df <- aw_convert(tab)
  expect_identical(aw_bare(df$ls), list(c("a", NA), NULL, character(0), "\u00e9"))
  expect_identical(aw_bare(df$ld), list(c(1.5, NA), NULL, numeric(0), NaN))
})

test_that("struct becomes a data-frame column", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    id = c("pa.int32()", "[1, 2, 3, 4, 5]"),
    s = c("pa.struct([('a', pa.int32()), ('b', pa.string()), ('t', pa.timestamp('ms', tz='UTC'))])",
          r"([{"a": 1, "b": "x", "t": 1500}, {"a": None, "b": None, "t": None}, {"a": 3, "b": "z", "t": 0}, {"a": 4, "b": "\u00e9", "t": -1500}, {"a": 5, "b": "", "t": 2000}])")
  )
  df <- aw_convert(tab)
  s <- df$s
  expect_true(is.data.frame(s))
  expect_identical(names(s), c("a", "b", "t"))
  expect_identical(nrow(s), 5L)
  expect_identical(s$a, c(1L, NA, 3L, 4L, 5L))
  expect_identical(s$b, c("x", NA, "z", "\u00e9", ""))
  expect_identical(s$t, .POSIXct(c(1.5, NA, 0, -1.5, 2), tz = "UTC"))
})

test_that("map becomes a list of key/value data frames (null -> NULL)", {
  skip_if_no_pyarrow()
  tab <- aw_table(m = c("pa.map_(pa.string(), pa.int32())",
                        r"([[("a", 1), ("b", None)], None, [], [("c", 3)], [("d", 4), ("e", 5)]])"))
  x <- aw_column(tab, "m")
  expect_identical(typeof(x), "list")
  expect_length(x, 5L)
  expect_null(x[[2]])
  want <- list(list(key = c("a", "b"), value = c(1L, NA)), NULL,
               list(key = character(0), value = integer(0)),
               list(key = "c", value = 3L), list(key = c("d", "e"), value = 4:5))
  for (i in c(1L, 3L, 4L, 5L)) {
    el <- x[[i]]
    expect_true(is.data.frame(el), label = paste("element", i))
    expect_identical(names(el), c("key", "value"), label = paste("element", i))
    expect_identical(nrow(el), length(want[[i]]$key), label = paste("element", i))
    expect_identical(el$key, want[[i]]$key, label = paste("element", i))
    expect_identical(el$value, want[[i]]$value, label = paste("element", i))
  }
})

test_that("the null type becomes a logical NA column", {
  skip_if_no_pyarrow()
  tab <- aw_table(id = c("pa.int32()", "[1, 2, 3, 4, 5]"), n = c("pa.null()", "[None] * 5"))
  x <- aw_column(tab, "n")
  expect_identical(x, rep(NA, 5))
})

test_that("run-end encoded arrays are decoded", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    rs = c("pa.run_end_encoded(pa.int32(), pa.string())",
           r"(["a", "a", None, "b", "b", "b", None, "c"])"),
    ri = c("pa.run_end_encoded(pa.int16(), pa.int64())", "[7, 7, 7, None, 8, 8, 9, 9]"),
    rd = c("pa.run_end_encoded(pa.int64(), pa.float64())", "[1.5, 1.5, None, None, 2.5, 2.5, 2.5, 3.5]"),
    .sizes = c(3, 0, 1, 4)
  )
  df <- aw_convert(tab)
  expect_identical(df$rs, c("a", "a", NA, "b", "b", "b", NA, "c"))
  expect_identical(df$ri, c(7L, 7L, 7L, NA, 8L, 8L, 9L, 9L))
  expect_identical(df$rd, c(1.5, 1.5, NA, NA, 2.5, 2.5, 2.5, 3.5))
})

# ---------------------------------------------------------------------------
# Unsupported types

test_that("union columns (sparse and dense) become lists of each slot's value", {
  skip_if_no_pyarrow()
  for (kind in c("sparse", "dense")) {
    ctor <- if (kind == "sparse") {
      "pa.UnionArray.from_sparse(pa.array([0, 1, 0], pa.int8()), [pa.array([1, 2, 3]), pa.array(['a', 'b', 'c'])])"
    } else {
      "pa.UnionArray.from_dense(pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()), [pa.array([1, 2]), pa.array(['a'])])"
    }
    want <- if (kind == "sparse") list(1L, "b", 3L) else list(1L, "a", 2L)
    tab <- aw_table(ok = c("", "PerBatch([pa.array([1, 2, 3], pa.int32())])"),
                    the_union_col = c("", sprintf("PerBatch([%s])", ctor)))
    dir <- local_tempdir()
    f <- file.path(dir, "u.rds")
    arrow_to_rdata(aw_stream(tab), f)
    expect_identical(readRDS(f)$the_union_col, want, label = kind)
    expect_identical(as.data.frame(aw_stream(tab))$the_union_col, want, label = kind)
    ipc <- aw_write_ipc(tab, file.path(dir, "u.arrow"))
    g <- file.path(dir, "v.rds")
    ipc_to_rdata(ipc, g)
    expect_identical(readRDS(g)$the_union_col, want, label = kind)
  }
})

test_that("month_day_nano interval columns are an rdarrow_error naming the column and its type", {
  skip_if_no_pyarrow()
  tab <- aw_table(ok = c("pa.int32()", "[1, 2, 3, 4]"),
                  iv_col = c("pa.month_day_nano_interval()", "[(1, 2, 3), None, (0, 0, 0), (-1, 5, 10)]"))
  dir <- local_tempdir()
  f <- file.path(dir, "iv.RData")
  e <- expect_error(arrow_to_rdata(aw_stream(tab), f), class = "rdarrow_error")
  expect_match(conditionMessage(e), "iv_col", fixed = TRUE)
  expect_match(conditionMessage(e), "interval", ignore.case = TRUE)
  e2 <- expect_error(as.data.frame(aw_stream(tab)), class = "rdarrow_error")
  expect_match(conditionMessage(e2), "iv_col", fixed = TRUE)
  expect_match(conditionMessage(e2), "interval", ignore.case = TRUE)
  ipc <- aw_write_ipc(tab, file.path(dir, "iv.arrow"), "stream")
  e3 <- expect_error(ipc_to_rdata(ipc, f), class = "rdarrow_error")
  expect_match(conditionMessage(e3), "iv_col", fixed = TRUE)
  expect_false(file.exists(f))
})

# ---------------------------------------------------------------------------
# Shapes of streams

test_that("a stream with a schema and no batches gives a zero-row frame with typed columns", {
  skip_if_no_pyarrow()
  tab <- aw_empty_table(i = "pa.int32()", s = "pa.string()", d = "pa.float64()",
                        f = "pa.dictionary(pa.int8(), pa.string())",
                        ts = "pa.timestamp('us', tz='UTC')", day = "pa.date32()",
                        b = "pa.bool_()")
  df <- aw_convert(tab)
  expect_identical(names(df), c("i", "s", "d", "f", "ts", "day", "b"))
  expect_identical(nrow(df), 0L)
  expect_identical(df$i, integer(0))
  expect_identical(df$s, character(0))
  expect_identical(df$d, numeric(0))
  expect_identical(df$f, factor(character(0)))
  expect_identical(df$ts, .POSIXct(numeric(0), tz = "UTC"))
  expect_identical(df$day, as.Date(character(0)))
  expect_identical(df$b, logical(0))
})

test_that("many batches are concatenated in order", {
  skip_if_no_pyarrow()
  tab <- aw_table(
    i = c("pa.int32()", "[None if i % 97 == 0 else i for i in range(5000)]"),
    s = c("pa.string()", "[None if i % 89 == 0 else 'r%d' % i for i in range(5000)]"),
    f = c("pa.dictionary(pa.int8(), pa.string())", "['L%d' % (i % 7) for i in range(5000)]"),
    .sizes = c(rep(123, 40), 0, 5000 - 40 * 123)
  )
  df <- aw_convert(tab)
  i <- 0:4999
  expect_identical(df$i, ifelse(i %% 97 == 0, NA_integer_, i))
  expect_identical(df$s, ifelse(i %% 89 == 0, NA_character_, paste0("r", i)))
  expect_identical(as.character(df$f), paste0("L", i %% 7))
})

test_that("column names keep non-ASCII characters", {
  skip_if_no_pyarrow()
  cols <- list(c("pa.int32()", "[1, 2]"), c("pa.string()", "['a', None]"))
  names(cols) <- c("caf\u00e9", "\u65e5")
  tab <- do.call(aw_table, cols)
  df <- aw_convert(tab)
  expect_identical(names(df), c("caf\u00e9", "\u65e5"))
  expect_identical(Encoding(names(df)), c("UTF-8", "UTF-8"))
})

test_that("IPC files and streams with lz4 or zstd buffers are read", {
  skip_if_no_pyarrow()
  tab <- aw_table(i = c("pa.int64()", "list(range(1000))"),
                  s = c("pa.string()", "['value %d' % (i % 10) for i in range(1000)]"),
                  .sizes = c(400, 0, 600))
  want <- data.frame(i = 0:999, s = paste("value", 0:999 %% 10))
  dir <- local_tempdir()
  for (fmt in c("file", "stream")) {
    for (comp in c("lz4", "zstd")) {
      lab <- paste(fmt, comp)
      ipc <- aw_write_ipc(tab, file.path(dir, sprintf("t_%s_%s.arrow", fmt, comp)), fmt, comp)
      out <- file.path(dir, "out.RData")
      ipc_to_rdata(ipc, out, name = "x")
      x <- aw_load1(out, "x")
      expect_identical(x$i, want$i, label = lab)
      expect_identical(x$s, want$s, label = lab)
    }
  }
})

test_that("strings holding a NUL byte are an rdarrow_error naming the column, and nothing is written", {
  # R strings end at a NUL (R's reader refuses such a file, arrow R's
  # as.data.frame() errors): writing them would make a file load() cannot read.
  skip_if_no_pyarrow()
  cases <- list(
    value = aw_table(ok = c("pa.int32()", "[1, 2, 3, 4]"),
                     the_nul_col = c("pa.string()", "['a', None, 'b\\x00c', 'd']")),
    level = aw_table(ok = c("pa.int32()", "[1, 2, 3, 4]"),
                     the_nul_col = c("pa.dictionary(pa.int8(), pa.string())", "['a', None, 'b\\x00c', 'a']")),
    name = aw_table(ok = c("pa.int32()", "[1, 2, 3, 4]"),
                    the_nul_colNUL = c("pa.int32()", "[1, 2, 3, 4]"))
  )
  # (an R string cannot hold the NUL: Python puts it into the name)
  cases$name <- aw_py()$rename_nul(cases$name)
  for (nm in names(cases)) {
    tab <- cases[[nm]]
    dir <- local_tempdir()
    f <- file.path(dir, "nul.RData")
    # (the C stream interface carries names as C strings, which end at the
    # NUL: names with a NUL only come through IPC files)
    if (nm != "name") {
      e <- expect_error(arrow_to_rdata(aw_stream(tab), f), class = "rdarrow_error", label = nm)
      expect_match(conditionMessage(e), "the_nul_col", fixed = TRUE, label = nm)
      expect_match(conditionMessage(e), "NUL", fixed = TRUE, label = nm)
      e2 <- expect_error(as.data.frame(aw_stream(tab)), class = "rdarrow_error", label = nm)
      expect_match(conditionMessage(e2), "the_nul_col", fixed = TRUE, label = nm)
    }
    ipc <- aw_write_ipc(tab, file.path(dir, "nul.arrow"))
    e3 <- expect_error(ipc_to_rdata(ipc, f), class = "rdarrow_error", label = nm)
    expect_match(conditionMessage(e3), "the_nul_col", fixed = TRUE, label = nm)
    expect_match(conditionMessage(e3), "NUL", fixed = TRUE, label = nm)
    expect_false(file.exists(f))
    expect_identical(aw_temp_leftovers(dir), character())
  }
})

# ---------------------------------------------------------------------------
# A table made from a pandas DataFrame: its index as row names (the table
# atop rdarrow-arrow's mapping/pandas_index.rs), on every route

test_that("a pandas index becomes row names, on every route and from Parquet", {
  skip_if_no_pyarrow()
  if (!isTRUE(reticulate::py_module_available("pandas"))) skip("pandas is not available in RETICULATE_PYTHON")
  py <- reticulate::py_run_string('
import pandas as pd, pyarrow as pa
base = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5, 4.5], "s": list("abcde")})
frames = {
    "tail": base.tail(3),
    "named": pd.DataFrame({"v": [1, 2]}, index=pd.Index(["r1", "r2"], name="id")),
    "multi": pd.DataFrame({"v": [1.5, 2.5]}, index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", None])),
    "twice": pd.DataFrame({"v": [1, 2]}, index=[4, 4]),
}
# as aw_table() gives a table: its schema and batches
tables = {k: (t.schema, t.to_batches()) for k, t in ((k, pa.Table.from_pandas(v)) for k, v in frames.items())}
', convert = FALSE)
  tail <- aw_convert(py$tables$get("tail"))
  expect_identical(attr(tail, "row.names"), 2:4)
  expect_identical(rownames(tail), c("2", "3", "4"))
  expect_identical(tail$x, c(2.5, 3.5, 4.5))
  named <- aw_convert(py$tables$get("named"))
  expect_identical(rownames(named), c("r1", "r2"))
  expect_identical(attr(named, "pandas.index.name"), "id")
  expect_identical(aw_convert(py$tables$get("multi")), data.frame(k = c("a", "b"), level_1 = 1:2, v = c(1.5, 2.5)))
  e <- expect_error(as.data.frame(aw_stream(py$tables$get("twice"))), class = "rdarrow_error")
  expect_match(conditionMessage(e), "the label 4 twice (rows 1 and 2), and R's row names are unique", fixed = TRUE)
  # a Parquet file pandas wrote, converted one column at a time
  dir <- local_tempdir()
  pq <- file.path(dir, "tail.parquet")
  py$frames$get("tail")$to_parquet(pq)
  parquet_to_rdata(pq, file.path(dir, "tail.rds"))
  expect_identical(readRDS(file.path(dir, "tail.rds")), tail)
})
