#' Write Arrow data as an R data file
#'
#' Writes an `.RData` file that [load()] reads (or, when `file` ends in
#' `.rds`, a file that [readRDS()] reads) from Arrow data: an Arrow C
#' stream (from [rdata_to_arrow()] or any `nanoarrow_array_stream`), an
#' arrow `Table`, `RecordBatch` or `RecordBatchReader`, or a data frame.
#' Arrow types map to R as the arrow package maps them (see Details); the
#' `"r"` schema metadata that arrow R and rdarrow write restores attributes,
#' so a data frame that went to Arrow comes back [identical()]. A data
#' frame given as `x` is written with exactly the bytes `save()` or
#' `saveRDS()` would write (before compression): rdarrow lays out each of
#' its nodes as R's serializer writes them and writes the vectors straight
#' from R's memory on all cores. Frames holding what only R's serializer
#' writes (environments other than the global one, functions, ...) and
#' `ascii = TRUE` go through R's serializer, streamed into the compressor.
#'
#' Compression runs on `threads` cores: the stream is cut into 8 MiB blocks
#' that are compressed independently and joined into one gzip member,
#' bzip2 stream or xz stream, as R writes them (see [write_rds()]), so that
#' every reader of R's files reads them. The bytes written do not depend on
#' the number of threads. Large uncompressed files are written
#' around the page cache (direct I/O) where the file system allows it. The
#' file is written as [write_rds()] writes it (unnamed or under a
#' temporary name in `file`'s folder, made durable on disk with fsync and
#' given its name only when complete); on an error, an interrupt or a
#' killed process the old file is untouched.
#'
#' @details Arrow to R: int8/16/32, uint8/16 -> integer; int64 -> integer
#'   when every value fits, else bit64 integer64; uint32/uint64, float,
#'   decimal -> double; bool -> logical; utf8 (all variants) -> character;
#'   binary -> list of raw; date32/date64 -> Date; timestamp -> POSIXct
#'   with the zone in `tzone`; time32/time64 -> hms; duration -> difftime
#'   in seconds; dictionary -> factor (ordered when flagged) when the values
#'   are strings, else the decoded values; list types -> list column;
#'   struct -> data-frame column; map -> list of key/value data frames;
#'   null -> logical NA; run-end encoded -> decoded. Union and interval
#'   types are an error naming the column.
#'
#'   A table made from a pandas DataFrame (its `"pandas"` metadata, as
#'   pyarrow and `df.to_parquet()` write it) gives the DataFrame's index as
#'   row names: `0, 1, ..., n-1` automatic ones, other integer labels
#'   integer row names, string labels character ones; a repeated or
#'   missing label is an error; a `MultiIndex` or labels of other types
#'   become the first columns (as `df.reset_index()` makes them); the
#'   index's name is kept in the attribute `"pandas.index.name"` (see the
#'   getting-started vignette).
#' @param x An Arrow C stream (`rdarrow_array_stream` or
#'   `nanoarrow_array_stream`), an arrow `Table`, `RecordBatch`,
#'   `RecordBatchReader` or `Dataset` (say from `arrow::open_dataset()`
#'   over Parquet files), an arrow `Array`, `ChunkedArray` or `Scalar`
#'   (written as the R vector it maps to, a data frame for a struct), a
#'   `nanoarrow_array` or anything else with an
#'   `nanoarrow::as_nanoarrow_array_stream()` method (a stream of a type
#'   other than struct is one vector), or a data frame. A stream is
#'   consumed.
#' @param file Path of the file to write. A name ending in `.rds` gets
#'   `saveRDS()`'s format (one unnamed object), `.qs2` or `.qdata` a file
#'   of qs2 (read by `qs2::qs_read()` or `qs2::qd_read()`; see
#'   [write_rds()]), anything else `save()`'s.
#'   An object store URL (`s3://bucket/key.RData`) is uploaded in parts
#'   and appears only complete; a failed upload leaves nothing.
#' @param name Name of the object in the file; by default the expression
#'   passed as `x`.
#' @param compress `TRUE` (the default: gzip, or zstd for a `.qs2` or
#'   `.qdata` file), `FALSE` (none), or `"gzip"`, `"bzip2"`, `"xz"` or
#'   `"none"` (`"zstd"` for `.qs2` and `.qdata`, which take no other).
#' @param compression_level Compression level (`NULL`: R's default, 6 for
#'   gzip, 9 for bzip2, and for xz 6 in an `.rds` file as `saveRDS()` and 9
#'   in an `.RData` file as `save()`).
#' @param version Serialization format version, 3 (R >= 3.5) or 2.
#' @param ascii Write the ASCII format instead of XDR.
#' @param threads Number of compression threads (default: all cores).
#' @return `file`, invisibly.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' save(cars2, file = f)
#' out <- file.path(tempdir(), "copy.RData")
#' arrow_to_rdata(rdata_to_arrow(f), out, name = "cars2")
#' e <- new.env()
#' load(out, e)
#' identical(e$cars2, cars2)
#' @inheritParams rdata_objects
#' @export
arrow_to_rdata <- function(x, file, name = NULL,
                           compress = TRUE,
                           compression_level = NULL, version = 3L,
                           ascii = FALSE, threads = NULL, storage_options = NULL) {
  if (is.null(name)) name <- paste(deparse(substitute(x)), collapse = " ")
  o <- write_options(file, name, compress, compression_level, version, ascii, threads, storage_options)
  write_stream <- function(s, one_array = FALSE) {
    arrow_to_rdata_impl(s, o$file, o$name, o$compress, o$level, o$version, o$ascii,
                        o$threads, o$rds, o$writer, one_array, o$storage)
  }
  res <- if (inherits(x, "nanoarrow_array_stream")) {
    write_stream(check_stream_pointer(x))
  } else if (inherits(x, c("Array", "ChunkedArray", "Scalar")) && inherits(x, "ArrowObject")) {
    # one array: the R vector it maps to (a data frame for a struct)
    if (inherits(x, "Scalar")) x <- x$as_array()
    write_stream(export_reader(arrow::arrow_table(value = x)), one_array = TRUE)
  } else if (inherits(x, "ArrowObject")) {
    reader <- if (inherits(x, "Dataset")) arrow::Scanner$create(x)$ToRecordBatchReader() else x
    write_stream(export_reader(reader))
  } else if (is.data.frame(x)) {
    object_to_rdata_impl(x, o$file, o$name, o$compress, o$level, o$version, o$ascii, o$threads, o$rds, o$writer,
                         o$storage)
  } else if (has_nanoarrow_stream_method(x)) {
    # nanoarrow arrays and anything nanoarrow streams; a stream of a type
    # other than struct is one array
    write_stream(nanoarrow::as_nanoarrow_array_stream(x))
  } else {
    abort_usage(paste0("`x` must be an Arrow stream, an arrow Table/RecordBatch/RecordBatchReader/Dataset/Array/ChunkedArray/Scalar, ",
                       "a nanoarrow array or anything with an as_nanoarrow_array_stream() method, or a data frame, not ",
                       paste(class(x), collapse = "/"), "."))
  }
  check_engine(res)
  invisible(file)
}

