# Helpers for the round-trip tests: write the same objects in every way R
# can write them (save(), saveRDS(), serialize()), read them back with R's
# own load()/readRDS()/unserialize(), and compare against read_rdata().

# ---------------------------------------------------------------------------
# Files

# A fresh temporary directory, removed when `envir` (the calling test or
# function frame) exits.
local_tempdir <- function(pattern = "rdarrow-", envir = parent.frame()) {
  d <- tempfile(pattern)
  dir.create(d)
  do.call(on.exit, list(substitute(unlink(d, recursive = TRUE), list(d = d)), add = TRUE),
          envir = envir)
  d
}

# A temporary file path, removed when `envir` exits.
local_tempfile <- function(fileext = "", envir = parent.frame()) {
  f <- tempfile("rdarrow-", fileext = fileext)
  do.call(on.exit, list(substitute(unlink(f), list(f = f)), add = TRUE), envir = envir)
  f
}

# All the bytes of a file.
file_bytes <- function(file) readBin(file, "raw", file.size(file))

# load() a file into a new environment; returns the named list of objects,
# in the order load() gives them.
load_objects <- function(file) {
  e <- new.env(parent = emptyenv())
  nms <- load(file, envir = e)
  stats::setNames(lapply(nms, get, envir = e, inherits = FALSE), nms)
}

# ---------------------------------------------------------------------------
# Writing variants

# The ways save()/saveRDS() encode a stream: ascii = FALSE (XDR),
# TRUE (ASCII) and NA (ASCII with hexadecimal doubles).
rt_ascii_formats <- list(xdr = FALSE, ascii = TRUE, asciihex = NA)
rt_compressions <- list(none = FALSE, gzip = "gzip", bzip2 = "bzip2", xz = "xz")

# Write the objects `objs` (a named list or an environment) in every variant:
#  * save(): ascii FALSE/TRUE/NA x version 2/3 x compress FALSE/gzip/bzip2/xz,
#    all objects in one .RData file;
#  * saveRDS(): the same grid, one .rds file per object, named after the
#    object (so read_rdata() names it like the object);
#  * serialize(): xdr = TRUE, xdr = FALSE (native binary), ascii = TRUE and
#    ascii = NA, version 2/3, written with writeBin() to <object>.bin.
# `formats`, `versions` and `compress` restrict the grid (for big objects).
# saveRDS() writes each object uncompressed and with one other compression
# (rotating through them by object; all of them for a single object).
# Returns a data frame: file, kind ("rdata", "rds", "stream"), format,
# version, compress, object (NA for .RData) and label.
save_variants <- function(objs, dir = local_tempdir(envir = parent.frame()),
                          kinds = c("rdata", "rds", "stream"),
                          formats = c("xdr", "ascii", "asciihex", "binary"),
                          versions = c(2L, 3L),
                          compress = names(rt_compressions)) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  env <- as_object_env(objs)
  nms <- object_names(objs, env)
  # save() of a package environment warns that it "may not be available when
  # loading"; that is expected here.
  quiet <- function(expr) {
    withCallingHandlers(expr, warning = function(w) {
      if (grepl("may not be available when loading", conditionMessage(w))) {
        invokeRestart("muffleWarning")
      }
    })
  }
  rows <- list()
  add <- function(file, kind, format, version, comp, object) {
    rows[[length(rows) + 1L]] <<- data.frame(
      file = file, kind = kind, format = format, version = version,
      compress = comp, object = object,
      label = sprintf("%s/%s/v%d/%s%s", kind, format, version, comp,
                      if (is.na(object)) "" else paste0(" (", object, ")")),
      stringsAsFactors = FALSE
    )
  }
  for (fmt in intersect(formats, names(rt_ascii_formats))) {
    ascii <- rt_ascii_formats[[fmt]]
    for (v in versions) {
      for (comp in compress) {
        cz <- rt_compressions[[comp]]
        sub <- file.path(dir, sprintf("%s-v%d-%s", fmt, v, comp))
        dir.create(sub, showWarnings = FALSE)
        if ("rdata" %in% kinds) {
          f <- file.path(sub, "objects.RData")
          quiet(save(list = nms, envir = env, file = f, ascii = ascii, version = v,
                     compress = cz))
          add(f, "rdata", fmt, v, comp, NA_character_)
        }
        if ("rds" %in% kinds) {
          # Each object is written uncompressed and with one of the
          # compressions in turn (all of them when there is a single
          # object), which covers every compression at a fraction of the
          # files (each read costs time).
          for (k in seq_along(nms)) {
            nm <- nms[[k]]
            if (!rds_object_compress(comp, k, length(nms), compress)) next
            f <- file.path(sub, paste0(nm, ".rds"))
            quiet(saveRDS(get(nm, envir = env), file = f, ascii = ascii, version = v,
                          compress = cz))
            add(f, "rds", fmt, v, comp, nm)
          }
        }
      }
    }
  }
  if ("stream" %in% kinds) {
    stream_formats <- list(xdr = list(ascii = FALSE, xdr = TRUE),
                           binary = list(ascii = FALSE, xdr = FALSE),
                           ascii = list(ascii = TRUE, xdr = TRUE),
                           asciihex = list(ascii = NA, xdr = TRUE))
    for (fmt in intersect(formats, names(stream_formats))) {
      a <- stream_formats[[fmt]]
      for (v in versions) {
        sub <- file.path(dir, sprintf("stream-%s-v%d", fmt, v))
        dir.create(sub, showWarnings = FALSE)
        for (nm in nms) {
          f <- file.path(sub, paste0(nm, ".bin"))
          bytes <- quiet(serialize(get(nm, envir = env), NULL, ascii = a$ascii,
                                   xdr = a$xdr, version = v))
          writeBin(bytes, f)
          add(f, "stream", fmt, v, "none", nm)
        }
      }
    }
  }
  do.call(rbind, rows)
}

