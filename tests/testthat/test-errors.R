# Bad input: every failure is an rdarrow_error condition with a kind, a byte
# offset where one makes sense, and a message that says what is wrong. Never
# a crash, never a plain R error.

# The condition `expr` signals (fails the test when it signals none).
catch_error <- function(expr) {
  err <- tryCatch({
    force(expr)
    NULL
  }, error = function(e) e)
  if (is.null(err)) {
    fail("no error was signalled")
    # a stand-in, so that the checks that follow fail rather than stop
    err <- structure(class = c("no_error", "condition"),
                     list(message = "<no error>", call = NULL, kind = NA_character_,
                          offset = NA_real_, object = NA_character_))
  }
  err
}

# `err` is an rdarrow_error of `kind`, with the fields and classes promised.
expect_rdarrow_error <- function(err, kind, label = "") {
  expect_s3_class(err, "rdarrow_error")
  expect_identical(class(err), c(paste0("rdarrow_error_", kind), "rdarrow_error", "error", "condition"),
                   label = paste(label, "class"))
  expect_identical(err$kind, kind, label = paste(label, "kind"))
  expect_true(all(c("kind", "offset", "object") %in% names(err)), label = paste(label, "fields"))
  expect_true(is.character(conditionMessage(err)) && nchar(conditionMessage(err)) > 10,
              label = paste(label, "message"))
  invisible(err)
}

# The error says at which byte: a number offset, within the stream, that the
# message also gives.
expect_offset <- function(err, lower = 0, upper = Inf, label = "") {
  expect_true(is.numeric(err$offset) && length(err$offset) == 1L && !is.na(err$offset),
              label = paste(label, "offset is a number"))
  if (!is.numeric(err$offset) || is.na(err$offset)) return(invisible(err))
  expect_gte(err$offset, lower, label = paste(label, "offset"))
  expect_lte(err$offset, upper, label = paste(label, "offset"))
  expect_match(conditionMessage(err), format(err$offset, scientific = FALSE), fixed = TRUE,
               label = paste(label, "message gives the offset"))
  invisible(err)
}

# Both readers fail alike on `file`.
both_errors <- function(file) {
  list(read = catch_error(read_rdata(file)), list = catch_error(rdata_objects(file)))
}

xdr_header <- function(version = 3L) {
  c(charToRaw("X\n"), writeBin(c(as.integer(version), 262658L, 197888L, 5L), raw(), endian = "big"),
    charToRaw("UTF-8"))
}
xdr_ints <- function(...) writeBin(as.integer(c(...)), raw(), endian = "big")

# ---------------------------------------------------------------------------

test_that("an empty file is not R data", {
  f <- local_tempfile(".RData")
  file.create(f)
  for (err in both_errors(f)) {
    expect_rdarrow_error(err, "not_rdata")
    expect_match(conditionMessage(err), "empty")
  }
})

test_that("a CSV file and a PNG file are not R data, and the message shows their first bytes", {
  csv <- local_tempfile(".csv")
  writeLines(c("a,b", "1,2"), csv)
  png <- local_tempfile(".RData")
  writeBin(as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d,
                    0x49, 0x48, 0x44, 0x52)), png)
  for (err in both_errors(csv)) {
    expect_rdarrow_error(err, "not_rdata", "csv")
    expect_offset(err, 0, 0, "csv")
    expect_match(conditionMessage(err), "61 2c 62", fixed = TRUE)
  }
  for (err in both_errors(png)) {
    expect_rdarrow_error(err, "not_rdata", "png")
    expect_match(conditionMessage(err), "89 50 4e 47", fixed = TRUE)
  }
})

