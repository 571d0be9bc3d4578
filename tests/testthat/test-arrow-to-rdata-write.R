# arrow_to_rdata() and ipc_to_rdata() as writers: object names, file
# formats (save() vs saveRDS(), compression, version, ASCII), the return
# value, atomic replacement of the target, errors, and block compression
# that gives the same bytes for any number of threads.

aw_small_frame <- function() {
  data.frame(i = c(1L, NA, 3L), s = c("a", NA, "\u00e9"), d = c(0.5, NaN, NA),
             stringsAsFactors = FALSE)
}

# ---------------------------------------------------------------------------
# Names, return value, formats

test_that("arrow_to_rdata() returns the file invisibly and names the object after x", {
  dir <- local_tempdir()
  src <- aw_save_x(aw_small_frame(), dir)
  out <- file.path(dir, "out.RData")
  my_stream <- rdata_to_arrow(src)
  expect_invisible(res <- arrow_to_rdata(my_stream, out))
  expect_identical(res, out)
  objs <- load_objects(out)
  expect_identical(names(objs), "my_stream")
  expect_identical(objs$my_stream, aw_small_frame())

  cars_df <- head(mtcars)
  expect_invisible(res <- arrow_to_rdata(cars_df, out))
  expect_identical(res, out)
  objs <- load_objects(out)
  expect_identical(names(objs), "cars_df")
  expect_identical(objs$cars_df, head(mtcars))

  arrow_to_rdata(rdata_to_arrow(src), out, name = "a custom name")
  expect_identical(names(load_objects(out)), "a custom name")
})

test_that("a pyarrow stream is written under the name of the variable holding it", {
  skip_if_no_pyarrow()
  tab <- aw_table(a = c("pa.int32()", "[1, 2, None]"), .sizes = 3)
  dir <- local_tempdir()
  out <- file.path(dir, "out.RData")
  from_python <- aw_stream(tab)
  arrow_to_rdata(from_python, out)
  objs <- load_objects(out)
  expect_identical(names(objs), "from_python")
  expect_identical(objs$from_python$a, c(1L, 2L, NA))
})

test_that("ipc_to_rdata() names the object after the IPC file and returns the sink invisibly", {
  dir <- local_tempdir()
  src <- aw_save_x(aw_small_frame(), dir)
  for (base in c("cars2.arrow", "my data.v1.feather", "noext")) {
    ipc <- file.path(dir, base)
    rdata_to_ipc(src, ipc)
    out <- file.path(dir, "out.RData")
    expect_invisible(res <- ipc_to_rdata(ipc, out))
    expect_identical(res, out)
    objs <- load_objects(out)
    expect_identical(names(objs), sub("\\.[^.]*$", "", base), label = base)
    expect_identical(objs[[1]], aw_small_frame(), label = base)
  }
  ipc_to_rdata(file.path(dir, "cars2.arrow"), file.path(dir, "out.RData"), name = "other")
  expect_identical(names(load_objects(file.path(dir, "out.RData"))), "other")
})

test_that("a file ending in .rds gets saveRDS()'s format, anything else save()'s", {
  dir <- local_tempdir()
  src <- aw_save_x(aw_small_frame(), dir)
  rds <- file.path(dir, "out.rds")
  arrow_to_rdata(rdata_to_arrow(src), rds, compress = "none")
  expect_identical(aw_header(rds, 2L), charToRaw("X\n"))
  expect_identical(readRDS(rds), aw_small_frame())
  rda <- file.path(dir, "out.rda")
  arrow_to_rdata(rdata_to_arrow(src), rda, name = "x", compress = "none")
  expect_identical(aw_header(rda, 5L), charToRaw("RDX3\n"))
  expect_identical(aw_load1(rda, "x"), aw_small_frame())
  # ipc_to_rdata() too
  ipc <- file.path(dir, "x.arrow")
  rdata_to_ipc(src, ipc)
  rds2 <- file.path(dir, "again.rds")
  ipc_to_rdata(ipc, rds2)
  expect_identical(readRDS(rds2), aw_small_frame())
  expect_identical(aw_magic(rds2), "gzip")
})

