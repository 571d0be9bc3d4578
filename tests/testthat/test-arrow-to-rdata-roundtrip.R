# R -> Arrow -> R round trips against R itself: an object saved by save()
# goes through rdata_to_ipc() + ipc_to_rdata(), rdata_to_arrow() +
# arrow_to_rdata(), and as.data.frame(rdata_to_arrow()), and what load()
# (or readRDS()) gives back must be identical() to the original.

# One object of each kind. Times are exact in microseconds, as POSIXct goes
# through microseconds.
rt_objects <- function() {
  objs <- list()
  objs$logical <- data.frame(x = c(TRUE, NA, FALSE, TRUE))
  objs$integer <- data.frame(x = c(1L, NA, -2147483647L, 2147483647L, 0L))
  objs$double <- data.frame(x = c(1.5, NA, NaN, -0, Inf, -Inf, 1e-300, .Machine$double.xmax, 0.1))
  objs$character <- data.frame(
    x = c("a", NA, "", "na\u00efve caf\u00e9", "\u65e5\u672c\u8a9e", "a string longer than twelve bytes"),
    stringsAsFactors = FALSE)
  objs$latin1 <- data.frame(x = iconv(c("caf\u00e9", "abc", NA, "\u00fcber", ""), "UTF-8", "latin1"),
                            stringsAsFactors = FALSE)
  objs$factor <- data.frame(x = factor(c("b", NA, "a", "b", "\u00e9"),
                                       levels = c("b", "a", "unused", "\u00e9")))
  objs$ordered <- data.frame(x = factor(c("lo", "hi", NA, "lo"), levels = c("lo", "mid", "hi"),
                                        ordered = TRUE))
  objs$date <- data.frame(x = as.Date(c("2024-02-29", NA, "1900-01-01", "1970-01-01", "1969-12-31")))
  objs$posixct_utc <- data.frame(x = as.POSIXct(c(0, 1.5, NA, 1700000000.25, -1.5),
                                               origin = "1970-01-01", tz = "UTC"))
  objs$posixct_ny <- data.frame(x = as.POSIXct(c(0, 1.5, NA, 1700000000.25, -1.5),
                                              origin = "1970-01-01", tz = "America/New_York"))
  objs$posixct_empty_tz <- data.frame(x = as.POSIXct(c(0, 1.5, NA, 1700000000.25),
                                                    origin = "1970-01-01"))
  objs$posixct_no_tzone <- data.frame(x = structure(c(0, 1.5, NA, 1700000000.25),
                                                    class = c("POSIXct", "POSIXt")))
  # microsecond times that are not binary fractions (most real ones)
  objs$posixct_microseconds <- data.frame(
    x = .POSIXct(c(1700000579.556327, 1700000438.540986, NA, 1700000588.62, 0.123457), tz = "UTC"))
  objs$difftime_fractional <- data.frame(x = as.difftime(c(44104.823, NA, 0.001, 35698.325),
                                                         units = "secs"))
  objs$difftime_mins <- data.frame(x = as.difftime(c(1.5, NA, -30, 0), units = "mins"))
  objs$difftime_hours <- data.frame(x = as.difftime(c(1.5, NA, -30, 0), units = "hours"))
  objs$difftime_days <- data.frame(x = as.difftime(c(1.5, NA, -30, 0), units = "days"))
  objs$difftime_secs <- data.frame(x = as.difftime(c(1.5, NA, -30, 0), units = "secs"))
  if (requireNamespace("hms", quietly = TRUE)) {
    objs$hms <- data.frame(x = hms::hms(seconds = c(1.5, NA, 3661, 0, 86399.25)))
    objs$hms_fractional <- data.frame(x = hms::hms(seconds = c(44104.823, NA, 35698.325, 0.000001)))
  }
  if (requireNamespace("bit64", quietly = TRUE)) {
    objs$integer64 <- data.frame(x = bit64::as.integer64(
      c("1", NA, "9007199254740993", "-9223372036854775807", "9223372036854775807", "0")))
    objs$integer64_small <- data.frame(x = bit64::as.integer64(c(1, NA, -5, 2147483647)))
  }
  d <- data.frame(id = 1:4)
  d$r <- list(as.raw(1:3), NULL, raw(0), as.raw(c(0, 255)))
  objs$raw_list <- d
  d <- data.frame(id = 1:4)
  d$l <- list(1:3, NULL, integer(0), c(NA, 4L))
  objs$int_list <- d
  d <- data.frame(id = 1:3)
  d$sub <- data.frame(a = c(1.5, NA, 3), b = c("x", NA, "\u00e9"), stringsAsFactors = FALSE)
  objs$df_column <- d
  objs$row_names <- data.frame(a = 1:3, b = c("x", "y", NA), row.names = c("r1", "r2", "r\u00e9"),
                               stringsAsFactors = FALSE)
  d <- data.frame(a = 1:3, b = c(0.5, NA, 2))
  attr(d, "note") <- "a note on the frame"
  attr(d, "meta") <- list(version = 2L, tags = c("x", "y"))
  attr(d$a, "label") <- "Label of a"
  attr(d$b, "units") <- "kg"
  objs$attributes <- d
  if (requireNamespace("tibble", quietly = TRUE)) {
    objs$tibble <- tibble::tibble(a = 1:3, b = c("x", NA, "z"), c = c(1.5, NaN, NA))
  }
  if (requireNamespace("data.table", quietly = TRUE)) {
    dt <- data.table::data.table(a = 1:3, b = c("x", "y", NA))
    attr(dt, ".internal.selfref") <- NULL
    objs$data_table <- dt
  }
  objs$zero_rows <- data.frame(a = integer(), b = character(), f = factor(levels = c("x", "y")),
                               d = as.Date(character()), stringsAsFactors = FALSE)
  objs$zero_columns <- data.frame()
  objs$zero_columns_with_rows <- data.frame(a = 1:3)[, FALSE, drop = FALSE]
  objs$all_columns <- rt_all_columns()
  objs
}

