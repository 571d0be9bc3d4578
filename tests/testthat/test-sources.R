# R data from where it lives besides local files: raw vectors, connections
# and http(s) URLs (read by the engine as a stream, against a web server
# on the loopback interface started here), and read_rds().


test_that("raw vectors are read wherever a path is", {
  x <- head(mtcars)
  bytes <- serialize(x, NULL)
  expect_identical(read_rds(bytes), x)
  expect_identical(read_rdata(bytes), list(value = x))
  expect_identical(rdata_objects(bytes)$name, "value")
  # compressed in memory, or a whole file's bytes
  expect_identical(read_rds(memCompress(bytes, "gzip")), x)
  expect_identical(read_rds(memCompress(bytes, "xz")), x)
  expect_identical(read_rds(memCompress(bytes, "bzip2")), x)
  f <- withr::local_tempfile(fileext = ".RData")
  lst <- list(a = 1:3)
  save(x, lst, file = f)
  raw_file <- readBin(f, "raw", file.size(f))
  expect_identical(read_rdata(raw_file), list(x = x, lst = lst))
  expect_identical(read_rdata(raw_file, "lst$a")[[1]], 1:3)
  skip_if_not_installed("arrow")
  # (mtcars' row names through rdarrow's own conversion: arrow R drops
  # character row names once tibble is loaded)
  expect_identical(as.data.frame(rdata_to_arrow(raw_file, object = "x")), x)
  s <- rdata_to_arrow(raw_file, object = "x")
  expect_identical(as.data.frame(arrow::as_arrow_table(s)), x, ignore_attr = "row.names")
  # row group by row group, the bytes read from memory
  pq <- withr::local_tempfile(fileext = ".parquet")
  rdata_to_parquet(raw_file, pq, object = "x")
  expect_identical(as.data.frame(arrow::read_parquet(pq)), x, ignore_attr = "row.names")
  expect_identical(as.data.frame(rdata_to_arrow(raw_file, object = "x", chunk_size = 2L)), x)
  # the bytes are read from memory: no temporary file is made for them
  staged <- 0L
  suppressMessages(trace("tempfile", quote(staged <<- staged + 1L), print = FALSE, where = baseenv()))
  withr::defer(suppressMessages(untrace("tempfile", where = baseenv())))
  expect_identical(read_rdata(raw_file, "lst"), list(lst = lst))
  expect_identical(nrow(rdata_objects(raw_file)), 2L)
  expect_identical(staged, 0L)
  # not R data
  expect_error(read_rds(charToRaw("hello, world")), class = "rdarrow_error")
  expect_error(read_rds(raw()), class = "rdarrow_error")
})

test_that("connections are read to their end", {
  x <- data.frame(a = 1:5, b = letters[1:5])
  f <- withr::local_tempfile(fileext = ".rds")
  saveRDS(x, f)
  expect_identical(read_rds(file(f)), x)
  expect_identical(read_rds(gzcon(file(f, "rb"))), x)
  con <- rawConnection(serialize(x, NULL))
  expect_identical(read_rds(con), x)
  close(con)
  # an open connection stays open, read from where it is
  con <- file(f, "rb")
  expect_identical(read_rdata(con)[[1]], x)
  expect_true(isOpen(con))
  close(con)
})

test_that("read_rds() reads the one object of any source, and says when there are more", {
  f <- withr::local_tempfile(fileext = ".RData")
  only <- list(k = 1)
  save(only, file = f)
  expect_identical(read_rds(f), only)
  a <- 1
  b <- 2
  save(a, b, file = f)
  expect_error(read_rds(f), "holds 2 objects \\('a', 'b'\\)", class = "rdarrow_error")
  rds <- withr::local_tempfile(fileext = ".rds")
  saveRDS(iris, rds, compress = "xz")
  expect_identical(read_rds(rds), iris)
})

test_that("http URLs are read as streams by every reader", {
  dir <- withr::local_tempdir()
  x <- data.frame(id = 1:2000, v = rnorm(2000), s = sample(letters, 2000, TRUE))
  saveRDS(x, file.path(dir, "x.rds"))
  lst <- list(a = head(iris), b = 1:3)
  save(x, lst, file = file.path(dir, "both.RData"))
  base <- local_server(dir)
  url <- paste0(base, "/x.rds")
  expect_identical(read_rds(url), x)
  expect_identical(rdata_objects(url)$name, "x")
  expect_identical(read_rdata(paste0(base, "/both.RData"), "lst$a")[[1]], lst$a)
  # an R connection to the same URL
  expect_identical(read_rds(gzcon(url(url))), x)
  skip_if_not_installed("arrow")
  s <- rdata_to_arrow(paste0(base, "/both.RData"), object = "x")
  expect_identical(as.data.frame(arrow::as_arrow_table(s)), x)
  pq <- withr::local_tempfile(fileext = ".parquet")
  rdata_to_parquet(url, pq)
  expect_identical(as.data.frame(arrow::read_parquet(pq, as_data_frame = FALSE)), x)
})

test_that("network failures and web pages are clear errors", {
  dir <- withr::local_tempdir()
  saveRDS(data.frame(v = runif(50000)), file.path(dir, "big.rds"), compress = FALSE)
  base <- local_server(dir)
  e <- expect_error(read_rds(paste0(base, "/missing.rds")), class = "rdarrow_error")
  expect_match(conditionMessage(e), "HTTP 404")
  e <- expect_error(read_rds(paste0(base, "/page/x.rds")), class = "rdarrow_error")
  expect_match(conditionMessage(e), "web page")
  e <- expect_error(read_rds(paste0(base, "/cut/big.rds")), class = "rdarrow_error")
  expect_match(conditionMessage(e), "stopped after [0-9]+ bytes of [0-9]+|truncated|ends")
  pq <- withr::local_tempfile(fileext = ".parquet")
  expect_error(rdata_to_parquet(paste0(base, "/cut/big.rds"), pq), class = "rdarrow_error")
  expect_false(file.exists(pq))
  # nobody listens there
  e <- expect_error(read_rds("http://127.0.0.1:1/x.rds"), class = "rdarrow_error")
  expect_match(conditionMessage(e), "cannot read 'http://127.0.0.1")
  # a URL's password and its query (a signed URL's signature) never
  # appear in a message
  e <- expect_error(read_rds("http://user:s3cr3t@127.0.0.1:1/x.rds?X-Amz-Signature=deadbeef"),
                    class = "rdarrow_error")
  expect_false(grepl("s3cr3t|deadbeef", conditionMessage(e)))
  expect_match(conditionMessage(e), "127.0.0.1:1/x.rds")
  signed <- paste0(sub("://", "://user:s3cr3t@", base, fixed = TRUE), "/missing.rds?token=deadbeef")
  e <- expect_error(read_rds(signed), class = "rdarrow_error")
  expect_match(conditionMessage(e), "HTTP 404")
  expect_false(grepl("s3cr3t|deadbeef", conditionMessage(e)))
  e <- expect_error(read_rds(paste0(sub("://", "://user:s3cr3t@", base, fixed = TRUE), "/cut/big.rds")),
                    class = "rdarrow_error")
  expect_false(grepl("s3cr3t|deadbeef", conditionMessage(e)))
})
