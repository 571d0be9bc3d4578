#' Convert an object of an R data file to an Arrow stream
#'
#' Reads a data frame (or a vector, factor or matrix) from an
#' `.RData`/`.rda` or `.rds` file in Rust and hands it over as an Arrow C
#' stream, without a copy: the Arrow arrays wrap the buffers the file was
#' decoded into. The result can be consumed once by
#' `arrow::as_arrow_table()`, `arrow::as_record_batch_reader()`, nanoarrow,
#' or any other reader of the Arrow C stream interface.
#'
#' @section Type mapping: logical -> boolean; integer -> int32; double ->
#'   float64 (`NA` -> null, `NaN` stays NaN); character -> utf8 (transcoded
#'   to UTF-8; large_utf8 beyond 2 GiB); factor -> dictionary with the
#'   narrowest index (ordered for ordered factors); Date -> date32;
#'   POSIXct -> timestamp with the `tzone` attribute as time zone (the
#'   session's zone when missing, as arrow R does); difftime -> duration;
#'   hms -> time32/time64; integer64 -> int64; raw -> uint8; complex ->
#'   struct of re/im; list -> list of the elements' common type;
#'   data-frame columns -> struct. A list whose elements differ in type:
#'   a named one -> a struct of one row (a field per element), an unnamed
#'   one (or a list column whose rows differ) -> a dense union of one
#'   list child per type. An S4 object -> a struct of its slots (one whose
#'   type is a vector -> that vector), converted when named in `object`.
#'   Parquet keeps a union as a struct of its type ids (`__union_type`)
#'   and its children. Functions, calls, formulas and environments are
#'   refused as objects, and travel in the metadata inside data.
#'
#'   Every value keeps its bits: a time takes the coarsest unit (seconds,
#'   milli-, micro-, nanoseconds) at which every value comes back exactly,
#'   and when none does (fractional Dates, full-precision POSIXct), its
#'   doubles go as float64 with the class kept in the metadata, so arrow R
#'   still shows the original class. Other attributes (classes, labels,
#'   character row names, names, dimensions, ...) go into the schema
#'   metadata under the key `"r"` in arrow R's format, so `as.data.frame()`
#'   in arrow restores them, and [arrow_to_rdata()] gives back an object
#'   `identical()` to the original: a vector, matrix, array, `ts` or
#'   `table` comes back as itself (a matrix goes as one column per matrix
#'   column, any other vector as one column named after the object).
#'
#'   A data frame whose row names disagree in length with its columns is
#'   converted by its columns, as arrow R does, with a warning.
#' @param file Where the R data is: the path of an `.RData`/`.rda`/`.rds`
#'   file; a package's lazy-load data base (its `.rdb`, its `.rdx`, or the
#'   path they share, such as `system.file("data", "Rdata", package =
#'   "datasets")`); an `http://` or `https://` URL (read as a stream, with
#'   `getOption("timeout")` seconds allowed for connecting and for each
#'   read); a raw vector ([serialize()] output, compressed or not, or a
#'   file's bytes); or a connection (such as `gzcon(url(...))`, `file()` or
#'   `rawConnection()`), read to its end (one naming a file or URL not read from yet is read from it, so that every check of its compression is made; a `gzcon()` that reports damage is an error).
#' @param object Name of the object to convert; `NULL` takes the file's
#'   only data frame, else its only object that converts (a vector,
#'   factor, matrix, ...); an error lists the candidates otherwise. An
#'   object nested in lists or slots is named by its path (`"lst$a"`,
#'   `"lst[[2]]"`, `"pbmc@meta.data"`)
#'   or its parts (`c("lst", "a")`, `list("lst", 2)`); see
#'   [rdata_objects()] with `recursive = TRUE`. In an `.rds` file, whose
#'   one object is named after the file, a path may start inside that
#'   object: `"b$c"` as well as `"name$b$c"`.
#' @param col_select Column names or positions to keep, or `NULL` for all.
#' @param chunk_size Rows per record batch; `NULL` for a single batch.
#'   Without it the whole table is converted at once and handed over
#'   without a copy. With it, a data frame is converted batch by batch as
#'   the consumer reads the stream (`arrow::as_record_batch_reader()`,
#'   pyarrow's `RecordBatchReader`): each batch's values are read back from
#'   the file when it is asked for (a compressed file's stream is spilled
#'   to a temporary file, removed at once), so memory holds about one batch
#'   however large the file.
#' @return An external pointer of class
#'   `c("rdarrow_array_stream", "nanoarrow_array_stream")` to an Arrow C
#'   stream, released by R's garbage collector if nobody consumes it.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' save(cars2, file = f)
#' s <- rdata_to_arrow(f)
#' s
#' if (requireNamespace("arrow", quietly = TRUE)) {
#'   arrow::as_arrow_table(s)
#' }
#' @inheritParams rdata_objects
#' @export
rdata_to_arrow <- function(file, object = NULL, col_select = NULL, chunk_size = NULL,
                           storage_options = NULL, salvage = FALSE) {
  storage <- storage_arg(storage_options)
  salvage <- salvage_arg(salvage)
  src <- data_source(file, storage = storage)
  on.exit(src$done(), add = TRUE)
  path <- src$path
  args <- check_arrow_args(object, col_select, chunk_size)
  res <- check_engine(rdata_to_arrow_impl(path, args$object, args$col_select,
                                          args$chunk_size, session_tz(), src$name,
                                          read_args(storage, salvage = salvage)),
                      file = src$label)
  engine_warnings(res$warnings)
  s <- res$stream
  attr(s, "rdarrow_object") <- res$object
  attr(s, "rdarrow_nrow") <- res$nrow
  attr(s, "rdarrow_schema") <- res$schema
  attr(s, "rdarrow_shape") <- res$shape
  class(s) <- c("rdarrow_array_stream", "nanoarrow_array_stream")
  s
}

