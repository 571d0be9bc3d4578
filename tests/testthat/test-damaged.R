# Damaged files never read as different data: files made by saveRDS(),
# save(), rdarrow's own writer (on every core) and qs/qs2, with single bits
# flipped at many places and cut short, read by every R route; each read
# fails with an rdarrow_error or gives back exactly the original. And
# salvage = TRUE recovers what is intact, saying what was lost.

damaged_variants <- function(b, flips = 30L) {
  n <- length(b)
  at <- unique(as.integer(round(seq(3, n, length.out = flips))))
  out <- list()
  for (i in seq_along(at)) {
    x <- b
    x[at[i]] <- xor(x[at[i]], as.raw(bitwShiftL(1L, (i - 1L) %% 8L)))
    out[[sprintf("bit %d of byte %d flipped", (i - 1L) %% 8L, at[i])]] <- x
  }
  for (back in 1:8) {
    x <- b
    x[n - back + 1L] <- xor(x[n - back + 1L], as.raw(0x10))
    out[[sprintf("byte %d of the trailer flipped", n - back + 1L)]] <- x
  }
  for (cut in c(1L, 4L, 8L, 100L, n %/% 2L)) {
    if (cut < n) out[[sprintf("cut short by %d bytes", cut)]] <- b[seq_len(n - cut)]
  }
  out
}

# Read every damaged variant of the file `f` by `readers` (functions of a
# path): each an rdarrow_error or `want` (identical); a file cut short
# always an error. The tally of how reads ended.
expect_never_different <- function(f, want, readers, label, flips = 30L) {
  b <- readBin(f, "raw", file.size(f))
  tally <- c(error = 0L, identical = 0L)
  ext <- tools::file_ext(f)
  for (what in names(variants <- damaged_variants(b, flips))) {
    bad <- tempfile(fileext = paste0(".", ext))
    writeBin(variants[[what]], bad)
    for (r in names(readers)) {
      got <- tryCatch(suppressWarnings(readers[[r]](bad)), rdarrow_error = function(e) e)
      if (inherits(got, "rdarrow_error")) {
        tally[["error"]] <- tally[["error"]] + 1L
      } else {
        expect_false(startsWith(what, "cut"), label = sprintf("%s, %s, %s: read without an error", label, what, r))
        expect_identical(got, want, label = sprintf("%s, %s, %s", label, what, r))
        tally[["identical"]] <- tally[["identical"]] + 1L
      }
    }
    unlink(bad)
  }
  tally
}

damaged_frame <- function(n = 3000L) {
  data.frame(
    id = seq_len(n),
    x = sin(seq_len(n) / 7),
    day = as.Date("2020-01-01") + seq_len(n) %% 1000L,
    g = factor(sample(c("a", "b", "c"), n, TRUE)),
    s = sprintf("item %05d", seq_len(n)),
    stringsAsFactors = FALSE
  )
}

test_that("damaged saveRDS() files never read as different data, by every R route", {
  set.seed(70)
  df <- damaged_frame()
  readers <- list(
    read_rds = function(p) read_rds(p),
    read_rdata = function(p) read_rdata(p)[[1]],
    to_arrow = function(p) as.data.frame(rdata_to_arrow(p)),
    to_parquet = function(p) {
      out <- tempfile(fileext = ".parquet")
      on.exit(unlink(out))
      rdata_to_parquet(p, out)
      parquet_to_rdata_df(out)
    }
  )
  for (comp in c("gzip", "bzip2", "xz")) {
    f <- local_tempfile(".rds")
    saveRDS(df, f, compress = comp)
    tally <- expect_never_different(f, df, readers, paste("saveRDS", comp))
    expect_gt(tally[["error"]], 0)
  }
})

# A Parquet file read back as the data frame it was written from.
parquet_to_rdata_df <- function(path) {
  out <- tempfile(fileext = ".rds")
  on.exit(unlink(out))
  parquet_to_rdata(path, out)
  readRDS(out)
}