test_that("compress, version and ascii give the headers R writes", {
  dir <- local_tempdir()
  src <- aw_save_x(aw_small_frame(), dir)
  ipc <- file.path(dir, "x.arrow")
  rdata_to_ipc(src, ipc)
  for (comp in c("gzip", "bzip2", "xz", "none")) {
    for (v in 2:3) {
      for (ascii in c(FALSE, TRUE)) {
        lab <- sprintf("%s v%d ascii=%s", comp, v, ascii)
        rda <- file.path(dir, "out.RData")
        arrow_to_rdata(rdata_to_arrow(src), rda, name = "x", compress = comp, version = v,
                       ascii = ascii, threads = 1)
        expect_identical(aw_magic(rda), comp, label = lab)
        expect_identical(rawToChar(aw_header(rda, 5L)),
                         sprintf("%s%d\n", if (ascii) "RDA" else "RDX", v), label = lab)
        expect_identical(aw_load1(rda, "x"), aw_small_frame(), label = lab)
        rds <- file.path(dir, "out.rds")
        ipc_to_rdata(ipc, rds, compress = comp, version = v, ascii = ascii, threads = 1)
        expect_identical(aw_magic(rds), comp, label = lab)
        hdr <- aw_header(rds, 14L)
        expect_identical(rawToChar(hdr[1:2]), if (ascii) "A\n" else "X\n", label = lab)
        expect_identical(readRDS(rds), aw_small_frame(), label = lab)
      }
    }
  }
})

test_that("the default compression is gzip, and the level changes the output", {
  dir <- local_tempdir()
  df <- data.frame(i = rep(1:50, 2000), s = rep(sprintf("text %d", 1:100), 1000),
                   stringsAsFactors = FALSE)
  src <- aw_save_x(df, dir)
  f0 <- file.path(dir, "default.RData")
  arrow_to_rdata(rdata_to_arrow(src), f0, name = "x")
  expect_identical(aw_magic(f0), "gzip")
  f1 <- file.path(dir, "level1.RData")
  f9 <- file.path(dir, "level9.RData")
  arrow_to_rdata(rdata_to_arrow(src), f1, name = "x", compression_level = 1)
  arrow_to_rdata(rdata_to_arrow(src), f9, name = "x", compression_level = 9)
  expect_gt(file.size(f1), file.size(f9))
  expect_identical(aw_load1(f1, "x"), df)
  expect_identical(aw_load1(f9, "x"), df)
  # level 0 is allowed and still readable
  f00 <- file.path(dir, "level0.RData")
  arrow_to_rdata(rdata_to_arrow(src), f00, name = "x", compression_level = 0)
  expect_identical(aw_load1(f00, "x"), df)
})

test_that("ipc_to_rdata() passes compression_level on through `...`, alone or with compress", {
  dir <- local_tempdir()
  df <- data.frame(i = rep(1:50, 2000), s = rep(sprintf("text %d", 1:100), 1000),
                   stringsAsFactors = FALSE)
  src <- aw_save_x(df, dir)
  ipc <- file.path(dir, "x.arrow")
  rdata_to_ipc(src, ipc)
  i1 <- file.path(dir, "ipc1.rds")
  i9 <- file.path(dir, "ipc9.rds")
  ipc_to_rdata(ipc, i1, compress = "gzip", compression_level = 1)
  ipc_to_rdata(ipc, i9, compress = "gzip", compression_level = 9)
  expect_gt(file.size(i1), file.size(i9))
  expect_identical(readRDS(i1), df)
  # without compress: gzip (the default) at that level
  i1b <- file.path(dir, "ipc1b.rds")
  expect_no_error(ipc_to_rdata(ipc, i1b, compression_level = 1))
  expect_true(file.exists(i1b))
  if (file.exists(i1b)) {
    expect_identical(aw_magic(i1b), "gzip")
    expect_identical(file_bytes(i1b), file_bytes(i1))
  }
})

test_that("an existing file is replaced", {
  dir <- local_tempdir()
  out <- file.path(dir, "out.RData")
  old <- data.frame(old = 1:2)
  save(old, file = out)
  src <- aw_save_x(aw_small_frame(), dir)
  arrow_to_rdata(rdata_to_arrow(src), out, name = "x")
  expect_identical(load_objects(out), list(x = aw_small_frame()))
  expect_identical(aw_temp_leftovers(dir), character(0))
})