# One frame with every kind of column (5 rows).
rt_all_columns <- function() {
  d <- data.frame(
    lgl = c(TRUE, NA, FALSE, TRUE, FALSE),
    int = c(1L, NA, -2147483647L, 2147483647L, 0L),
    dbl = c(1.5, NA, NaN, -0, Inf),
    chr = c("a", NA, "", "na\u00efve", "\u65e5\u672c"),
    fct = factor(c("b", NA, "a", "b", "a"), levels = c("b", "a", "unused")),
    ord = factor(c("lo", "hi", NA, "lo", "mid"), levels = c("lo", "mid", "hi"), ordered = TRUE),
    date = as.Date(c("2024-02-29", NA, "1900-01-01", "1970-01-01", "1969-12-31")),
    utc = as.POSIXct(c(0, 1.5, NA, 1700000000.25, -1.5), origin = "1970-01-01", tz = "UTC"),
    ny = as.POSIXct(c(0, 1.5, NA, 1700000000.25, -1.5), origin = "1970-01-01",
                    tz = "America/New_York"),
    mins = as.difftime(c(1.5, NA, -30, 0, 2), units = "mins"),
    stringsAsFactors = FALSE
  )
  d$lat1 <- iconv(c("caf\u00e9", "abc", NA, "\u00fcber", ""), "UTF-8", "latin1")
  d$notz <- as.POSIXct(c(0, 1.5, NA, 1700000000.25, 2), origin = "1970-01-01")
  d$hours <- as.difftime(c(1.5, NA, -30, 0, 2), units = "hours")
  d$days <- as.difftime(c(1.5, NA, -30, 0, 2), units = "days")
  if (requireNamespace("hms", quietly = TRUE)) {
    d$hms <- hms::hms(seconds = c(1.5, NA, 3661, 0, 86399.25))
  }
  if (requireNamespace("bit64", quietly = TRUE)) {
    d$i64 <- bit64::as.integer64(c("1", NA, "9007199254740993", "-9223372036854775807", "0"))
  }
  d$raw <- list(as.raw(1:3), NULL, raw(0), as.raw(c(0, 255)), as.raw(7))
  d$ints <- list(1:3, NULL, integer(0), c(NA, 4L), 5L)
  d$sub <- data.frame(a = c(1.5, NA, 3, 4, 5), b = c("x", NA, "\u00e9", "", "z"),
                      stringsAsFactors = FALSE)
  attr(d, "note") <- "every column"
  attr(d$int, "label") <- "an integer column"
  d
}