test_that("damaged save() files and rdarrow's own files never read as different data", {
  set.seed(71)
  df <- damaged_frame()
  v <- sin(seq_len(2000))
  f <- local_tempfile(".RData")
  save(df, v, file = f)
  want <- list(df = df, v = v)
  expect_never_different(f, want, list(read_rdata = function(p) read_rdata(p)), "save() gzip")
  # rdarrow's own gzip, bzip2 and xz, written on every core: two blocks
  # compressed apart (a gzip file with an index, inflated on every core)
  big <- data.frame(a = sin(seq_len(1.2e6)), b = seq_len(1.2e6))
  for (comp in c("gzip", "bzip2", "xz")) {
    g <- local_tempfile(".rds")
    write_rds(big, g, compress = comp, compression_level = 1)
    tally <- expect_never_different(g, big, list(read_rds = function(p) read_rds(p)),
                                    paste("write_rds", comp), flips = 12L)
    expect_gt(tally[["error"]], 0)
  }
})

test_that("damaged qs, qs2 and qdata files never read as different data", {
  pk <- qs_pkgs()
  set.seed(72)
  df <- damaged_frame(2000L)
  files <- c(qs = local_tempfile(".qs"), qs2 = local_tempfile(".qs2"), qdata = local_tempfile(".qdata"))
  pk$qs$qsave(df, files[["qs"]])
  pk$qs2$qs_save(df, files[["qs2"]])
  pk$qs2$qd_save(df, files[["qdata"]])
  for (k in names(files)) {
    want <- switch(k, qs = pk$qs$qread(files[[k]]), qs2 = pk$qs2$qs_read(files[[k]]),
                   qdata = pk$qs2$qd_read(files[[k]]))
    tally <- expect_never_different(files[[k]], want, list(read_rds = function(p) read_rds(p)), k)
    expect_gt(tally[["error"]], 0)
  }
})

test_that("a file cut short is a truncated error that points to salvage, and converts to nothing", {
  df <- damaged_frame()
  f <- local_tempfile(".rds")
  saveRDS(df, f)
  b <- readBin(f, "raw", file.size(f))
  bad <- local_tempfile(".rds")
  writeBin(b[seq_len(length(b) - 4L)], bad)
  err <- tryCatch(read_rds(bad), error = function(e) e)
  expect_s3_class(err, "rdarrow_error_truncated")
  expect_match(conditionMessage(err), "salvage = TRUE", fixed = TRUE)
  # the trailer's length is missing: how far the data reached is said
  expect_false(is.na(err$offset))
  for (conv in list(
    parquet = function(out) rdata_to_parquet(bad, out),
    ipc = function(out) rdata_to_ipc(bad, out)
  )) {
    out <- tempfile(fileext = ".out")
    expect_error(conv(out), class = "rdarrow_error")
    expect_false(file.exists(out))
    expect_length(list.files(dirname(out), pattern = basename(out)), 0L)
  }
  # a CRC flipped: corrupt, and nothing written either
  crc <- b
  crc[length(b) - 5L] <- xor(crc[length(b) - 5L], as.raw(1))
  writeBin(crc, bad)
  expect_error(read_rds(bad), class = "rdarrow_error_corrupt")
  out <- tempfile(fileext = ".parquet")
  expect_error(rdata_to_parquet(bad, out), class = "rdarrow_error")
  expect_false(file.exists(out))
  expect_error(write_rds(read_rds(bad), tempfile(fileext = ".rds")), class = "rdarrow_error")
})

