# .qs, .qs2 and .qdata files, made by the real qs and qs2 packages
# (helper-qs.R), read by rdarrow without them, told by their bytes; and
# .qs2 and .qdata files written by rdarrow, read back by qs2.

qs_tmp <- function(ext, name = "obj") {
  dir <- tempfile("rdarrow-qs-")
  dir.create(dir)
  file.path(dir, paste0(name, ".", ext))
}

test_that("qs2 files read as qs2::qs_read() reads them, whatever their name", {
  p <- qs_pkgs()
  objs <- qs_objects()
  f <- qs_tmp("qs2")
  p$qs2$qs_save(objs, f)
  want <- p$qs2$qs_read(f, validate_checksum = TRUE)
  got <- read_rds(f)
  for (n in names(want)) expect_identical(got[[n]], want[[n]], label = n)
  expect_identical(names(got), names(want))
  # told by the bytes, not the name
  g <- sub("\\.qs2$", ".bin", f)
  file.copy(f, g)
  expect_identical(read_rds(g)$df, want$df)
  # read_rdata(): the one object, named as an .rds file's
  r <- read_rdata(f)
  expect_identical(names(r), "obj")
  expect_identical(r$obj$mat, want$mat)
  # raw bytes and connections
  expect_identical(read_rds(readBin(f, "raw", file.size(f)))$chr, want$chr)
  con <- file(f, "rb")
  on.exit(close(con))
  expect_identical(read_rds(con)$fac, want$fac)
})

test_that("qs2 files: every level, shuffle on and off, one and two threads, many blocks, rds_to_qs()", {
  p <- qs_pkgs()
  set.seed(1)
  n <- 4e5
  big <- data.frame(i = sample.int(1e6, n, TRUE), d = rnorm(n), s = sample(c("alpha", "beta", NA), n, TRUE),
                    u = sprintf("id%08d", seq_len(n)), stringsAsFactors = FALSE)
  # every level, shuffle and thread count, each with each other
  combos <- list(c(1, 1, 1), c(1, 0, 2), c(3, 1, 2), c(3, 0, 1), c(19, 1, 2), c(19, 0, 1))
  for (k in combos) {
    f <- qs_tmp("qs2")
    p$qs2$qs_save(big, f, compress_level = k[[1]], shuffle = k[[2]] == 1, nthreads = k[[3]])
    expect_identical(read_rds(f), big, label = sprintf("level %d shuffle %d threads %d", k[[1]], k[[2]], k[[3]]))
  }
  # many 1 MiB blocks
  expect_gt(file.size(f), 2^20)
  # rds_to_qs(): an XDR payload
  r <- qs_tmp("rds")
  saveRDS(big, r)
  q <- qs_tmp("qs2")
  p$qs2$rds_to_qs(r, q)
  expect_identical(read_rds(q), big)
})

test_that("qdata files read as qs2::qd_read() reads them", {
  p <- qs_pkgs()
  objs <- qs_objects(full = FALSE)
  f <- qs_tmp("qdata")
  p$qs2$qd_save(objs, f)
  want <- p$qs2$qd_read(f, validate_checksum = TRUE)
  got <- read_rds(f)
  for (n in names(want)) expect_identical(got[[n]], want[[n]], label = n)
  expect_identical(got, want)
  # a data frame of many blocks, shuffled and not
  set.seed(2)
  n <- 3e5
  big <- data.frame(i = seq_len(n), d = rnorm(n), s = sample(c("x", "\u00e9", NA), n, TRUE))
  for (shuffle in c(TRUE, FALSE)) {
    g <- qs_tmp("qdata")
    p$qs2$qd_save(big, g, shuffle = shuffle, compress_level = 1L)
    expect_identical(read_rds(g), p$qs2$qd_read(g))
  }
  # a scalar and NULL as the whole file
  h <- qs_tmp("qdata")
  p$qs2$qd_save(NULL, h)
  expect_null(read_rds(h))
  p$qs2$qd_save(3.5, h)
  expect_identical(read_rds(h), 3.5)
})