test_that("a truncated gzip, bzip2 or xz .RData is a truncated error in the object being read", {
  # big enough for several bzip2 blocks (900 kB each), so that the first
  # half of the file decompresses into the objects
  x <- as.list(seq_len(3000))
  y <- paste0("s", seq_len(3e5))
  for (comp in c("gzip", "bzip2", "xz")) {
    f <- local_tempfile(".RData")
    save(x, y, file = f, compress = comp)
    b <- readBin(f, "raw", file.size(f))
    cut <- local_tempfile(".RData")
    writeBin(b[seq_len(length(b) %/% 2)], cut)
    expect_error(suppressWarnings(load(cut, envir = new.env())))
    for (err in both_errors(cut)) {
      expect_rdarrow_error(err, "truncated", comp)
      expect_offset(err, 0, length(rdarrow:::rdata_decompressed_impl(f)), comp)
      expect_true(err$object %in% c("x", "y"), label = paste(comp, "object"))
    }
  }
})

test_that("an uncompressed .RData cut anywhere is a truncated error at the cut", {
  x <- list(a = 1:5 + 0L, b = c("p", NA), c = list(pi, TRUE))
  y <- "tail"
  f <- local_tempfile(".RData")
  save(x, y, file = f, compress = FALSE)
  b <- readBin(f, "raw", file.size(f))
  n <- length(b)
  cut <- local_tempfile(".RData")
  # every cut after the magic and the format line ("RDX3\nX\n"; shorter
  # cuts are tested below): the stream is an R stream, just short
  for (at in c(7:30, seq(31, n - 1L, by = 7), n - 1L)) {
    writeBin(b[seq_len(at)], cut)
    err <- catch_error(read_rdata(cut))
    lab <- sprintf("cut at %d of %d", at, n)
    expect_rdarrow_error(err, "truncated", lab)
    if (at > 14) expect_offset(err, 0, at, lab)
  }
  # half way, with rdata_objects() too
  writeBin(b[seq_len(n %/% 2)], cut)
  for (err in both_errors(cut)) {
    expect_rdarrow_error(err, "truncated")
    expect_offset(err, 5, n %/% 2)
    expect_match(conditionMessage(err), "truncated|end of", ignore.case = TRUE)
  }
})

test_that("a corrupted type byte in an uncompressed stream is a corrupt error at that byte", {
  x <- list(7:9 + 0L, "a", c(1.5, 2))
  f <- local_tempfile(".RData")
  save(x, file = f, compress = FALSE)
  b <- readBin(f, "raw", file.size(f))
  # the flags of the first element, INTSXP (13), follow the list's header
  pat <- c(xdr_ints(19L, 3L), xdr_ints(13L, 3L))
  at <- which(vapply(seq_len(length(b) - length(pat) + 1L),
                     function(i) all(b[i:(i + length(pat) - 1L)] == pat), TRUE))
  expect_length(at, 1L)
  flags_at <- at + 8L # 1-based position of the element's flags word
  b[flags_at + 3L] <- as.raw(99) # no SEXP type 99
  bad <- local_tempfile(".RData")
  writeBin(b, bad)
  expect_error(load(bad, envir = new.env()), "unknown type 99")
  for (err in both_errors(bad)) {
    expect_rdarrow_error(err, "corrupt")
    # 0-based offset of the flags word (or of its type byte)
    expect_offset(err, flags_at - 1L, flags_at + 3L)
    expect_identical(err$object, "x")
    expect_match(conditionMessage(err), "99", fixed = TRUE)
  }
})