test_that("salvage = TRUE gives back the objects before the damage, and a warning names the one it is in", {
  a <- 1:10
  b <- damaged_frame(500L)
  cc <- list(p = letters, q = sin(1:3000), r = "last")
  d <- "after"
  intact <- local_tempfile(".RData")
  save(a, b, cc, d, file = intact, compress = FALSE)
  raw <- readBin(intact, "raw", file.size(intact))
  want <- list(a = a, b = b, cc = cc, d = d)
  listing <- rdata_objects(intact)
  expect_identical(listing$name, names(want))
  # where each object starts in the file: the magic (5 bytes), the
  # stream's header (23), then per object its cell (4 bytes) and name (a
  # symbol: 12 bytes and the name's), then the object
  tag <- 4 + 12 + nchar(listing$name)
  start <- 5 + 23 + cumsum(c(0, head(tag + listing$bytes, -1))) + tag
  for (k in 2:4) {
    # cut inside the k-th object
    cut <- local_tempfile(".RData")
    writeBin(raw[seq_len(floor(start[k] + listing$bytes[k] * 0.6))], cut)
    expect_error(read_rdata(cut), class = "rdarrow_error_truncated")
    got <- NULL
    expect_warning(got <- read_rdata(cut, salvage = TRUE), class = "rdarrow_warning")
    w <- tryCatch(read_rdata(cut, salvage = TRUE), warning = function(w) conditionMessage(w))
    expect_match(w, sprintf("in object '%s'", names(want)[k]), fixed = TRUE)
    expect_identical(got[seq_len(k - 1)], want[seq_len(k - 1)])
    # the k-th: nothing, or (a list) its whole elements, without names
    if (k == 4) expect_length(got, 3L)
    if (length(got) >= k) {
      expect_identical(names(got)[k], names(want)[k])
      part <- got[[k]]
      expect_true(is.list(part) && is.null(attributes(part)))
      expect_identical(part, unname(as.list(want[[k]]))[seq_along(part)])
    }
    # the listing salvages too
    l <- NULL
    expect_warning(l <- rdata_objects(cut, salvage = TRUE), class = "rdarrow_warning")
    expect_identical(l$name[seq_len(k - 1)], names(want)[seq_len(k - 1)])
  }
})

test_that("salvage keeps a list's and a data frame's whole leading elements", {
  df <- damaged_frame(2000L)
  want <- unname(as.list(df))
  for (comp in c("none", "gzip")) {
    f <- local_tempfile(".rds")
    saveRDS(df, f, compress = comp != "none")
    raw <- readBin(f, "raw", file.size(f))
    kept <- integer()
    for (frac in c(0.2, 0.4, 0.6, 0.8, 0.95)) {
      bad <- local_tempfile(".rds")
      writeBin(raw[seq_len(floor(length(raw) * frac))], bad)
      expect_error(read_rds(bad), "salvage = TRUE", class = "rdarrow_error_truncated")
      got <- NULL
      w <- NULL
      got <- withCallingHandlers(read_rds(bad, salvage = TRUE), warning = function(c) {
        w <<- conditionMessage(c)
        invokeRestart("muffleWarning")
      })
      label <- sprintf("%s cut at %.2f", comp, frac)
      expect_true(is.list(got) && is.null(attributes(got)) && length(got) < 5, label = label)
      expect_identical(got, want[seq_along(got)], label = label)
      said <- if (length(got)) sprintf("the first %d of the 5 elements of the object whole", length(got)) else "nothing of the object"
      expect_match(w, said, fixed = TRUE, label = label)
      kept <- c(kept, length(got))
    }
    # the cuts kept different numbers of whole columns, some of them
    expect_gt(max(kept), 0)
    expect_gt(length(unique(kept)), 1)
  }
})

test_that("a checksum that fails where the data still parses: salvage gives it with a warning", {
  df <- damaged_frame(500L)
  f <- local_tempfile(".rds")
  saveRDS(df, f)
  b <- readBin(f, "raw", file.size(f))
  b[length(b) - 6L] <- xor(b[length(b) - 6L], as.raw(4))
  bad <- local_tempfile(".rds")
  writeBin(b, bad)
  expect_error(read_rds(bad), "salvage = TRUE", class = "rdarrow_error_corrupt")
  got <- NULL
  expect_warning(got <- read_rds(bad, salvage = TRUE), "values may be wrong", class = "rdarrow_warning")
  expect_identical(got, df)
  expect_error(read_rds(bad, salvage = NA), class = "rdarrow_error_usage")
})

test_that("the command line refuses damaged files and salvages with --salvage", {
  df <- damaged_frame(500L)
  a <- 1:3
  f <- local_tempfile(".RData")
  save(a, df, file = f, compress = FALSE)
  raw <- readBin(f, "raw", file.size(f))
  bad <- local_tempfile(".RData")
  writeBin(raw[seq_len(length(raw) - 2000L)], bad)
  r <- run_cli(c("ls", bad))
  expect_identical(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "--salvage", fixed = TRUE)
  out <- local_tempfile(".RData")
  r <- run_cli(c("to-rdata", bad, "-o", out))
  expect_identical(r$status, 1L)
  expect_false(file.exists(out))
  r <- run_cli(c("--salvage", "to-rdata", bad, "-o", out))
  expect_identical(r$status, 0L)
  expect_match(paste(r$stderr, collapse = "\n"), "warning: .*object 'df'")
  e <- new.env()
  load(out, envir = e)
  expect_identical(e$a, a)
  r <- run_cli(c("ls", "--salvage", bad))
  expect_identical(r$status, 0L)
  expect_match(paste(r$stdout, collapse = "\n"), "\\ba\\b")
})