test_that("qs files read as qs::qread() reads them, for every preset and algorithm", {
  p <- qs_pkgs()
  objs <- qs_objects()
  settings <- list(
    list(preset = "fast"), list(preset = "balanced"), list(preset = "high"),
    list(preset = "archive"), list(preset = "uncompressed"),
    list(preset = "custom", algorithm = "lz4", compress_level = 5L),
    list(preset = "custom", algorithm = "lz4hc", compress_level = 9L),
    list(preset = "custom", algorithm = "zstd", compress_level = 1L, shuffle_control = 5L),
    list(preset = "high", check_hash = FALSE)
  )
  for (s in settings) {
    f <- qs_tmp("qs")
    do.call(p$qs$qsave, c(list(objs, f), s))
    want <- p$qs$qread(f)
    got <- read_rds(f)
    what <- paste(unlist(s), collapse = " ")
    for (n in names(want)) {
      if (is.function(want[[n]])) {
        expect_identical(deparse(got[[n]]), deparse(want[[n]]), label = paste(what, n))
      } else if (is.environment(want[[n]])) {
        expect_identical(as.list(got[[n]]), as.list(want[[n]]), label = paste(what, n))
      } else {
        expect_identical(got[[n]], want[[n]], label = paste(what, n))
      }
    }
    # the same environment twice is one environment
    expect_true(identical(got$env, got$env_again))
  }
})

test_that("qs files of many blocks, and files from before qs 0.20 without the magic", {
  p <- qs_pkgs()
  set.seed(3)
  n <- 3e5
  big <- data.frame(i = sample.int(100L, n, TRUE), d = rnorm(n), s = sample(c("a", "b", NA), n, TRUE),
                    l = sample(c(TRUE, FALSE, NA), n, TRUE), z = complex(real = rnorm(n), imaginary = 1))
  for (preset in c("fast", "high", "archive", "uncompressed")) {
    f <- qs_tmp("qs")
    p$qs$qsave(big, f, preset = preset)
    expect_identical(read_rds(f), big, label = preset)
  }
  # a header without the magic and its 4 zero bytes, as qs wrote before 0.20
  f <- qs_tmp("qs")
  p$qs$qsave(big, f, preset = "high")
  b <- readBin(f, "raw", file.size(f))
  old <- c(as.raw(0), b[10:length(b)])
  g <- qs_tmp("qs")
  writeBin(old, g)
  expect_identical(read_rds(g), big)
})

test_that("listing, object paths, Arrow and Parquet over qs, qs2 and qdata files", {
  p <- qs_pkgs()
  x <- list(df = data.frame(a = 1:3, b = c("x", NA, "z")), v = c(2.5, NA))
  files <- c(qs2 = qs_tmp("qs2"), qdata = qs_tmp("qdata"), qs = qs_tmp("qs"))
  p$qs2$qs_save(x, files[["qs2"]])
  p$qs2$qd_save(x, files[["qdata"]])
  p$qs$qsave(x, files[["qs"]])
  for (k in names(files)) {
    f <- files[[k]]
    l <- rdata_objects(f)
    expect_identical(l$name, "obj", label = k)
    expect_identical(l$class[[1]], "list", label = k)
    parts <- rdata_objects(f, recursive = TRUE)
    expect_true("obj$df" %in% parts$name, label = k)
    expect_identical(read_rdata(f, objects = "obj$df")[["obj$df"]], x$df, label = k)
    expect_identical(read_rdata(f, objects = "obj$v")[["obj$v"]], x$v, label = k)
    g <- qs_tmp(k, "frame")
    switch(k, qs2 = p$qs2$qs_save(x$df, g), qdata = p$qs2$qd_save(x$df, g), qs = p$qs$qsave(x$df, g))
    expect_identical(as.data.frame(rdata_to_arrow(g)), x$df, label = k)
    pq <- tempfile(fileext = ".parquet")
    rdata_to_parquet(g, pq)
    back <- tempfile(fileext = ".rds")
    parquet_to_rdata(pq, back)
    expect_identical(readRDS(back), x$df, label = k)
  }
})

