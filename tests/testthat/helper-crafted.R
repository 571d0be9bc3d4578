# Crafted streams: R's serialization format written token by token, for
# what no R function writes (a promise outside an environment, a reference
# to a namespace not loaded, an ALTREP class of another package). A node is
# a list of tokens, integers and strings' bytes; craft_bytes() writes them
# in XDR, native binary or ASCII, as R's serializer would (serialize.c's
# OutInteger and OutString), after the header of a version 3 stream.

cr_int <- function(x) list(as.integer(x))
cr_bytes <- function(s) list(charToRaw(s))

# The flags word: type, object bit, attributes, tag, levels.
cr_flags <- function(type, attr = FALSE, tag = FALSE, object = FALSE, levels = 0L) {
  cr_int(type + 256L * object + 512L * attr + 1024L * tag + levels * 4096L)
}

cr_nil <- function() cr_int(254L)
cr_globalenv <- function() cr_int(253L)
cr_unbound <- function() cr_int(252L)
# a CHARSXP (ASCII)
cr_char <- function(s) c(cr_flags(9L, levels = 64L), cr_int(nchar(s, "bytes")), cr_bytes(s))
cr_sym <- function(name) c(cr_flags(1L), cr_char(name))
cr_strings <- function(x) c(cr_flags(16L), cr_int(length(x)), do.call(c, lapply(x, cr_char)))
cr_ints <- function(x, attrs = NULL) {
  c(cr_flags(13L, attr = !is.null(attrs)), cr_int(length(x)), as.list(as.integer(x)), attrs)
}
# a tagged pairlist (attributes, or an .RData file's bindings) of nodes
cr_pairlist <- function(...) {
  items <- list(...)
  out <- list()
  for (n in names(items)) out <- c(out, cr_flags(2L, tag = TRUE), cr_sym(n), items[[n]])
  c(out, cr_nil())
}
# a call: `fun(args...)`
cr_call <- function(fun, ...) {
  out <- c(cr_flags(6L), cr_sym(fun))
  for (a in list(...)) out <- c(out, cr_flags(2L), a)
  c(out, cr_nil())
}
# an unevaluated promise of `code` in the global environment
cr_promise <- function(code) c(cr_flags(5L, tag = TRUE), cr_globalenv(), cr_unbound(), code)
cr_list <- function(..., attrs = NULL) {
  items <- list(...)
  c(cr_flags(19L, attr = !is.null(attrs)), cr_int(length(items)), do.call(c, items), attrs)
}
# an S4 object (no data part) of class `class` with these slots
cr_s4 <- function(class, ...) {
  cls <- c(cr_flags(16L, attr = TRUE), cr_int(1L), cr_char(class),
           cr_pairlist(package = cr_strings(".GlobalEnv")))
  c(cr_flags(25L, attr = TRUE, object = TRUE, levels = 16L),
    do.call(cr_pairlist, c(list(...), list(class = cls))))
}
# a reference to the namespace `name` (a NAMESPACESXP: name and version)
cr_namespace <- function(name, version = "1.0") {
  c(cr_int(249L), cr_int(0L), cr_int(2L), cr_char(name), cr_char(version))
}
# an ALTREP integer vector of a package's class, its state an integer vector
cr_altrep <- function(class, package, state) {
  c(cr_int(238L), cr_flags(2L), cr_sym(class), cr_flags(2L), cr_sym(package),
    cr_flags(2L), cr_ints(13L), cr_nil(), state, cr_nil())
}

# The bytes of a stream of `node` in `format`; `rdata`: an .RData file's
# (the "RDX3" line first), whose node is the pairlist of its bindings.
craft_bytes <- function(node, format = c("xdr", "binary", "ascii"), rdata = FALSE) {
  format <- match.arg(format)
  header <- c(cr_int(3L), cr_int(262658L), cr_int(197888L), cr_int(5L), cr_bytes("UTF-8"))
  toks <- c(header, node)
  body <- lapply(toks, function(t) {
    if (is.integer(t)) {
      switch(format,
        xdr = writeBin(t, raw(), size = 4L, endian = "big"),
        binary = writeBin(t, raw(), size = 4L, endian = "little"),
        ascii = charToRaw(paste0(if (is.na(t)) "NA" else t, "\n"))
      )
    } else if (format == "ascii") {
      # OutString: every byte a printable character, others in octal
      chars <- vapply(as.integer(t), function(b) {
        if (b <= 32L || b > 126L || b == 92L) sprintf("\\%03o", b) else rawToChar(as.raw(b))
      }, "")
      charToRaw(paste0(paste(chars, collapse = ""), "\n"))
    } else {
      t
    }
  })
  magic <- switch(format, xdr = "X\n", binary = "B\n", ascii = "A\n")
  lead <- if (rdata) switch(format, xdr = "RDX3\n", binary = "RDB3\n", ascii = "RDA3\n") else ""
  c(charToRaw(lead), charToRaw(magic), do.call(c, body))
}

# Write `bytes` to `path`, gzip-compressed with `gzip`.
craft_file <- function(bytes, path, gzip = FALSE) {
  con <- if (gzip) gzfile(path, "wb") else file(path, "wb")
  writeBin(bytes, con)
  close(con)
  path
}

# The crafted files of a promise whose code creates `marker`: at the top
# level, as a list element, as an attribute, as an S4 slot (.rds) and as
# an .RData binding. A named list of list(node, rdata, place): `place` is
# where the error must say the promise is.
promise_cases <- function(marker) {
  p <- cr_promise(cr_call("file.create", cr_strings(marker)))
  list(
    top = list(node = p, rdata = FALSE, place = "'x'"),
    element = list(node = cr_list(cr_ints(1L), p), rdata = FALSE, place = "'x[[2]]'"),
    attribute = list(node = cr_ints(1:3, attrs = cr_pairlist(foo = p)), rdata = FALSE,
                     place = "'attr(x, \"foo\")'"),
    slot = list(node = cr_s4("Thing", foo = p), rdata = FALSE, place = "'x@foo'"),
    binding = list(node = cr_pairlist(x = p), rdata = TRUE, place = "'x'")
  )
}

# A lazy-load data base `base` (.rdb and .rdx) of the one variable `x`,
# its entry the stream `bytes` stored uncompressed.
craft_lazyload <- function(bytes, base) {
  writeBin(bytes, paste0(base, ".rdb"))
  saveRDS(list(variables = list(x = c(0L, length(bytes))), references = list(), compressed = FALSE),
          paste0(base, ".rdx"))
  base
}