test_that("flipped bytes anywhere never crash: a value or an rdarrow_error", {
  objs <- list(i = c(1L, NA, 3L), d = c(1.5, NaN), s = c("a", "\u00e9", NA),
               f = factor(c("u", "v")), df = data.frame(a = 1:2, b = c("x", "y")),
               l = list(1, list(2, "three")), m = matrix(1:4, 2), cpl = 1i, r = as.raw(1:3))
  f <- local_tempfile(".RData")
  save(list = names(objs), envir = list2env(objs), file = f, compress = FALSE)
  b <- readBin(f, "raw", file.size(f))
  set.seed(20240229)
  bad <- local_tempfile(".RData")
  outcomes <- character()
  for (k in 1:150) {
    m <- b
    pos <- sample(6:length(b), sample(1:3, 1))
    m[pos] <- as.raw(sample(0:255, length(pos), replace = TRUE))
    writeBin(m, bad)
    res <- tryCatch(read_rdata(bad), error = function(e) e)
    ok <- is.list(res) && !inherits(res, "error") || inherits(res, "rdarrow_error")
    expect_true(ok, label = sprintf("mutation %d at %s: %s", k, paste(pos, collapse = ","),
                                    if (inherits(res, "error")) conditionMessage(res) else "value"))
    outcomes <- c(outcomes, if (inherits(res, "rdarrow_error")) res$kind else "value")
    res2 <- tryCatch(rdata_objects(bad), error = function(e) e)
    expect_true(is.data.frame(res2) || inherits(res2, "rdarrow_error"),
                label = sprintf("listing after mutation %d", k))
  }
  # the mutations were not all harmless
  expect_true(any(outcomes != "value"))
})

test_that("a reference index past the reference table is a corrupt error", {
  f <- local_tempfile(".rds")
  # REFSXP (255) with the index 99 packed in the flags; the table is empty
  writeBin(c(xdr_header(), xdr_ints(0xFF + bitwShiftL(99L, 8L))), f)
  for (err in both_errors(f)) {
    expect_rdarrow_error(err, "corrupt")
    expect_offset(err, 23, 27)
    expect_match(conditionMessage(err), "reference", ignore.case = TRUE)
    expect_match(conditionMessage(err), "99", fixed = TRUE)
  }
})

test_that("a vector declaring 2^31-1 integers with 8 bytes behind it is a truncated error", {
  f <- local_tempfile(".rds")
  writeBin(c(xdr_header(), xdr_ints(13L, .Machine$integer.max, 1L, 2L)), f)
  mem_before <- sum(gc()[, 2])
  for (err in both_errors(f)) {
    expect_rdarrow_error(err, "truncated")
    expect_offset(err, 23, 31)
    expect_match(conditionMessage(err), "8589934588|2147483647")
  }
  # nothing of the declared 8 GB stays allocated in R
  expect_lt(sum(gc()[, 2]) - mem_before, 100)
  # the same with a long-vector length (2^40 doubles)
  f2 <- local_tempfile(".rds")
  writeBin(c(xdr_header(), xdr_ints(14L, -1L, 256L, 0L, 1L, 2L)), f2)
  for (err in both_errors(f2)) {
    expect_true(err$kind %in% c("truncated", "limit"), label = err$kind)
    expect_rdarrow_error(err, err$kind)
    expect_offset(err, 23, 39)
  }
  # a declared string length past the end
  f3 <- local_tempfile(".rds")
  writeBin(c(xdr_header(), xdr_ints(16L, 1L, 0x00040009L, 1e9L), charToRaw("abc")), f3)
  for (err in both_errors(f3)) {
    expect_rdarrow_error(err, "truncated")
    expect_offset(err, 23, 40)
  }
})

test_that("nesting deeper than options(rdarrow.max_depth) is a limit error", {
  y <- list(1)
  for (i in 1:100) y <- list(y)
  f <- local_tempfile(".RData")
  save(y, file = f)
  old <- options(rdarrow.max_depth = 50)
  on.exit(options(old), add = TRUE)
  for (err in both_errors(f)) {
    expect_rdarrow_error(err, "limit")
    expect_identical(err$object, "y")
    expect_offset(err, 5, length(rdarrow:::rdata_decompressed_impl(f)))
    expect_match(conditionMessage(err), "50")
    expect_match(conditionMessage(err), "rdarrow.max_depth", fixed = TRUE)
  }
  # deep language objects too
  cl <- quote(a)
  for (i in 1:100) cl <- call("+", cl, i)
  f2 <- local_tempfile(".rds")
  saveRDS(cl, f2)
  expect_rdarrow_error(catch_error(read_rdata(f2)), "limit")
  # with the limit raised, the same files read as load() gives them
  options(rdarrow.max_depth = 200)
  expect_same_as_load(f)
  expect_identical(read_rdata(f2)[[1]], cl)
})