test_that("trusted = FALSE refuses code inside qs2 and qs files; promises follow R's rule", {
  p <- qs_pkgs()
  f <- qs_tmp("qs2")
  p$qs2$qs_save(list(f = function(x) x), f)
  expect_error(read_rds(f, trusted = FALSE), class = "rdarrow_error_unsafe")
  expect_true(is.function(read_rds(f)$f))
  g <- qs_tmp("qs")
  p$qs$qsave(list(f = function(x) x), g)
  expect_error(read_rds(g, trusted = FALSE), class = "rdarrow_error_unsafe")
})

test_that("damaged qs, qs2 and qdata files give errors that say so, never a crash", {
  p <- qs_pkgs()
  set.seed(4)
  x <- data.frame(a = rnorm(2e5), b = sample(letters, 2e5, TRUE))
  for (k in c("qs2", "qdata", "qs")) {
    f <- qs_tmp(k)
    switch(k, qs2 = p$qs2$qs_save(x, f), qdata = p$qs2$qd_save(x, f), qs = p$qs$qsave(x, f))
    b <- readBin(f, "raw", file.size(f))
    # truncated at several places
    for (cut in c(30L, length(b) %/% 2L, length(b) - 2L)) {
      g <- qs_tmp(k, "cut")
      writeBin(b[seq_len(cut)], g)
      expect_error(read_rds(g), class = "rdarrow_error", label = sprintf("%s cut at %d", k, cut))
    }
    # a flipped byte in the body: the frame, the hash or the data says so
    g <- qs_tmp(k, "flip")
    flipped <- b
    at <- length(b) - 50L
    flipped[at] <- xor(flipped[at], as.raw(0x10))
    writeBin(flipped, g)
    expect_error(read_rds(g), "damaged|truncated|decompress", class = "rdarrow_error", label = k)
    # random flips: an error or a value, never a crash
    for (i in 1:20) {
      h <- b
      at <- sample(seq_along(h), 3)
      h[at] <- as.raw(sample(0:255, 3))
      writeBin(h, g)
      tryCatch(read_rds(g), rdarrow_error = function(e) NULL)
    }
  }
  # the stored hash alone wrong: the file is damaged
  f <- qs_tmp("qs2")
  p$qs2$qs_save(x, f)
  b <- readBin(f, "raw", file.size(f))
  b[17] <- xor(b[17], as.raw(1))
  writeBin(b, f)
  expect_error(read_rds(f), "damaged.*XXH3-64", class = "rdarrow_error")
  # qs's checksum wrong
  f <- qs_tmp("qs")
  p$qs$qsave(x, f)
  b <- readBin(f, "raw", file.size(f))
  n <- length(b)
  b[n] <- xor(b[n], as.raw(1))
  writeBin(b, f)
  expect_error(read_rds(f), "damaged.*XXH32", class = "rdarrow_error")
})

test_that("write_rds() writes .qs2 files qs2::qs_read() reads back identical, at every level", {
  p <- qs_pkgs()
  objs <- qs_objects()
  objs$env_again <- NULL
  f <- qs_tmp("qs2")
  write_rds(objs, f)
  got <- p$qs2$qs_read(f, validate_checksum = TRUE)
  # (environments are new ones: compared by what they hold)
  for (n in setdiff(names(objs), c("env", "fun", "formula"))) expect_identical(got[[n]], objs[[n]], label = n)
  expect_identical(as.list(got$env), as.list(objs$env))
  expect_identical(deparse(got$formula), deparse(objs$formula))
  expect_identical(deparse(got$fun), deparse(objs$fun))
  expect_identical(read_rds(f)$df, objs$df)
  set.seed(5)
  big <- data.frame(i = seq_len(3e5), d = rnorm(3e5), s = sample(c("a", NA, "\u00e9"), 3e5, TRUE))
  for (level in c(1L, 3L, 19L)) {
    g <- qs_tmp("qs2")
    write_rds(big, g, compress = "zstd", compression_level = level)
    expect_identical(p$qs2$qs_read(g, validate_checksum = TRUE, nthreads = 2L), big)
  }
  expect_error(write_rds(big, g, compress = "xz"), "compressed with zstd", class = "rdarrow_error_usage")
  expect_error(write_rds(big, g, compress = "zstd", compression_level = 30), "1 to 22",
               class = "rdarrow_error_usage")
  a <- 1
  expect_error(write_rdata(a, file = qs_tmp("qs2")), "holds one object", class = "rdarrow_error_usage")
})

