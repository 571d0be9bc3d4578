# The writer: re-serializing a parsed file gives back its bytes exactly, and
# rewriting a file in another format, version and compression gives a file
# that R's own load()/readRDS()/unserialize() reads back as the original
# objects.

reserialize <- function(path) rdarrow:::rdata_reserialize_impl(path, 10000L)
decompressed <- function(path) rdarrow:::rdata_decompressed_impl(path)
rewrite <- function(path, out, format, version, compress, level = -1L) {
  rdarrow:::rdata_rewrite_impl(path, out, format, as.integer(version), compress,
                               as.integer(level), 10000L)
}

test_that("re-serializing gives back every file's decompressed bytes exactly", {
  # minutes of rewrites: tools/test.sh runs them (NOT_CRAN), CRAN's time-limited check does not
  skip_on_cran()
  objs <- writer_objects()
  v <- save_variants(objs, dir = local_tempdir())
  for (i in seq_len(nrow(v))) {
    f <- v$file[[i]]
    dec <- decompressed(f)
    expect_true(is.raw(dec), label = paste(v$label[[i]], "decompressed is raw"))
    if (v$compress[[i]] == "none") {
      expect_identical(dec, readBin(f, "raw", file.size(f)),
                       label = paste(v$label[[i]], "uncompressed file is its own stream"))
    }
    if (v$format[[i]] %in% c("ascii", "asciihex")) {
      expect_false(as.raw(13) %in% dec, label = paste(v$label[[i]], "no CR in ASCII"))
    }
    re <- reserialize(f)
    if (!is.raw(re)) {
      fail(sprintf("%s: rdata_reserialize_impl() failed: %s", v$label[[i]],
                   if (is.list(re)) re$message else "not a raw vector"))
      next
    }
    n <- min(length(re), length(dec))
    first <- which(re[seq_len(n)] != dec[seq_len(n)])[1]
    expect(identical(re, dec),
           sprintf("%s: re-serialized stream differs from the file (%d vs %d bytes, first difference at byte %s)",
                   v$label[[i]], length(re), length(dec),
                   if (is.na(first)) n else first - 1L))
  }
})

test_that("re-serializing ASCII streams with extreme doubles and odd strings is exact", {
  # ASCII formats spell numbers and escape strings: the writer must spell
  # them as R does.
  odd <- c("tab\there", "new\nline", "quote\"s", "back\\slash", "bell\a", "\u00e9",
           "sp ace", "\001\002\177", NA, "")
  # (.Machine$double.xmax is spelled 1.797693134862316e+308, which overflows
  # on reading, in R too: see the next test)
  dbl <- c(1.797693134862315e+308, -.Machine$double.xmin, 4.9406564584124654e-324,
           1e-300, 0.1 + 0.2, 1 / 3, 2^53 + 2, 1e22, 1e23, -123.456e-7, NA, NaN, Inf, -Inf, -0)
  v <- save_variants(list(odd = odd, dbl = dbl, cpl = complex(real = dbl, imaginary = rev(dbl))),
                     dir = local_tempdir(), formats = c("ascii", "asciihex"),
                     compress = "none")
  for (i in seq_len(nrow(v))) {
    re <- reserialize(v$file[[i]])
    expect_true(is.raw(re) && identical(re, decompressed(v$file[[i]])),
                label = paste(v$label[[i]], "re-serialized bytes"))
  }
})

test_that("an ASCII double that overflows on reading is read and re-written as R does", {
  # R spells .Machine$double.xmax with 16 digits, a text above the largest
  # double: R reads it back as Inf, and so must rdarrow; re-serializing then
  # gives what R's own re-serialization gives.
  for (ver in 2:3) {
    f <- local_tempfile(".rds")
    saveRDS(c(.Machine$double.xmax, 1), f, ascii = TRUE, version = ver, compress = FALSE)
    r_value <- readRDS(f)
    expect_identical(r_value, c(Inf, 1))
    expect_identical(read_rdata(f)[[1]], r_value)
    r_again <- local_tempfile(".rds")
    saveRDS(r_value, r_again, ascii = TRUE, version = ver, compress = FALSE)
    expect_identical(reserialize(f), decompressed(r_again), label = sprintf("v%d re-serialized", ver))
  }
})

