# Errors from the engine arrive as lists of class "rdarrow_error_value";
# they become R conditions of class c("rdarrow_error_<kind>", "rdarrow_error",
# "error", "condition") carrying the byte offset and the object name.

rdarrow_error <- function(message, kind = "usage", offset = NA_real_, object = "", call = NULL) {
  structure(
    class = c(paste0("rdarrow_error_", kind), "rdarrow_error", "error", "condition"),
    list(message = message, call = call, kind = kind, offset = offset,
         object = if (nzchar(object)) object else NA_character_)
  )
}

# The call the user made: the outermost call on the stack to a function of
# this package (an exported function, or a method R dispatched to), so
# that a condition raised in a helper shows `write_rds(x, f)`, not the
# helper; the caller's call where there is none.
user_call <- function() {
  ns <- topenv(environment(user_call))
  n <- sys.nframe() - 1L
  for (i in seq_len(n)) {
    if (identical(environment(sys.function(i)), ns)) return(sys.call(i))
  }
  sys.call(-1L)
}

# Raise `res` if it is an engine error, else return it; `file`: the file
# the call read (as the user named it), which the message names.
check_engine <- function(res, call = user_call(), file = NULL) {
  if (inherits(res, "rdarrow_error_value")) {
    message <- res$message
    # (a URL is named by the engine, without its password or query)
    if (is.character(file) && length(file) == 1L && !grepl(file, message, fixed = TRUE) &&
        identical(location_impl(file), "local")) {
      message <- sprintf("file '%s': %s", file, message)
    }
    stop(rdarrow_error(message, res$kind, res$offset, res$object, call = call))
  }
  res
}

# Tell the user what the engine noticed while converting (the work went
# on): warnings of class "rdarrow_warning".
engine_warnings <- function(messages, call = user_call()) {
  for (m in messages) {
    warning(structure(class = c("rdarrow_warning", "warning", "condition"),
                      list(message = m, call = call)))
  }
  invisible()
}

abort_usage <- function(message, call = user_call()) {
  stop(rdarrow_error(message, "usage", call = call))
}

# Where an R data reader reads `file` from: a path or http(s) URL as it
# is; a raw vector (serialize() output, compressed or not, or a file's
# bytes) as it is, read by the engine from memory; a connection (read to
# its end, chunk by chunk) through a temporary file. Returns list(path, name (of an .rds stream's object),
# done (removes the temporary file; call it on exit)); with `dirs`,
# several paths or a directory give list(files, done) instead of an
# error (read them with files_source()).
data_source <- function(file, dirs = FALSE, storage = character()) {
  if (is.character(file) && length(file) == 1L && !is.na(file)) {
    # an existing local file (the common case), recognised by the engine
    local <- local_file_impl(file)
    if (!is.null(local)) return(list(path = local$path, name = local$name, done = no_op, label = file))
  }
  if (is.raw(file)) {
    if (!length(file)) abort_usage("`file` is an empty raw vector, not R data.")
    return(list(path = file, name = "value", done = no_op))
  }
  if (inherits(file, "connection")) return(connection_source(file, storage))
  if (dirs && is.character(file) && length(file) != 1L) {
    if (!length(file) || anyNA(file) || !all(nzchar(file))) abort_usage(sources_usage)
    return(list(files = expand_files(file, storage), done = no_op))
  }
  if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file)) {
    abort_usage(if (dirs) sources_usage else "`file` must be a single path or URL (a non-empty string), a raw vector or a connection.")
  }
  files <- expand_files(file, storage)
  if (!identical(files, file)) {
    # a glob, a directory or a store prefix: the files it names
    if (dirs) return(list(files = files, done = no_op))
    if (length(files) != 1L) {
      abort_usage(sprintf("'%s' names %d files, not one.", file, length(files)))
    }
    file <- files
  }
  where <- r_data_paths(file)
  if (where$missing) abort_usage(sprintf("file '%s' does not exist.", file))
  if (where$dir) abort_usage(sprintf("'%s' is a directory, not a file.", file))
  list(path = where$paths, name = rds_name(file), done = no_op, label = file)
}

no_op <- function() invisible()