rds_object_compress <- function(comp, k, n, compress) {
  packed <- setdiff(compress, "none")
  if (comp == "none" || n == 1L || length(packed) <= 1L) return(TRUE)
  comp == packed[[(k - 1L) %% length(packed) + 1L]]
}

as_object_env <- function(objs) {
  if (is.environment(objs)) return(objs)
  stopifnot(is.list(objs), !is.null(names(objs)), all(nzchar(names(objs))))
  env <- new.env(parent = emptyenv())
  for (nm in names(objs)) assign(nm, objs[[nm]], envir = env)
  env
}

object_names <- function(objs, env) {
  if (is.environment(objs)) sort(ls(objs, all.names = TRUE)) else names(objs)
}

file_kind <- function(file) {
  ext <- tolower(tools::file_ext(file))
  switch(ext, rdata = , rda = "rdata", rds = "rds", bin = "stream",
         stop("unknown kind of file: ", file))
}

# ---------------------------------------------------------------------------
# Reading with R itself

# What R's own reader gives for `file`: a named list (load() into a new
# environment for .RData, readRDS() for .rds, unserialize() of the bytes for
# a raw serialize() stream), named as read_rdata() names things.
reference_read <- function(file, kind = file_kind(file)) {
  switch(kind,
    rdata = load_objects(file),
    rds = stats::setNames(list(readRDS(file)), rds_base_name(file)),
    stream = stats::setNames(list(unserialize(file_bytes(file))), rds_base_name(file))
  )
}

rds_base_name <- function(file) sub("\\.[^.]*$", "", basename(file))

# ---------------------------------------------------------------------------
# Comparing objects

is_singleton_env <- function(e) {
  identical(e, globalenv()) || identical(e, baseenv()) ||
    identical(e, emptyenv()) || isNamespace(e) ||
    startsWith(environmentName(e), "package:")
}

# Whether `x` holds something identical() compares by address (an
# environment other than the global/base/empty ones and namespaces, or a
# weak reference), so that two separate loads can never be identical().
has_identity_objects <- function(x, depth = 0L) {
  if (depth > 500L) return(TRUE)
  t <- typeof(x)
  if (t == "environment") return(!is_singleton_env(x))
  if (t == "weakref") return(TRUE)
  if (t %in% c("symbol", "NULL", "builtin", "special", "char", "externalptr")) return(FALSE)
  a <- attributes(x)
  if (!is.null(a) && t != "S4" && has_identity_objects(a, depth + 1L)) return(TRUE)
  if (t == "S4" && has_identity_objects(a, depth + 1L)) return(TRUE)
  if (t == "closure") {
    return(has_identity_objects(environment(x), depth + 1L) ||
             has_identity_objects(as.list(formals(x)), depth + 1L) ||
             has_identity_objects(body(x), depth + 1L))
  }
  if (t %in% c("list", "expression", "pairlist", "language")) {
    els <- as.list(x)
    for (i in seq_along(els)) {
      if (is.symbol(els[[i]])) next
      if (has_identity_objects(els[[i]], depth + 1L)) return(TRUE)
    }
  }
  FALSE
}

serialized <- function(x, version = 3L) serialize(x, NULL, version = version)

