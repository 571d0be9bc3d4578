# Workload for tools/valgrind.sh: drives every path across the Rust/R
# boundary of rdarrow with small data, so that valgrind memcheck can watch
# it in a few minutes.
#
#   R -> Rust: file paths and options, data frames serialized by R
#              (arrow_to_rdata(<data.frame>)), Arrow C streams handed back
#              in (arrow_to_rdata(<stream>)), IPC files.
#   Rust -> R: objects built by the engine (read_rdata()), listings
#              (rdata_objects()), Arrow C streams in external pointers
#              (rdata_to_arrow()), data frames built from streams
#              (as.data.frame(<stream>)), error values turned into
#              conditions, fallback objects unserialized by R.
#   Finalizers: streams dropped unconsumed, consumed, and empty stream
#              structs, each followed by gc().
#   Peers:     pyarrow (when RETICULATE_PYTHON has it) consumes rdarrow
#              streams and produces streams rdarrow consumes.
#
# Vectors are mostly longer than 16 elements, so that R allocates them with
# malloc() and valgrind sees reads and writes past their ends (R's small
# vectors live in R's own pages, which valgrind cannot police).
#
# Run it under valgrind with tools/valgrind.sh; it also runs as plain
# `R --vanilla -f tools/valgrind-workload.R`. It prints one line per step and
# a final "workload: ..." line; steps whose result differs from R's own
# (load(), readRDS()) or that fail unexpectedly are listed as failures and
# make R exit with status 3.
#
# RDARROW_VG_MAPS, if set, names a file that receives the lines of
# /proc/self/maps for rdarrow.so, so that the log parser can attribute
# stack frames by address too.

suppressPackageStartupMessages(library(rdarrow))
library(methods)

failures <- character()
steps <- 0L

note <- function(...) cat(sprintf(...), "\n", sep = "")

fail <- function(label, msg) {
  failures[length(failures) + 1L] <<- sprintf("%s: %s", label, msg)
  note("  FAIL %s: %s", label, msg)
}

# Run one step; an unexpected error is a failure, not the end of the run.
# `expr` is evaluated where step() is called (the global environment), so
# plain `<-` in it assigns globals.
step <- function(label, expr) {
  steps <<- steps + 1L
  note("step %d: %s", steps, label)
  tryCatch(force(expr), error = function(e) fail(label, paste("unexpected error:", conditionMessage(e))))
  invisible(gc(verbose = FALSE))
}

check <- function(label, ok, msg = "not as expected") {
  if (!isTRUE(ok)) fail(label, msg)
}

# `expr` must raise an rdarrow_error.
expect_rdarrow_error <- function(label, expr) {
  res <- tryCatch({
    force(expr)
    "no error"
  }, rdarrow_error = function(e) NULL, error = function(e) paste("wrong error class:", conditionMessage(e)))
  if (!is.null(res)) fail(label, res)
}

load_all <- function(f) {
  e <- new.env(parent = emptyenv())
  load(f, envir = e)
  e
}

tmp <- tempfile("rdarrow-valgrind-")
dir.create(tmp)
p <- function(...) file.path(tmp, ...)

# Where rdarrow.so is mapped, for the log parser.
maps_out <- Sys.getenv("RDARROW_VG_MAPS")
if (nzchar(maps_out) && file.exists("/proc/self/maps")) {
  m <- readLines("/proc/self/maps", warn = FALSE)
  writeLines(grep("rdarrow", m, value = TRUE, fixed = TRUE), maps_out)
}

note("rdarrow %s, engine %s", as.character(packageVersion("rdarrow")), rdarrow_engine_version())

# ---------------------------------------------------------------------------
# Objects

