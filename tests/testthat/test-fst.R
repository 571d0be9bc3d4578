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
  expect_identical(tab$schema$date$type$ToString(), "date32[day]")
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
  # a file named .fst without fst's marker: fst before 0.8.0, told so
  old <- fst_tmp("old")
  writeBin(as.raw(c(0x11, 0x22, 0x33, 0x44, 1:100)), old)
  expect_error(read_rds(old), "fst 0.8.0 to 0.8.10", class = "rdarrow_error")
  # a flip in the data: fst carries no check of its blocks, so it is an
  # error where it breaks a block's compression or lengths; never a crash
  for (at in sample(first_col:length(bytes), 60)) {
    b <- bytes
    b[at] <- xor(b[at], as.raw(0x04))
    got <- tryCatch(read_rds(b), rdarrow_error = function(e) e)
    expect_true(inherits(got, "rdarrow_error") || is.data.frame(got), label = sprintf("flip at %d", at))
  }
})

test_that("write_rds(x, 'x.fst') writes what read_fst() reads as it reads write_fst(x)'s file, at every level", {
  fst <- fst_pkg()
  for (n in c(1, 2047, 4097, 16385)) {
    x <- fst_frame(n, seed = n + 1)
    for (lvl in c(0, 10, 50, 51, 100)) {
      ours <- fst_tmp(sprintf("ours_%d_%d", n, lvl))
      theirs <- fst_tmp(sprintf("theirs_%d_%d", n, lvl))
      write_rds(x, ours, compression_level = lvl)
      fst$write_fst(x, theirs, compress = lvl)
      want <- fst$read_fst(theirs)
      expect_identical(fst$read_fst(ours), want, label = basename(ours))
      expect_identical(read_rds(ours), want, label = basename(ours))
      # a range of rows, as fst reads them from the blocks
      if (n > 4096) {
        expect_identical(fst$read_fst(ours, from = 4000, to = 4100), fst$read_fst(theirs, from = 4000, to = 4100))
      }
    }
  }
  # the default level is fst's (50), and rows names are dropped as fst drops them
  x <- data.frame(a = 1:3, row.names = c("x", "y", "z"))
  f <- fst_tmp("default")
  write_rds(x, f)
  expect_identical(fst$read_fst(f), data.frame(a = 1:3))
})

test_that("factors of many levels, keys, mixed encodings and zero rows written as fst reads them", {
  fst <- fst_pkg()
  set.seed(4)
  big <- data.frame(
    f40k = factor(sprintf("lv%05d", sample(1:40000, 50000, TRUE))),
    f300 = factor(sprintf("m%03d", sample(c(1:300, NA), 50000, TRUE))),
    f100 = factor(sample(c(sprintf("s%03d", 1:100), NA), 50000, TRUE), exclude = NULL),
    none = factor(rep(NA_character_, 50000))
  )
  for (lvl in c(0, 40, 90)) {
    f <- fst_tmp(paste0("levels_", lvl))
    write_rds(big, f, compression_level = lvl)
    expect_identical(fst$read_fst(f), big, label = basename(f))
  }
  # strings in two encodings: written in UTF-8, never mislabelled
  mixed <- c(iconv("caf\u00e9", "UTF-8", "latin1"), enc2utf8("\u00e9t\u00e9"), NA, "plain")
  f <- fst_tmp("mixed")
  write_rds(data.frame(s = mixed, stringsAsFactors = FALSE), f)
  got <- fst$read_fst(f)$s
  expect_identical(got, mixed)
  expect_true(all(validUTF8(got[!is.na(got)])))
  # data.table keys, as fst keeps them
  skip_if_not_installed("data.table")
  dt <- data.table::data.table(a = c(3L, 1L, 2L), b = c("z", "x", "y"))
  data.table::setkey(dt, a, b)
  f <- fst_tmp("keyed")
  write_rds(dt, f)
  back <- fst$read_fst(f, as.data.table = TRUE)
  expect_identical(data.table::key(back), c("a", "b"))
  expect_identical(as.data.frame(back), as.data.frame(dt))
  # zero rows
  f <- fst_tmp("zero")
  write_rds(fst_frame(3)[0, ], f)
  expect_identical(fst$read_fst(f), {
    g <- fst_tmp("zero_theirs"); fst$write_fst(fst_frame(3)[0, ], g); fst$read_fst(g)
  })
})

test_that("what fst cannot hold is an error naming the column, and nothing is left behind", {
  bad <- list(
    list = data.frame(a = 1:2, l = I(list(1, "a"))),
    complex = data.frame(a = 1:2, z = c(1i, 2i)),
    posixlt = local({ d <- data.frame(a = 1:2); d$t <- as.POSIXlt(c("2020-01-01", "2021-01-01"), tz = "UTC"); d }),
    matrix = local({ d <- data.frame(a = 1:2); d$m <- matrix(1:4, 2); d }),
    weeks = data.frame(w = as.difftime(c(1, 2), units = "weeks")),
    vector = 1:10
  )
  for (k in names(bad)) {
    dir <- tempfile("rdarrow-fst-bad-")
    dir.create(dir)
    f <- file.path(dir, "x.fst")
    expect_error(write_rds(bad[[k]], f), class = "rdarrow_error_usage", label = k)
    expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), character(0), label = k)
  }
  expect_error(write_rds(bad$list, fst_tmp()), "column 'l'")
  expect_error(write_rds(data.frame(a = 1), fst_tmp(), compression_level = 101), class = "rdarrow_error_usage")
  expect_error(write_rds(data.frame(a = 1), fst_tmp(), compress = "xz"), class = "rdarrow_error_usage")
})

test_that("random frames go both ways: write_fst() -> rdarrow and rdarrow -> read_fst()", {
  fst <- fst_pkg()
  for (k in 1:20) {
    set.seed(1000 + k)
    n <- sample(c(0, 1, sample.int(9000, 1)), 1)
    full <- fst_frame(max(n, 1), seed = k)[seq_len(n), , drop = FALSE]
    x <- full[, sample(ncol(full), sample.int(ncol(full), 1)), drop = FALSE]
    rownames(x) <- NULL
    lvl <- sample(0:100, 1)
    label <- sprintf("frame %d: %d rows, columns %s, level %d", k, n, paste(names(x), collapse = ","), lvl)
    theirs <- fst_tmp(paste0("theirs_", k))
    fst$write_fst(x, theirs, compress = lvl)
    expect_identical(read_rds(theirs), fst$read_fst(theirs), label = label)
    ours <- fst_tmp(paste0("ours_", k))
    write_rds(x, ours, compression_level = lvl)
    expect_identical(fst$read_fst(ours), fst$read_fst(theirs), label = label)
  }
})