# What R itself gets back when it writes `objs` (a named list, as
# reference_read() gives) in its ASCII format, version `ver`, and reads that:
# ASCII spells doubles with 16 digits and NaN payloads as "NA"/"NaN", so this,
# not the original, is what an ASCII rewrite must give.
r_ascii_copy <- function(objs, kind, ver) {
  f <- tempfile("rdarrow-ascii-", fileext = if (kind == "rdata") ".RData" else ".rds")
  on.exit(unlink(f))
  if (kind == "rdata") {
    save(list = names(objs), envir = list2env(objs, parent = emptyenv()), file = f,
         ascii = TRUE, version = ver, compress = FALSE)
    reference_read(f)
  } else {
    saveRDS(objs[[1]], f, ascii = TRUE, version = ver, compress = FALSE)
    stats::setNames(list(readRDS(f)), names(objs))
  }
}

# Rewrite `src` to every format and version, uncompressed, and to each
# compression once (compressing is a layer over the stream, whatever its
# format: each compression goes with another format and version for each
# `rotate`), and check each against R's objects for `src` (read afresh for
# each target: identical() expands R's compact sequences, which version-3
# comparisons must still see compact).
expect_rewrites_load <- function(src, src_version, label,
                                 formats = c("xdr", "ascii", "binary"),
                                 versions = c(2L, 3L),
                                 compress = c("none", "gzip", "bzip2", "xz"),
                                 rotate = 0L) {
  kind <- file_kind(src)
  ext <- tools::file_ext(src)
  dir <- local_tempdir()
  magic <- list(gzip = as.raw(c(0x1f, 0x8b)), bzip2 = charToRaw("BZh"),
                xz = as.raw(c(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)))
  fmt_char <- c(xdr = "X", ascii = "A", binary = "B")
  pairs <- expand.grid(ver = versions, fmt = formats, stringsAsFactors = FALSE)
  packed <- setdiff(compress, "none")
  at <- (seq_along(packed) - 1L + rotate) %% nrow(pairs) + 1L
  grid <- rbind(
    if ("none" %in% compress) data.frame(pairs, comp = rep("none", nrow(pairs))),
    if (length(packed)) data.frame(pairs[at, , drop = FALSE], comp = packed)
  )
  for (g in seq_len(nrow(grid))) {
    fmt <- grid$fmt[[g]]
    ver <- grid$ver[[g]]
    comp <- grid$comp[[g]]
    lab <- sprintf("%s -> %s/v%d/%s", label, fmt, ver, comp)
    out <- file.path(dir, sprintf("%s-%d-%s.%s", fmt, ver, comp, ext))
    res <- rewrite(src, out, fmt, ver, comp)
    if (!identical(res, out)) {
      fail(sprintf("%s: rdata_rewrite_impl() failed: %s", lab,
                   if (is.list(res)) res$message else "did not return the output path"))
      next
    }
    # compression and header as asked
    head <- readBin(out, "raw", 16)
    if (comp == "none") {
      want <- if (kind == "rdata") {
        charToRaw(sprintf("RD%s%d\n%s\n", fmt_char[[fmt]], ver, fmt_char[[fmt]]))
      } else {
        charToRaw(paste0(fmt_char[[fmt]], "\n"))
      }
      expect_identical(head[seq_along(want)], want, label = paste(lab, "header"))
    } else {
      expect_identical(head[seq_along(magic[[comp]])], magic[[comp]],
                       label = paste(lab, "compression magic"))
    }
    dec <- decompressed(out)
    want_ver <- if (fmt == "ascii") {
      charToRaw(sprintf("%d\n", ver))
    } else {
      as.raw(c(0, 0, 0, ver))
    }
    at <- if (kind == "rdata") 8L else 3L
    ver_bytes <- if (fmt == "binary") rev(want_ver) else want_ver
    expect_identical(dec[at:(at + length(ver_bytes) - 1L)], ver_bytes,
                     label = paste(lab, "format version in the stream"))
    # R reads it back as the original objects (a raw stream may now be
    # compressed, which readRDS() reads and unserialize() does not)
    out_kind <- if (kind == "stream") "rds" else kind
    got <- tryCatch(reference_read(out, kind = out_kind), error = function(e) e)
    if (inherits(got, "error")) {
      fail(sprintf("%s: R cannot read the rewritten file: %s", lab, conditionMessage(got)))
      next
    }
    expected <- reference_read(src, kind = kind)
    # For ASCII, R's own ASCII copy is right too (see r_ascii_copy()); it is
    # made before any identical(), which expands compact sequences.
    ascii_expected <- if (fmt == "ascii") r_ascii_copy(reference_read(src, kind = kind), kind, ver)
    if (kind != "rdata") names(got) <- names(expected)
    expect_identical(names(got), names(expected), label = paste(lab, "names"))
    cmp_version <- if (src_version == 3L && ver == 3L) 3L else 2L
    problems <- character()
    for (nm in intersect(names(got), names(expected))) {
      p <- compare_objects(got[[nm]], expected[[nm]], version = cmp_version)
      if (!is.null(p) && !is.null(ascii_expected)) {
        # compare a fresh read (the comparison above expanded `got`)
        again <- reference_read(out, kind = out_kind)[[match(nm, names(expected))]]
        p2 <- compare_objects(again, ascii_expected[[nm]], version = cmp_version)
        if (is.null(p2)) p <- NULL else p <- paste0(p, " (and against R's own ASCII copy: ", p2, ")")
      }
      if (!is.null(p)) problems <- c(problems, sprintf("object '%s': %s", nm, p))
    }
    expect(length(problems) == 0L, sprintf("%s: %s", lab, paste(problems, collapse = "\n")))
    # and the rewritten file re-serializes exactly too
    re <- reserialize(out)
    expect_true(is.raw(re) && identical(re, dec), label = paste(lab, "re-serialized bytes"))
  }
}