make_frame <- function(n) {
  set.seed(n)
  utf8 <- c("caf\u00e9", "\u65e5\u672c\u8a9e", "na\u00efve", "plain", "\u00fcber")
  latin <- iconv(c("gar\u00e7on", "d\u00e9j\u00e0", "abc"), "UTF-8", "latin1")
  chr <- rep_len(c(utf8, latin, NA), n)
  dbl <- round(rnorm(n), 3)
  dbl[seq(2, n, by = 7)] <- NA
  dbl[seq(3, n, by = 11)] <- NaN
  dbl[1] <- Inf
  int <- seq_len(n) * 3L
  int[seq(5, n, by = 9)] <- NA
  df <- data.frame(
    int = int,
    dbl = dbl,
    chr = chr,
    fct = factor(rep_len(c("lo", "mid", "hi", NA), n), levels = c("lo", "mid", "hi")),
    date = as.Date("2020-02-28") + seq_len(n) - 1L,
    time = as.POSIXct("2021-03-14 01:59:59", tz = "America/New_York") + seq_len(n) * 3601,
    lgl = rep_len(c(TRUE, FALSE, NA), n),
    stringsAsFactors = FALSE
  )
  df$lst <- I(lapply(seq_len(n), function(i) if (i %% 5 == 0) numeric() else as.double(seq_len(i %% 4))))
  df$nested <- data.frame(a = seq_len(n) / 2, b = rep_len(c("x", "y\u00e9", NA), n),
                          stringsAsFactors = FALSE)
  df
}

frame <- make_frame(300L)
tiny <- make_frame(7L)
plain_frame <- frame[c("int", "dbl", "chr", "fct", "date", "time", "lgl")]

setClass("VgPoint", representation(x = "numeric", label = "character"))
objs <- new.env()
local({
  objs$frame <- frame
  objs$tiny <- tiny
  objs$plain_frame <- plain_frame
  objs$a_list <- list(a = 1:40, b = list(c = "deep", d = NULL, e = as.raw(0:255)),
                      z = complex(real = 1:20, imaginary = -1), m = matrix(runif(60), 20))
  y <- 10
  objs$closure <- function(x) x + y
  cyc <- new.env()
  cyc$self <- cyc
  cyc$data <- 1:30
  cyc$child <- new.env(parent = cyc)
  cyc$child$up <- cyc
  objs$cycle <- cyc
  objs$s4 <- new("VgPoint", x = seq(0.5, 20, by = 0.5), label = "p\u00e9")
  objs$altrep <- 1:10
  objs$altrep_long <- seq_len(1e5)
  objs$deferred <- as.character(1:50)
  # elements built as they are read: many small vectors, and a list whose
  # closure makes R rebuild it (its other elements go back in after)
  objs$many_small <- lapply(1:300, function(i) as.numeric(seq_len(20) + i))
  objs$mixed_list <- list(f = function(x) x + 1, v = as.numeric(1:40), s = paste0("s", 1:30))
  deep <- list()
  for (i in 1:2500) deep <- list(deep)
  objs$deep <- deep
})

files <- list()
step("save() in gzip/xz/bzip2/none, ascii, version 2, saveRDS()", {
  all <- ls(objs)
  save(list = all, envir = objs, file = p("gzip.RData"), compress = "gzip")
  save(list = all, envir = objs, file = p("xz.RData"), compress = "xz")
  save(list = all, envir = objs, file = p("bzip2.RData"), compress = "bzip2")
  save(list = all, envir = objs, file = p("none.RData"), compress = FALSE)
  save(list = all, envir = objs, file = p("ascii.RData"), ascii = TRUE, compress = FALSE)
  save(list = all, envir = objs, file = p("asciigz.RData"), ascii = TRUE)
  save(list = all, envir = objs, file = p("v2.RData"), version = 2, compress = FALSE)
  saveRDS(frame, p("frame.rds"))
  saveRDS(frame, p("frame_ascii.rds"), ascii = TRUE, compress = FALSE)
  files <- list(gzip = p("gzip.RData"), xz = p("xz.RData"), bzip2 = p("bzip2.RData"),
                 none = p("none.RData"), ascii = p("ascii.RData"), asciigz = p("asciigz.RData"),
                 v2 = p("v2.RData"))
})

# ---------------------------------------------------------------------------
# Rust -> R: listings and objects