#' Write an object of an R data file as an Arrow IPC file or stream
#'
#' Converts as [rdata_to_arrow()] does, then writes the Arrow IPC file
#' format (also known as Feather version 2) or the IPC stream format. The
#' file appears only once it is complete.
#'
#' @inheritParams rdata_to_arrow
#' @param sink Path of the file to write, or an object store URL
#'   (`s3://bucket/key.arrow`), uploaded in parts, appearing only complete.
#' @param format `"file"` (random-access IPC file, Feather v2) or
#'   `"stream"`.
#' @param compression Buffer compression: `"uncompressed"`, `"lz4"` or
#'   `"zstd"`.
#' @param chunk_size Rows per record batch (by default 65536, as
#'   `arrow::write_feather()` writes); `NULL` for as many as `memory`
#'   allows. A data frame is converted batch by batch, its values read back
#'   from the file, so memory holds about one batch (see
#'   [rdata_to_parquet()]).
#' @param memory About how much memory (bytes) the conversion may use; by
#'   default the option `rdarrow.memory`, else 1 GiB.
#' @return `sink`, invisibly.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' save(cars2, file = f)
#' out <- file.path(tempdir(), "cars2.arrow")
#' rdata_to_ipc(f, out)
#' file.size(out)
#' @export
rdata_to_ipc <- function(file, sink, object = NULL,
                         format = c("file", "stream"),
                         compression = c("uncompressed", "lz4", "zstd"),
                         chunk_size = 65536L, col_select = NULL,
                         memory = getOption("rdarrow.memory", 2^30), storage_options = NULL,
                         salvage = FALSE) {
  storage <- storage_arg(storage_options)
  salvage <- salvage_arg(salvage)
  src <- data_source(file, storage = storage)
  on.exit(src$done(), add = TRUE)
  path <- src$path
  check_sink(sink)
  format <- match.arg(format)
  compression <- match.arg(compression)
  args <- check_arrow_args(object, col_select, chunk_size)
  warnings <- check_engine(rdata_to_ipc_impl(path, path.expand(sink), args$object, args$col_select, format,
                                             compression, args$chunk_size, check_memory(memory),
                                             session_tz(), src$name, read_args(storage, salvage = salvage)),
                           file = src$label)
  engine_warnings(warnings)
  invisible(sink)
}