test_that("nesting beyond the default depth is a limit error, not a crash", {
  x <- list(1)
  for (i in 1:15000) x <- list(x)
  f <- local_tempfile(".RData")
  save(x, file = f)
  old <- options(rdarrow.max_depth = NULL)
  on.exit(options(old), add = TRUE)
  for (err in both_errors(f)) {
    expect_rdarrow_error(err, "limit")
    expect_match(conditionMessage(err), "10000")
  }
  options(rdarrow.max_depth = 20000)
  e <- new.env()
  load(f, envir = e)
  expect_identical(read_rdata(f)$x, e$x)
})

test_that("long pairlists and calls are not nesting: they read with a small depth limit", {
  # R writes a pairlist's cells one after the other; its length is no depth.
  # (R's own reader recurses along them, so load() manages only some
  # 25,000 cells; keep below that where load() is the reference.)
  pl <- as.pairlist(as.list(1:15000))
  cl <- as.call(c(as.name("c"), as.list(1:15000)))
  f <- local_tempfile(".RData")
  save(pl, cl, file = f)
  expect_identical(rdata_objects(f)$length, c(15000L, 15001L))
  expect_same_as_load(f)
  old <- options(rdarrow.max_depth = 50)
  on.exit(options(old), add = TRUE)
  expect_identical(rdata_objects(f)$length, c(15000L, 15001L))
  got <- try_read(read_rdata(f))
  expect_false(inherits(got, "error"), label = if (inherits(got, "error")) conditionMessage(got) else "")
  expect_identical(got$pl, pl)
  expect_identical(got$cl, cl)
})

test_that("pairlists longer than R can load give the pairlist or an rdarrow_error", {
  # load() overflows the C stack on these; read_rdata() must either read
  # them or refuse them with an rdarrow_error, never with another error.
  long_pl <- as.pairlist(as.list(1:1e5))
  long_cl <- as.call(c(as.name("c"), as.list(1:6e4)))
  f <- local_tempfile(".RData")
  save(long_pl, long_cl, file = f)
  expect_identical(rdata_objects(f)$length, c(100000L, 60001L))
  got <- try_read(read_rdata(f))
  if (inherits(got, "error")) {
    expect_s3_class(got, "rdarrow_error")
    expect_true(got$kind %in% c("limit", "unsupported"),
                label = paste("kind of:", class(got)[1], conditionMessage(got)))
  } else {
    expect_identical(got$long_pl, long_pl)
    expect_identical(got$long_cl, long_cl)
  }
  got <- try_read(read_rdata(f, objects = "long_pl"))
  expect_true(!inherits(got, "error") || inherits(got, "rdarrow_error"),
              label = paste("objects = 'long_pl':", if (inherits(got, "error")) conditionMessage(got) else "value"))
})

test_that("an object name that runs into binary data gives an rdarrow_error", {
  # The length of the second object's name is raised from 1 to 20, so the
  # name takes in the bytes that follow, NULs included.
  i <- 1L
  s <- c("a", "b")
  f <- local_tempfile(".RData")
  save(i, s, file = f, compress = FALSE)
  b <- readBin(f, "raw", file.size(f))
  pat <- c(as.raw(c(0, 4, 0, 9, 0, 0, 0, 1)), charToRaw("s"))
  at <- which(vapply(seq_len(length(b) - length(pat) + 1L),
                     function(k) all(b[k:(k + length(pat) - 1L)] == pat), TRUE))
  expect_length(at, 1L)
  b[at + 7L] <- as.raw(20)
  bad <- local_tempfile(".RData")
  writeBin(b, bad)
  expect_error(load(bad, envir = new.env()), "nul")
  for (err in both_errors(bad)) {
    expect_s3_class(err, "rdarrow_error")
    expect_true(err$kind %in% c("corrupt", "truncated"), label = paste("kind:", err$kind))
  }
})