same_objects <- function(label, got, ref) {
  for (nm in c("frame", "tiny", "plain_frame", "a_list", "s4", "altrep", "altrep_long", "deferred", "deep")) {
    check(paste(label, nm), identical(got[[nm]], ref[[nm]]), "differs from load()")
  }
  check(paste(label, "closure"), is.function(got$closure) && identical(got$closure(1), 11),
        "closure does not work")
  cy <- got$cycle
  check(paste(label, "cycle"),
        is.environment(cy) && identical(cy$self, cy) && identical(cy$child$up, cy) &&
          identical(parent.env(cy$child), cy) && identical(cy$data, 1:30),
        "environment cycle not rebuilt")
}

for (nm in names(files)) {
  f <- files[[nm]]
  step(sprintf("rdata_objects() + read_rdata() on %s", nm), {
    lst <- rdata_objects(f)
    check(paste(nm, "listing"), setequal(lst$name, ls(objs)), "names differ")
    ref <- load_all(f)
    got <- read_rdata(f)
    same_objects(nm, got, ref)
    rm(got)
    gc()
    sub <- read_rdata(f, objects = c("tiny", "closure", "altrep"))
    check(paste(nm, "subset"), setequal(names(sub), c("tiny", "closure", "altrep")) &&
            identical(sub$tiny, ref$tiny), "subset differs")
  })
}

for (f in c(p("frame.rds"), p("frame_ascii.rds"))) {
  step(sprintf("rdata_objects() + read_rdata() on %s", basename(f)), {
    lst <- rdata_objects(f)
    check(basename(f), nrow(lst) == 1L && lst$nrow == 300, "listing differs")
    got <- read_rdata(f)
    check(basename(f), identical(unname(got), list(readRDS(f))), "differs from readRDS()")
  })
}

step("internal readers (decompressed bytes, reserialize)", {
  ns <- asNamespace("rdarrow")
  if (exists("rdata_decompressed_impl", ns)) {
    raw <- get("rdata_decompressed_impl", ns)(files$xz)
    check("decompressed", is.raw(raw) && length(raw) > 1000L, "not raw bytes")
  }
  if (exists("rdata_reserialize_impl", ns)) {
    raw <- get("rdata_reserialize_impl", ns)(files$none, 10000L)
    check("reserialize", is.raw(raw) || inherits(raw, "rdarrow_error_value"), "unexpected result")
  }
})

# ---------------------------------------------------------------------------
# Rust -> R: Arrow streams, and back

stream_label <- function(f, obj) sprintf("%s[%s]", basename(f), obj)

for (f in c(files$gzip, files$none, files$ascii, files$v2)) {
  for (obj in c("plain_frame", "tiny", "frame")) {
    step(sprintf("rdata_to_arrow(%s) -> as.data.frame()", stream_label(f, obj)), {
      s <- rdata_to_arrow(f, object = obj)
      capture.output(print(s))
      df <- as.data.frame(s)
      ref <- load_all(f)[[obj]]
      check(stream_label(f, obj), is.data.frame(df) && nrow(df) == nrow(ref) &&
              identical(names(df), names(ref)), "shape differs")
      check(paste(stream_label(f, obj), "columns"),
            identical(df$int, ref$int) && identical(df$dbl, ref$dbl) && identical(df$chr, ref$chr),
            "int/dbl/chr columns differ")
      expect_rdarrow_error(paste(stream_label(f, obj), "second consumption"), as.data.frame(s))
      rm(s, df)
    })
  }
}

step("rdata_to_arrow() with col_select and chunk_size", {
  s <- rdata_to_arrow(files$gzip, object = "frame", col_select = c("chr", "nested", "lst"), chunk_size = 64)
  df <- as.data.frame(s)
  check("col_select", identical(names(df), c("chr", "nested", "lst")) && nrow(df) == 300L, "wrong columns")
  s <- rdata_to_arrow(files$gzip, object = "plain_frame", col_select = c(3, 1), chunk_size = 1)
  df <- as.data.frame(s)
  check("col_select by position", identical(df$chr, plain_frame$chr) && identical(df$int, plain_frame$int),
        "wrong values")
  s <- rdata_to_arrow(p("frame.rds"), chunk_size = 100)
  check("rds stream", nrow(as.data.frame(s)) == 300L, "wrong rows")
})