# Read back an output file: load() (the object must be called `name`) or
# readRDS().
rt_read <- function(out, name = "x") {
  if (grepl("\\.rds$", out)) readRDS(out) else aw_load1(out, name)
}

# save() -> rdata_to_ipc() -> ipc_to_rdata() -> load().
# The IPC options come after `...`, so that ipc_to_rdata()'s `compress`
# cannot partially match them.
rt_via_ipc <- function(obj, dir, ..., sink = "out.RData", ipc_format = "file",
                       ipc_compression = "uncompressed", chunk_size = NULL) {
  src <- aw_save_x(obj, dir, compress = TRUE)
  ipc <- file.path(dir, "x.arrow")
  rdata_to_ipc(src, ipc, format = ipc_format, compression = ipc_compression,
               chunk_size = chunk_size)
  out <- file.path(dir, sink)
  ipc_to_rdata(ipc, out, ...)
  rt_read(out, "x")
}

# save() -> rdata_to_arrow() -> arrow_to_rdata() -> load().
rt_via_stream <- function(obj, dir, ..., sink = "out.RData", chunk_size = NULL) {
  src <- aw_save_x(obj, dir, compress = TRUE)
  out <- file.path(dir, sink)
  arrow_to_rdata(rdata_to_arrow(src, chunk_size = chunk_size), out, name = "x", ...)
  rt_read(out, "x")
}

# save() -> rdata_to_arrow() -> as.data.frame().
rt_via_df <- function(obj, dir, chunk_size = NULL) {
  src <- aw_save_x(obj, dir, compress = TRUE)
  as.data.frame(rdata_to_arrow(src, chunk_size = chunk_size))
}

rt_check <- function(obj, label, f) {
  got <- tryCatch(f(), error = function(e) e)
  if (inherits(got, "error")) {
    fail(sprintf("%s: %s", label, conditionMessage(got)))
  } else {
    expect_aw_identical(got, obj, label = label)
  }
}

test_that("every kind of object round-trips through IPC files and streams", {
  objs <- rt_objects()
  for (nm in names(objs)) {
    obj <- objs[[nm]]
    dir <- local_tempdir()
    rt_check(obj, paste(nm, "via IPC file"), function() rt_via_ipc(obj, dir, threads = 1))
    rt_check(obj, paste(nm, "via zstd IPC stream in 2-row batches, to .rds"), function() {
      rt_via_ipc(obj, dir, sink = "out.rds", ipc_format = "stream", ipc_compression = "zstd",
                 chunk_size = 2)
    })
  }
})

test_that("every kind of object round-trips through the C stream", {
  objs <- rt_objects()
  for (nm in names(objs)) {
    obj <- objs[[nm]]
    dir <- local_tempdir()
    rt_check(obj, paste(nm, "via arrow_to_rdata()"), function() rt_via_stream(obj, dir))
    rt_check(obj, paste(nm, "via arrow_to_rdata() in 2-row batches, to .rds"), function() {
      rt_via_stream(obj, dir, sink = "out.rds", chunk_size = 2, threads = 2)
    })
  }
})

test_that("every kind of object round-trips through as.data.frame(<stream>)", {
  objs <- rt_objects()
  for (nm in names(objs)) {
    obj <- objs[[nm]]
    dir <- local_tempdir()
    rt_check(obj, paste(nm, "via as.data.frame()"), function() rt_via_df(obj, dir))
    rt_check(obj, paste(nm, "via as.data.frame() in 2-row batches"), function() {
      rt_via_df(obj, dir, chunk_size = 2)
    })
  }
})