test_that("a string, class or name holding a NUL byte is a corrupt error, as R refuses it", {
  # R's strings end at a NUL: its reader stops with "embedded nul in string".
  # Each case replaces one byte of a marker string with a NUL.
  nul_at <- function(b, marker, k = 2L) {
    pat <- charToRaw(marker)
    at <- which(vapply(seq_len(length(b) - length(pat) + 1L),
                       function(j) all(b[j:(j + length(pat) - 1L)] == pat), TRUE))
    expect_length(at, 1L)
    b[at + k - 1L] <- as.raw(0)
    b
  }
  cases <- list(
    value = list(obj = c("plain", "markerstring"), marker = "markerstring"),
    class = list(obj = structure(1:2, class = "markerclass"), marker = "markerclass"),
    column = list(obj = data.frame(markercol = 1:2), marker = "markercol"),
    symbol = list(obj = quote(markersym + 1), marker = "markersym"),
    attribute = list(obj = structure(1, markerattr = 2), marker = "markerattr"),
    argument = list(obj = pairlist(markerarg = 1), marker = "markerarg")
  )
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    for (ascii in c(FALSE, TRUE)) {
      f <- local_tempfile(".rds")
      saveRDS(cs$obj, f, compress = FALSE, ascii = ascii)
      b <- readBin(f, "raw", file.size(f))
      if (ascii) {
        # ASCII spells a NUL inside a string as an octal escape
        txt <- rawToChar(b)
        txt <- sub(cs$marker, paste0(substr(cs$marker, 1, 1), "\\000", substring(cs$marker, 3)), txt, fixed = TRUE)
        b <- charToRaw(txt)
      } else {
        b <- nul_at(b, cs$marker)
      }
      bad <- local_tempfile(".rds")
      writeBin(b, bad)
      lab <- paste(nm, if (ascii) "ascii" else "xdr")
      expect_error(readRDS(bad), "nul", label = paste(lab, "readRDS"))
      err <- tryCatch(read_rdata(bad), error = identity)
      expect_s3_class(err, "rdarrow_error")
      expect_identical(err$kind, "corrupt", label = lab)
      expect_match(conditionMessage(err), "NUL", label = lab)
      if (nm == "class") {
        err <- tryCatch(rdata_objects(bad), error = identity)
        expect_s3_class(err, "rdarrow_error")
      }
    }
  }
})

test_that("an unknown format version, a bad magic and a file with only the magic", {
  v4 <- local_tempfile(".rds")
  writeBin(c(xdr_header(4L), xdr_ints(254L)), v4)
  expect_error(readRDS(v4), "version 4")
  err <- catch_error(read_rdata(v4))
  expect_rdarrow_error(err, "unsupported", "version 4")
  expect_match(conditionMessage(err), "version 4")

  magic9 <- local_tempfile(".RData")
  writeBin(c(charToRaw("RDX9\nX\n"), xdr_ints(254L)), magic9)
  err <- catch_error(read_rdata(magic9))
  expect_s3_class(err, "rdarrow_error")
  expect_true(err$kind %in% c("not_rdata", "unsupported"))
  expect_match(conditionMessage(err), "9")

  only_magic <- local_tempfile(".RData")
  for (magic in c("RDX3\n", "RDX3\nX", "RDX2\nX\n", "RDA3\nA\n")) {
    writeBin(charToRaw(magic), only_magic)
    expect_error(suppressWarnings(load(only_magic, envir = new.env())))
    for (err in both_errors(only_magic)) {
      expect_rdarrow_error(err, "truncated", paste("only", encodeString(magic)))
    }
  }

  header_only <- local_tempfile(".RData")
  writeBin(c(charToRaw("RDX3\n"), xdr_header()), header_only)
  for (err in both_errors(header_only)) {
    expect_rdarrow_error(err, "truncated", "only the header")
    expect_offset(err, 5, 28)
  }
})