# An arrow R table or reader exported as a C stream.
export_reader <- function(x) {
  s <- new_stream_impl()
  arrow::as_record_batch_reader(x)$export_to_c(s)
  s
}

# Whether nanoarrow can make a stream of `x` (a method of its generic for
# one of x's classes).
has_nanoarrow_stream_method <- function(x) {
  if (!requireNamespace("nanoarrow", quietly = TRUE)) return(FALSE)
  ns <- asNamespace("nanoarrow")
  any(vapply(class(x), function(cl) {
    !is.null(utils::getS3method("as_nanoarrow_array_stream", cl, optional = TRUE, envir = ns))
  }, logical(1)))
}

#' Convert an Arrow IPC file or stream to an R data file
#'
#' Reads an Arrow IPC file (Feather v2) or IPC stream (told apart by their
#' first bytes; lz4- and zstd-compressed buffers are read) and writes it as
#' [arrow_to_rdata()] does. A Parquet file (told by its first bytes) is
#' read too, as [parquet_to_rdata()] reads it.
#'
#' @param file Path of the Arrow IPC file or stream.
#' @param sink Path of the `.RData`/`.rds` file to write (or an object
#'   store URL, as for [arrow_to_rdata()]'s `file`).
#' @param name Name of the object in the file; by default the IPC file's
#'   base name without extension.
#' @param ... Passed on as [arrow_to_rdata()]'s `compress`,
#'   `compression_level`, `version`, `ascii`, `threads` and
#'   `storage_options` (for a `sink` in an object store, `s3://...`).
#' @return `sink`, invisibly.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' save(cars2, file = f)
#' ipc <- file.path(tempdir(), "cars2.arrow")
#' rdata_to_ipc(f, ipc)
#' out <- file.path(tempdir(), "cars2.rds")
#' ipc_to_rdata(ipc, out)
#' identical(readRDS(out), cars2)
#' @export
ipc_to_rdata <- function(file, sink, name = NULL, ...) {
  data_file_to_rdata(file, sink, name, list(...), tensor = FALSE)
}