test_that("write_rds() writes .qdata files qs2::qd_read() reads back identical, and refuses what qdata cannot hold", {
  p <- qs_pkgs()
  objs <- qs_objects(full = FALSE)
  f <- qs_tmp("qdata")
  write_rds(objs, f)
  got <- p$qs2$qd_read(f, validate_checksum = TRUE)
  want <- objs
  # qd_save() holds strings as UTF-8
  want$chr <- enc2utf8(want$chr)
  expect_identical(got, p$qs2$qd_read({
    g <- qs_tmp("qdata"); p$qs2$qd_save(objs, g); g
  }))
  expect_identical(read_rds(f), got)
  # a compact sequence is written as its values
  h <- qs_tmp("qdata")
  write_rds(list(s = 1:10), h)
  expect_identical(p$qs2$qd_read(h), list(s = 1:10))
  # refused, naming the part, and no file left behind
  for (bad in list(list(e = new.env()), list(f = function(x) x), list(q = quote(a + b)))) {
    g <- qs_tmp("qdata")
    expect_error(write_rds(bad, g), "cannot hold", class = "rdarrow_error_usage")
    expect_false(file.exists(g))
  }
})

test_that("every sink takes stringfish's ALTREP vectors and the objects of qs2's correctness tests", {
  p <- qs_pkgs()
  sf <- p$stringfish
  set.seed(11)
  strs <- c(NA, "", "\u00e9t\u00e9", vapply(1:300, function(i) paste(sample(letters, i %% 17), collapse = ""), ""))
  sfv <- sf$convert_to_sf(strs)
  expect_true(sf$get_string_type(sfv) %in% c("stringfish vector", "stringfish vector (materialized)"))
  # as qs2's tests make them: numbers, integers, logicals, raw, strings,
  # nested lists with attributes named by random numbers
  gen <- function(n, depth = 0) {
    out <- as.list(seq_len(n))
    for (i in seq_len(n)) {
      kind <- if (depth > 2) sample(6, 1) else sample(7, 1)
      z <- switch(kind,
        rnorm(1e3), sample(1e3) - 5e2, sample(c(TRUE, FALSE, NA), 1e3, TRUE),
        as.raw(sample(256, 1e3, TRUE) - 1),
        replicate(sample(50, 1), paste(rep(letters, length.out = sample(10, 1)), collapse = "")),
        sf$convert_to_sf(c(NA, strs[sample(length(strs), 20)])),
        gen(3, depth + 1))
      if (i > 1 && sample(c(FALSE, TRUE), 1)) attr(out[[i - 1]], as.character(runif(1))) <- z else out[[i]] <- z
    }
    out
  }
  objs <- list(sf = sfv, in_list = list(a = sfv, b = 1:3), random = gen(8))
  plain <- function(x) rapply(x, function(v) if (is.character(v)) as.character(v) else v, how = "replace")
  for (ext in c("rds", "qs2", "qdata")) {
    f <- qs_tmp(ext)
    write_rds(objs, f)
    back <- switch(ext, rds = readRDS(f), qs2 = p$qs2$qs_read(f, validate_checksum = TRUE),
                   qdata = p$qs2$qd_read(f, validate_checksum = TRUE))
    # qd_save() writes them as plain character vectors; the others keep them
    expect_identical(plain(back), plain(objs), label = ext)
    expect_identical(plain(read_rds(f)), plain(objs), label = ext)
    if (ext == "qdata") {
      expect_false(identical(sf$get_string_type(back$sf), "stringfish vector"))
      expect_identical(back$sf, strs)
      g <- qs_tmp("qdata")
      p$qs2$qd_save(objs, g)
      expect_identical(back, p$qs2$qd_read(g))
    }
  }
  f <- qs_tmp("RData")
  write_rdata(objs, file = f)
  e <- new.env()
  load(f, envir = e)
  expect_identical(plain(e$objs), plain(objs))
})

