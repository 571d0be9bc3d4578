# .fst files, made by the real fst package (helper-fst.R), read by
# rdarrow without it, told by their bytes: every column type, every
# compression level, every block boundary; through Arrow, Parquet and
# IPC back to R; over http; damaged files.

fst_tmp <- function(name = "x", ext = "fst") {
  dir <- tempfile("rdarrow-fst-")
  dir.create(dir)
  file.path(dir, paste0(name, ".", ext))
}

test_that("every column type, compression level and block boundary reads as read_fst() gives it", {
  fst <- fst_pkg()
  # blocks: 4096 integers/logicals/factor codes, 2048 doubles, 2047
  # strings, 16384 bytes; level 0 raw, 1-50 LZ4 and raw, 51-100 LZ4 and ZSTD
  for (n in c(1, 7, 2047, 2048, 2049, 4095, 4096, 4097, 16384, 16385)) {
    x <- fst_frame(n)
    for (lvl in c(0, 10, 50, 51, 75, 100)) {
      f <- fst_tmp(sprintf("x_%d_%d", n, lvl))
      fst$write_fst(x, f, compress = lvl)
      want <- fst$read_fst(f)
      expect_identical(read_rds(f), want, label = basename(f))
    }
  }
  # zero rows
  f <- fst_tmp("empty")
  fst$write_fst(fst_frame(5)[0, ], f)
  expect_identical(read_rds(f), fst$read_fst(f))
})

test_that("factors of 1-, 2- and 4-byte codes, an NA level, no levels; strings in every encoding; wide frames", {
  fst <- fst_pkg()
  set.seed(3)
  big <- data.frame(
    f40k = factor(sprintf("lv%05d", sample(1:40000, 50000, TRUE))),
    f300 = factor(sprintf("m%03d", sample(1:300, 50000, TRUE))),
    f100 = factor(sprintf("s%03d", sample(1:100, 50000, TRUE)))
  )
  for (lvl in c(0, 30, 50, 70, 100)) {
    f <- fst_tmp(paste0("levels_", lvl))
    fst$write_fst(big, f, compress = lvl)
    expect_identical(read_rds(f), fst$read_fst(f), label = basename(f))
  }
  f <- fst_tmp("na_level")
  fst$write_fst(data.frame(f = factor(c("a", NA, "b"), exclude = NULL), none = factor(c(NA, NA, NA))), f)
  expect_identical(read_rds(f), fst$read_fst(f))
  expect_true(anyNA(levels(read_rds(f)$f)))
  # latin1 and UTF-8 columns keep their marks as fst gives them
  lat <- iconv(c("caf\u00e9", "na\u00efve", NA, "plain"), "UTF-8", "latin1")
  f <- fst_tmp("latin1")
  fst$write_fst(data.frame(lat = lat, utf = enc2utf8(c("\u00e9t\u00e9", "x", "\u4e2d", NA)), stringsAsFactors = FALSE), f)
  got <- read_rds(f)
  expect_identical(got, fst$read_fst(f))
  expect_identical(Encoding(got$lat), Encoding(fst$read_fst(f)$lat))
  wide <- as.data.frame(setNames(lapply(1:500, function(i) rnorm(10)), paste0("c", 1:500)))
  f <- fst_tmp("wide")
  fst$write_fst(wide, f)
  expect_identical(read_rds(f), fst$read_fst(f))
})

test_that("every reader takes .fst: read_rdata(), rdata_objects(), raw bytes, connections, http, whatever the name", {
  fst <- fst_pkg()
  x <- fst_frame(5000)
  f <- fst_tmp("table")
  fst$write_fst(x, f)
  want <- fst$read_fst(f)
  r <- read_rdata(f)
  expect_identical(names(r), "table")
  expect_identical(r$table, want)
  l <- rdata_objects(f)
  expect_identical(nrow(l), 1L)
  expect_identical(l$class[[1]], "data.frame")
  expect_identical(read_rds(readBin(f, "raw", file.size(f))), want)
  con <- file(f, "rb")
  on.exit(close(con))
  expect_identical(read_rds(con), want)
  g <- sub("\\.fst$", ".bin", f)
  file.copy(f, g)
  expect_identical(read_rds(g), want)
  base <- local_server(dirname(f))
  expect_identical(read_rds(paste0(base, "/table.fst")), want)
  expect_error(read_rds(paste0(base, "/cut/table.fst")), class = "rdarrow_error")
})

test_that(".fst files convert to Arrow, Parquet and IPC and come back identical()", {
  fst <- fst_pkg()
  x <- fst_frame(3000)
  f <- fst_tmp("conv")
  fst$write_fst(x, f, compress = 75)
  want <- fst$read_fst(f)
  pq <- tempfile(fileext = ".parquet")
  rdata_to_parquet(f, pq)
  back <- tempfile(fileext = ".rds")
  parquet_to_rdata(pq, back)
  expect_identical(readRDS(back), want)
  ipc <- tempfile(fileext = ".arrow")
  rdata_to_ipc(f, ipc)
  back2 <- tempfile(fileext = ".rds")
  ipc_to_rdata(ipc, back2)
  expect_identical(readRDS(back2), want)
  skip_if_not_installed("arrow")
  tab <- arrow::as_arrow_table(rdata_to_arrow(f))
  expect_identical(tab$num_rows, 3000L)
  expect_identical(as.character(tab$schema$date$type), "date32[day]")
})

test_that("a damaged .fst file is an error naming the damage: every header's hash, every cut", {
  fst <- fst_pkg()
  x <- fst_frame(6000)
  f <- fst_tmp("dmg")
  fst$write_fst(x, f, compress = 60)
  want <- fst$read_fst(f)
  bytes <- readBin(f, "raw", file.size(f))
  # the headers (everything before the first column's data) carry hashes:
  # a flip anywhere in them is an error
  first_col <- 48 + 80 + 8 * ncol(x) + 24
  set.seed(9)
  for (at in unique(c(1:60, sample(61:first_col, 40)))) {
    b <- bytes
    b[at] <- xor(b[at], as.raw(0x10))
    expect_error(read_rds(b), class = "rdarrow_error", label = sprintf("flip at %d", at))
  }
  # a cut anywhere loses data: an error, never a shorter frame
  for (len in unique(c(10, 47, 100, 500, sample(first_col:(length(bytes) - 1), 40), length(bytes) - 1))) {
    expect_error(read_rds(bytes[seq_len(len)]), class = "rdarrow_error", label = sprintf("cut at %d", len))
  }
  # a flip in the data: fst carries no check of its blocks, so it is an
  # error where it breaks a block's compression or lengths; never a crash
  for (at in sample(first_col:length(bytes), 60)) {
    b <- bytes
    b[at] <- xor(b[at], as.raw(0x04))
    got <- tryCatch(read_rds(b), rdarrow_error = function(e) e)
    expect_true(inherits(got, "rdarrow_error") || is.data.frame(got), label = sprintf("flip at %d", at))
  }
})