test_that("a damaged lazy-load entry is an error with salvage too, never part of an object without a word", {
  e <- new.env()
  e$x <- list(p = c(1.5, 2.5), q = "s", r = 3)
  e$y <- 1:3
  base <- file.path(withr::local_tempdir(), "db")
  tools:::makeLazyLoadDB(e, base, compress = FALSE)
  expect_identical(read_rdata(base), list(x = e$x, y = e$y))
  b <- readBin(paste0(base, ".rdb"), "raw", file.size(paste0(base, ".rdb")))
  # x's second element (a character vector of one string) given an unknown type
  pat <- as.raw(c(0, 0, 0, 0x10, 0, 0, 0, 1))
  at <- which(vapply(seq_len(length(b) - 7L), function(k) all(b[k:(k + 7L)] == pat), TRUE))
  expect_length(at, 1L)
  b[at + 3L] <- as.raw(0x63)
  writeBin(b, paste0(base, ".rdb"))
  expect_error(read_rdata(base), class = "rdarrow_error_corrupt")
  expect_error(read_rdata(base, salvage = TRUE), "in object 'x'", class = "rdarrow_error_corrupt")
})

# `f`'s read by `read` with salvage: its value and its one warning.
salvaged <- function(read, f, ...) {
  w <- character()
  got <- withCallingHandlers(read(f, ..., salvage = TRUE), warning = function(c) {
    w <<- c(w, conditionMessage(c))
    invokeRestart("muffleWarning")
  })
  list(value = got, warning = paste(w, collapse = "\n"))
}

# The bytes of `f` without its last `n`, in a new file.
cut_by <- function(f, n, envir = parent.frame()) {
  raw <- readBin(f, "raw", file.size(f))
  bad <- local_tempfile(paste0(".", tools::file_ext(f)), envir = envir)
  writeBin(raw[seq_len(length(raw) - n)], bad)
  bad
}

# A Parquet file's table read back by R, as R objects.
parquet_back <- function(pq) {
  out <- local_tempfile(".rds", envir = parent.frame())
  parquet_to_rdata(pq, out)
  readRDS(out)
}

test_that("damage in a data frame's trailing attributes keeps its whole columns, by name where they were read", {
  set.seed(3)
  df <- data.frame(a = 1:1e5, b = rnorm(1e5))
  want <- as.list(df)
  raw_f <- local_tempfile(".rds")
  saveRDS(df, raw_f, compress = FALSE)
  gz_f <- local_tempfile(".rds")
  saveRDS(df, gz_f)
  # the names are read, the class and row names (after them) are not
  for (bad in list(cut_by(raw_f, 4), cut_by(raw_f, 30), cut_by(gz_f, 12), cut_by(gz_f, 40))) {
    expect_error(read_rds(bad), "salvage = TRUE", class = "rdarrow_error_truncated")
    got <- salvaged(read_rds, bad)
    expect_identical(got$value, want)
    expect_match(got$warning, "all 2 elements of the object whole, with their names", fixed = TRUE)
    expect_match(got$warning, "class, row names and other attributes", fixed = TRUE)
  }
  # a gzip file cut by up to 80 bytes, or a byte flipped 20 bytes from its
  # end: an error or the leading columns, never other values
  b <- readBin(gz_f, "raw", file.size(gz_f))
  flip <- b
  flip[length(b) - 20L] <- xor(flip[length(b) - 20L], as.raw(0x10))
  flipped <- local_tempfile(".rds")
  writeBin(flip, flipped)
  for (bad in c(lapply(c(12, 24, 48, 80), function(n) cut_by(gz_f, n)), flipped)) {
    got <- tryCatch(salvaged(read_rds, bad)$value, rdarrow_error = function(e) e)
    if (inherits(got, "rdarrow_error")) next
    expect_identical(unname(got), unname(want)[seq_along(got)])
    expect_true(is.null(names(got)) || identical(names(got), names(want)[seq_along(got)]))
  }
  got <- salvaged(read_rds, flipped)
  expect_identical(unname(got$value), unname(want))
  expect_match(got$warning, "all 2 elements of the object whole", fixed = TRUE)
})

