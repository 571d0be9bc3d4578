# A damaged file read through an R connection, whoever inflates it, is an
# error or the original data, never different data without a word:
# file(), gzfile(), bzfile(), xzfile() and url() not yet read from are read
# by the engine from the file or URL they name (every check of the file's
# compression made); gzcon() inflates itself and only prints a failed CRC
# or length, which the read catches and turns into an error; other
# connections (rawConnection(), an opened file()) hand over raw bytes that
# the engine checks as it does a file's.

# `x` saved by saveRDS() with `compress`; returns the file's bytes.
cd_bytes <- function(x, compress) {
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f))
  saveRDS(x, f, compress = compress)
  readBin(f, "raw", file.size(f))
}

# Read `f` through connection kind `kind` (a function of the path or URL).
cd_kinds <- list(
  gzcon_file = function(f) {
    con <- gzcon(file(f, "rb"))
    on.exit(close_quietly(con))
    read_rds(con)
  },
  gzfile = function(f) read_rds(gzfile(f)),
  file = function(f) read_rds(file(f)),
  file_opened = function(f) {
    con <- file(f, "rb")
    on.exit(close(con))
    read_rds(con)
  },
  raw_connection = function(f) {
    con <- rawConnection(readBin(f, "raw", file.size(f)))
    on.exit(close_quietly(con))
    read_rds(con)
  }
)

# Close `con` unless the read closed it (a connection given closed is
# closed after the read, as readRDS() closes it).
close_quietly <- function(con) invisible(try(close(con), silent = TRUE))

# The outcome of reading `bytes` (written to a file) with `read`: "error",
# "original" or "different".
cd_outcome <- function(bytes, read, x) {
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f))
  writeBin(bytes, f)
  got <- tryCatch(suppressWarnings(read(f)), error = function(e) e)
  if (inherits(got, "error")) return("error")
  if (identical(got, x)) "original" else "different"
}

test_that("flipped bytes and cuts through every connection kind are errors or the original", {
  set.seed(77)
  x <- data.frame(a = 1:3000, b = round(rnorm(3000), 2), s = sample(letters, 3000, TRUE))
  for (compress in c("gzip", "bzip2", "xz")) {
    bytes <- cd_bytes(x, compress)
    n <- length(bytes)
    kinds <- if (compress == "gzip") names(cd_kinds) else setdiff(names(cd_kinds), "gzcon_file")
    for (kind in kinds) {
      read <- cd_kinds[[kind]]
      # intact: the object
      expect_identical(cd_outcome(bytes, read, x), "original", info = paste(compress, kind))
      seen <- character()
      for (i in 1:12) {
        at <- sample(11:(n - 1L), 1L)
        flipped <- bytes
        flipped[at] <- xor(flipped[at], as.raw(bitwShiftL(1L, sample(0:7, 1L))))
        got <- cd_outcome(flipped, read, x)
        seen <- c(seen, got)
        expect_true(got %in% c("error", "original"),
                    info = sprintf("%s, %s, byte %d flipped: %s", compress, kind, at, got))
      }
      for (keep in c(n - 1L, n - 4L, n - 8L, n %/% 2L, 30L)) {
        got <- cd_outcome(bytes[seq_len(keep)], read, x)
        expect_true(got %in% c("error", "original"),
                    info = sprintf("%s, %s, cut to %d of %d bytes: %s", compress, kind, keep, n, got))
      }
      # (the flips were seen: most are errors)
      expect_true("error" %in% seen, info = paste(compress, kind))
    }
  }
})

test_that("gzcon() of a damaged gzip stream is an error that says the connection reported it", {
  set.seed(3)
  x <- data.frame(a = 1:3000, b = rnorm(3000))
  bytes <- cd_bytes(x, "gzip")
  f <- withr::local_tempfile(fileext = ".rds")
  # a flip inside the deflate data that inflates (R's gzcon() hands the
  # bytes over and prints "crc error"): find one
  found <- FALSE
  for (at in seq(200L, length(bytes) - 20L, by = 97L)) {
    b <- bytes
    b[at] <- xor(b[at], as.raw(16L))
    writeBin(b, f)
    con <- gzcon(file(f, "rb"))
    e <- tryCatch(read_rds(con), error = function(e) e)
    close_quietly(con)
    if (inherits(e, "rdarrow_error_corrupt") && grepl("reported damage", conditionMessage(e))) {
      found <- TRUE
      expect_match(conditionMessage(e), "crc error|len error")
      expect_match(conditionMessage(e), basename(f), fixed = TRUE)
      expect_identical(conditionCall(e)[[1]], quote(read_rds))
      break
    }
  }
  expect_true(found)
  # the user's message sink is still in place after the read
  msgs <- character()
  tc <- textConnection("msgs", "w", local = TRUE)
  sink(tc, type = "message")
  con <- gzcon(file(f, "rb"))
  try(read_rds(con), silent = TRUE)
  close_quietly(con)
  message("after")
  sink(type = "message")
  close(tc)
  expect_identical(msgs, "after")
})

test_that("a connection that names a file or URL is read from it by the engine", {
  x <- data.frame(a = 1:10, b = letters[1:10])
  dir <- withr::local_tempdir()
  f <- file.path(dir, "x.rds")
  saveRDS(x, f)
  expect_identical(read_rds(gzfile(f)), x)
  expect_identical(read_rds(file(f)), x)
  expect_identical(read_rdata(file(f))[[1]], x)
  # an opened connection at its start: read from the file it names
  opened <- file(f, "rb")
  on.exit(close(opened), add = TRUE)
  expect_identical(read_rds(opened), x)
  base <- local_server(dir)
  expect_identical(read_rds(url(paste0(base, "/x.rds"))), x)
  con <- gzcon(url(paste0(base, "/x.rds")))
  expect_identical(read_rds(con), x)
  close_quietly(con)
  # a damaged file behind a URL connection: an error, also through gzcon()
  bytes <- readBin(f, "raw", file.size(f))
  n <- length(bytes)
  bytes[n - 6L] <- xor(bytes[n - 6L], as.raw(1L)) # the CRC in the trailer
  writeBin(bytes, file.path(dir, "bad.rds"))
  expect_error(read_rds(url(paste0(base, "/bad.rds"))), class = "rdarrow_error")
  con <- gzcon(url(paste0(base, "/bad.rds")))
  expect_error(read_rds(con), class = "rdarrow_error")
  close_quietly(con)
})