test_that("a stream can be written only once; a consumed stream is an rdarrow_error", {
  dir <- local_tempdir()
  src <- aw_save_x(aw_small_frame(), dir)
  s <- rdata_to_arrow(src)
  out <- file.path(dir, "out.RData")
  arrow_to_rdata(s, out, name = "x")
  expect_identical(aw_load1(out, "x"), aw_small_frame())
  bytes <- file_bytes(out)
  expect_error(arrow_to_rdata(s, out, name = "x"), class = "rdarrow_error")
  expect_error(as.data.frame(s), class = "rdarrow_error")
  expect_identical(file_bytes(out), bytes)
  expect_identical(aw_temp_leftovers(dir), character(0))
  s2 <- rdata_to_arrow(src)
  expect_identical(as.data.frame(s2), aw_small_frame())
  expect_error(as.data.frame(s2), class = "rdarrow_error")
  expect_error(arrow_to_rdata(s2, out, name = "x"), class = "rdarrow_error")
})

test_that("bad arguments are rdarrow_errors", {
  dir <- local_tempdir()
  out <- file.path(dir, "out.RData")
  expect_error(arrow_to_rdata(1:3, out, name = "x"), class = "rdarrow_error")
  expect_error(arrow_to_rdata(list(a = 1), out, name = "x"), class = "rdarrow_error")
  df <- aw_small_frame()
  expect_error(arrow_to_rdata(df, out, version = 4), class = "rdarrow_error")
  expect_error(arrow_to_rdata(df, out, compression_level = 10), class = "rdarrow_error")
  expect_error(arrow_to_rdata(df, out, threads = 0), class = "rdarrow_error")
  expect_error(arrow_to_rdata(df, out, ascii = NA), class = "rdarrow_error")
  expect_error(arrow_to_rdata(df, out, name = ""), class = "rdarrow_error")
  expect_error(arrow_to_rdata(df, c(out, out)), class = "rdarrow_error")
  expect_error(arrow_to_rdata(df, out, compress = "lz4"))
  expect_error(ipc_to_rdata(file.path(dir, "missing.arrow"), out), class = "rdarrow_error")
  expect_false(file.exists(out))
  expect_identical(aw_listing(dir), character(0))
})

test_that("writing into a folder that does not exist is an rdarrow_error", {
  dir <- local_tempdir()
  src <- aw_save_x(aw_small_frame(), dir)
  missing <- file.path(dir, "no", "such", "folder", "out.RData")
  expect_error(arrow_to_rdata(rdata_to_arrow(src), missing, name = "x"), class = "rdarrow_error")
  expect_error(arrow_to_rdata(aw_small_frame(), missing), class = "rdarrow_error")
  ipc <- file.path(dir, "x.arrow")
  rdata_to_ipc(src, ipc)
  expect_error(ipc_to_rdata(ipc, missing), class = "rdarrow_error")
  expect_false(dir.exists(file.path(dir, "no")))
})

# ---------------------------------------------------------------------------
# Failures leave the old file

test_that("an unsupported column leaves the old file untouched and no temporary file", {
  skip_if_no_pyarrow()
  dir <- local_tempdir()
  out <- file.path(dir, "keep.RData")
  x <- data.frame(kept = 1:3)
  save(x, file = out)
  bytes <- file_bytes(out)
  before <- aw_listing(dir)
  # the unsupported column (an interval of months, days and nanoseconds,
  # which R has no type for) comes in the second batch, after a good
  # first one
  tab <- aw_table(
    ok = c("", "PerBatch([pa.array([1, 2], pa.int32()), pa.array([3], pa.int32())])"),
    bad_interval = c("", paste0("PerBatch([pa.array([(1, 2, 3), None], pa.month_day_nano_interval()), ",
                     "pa.array([(0, 0, 0)], pa.month_day_nano_interval())])"))
  )
  e <- expect_error(arrow_to_rdata(aw_stream(tab), out, name = "x"), class = "rdarrow_error")
  expect_match(conditionMessage(e), "bad_interval", fixed = TRUE)
  expect_identical(file_bytes(out), bytes)
  expect_identical(aw_listing(dir), before)
  expect_identical(aw_temp_leftovers(dir), character(0))
  expect_identical(aw_load1(out, "x"), x)
  # the same through an IPC file, and to an .rds target
  ipc <- file.path(dir, "u.arrows")
  aw_write_ipc(tab, ipc, "stream")
  before <- aw_listing(dir)
  expect_error(ipc_to_rdata(ipc, out), class = "rdarrow_error")
  expect_identical(file_bytes(out), bytes)
  expect_identical(aw_listing(dir), before)
  rds <- file.path(dir, "keep.rds")
  saveRDS(x, rds)
  rds_bytes <- file_bytes(rds)
  before <- aw_listing(dir)
  expect_error(arrow_to_rdata(aw_stream(tab), rds), class = "rdarrow_error")
  expect_identical(file_bytes(rds), rds_bytes)
  expect_identical(aw_listing(dir), before)
})