test_that("a corrupt ASCII stream names the bad token's byte", {
  f <- local_tempfile(".rds")
  saveRDS(c(1L, 2L, 3L), f, ascii = TRUE, compress = FALSE)
  txt <- readBin(f, "raw", file.size(f))
  s <- rawToChar(txt)
  s2 <- sub("\n2\n3\n", "\nzz\n3\n", s, fixed = TRUE)
  expect_false(identical(s, s2))
  writeBin(charToRaw(s2), f)
  expect_error(readRDS(f), "read error")
  # (rdata_objects() may skip the payload; read_rdata() must not accept it)
  err <- catch_error(read_rdata(f))
  expect_rdarrow_error(err, "corrupt")
  at <- regexpr("zz", s2, fixed = TRUE) - 1
  expect_offset(err, at - 1, at + 2)
})

test_that("unknown object names are a usage error that lists the names present", {
  a <- 1
  bb <- "two"
  f <- local_tempfile(".RData")
  save(a, bb, file = f)
  err <- catch_error(read_rdata(f, objects = c("a", "zz", "ww")))
  expect_s3_class(err, "rdarrow_error")
  expect_true(err$kind %in% c("usage"))
  expect_match(conditionMessage(err), "zz", fixed = TRUE)
  expect_match(conditionMessage(err), "ww", fixed = TRUE)
  expect_match(conditionMessage(err), "'a'", fixed = TRUE)
  expect_match(conditionMessage(err), "'bb'", fixed = TRUE)
  # for an .rds, the one name is the file's
  r <- file.path(local_tempdir(), "only.rds")
  saveRDS(1, r)
  err <- catch_error(read_rdata(r, objects = "other"))
  expect_s3_class(err, "rdarrow_error")
  expect_match(conditionMessage(err), "other", fixed = TRUE)
  expect_match(conditionMessage(err), "only", fixed = TRUE)
})

test_that("a missing file, a directory and bad arguments are rdarrow_errors", {
  d <- local_tempdir()
  missing <- file.path(d, "nope.RData")
  for (err in list(catch_error(read_rdata(missing)), catch_error(rdata_objects(missing)))) {
    expect_s3_class(err, "rdarrow_error")
    expect_true(err$kind %in% c("io", "usage"))
    expect_match(conditionMessage(err), "nope.RData", fixed = TRUE)
    expect_match(conditionMessage(err), "not exist|no such|cannot open", ignore.case = TRUE)
  }
  for (err in list(catch_error(read_rdata(d)), catch_error(rdata_objects(d)))) {
    expect_s3_class(err, "rdarrow_error")
    expect_true(err$kind %in% c("io", "usage"))
    expect_match(conditionMessage(err), "directory")
  }
  f <- local_tempfile(".RData")
  x <- 1
  save(x, file = f)
  for (bad in list(NA_character_, c(f, NA), 1, "", c(f, ""), NULL, character())) {
    expect_rdarrow_error(catch_error(read_rdata(bad)), "usage", deparse(bad))
    expect_rdarrow_error(catch_error(rdata_objects(bad)), "usage", deparse(bad))
  }
  # several paths are several files (test-many-files.R)
  expect_identical(read_rdata(c(f, f)), stats::setNames(list(list(x = 1), list(x = 1)), c(f, f)))
  expect_rdarrow_error(catch_error(read_rdata(f, objects = 1)), "usage")
  expect_rdarrow_error(catch_error(read_rdata(f, objects = NA_character_)), "usage")
  old <- options(rdarrow.max_depth = -1)
  on.exit(options(old), add = TRUE)
  expect_rdarrow_error(catch_error(read_rdata(f)), "usage")
  options(rdarrow.max_depth = "deep")
  expect_rdarrow_error(catch_error(rdata_objects(f)), "usage")
})

