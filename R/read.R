#' List the objects in an R data file
#'
#' Looks inside an `.RData`/`.rda` file written by [save()], or an `.rds`
#' file written by [saveRDS()], without building any R object: payloads are
#' skipped, not decoded, so this is how to see what a large file holds
#' before loading it. Compression (gzip, bzip2, xz, zstd or none) is
#' detected from the file's bytes.
#'
#' @param file Where the R data is: the path of an `.RData`/`.rda`/`.rds`
#'   file; a package's lazy-load data base (its `.rdb`, its `.rdx`, or the
#'   path they share, such as `system.file("data", "Rdata", package =
#'   "datasets")`); an `http://` or `https://` URL (read as a stream, with
#'   `getOption("timeout")` seconds allowed for connecting and for each
#'   read); a raw vector ([serialize()] output, compressed or not, or a
#'   file's bytes); or a connection (such as `gzcon(url(...))`, `file()` or
#'   `rawConnection()`), read to its end.
#' @param recursive `TRUE` to list, after each plain list, what it holds
#'   (data frames, vectors, lists, to any depth), each named by its object
#'   path (`lst$a`, `lst[[2]]`), which [read_rdata()], [rdata_to_arrow()]
#'   and the other readers take as an object name. Nothing is decoded for
#'   this either.
#' @return A data frame with one row per object (one row for an `.rds`
#'   file, named after the file), and columns `name`, `class` (as [class()]
#'   gives it, collapsed with `"/"`), `type` (as [typeof()]), `length`
#'   (`NA` for the global and base environments, namespaces and package
#'   environments: a file refers to them by name and does not hold their
#'   bindings), `nrow` and `ncol` (for data frames and matrices, else `NA`), and
#'   `bytes`, the object's size in the uncompressed stream (`NA` for the
#'   objects nested in lists).
#' @section Errors: A file that is not R data, or is truncated or
#'   corrupt, raises an error of class `rdarrow_error` saying what is wrong
#'   and at which byte of the decompressed stream.
#' @seealso [read_rdata()] to read the objects.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' letters2 <- letters
#' save(cars2, letters2, file = f)
#' rdata_objects(f)
#' lst <- list(a = head(mtcars), b = head(iris))
#' save(lst, file = f)
#' rdata_objects(f, recursive = TRUE)
#' @export
rdata_objects <- function(file, recursive = FALSE) {
  src <- data_source(file)
  on.exit(src$done(), add = TRUE)
  path <- src$path
  if (!isTRUE(recursive) && !isFALSE(recursive)) abort_usage("`recursive` must be TRUE or FALSE.")
  res <- check_engine(rdata_list_impl(path, src$name, max_depth(), recursive))
  name <- res$name
  num <- function(x) {
    x[is.nan(x)] <- NA_real_
    x
  }
  # the data frame data.frame() would make, without its checks' cost
  structure(
    list(
      name = name,
      class = res$class,
      type = res$type_name,
      length = num(res$length),
      nrow = num(res$nrow),
      ncol = num(res$ncol),
      bytes = res$bytes
    ),
    row.names = .set_row_names(length(name)),
    class = "data.frame"
  )
}

#' Read the objects of an R data file
#'
#' Reads an `.RData`/`.rda` file written by [save()] (or an `.rds` file
#' written by [saveRDS()]) in Rust, without [load()] and without an
#' environment. Each object is [identical()] to what `load()` would create.
#'
#' Data (vectors, factors, data frames, matrices, lists, attributes,
#' S4 objects, ALTREP compact sequences and wrappers) is built directly
#' from the decoded buffers. Objects that only R itself can rebuild
#' (functions, environments, promises, byte code, external pointers,
#' namespaces) are handed to R's own unserializer, one object at a time.
#'
#' @param file Where the R data is: the path of an `.RData`/`.rda`/`.rds`
#'   file; a package's lazy-load data base (its `.rdb`, its `.rdx`, or the
#'   path they share, such as `system.file("data", "Rdata", package =
#'   "datasets")`); an `http://` or `https://` URL (read as a stream, with
#'   `getOption("timeout")` seconds allowed for connecting and for each
#'   read); a raw vector ([serialize()] output, compressed or not, or a
#'   file's bytes); or a connection (such as `gzcon(url(...))`, `file()` or
#'   `rawConnection()`), read to its end.
#' @param objects `NULL` (all objects) or a character vector of object
#'   names to read; the others are skipped without being built. An object
#'   nested in lists is named by its path, as R code reaches it: `"lst$a"`,
#'   `"lst[[2]]"`, `"lst$a$b"` (or, in a list, by a path's parts:
#'   `list(c("lst", "a"), list("lst", 2))`); see [rdata_objects()] with
#'   `recursive = TRUE`. An unknown name is an error that lists the names
#'   present (for a path, those at the deepest level that exists).
#' @return A named list of the objects. For an `.rds` file, a list of one
#'   element named after the file's base name.
#' @section Limits: Objects nested deeper than
#'   `getOption("rdarrow.max_depth", 10000)` levels are refused with an
#'   error (this protects the session's stack); raise the option for
#'   genuine files. The vector data one read decodes is limited to
#'   `getOption("rdarrow.max_memory")` bytes (by default the machine's
#'   physical memory), so that a corrupt or hostile file that declares huge
#'   vectors, or a small file that inflates to a huge one, ends in an error
#'   instead of exhausting memory.
#' @seealso [rdata_objects()] to list a file's objects first.
#' @examples
#' f <- file.path(tempdir(), "example.RData")
#' cars2 <- head(mtcars)
#' letters2 <- letters
#' save(cars2, letters2, file = f)
#' str(read_rdata(f))
#' read_rdata(f, objects = "letters2")
#' lst <- list(a = head(mtcars), b = head(iris))
#' save(lst, file = f)
#' read_rdata(f, objects = "lst$b")
#' @export
read_rdata <- function(file, objects = NULL) {
  src <- data_source(file)
  on.exit(src$done(), add = TRUE)
  path <- src$path
  if (is.list(objects)) {
    objects <- vapply(objects, object_arg, "", what = "each of `objects`")
  }
  if (!is.null(objects) && (!is.character(objects) || anyNA(objects))) {
    abort_usage("`objects` must be NULL, a character vector of object names or paths, or a list of those and paths' parts.")
  }
  read_values(path, objects, src$name, sys.call())
}