test_that("an error from the producer of the stream leaves the old file untouched", {
  skip_if_no_pyarrow()
  dir <- local_tempdir()
  out <- file.path(dir, "keep.RData")
  x <- data.frame(kept = c("a", "b"))
  save(x, file = out)
  bytes <- file_bytes(out)
  before <- aw_listing(dir)
  tab <- aw_table(a = c("pa.int32()", "list(range(10))"), .sizes = c(5, 5))
  expect_error(arrow_to_rdata(aw_failing_stream(tab, after = 1), out, name = "x"),
               class = "rdarrow_error")
  expect_identical(file_bytes(out), bytes)
  expect_identical(aw_listing(dir), before)
  expect_error(as.data.frame(aw_failing_stream(tab, after = 1)), class = "rdarrow_error")
  # with no file there before, none is left behind
  fresh <- file.path(dir, "fresh.RData")
  expect_error(arrow_to_rdata(aw_failing_stream(tab, after = 0), fresh, name = "x"),
               class = "rdarrow_error")
  expect_false(file.exists(fresh))
  expect_identical(aw_listing(dir), before)
})

test_that("a corrupt IPC file is an rdarrow_error and leaves the old file untouched", {
  dir <- local_tempdir()
  out <- file.path(dir, "keep.rds")
  saveRDS(mtcars, out)
  bytes <- file_bytes(out)
  src <- aw_save_x(aw_small_frame(), dir)
  ipc <- file.path(dir, "x.arrow")
  rdata_to_ipc(src, ipc)
  good <- file_bytes(ipc)
  # truncated
  bad <- file.path(dir, "truncated.arrow")
  writeBin(good[seq_len(length(good) %/% 2)], bad)
  # not Arrow at all
  junk <- file.path(dir, "junk.arrow")
  writeBin(as.raw(rep(c(0x41, 0x52, 0x52), 100)), junk)
  before <- aw_listing(dir)
  for (f in c(bad, junk)) {
    expect_error(ipc_to_rdata(f, out), class = "rdarrow_error", label = basename(f))
    expect_identical(file_bytes(out), bytes, label = basename(f))
    expect_identical(aw_listing(dir), before, label = basename(f))
  }
})

# ---------------------------------------------------------------------------
# Block compression on several threads

test_that("big output is compressed in 8 MiB blocks into one member, the same for any number of threads", {
  n <- 3e6
  # about 24 MB serialized: three or more 8 MiB blocks
  b <- (seq_len(n) * 7L) %% 1000L
  b[seq(5L, n, by = 11L)] <- NA
  df <- data.frame(a = rev(seq_len(n)), b = b)
  dir <- local_tempdir()
  src <- aw_save_x(df, dir)
  block <- 8 * 1024^2
  py <- nzchar(Sys.getenv("RETICULATE_PYTHON")) &&
    requireNamespace("reticulate", quietly = TRUE) &&
    isTRUE(reticulate::py_module_available("pyarrow"))
  settings <- list(gzip = NULL, bzip2 = 1, xz = 1)
  for (comp in names(settings)) {
    level <- settings[[comp]]
    files <- character()
    for (th in c(1L, 2L, 3L)) {
      if (comp != "gzip" && th == 3L) next
      f <- file.path(dir, sprintf("big-%s-%d.RData", comp, th))
      arrow_to_rdata(rdata_to_arrow(src), f, name = "x", compress = comp,
                     compression_level = level, threads = th)
      files[[as.character(th)]] <- f
    }
    ref <- file_bytes(files[[1]])
    expect_identical(aw_magic(files[[1]]), comp)
    for (th in names(files)[-1]) {
      expect_true(identical(file_bytes(files[[th]]), ref),
                  label = sprintf("%s output with %s threads is the bytes of 1 thread", comp, th))
    }
    if (py) {
      # the blocks are joined into one member or stream, as R writes them
      sizes <- aw_members(files[[1]], comp)
      expect_length(sizes, 1L)
      expect_gt(sizes[[1]], 2 * block)
    }
    if (comp == "gzip") {
      expect_identical(aw_load1(files[[1]], "x"), df)
    }
  }
  # the xz output loads too (bzip2 and xz members are concatenated streams)
  expect_identical(aw_load1(file.path(dir, "big-xz-2.RData"), "x"), df)

  # a data frame (not a stream) and an .rds target follow the same rule
  d1 <- file.path(dir, "df-1.rds")
  d2 <- file.path(dir, "df-2.rds")
  arrow_to_rdata(df, d1, threads = 1)
  arrow_to_rdata(df, d2, threads = 2)
  expect_true(identical(file_bytes(d1), file_bytes(d2)), label = "data frame .rds bytes, 1 vs 2 threads")
  expect_identical(readRDS(d2), df)
})