test_that("an unreadable file is an io error", {
  skip_if(Sys.info()[["user"]] == "root" || .Platform$OS.type != "unix",
          "root reads files whatever their mode")
  f <- local_tempfile(".RData")
  x <- 1
  save(x, file = f)
  Sys.chmod(f, "000")
  err <- catch_error(read_rdata(f))
  expect_rdarrow_error(err, "io")
})

test_that("Arrow IPC data the IPC reader cannot take is a corrupt error, and the session goes on", {
  # inputs found by fuzzing: buffers that point past the message body, a
  # footer that lists a block far larger than the file, compressed buffers
  # that declare 17 TB or 12 GB
  dir <- file.path(testthat::test_path(), "..", "..", "src", "rust", "rdarrow-arrow", "tests", "fuzz-findings")
  found <- Sys.glob(file.path(dir, c("*.arrows", "*.arrow")))
  skip_if(length(found) == 0L, "the source tree's fuzz findings are not here")
  # (one declares a 12 GB buffer: over a 1 GiB memory limit)
  withr::local_options(rdarrow.max_memory = 2^30)
  for (f in found) {
    out <- local_tempfile(".RData")
    err <- tryCatch(ipc_to_rdata(f, out), error = identity)
    expect_s3_class(err, "rdarrow_error")
    want <- if (grepl("declares", basename(f))) "limit" else "corrupt"
    expect_identical(err$kind, want, label = basename(f))
    expect_false(file.exists(out))
  }
})

test_that("an error shows the user's call, never one of rdarrow's helpers", {
  f <- local_tempfile(".rds")
  saveRDS(data.frame(a = 1:3), f)
  out <- local_tempfile(".rds")
  d <- local_tempdir()
  x <- data.frame(a = 1:3)
  missing_file <- file.path(d, "missing.arrow")
  # each exported function, its arguments refused by a helper (checks of
  # files, sinks, objects and writer options) or by the engine
  cases <- list(
    arrow_to_rdata = quote(arrow_to_rdata(x, 1)),
    ipc_to_rdata = quote(ipc_to_rdata(missing_file, out)),
    parquet_to_rdata = quote(parquet_to_rdata(f, out)),
    tensor_to_rdata = quote(tensor_to_rdata(missing_file, out)),
    rdata_objects = quote(rdata_objects(1)),
    rdata_to_arrow = quote(rdata_to_arrow(f, chunk_size = -1)),
    rdata_to_dataset = quote(rdata_to_dataset(1, file.path(d, "lake"))),
    rdata_to_ipc = quote(rdata_to_ipc(f, 1)),
    rdata_to_parquet = quote(rdata_to_parquet(f, 1)),
    rdata_to_tensor = quote(rdata_to_tensor(f, 1)),
    read_rdata = quote(read_rdata(f, objects = 1)),
    read_rds = quote(read_rds(raw(0))),
    write_rdata = quote(write_rdata(x, file = out, compress = "nope")),
    write_rds = quote(write_rds(x, out, threads = -1))
  )
  expect_setequal(names(cases), setdiff(getNamespaceExports("rdarrow"), "rdarrow_engine_version"))
  for (fn in names(cases)) {
    err <- catch_error(eval(cases[[fn]]))
    expect_s3_class(err, "rdarrow_error")
    expect_identical(conditionCall(err), cases[[fn]], info = fn)
  }
  # through a wrapper of the user's, the call is still rdarrow's function
  # the user's code called
  mine <- function(path) read_rds(path)
  err <- catch_error(mine(file.path(d, "none.rds")))
  expect_identical(conditionCall(err), quote(read_rds(path)))
  # an engine error raised past a helper (the writer's options, the
  # connection read in a temporary file)
  err <- catch_error(write_rds(x, file.path(d, "no", "such", "dir.rds"), compress = "xz"))
  expect_identical(conditionCall(err)[[1]], quote(write_rds))
})
