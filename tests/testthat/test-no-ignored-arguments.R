# What a new user trips over: no argument silently ignored, no output
# under a name its format does not have, every error naming its file,
# writers that take connections as saveRDS() and save() do.

test_that("a .qs2 or .qdata sink takes zstd at the level given, and refuses what it cannot hold", {
  pk <- qs_pkgs()
  set.seed(1)
  x <- data.frame(a = rep(round(rnorm(1000), 2), 200), b = sample(letters, 2e5, TRUE))
  for (ext in c(".qs2", ".qdata")) {
    levels <- c(1, 3, 5, 9, 12, 19)
    sizes <- vapply(levels, function(level) {
      f <- local_tempfile(ext)
      write_rds(x, f, compression_level = level)
      back <- if (ext == ".qs2") pk$qs2$qs_read(f) else pk$qs2$qd_read(f)
      expect_identical(back, x, label = paste(ext, level))
      file.size(f)
    }, 0)
    # the level is used (it was ignored: the same bytes at every level),
    # and a higher one never makes the file larger than 3, 5 and 9 do
    # (zstd's stronger strategies alone made R's strings larger at 7, 9
    # and 12 than at 3)
    expect_gt(length(unique(sizes)), 1L, label = ext)
    expect_identical(sizes, cummin(sizes), label = paste(ext, paste(sizes, collapse = " ")))
    f <- local_tempfile(ext)
    for (bad in c(0, 23, 100)) {
      expect_error(write_rds(x, f, compression_level = bad), "out of range", class = "rdarrow_error_usage")
    }
    for (other in c("gzip", "xz", "none")) {
      expect_error(write_rds(x, f, compress = other), "compressed with zstd", class = "rdarrow_error_usage")
    }
    expect_false(file.exists(f))
  }
  # R's files: a level out of range is an error for every compression
  f <- local_tempfile(".rds")
  expect_error(write_rds(x, f, compression_level = 10), "out of range", class = "rdarrow_error_usage")
  expect_error(write_rds(x, f, compress = "bzip2", compression_level = 0), "out of range")
})

test_that("a .qs sink is refused from every writer, before anything is written, pointing to .qs2", {
  f <- local_tempfile(".qs")
  x <- data.frame(a = 1:3)
  expect_error(write_rds(x, f), ".qs2", class = "rdarrow_error_usage")
  expect_error(write_rdata(x, file = f), ".qs2", class = "rdarrow_error_usage")
  expect_error(arrow_to_rdata(x, f), ".qs2", class = "rdarrow_error_usage")
  expect_false(file.exists(f))
  g <- local_tempfile(".rds")
  saveRDS(x, g)
  r <- run_cli(c("to-rdata", g, "-o", f))
  expect_identical(r$status, 2L)
  expect_match(paste(r$stderr, collapse = "\n"), ".qs2", fixed = TRUE)
  expect_false(file.exists(f))
})

test_that("an error about one file names the file", {
  bad <- local_tempfile(".rds")
  x <- data.frame(a = 1:3000)
  saveRDS(x, bad)
  b <- readBin(bad, "raw", file.size(bad))
  writeBin(b[seq_len(length(b) %/% 2)], bad)
  for (call in list(
    function() read_rds(bad),
    function() read_rdata(bad),
    function() rdata_objects(bad),
    function() rdata_to_arrow(bad),
    function() rdata_to_parquet(bad, tempfile(fileext = ".parquet"))
  )) {
    err <- tryCatch(call(), error = function(e) e)
    expect_s3_class(err, "rdarrow_error")
    expect_match(conditionMessage(err), sprintf("file '%s'", bad), fixed = TRUE)
  }
})

test_that("write_rds() and write_rdata() write to connections as saveRDS() and save() do", {
  x <- list(a = 1:3, df = head(mtcars), s = letters)
  for (make in list(file = function(f) file(f), gzfile = function(f) gzfile(f), xzfile = function(f) xzfile(f))) {
    f <- local_tempfile(".rds")
    write_rds(x, make(f))
    expect_identical(readRDS(f), x)
    g <- local_tempfile(".RData")
    a <- 1:10
    write_rdata(a, x, file = make(g))
    e <- new.env()
    load(g, envir = e)
    expect_identical(mget(c("a", "x"), envir = e), list(a = a, x = x))
  }
  # an open connection is written to and left open
  con <- rawConnection(raw(0), "wb")
  write_rds(x, con)
  bytes <- rawConnectionValue(con)
  close(con)
  expect_identical(unserialize(bytes), x)
  expect_identical(bytes, serialize(x, NULL, xdr = TRUE))
})