test_that("a data frame is written with the bytes save() and saveRDS() write", {
  # arrow_to_rdata() of an R data frame streams R's own serialization into
  # the compressor: the decompressed file is exactly save()'s file
  dir <- local_tempdir()
  df <- data.frame(id = seq_len(50000), x = sort(runif(50000)), w = as.character(1:50000),
                   when = as.POSIXct("2024-03-01", tz = "UTC") + 1:50000,
                   stringsAsFactors = FALSE)
  df$f <- factor(df$w)
  cases <- list(list(ext = "RData", version = 3L, ascii = FALSE),
                list(ext = "RData", version = 2L, ascii = FALSE),
                list(ext = "RData", version = 3L, ascii = TRUE),
                list(ext = "rds", version = 3L, ascii = FALSE))
  for (k in cases) {
    ours <- file.path(dir, paste0("ours.", k$ext))
    theirs <- file.path(dir, paste0("theirs.", k$ext))
    arrow_to_rdata(df, ours, compress = "none", version = k$version, ascii = k$ascii)
    if (k$ext == "rds") {
      saveRDS(df, theirs, compress = FALSE, version = k$version, ascii = k$ascii)
    } else {
      save(df, file = theirs, compress = FALSE, version = k$version, ascii = k$ascii)
    }
    label <- sprintf("%s, version %d%s", k$ext, k$version, if (k$ascii) ", ascii" else "")
    expect_true(identical(file_bytes(ours), file_bytes(theirs)), label = label)
    gz <- file.path(dir, paste0("ours-gz.", k$ext))
    arrow_to_rdata(df, gz, compress = "gzip", version = k$version, ascii = k$ascii, threads = 2L)
    expect_true(identical(memDecompress(file_bytes(gz), "gzip"), file_bytes(theirs)), label = paste(label, "gzip"))
  }
})

# ---------------------------------------------------------------------------
# Data frames (and any data) written without R's serializer: the walk lays
# out each node as R's serializer writes it, and the blocks are rendered on
# all cores. Every case is compared byte for byte with serialize().

native_cases <- function() {
  latin <- "caf\xe9"; Encoding(latin) <- "latin1"
  bytes <- "\xff\xfe"; Encoding(bytes) <- "bytes"
  methods::setClass("rdarrowNativeCase", representation(name = "character", n = "numeric"),
                    where = globalenv())
  shared <- c(1.5, 2.5, 3.5)
  wrapped <- shared
  attr(wrapped, "note") <- "a wrapper of shared"          # R wraps instead of copying
  list(
    null = NULL, int = c(5L, NA, -3L), compact_int = 1:10, compact_big = seq_len(1e6),
    compact_real = seq(1, 10, by = 1), compact_desc = 10:-5,
    dbl = c(1.5, NA, NaN, Inf, -Inf, -0, .Machine$double.xmax),
    chr = c("a", NA, "\u00e9", latin, bytes, "", "NA"), lgl = c(TRUE, NA, FALSE),
    cplx = complex(real = 1:3, imaginary = c(NA, 2, 3)), raw = as.raw(0:255),
    nested = list(a = 1, b = list(c = "x", d = list())), fac = factor(c("a", "b", NA), levels = c("b", "a")),
    ordered = factor(c("lo", "hi"), levels = c("lo", "hi"), ordered = TRUE),
    date = as.Date("2020-01-01") + c(0:2, NA), posix = as.POSIXct("2020-01-01 12:00:00", tz = "America/New_York"),
    difftime = as.difftime(c(1, 2.5), units = "hours"), matrix = matrix(1:6, 2, dimnames = list(c("r1", "r2"), NULL)),
    array = array(as.numeric(1:24), c(2, 3, 4)), pairlist = pairlist(a = 1, b = "x", 3),
    formula = stats::as.formula("y ~ x + log(z)", env = globalenv()),
    expanded_compact = { s <- 1:10; s[[3]] <- 3L; s },      # assigning into it expands it
    call = quote(f(x, y = 2, ...)), symbol = quote(abc), expression = expression(1 + 2, b),
    s4 = methods::new("rdarrowNativeCase", name = "a", n = 1), wrapped = wrapped, sorted = sort(c(3L, 1L, 2L)),
    long_chr = rep_len(c(letters, NA, "\u00fc"), 1e5), repeated_lists = rep(list(1:3, "a", NULL), 500),
    empty_chr = character(), empty_list = list(), named_empty = structure(list(), names = character()),
    df = data.frame(id = seq_len(5), x = c(0.5, NA, 2, 3, 4), s = c("a", NA, "c", "d", "e"),
                    f = factor(c("u", "v", "u", NA, "v")), stringsAsFactors = FALSE),
    df_rownames = data.frame(x = 1:3, row.names = c("a", "b", "c")),
    df_list_col = { d <- data.frame(x = 1:2); d$l <- list(1:3, letters); d },
    df_df_col = { d <- data.frame(x = 1:2); d$inner <- data.frame(a = c("p", "q")); d },
    tibble_like = structure(list(a = 1:2), class = c("tbl_df", "tbl", "data.frame"), row.names = c(NA, -2L)),
    deep = Reduce(function(acc, i) list(acc), 1:200, "leaf")
  )
}