# A connection as a source. One that stands for a file or an http(s) URL
# not yet read from (file(), gzfile(), bzfile(), xzfile(), url()) is read
# from that file or URL by the engine itself, so every check the file's
# compression carries is made (R's gzfile() hands over a stream whose CRC
# failed without a word). Any other is read to its end, chunk by chunk,
# into a temporary file; a connection that inflates as it reads (gzcon())
# reports a failed CRC or length only by printing it, so what it prints
# meanwhile is caught, and a read during which it printed is an error.
connection_source <- function(con, storage = character()) {
  call <- user_call()
  info <- summary(con)
  desc <- info$description
  name <- rds_name(desc)
  name <- if (nzchar(name)) name else "value"
  # a connection given closed is closed (destroyed) after the read, as
  # readRDS() and load() do; an open one stays open
  if (!isOpen(con)) on.exit(close(con), add = TRUE)
  if (!connection_started(con)) {
    direct <- if (info$class %in% c("file", "gzfile", "bzfile", "xzfile") &&
                  nzchar(desc) && file.exists(desc) && !dir.exists(desc)) {
      normalizePath(desc)
    } else if (startsWith(info$class, "url") && grepl("^https?://", desc)) {
      desc
    }
    if (!is.null(direct)) {
      src <- data_source(direct, storage = storage)
      src$label <- desc
      return(src)
    }
  }
  tmp <- tempfile("rdarrow-")
  out <- file(tmp, "wb")
  ok <- FALSE
  on.exit(if (!ok) unlink(tmp), add = TRUE)
  if (!isOpen(con)) open(con, "rb")
  # what the connection prints while it is read (gzcon()'s "crc error")
  said <- character()
  said_to <- textConnection("said", "w", local = TRUE)
  before <- sink.number(type = "message")
  sink(said_to, type = "message")
  restored <- FALSE
  restore <- function() {
    if (restored) return()
    restored <<- TRUE
    if (before == 2L) sink(type = "message") else sink(getConnection(before), type = "message")
    close(said_to)
  }
  on.exit(restore(), add = TRUE)
  tryCatch(
    repeat {
      chunk <- readBin(con, "raw", 1048576L)
      if (!length(chunk)) break
      writeBin(chunk, out)
    },
    error = function(e) {
      close(out)
      restore()
      stop(rdarrow_error(sprintf("cannot read the connection: %s", conditionMessage(e)), "io",
                         call = call))
    }
  )
  close(out)
  restore()
  said <- trimws(said[nzchar(trimws(said))])
  if (length(said)) {
    stop(rdarrow_error(sprintf(
      "the connection '%s' reported damage as it decompressed (%s): the file is damaged or cut short, and what it handed over is not the original data",
      desc, paste(said, collapse = "; ")), "corrupt", call = call))
  }
  ok <- TRUE
  list(path = tmp, name = name, done = function() unlink(tmp), label = desc)
}

# Whether a connection has been read from (or cannot tell): an open one
# whose position is not its start.
connection_started <- function(con) {
  if (!isOpen(con)) return(FALSE)
  pos <- tryCatch(seek(con), error = function(e) NA_real_)
  !identical(pos, 0)
}

sources_usage <- "`file` must be paths or URLs (non-empty strings), a directory, a raw vector or a connection."

# The files each of `files` names, in order, by the engine's one rule
# (expand_sources(), as Python, the command line and DuckDB ask it): a glob
# pattern's matches (`**` across folders), a directory's R data files, an
# object store prefix's or pattern's objects, each sorted; anything else as
# it is.
expand_files <- function(files, storage = character(), call = user_call()) {
  check_engine(expand_sources_impl(files, path.expand(files), read_args(storage)), call = call)
}

# Several sources `files` (paths or URLs, as data_source() takes one): the
# engine's paths, `labels` (as given, for errors and names) and each
# .rds object's name. The engine recognises each source (a file, a URL, a
# lazy-load data base) on the thread that reads it, and says which file is
# missing or unreadable; nothing here touches the file system.
files_source <- function(files) {
  if (!length(files) || anyNA(files) || !all(nzchar(files))) abort_usage(sources_usage)
  list(paths = path.expand(files), labels = files, names = rds_name(files))
}

# Where R data `files` are read from, as the engine takes them: http(s)
# URLs as they are (the engine streams them), a lazy-load data base named
# by the path its .rdb and .rdx share, else the file's full path. Returns
# list(paths, missing, dir): `missing` where nothing is there, `dir` where
# a directory is (their `paths` are NA).
r_data_paths <- function(files) {
  url <- location_impl(files) != "local"
  expanded <- path.expand(files)
  if (length(files) == 1L && !url) {
    # one local path (the common case), without the vectorised steps
    if (file.exists(expanded)) {
      if (dir.exists(expanded)) return(list(paths = NA_character_, missing = FALSE, dir = TRUE))
      return(list(paths = normalizePath(expanded, mustWork = TRUE), missing = FALSE, dir = FALSE))
    }
  }
  exists <- file.exists(expanded)
  base <- !url & !exists &
    (file.exists(paste0(expanded, ".rdb")) | file.exists(paste0(expanded, ".rdx")))
  dir <- !url & exists & dir.exists(expanded)
  local <- !url & exists & !dir
  paths <- ifelse(url, files, NA_character_)
  paths[local] <- normalizePath(expanded[local], mustWork = TRUE)
  paths[base] <- file.path(normalizePath(dirname(expanded[base]), mustWork = TRUE),
                           basename(expanded[base]))
  list(paths = paths, missing = !url & !base & !exists, dir = dir)
}

