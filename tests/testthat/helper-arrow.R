# Helpers for the Arrow tests, both directions: R data -> Arrow
# (rdata_to_arrow(), rdata_to_ipc(), datasets, the command line) and
# Arrow -> R data (arrow_to_rdata(), ipc_to_rdata(), as.data.frame() of a
# stream). The arrow and nanoarrow R packages are not used: Arrow data is
# made and inspected by pyarrow, through reticulate, in the Python named by
# RETICULATE_PYTHON (tools/test.sh points it at .venv).
#
# Generic file helpers (local_tempdir(), local_tempfile(), file_bytes(),
# load_objects(), double_bits()) are in helper-roundtrip.R.

skip_if_no_pyarrow <- function() {
  skip_if_not_installed("reticulate")
  py <- Sys.getenv("RETICULATE_PYTHON")
  if (!nzchar(py)) {
    skip("RETICULATE_PYTHON is not set (tools/test.sh sets it to .venv/bin/python)")
  }
  if (!isTRUE(reticulate::py_module_available("pyarrow"))) {
    skip("pyarrow is not available in RETICULATE_PYTHON")
  }
  # reticulate must not have picked another Python.
  used <- reticulate::py_config()$python
  if (!identical(normalizePath(used, mustWork = FALSE), normalizePath(py, mustWork = FALSE)) &&
      !identical(used, py)) {
    skip(sprintf("reticulate uses %s, not RETICULATE_PYTHON=%s", used, py))
  }
  invisible(TRUE)
}

# ---------------------------------------------------------------------------
# Python side

arrow_env <- new.env(parent = emptyenv())

# pyarrow, without conversion (Python ints must stay Python ints).
py_pa <- function() {
  if (is.null(arrow_env$pa)) {
    arrow_env$pa <- reticulate::import("pyarrow", convert = FALSE)
  }
  arrow_env$pa
}

py_pc <- function() {
  if (is.null(arrow_env$pc)) {
    arrow_env$pc <- reticulate::import("pyarrow.compute", convert = FALSE)
  }
  arrow_env$pc
}

# The Python helper module. The reading-side functions return plain Python
# values (addresses as strings, so no precision is lost) that py_fun()
# converts; the writing-side ones return Python objects that aw_py() leaves
# unconverted.
arrow_py_code <- '
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.compute as pc
import struct, decimal, datetime, zlib, bz2, lzma

# ---- reading side: inspecting what rdarrow exported --------------------

def buffer_addresses(arr):
    return [None if b is None else str(b.address) for b in arr.buffers()]

def type_str(tab, name):
    return str(tab.schema.field(name).type)

def field_names(tab):
    return [str(n) for n in tab.schema.names]

def r_metadata(schema):
    md = schema.metadata
    if md is None or b"r" not in md:
        return None
    return md[b"r"].decode("latin-1")

def as_strings(col):
    return col.cast(pa.string()).to_pylist()

def int_strings(col):
    t = col.type
    if pa.types.is_time32(t) or pa.types.is_date32(t):
        col = col.cast(pa.int32())
    else:
        col = col.cast(pa.int64())
    return col.cast(pa.string()).to_pylist()

def batch_sizes(reader):
    sizes = []
    while True:
        try:
            b = reader.read_next_batch()
        except StopIteration:
            break
        sizes.append(int(b.num_rows))
    return sizes

def null_positions(col):
    return [int(i) for i in pc.indices_nonzero(pc.is_null(col)).to_pylist()]

def nan_positions(col):
    m = pc.fill_null(pc.is_nan(col), False)
    return [int(i) for i in pc.indices_nonzero(m).to_pylist()]

def joined_strings(col, na):
    return "\\x1f".join(na if x is None else x for x in col.to_pylist())

def dump_values(col, path):
    # the values buffer of a single-chunk primitive column, to a file
    arr = col.combine_chunks() if hasattr(col, "combine_chunks") else col
    w = arr.type.bit_width // 8
    buf = arr.buffers()[1]
    with open(path, "wb") as fh:
        fh.write(buf.to_pybytes()[arr.offset * w:(arr.offset + len(arr)) * w])
    return len(arr)

def dict_info(col):
    arr = col.combine_chunks() if hasattr(col, "combine_chunks") else col
    return {"index": str(arr.type.index_type), "value": str(arr.type.value_type),
            "ordered": bool(arr.type.ordered), "levels": arr.dictionary.to_pylist(),
            "indices": arr.indices.to_pylist()}