test_that("data is laid out exactly as R serializes it, in versions 3 and 2", {
  cases <- native_cases()
  for (version in c(3L, 2L)) {
    for (name in names(cases)) {
      x <- cases[[name]]
      ours <- rdarrow:::serialize_native_impl(x, version)
      label <- sprintf("%s, version %d", name, version)
      expect_false(is.null(ours), label = paste(label, "is laid out"))
      expect_true(identical(ours, serialize(x, NULL, version = version)),
                  label = paste(label, "has the bytes of serialize()"))
    }
  }
})

test_that("what only R's serializer writes is left to it, and the file is still save()'s", {
  e <- new.env()
  assign("v", 1, envir = e)
  local_formula <- local(y ~ x)                       # its environment is a local one
  df <- data.frame(x = 1:2)
  df$fn <- list(sum, e)
  for (x in list(e, function(x) x + 1, local_formula, df)) {
    expect_null(rdarrow:::serialize_native_impl(x, 3L))
  }
  dir <- local_tempdir()
  ours <- file.path(dir, "ours.RData")
  theirs <- file.path(dir, "theirs.RData")
  arrow_to_rdata(df, ours, compress = "none")
  save(df, file = theirs, compress = FALSE)
  expect_true(identical(file_bytes(ours), file_bytes(theirs)))
})

test_that("a frame of many blocks is save()'s file in every compression, written in place when uncompressed", {
  # about 50 MB serialized: several 8 MiB blocks, strings crossing block
  # boundaries, compact and wrapper ALTREP columns, and (uncompressed) large
  # enough to be written around the page cache
  n <- 2e6
  x <- seq_len(n) / 3
  df <- data.frame(id = seq_len(n), x = x,
                   s = rep_len(c("alpha", NA, "\u00e9t\u00e9", "a somewhat longer string"), n),
                   f = factor(rep_len(c("u", "v", NA), n)), stringsAsFactors = FALSE)
  df$w <- x
  attr(df$w, "units") <- "m"
  expect_false(is.null(rdarrow:::serialize_native_impl(df[1:10, ], 3L)))
  dir <- local_tempdir()
  theirs <- file.path(dir, "theirs.RData")
  save(df, file = theirs, compress = FALSE)
  ref <- file_bytes(theirs)
  expect_gt(length(ref), 40e6)
  ours <- file.path(dir, "ours.RData")
  writeBin(as.raw(1:10), ours)
  for (th in c(1L, 2L)) {
    arrow_to_rdata(df, ours, compress = "none", threads = th)
    expect_true(identical(file_bytes(ours), ref), label = sprintf("uncompressed, %d threads", th))
  }
  for (comp in c("gzip", "bzip2", "xz")) {
    f <- file.path(dir, paste0("ours-", comp, ".RData"))
    arrow_to_rdata(df, f, compress = comp, compression_level = 1)
    expect_identical(aw_magic(f), comp)
    # R's connections read every member, as load() does
    con <- gzfile(f, "rb")
    back <- readBin(con, "raw", length(ref) + 1e6)
    close(con)
    expect_true(identical(back, ref), label = sprintf("%s members decompress to save()'s bytes", comp))
  }
  expect_identical(aw_load1(ours, "df"), df)
  expect_identical(aw_listing(dir), sort(c("ours.RData", "ours-gzip.RData", "ours-bzip2.RData",
                                             "ours-xz.RData", "theirs.RData")))
})