step("streams dropped without consumption, then gc() (finalizer)", {
  for (i in 1:5) {
    s <- rdata_to_arrow(files$none, object = "frame", chunk_size = 50)
    rm(s)
  }
  invisible(gc())
  local({
    s <- rdata_to_arrow(files$xz, object = "tiny")
    NULL
  })
  invisible(gc())
  invisible(gc(full = TRUE))
  ns <- asNamespace("rdarrow")
  if (exists("new_stream_impl", ns)) {
    for (i in 1:3) x <- get("new_stream_impl", ns)()
    rm(x)
    invisible(gc())
  }
})

step("streams consumed, then gc()", {
  for (i in 1:3) {
    s <- rdata_to_arrow(files$gzip, object = "plain_frame", chunk_size = 100)
    df <- as.data.frame(s)
    rm(s)
    invisible(gc())
    check("consumed stream data survives gc()", identical(df$chr, plain_frame$chr), "values changed")
  }
})

# ---------------------------------------------------------------------------
# R -> Rust: writing R data files

outs <- c(gzip = "gzip", bzip2 = "bzip2", xz = "xz", none = "none")
for (cmp in names(outs)) {
  step(sprintf("arrow_to_rdata(<stream>, compress = %s) round trip", cmp), {
    out <- p(sprintf("from_stream_%s.RData", cmp))
    arrow_to_rdata(rdata_to_arrow(files$gzip, object = "frame"), out, name = "frame",
                   compress = outs[[cmp]], threads = 2)
    back <- load_all(out)$frame
    check(paste("stream", cmp), identical(back$int, frame$int) && identical(back$chr, frame$chr) &&
            identical(back$dbl, frame$dbl), "round trip differs")
    again <- read_rdata(out)$frame
    check(paste("stream", cmp, "read_rdata"), identical(again, back), "read_rdata() differs from load()")
  })
  step(sprintf("arrow_to_rdata(<data.frame>, compress = %s) round trip", cmp), {
    out <- p(sprintf("from_df_%s.RData", cmp))
    arrow_to_rdata(frame, out, name = "frame", compress = outs[[cmp]], threads = 2)
    check(paste("df", cmp), identical(load_all(out)$frame, frame), "round trip differs")
  })
}

step("arrow_to_rdata() ascii, version 2, rds", {
  out <- p("ascii_out.RData")
  arrow_to_rdata(rdata_to_arrow(files$none, object = "tiny"), out, name = "tiny", ascii = TRUE, compress = "none")
  check("ascii", identical(load_all(out)$tiny$chr, tiny$chr), "differs")
  out <- p("v2_out.RData")
  arrow_to_rdata(tiny, out, name = "tiny", version = 2L)
  check("v2", identical(load_all(out)$tiny, tiny), "differs")
  out <- p("out.rds")
  arrow_to_rdata(rdata_to_arrow(files$gzip, object = "plain_frame"), out, compress = "xz")
  check("rds", identical(readRDS(out)$chr, plain_frame$chr), "differs")
  arrow_to_rdata(tiny, p("tiny_ascii.rds"), ascii = TRUE, compress = "none")
  check("rds ascii", identical(readRDS(p("tiny_ascii.rds")), tiny), "differs")
})

step("arrow_to_rdata() of a consumed stream / wrong input", {
  s <- rdata_to_arrow(files$gzip, object = "tiny")
  invisible(as.data.frame(s))
  expect_rdarrow_error("consumed stream", arrow_to_rdata(s, p("never.RData")))
  expect_rdarrow_error("not a stream", arrow_to_rdata(list(1), p("never.RData")))
  check("no file from errors", !file.exists(p("never.RData")), "file created")
})

# ---------------------------------------------------------------------------
# Arrow IPC