# Compare `got` with `expected`; returns NULL when they are the same, or a
# string saying how they differ. Two tests:
#  * identical() with every option at its strictest (bitwise doubles, NA vs
#    NaN, attribute order, byte code, srcref, environments), unless the
#    object holds environments or weak references (compared by address);
#  * serialize() of both gives the same bytes (so encodings, S4 bits,
#    environment contents, locks and active bindings all agree).
#    `version` is the serialization version used for that comparison; the
#    default, 2, writes ALTREP objects expanded, so that comparison does not
#    depend on whether a vector is held compact (identical() does not either;
#    test-read-roundtrip.R checks ALTREP forms separately). It is done
#    first, as identical() expands R's compact sequences.
compare_objects <- function(got, expected, version = 2L) {
  problems <- character()
  if (!identical(typeof(got), typeof(expected))) {
    return(sprintf("typeof is '%s', R gives '%s'", typeof(got), typeof(expected)))
  }
  sg <- serialized(got, version)
  se <- serialized(expected, version)
  if (!has_identity_objects(expected)) {
    same <- identical(got, expected, num.eq = FALSE, single.NA = FALSE,
                      attrib.as.set = FALSE, ignore.bytecode = FALSE,
                      ignore.environment = FALSE, ignore.srcref = FALSE)
    if (!same) {
      d <- tryCatch(paste(utils::head(format(suppressWarnings(waldo::compare(got, expected,
                                                           x_arg = "read_rdata",
                                                           y_arg = "R"))), 20),
                          collapse = "\n"),
                    error = function(e) "")
      problems <- c(problems, paste0("not identical() to R's object. ", d))
    }
  }
  if (!identical(sg, se)) {
    n <- min(length(sg), length(se))
    first <- which(sg[seq_len(n)] != se[seq_len(n)])[1]
    if (is.na(first)) first <- n + 1L
    problems <- c(problems, sprintf(
      "serialize() differs (%d vs %d bytes, first difference at byte %d)",
      length(sg), length(se), first - 1L))
  }
  if (length(problems)) paste(problems, collapse = "; ") else NULL
}

# Run `expr`, returning the value or the condition it signalled.
try_read <- function(expr) {
  tryCatch(expr, error = function(e) e)
}

# The main expectation: read_rdata(file) gives the same names, in the same
# order, as R's reader, and each object is the same (see compare_objects()).
# `expected` defaults to what R's reader gives for `file`. Returns (invisibly)
# list(got = what read_rdata() gave, or NULL on error; ref = R's objects).
expect_same_as_load <- function(file, expected = reference_read(file),
                                label = basename(file), version = 2L) {
  got <- try_read(read_rdata(file))
  out <- list(got = NULL, ref = expected)
  if (inherits(got, "error")) {
    testthat::fail(sprintf("%s: read_rdata() failed: %s", label, conditionMessage(got)))
    return(invisible(out))
  }
  out$got <- got
  if (!identical(names(got), names(expected))) {
    testthat::fail(sprintf("%s: read_rdata() names are [%s], R gives [%s]", label,
                           paste(names(got), collapse = ", "),
                           paste(names(expected), collapse = ", ")))
    return(invisible(out))
  }
  problems <- character()
  for (nm in names(expected)) {
    p <- compare_objects(got[[nm]], expected[[nm]], version = version)
    if (!is.null(p)) problems <- c(problems, sprintf("object '%s': %s", nm, p))
  }
  testthat::expect(length(problems) == 0L,
                   sprintf("%s: %s", label, paste(problems, collapse = "\n")))
  invisible(out)
}

# Check every variant written by save_variants(): read_rdata() against
# R's reader, one expectation per variant. Returns the variants with list
# columns `got` and `ref` (what read_rdata() and R gave, as named lists), so
# that tests can check more without reading the files again (each read
# costs time).
expect_variants_same_as_load <- function(variants) {
  got <- vector("list", nrow(variants))
  ref <- vector("list", nrow(variants))
  for (i in seq_len(nrow(variants))) {
    r <- expect_same_as_load(variants$file[[i]], label = variants$label[[i]])
    if (!is.null(r$got)) got[[i]] <- r$got
    ref[[i]] <- r$ref
  }
  variants$got <- got
  variants$ref <- ref
  invisible(variants)
}

# Shortcut: write `objs` in all variants and check them all.
expect_roundtrip <- function(objs, ...) {
  v <- save_variants(objs, dir = local_tempdir(envir = parent.frame()), ...)
  expect_variants_same_as_load(v)
}

# The bits of a double vector, for NA/NaN payload and -0 checks: classes
# and other attributes are dropped first (so an integer64 vector gives its
# stored bits, not its values converted to double).
double_bits <- function(x) {
  x <- unclass(x)
  attributes(x) <- NULL
  writeBin(as.double(x), raw(), endian = "little")
}

