#' List the objects in an R data file
#'
#' Looks inside an `.RData`/`.rda` file written by [save()], or an `.rds`
#' file written by [saveRDS()], without building any R object: payloads are
#' skipped, not decoded, so this is how to see what a large file holds
#' before loading it. Compression (gzip, bzip2, xz, zstd or none) is
#' detected from the file's bytes, and so are the files of qs and qs2
#' (`.qs`, `.qs2`, `.qdata`) and of fst (`.fst`, a data frame, read as
#' `fst::read_fst()` gives it), which hold one object, named as an `.rds`
#' file's.
#'
#' @param file Where the R data is: the path of an `.RData`/`.rda`/`.rds`
#'   file, or of a `.qs2`/`.qdata` file of qs2, a `.qs` file of qs or an
#'   `.fst` file of fst (read without those packages; see `vignette("sources", "rdarrow")`); a package's lazy-load data base (its `.rdb`, its `.rdx`, or the
#'   path they share, such as `system.file("data", "Rdata", package =
#'   "datasets")`); an `http://` or `https://` URL (read as a stream, with
#'   `getOption("timeout")` seconds allowed for connecting and for each
#'   read); a raw vector ([serialize()] output, compressed or not, or a
#'   file's bytes); or a connection (such as `gzcon(url(...))`, `file()` or
#'   `rawConnection()`), read to its end (one naming a file or URL not read from yet is read from it, so that every check of its compression is made; a `gzcon()` that reports damage is an error). Several sources at once: a
#'   character vector of paths and URLs, or a directory (its `.rda`,
#'   `.RData`, `.rds`, `.qs`, `.qs2`, `.qdata` and `.fst` files, in its subdirectories too, in sorted
#'   order); they are read on all cores at once. An object store URL
#'   (`s3://bucket/key.RData`, `gs://...`, `az://...`) is read as a stream
#'   (a lazy-load data base's `.rdb`/`.rdx` by byte range); a glob in one
#'   (`s3://bucket/archive/*.RData`, `**` across folders) or a URL ending
#'   in `/` names the R data files the store lists.
#' @param storage_options For object store URLs (`s3://`, `gs://`,
#'   `az://`/`abfs://`): the store's options beyond those of the
#'   environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
#'   `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ENDPOINT_URL`,
#'   `AWS_ALLOW_HTTP`, `GOOGLE_SERVICE_ACCOUNT`,
#'   `AZURE_STORAGE_ACCOUNT_NAME`, ...), as a named list in the names of
#'   the `object_store` Rust crate, such as `list(endpoint_url =
#'   "http://127.0.0.1:9000", region = "eu-west-1", allow_http = TRUE)`, or
#'   `list(skip_signature = TRUE)` for anonymous access. Secrets never
#'   appear in messages.
#' @param recursive `TRUE` to list, after each plain list, what it holds
#'   (data frames, vectors, lists, to any depth), and after each S4 object
#'   its slots, each named by its object path (`lst$a`, `lst[[2]]`,
#'   `pbmc@assays$RNA@counts`), which [read_rdata()], [rdata_to_arrow()]
#'   and the other readers take as an object name. Nothing is decoded for
#'   this either.
#' @return A data frame with one row per object (one row for an `.rds`
#'   file, named after the file), and columns `name`, `class` (as [class()]
#'   gives it, collapsed with `"/"`), `type` (as [typeof()]), `length`
#'   (`NA` for the global and base environments, namespaces and package
#'   environments: a file refers to them by name and does not hold their
#'   bindings), `nrow` and `ncol` (for data frames and matrices, else `NA`), and
#'   `bytes`, the object's size in the uncompressed stream (`NA` for the
#'   objects nested in lists). The counts are integers, as [length()] gives
#'   them (a column is double where one of its values is beyond
#'   `.Machine$integer.max`). For several files, one data frame of them
#'   all, with a first column `file` (the path as given, or as found in the
#'   directory).
#' @param salvage `FALSE` (the default) to refuse a damaged file (cut
#'   short, or failing a checksum) with an error, or `TRUE` to recover what
#'   is intact, with a warning of class `rdarrow_warning` saying what was
#'   lost and where; see the section "Damaged files" of [rdata_objects()].
#' @section Errors: A file that is not R data, or is truncated or
#'   corrupt, raises an error of class `rdarrow_error` saying what is wrong
#'   and at which byte of the decompressed stream.
#' @section Damaged files: Every check a file's compression carries is
#'   made before anything is returned: gzip's CRC-32 and length, bzip2's
#'   block and stream CRCs, xz's block checks and index, a zstd frame's
#'   checksum, the hashes of `.qs`, `.qs2` and `.qdata` files, and every
#'   header hash of an `.fst` file with every block's length (fst stores no
#'   check of its column names or data blocks: a flipped bit inside one that
#'   leaves its compression whole reads as a different value, as it does for
#'   `fst::read_fst()`; keep `.fst` files where storage checks them). The
#'   rest of a file is read to its end for this even when the call needs
#'   only its first objects. A file cut short, or whose bytes fail a check,
#'   is an error saying so (`rdarrow_error_truncated` or
#'   `rdarrow_error_corrupt`), never different data.
#'
#'   `salvage = TRUE` recovers what was read whole before the damage: the
#'   objects of an `.RData` file before the damaged one, and of a list (a
#'   data frame too) the elements (columns) before the damaged one. A list
#'   cut short comes back without its names, class and other attributes,
#'   which R stores after its elements, so a data frame comes back as a
#'   plain list of its whole columns; damage in those attributes keeps all
#'   its elements, with their names where they were read whole before the
#'   file was cut. The converters ([rdata_to_arrow()], [rdata_to_parquet()],
#'   [rdata_to_ipc()]) take `salvage` too: they convert the object an
#'   intact file gives (the one named, or an error asking to name one when
#'   the objects after the damage are lost), a data frame cut short as a
#'   table of its whole columns (named `V1`, `V2`, ... where its names were
#'   lost), and their warning says what was returned. A file that parses whole but fails
#'   its checksum is given as read, with a warning that its values may be
#'   wrong (as qs's `validate_checksum = FALSE`). Nothing after the damage
#'   is read. A warning of class `rdarrow_warning` names what was lost:
#'   the object, the element and the byte where the damage was found.
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
#' # a directory of files: one listing, a `file` column first
#' d <- file.path(tempdir(), "several")
#' dir.create(d, showWarnings = FALSE)
#' saveRDS(head(iris), file.path(d, "flowers.rds"))
#' save(lst, file = file.path(d, "lists.RData"))
#' rdata_objects(d)
#' @export
rdata_objects <- function(file, recursive = FALSE, storage_options = NULL, salvage = FALSE) {
  # the usual call (one local file, the defaults): straight to the engine
  if (is.null(storage_options) && isFALSE(salvage) && is.logical(recursive) &&
      length(recursive) == 1L && !is.na(recursive) && is.character(file) &&
      length(file) == 1L && !is.na(file)) {
    local <- local_file_impl(file)
    if (!is.null(local)) {
      return(listing_of(check_engine(rdata_list_impl(local$path, local$name, max_depth(), recursive),
                                     call = sys.call(), file = file), file, sys.call()))
    }
  }
  if (!isTRUE(recursive) && !isFALSE(recursive)) abort_usage("`recursive` must be TRUE or FALSE.")
  salvage <- salvage_arg(salvage)
  storage <- storage_arg(storage_options)
  src <- data_source(file, dirs = TRUE, storage = storage)
  on.exit(src$done(), add = TRUE)
  if (!is.null(src$files)) return(list_files(src$files, recursive, sys.call(), storage, salvage))
  listing_of(check_engine(rdata_list_impl(src$path, src$name, read_args(storage, salvage = salvage),
                                          recursive), call = sys.call(), file = src$label),
             src$label, sys.call())
}