for (fmt in c("file", "stream")) {
  for (cmp in c("uncompressed", "lz4", "zstd")) {
    step(sprintf("rdata_to_ipc(format = %s, compression = %s) + ipc_to_rdata()", fmt, cmp), {
      ipc <- p(sprintf("frame_%s_%s.arrow", fmt, cmp))
      rdata_to_ipc(files$gzip, ipc, object = "frame", format = fmt, compression = cmp, chunk_size = 128)
      out <- p(sprintf("from_ipc_%s_%s.RData", fmt, cmp))
      ipc_to_rdata(ipc, out, name = "frame", compress = "gzip", threads = 2)
      back <- load_all(out)$frame
      check(paste("ipc", fmt, cmp), identical(back$int, frame$int) && identical(back$chr, frame$chr) &&
              identical(back$nested$b, frame$nested$b), "round trip differs")
      check(paste("ipc", fmt, cmp, "read_rdata"), identical(read_rdata(out)$frame, back), "differs")
      ipc_to_rdata(ipc, p("from_ipc.rds"), compress = "none")
      check(paste("ipc rds", fmt, cmp), nrow(readRDS(p("from_ipc.rds"))) == 300L, "wrong rows")
    })
  }
}

step("rdata_to_dataset()", {
  if (exists("rdata_to_dataset", asNamespace("rdarrow"))) {
    ds <- p("dataset")
    rdata_to_dataset(c(files$gzip, files$none), ds, object = "plain_frame")
    check("dataset", length(list.files(ds, recursive = TRUE)) >= 1L, "no files written")
  }
})

# ---------------------------------------------------------------------------
# Errors: truncated and corrupt input, missing objects, unsupported objects

truncated <- list()
step("make truncated and corrupt files", {
  for (nm in c("gzip", "xz", "none", "ascii")) {
    f <- files[[nm]]
    bytes <- readBin(f, "raw", file.size(f))
    for (frac in c(0.05, 0.5, 0.97)) {
      t <- p(sprintf("trunc_%s_%02d.RData", nm, round(frac * 100)))
      writeBin(bytes[seq_len(floor(length(bytes) * frac))], t)
      truncated[[basename(t)]] <- t
    }
  }
  bytes <- readBin(files$none, "raw", file.size(files$none))
  set.seed(7)
  for (k in 1:4) {
    b <- bytes
    at <- sample(seq(40L, length(b)), 16)
    b[at] <- as.raw(sample(0:255, 16, replace = TRUE))
    t <- p(sprintf("corrupt_%d.RData", k))
    writeBin(b, t)
    truncated[[basename(t)]] <- t
  }
  writeBin(raw(0), p("empty.RData"))
  truncated[["empty.RData"]] <- p("empty.RData")
  writeBin(charToRaw("RDX3\nX\n"), p("header_only.RData"))
  truncated[["header_only.RData"]] <- p("header_only.RData")
  rds <- readBin(p("frame.rds"), "raw", file.size(p("frame.rds")))
  writeBin(rds[seq_len(length(rds) %/% 2)], p("trunc.rds"))
  truncated[["trunc.rds"]] <- p("trunc.rds")
})

for (nm in names(truncated)) {
  f <- truncated[[nm]]
  corrupt <- startsWith(nm, "corrupt")
  step(sprintf("errors on %s", nm), {
    # Corrupt (not truncated) files may still decode; only a crash or a
    # non-rdarrow error is wrong then.
    run <- function(label, expr) {
      res <- tryCatch({
        force(expr)
        "no error"
      }, rdarrow_error = function(e) NULL, error = function(e) paste("wrong error class:", conditionMessage(e)))
      if (!is.null(res) && !(corrupt && res == "no error")) fail(paste(nm, label), res)
    }
    run("rdata_objects", rdata_objects(f))
    run("read_rdata", read_rdata(f))
    run("rdata_to_arrow", as.data.frame(rdata_to_arrow(f, object = "plain_frame")))
    run("rdata_to_ipc", rdata_to_ipc(f, p("never.arrow"), object = "plain_frame"))
    check(paste(nm, "no IPC output"), corrupt || !file.exists(p("never.arrow")), "output file created")
    unlink(p("never.arrow"))
  })
}