#' Write an object of an R data file as a Parquet file
#'
#' Converts as [rdata_to_arrow()] does and writes Parquet, the format of
#' data lakes, DuckDB, Spark and `arrow::write_dataset()`. The Arrow schema,
#' with the `"r"` metadata that carries R's classes and attributes, is
#' stored in the file as arrow stores it, so `arrow::read_parquet()`
#' restores the data frame as it does for files `arrow::write_parquet()`
#' wrote, and [parquet_to_rdata()] gives back an object `identical()` to
#' the original.
#'
#' Memory stays bounded whatever the file's size: a data frame is
#' converted one row group at a time, its columns' values read back from
#' the file (a compressed file's decompressed data is first copied to a
#' temporary file beside `sink`, removed when done), so about one row group
#' of every column is held, sized to fit `memory`. The columns of a row
#' group are converted and encoded on all cores. Other objects (vectors,
#' matrices) and list columns are converted in memory. The file appears
#' only once it is complete.
#'
#' @inheritParams rdata_to_arrow
#' @param sink Path of the Parquet file to write. A name ending in
#'   `.arrow`, `.feather` or `.ipc` is an error pointing to
#'   [rdata_to_ipc()].
#' @param compression `"zstd"` (the default), `"snappy"`, `"gzip"`,
#'   `"lz4"` (LZ4 raw) or `"uncompressed"`.
#' @param compression_level The codec's level (zstd 1 to 22, gzip 0 to 9);
#'   `NULL` for the codec's default.
#' @param row_group_size Rows per row group; `NULL` for up to 1,048,576 rows
#'   (arrow's default), fewer when `memory` asks.
#' @param memory About how much memory (bytes) the conversion may use; by
#'   default the option `rdarrow.memory`, else 1 GiB.
#' @return `sink`, invisibly.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' save(cars2, file = f)
#' out <- file.path(tempdir(), "cars2.parquet")
#' rdata_to_parquet(f, out)
#' if (requireNamespace("arrow", quietly = TRUE)) {
#'   arrow::read_parquet(out)
#' }
#' @export
rdata_to_parquet <- function(file, sink, object = NULL, col_select = NULL,
                             compression = c("zstd", "snappy", "gzip", "lz4", "uncompressed"),
                             compression_level = NULL, row_group_size = NULL,
                             memory = getOption("rdarrow.memory", 2^30), storage_options = NULL,
                             salvage = FALSE) {
  storage <- storage_arg(storage_options)
  salvage <- salvage_arg(salvage)
  src <- data_source(file, storage = storage)
  on.exit(src$done(), add = TRUE)
  path <- src$path
  check_sink(sink)
  compression <- match.arg(compression)
  if (!is.null(compression_level) && (!is.numeric(compression_level) ||
      length(compression_level) != 1L || is.na(compression_level))) {
    abort_usage("`compression_level` must be NULL or a number.")
  }
  args <- check_arrow_args(object, col_select, row_group_size)
  level <- if (is.null(compression_level)) NULL else as.double(compression_level)
  warnings <- check_engine(rdata_to_parquet_impl(path, path.expand(sink), args$object, args$col_select,
                                                 compression, level, args$chunk_size,
                                                 check_memory(memory), session_tz(),
                                                 src$name, read_args(storage, salvage = salvage)),
                           file = src$label)
  engine_warnings(warnings)
  invisible(sink)
}