# ipc_to_rdata() and tensor_to_rdata(): `tensor`, the file must be a
# Tensor message (else IPC or Parquet, told by its first bytes).
data_file_to_rdata <- function(file, sink, name, args, tensor) {
  path <- check_file(file)
  if (is.null(name)) name <- rds_name(file)
  o <- write_options(sink, name, args[["compress"]] %||% TRUE, args[["compression_level"]],
                     args[["version"]] %||% 3L, args[["ascii"]] %||% FALSE, args[["threads"]],
                     args[["storage_options"]])
  check_engine(ipc_to_rdata_impl(path, tensor, o$file, o$name, o$compress, o$level, o$version,
                                 o$ascii, o$threads, o$rds, o$writer, o$storage))
  invisible(sink)
}

#' Convert a Parquet file to an R data file
#'
#' Reads a Parquet file (any writer's: arrow, pyarrow, Spark, DuckDB,
#' Polars, rdarrow) and writes it as [arrow_to_rdata()] does, one column
#' at a time: a data frame's columns are read, converted and written one
#' after another, so memory holds about one column, not the table (list
#' columns, and objects that were not data frames, are held whole). Files
#' rdarrow wrote come back `identical()` to the original object: the
#' Arrow schema stored in the file carries R's classes and attributes.
#'
#' @inheritParams ipc_to_rdata
#' @param file Path of the Parquet file.
#' @param name Name of the object in the file; by default the Parquet
#'   file's base name without extension.
#' @return `sink`, invisibly.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' save(cars2, file = f)
#' pq <- file.path(tempdir(), "cars2.parquet")
#' rdata_to_parquet(f, pq)
#' out <- file.path(tempdir(), "cars2.rds")
#' parquet_to_rdata(pq, out)
#' identical(readRDS(out), cars2)
#' @export
parquet_to_rdata <- function(file, sink, name = NULL, ...) {
  path <- check_file(file)
  # the kind by its first bytes: the engine's one rule
  check_engine(expect_file_kind_impl(path, file, "parquet", "ipc_to_rdata()"))
  ipc_to_rdata(file, sink, name = name %||% rds_name(file), ...)
}

