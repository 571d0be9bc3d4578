# Resource bounds: hostile files end in a clear rdarrow_error (or a correct
# result), without allocating what the input cannot justify.

xdr_header <- function() {
  c(charToRaw("X\n"), writeBin(c(3L, 262658L, 197888L, 5L), raw(), endian = "big"),
    charToRaw("UTF-8"))
}
ints <- function(...) writeBin(as.integer(c(...)), raw(), endian = "big")

test_that("a small file declaring a 2^40-element vector is refused before allocating", {
  f <- tempfile(fileext = ".rds")
  # REALSXP, long length: -1, upper word 256 (2^40 elements), then 8 bytes
  writeBin(c(xdr_header(), ints(14L, -1L, 256L, 0L), as.raw(rep(0, 8))), f)
  expect_lt(file.size(f), 1024)
  err <- expect_error(read_rdata(f), class = "rdarrow_error")
  expect_match(conditionMessage(err), "byte|memory")
  # the same, gzip-compressed: the length is not backed by data
  g <- tempfile(fileext = ".rds")
  con <- gzfile(g, "wb"); writeBin(readBin(f, "raw", 1e4), con); close(con)
  expect_error(read_rdata(g), class = "rdarrow_error")
  expect_error(rdata_objects(g), class = "rdarrow_error")
})

test_that("a declared vector beyond the memory limit is a limit error", {
  f <- tempfile(fileext = ".rds")
  # 2^27 doubles (1 GiB) of zeros, gzip-compressed to about a megabyte
  con <- gzfile(f, "wb")
  writeBin(c(xdr_header(), ints(14L, 2^27)), con)
  zeros <- raw(2^24)
  for (i in 1:64) writeBin(zeros, con)
  close(con)
  expect_lt(file.size(f), 4e6)
  old <- options(rdarrow.max_memory = 1e8)
  on.exit(options(old), add = TRUE)
  err <- expect_error(read_rdata(f), class = "rdarrow_error_limit")
  expect_match(conditionMessage(err), "rdarrow.max_memory")
})

test_that("a 10^6-deep nested list is refused at the depth limit", {
  f <- tempfile(fileext = ".rds")
  con <- gzfile(f, "wb")
  writeBin(c(xdr_header(), rep(ints(19L, 1L), 1e6), ints(254L)), con)
  close(con)
  err <- expect_error(read_rdata(f), class = "rdarrow_error_limit")
  expect_match(conditionMessage(err), "rdarrow.max_depth")
  expect_error(rdata_objects(f), class = "rdarrow_error_limit")
})

test_that("a reference index past the table is a corrupt-file error with its offset", {
  f <- tempfile(fileext = ".rds")
  writeBin(c(xdr_header(), ints(255L + 99L * 256L)), f)
  err <- expect_error(read_rdata(f), class = "rdarrow_error_corrupt")
  expect_match(conditionMessage(err), "reference index 99")
  expect_false(is.na(err$offset))
})

test_that("a file of zeros inflating a thousandfold is rejected at its first bytes", {
  f <- tempfile(fileext = ".RData")
  con <- gzfile(f, "wb")
  zeros <- raw(2^24)
  for (i in 1:8) writeBin(zeros, con)
  close(con)
  expect_error(read_rdata(f), class = "rdarrow_error_not_rdata")
})

test_that("environment cycles read back as load() gives them", {
  a <- new.env(); b <- new.env()
  a$b <- b; b$a <- a; a$self <- a
  f <- tempfile(fileext = ".RData")
  save(a, b, file = f)
  got <- read_rdata(f)
  e <- new.env(); load(f, e)
  expect_identical(serialize(got$a, NULL), serialize(e$a, NULL))
  expect_identical(ls(got$a), c("b", "self"))
  expect_identical(rdata_objects(f)$type, c("environment", "environment"))
})