test_that("rewriting an .RData to every format, version and compression loads back the same", {
  # minutes of rewrites: tools/test.sh runs them (NOT_CRAN), CRAN's time-limited check does not
  skip_on_cran()
  objs <- writer_objects()
  srcs <- save_variants(objs, dir = local_tempdir(), kinds = "rdata",
                        formats = c("xdr", "ascii"), versions = c(2L, 3L), compress = "gzip")
  for (i in seq_len(nrow(srcs))) {
    # R's objects, loaded fresh for each comparison (identical() expands
    # compact sequences, which version-3 comparisons must not see).
    expect_rewrites_load(srcs$file[[i]], srcs$version[[i]], label = srcs$label[[i]],
                         rotate = 3L * (i - 1L))
  }
})

test_that("rewriting an .rds or a serialize() stream keeps its kind and loads back the same", {
  # minutes of rewrites: tools/test.sh runs them (NOT_CRAN), CRAN's time-limited check does not
  skip_on_cran()
  objs <- writer_objects()[c("df", "strs", "cyc", "fun_src", "s4num", "seq", "defer",
                             "nan_payload", "envs", "active")]
  srcs <- rbind(
    save_variants(objs, dir = local_tempdir(), kinds = "rds", formats = "asciihex",
                  versions = 3L, compress = "xz"),
    save_variants(objs, dir = local_tempdir(), kinds = "stream", formats = "binary",
                  versions = 2L)
  )
  for (i in seq_len(nrow(srcs))) {
    expect_rewrites_load(srcs$file[[i]], srcs$version[[i]], label = srcs$label[[i]],
                         compress = c("none", if (i %% 2L) "gzip" else "bzip2"), rotate = i)
  }
})

test_that("version-3 rewrites keep ALTREP objects compact; version 2 expands them", {
  objs <- list(seq = 1:100, big = seq_len(1e6), defer = as.character(1:4),
               seq_real = 3e9:(3e9 + 3))
  src <- save_variants(objs, dir = local_tempdir(), kinds = "rdata", formats = "xdr",
                       versions = 3L, compress = "none")$file
  dir <- local_tempdir()
  for (ver in 2:3) {
    out <- file.path(dir, sprintf("v%d.RData", ver))
    expect_identical(rewrite(src, out, "xdr", ver, "none"), out)
    e <- new.env()
    load(out, envir = e)
    ref <- reference_read(src)
    for (nm in names(objs)) {
      want <- if (ver == 3L) altrep_class(ref[[nm]]) else NA_character_
      expect_identical(altrep_class(e[[nm]]), want,
                       label = sprintf("v%d rewrite: ALTREP class of '%s'", ver, nm))
      expect_true(identical(e[[nm]], ref[[nm]]),
                  label = sprintf("v%d rewrite: '%s' identical", ver, nm))
    }
  }
  # an expanded version-2 file is no bigger than R's own version-2 save
  r2 <- file.path(dir, "r2.RData")
  save(list = names(objs), envir = list2env(objs), file = r2, version = 2L, compress = FALSE)
  expect_identical(file.size(file.path(dir, "v2.RData")), file.size(r2))
})