#' Convert an Arrow Tensor message to an R data file
#'
#' Reads an Arrow Tensor message (what `pyarrow.ipc.write_tensor()` and
#' [rdata_to_tensor()] write) and writes the array as R holds it: an array
#' whose `x[i, j, ...]` is NumPy's `x[i-1, j-1, ...]`, whatever the
#' tensor's strides (row-major NumPy arrays are put in R's column-major
#' order). int8, int16, int32, uint8 and uint16 become integer; int64
#' integer where every value fits, else bit64's `integer64`; uint32, float32
#' and float64 double. The dimensions' names become `names(dimnames)`. A
#' tensor [rdata_to_tensor()] wrote comes back `identical()` to the array
#' it was (its R type and attributes travel with it).
#'
#' Refused, with the reason: uint64 and float16 (R cannot hold them
#' exactly), booleans and other element types, negative strides and
#' strides that split elements.
#'
#' [ipc_to_rdata()] and the command line's `to-rdata` read tensor files
#' too (told by their first message).
#'
#' @inheritParams ipc_to_rdata
#' @param file Path of the tensor file.
#' @return `sink`, invisibly.
#' @examples
#' f <- file.path(tempdir(), "volcano.rds")
#' saveRDS(volcano, f)
#' t <- file.path(tempdir(), "volcano.tensor")
#' rdata_to_tensor(f, t)
#' out <- file.path(tempdir(), "volcano2.rds")
#' tensor_to_rdata(t, out)
#' identical(readRDS(out), volcano)
#' @export
tensor_to_rdata <- function(file, sink, name = NULL, ...) {
  data_file_to_rdata(file, sink, name, list(...), tensor = TRUE)
}

#' @export
as.data.frame.rdarrow_array_stream <- function(x, ...) {
  check_engine(stream_to_df_impl(stream_for_consumer(x)))
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# The running R's version as a serialization header gives it
# (R_Version(major, minor, patch)).
writer_version <- function() {
  v <- R.version
  as.integer(v$major) * 65536L + sum(as.integer(strsplit(v$minor, ".", fixed = TRUE)[[1]]) * c(256L, 1L))
}

write_options <- function(file, name, compress, compression_level, version, ascii, threads,
                          storage_options = NULL) {
  if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file)) {
    abort_usage("`file` must be a single path.")
  }
  if (!is.character(name) || length(name) != 1L || is.na(name) || !nzchar(name)) {
    abort_usage("`name` must be a single non-empty string.")
  }
  # TRUE: the file's own default (gzip, zstd for .qs2 and .qdata)
  if (isTRUE(compress)) compress <- NULL
  if (isFALSE(compress)) compress <- "none"
  if (!is.null(compress) && (!is.character(compress) || length(compress) != 1L || is.na(compress))) {
    abort_usage("`compress` must be TRUE, FALSE or a single string.")
  }
  if (!is.null(compression_level) && (!is.numeric(compression_level) ||
      length(compression_level) != 1L || is.na(compression_level))) {
    abort_usage("`compression_level` must be NULL or a number.")
  }
  # names and levels: the engine's one rule (Compression::for_writing())
  # (a .qs2 or .qdata file: its container, compressed with zstd)
  written <- check_engine(write_compression_impl(file, compress, if (is.null(compression_level)) NULL else as.double(compression_level)))
  compress <- written$compress
  level <- written$level
  if (!version %in% c(2, 3)) abort_usage("`version` must be 2 or 3.")
  if (!is.logical(ascii) || length(ascii) != 1L || is.na(ascii)) abort_usage("`ascii` must be TRUE or FALSE.")
  # NULL: every core (0 to the engine, which asks the system once)
  if (is.null(threads)) {
    threads <- 0L
  } else if (!is.numeric(threads) || length(threads) != 1L || is.na(threads) || threads < 1) {
    abort_usage("`threads` must be NULL or a positive number.")
  }
  dir <- dirname(path.expand(file))
  if (!is_store_url(file) && !dir.exists(dir)) abort_usage(sprintf("the folder '%s' does not exist.", dir))
  writer <- writer_version()
  list(file = path.expand(file), name = name, compress = compress, level = level,
       version = as.integer(version), ascii = ascii, threads = as.integer(threads),
       rds = path_is_rds_impl(file), writer = writer,
       storage = storage_arg(storage_options))
}
