# What a new user trips over: no argument silently ignored, no output
# under a name its format does not have, every error naming its file,
# writers that take connections as saveRDS() and save() do.

test_that("a .qs2 or .qdata sink takes zstd at the level given, and refuses what it cannot hold", {
  pk <- qs_pkgs()
  set.seed(1)
  x <- data.frame(a = rep(round(rnorm(1000), 2), 200), b = sample(letters, 2e5, TRUE))
  for (ext in c(".qs2", ".qdata")) {
    sizes <- vapply(c(1, 9, 19), function(level) {
      f <- local_tempfile(ext)
      write_rds(x, f, compression_level = level)
      back <- if (ext == ".qs2") pk$qs2$qs_read(f) else pk$qs2$qd_read(f)
      expect_identical(back, x, label = paste(ext, level))
      file.size(f)
    }, 0)
    # the level is used (it was ignored: the same bytes at every level)
    expect_gt(length(unique(sizes)), 1L, label = ext)
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
  f <- local_tempfile(".rds")
  expect_error(write_rds(x, gzfile(f), compress = "xz"), "connection", class = "rdarrow_error_usage")
})

test_that("a listing's bytes are NA, not NaN, where a listing has none", {
  f <- local_tempfile(".rds")
  saveRDS(list(a = head(mtcars), b = 1:3), f)
  l <- rdata_objects(f, recursive = TRUE)
  expect_true(all(is.na(l$bytes[-1])))
  expect_false(any(is.nan(l$bytes)))
})