step("errors on truncated IPC files", {
  ipc <- p("frame_file_uncompressed.arrow")
  bytes <- readBin(ipc, "raw", file.size(ipc))
  for (frac in c(0.1, 0.5, 0.9)) {
    t <- p(sprintf("trunc_%02d.arrow", round(frac * 100)))
    writeBin(bytes[seq_len(floor(length(bytes) * frac))], t)
    expect_rdarrow_error(basename(t), ipc_to_rdata(t, p("never.RData")))
  }
  ipc <- p("frame_stream_zstd.arrow")
  bytes <- readBin(ipc, "raw", file.size(ipc))
  writeBin(bytes[seq_len(length(bytes) %/% 2)], p("trunc_stream.arrow"))
  res <- tryCatch(ipc_to_rdata(p("trunc_stream.arrow"), p("never.RData")),
                  rdarrow_error = function(e) NULL, error = function(e) fail("trunc_stream.arrow", conditionMessage(e)))
  check("no file from IPC errors", !file.exists(p("never.RData")), "file created")
})

step("other engine errors", {
  expect_rdarrow_error("missing object", read_rdata(files$gzip, objects = "nope"))
  expect_rdarrow_error("missing stream object", rdata_to_arrow(files$gzip, object = "nope"))
  expect_rdarrow_error("closure to arrow", rdata_to_arrow(files$gzip, object = "closure"))
  expect_rdarrow_error("ambiguous object", rdata_to_arrow(files$gzip))
  expect_rdarrow_error("bad column", rdata_to_arrow(files$gzip, object = "frame", col_select = "nope"))
  expect_rdarrow_error("missing file", read_rdata(p("no-such-file.RData")))
  expect_rdarrow_error("not R data", read_rdata(p("frame_file_uncompressed.arrow")))
  old <- options(rdarrow.max_depth = 50L)
  on.exit(options(old), add = TRUE)
  expect_rdarrow_error("too deep", read_rdata(files$gzip, objects = "deep"))
  options(old)
})

# ---------------------------------------------------------------------------
# A foreign producer and consumer of the Arrow C stream: pyarrow, through
# reticulate, when RETICULATE_PYTHON names a Python with pyarrow
# (tools/valgrind.sh points it at .venv). pyarrow keeps rdarrow's buffers
# (zero copy) after R has dropped and finalized the stream; rdarrow calls
# pyarrow's callbacks, including a producer that fails half-way.

py_ok <- nzchar(Sys.getenv("RETICULATE_PYTHON")) && requireNamespace("reticulate", quietly = TRUE) &&
  isTRUE(tryCatch(reticulate::py_module_available("pyarrow"), error = function(e) FALSE))
