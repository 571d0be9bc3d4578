#' Save any R object on every core, as `saveRDS()` and `save()` do
#'
#' `write_rds()` writes one object as [saveRDS()] does and `write_rdata()`
#' writes objects by name as [save()] does: the same arguments, the same
#' defaults and, before compression, the same bytes, for every R object
#' (lists, S4 objects, models with their formulas and environments,
#' closures and byte code, external pointers and weak references, ALTREP
#' vectors, long vectors, strings in every encoding). Only the
#' compression differs: it runs on `threads` cores.
#'
#' Data (vectors, lists, data frames, S4 objects, attributes, the global
#' environment) is laid out by rdarrow exactly as R's serializer writes it
#' and written straight from R's memory; anything else (other
#' environments, closures, ..., and `ascii = TRUE`) goes through R's own
#' serializer, streamed into the compressor. The serialized stream is
#' never held whole in memory.
#'
#' The file is one gzip member, bzip2 stream or xz stream, as R writes
#' them, so every reader of R's files reads it: [readRDS()] and [load()]
#' by path and through [gzcon()] and [url()], pyreadr, Python's rdata,
#' rds2py, `gzip -t`, `bzip2 -t`, `xz -t`. The stream is cut into 8 MiB
#' blocks compressed independently and joined: gzip blocks end on a byte
#' boundary with one CRC and length for the whole (as pigz joins them),
#' bzip2 blocks are joined bit by bit under one stream header (as lbzip2
#' does), xz blocks form one stream with its index (as `xz -T0` writes).
#' The bytes do not depend on the number of threads. A gzip file also
#' records where its blocks start, in its header's extra field (which
#' every gzip reader skips), so that rdarrow's readers inflate it on every
#' core; an xz file is read on every core through its block index.
#'
#' The file is written in `file`'s folder as an unnamed file (Linux, on
#' file systems that have them: ext4, xfs, btrfs, tmpfs) or under a hidden
#' temporary name, made durable (fsync) and given its name only when
#' complete: on an error, an interrupt or even a killed R, an existing
#' file keeps its content or is replaced whole, and no partial file is
#' left (a temporary file a killed writer leaves is removed by the next
#' write into that folder). A long write shows
#' a progress bar (see [rdarrow-package]).
#'
#' @param object The R object to save.
#' @param file Path of the file to write, or an object store URL
#'   (`s3://bucket/key.rds`, uploaded in parts, appearing only complete).
#'   R's format does not depend on the name's extension, except for a
#'   name ending in `.qs2` (a file `qs2::qs_read()` reads: R's
#'   serialization in qs2's zstd blocks, compressed on every core, the
#'   XXH3-64 hash in its header) or `.qdata` (a file `qs2::qd_read()`
#'   reads: qs2's own encoding, which holds vectors, lists and attributes
#'   only; other objects are refused, naming the first part it cannot
#'   hold), or `.fst` (a file `fst::read_fst()` reads: a data frame's
#'   columns in fst's LZ4 and ZSTD blocks, as `fst::write_fst()` writes
#'   them, data.table's keys kept, row names not, as fst keeps none; list,
#'   complex, matrix and `POSIXlt` columns, `difftime` in weeks and other
#'   objects are refused, naming the column, before anything is written;
#'   a column of strings in two encodings is written in UTF-8). Such files
#'   hold one object: `write_rds()` writes them. Or a
#'   connection (`file()`, `gzfile()`, `rawConnection()`, ...), to which
#'   the stream is written as [saveRDS()] and [save()] write it:
#'   uncompressed, the connection compressing it where it does (`compress`
#'   and `compression_level` are then ignored, with saveRDS()'s warning),
#'   opened and closed again when it is not open. A text-mode connection
#'   takes `ascii = TRUE` only (as for R); a connection not open for
#'   writing is an error.
#' @param compress `TRUE` (the default: gzip, or zstd for a `.qs2` or
#'   `.qdata` file), `FALSE` (none), or one of `"gzip"`, `"bzip2"`, `"xz"`,
#'   `"none"`, as [saveRDS()] takes it. A `.qs2` or `.qdata` file takes
#'   zstd only (`TRUE` or `"zstd"`; any other is an error), with
#'   `compression_level` 1 to 22 (default 3); a level never makes the
#'   file larger than levels 3, 5 and 9 below it do (each block keeps the
#'   smallest of its frames at its level and at those: zstd's stronger
#'   strategies lose to its fast ones on some data, R's strings among
#'   them). An `.fst` file takes fst's compression, `compression_level` 0
#'   to 100 on fst's scale (default 50, as `fst::write_fst()`: up to 50 a
#'   share of the blocks LZ4, above it a share ZSTD). A name ending in
#'   `.qs` (qs's
#'   format, which rdarrow reads but does not write) is an error pointing
#'   to `.qs2`.
#' @param compression_level Compression level (`NULL`: R's default,
#'   `saveRDS()`'s for `write_rds()`, 6 for gzip and xz and 9 for bzip2, and
#'   `save()`'s for `write_rdata()`, 6 for gzip and 9 for bzip2 and xz).
#' @param version Serialization format version, 3 (R >= 3.5) or 2.
#' @param ascii Write the ASCII format instead of XDR.
#' @param threads Number of compression threads (default: all cores).
#' @inheritParams rdata_objects
#' @return `file`, invisibly.
#' @seealso [read_rds()] and [read_rdata()] read the files back, on every
#'   core.
#' @examples
#' f <- file.path(tempdir(), "fit.rds")
#' fit <- lm(mpg ~ wt, data = mtcars)
#' write_rds(fit, f)
#' identical(readRDS(f), fit)
#'
#' g <- file.path(tempdir(), "cars.RData")
#' cars2 <- head(mtcars)
#' write_rdata(cars2, fit, file = g, compress = "xz")
#' e <- new.env()
#' load(g, e)
#' identical(e$fit, fit)
#' @export
write_rds <- function(object, file, compress = TRUE, compression_level = NULL,
                      version = 3L, ascii = FALSE, threads = NULL,
                      storage_options = NULL) {
  if (inherits(file, "connection")) {
    compression_ignored(missing(compress), compression_level)
    return(invisible(write_to_connection(file, ".rds", ascii, function(tmp) {
      write_rds(object, tmp, compress = FALSE, version = version, ascii = ascii, threads = threads)
    })))
  }
  # the usual call (a path, the defaults): one call into the engine, which
  # says NULL where the general path has more to say
  done <- NULL
  if (is.character(file) && length(file) == 1L && !is.na(file) && nzchar(file) &&
      isTRUE(compress) && is.null(compression_level) && identical(version, 3L) &&
      isFALSE(ascii) && is.null(threads) && is.null(storage_options)) {
    done <- write_rds_default_impl(object, path.expand(file), writer_version())
    if (!is.null(done)) done <- check_engine(done, file = file)
  }
  if (is.null(done)) {
    o <- write_options(file, "object", compress, compression_level,
                       version, ascii, threads, storage_options)
    done <- check_engine(object_to_rdata_impl(object, o$file, o$name, o$compress, o$level, o$version,
                                              o$ascii, o$threads, TRUE, o$writer, o$storage))
  }
  # what a .qdata file leaves out (data.table's pointer to itself), told
  # as qd_save() tells it
  for (line in attr(done, "left_out")) message(line)
  invisible(file)
}