test_that("an .RData warning counts what it kept of each object", {
  df4 <- damaged_frame(3000L)[1:4]
  a <- 1:3
  f <- local_tempfile(".RData")
  save(a, df4, file = f, compress = FALSE)
  # cut inside df4's row names, after its columns and names
  got <- salvaged(read_rdata, cut_by(f, 20))
  expect_identical(got$value, list(a = a, df4 = as.list(df4)))
  expect_match(got$warning, "1 object whole ('a'); all 4 elements of object 'df4' whole, with their names", fixed = TRUE)
  expect_no_match(got$warning, "nothing of object")
  # a gzip file cut in its last bytes: every object read whole
  g <- local_tempfile(".RData")
  save(a, df4, file = g)
  got <- salvaged(read_rdata, cut_by(g, 12))
  expect_identical(got$value, list(a = a, df4 = df4))
  expect_match(got$warning, "kept: 2 objects whole ('a', 'df4'); the rest is lost", fixed = TRUE)
})

test_that("salvage never changes which object a conversion takes, and says what it returned", {
  counts <- matrix(1:20, 4)
  meta <- data.frame(id = 1:10, g = letters[1:10])
  design <- data.frame(x = sin(1:50), y = 1:50)
  df4 <- damaged_frame(3000L)[1:4]
  f <- local_tempfile(".RData")
  save(counts, meta, design, df4, file = f)
  cut <- cut_by(f, file.size(f) %/% 2)
  pq <- local_tempfile(".parquet")
  # the intact file asks to choose, and so does the damaged one
  expect_error(rdata_to_parquet(f, pq), "choose one", class = "rdarrow_error_usage")
  expect_error(rdata_to_parquet(cut, pq), "salvage = TRUE", class = "rdarrow_error_truncated")
  expect_error(rdata_to_parquet(cut, pq, salvage = TRUE), "choose one", class = "rdarrow_error_usage")
  expect_false(file.exists(pq))
  # the one named, whole, and said so
  got <- salvaged(rdata_to_parquet, cut, pq, object = "meta")
  expect_match(got$warning, "returned: object 'meta', read whole", fixed = TRUE)
  expect_identical(parquet_back(pq), meta)
  # the damaged one: its whole columns, by position, or an error naming it
  got <- salvaged(rdata_to_parquet, cut, pq, object = "df4")
  expect_match(got$warning, "returned: what was kept of object 'df4'", fixed = TRUE)
  back <- parquet_back(pq)
  expect_gt(length(back), 0)
  expect_identical(names(back), paste0("V", seq_along(back)))
  expect_identical(unname(as.list(back)), unname(as.list(df4))[seq_along(back)])
  # read as one object, a damaged save() file is an error, as the intact one
  expect_error(read_rds(f), "not one", class = "rdarrow_error_usage")
  ab <- local_tempfile(".RData")
  save(meta, file = ab, compress = FALSE)
  expect_identical(read_rds(ab), meta)
  expect_error(suppressWarnings(read_rds(cut_by(ab, 4), salvage = TRUE)),
               "how many objects it holds is not known ('meta' read before the damage)",
               fixed = TRUE, class = "rdarrow_error_usage")
  # an object after the damage
  expect_error(rdata_to_parquet(cut_by(f, file.size(f) - 400), pq, object = "df4", salvage = TRUE),
               "df4", class = "rdarrow_error_usage")
  # a file whose only object is cut: its table is the data frame's whole columns
  one <- local_tempfile(".rds")
  saveRDS(df4, one, compress = FALSE)
  for (convert in list(rdata_to_parquet, function(f, sink, ...) rdata_to_ipc(f, local_tempfile(".arrow"), ...))) {
    got <- salvaged(convert, cut_by(one, 30), pq)
    expect_match(got$warning, "returned: what was kept of the object", fixed = TRUE)
  }
  expect_identical(as.list(parquet_back(pq)), as.list(df4))
  # every converter takes salvage
  s <- salvaged(rdata_to_arrow, cut_by(one, 30))
  expect_match(s$warning, "all 4 elements of the object whole", fixed = TRUE)
  expect_error(rdata_to_parquet(one, pq, salvage = NA), class = "rdarrow_error_usage")
  # (tensors and datasets: test-damaged-writers.R)
})