if (!py_ok) {
  note("pyarrow steps skipped (RETICULATE_PYTHON unset, or no reticulate/pyarrow)")
} else {
  step("pyarrow consumes rdarrow streams (zero copy), R finalizes, pyarrow reads on", {
    py <- reticulate::py_run_string(paste(
      "import pyarrow as pa",
      "import gc as _gc",
      "def consume(addr):",
      "    return pa.RecordBatchReader._import_from_c(int(addr)).read_all()",
      "def summary(tab):",
      "    ints = tab.column('int').to_pylist()",
      "    chrs = tab.column('chr').to_pylist()",
      "    return [sum(i for i in ints if i is not None), sum(len(c) for c in chrs if c is not None), tab.num_rows]",
      "def reader(tab):",
      "    return pa.RecordBatchReader.from_batches(tab.schema, tab.to_batches(max_chunksize=100))",
      "def failing_reader(tab):",
      "    def gen():",
      "        for i, b in enumerate(tab.to_batches(max_chunksize=100)):",
      "            if i == 1:",
      "                raise ValueError('producer failed on purpose')",
      "            yield b",
      "    return pa.RecordBatchReader.from_batches(tab.schema, gen())",
      "def export(reader, addr):",
      "    reader._export_to_c(int(addr))",
      "def collect():",
      "    _gc.collect()",
      sep = "\n"), convert = FALSE)
    assign("py", py, envir = globalenv())
    s <- rdata_to_arrow(files$gzip, object = "plain_frame", chunk_size = 64)
    tab <- py$consume(rdarrow:::xptr_address_impl(s))
    check("pyarrow took the stream", !rdarrow:::stream_is_live_impl(s), "stream still live")
    rm(s)
    invisible(gc())
    invisible(gc())
    got <- reticulate::py_to_r(py$summary(tab))
    want <- list(sum(plain_frame$int, na.rm = TRUE), sum(nchar(plain_frame$chr), na.rm = TRUE), 300L)
    check("pyarrow reads rdarrow buffers after R's finalizer", isTRUE(all.equal(unlist(got), unlist(want))),
          paste("got", paste(unlist(got), collapse = "/")))
    assign("py_tab", tab, envir = globalenv())
    rm(tab)
    py$collect()
  })

  # pyarrow -> rdarrow: a stream exported by pyarrow into a struct rdarrow
  # allocated (as arrow's $export_to_c() does).
  py_stream <- function(reader) {
    s <- rdarrow:::new_stream_impl()
    py$export(reader, rdarrow:::xptr_address_impl(s))
    class(s) <- c("rdarrow_array_stream", "nanoarrow_array_stream")
    s
  }

  step("rdarrow consumes pyarrow streams: as.data.frame(), arrow_to_rdata()", {
    df <- as.data.frame(py_stream(py$reader(py_tab)))
    check("as.data.frame(<pyarrow stream>)", identical(df$chr, plain_frame$chr) && identical(df$int, plain_frame$int),
          "values differ")
    out <- p("from_pyarrow.RData")
    arrow_to_rdata(py_stream(py$reader(py_tab)), out, name = "x", threads = 2)
    back <- load_all(out)$x
    check("arrow_to_rdata(<pyarrow stream>)", identical(back$chr, plain_frame$chr) && identical(back$dbl, plain_frame$dbl),
          "values differ")
    rm(py_tab, envir = globalenv())
    py$collect()
    invisible(gc())
    check("R copies survive pyarrow's collection", identical(df$chr, plain_frame$chr) && identical(back$int, plain_frame$int),
          "values changed")
  })

  step("a pyarrow producer that fails half-way", {
    tab <- py$consume(rdarrow:::xptr_address_impl(rdata_to_arrow(files$none, object = "plain_frame")))
    expect_rdarrow_error("failing producer, as.data.frame", as.data.frame(py_stream(py$failing_reader(tab))))
    expect_rdarrow_error("failing producer, arrow_to_rdata",
                         arrow_to_rdata(py_stream(py$failing_reader(tab)), p("never.RData")))
    check("no file from a failing producer", !file.exists(p("never.RData")), "file created")
    s <- py_stream(py$reader(tab))
    rm(s, tab)
    invisible(gc())
    py$collect()
  })
}

# ---------------------------------------------------------------------------
# A short gctorture() pass: every allocation collects, so an R object the
# Rust side holds without protection is freed under it.

step("gctorture(): read_rdata(), as.data.frame(<stream>), arrow_to_rdata()", {
  small <- p("gct.RData")
  gct <- tiny[1:3, c("int", "dbl", "chr", "fct", "date")]
  save(gct, file = small, compress = FALSE)
  ref <- load_all(small)$gct
  gctorture(TRUE)
  got <- read_rdata(small)$gct
  s <- rdata_to_arrow(small)
  df <- as.data.frame(s)
  arrow_to_rdata(gct, p("gct_out.RData"), name = "gct", compress = "none", threads = 1)
  gctorture(FALSE)
  check("gctorture read_rdata", identical(got, ref), "differs")
  check("gctorture as.data.frame", identical(df$chr, ref$chr) && identical(df$int, ref$int), "differs")
  check("gctorture arrow_to_rdata", identical(load_all(p("gct_out.RData"))$gct, ref), "differs")
})

invisible(gc())
unlink(tmp, recursive = TRUE)
note("workload: %d steps, %d failures", steps, length(failures))
if (length(failures)) {
  note("workload failures:")
  for (f in failures) note("  %s", f)
  quit(save = "no", status = 3L)
}