#' @rdname write_rds
#' @param ... The objects to save, as names or strings (as [save()] takes
#'   them).
#' @param list A character vector of further objects' names.
#' @param envir The environment the objects are found in (and its
#'   enclosures, as [save()] finds them).
#' @export
write_rdata <- function(..., list = character(), file, envir = parent.frame(),
                        compress = !ascii, compression_level = NULL, version = 3L,
                        ascii = FALSE, threads = NULL, storage_options = NULL) {
  names <- as.character(substitute(list(...)))[-1L]
  if (missing(list) && !length(names)) warning("nothing specified to be saved", call. = FALSE)
  if (!is.character(list)) abort_usage("`list` must be a character vector of object names.")
  list <- c(list, names)
  if (!is.environment(envir)) abort_usage("`envir` must be an environment.")
  found <- vapply(list, exists, logical(1), envir = envir)
  if (!all(found)) {
    missing_names <- list[!found]
    abort_usage(sprintf("%s %s not found.", if (length(missing_names) == 1L) "object" else "objects",
                        paste0("'", missing_names, "'", collapse = ", ")))
  }
  if (missing(file) || is.null(file)) abort_usage("`file` must be given.")
  if (inherits(file, "connection")) {
    compression_ignored(missing(compress), compression_level)
    return(invisible(write_to_connection(file, ".RData", ascii, function(tmp) {
      write_rdata(list = list, file = tmp, envir = envir, compress = FALSE, version = version,
                  ascii = ascii, threads = threads)
    })))
  }
  o <- write_options(file, "data", compress, compression_level, version, ascii,
                     threads, storage_options)
  # the pairlist save() writes: each object under its name, in order
  objects <- as.pairlist(mget(list, envir = envir, inherits = TRUE))
  check_engine(objects_to_rdata_impl(objects, o$file, o$compress, o$level, o$version, o$ascii,
                                     o$threads, o$writer, o$storage))
  invisible(file)
}

# Write to a connection as saveRDS() and save() do: the stream as it is
# (uncompressed: a gzfile(), bzfile() or xzfile() connection compresses
# it), made by `write` into a temporary file named `ext`, then written to
# `con` (opened for writing, and closed again, when it is not open: "wb",
# or "w" for `ascii`, as R opens it). A connection that cannot take the
# stream is refused before anything is written: one not open for writing,
# and a text-mode one for the binary format (R refuses both too); the
# ASCII format goes to a text-mode connection as text.
write_to_connection <- function(con, ext, ascii, write) {
  opened <- isOpen(con)
  if (opened) {
    how <- summary(con)
    if (!identical(how[["can write"]], "yes")) {
      abort_usage("the connection is not open for writing: open it with \"wb\" (or give it unopened).")
    }
    if (!ascii && !identical(how[["text"]], "binary")) {
      abort_usage(paste0("the connection is open in text mode, which takes only the ASCII format: ",
                         "open it in binary mode (\"wb\"), or write with `ascii = TRUE`."))
    }
  }
  tmp <- tempfile("rdarrow-", fileext = ext)
  on.exit(unlink(tmp), add = TRUE)
  write(tmp)
  if (!opened) {
    open(con, if (ascii) "w" else "wb")
    on.exit(close(con), add = TRUE)
  }
  text <- !identical(summary(con)[["text"]], "binary")
  # copied a chunk at a time (never the whole file in memory)
  from <- file(tmp, "rb")
  on.exit(close(from), add = TRUE)
  repeat {
    chunk <- readBin(from, "raw", 1048576L)
    if (!length(chunk)) break
    if (text) cat(rawToChar(chunk), file = con, sep = "") else writeBin(chunk, con)
  }
  con
}

# A connection compresses as it was made (gzfile(), xzfile()): a writer's
# `compress` or `compression_level` given for one is ignored, with the
# warning saveRDS() gives.
compression_ignored <- function(compress_missing, compression_level) {
  given <- c("compress", "compression_level")[c(!compress_missing, !is.null(compression_level))]
  for (arg in given) {
    warning(simpleWarning(sprintf("'%s' is ignored unless 'file' is a file name", arg), user_call()))
  }
}