# Whether `x` are object store URLs (s3://, gs://, az://, ...), which the
# engine reads (with the environment's credentials, AWS_ACCESS_KEY_ID,
# AWS_ENDPOINT_URL, ...) and writes (uploads, complete or not at all).
is_store_url <- function(x) {
  location_impl(as.character(x)) == "store"
}

# A local file given as `file`: its full path, or a usage error.
check_file <- function(file) {
  if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file)) {
    abort_usage("`file` must be a single path (a non-empty string).")
  }
  path <- path.expand(file)
  if (!file.exists(path)) {
    abort_usage(sprintf("file '%s' does not exist.", file))
  }
  if (dir.exists(path)) {
    abort_usage(sprintf("'%s' is a directory, not a file.", file))
  }
  normalizePath(path, mustWork = TRUE)
}

# The engine's read settings: the nesting limit (option rdarrow.max_depth),
# an object store's options (`storage_arg()`), and whether to salvage what
# is intact in a damaged file.
read_args <- function(storage = character(), trusted = TRUE, salvage = FALSE) {
  args <- list(max_depth = max_depth(), storage = storage)
  if (isFALSE(trusted)) {
    # data only: what the session already has is all a file may refer to
    args <- c(args, list(trusted = FALSE, namespaces = loadedNamespaces(), attached = search()))
  }
  if (isTRUE(salvage)) args$salvage <- TRUE
  args
}

# `salvage` as given: TRUE or FALSE.
salvage_arg <- function(salvage) {
  if (!isTRUE(salvage) && !isFALSE(salvage)) abort_usage("`salvage` must be TRUE or FALSE.")
  salvage
}

# Warn of what salvaging reads of damaged files lost (`damage`: the
# engine's messages; `label`: the file, where the user named one).
damage_warnings <- function(damage, label = NULL, call = user_call()) {
  if (!length(damage)) return(invisible())
  prefix <- if (is.character(label) && length(label) == 1L) sprintf("file '%s': ", label) else ""
  engine_warnings(paste0(prefix, damage), call = call)
}

# `trusted` as given, or the option rdarrow.trusted: TRUE or FALSE.
trusted_arg <- function(trusted) {
  if (!isTRUE(trusted) && !isFALSE(trusted)) {
    abort_usage("`trusted` (or the option rdarrow.trusted) must be TRUE or FALSE.")
  }
  trusted
}

# `storage_options` as the engine takes them: a named character vector
# (logical values as "true"/"false").
storage_arg <- function(storage_options) {
  if (is.null(storage_options) || !length(storage_options)) return(character())
  bad <- "`storage_options` must be a named list of single strings, numbers or TRUE/FALSE (options of the object store, in the object_store crate's names: `endpoint_url`, `region`, `aws_access_key_id`, `allow_http`, ...)."
  if (!(is.list(storage_options) || is.character(storage_options)) ||
      is.null(names(storage_options)) || anyNA(names(storage_options)) ||
      !all(nzchar(names(storage_options)))) {
    abort_usage(bad)
  }
  values <- vapply(storage_options, function(v) {
    if (length(v) != 1L || is.na(v) || !(is.character(v) || is.numeric(v) || is.logical(v))) abort_usage(bad)
    if (is.logical(v)) tolower(as.character(v)) else as.character(v)
  }, "")
  names(values) <- names(storage_options)
  values
}

max_depth <- function() {
  d <- getOption("rdarrow.max_depth", 10000L)
  # the default, or any positive integer: as it is (every read asks)
  if (is.integer(d) && length(d) == 1L && !is.na(d) && d >= 1L) return(d)
  if (!is.numeric(d) || length(d) != 1L || is.na(d) || d < 1) {
    abort_usage("option rdarrow.max_depth must be a positive number.")
  }
  as.integer(min(d, .Machine$integer.max))
}

# Progress for long work, shown by the engine's main-thread loop in
# interactive sessions after two seconds (options(rdarrow.progress = FALSE)
# turns it off). `done` counts bytes processed.
progress_start <- function(label, total = NA) {
  if (!requireNamespace("cli", quietly = TRUE)) return(NULL)
  if (is.na(total)) {
    return(cli::cli_progress_bar(
      name = label, total = NA, .auto_close = FALSE, .envir = globalenv(),
      format = "{cli::pb_spin} {cli::pb_name} {cli::pb_current_bytes} {cli::pb_elapsed}"
    ))
  }
  # a download of known length
  cli::cli_progress_bar(
    name = label, total = total, .auto_close = FALSE, .envir = globalenv(),
    format = "{cli::pb_name} {cli::pb_bar} {cli::pb_current_bytes}/{cli::pb_total_bytes} {cli::pb_eta}"
  )
}

progress_update <- function(id, done) {
  if (!is.null(id)) cli::cli_progress_update(id = id, set = done, .envir = globalenv())
  invisible()
}

progress_done <- function(id) {
  if (!is.null(id)) cli::cli_progress_done(id = id, .envir = globalenv())
  invisible()
}