test_that("a data.table written to .qdata says what it leaves out, as qd_save() does", {
  skip_if_not_installed("data.table")
  p <- qs_pkgs()
  dt <- data.table::data.table(a = 1:3, b = c("x", "y", NA))
  f <- qs_tmp("qdata")
  expect_message(write_rds(dt, f), "\\.internal\\.selfref.*left out")
  back <- p$qs2$qd_read(f)
  expect_identical(names(back), names(dt))
  expect_identical(back$a, dt$a)
  expect_false(".internal.selfref" %in% names(attributes(back)))
  expect_silent(write_rds(list(a = 1), qs_tmp("qdata")))
})

test_that("Arrow data and Parquet files become .qs2 and .qdata files", {
  p <- qs_pkgs()
  df <- data.frame(a = c(1L, NA, 3L), b = c("x", "y", NA), d = c(0.5, NA, 2), stringsAsFactors = FALSE)
  for (k in c("qs2", "qdata")) {
    f <- qs_tmp(k)
    arrow_to_rdata(df, f)
    got <- if (k == "qs2") p$qs2$qs_read(f, validate_checksum = TRUE) else p$qs2$qd_read(f, validate_checksum = TRUE)
    expect_identical(got, df, label = k)
    pq <- tempfile(fileext = ".parquet")
    rdata_to_parquet({
      r <- qs_tmp("rds"); saveRDS(df, r); r
    }, pq)
    g <- qs_tmp(k, "from_parquet")
    parquet_to_rdata(pq, g)
    got <- if (k == "qs2") p$qs2$qs_read(g) else p$qs2$qd_read(g)
    expect_identical(got, df, label = k)
  }
})

test_that("qs2, qdata and qs files over http, and to IPC, tensors and datasets", {
  p <- qs_pkgs()
  dir <- withr::local_tempdir()
  x <- data.frame(id = 1:3000, v = rnorm(3000), s = sample(letters, 3000, TRUE))
  p$qs2$qs_save(x, file.path(dir, "a.qs2"))
  p$qs2$qd_save(x, file.path(dir, "b.qdata"))
  p$qs$qsave(x, file.path(dir, "c.qs"))
  saveRDS(x, file.path(dir, "d.rds"))
  base <- local_server(dir)
  for (f in c("a.qs2", "b.qdata", "c.qs")) {
    url <- paste0(base, "/", f)
    expect_identical(read_rds(url), x, label = f)
    expect_identical(read_rds(gzcon(url(url))), x, label = f)
  }
  # a cut download is an error, never a partial object
  expect_error(read_rds(paste0(base, "/cut/a.qs2")), class = "rdarrow_error")
  # Arrow IPC
  ipc <- tempfile(fileext = ".arrow")
  rdata_to_ipc(file.path(dir, "a.qs2"), ipc)
  back <- tempfile(fileext = ".rds")
  ipc_to_rdata(ipc, back)
  expect_identical(readRDS(back), x)
  # a matrix as a tensor
  m <- matrix(as.double(1:12), 3)
  mf <- file.path(withr::local_tempdir(), "m.qs2")
  p$qs2$qs_save(m, mf)
  tf <- tempfile(fileext = ".tensor")
  rdata_to_tensor(mf, tf)
  tb <- tempfile(fileext = ".rds")
  tensor_to_rdata(tf, tb)
  expect_identical(readRDS(tb), m)
  # a dataset of a directory of mixed files
  ds <- tempfile("ds-")
  rdata_to_dataset(dir(dir, "\\.(qs2|qdata|qs|rds)$", full.names = TRUE), ds)
  skip_if_not_installed("arrow")
  got <- as.data.frame(arrow::open_dataset(ds))
  expect_identical(nrow(got), 4L * 3000L)
})