test_that("the command line's --salvage to-parquet takes the object an intact file gives, as a table", {
  df4 <- damaged_frame(3000L)[1:4]
  meta <- data.frame(id = 1:10, g = letters[1:10])
  f <- local_tempfile(".RData")
  save(meta, df4, file = f)
  cut <- cut_by(f, file.size(f) %/% 3)
  pq <- local_tempfile(".parquet")
  r <- run_cli(c("--salvage", "to-parquet", cut, "-o", pq))
  expect_identical(r$status, 1L)
  expect_match(paste(r$stderr, collapse = "\n"), "choose one by name: 'meta', 'df4'", fixed = TRUE)
  expect_false(file.exists(pq))
  r <- run_cli(c("--salvage", "to-parquet", cut, "--object", "meta", "-o", pq))
  expect_identical(r$status, 0L)
  expect_match(paste(r$stderr, collapse = "\n"), "returned: object 'meta', read whole", fixed = TRUE)
  expect_identical(parquet_back(pq), meta)
  one <- local_tempfile(".rds")
  saveRDS(df4, one)
  r <- run_cli(c("--salvage", "to-parquet", cut_by(one, 12), "-o", pq))
  expect_identical(r$status, 0L)
  expect_identical(as.list(parquet_back(pq)), as.list(df4))
})

test_that("a .qs2 file cut short salvages the columns in its blocks before the damage", {
  pk <- qs_pkgs()
  set.seed(5)
  df <- data.frame(a = 1:1e6, b = rnorm(1e6), s = sample(letters, 1e6, TRUE))
  f <- local_tempfile(".qs2")
  pk$qs2$qs_save(df, f)
  intact <- pk$qs2$qs_read(f)
  bad <- cut_by(f, file.size(f) %/% 2)
  expect_error(read_rds(bad), "salvage = TRUE", class = "rdarrow_error_truncated")
  got <- salvaged(read_rds, bad)
  expect_gt(length(got$value), 0)
  expect_identical(got$value, unname(as.list(intact))[seq_along(got$value)])
  expect_match(got$warning, "elements of the object whole", fixed = TRUE)
  pq <- local_tempfile(".parquet")
  expect_error(rdata_to_parquet(bad, pq), "salvage = TRUE", class = "rdarrow_error_truncated")
  got <- salvaged(rdata_to_parquet, bad, pq)
  expect_match(got$warning, "returned: what was kept of the object", fixed = TRUE)
  expect_identical(unname(as.list(parquet_back(pq))), unname(as.list(intact))[seq_along(parquet_back(pq))])
})

test_that("a .qdata file cut short salvages the vectors whose data lies before the damage", {
  pk <- qs_pkgs()
  set.seed(6)
  # qdata lies out its data by type after the tree: doubles in order
  x <- data.frame(p = rnorm(2e5), q = rnorm(2e5), r = rnorm(2e5), s = rnorm(2e5))
  f <- local_tempfile(".qdata")
  pk$qs2$qd_save(x, f)
  intact <- pk$qs2$qd_read(f)
  expect_identical(intact, x)
  bad <- cut_by(f, file.size(f) %/% 2)
  expect_error(read_rds(bad), "salvage = TRUE", class = "rdarrow_error_truncated")
  got <- salvaged(read_rds, bad)
  expect_gt(length(got$value), 0)
  expect_lt(length(got$value), 4)
  expect_identical(got$value, unname(as.list(x))[seq_along(got$value)])
  expect_match(got$warning, "elements of the object whole", fixed = TRUE)
  pq <- local_tempfile(".parquet")
  got <- salvaged(rdata_to_parquet, bad, pq)
  back <- parquet_back(pq)
  expect_identical(unname(as.list(back)), unname(as.list(x))[seq_along(back)])
})