# The listing of several files at once: a `file` column first.
list_files <- function(files, recursive, call, storage = character(), salvage = FALSE) {
  src <- files_source(files)
  listing_of(check_engine(rdata_list_files_impl(src$paths, src$labels, src$names,
                                                read_args(storage, salvage = salvage), recursive),
                          call = call), NULL, call)
}

# A listing as the engine made it, warning of what salvaging lost.
listing_of <- function(listing, label, call) {
  damage <- attr(listing, "rdarrow_damage")
  if (!is.null(damage)) {
    attr(listing, "rdarrow_damage") <- NULL
    damage_warnings(damage, label, call)
  }
  listing
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
#' Character vectors of 1024 strings or more (columns, factor levels,
#' names, row names) are read lazily: they keep the strings as the engine
#' decoded them, and R makes each string only when it uses it. They give
#' what [readRDS()]'s vectors give in every use, and [serialize()] writes
#' R's own bytes; only `.Internal(inspect())` shows an `rdarrow_strings`
#' vector. `options(rdarrow.lazy_strings = FALSE)` reads them whole; a
#' number sets the shortest vector read lazily.
#'
#' @param file Where the R data is: the path of an `.RData`/`.rda`/`.rds`
#'   file; a package's lazy-load data base (its `.rdb`, its `.rdx`, or the
#'   path they share, such as `system.file("data", "Rdata", package =
#'   "datasets")`); an `http://` or `https://` URL (read as a stream, with
#'   `getOption("timeout")` seconds allowed for connecting and for each
#'   read); a raw vector ([serialize()] output, compressed or not, or a
#'   file's bytes); or a connection (such as `gzcon(url(...))`, `file()` or
#'   `rawConnection()`), read to its end (one naming a file or URL not read from yet is read from it, so that every check of its compression is made; a `gzcon()` that reports damage is an error). Several sources at once: a
#'   character vector of paths and URLs, or a directory (its `.rda`,
#'   `.RData`, `.rds`, `.qs`, `.qs2`, `.qdata` and `.fst` files, in its subdirectories too, in sorted
#'   order); they are read on all cores at once.
#' @param objects `NULL` (all objects) or a character vector of object
#'   names to read; the others are skipped without being built. An object
#'   nested in lists or in an S4 object's slots is named by its path, as R
#'   code reaches it: `"lst$a"`, `"lst[[2]]"`, `"lst$a$b"`,
#'   `"pbmc@assays$RNA@counts"` (or, in a list, by a path's parts:
#'   `list(c("lst", "a"), list("lst", 2))`); see [rdata_objects()] with
#'   `recursive = TRUE`. In an `.rds` file, whose one object is named
#'   after the file (`"x"` for `x.rds`), a path may start inside that
#'   object: `"b$c"` as well as `"x$b$c"`. An unknown name is an error
#'   that lists the names present (for a path, those at the deepest level
#'   that exists).
#' @param trusted `TRUE` (the default, or the option `rdarrow.trusted`) to
#'   read objects as R gives them, or `FALSE` to read a file from a stranger
#'   as data only; see the section "Reading files from strangers".
#' @inheritSection rdata_objects Damaged files
#' @return A named list of the objects. For an `.rds` file, a list of one
#'   element named after the file's base name. For several files, a list
#'   named by the files (the paths as given, or as found in the directory),
#'   each element the named list of that file's objects; an error in any
#'   file is an error of the call, naming the file.
#' @section Limits: Objects nested deeper than
#'   `getOption("rdarrow.max_depth", 10000)` levels are refused with an
#'   error (this protects the session's stack); raise the option for
#'   genuine files. The vector data one read decodes is limited to
#'   `getOption("rdarrow.max_memory")` bytes (by default the machine's
#'   physical memory), so that a corrupt or hostile file that declares huge
#'   vectors, or a small file that inflates to a huge one, ends in an error
#'   instead of exhausting memory.
#' @section Reading files from strangers: R's format can carry code that
#'   runs without being called. A *promise* (an unevaluated argument) runs
#'   its code as soon as its value is used, so a crafted file whose object,
#'   list element, attribute, slot or `.RData` binding is a promise runs the
#'   file's code when a script merely prints what it read
#'   (CVE-2024-27322). R 4.4 refuses a promise at the top of `readRDS()`;
#'   rdarrow refuses a promise anywhere R does not keep one, on every R
#'   version, with an error of class `rdarrow_error_unsafe` naming its
#'   place (`lst[[2]]`, `attr(x, "foo")`). R keeps promises only in
#'   environments' frames, where it saves a closure's unevaluated arguments
#'   (`function(n) function(x) x + n`): those read as [readRDS()] reads
#'   them. Every reader of R files refuses such files alike:
#'   [rdata_to_arrow()], [rdata_to_parquet()], Python, the command line and
#'   DuckDB; [rdata_objects()] still lists them, running nothing.
#'
#'   `trusted = FALSE` (or `options(rdarrow.trusted = FALSE)`, say in a
#'   Shiny app that takes uploads) reads data only. It refuses, naming the
#'   place, anything that runs code or changes the session by being read or
#'   used: promises anywhere, active bindings, functions and byte code,
#'   references to namespaces that are not loaded and to package
#'   environments that are not attached (rebuilding them loads the package,
#'   running its code), ALTREP objects of classes outside base R (their
#'   package's code rebuilds them) and persistent references (a hook's code
#'   rebuilds them). Data reads [identical()] to [readRDS()] as before:
#'   vectors, factors, data frames, matrices, lists, S4 objects of data
#'   (such as a `dgCMatrix`), calls and formulas (inert until evaluated),
#'   `lm()` fits whose environment is the global environment, environments
#'   holding only such data, null external pointers (a data.table's), and
#'   references to loaded namespaces and attached packages.
#'
#'   No reader is a sandbox for code the user calls later: a function read
#'   from a trusted file is still code from the file, and an S4 object's
#'   methods or a class's print method are the session's code, run when
#'   the object is used.
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
#' # a file from a stranger: data only
#' read_rdata(f, trusted = FALSE)
#' # several files at once: a list named by the files
#' d <- file.path(tempdir(), "several")
#' dir.create(d, showWarnings = FALSE)
#' saveRDS(head(iris), file.path(d, "flowers.rds"))
#' save(lst, file = file.path(d, "lists.RData"))
#' str(read_rdata(d), max.level = 2)
#' @inheritParams rdata_objects
#' @export
read_rdata <- function(file, objects = NULL, storage_options = NULL,
                       trusted = getOption("rdarrow.trusted", TRUE), salvage = FALSE) {
  trusted <- trusted_arg(trusted)
  salvage <- salvage_arg(salvage)
  if (is.list(objects)) {
    objects <- vapply(objects, object_arg, "", what = "each of `objects`")
  }
  if (!is.null(objects) && (!is.character(objects) || anyNA(objects))) {
    abort_usage("`objects` must be NULL, a character vector of object names or paths, or a list of those and paths' parts.")
  }
  storage <- storage_arg(storage_options)
  src <- data_source(file, dirs = TRUE, storage = storage)
  on.exit(src$done(), add = TRUE)
  if (!is.null(src$files)) return(read_files(src$files, objects, sys.call(), storage, trusted, salvage))
  read_values(src$path, objects, src$name, sys.call(), storage, trusted, salvage, src$label)
}

# The objects `objects` (NULL: all) of the file at `path`, as a named list;
# `call` for errors, `label` (the file as the user named it) for warnings.
# `one`: the file is read as one object (read_rds()).
read_values <- function(path, objects, name, call, storage = character(), trusted = TRUE,
                        salvage = FALSE, label = NULL, one = FALSE) {
  values_of(check_engine(rdata_read_impl(path, objects, name, read_args(storage, trusted, salvage)),
                         call = call, file = label),
            call, label, one)
}

# The objects of each of several `files`, read at once: a list named by
# the files, each element the named list of that file's objects.
# `one`: each file is read as one object (read_rds()).
read_files <- function(files, objects, call, storage = character(), trusted = TRUE,
                       salvage = FALSE, one = FALSE) {
  src <- files_source(files)
  res <- check_engine(rdata_read_files_impl(src$paths, src$labels, objects, src$names,
                                            read_args(storage, trusted, salvage)),
                      call = call)
  out <- Map(values_of, res, list(call), src$labels, one)
  names(out) <- src$labels
  out
}

# The objects of one file's read (what rdata_read_impl() returns), as a
# named list: those only R can rebuild rebuilt by R; a warning of what a
# salvaging read lost (`label`: the file, for it); read as `one` object,
# a damaged save() file's error (how many objects it holds is not known).
values_of <- function(res, call, label = NULL, one = FALSE) {
  damage_warnings(res$damage, label, call)
  if (one && length(res$not_one)) {
    prefix <- if (is.character(label) && length(label) == 1L) sprintf("file '%s': ", label) else ""
    stop(rdarrow_error(paste0(prefix, res$not_one), "usage", call = call))
  }
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
    # elements built as they were read, NULL in the stream R rebuilt
    for (p in res$patches) set_element_impl(rebuilt[[p$object]], p$element, p$value)
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
#' @param object `NULL` (the whole object) or a part of it to read alone:
#'   an object path that starts inside the object (`"b$c"`, `"b[[2]]"`,
#'   `"fit@slot"`) or at it, under the file's object name (`"x$b$c"` for
#'   `x.rds`), or a path's parts (`c("b", "c")`), as [read_rdata()]'s
#'   `objects` takes them.
#' @return The object (or its part `object`), [identical()] to what
#'   [readRDS()] (or [load()]) gives. For several files (a vector of paths or a directory), a list of
#'   their objects named by the files.
#' @section Errors: A source holding several objects is an error of class
#'   `rdarrow_error` that names them; read it with [read_rdata()].
#' @seealso [read_rdata()] for files of several objects.
#' @examples
#' f <- file.path(tempdir(), "example.rds")
#' saveRDS(head(mtcars), f)
#' read_rds(f)
#' read_rds(f, object = "mpg")
#' read_rds(serialize(letters, NULL))
#' @export
read_rds <- function(file, storage_options = NULL, trusted = getOption("rdarrow.trusted", TRUE),
                     salvage = FALSE, object = NULL) {
  object <- object_arg(object)
  # the usual call (one local file, the defaults): one call into the engine
  if (is.null(object) && is.null(storage_options) && isTRUE(trusted) && isFALSE(salvage) &&
      is.character(file) && length(file) == 1L && !is.na(file)) {
    res <- read_local_rds_impl(file, max_depth())
    if (!is.null(res)) {
      if (is.null(names(res))) return(res[[1L]])
      return(the_one(values_of(check_engine(res, call = sys.call(), file = file), sys.call(), file),
                     call = sys.call()))
    }
  }
  trusted <- trusted_arg(trusted)
  salvage <- salvage_arg(salvage)
  storage <- storage_arg(storage_options)
  src <- data_source(file, dirs = TRUE, storage = storage)
  on.exit(src$done(), add = TRUE)
  if (!is.null(src$files)) {
    return(read_rds_files(src$files, sys.call(), storage, trusted, salvage, object))
  }
  the_one(read_values(src$path, object, src$name, sys.call(), storage, trusted, salvage, src$label,
                      one = TRUE),
          call = sys.call())
}

# The one object (or the part `object`) of each of several files, in a
# list named by the files.
read_rds_files <- function(files, call, storage = character(), trusted = TRUE, salvage = FALSE,
                           object = NULL) {
  # each file as one object, as read_rds() reads one file: a damaged
  # save() file is not taken as one object
  values <- read_files(files, object, call, storage, trusted, salvage, one = TRUE)
  out <- vector("list", length(values))
  for (i in seq_along(values)) out[i] <- list(the_one(values[[i]], names(values)[[i]], call))
  names(out) <- names(values)
  out
}

# The one object of `values` (a file's objects; `label`: the file, where
# it is one of several), or an error naming them.
the_one <- function(values, label = NULL, call) {
  if (length(values) != 1L) {
    stop(rdarrow_error(
      paste0(if (is.null(label)) "" else sprintf("file '%s': ", label),
             not_one_object_impl(as.character(names(values)))),
      "usage", call = call
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
  object_name_impl(as.character(file))
}