#' Write an R array of an R data file as an Arrow Tensor message
#'
#' Writes one matrix or array (integer, logical, double, complex or raw; a
#' vector without `dim` is one dimension) as an Arrow Tensor message, the
#' IPC message that carries one n-dimensional array. The values are
#' written as R holds them, with R's column-major strides: no transpose.
#' `pyarrow.ipc.read_tensor()` maps the file without a copy and
#' `Tensor.to_numpy()` gives NumPy the array (Fortran order), each element
#' as R holds it (`NA` as R's bit pattern: `-2^31` for integers and
#' logicals, the NaN with payload 1954 for doubles). The dimensions' names
#' are `names(dimnames)`.
#'
#' | R | tensor element |
#' |---|---|
#' | integer, logical | int32 (R's own 32-bit logicals) |
#' | double | float64 |
#' | integer64 (bit64) | int64 |
#' | complex | float64, with a last dimension of 2 (real, imaginary) |
#' | raw | uint8 |
#'
#' The R type and every attribute (`dim`, `dimnames`, a class such as
#' `"table"`) travel in the message's custom metadata, so
#' [tensor_to_rdata()] gives back an object `identical()` to the original.
#'
#' A list of arrays of one shape (not one array) goes to Arrow as an
#' `arrow.fixed_shape_tensor` column instead, through [rdata_to_arrow()],
#' [rdata_to_ipc()] and [rdata_to_parquet()].
#'
#' @inheritParams rdata_to_arrow
#' @param sink Path of the tensor file to write (or an object store URL).
#' @param object Name of the array in an `.RData` file (or an object path
#'   such as `"lst$m"`); by default the file's only array.
#' @param salvage `FALSE` (the default) to refuse a damaged file; `TRUE`
#'   to write the array from a damaged file where it was read whole (its
#'   data and `dim`), with a warning of class `rdarrow_warning` saying what
#'   was lost (see [read_rdata()]). The array the damage is in is an error
#'   naming it (never an array of another shape), and a damaged `.RData`
#'   file needs `object`: the arrays after the damage are lost, so which
#'   one is the file's only array is not known.
#' @return The tensor's shape, invisibly.
#' @seealso [tensor_to_rdata()] for the way back.
#' @examples
#' f <- file.path(tempdir(), "volcano.rds")
#' saveRDS(volcano, f)
#' t <- file.path(tempdir(), "volcano.tensor")
#' rdata_to_tensor(f, t)
#' # Python: pyarrow.ipc.read_tensor(pyarrow.memory_map(t)).to_numpy()
#' out <- file.path(tempdir(), "volcano2.rds")
#' tensor_to_rdata(t, out)
#' identical(readRDS(out), volcano)
#' @export
rdata_to_tensor <- function(file, sink, object = NULL, storage_options = NULL, salvage = FALSE) {
  storage <- storage_arg(storage_options)
  salvage <- salvage_arg(salvage)
  src <- data_source(file, storage = storage)
  on.exit(src$done(), add = TRUE)
  check_sink(sink)
  if (!is.null(object) && (!is.character(object) || length(object) != 1L || is.na(object))) {
    abort_usage("`object` must be NULL or a single name.")
  }
  res <- check_engine(rdata_to_tensor_impl(src$path, path.expand(sink), object, src$name,
                                            read_args(storage, salvage = salvage)),
                      file = src$label)
  damage_warnings(res$damage, src$label)
  invisible(res$shape)
}

check_sink <- function(sink) {
  if (!is.character(sink) || length(sink) != 1L || is.na(sink) || !nzchar(sink)) {
    abort_usage("`sink` must be a single path.")
  }
  if (is_store_url(sink)) return(invisible())
  sink_dir <- dirname(path.expand(sink))
  if (!dir.exists(sink_dir)) abort_usage(sprintf("the folder '%s' does not exist.", sink_dir))
}

check_memory <- function(memory) {
  if (!is.numeric(memory) || length(memory) != 1L || is.na(memory) || memory < 2^20) {
    abort_usage("`memory` must be a number of bytes (at least 1 MiB).")
  }
  as.double(memory)
}

check_arrow_args <- function(object, col_select, chunk_size) {
  object <- object_arg(object)
  if (!is.null(col_select)) {
    ok <- (is.character(col_select) && !anyNA(col_select)) ||
      (is.numeric(col_select) && !anyNA(col_select) && all(col_select >= 1))
    if (!ok) abort_usage("`col_select` must be NULL, column names, or positive column positions.")
    if (is.numeric(col_select)) col_select <- as.double(col_select)
  }
  if (!is.null(chunk_size)) {
    if (!is.numeric(chunk_size) || length(chunk_size) != 1L || is.na(chunk_size) || chunk_size < 1) {
      abort_usage("`chunk_size` must be NULL or a positive number of rows.")
    }
    chunk_size <- as.double(chunk_size)
  }
  list(object = object, col_select = col_select, chunk_size = chunk_size)
}

# The session's time zone, as arrow R gives POSIXct without a tzone: TZ,
# else the zone /etc/localtime links to, else none.
session_tz <- function() {
  # the engine's one rule (session_zone()), as every front end asks it
  session_zone_impl()
}

#' @export
print.rdarrow_array_stream <- function(x, ...) {
  check_stream_pointer(x)
  live <- stream_is_live_impl(x)
  obj <- attr(x, "rdarrow_object")
  cat(sprintf("<rdarrow_array_stream%s>%s\n",
              if (!is.null(obj) && nzchar(obj)) paste0(" of '", obj, "'") else "",
              if (live) "" else " (already consumed)"))
  cat(sprintf("rows: %s\n", format(attr(x, "rdarrow_nrow"), big.mark = ",", scientific = FALSE)))
  cat("schema:\n")
  cat(paste0("  ", attr(x, "rdarrow_schema")), sep = "\n")
  invisible(x)
}

# An rdarrow stream must be an external pointer before the engine looks at it.
check_stream_pointer <- function(x) {
  if (typeof(x) != "externalptr") {
    abort_usage(sprintf("expected an Arrow stream (an external pointer), not an object of type %s.", typeof(x)))
  }
  x
}