# ---- writing side: building Arrow data for rdarrow to convert -----------

class PerBatch(list):
    """A column given batch by batch as ready-made arrays (no split, no slice)."""

NS = {"pa": pa, "pc": pc, "D": decimal.Decimal, "datetime": datetime,
      "PerBatch": PerBatch}

def f16(vals):
    n = len(vals)
    data = pa.py_buffer(struct.pack("<%de" % n, *[0.0 if v is None else v for v in vals]))
    nulls = sum(v is None for v in vals)
    validity = None
    if nulls:
        validity = pa.array([v is not None for v in vals], pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(pa.float16(), n, [validity, data], null_count=nulls)

def make_array(t, vals, sliced):
    vals = list(vals)
    if sliced:
        # pad on both sides and slice, so that the array has offset 1
        pad = next((v for v in vals if v is not None), None)
        return make_array(t, [pad] + vals + [pad], False).slice(1, len(vals))
    if t == pa.float16():
        return f16(vals)
    if pa.types.is_run_end_encoded(t):
        return pc.run_end_encode(pa.array(vals, t.value_type), run_end_type=t.run_end_type)
    return pa.array(vals, t)

def default_sizes(n):
    # a batch of 2 rows, an empty batch, a batch of 1 row, then the rest
    return [2, 0, 1, n - 3] if n >= 4 else [n]

def build(cols, sizes=None, sliced=True):
    """cols: list of [name, type expression, values expression].
    Returns (schema, batches)."""
    fields, data = [], []
    for name, texpr, vexpr in cols:
        v = eval(vexpr, NS)
        if isinstance(v, PerBatch):
            t = v[0].type
        else:
            t = eval(texpr, NS)
        fields.append(pa.field(name, t))
        data.append((t, v))
    schema = pa.schema(fields)
    if isinstance(data[0][1], PerBatch):
        nb = len(data[0][1])
        batches = [pa.RecordBatch.from_arrays([d[1][i] for d in data], schema=schema)
                   for i in range(nb)]
        return (schema, batches)
    n = len(data[0][1])
    if sizes is None:
        sizes = default_sizes(n)
    sizes = [int(s) for s in sizes]
    assert sum(sizes) == n
    batches, start = [], 0
    for sz in sizes:
        arrays = [make_array(t, v[start:start + sz], sliced) for t, v in data]
        batches.append(pa.RecordBatch.from_arrays(arrays, schema=schema))
        start += sz
    return (schema, batches)

def empty(cols):
    """A schema and no batches at all."""
    schema = pa.schema([pa.field(name, eval(texpr, NS)) for name, texpr in cols])
    return (schema, [])

def rename_nul(tab):
    """The table with "NUL" in column names replaced by a NUL byte."""
    schema, batches = tab
    names = [n.replace("NUL", chr(0)) for n in schema.names]
    new = [b.rename_columns(names) for b in batches]
    return (new[0].schema, new)

def reader(tab):
    schema, batches = tab
    return pa.RecordBatchReader.from_batches(schema, batches)

def failing_reader(tab, after):
    """A reader whose producer raises after `after` batches."""
    schema, batches = tab
    def gen():
        for i, b in enumerate(batches):
            if i == after:
                raise ValueError("producer failed on purpose")
            yield b
        raise ValueError("producer failed on purpose")
    return pa.RecordBatchReader.from_batches(schema, gen())

def write_ipc(tab, path, fmt="file", compression=None):
    schema, batches = tab
    opts = ipc.IpcWriteOptions(compression=compression, emit_dictionary_deltas=True)
    if fmt == "file":
        # the file format needs one dictionary per column for the whole file
        t = pa.Table.from_batches(batches, schema=schema).unify_dictionaries()
        bs = t.to_batches()
        w = ipc.new_file(path, schema, options=opts)
    else:
        bs = batches
        w = ipc.new_stream(path, schema, options=opts)
    for b in bs:
        w.write_batch(b)
    w.close()
    return path

def ipc_stream_stats(path):
    with ipc.open_stream(path) as r:
        r.read_all()
        st = r.stats
        return {"deltas": int(st.num_dictionary_deltas),
                "replaced": int(st.num_replaced_dictionaries)}

def num_rows(tab):
    return int(sum(b.num_rows for b in tab[1]))

def members(path, kind):
    """Uncompressed sizes of the concatenated gzip members / bzip2 streams /
    xz streams of a file."""
    with open(path, "rb") as fh:
        data = fh.read()
    sizes = []
    while data:
        if kind == "gzip":
            d = zlib.decompressobj(31)
            out = d.decompress(data) + d.flush()
        elif kind == "bzip2":
            d = bz2.BZ2Decompressor()
            out = d.decompress(data)
        else:
            d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
            out = d.decompress(data)
        if not d.eof:
            raise ValueError("truncated %s member" % kind)
        sizes.append(len(out))
        data = d.unused_data
    return sizes
'

# The helper module, registered under a name of its own (so that reticulate
# can import it) the first time it is needed; `convert` as for
# reticulate::import().
arrow_py_module <- function(convert) {
  key <- if (convert) "mod_convert" else "mod"
  if (is.null(arrow_env[[key]])) {
    if (is.null(arrow_env$registered)) {
      sys <- reticulate::import("sys", convert = FALSE)
      types <- reticulate::import("types", convert = FALSE)
      builtins <- reticulate::import_builtins(convert = FALSE)
      mod <- types$ModuleType("rdarrow_test_helpers")
      builtins$exec(arrow_py_code, mod$`__dict__`)
      sys$modules$`__setitem__`("rdarrow_test_helpers", mod)
      arrow_env$registered <- TRUE
    }
    arrow_env[[key]] <- reticulate::import("rdarrow_test_helpers", convert = convert)
  }
  arrow_env[[key]]
}

# A helper function whose results are converted to R.
py_fun <- function(name) arrow_py_module(convert = TRUE)[[name]]

# The helper module, results not converted (they stay Python objects).
aw_py <- function() arrow_py_module(convert = FALSE)

# ---------------------------------------------------------------------------
# R data -> Arrow: what rdarrow exports, seen from pyarrow

# Import an rdarrow stream into pyarrow (consumes it).
py_import_reader <- function(s) {
  addr <- reticulate::py_eval(sprintf("int(%s)", rdarrow:::xptr_address_impl(s)),
                              convert = FALSE)
  py_pa()$RecordBatchReader$`_import_from_c`(addr)
}

py_import <- function(s) {
  py_import_reader(s)$read_all()
}

# Save objects (named arguments) to a temporary .rda file; returns the path.
save_rda <- function(..., .env = parent.frame()) {
  objs <- list(...)
  f <- local_tempfile(".rda", envir = .env)
  e <- list2env(objs, envir = new.env(parent = emptyenv()))
  save(list = names(objs), envir = e, file = f)
  f
}

save_rds <- function(x, .env = parent.frame()) {
  f <- local_tempfile(".rds", envir = .env)
  saveRDS(x, f)
  f
}

# Save `df` as object "x" and convert it to a pyarrow Table.
to_py_table <- function(df, ..., .env = parent.frame()) {
  f <- save_rda(x = df, .env = .env)
  py_import(rdata_to_arrow(f, object = "x", ...))
}

py_type <- function(tab, name) py_fun("type_str")(tab, name)

py_names <- function(tab) unlist(py_fun("field_names")(tab))

py_nrow <- function(tab) reticulate::py_to_r(tab$num_rows)

# Column values as an R vector (NULL -> NA), via to_pylist().
py_values <- function(tab, name, na = NA) {
  col <- if (is.numeric(name)) tab$column(as.integer(name)) else tab$column(name)
  x <- reticulate::py_to_r(col$to_pylist())
  x <- lapply(x, function(v) if (is.null(v)) na else v)
  unlist(x)
}

# Column values cast to strings by pyarrow (NULL -> NA_character_).
py_strings <- function(tab, name) {
  x <- py_fun("as_strings")(tab$column(name))
  vapply(x, function(v) if (is.null(v)) NA_character_ else v, "")
}

# Integer-like columns (date32, timestamp, duration, time) as doubles.
py_ints <- function(tab, name) {
  x <- py_fun("int_strings")(tab$column(name))
  as.numeric(vapply(x,
                    function(v) if (is.null(v)) NA_character_ else v, ""))
}

py_null_positions <- function(tab, name) {
  as.integer(unlist(py_fun("null_positions")(tab$column(name))))
}

py_nan_positions <- function(tab, name) {
  as.integer(unlist(py_fun("nan_positions")(tab$column(name))))
}

# The "r" schema metadata, unserialized (NULL when absent).
py_r_metadata <- function(schema) {
  x <- py_fun("r_metadata")(schema)
  if (is.null(x)) return(NULL)
  unserialize(charToRaw(x))
}

py_validate <- function(tab) {
  tab$validate(full = TRUE)
  invisible(TRUE)
}

# ---------------------------------------------------------------------------
# Arrow -> R data: tables made by pyarrow, converted by rdarrow

# A pyarrow table as (schema, batches), from columns given as
# name = c(<pyarrow type expression>, <Python values expression>).
# By default the rows are split into batches of 2, 0, 1 and the rest rows,
# each array sliced out of a bigger one (non-zero offsets). The expressions
# see `pa`, `pc`, `D` (decimal.Decimal), `datetime` and `PerBatch` (a list
# of ready-made arrays, one per batch).
aw_table <- function(..., .sizes = NULL, .sliced = TRUE) {
  cols <- list(...)
  spec <- lapply(names(cols), function(nm) list(nm, cols[[nm]][[1]], cols[[nm]][[2]]))
  sizes <- if (is.null(.sizes)) NULL else as.list(as.integer(.sizes))
  aw_py()$build(spec, sizes, .sliced)
}

# A schema with no batches: columns given as name = <type expression>.
aw_empty_table <- function(...) {
  cols <- list(...)
  aw_py()$empty(lapply(names(cols), function(nm) list(nm, cols[[nm]])))
}

aw_nrow <- function(tab) reticulate::py_to_r(aw_py()$num_rows(tab))

# Export a pyarrow RecordBatchReader into a fresh rdarrow stream object.
aw_export <- function(reader) {
  s <- rdarrow:::new_stream_impl()
  addr <- reticulate::py_eval(sprintf("int(%s)", rdarrow:::xptr_address_impl(s)),
                              convert = FALSE)
  reader$`_export_to_c`(addr)
  class(s) <- c("rdarrow_array_stream", "nanoarrow_array_stream")
  s
}

# A fresh stream over the table (a table can give any number of them).
aw_stream <- function(tab) aw_export(aw_py()$reader(tab))

# A stream whose producer fails after `after` batches.
aw_failing_stream <- function(tab, after = 1L) {
  aw_export(aw_py()$failing_reader(tab, as.integer(after)))
}

# Write the table as an Arrow IPC file ("file") or stream ("stream");
# compression NULL, "lz4" or "zstd".
aw_write_ipc <- function(tab, path, format = "file", compression = NULL) {
  aw_py()$write_ipc(tab, path, format, compression)
  invisible(path)
}

# How many dictionary deltas and replacements an IPC stream holds.
aw_ipc_stream_stats <- function(path) {
  reticulate::py_to_r(aw_py()$ipc_stream_stats(path))
}

aw_members <- function(path, kind) {
  as.numeric(unlist(reticulate::py_to_r(aw_py()$members(path, kind))))
}

# Run `expr`; on error, record a failure labelled `label` and return NULL.
aw_try <- function(expr, label) {
  tryCatch(expr, error = function(e) {
    testthat::fail(sprintf("%s failed: %s", label, conditionMessage(e)))
    NULL
  })
}

# Convert the table every way the package offers and check they agree:
# as.data.frame(<stream>) is the reference; arrow_to_rdata() to .RData and
# .rds, and ipc_to_rdata() of an IPC file and of an lz4 IPC stream must
# give an identical() data frame. Returns the reference data frame.
# `file_format = FALSE` leaves out the IPC file (for tables whose batches
# have dictionaries that an IPC file cannot hold, it unifies them, which is
# fine: the result must be the same).
aw_convert <- function(tab, ways = c("rdata", "rds", "ipc_file", "ipc_stream")) {
  df <- as.data.frame(aw_stream(tab))
  dir <- local_tempdir()
  got <- list()
  if ("rdata" %in% ways) {
    got[["arrow_to_rdata() -> .RData"]] <- aw_try({
      f <- file.path(dir, "x.RData")
      arrow_to_rdata(aw_stream(tab), f, name = "x", threads = 1)
      aw_load1(f, "x")
    }, "arrow_to_rdata() -> .RData")
  }
  if ("rds" %in% ways) {
    got[["arrow_to_rdata() -> .rds"]] <- aw_try({
      f <- file.path(dir, "x.rds")
      arrow_to_rdata(aw_stream(tab), f, threads = 1)
      readRDS(f)
    }, "arrow_to_rdata() -> .rds")
  }
  if ("ipc_file" %in% ways) {
    got[["ipc_to_rdata(<IPC file>)"]] <- aw_try({
      ipc <- aw_write_ipc(tab, file.path(dir, "fromfile.arrow"), "file")
      f <- file.path(dir, "fromfile.RData")
      ipc_to_rdata(ipc, f, threads = 1)
      aw_load1(f, "fromfile")
    }, "ipc_to_rdata(<IPC file>)")
  }
  if ("ipc_stream" %in% ways) {
    got[["ipc_to_rdata(<lz4 IPC stream>)"]] <- aw_try({
      ipc <- aw_write_ipc(tab, file.path(dir, "fromstream.arrows"), "stream", "lz4")
      f <- file.path(dir, "fromstream.RData")
      ipc_to_rdata(ipc, f, threads = 1)
      aw_load1(f, "fromstream")
    }, "ipc_to_rdata(<lz4 IPC stream>)")
  }
  for (way in names(got)) {
    if (is.null(got[[way]])) next
    testthat::expect(
      identical(got[[way]], df, num.eq = FALSE),
      sprintf("%s differs from as.data.frame(<stream>):\n%s", way,
              paste(utils::head(format(waldo::compare(got[[way]], df,
                                                      x_arg = way,
                                                      y_arg = "as.data.frame")), 30),
                    collapse = "\n"))
    )
  }
  df
}

# The column of a converted table, after checking the data frame's shape.
aw_column <- function(tab, name, ...) {
  df <- aw_convert(tab, ...)
  testthat::expect_s3_class(df, "data.frame")
  testthat::expect_identical(nrow(df), aw_nrow(tab))
  testthat::expect_true(name %in% names(df), label = sprintf("column '%s' present", name))
  df[[name]]
}

# A value without its attributes (for list columns, whose class arrow R
# sets to its own list classes).
aw_bare <- function(x) {
  attributes(x) <- NULL
  x
}

# save() `obj` as the single object "x" of `dir`/`file`; returns the path.
aw_save_x <- function(obj, dir, file = "src.RData", compress = FALSE) {
  f <- file.path(dir, file)
  e <- new.env(parent = emptyenv())
  assign("x", obj, envir = e)
  save(list = "x", envir = e, file = f, compress = compress)
  f
}

# load() a file that must hold exactly one object called `name`.
aw_load1 <- function(file, name = "x") {
  objs <- load_objects(file)
  testthat::expect_identical(names(objs), name, label = paste("objects in", basename(file)))
  objs[[name]]
}

# Everything in a folder, hidden files included.
aw_listing <- function(dir) sort(list.files(dir, all.files = TRUE, no.. = TRUE))

# Leftover temporary files of an atomic write (".<name>...tmp").
aw_temp_leftovers <- function(dir) {
  grep("^\\..*\\.tmp$", aw_listing(dir), value = TRUE)
}

# The first bytes of a file after decompression (gzfile() reads gzip,
# bzip2, xz and uncompressed files alike).
aw_header <- function(file, n = 5L) {
  con <- gzfile(file, "rb")
  on.exit(close(con))
  readBin(con, "raw", n)
}

aw_magic <- function(file) {
  b <- readBin(file, "raw", 6L)
  if (identical(b[1:2], as.raw(c(0x1f, 0x8b)))) return("gzip")
  if (identical(b[1:3], charToRaw("BZh"))) return("bzip2")
  if (identical(b[1:6], as.raw(c(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)))) return("xz")
  "none"
}

# Strict identical(): doubles compared bit for bit except NaN payloads
# (num.eq = FALSE tells -0 from 0).
aw_identical <- function(got, expected) {
  identical(got, expected, num.eq = FALSE)
}

expect_aw_identical <- function(got, expected, label = "result") {
  testthat::expect(
    aw_identical(got, expected),
    sprintf("%s is not identical() to the original:\n%s", label,
            paste(utils::head(format(waldo::compare(got, expected, x_arg = "got",
                                                    y_arg = "expected")), 30),
                  collapse = "\n"))
  )
  invisible(got)
}
