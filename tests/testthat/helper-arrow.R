# Helpers for the Arrow tests. The arrow and nanoarrow R packages are not
# used: the streams are consumed by pyarrow through reticulate, in the
# Python named by RETICULATE_PYTHON (tools/test.sh points it at .venv).

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
  used <- normalizePath(reticulate::py_config()$python, mustWork = FALSE)
  if (!identical(used, normalizePath(py, mustWork = FALSE)) &&
      !identical(reticulate::py_config()$python, py)) {
    skip(sprintf("reticulate uses %s, not RETICULATE_PYTHON=%s", used, py))
  }
  invisible(TRUE)
}

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

# Small Python functions; they return plain Python values that reticulate
# converts (addresses as strings, so no precision is lost).
py_fun <- function(name) {
  if (is.null(arrow_env$py)) {
    code <- paste(
      "import pyarrow as pa",
      "import pyarrow.compute as pc",
      "def buffer_addresses(arr):",
      "    return [None if b is None else str(b.address) for b in arr.buffers()]",
      "def type_str(tab, name):",
      "    return str(tab.schema.field(name).type)",
      "def field_names(tab):",
      "    return [str(n) for n in tab.schema.names]",
      "def r_metadata(schema):",
      "    md = schema.metadata",
      "    if md is None or b'r' not in md:",
      "        return None",
      "    return md[b'r'].decode('latin-1')",
      "def as_strings(col):",
      "    return col.cast(pa.string()).to_pylist()",
      "def int_strings(col):",
      "    t = col.type",
      "    if pa.types.is_time32(t) or pa.types.is_date32(t):",
      "        col = col.cast(pa.int32())",
      "    else:",
      "        col = col.cast(pa.int64())",
      "    return col.cast(pa.string()).to_pylist()",
      "def batch_sizes(reader):",
      "    sizes = []",
      "    while True:",
      "        try:",
      "            b = reader.read_next_batch()",
      "        except StopIteration:",
      "            break",
      "        sizes.append(int(b.num_rows))",
      "    return sizes",
      "def null_positions(col):",
      "    return [int(i) for i in pc.indices_nonzero(pc.is_null(col)).to_pylist()]",
      "def nan_positions(col):",
      "    m = pc.fill_null(pc.is_nan(col), False)",
      "    return [int(i) for i in pc.indices_nonzero(m).to_pylist()]",
      "def joined_strings(col, na):",
      "    return '\\x1f'.join(na if x is None else x for x in col.to_pylist())",
      "def dump_values(col, path):",
      "    # the values buffer of a single-chunk primitive column, to a file",
      "    arr = col.combine_chunks() if hasattr(col, 'combine_chunks') else col",
      "    w = arr.type.bit_width // 8",
      "    buf = arr.buffers()[1]",
      "    with open(path, 'wb') as fh:",
      "        fh.write(buf.to_pybytes()[arr.offset * w:(arr.offset + len(arr)) * w])",
      "    return len(arr)",
      "def dict_info(col):",
      "    arr = col.combine_chunks() if hasattr(col, 'combine_chunks') else col",
      "    return {'index': str(arr.type.index_type), 'value': str(arr.type.value_type),",
      "            'ordered': bool(arr.type.ordered), 'levels': arr.dictionary.to_pylist(),",
      "            'indices': arr.indices.to_pylist()}",
      sep = "\n"
    )
    # A module of its own, registered so that reticulate can import it.
    sys <- reticulate::import("sys", convert = FALSE)
    types <- reticulate::import("types", convert = FALSE)
    builtins <- reticulate::import_builtins(convert = FALSE)
    mod <- types$ModuleType("rdarrow_test_helpers")
    builtins$exec(code, mod$`__dict__`)
    sys$modules$`__setitem__`("rdarrow_test_helpers", mod)
    arrow_env$py <- reticulate::import("rdarrow_test_helpers", convert = TRUE)
  }
  arrow_env$py[[name]]
}

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
  f <- withr::local_tempfile(fileext = ".rda", .local_envir = .env)
  e <- list2env(objs, envir = new.env(parent = emptyenv()))
  save(list = names(objs), envir = e, file = f)
  f
}

save_rds <- function(x, .env = parent.frame()) {
  f <- withr::local_tempfile(fileext = ".rds", .local_envir = .env)
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