stream_for_consumer <- function(x) {
  check_stream_pointer(x)
  if (!stream_is_live_impl(x)) {
    abort_usage("this Arrow stream was already consumed; streams are single-use, call rdata_to_arrow() again.")
  }
  x
}

#' Arrow tables and readers from an rdarrow stream
#'
#' Methods for the arrow package's generics, so that
#' `arrow::as_arrow_table(rdata_to_arrow(f))` works. They import the C
#' stream with `arrow::RecordBatchReader$import_from_c()`, which takes the
#' data without copying it. A list of arrays of one shape (an
#' `arrow.fixed_shape_tensor` column elsewhere) reaches arrow as the
#' fixed-size list underneath, which `as.data.frame()` makes the list it
#' was: arrow 25 makes no R value of that canonical extension type.
#' @param x An `rdarrow_array_stream` from [rdata_to_arrow()].
#' @param ... Ignored.
#' @param schema Ignored (the stream carries its schema).
#' @name arrow-methods
#' @keywords internal
NULL

#' @rdname arrow-methods
#' @exportS3Method arrow::as_record_batch_reader
as_record_batch_reader.rdarrow_array_stream <- function(x, ...) {
  arrow::RecordBatchReader$import_from_c(for_arrow_r(x))
}

# The stream as arrow R takes it: tensor columns as their storage.
for_arrow_r <- function(x) {
  check_engine(stream_storage_types_impl(stream_for_consumer(x)))
}

#' @rdname arrow-methods
#' @exportS3Method arrow::as_arrow_table
as_arrow_table.rdarrow_array_stream <- function(x, ..., schema = NULL) {
  arrow::as_arrow_table(arrow::RecordBatchReader$import_from_c(for_arrow_r(x)))
}

# Whether the stream is one vector's (its table has that vector's one column).
is_vector_stream <- function(x) identical(attr(x, "rdarrow_shape"), "vector")

#' @rdname arrow-methods
#' @param type Passed on to arrow (a cast), as arrow's own methods do.
#' @details A stream of a vector object gives that vector's own array
#'   (a `DoubleArray`, a `DictionaryArray` for a factor, ...) in
#'   `as_arrow_array()`, `as_chunked_array()` and
#'   `nanoarrow::as_nanoarrow_array()`; a data frame's gives a struct array,
#'   as arrow does for data frames.
#' @exportS3Method arrow::as_chunked_array
as_chunked_array.rdarrow_array_stream <- function(x, ..., type = NULL) {
  if (!is_vector_stream(x)) {
    return(NextMethod())
  }
  chunked <- as_arrow_table.rdarrow_array_stream(x)[[1]]
  if (is.null(type)) chunked else arrow::as_chunked_array(chunked, type = type)
}

#' @rdname arrow-methods
#' @exportS3Method arrow::as_arrow_array
as_arrow_array.rdarrow_array_stream <- function(x, ..., type = NULL) {
  if (!is_vector_stream(x)) {
    return(NextMethod())
  }
  chunked <- as_chunked_array.rdarrow_array_stream(x, type = type)
  if (chunked$num_chunks == 1L) chunked$chunk(0L) else arrow::as_arrow_array(chunked)
}

#' @rdname arrow-methods
#' @param schema Passed on to nanoarrow (a conversion), as nanoarrow's own
#'   methods do.
#' @exportS3Method nanoarrow::as_nanoarrow_array
as_nanoarrow_array.rdarrow_array_stream <- function(x, ..., schema = NULL) {
  s <- stream_for_consumer(x)
  vector <- is_vector_stream(s)
  class(s) <- "nanoarrow_array_stream"
  arrays <- nanoarrow::collect_array_stream(s)
  if (vector) arrays <- lapply(arrays, function(a) a$children[[1L]])
  out <- if (length(arrays) == 1L) {
    arrays[[1L]]
  } else {
    # several batches: joined by arrow, when installed
    if (!requireNamespace("arrow", quietly = TRUE)) {
      abort_usage("joining the stream's batches into one array needs the arrow package; read it with chunk_size = NULL, or install arrow.")
    }
    chunks <- lapply(arrays, arrow::as_arrow_array)
    nanoarrow::as_nanoarrow_array(do.call(arrow::concat_arrays, chunks))
  }
  if (is.null(schema)) out else nanoarrow::as_nanoarrow_array(out, schema = schema)
}