# The objects for the compression x version grid: one frame with every kind
# of column, and the kinds that are about the frame itself.
rt_grid_objects <- function() {
  objs <- rt_objects()
  objs[c("all_columns", "row_names", "attributes", "tibble", "data_table", "zero_rows",
         "zero_columns", "zero_columns_with_rows")]
}

test_that("round trips hold for every compression and serialization version", {
  objs <- rt_grid_objects()
  for (comp in c("gzip", "bzip2", "xz", "none")) {
    for (v in 2:3) {
      for (nm in names(objs)) {
        obj <- objs[[nm]]
        dir <- local_tempdir()
        lab <- sprintf("%s, compress = %s, version = %d", nm, comp, v)
        if (nm == "all_columns") {
          rt_check(obj, paste(lab, "via IPC"), function() {
            rt_via_ipc(obj, dir, compress = comp, version = v, threads = 2)
          })
        }
        rt_check(obj, paste(lab, "via the C stream"), function() {
          rt_via_stream(obj, dir, compress = comp, version = v, threads = 2)
        })
      }
    }
  }
})

test_that(".rds output round-trips for every compression and serialization version", {
  obj <- rt_all_columns()
  for (comp in c("gzip", "bzip2", "xz", "none")) {
    for (v in 2:3) {
      dir <- local_tempdir()
      lab <- sprintf("compress = %s, version = %d", comp, v)
      rt_check(obj, paste("stream to .rds,", lab), function() {
        rt_via_stream(obj, dir, sink = "out.rds", compress = comp, version = v, threads = 2)
      })
    }
  }
})

test_that("round trips hold in the ASCII format", {
  obj <- rt_all_columns()
  for (v in 2:3) {
    dir <- local_tempdir()
    rt_check(obj, sprintf("IPC, ascii, version %d", v),
             function() rt_via_ipc(obj, dir, ascii = TRUE, version = v))
    rt_check(obj, sprintf("stream to .rds, ascii, version %d, uncompressed", v),
             function() rt_via_stream(obj, dir, sink = "out.rds", ascii = TRUE, version = v,
                                      compress = "none"))
  }
})

test_that("latin1 strings come back with their text (and as UTF-8 or latin1, never bytes)", {
  obj <- data.frame(x = iconv(c("caf\u00e9", "\u00fcber", "abc"), "UTF-8", "latin1"),
                    stringsAsFactors = FALSE)
  expect_identical(Encoding(obj$x), c("latin1", "latin1", "unknown"))
  dir <- local_tempdir()
  got <- rt_via_stream(obj, dir)
  expect_identical(enc2utf8(got$x), c("caf\u00e9", "\u00fcber", "abc"))
  expect_true(all(Encoding(got$x[1:2]) %in% c("UTF-8", "latin1")))
})

test_that("arrow_to_rdata() of a data frame writes what readRDS() and load() give back identical", {
  objs <- rt_objects()
  for (nm in names(objs)) {
    obj <- objs[[nm]]
    dir <- local_tempdir()
    rds <- file.path(dir, "x.rds")
    rt_check(obj, paste(nm, "data frame to .rds"), function() {
      arrow_to_rdata(obj, rds, threads = 1)
      readRDS(rds)
    })
  }
  obj <- rt_all_columns()
  dir <- local_tempdir()
  for (v in 2:3) {
    rda <- file.path(dir, "x.RData")
    rt_check(obj, sprintf("data frame to .RData, xz, version %d", v), function() {
      arrow_to_rdata(obj, rda, name = "x", compress = "xz", version = v)
      aw_load1(rda, "x")
    })
  }
})

test_that("a data frame from arrow_to_rdata() survives a second trip", {
  obj <- rt_all_columns()
  dir <- local_tempdir()
  once <- rt_via_stream(obj, dir)
  dir2 <- local_tempdir()
  twice <- rt_via_stream(once, dir2)
  expect_aw_identical(twice, obj, label = "after two trips")
})