# A closure with the global environment, built from source text, with or
# without srcref.
make_closure <- function(text, keep.source = FALSE) {
  eval(parse(text = text, keep.source = keep.source)[[1]], envir = globalenv())
}

# The ALTREP class of `x` ("compact_intseq", "deferred_string", "wrap_real",
# ...) as R's own serializer writes it (version 3 writes an ALTREP object as
# ALTREP_SXP followed by its class symbol), or NA when `x` is not ALTREP or
# R would write it as an ordinary vector (e.g. an expanded compact sequence).
altrep_class <- function(x) {
  s <- serialize(x, NULL, version = 3L, xdr = TRUE)
  int_at <- function(pos) readBin(s[pos:(pos + 3L)], "integer", endian = "big")
  nelen <- int_at(15L)
  pos <- 19L + nelen
  if (bitwAnd(int_at(pos), 0xFFL) != 238L) return(NA_character_)
  # ALTREP_SXP flags, LISTSXP flags, SYMSXP flags, CHARSXP flags, length
  len <- int_at(pos + 16L)
  rawToChar(s[(pos + 20L):(pos + 19L + len)])
}

# ---------------------------------------------------------------------------
# Listings (rdata_objects())

# class(x) collapsed with "/". R refuses class() of a bare CHARSXP ("cannot
# have attributes on a CHARSXP"): it can have no class attribute, and R's
# implicit class of a type with no implicit class of its own (everything but
# vectors with dimensions, numbers, functions, symbols, calls, pairlists and
# lists) is the name typeof() gives it, so that is what it is taken to be.
r_class <- function(x) {
  if (identical(typeof(x), "char")) return(typeof(x))
  paste(class(x), collapse = "/")
}

# What rdata_objects() should say about a named list of objects, computed
# with R: class() collapsed with "/" (see r_class()), typeof(), length()
# (without S3 dispatch), nrow/ncol for data frames and matrices.
expected_listing <- function(objs) {
  dims <- function(x, which) {
    if (identical(typeof(x), "char")) {
      NA_real_ # is.data.frame() of a CHARSXP fails
    } else if (is.data.frame(x)) {
      if (which == 1L) .row_names_info(x, 2L) else length(unclass(x))
    } else if (is.matrix(x)) {
      dim(x)[[which]]
    } else {
      NA_real_
    }
  }
  data.frame(
    name = names(objs),
    class = vapply(objs, r_class, ""),
    type = vapply(objs, typeof, ""),
    length = vapply(objs, function(x) {
      # the session's own environments are saved as references: the file
      # does not hold their bindings, so their length is unknown
      session_env <- is.environment(x) &&
        (identical(x, globalenv()) || identical(x, baseenv()) || isNamespace(x) ||
         !is.null(attr(x, "name")) && startsWith(attr(x, "name"), "package:"))
      if (session_env) NA_real_
      else as.numeric(if (isS4(x) || is.environment(x) || identical(typeof(x), "char")) length(x)
                      else length(unclass(x)))
    }, 0),
    nrow = vapply(objs, function(x) as.numeric(dims(x, 1L)), 0),
    ncol = vapply(objs, function(x) as.numeric(dims(x, 2L)), 0),
    stringsAsFactors = FALSE,
    row.names = NULL
  )
}

listing_columns <- c("name", "class", "type", "length", "nrow", "ncol", "bytes")

# Compare an rdata_objects() result with expected_listing() of R's objects.
expect_listing <- function(listing, expected, label) {
  expect_s3_class(listing, "data.frame")
  expect_identical(names(listing), listing_columns, label = paste(label, "columns"))
  expect_identical(listing$name, expected$name, label = paste(label, "name"))
  expect_identical(listing$class, expected$class, label = paste(label, "class"))
  expect_identical(listing$type, expected$type, label = paste(label, "type"))
  expect_true(is.numeric(listing$length) && is.numeric(listing$nrow) &&
                is.numeric(listing$ncol) && is.numeric(listing$bytes),
              label = paste(label, "numeric columns"))
  expect_identical(as.numeric(listing$length), expected$length, label = paste(label, "length"))
  expect_identical(as.numeric(listing$nrow), expected$nrow, label = paste(label, "nrow"))
  expect_identical(as.numeric(listing$ncol), expected$ncol, label = paste(label, "ncol"))
  expect_true(all(!is.na(listing$bytes) & listing$bytes > 0), label = paste(label, "bytes > 0"))
}