# The objects `objects` (NULL: all) of the file at `path`, as a named list;
# `call` for errors.
read_values <- function(path, objects, name, call) {
  res <- check_engine(rdata_read_impl(path, objects, name, max_depth()), call = call)
  values <- res$values
  if (any(res$fallback)) {
    # the objects only R can rebuild, unserialized together so that what
    # they share stays shared
    who <- res$names[res$fallback]
    rebuilt <- tryCatch(
      unserialize(res$rebuild),
      error = function(e) {
        stop(rdarrow_error(
          sprintf("%s %s cannot be rebuilt: %s", if (length(who) > 1L) "objects" else "object",
                  paste0("'", who, "'", collapse = ", "), conditionMessage(e)),
          "unsupported", object = who[[1]], call = call
        ))
      }
    )
    values[res$fallback] <- rebuilt
  }
  names(values) <- res$names
  values
}

#' Read the one object of an R data file
#'
#' As [readRDS()] does: the single object of an `.rds` file, or of any
#' source [read_rdata()] reads that holds one object (an `.RData` file of
#' one object, a raw vector from [serialize()], a connection, a URL),
#' returned as it is rather than in a list.
#'
#' @inheritParams read_rdata
#' @return The object, [identical()] to what [readRDS()] (or [load()])
#'   gives.
#' @section Errors: A source holding several objects is an error of class
#'   `rdarrow_error` that names them; read it with [read_rdata()].
#' @seealso [read_rdata()] for files of several objects.
#' @examples
#' f <- file.path(tempdir(), "example.rds")
#' saveRDS(head(mtcars), f)
#' read_rds(f)
#' read_rds(serialize(letters, NULL))
#' @export
read_rds <- function(file) {
  src <- data_source(file)
  on.exit(src$done(), add = TRUE)
  values <- read_values(src$path, NULL, src$name, sys.call())
  if (length(values) != 1L) {
    stop(rdarrow_error(
      sprintf("the file holds %d objects (%s), not one: read it with read_rdata()",
              length(values), paste0("'", names(values), "'", collapse = ", ")),
      "usage", call = sys.call()
    ))
  }
  values[[1L]]
}

# An object argument as the engine takes it: a name or an object path
# (`"lst$a"`, `"lst[[2]]"`), or a path's parts (`c("lst", "a")`,
# `list("lst", 2)`: names, and positions from 1).
object_arg <- function(object, what = "`object`") {
  if (is.null(object)) return(NULL)
  if (is.character(object) && length(object) == 1L && !is.na(object) && nzchar(object)) {
    return(object)
  }
  parts <- if (is.list(object)) object else as.list(object)
  part_ok <- function(p) {
    length(p) == 1L && !is.na(p) &&
      ((is.character(p) && nzchar(p)) || (is.numeric(p) && p >= 1 && p == round(p)))
  }
  if (!length(parts) || !all(vapply(parts, part_ok, TRUE)) || !is.character(parts[[1]])) {
    abort_usage(paste0(what, " must be NULL, an object name or path (\"lst$a\", \"lst[[2]]\"), ",
                       "or a path's parts (c(\"lst\", \"a\"), list(\"lst\", 2))."))
  }
  check_engine(object_path_impl(
    vapply(parts, function(p) if (is.numeric(p)) format(p, scientific = FALSE) else p, ""),
    vapply(parts, is.numeric, TRUE)
  ))
}

rds_name <- function(file) {
  sub("\\.[^.]*$", "", basename(file), perl = TRUE)
}