test_that("zstd rewrites read back with read_rdata() and list with rdata_objects()", {
  objs <- writer_objects()
  src <- save_variants(objs, dir = local_tempdir(), kinds = "rdata", formats = "xdr",
                       versions = 3L, compress = "xz")$file
  dir <- local_tempdir()
  for (fmt in c("xdr", "ascii", "binary")) for (ver in 2:3) {
    lab <- sprintf("zstd %s v%d", fmt, ver)
    out <- file.path(dir, sprintf("%s-%d.RData", fmt, ver))
    expect_identical(rewrite(src, out, fmt, ver, "zstd"), out, label = lab)
    expect_identical(readBin(out, "raw", 4), as.raw(c(0x28, 0xb5, 0x2f, 0xfd)),
                     label = paste(lab, "magic"))
    expected <- reference_read(src)
    if (fmt == "ascii") expected <- r_ascii_copy(expected, "rdata", ver)
    expect_same_as_load(out, expected = expected, label = lab)
    lst <- rdata_objects(out)
    expect_identical(lst$name, names(reference_read(src)), label = paste(lab, "listing"))
  }
  # an .rds in zstd
  rds <- file.path(dir, "one.rds")
  saveRDS(mtcars, rds)
  out <- file.path(dir, "one-zstd.rds")
  expect_identical(rewrite(rds, out, "xdr", 3L, "zstd"), out)
  expect_identical(read_rdata(out), list(`one-zstd` = mtcars))
})

test_that("rdata_parse_impl() parses every variant and returns the decompressed size", {
  objs <- list(x = c(1.5, NA), s = c("a", "\u00e9"), l = list(1L, quote(f(x))), df = mtcars[1:3, 1:3])
  v <- save_variants(objs, dir = local_tempdir(), compress = c("none", "gzip"))
  for (i in seq_len(nrow(v))) {
    got <- rdarrow:::rdata_parse_impl(v$file[[i]], 10000L)
    expect_identical(as.numeric(got), as.numeric(length(decompressed(v$file[[i]]))),
                     label = paste(v$label[[i]], "parse size"))
  }
})

test_that("compression levels are honoured", {
  big <- do.call(rbind, rep(list(mtcars), 200))
  src <- local_tempfile(".RData")
  save(big, file = src)
  dir <- local_tempdir()
  sizes <- list()
  for (comp in c("gzip", "bzip2", "xz", "zstd")) {
    for (lv in c(1L, 9L)) {
      out <- file.path(dir, sprintf("%s-%d.RData", comp, lv))
      expect_identical(rewrite(src, out, "xdr", 3L, comp, lv), out)
      got <- read_rdata(out)
      expect_identical(got$big, big, label = paste(comp, lv))
      sizes[[paste(comp, lv)]] <- file.size(out)
    }
    expect_lt(sizes[[paste(comp, 9L)]], sizes[[paste(comp, 1L)]], label = paste(comp, "level 9 size"))
  }
})

test_that("bad writer arguments are errors of kind usage or io, and write nothing", {
  src <- local_tempfile(".RData")
  x <- 1
  save(x, file = src)
  dir <- local_tempdir()
  out <- file.path(dir, "out.RData")
  bad <- list(
    list("csv", 3L, "gzip"), list("xdr", 4L, "gzip"), list("xdr", 1L, "gzip"),
    list("xdr", 3L, "lz4"), list("", 3L, "none")
  )
  for (b in bad) {
    res <- rewrite(src, out, b[[1]], b[[2]], b[[3]])
    lab <- paste(unlist(b), collapse = "/")
    expect_s3_class(res, "rdarrow_error_value")
    expect_identical(res$kind, "usage", label = lab)
    expect_true(nzchar(res$message), label = lab)
    expect_false(file.exists(out), label = paste(lab, "no output"))
  }
  res <- rewrite(src, file.path(dir, "no", "such", "dir", "out.RData"), "xdr", 3L, "gzip")
  expect_s3_class(res, "rdarrow_error_value")
  expect_identical(res$kind, "io")
  # a source that is not R data: no output either
  csv <- local_tempfile(".csv")
  writeLines(c("a,b", "1,2"), csv)
  res <- rewrite(csv, out, "xdr", 3L, "gzip")
  expect_s3_class(res, "rdarrow_error_value")
  expect_identical(res$kind, "not_rdata")
  expect_false(file.exists(out))
  expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), character(0))
})