# What R does with a connection: the result, and the warning or error
# message (NULL where it neither warns nor fails).
with_conditions <- function(expr) {
  said <- NULL
  value <- withCallingHandlers(
    tryCatch(expr, error = function(e) {
      said <<- c(said, error = conditionMessage(e))
      NULL
    }),
    warning = function(w) {
      said <<- c(said, warning = conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  )
  list(value = value, said = said)
}

test_that("a connection takes compress and compression_level as saveRDS() does: ignored, with its warning", {
  x <- list(a = 1:3, df = head(mtcars))
  for (compress in list(FALSE, TRUE, "xz")) {
    ours <- rawConnection(raw(0), "wb")
    r <- with_conditions(write_rds(x, ours, compress = compress))
    theirs <- rawConnection(raw(0), "wb")
    R <- with_conditions(saveRDS(x, theirs, compress = compress))
    expect_identical(r$said, R$said)
    expect_identical(rawConnectionValue(ours), rawConnectionValue(theirs))
    close(ours)
    close(theirs)
  }
  # the warning shows the user's call
  con <- rawConnection(raw(0), "wb")
  w <- tryCatch(write_rds(x, con, compress = FALSE), warning = function(w) w)
  close(con)
  expect_identical(conditionCall(w)[[1]], quote(write_rds))
  # compression_level, which saveRDS() lacks, is told the same way
  con <- rawConnection(raw(0), "wb")
  expect_warning(write_rds(x, con, compression_level = 3),
                 "'compression_level' is ignored unless 'file' is a file name", fixed = TRUE)
  expect_identical(unserialize(rawConnectionValue(con)), x)
  close(con)
  # save() ignores them on a connection; write_rdata() says so too, and
  # writes what save() writes
  a <- 1:10
  ours <- rawConnection(raw(0), "wb")
  expect_warning(write_rdata(a, file = ours, compress = "xz"), "'compress' is ignored")
  theirs <- rawConnection(raw(0), "wb")
  save(a, file = theirs, compress = "xz")
  expect_identical(rawConnectionValue(ours), rawConnectionValue(theirs))
  close(ours)
  close(theirs)
  # a gzfile() compresses as it was made
  f <- local_tempfile(".rds")
  expect_warning(write_rds(x, gzfile(f), compress = "xz"), "'compress' is ignored")
  expect_identical(readRDS(f), x)
  expect_identical(readBin(f, "raw", 2L), as.raw(c(0x1f, 0x8b)))
})

test_that("a text-mode connection takes the ASCII format, as for saveRDS() and save(), and a clear error otherwise", {
  x <- list(a = 1:3, s = c("a", NA))
  a <- 1:10
  # the binary format: R refuses; so does rdarrow, saying what to do
  for (write in list(
    function(con) write_rds(x, con),
    function(con) write_rdata(a, file = con)
  )) {
    f <- local_tempfile(".rds")
    con <- file(f, "w")
    err <- tryCatch(write(con), error = function(e) e)
    close(con)
    expect_s3_class(err, "rdarrow_error_usage")
    expect_match(conditionMessage(err), "text mode.*ascii = TRUE")
    expect_identical(file.size(f), 0)
  }
  f <- local_tempfile(".rds")
  con <- file(f, "w")
  expect_error(saveRDS(x, con), "binary-mode connection required")
  close(con)
  # the ASCII format: written as text, as R writes it
  for (open_first in c(TRUE, FALSE)) {
    f <- local_tempfile(".rds")
    g <- local_tempfile(".rds")
    con <- if (open_first) file(f, "w") else file(f)
    write_rds(x, con, ascii = TRUE)
    if (open_first) close(con)
    con <- if (open_first) file(g, "w") else file(g)
    saveRDS(x, con, ascii = TRUE)
    if (open_first) close(con)
    expect_identical(readRDS(f), x)
    expect_identical(readBin(f, "raw", 1e4), readBin(g, "raw", 1e4))
    h <- local_tempfile(".RData")
    con <- if (open_first) file(h, "w") else file(h)
    write_rdata(a, file = con, ascii = TRUE)
    if (open_first) close(con)
    e <- new.env()
    load(h, e)
    expect_identical(e$a, a)
  }
  # a textConnection() too
  out <- character()
  tc <- textConnection("out", "w", local = TRUE)
  write_rds(x, tc, ascii = TRUE)
  close(tc)
  expect_identical(unserialize(charToRaw(paste0(paste(out, collapse = "\n"), "\n"))), x)
  # a connection open for reading only: R refuses, and so does rdarrow
  f <- local_tempfile(".rds")
  saveRDS(1, f)
  con <- file(f, "rb")
  expect_error(saveRDS(x, con))
  expect_error(write_rds(x, con), "not open for writing", class = "rdarrow_error_usage")
  close(con)
})

test_that("a listing's bytes are NA, not NaN, where a listing has none", {
  f <- local_tempfile(".rds")
  saveRDS(list(a = head(mtcars), b = 1:3), f)
  l <- rdata_objects(f, recursive = TRUE)
  expect_true(all(is.na(l$bytes[-1])))
  expect_false(any(is.nan(l$bytes)))
})
