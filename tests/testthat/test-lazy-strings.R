# Character vectors read lazily (ALTREP, src/rust/rdarrow-r/src/lazy_strings.rs):
# every use gives what readRDS()'s vector gives; only .Internal(inspect())
# tells them apart.

lazy_state <- function(x) {
  out <- utils::capture.output(.Internal(inspect(x)))[[1]]
  if (!grepl("rdarrow_strings", out, fixed = TRUE)) return("plain")
  if (grepl("lazy:", out, fixed = TRUE)) sub(".*lazy: ([0-9]+) of them made.*", "\\1 made", out) else "made"
}

# A frame of strings of every kind R holds, written by saveRDS().
string_frame <- function(n = 3000L, with_bytes = TRUE) {
  set.seed(57)
  latin1 <- "caf\xe9"; Encoding(latin1) <- "latin1"
  bytes <- "\xff\xfe"; Encoding(bytes) <- "bytes"
  kinds <- c("plain", "\u00e9t\u00e9", "\u4e2d\u6587", "", NA, latin1, "a b\tc")
  frame <- data.frame(
    id = seq_len(n),
    s = sample(kinds, n, TRUE),
    u = sprintf("id-%06d", sample.int(n)),
    stringsAsFactors = FALSE
  )
  # strings flagged as bytes (which R neither sorts nor translates)
  # and invalid UTF-8 marked UTF-8
  bad_utf8 <- "ab\xff"; Encoding(bad_utf8) <- "UTF-8"
  if (with_bytes) frame$b <- sample(c(bytes, "ok", NA, bad_utf8), n, TRUE)
  frame
}

saved <- function(x, ...) {
  f <- tempfile(fileext = ".rds")
  saveRDS(x, f, ...)
  f
}

test_that("long character vectors are read lazily, short ones whole, and both are identical() to readRDS()", {
  f <- saved(string_frame())
  y <- read_rds(f)
  expect_identical(y, readRDS(f))
  g <- read_rds(f)
  expect_equal(lazy_state(g$u), "0 made")
  expect_equal(lazy_state(g$s), "0 made")
  short <- read_rds(saved(letters))
  expect_equal(lazy_state(short), "plain")
  expect_identical(short, letters)
  # read_rdata() and several files at once too
  rd <- tempfile(fileext = ".RData")
  frame <- string_frame()
  save(frame, file = rd)
  expect_equal(lazy_state(read_rdata(rd)$frame$u), "0 made")
  both <- read_rdata(c(rd, rd))
  expect_identical(both[[1]]$frame, frame)
})

test_that("what R does with a character vector gives the same on a lazy one", {
  f <- saved(string_frame())
  base <- readRDS(f)
  fresh <- function() read_rds(f)
  expect_identical(fresh()$u[c(5, 1, 3000, NA)], base$u[c(5, 1, 3000, NA)])
  expect_identical(fresh()$s[-1], base$s[-1])
  # a long subset is lazy too, and takes R's NA and out-of-range indices
  sub <- fresh()$u[3000:1]
  expect_equal(lazy_state(sub), "0 made")
  expect_identical(sub, base$u[3000:1])
  expect_identical(fresh()$s[c(NA, 1:2000, 5000)], base$s[c(NA, 1:2000, 5000)])
  expect_identical(fresh()$b[as.numeric(3000:1)], base$b[as.numeric(3000:1)])
  expect_identical(fresh()[fresh()$id %% 2 == 0, ], base[base$id %% 2 == 0, ])
  expect_identical(fresh()$u == "id-000007", base$u == "id-000007")
  expect_identical(match(c("id-000100", "nope", NA), fresh()$u), match(c("id-000100", "nope", NA), base$u))
  expect_identical(fresh()$s %in% c("plain", NA), base$s %in% c("plain", NA))
  expect_identical(table(fresh()$s, useNA = "ifany"), table(base$s, useNA = "ifany"))
  expect_identical(unique(fresh()$s), unique(base$s))
  expect_identical(nchar(fresh()$u), nchar(base$u))
  expect_identical(nchar(fresh()$s, type = "bytes"), nchar(base$s, type = "bytes"))
  expect_identical(paste(fresh()$u, "x"), paste(base$u, "x"))
  expect_identical(sort(fresh()$u), sort(base$u))
  expect_identical(order(fresh()$u), order(base$u))
  expect_identical(factor(fresh()$s), factor(base$s))
  expect_identical(Encoding(fresh()$s), Encoding(base$s))
  expect_identical(Encoding(fresh()$b), Encoding(base$b))
  expect_identical(fresh()$b == "ok", base$b == "ok")
  expect_identical(nchar(fresh()$b, type = "bytes"), nchar(base$b, type = "bytes"))
  expect_identical(enc2utf8(fresh()$s), enc2utf8(base$s))
  expect_identical(is.na(fresh()$s), is.na(base$s))
  expect_identical(anyNA(fresh()$u), FALSE)
  expect_identical(anyNA(fresh()$s), TRUE)
  expect_identical(rev(fresh()$u), rev(base$u))
  expect_identical(toupper(fresh()$u), toupper(base$u))
  expect_identical(split(fresh()$id, fresh()$s), split(base$id, base$s))
  expect_identical(as.factor(fresh()$u), as.factor(base$u))
  expect_identical(c(fresh()$u, "z"), c(base$u, "z"))
  expect_identical(substr(fresh()$u, 2, 4), substr(base$u, 2, 4))
  expect_identical(grepl("00", fresh()$u), grepl("00", base$u))
  # changing an element changes a copy: the file's vector stays as it was
  y <- fresh()
  z <- y$u
  z[2] <- "changed"
  expect_identical(z[1:2], c(base$u[1], "changed"))
  expect_identical(y$u, base$u)
  y$s[3] <- NA
  expect_true(is.na(y$s[3]))
  expect_identical(y$s[-3], base$s[-3])
})

test_that("elements are made one at a time, once, and the buffers go when all are made", {
  f <- saved(string_frame())
  y <- read_rds(f)
  u <- y$u
  expect_equal(lazy_state(u), "0 made")
  expect_identical(u[[10]], readRDS(f)$u[[10]])
  expect_equal(lazy_state(u), "1 made")
  invisible(u[[10]])
  expect_equal(lazy_state(u), "1 made")
  invisible(nchar(u))
  expect_equal(lazy_state(u), "made")
})

test_that("data.table and dplyr join and group lazy vectors as R's own", {
  skip_if_not_installed("data.table")
  f <- saved(string_frame())
  base <- readRDS(f)
  lookup <- data.frame(s = c("plain", "\u00e9t\u00e9", ""), w = 1:3, stringsAsFactors = FALSE)
  # data.table's `[` in an environment it knows is aware of it (the
  # package's namespace, where tests run, does not import data.table)
  with_dt <- function(frame) {
    env <- new.env(parent = globalenv())
    env$dt <- data.table::as.data.table(frame)
    env$lk <- data.table::as.data.table(lookup)
    evalq(list(
      by = dt[, .N, by = s][order(s)],
      merged = merge(dt, lk, by = "s"),
      joined = lk[dt, on = "s", nomatch = NULL],
      keyed = data.table::setkey(data.table::copy(dt), u)
    ), env)
  }
  expect_identical(with_dt(read_rds(f)), with_dt(base))
  skip_if_not_installed("dplyr")
  library_dplyr <- function(x) {
    x |> dplyr::group_by(s) |> dplyr::summarise(n = dplyr::n(), first = min(u)) |>
      dplyr::left_join(lookup, by = "s") |> dplyr::arrange(s)
  }
  expect_identical(library_dplyr(read_rds(f)), library_dplyr(base))
  expect_identical(dplyr::inner_join(read_rds(f), lookup, by = "s"), dplyr::inner_join(base, lookup, by = "s"))
})

test_that("serialize(), saveRDS(), save() and write_rds() of lazy vectors write R's bytes", {
  f <- saved(string_frame())
  base <- readRDS(f)
  expect_identical(serialize(read_rds(f), NULL), serialize(base, NULL))
  expect_identical(serialize(read_rds(f), NULL, version = 2), serialize(base, NULL, version = 2))
  expect_identical(serialize(read_rds(f), NULL, xdr = FALSE), serialize(base, NULL, xdr = FALSE))
  # nothing of rdarrow's class reaches the stream: any R reads it
  expect_false(grepl("rdarrow", rawToChar(serialize(read_rds(f), NULL, ascii = TRUE)), fixed = TRUE))
  y <- read_rds(f)
  g <- tempfile(fileext = ".rds")
  saveRDS(y, g)
  expect_identical(readRDS(g), base)
  # write_rds() takes the bytes from the buffers: the vectors stay lazy
  y <- read_rds(f)
  h <- tempfile(fileext = ".rds")
  h0 <- tempfile(fileext = ".rds")
  write_rds(y, h, compress = "none")
  write_rds(base, h0, compress = "none")
  expect_equal(lazy_state(y$u), "0 made")
  expect_equal(lazy_state(y$s), "0 made")
  expect_identical(readBin(h, "raw", file.size(h)), readBin(h0, "raw", file.size(h0)))
  expect_identical(readRDS(h), base)
  out <- tempfile(fileext = ".RData")
  write_rdata(y, file = out)
  e <- new.env()
  load(out, envir = e)
  expect_identical(e$y, base)
  # a stream whose native encoding is latin-1 (the header rewritten): its
  # unflagged strings are transcoded when made, so the writer takes those
  # from R's CHARSXPs; lazy or not, the same bytes come out
  x <- c(rep("caf\xe9", 1500), rep("abc", 1500))
  raw <- serialize(x, NULL, version = 3)
  expect_identical(rawToChar(raw[19:23]), "UTF-8")
  native <- tempfile(fileext = ".rds")
  writeBin(c(raw[1:14], as.raw(c(0, 0, 0, 6)), charToRaw("latin1"), raw[24:length(raw)]), native)
  lazy <- read_rds(native)
  eager <- withr::with_options(list(rdarrow.lazy_strings = FALSE), read_rds(native))
  expect_identical(lazy, eager)
  expect_identical(lazy[[1]], "caf\u00e9")
  expect_identical(serialize(read_rds(native), NULL), serialize(eager, NULL))
  w1 <- tempfile(fileext = ".rds")
  w2 <- tempfile(fileext = ".rds")
  write_rds(read_rds(native), w1, compress = "none")
  write_rds(eager, w2, compress = "none")
  expect_identical(readBin(w1, "raw", file.size(w1)), readBin(w2, "raw", file.size(w2)))
})

test_that("lazy vectors survive gc(), forked workers and a copy, and their memory is freed with them", {
  f <- saved(string_frame())
  base <- readRDS(f)
  invisible(gc())
  before <- rdarrow:::lazy_strings_live_impl()
  y <- read_rds(f)
  expect_equal(rdarrow:::lazy_strings_live_impl(), before + 3L) # s, u, b
  invisible(gc(full = TRUE))
  expect_identical(y, base)
  y2 <- read_rds(f)
  copy <- y2$u
  copy2 <- copy
  copy2[1] <- "x"
  if (.Platform$OS.type == "unix") {
    got <- parallel::mclapply(1:2, function(k) y2$u[seq(k, 3000, 2)], mc.cores = 2)
    expect_identical(unlist(got), c(base$u[seq(1, 3000, 2)], base$u[seq(2, 3000, 2)]))
    back <- parallel::mclapply(1:2, function(k) y2, mc.cores = 2)
    expect_identical(back[[2]], base)
  }
  expect_identical(copy, base$u)
  rm(y, y2, copy, copy2)
  invisible(gc(full = TRUE))
  expect_equal(rdarrow:::lazy_strings_live_impl(), before)
})

test_that("options(rdarrow.lazy_strings = FALSE) reads every vector whole; a number sets the threshold", {
  f <- saved(string_frame())
  withr::with_options(list(rdarrow.lazy_strings = FALSE), {
    y <- read_rds(f)
    expect_equal(lazy_state(y$u), "plain")
    expect_identical(y, readRDS(f))
  })
  withr::with_options(list(rdarrow.lazy_strings = 10), {
    expect_equal(lazy_state(read_rds(saved(letters))), "0 made")
    expect_identical(read_rds(saved(letters)), letters)
  })
})

test_that("factor levels, names and row names are lazy too, and behave as R's", {
  set.seed(1)
  lv <- sprintf("level-%05d", 1:5000)
  x <- list(
    f = factor(sample(lv, 20000, TRUE), levels = lv),
    named = stats::setNames(seq_len(4000), sprintf("n%05d", 1:4000)),
    frame = data.frame(v = 1:3000, row.names = sprintf("r%05d", 1:3000))
  )
  f <- saved(x)
  y <- read_rds(f)
  expect_identical(y, x)
  y <- read_rds(f)
  expect_equal(lazy_state(levels(y$f)), "0 made")
  expect_identical(as.character(y$f), as.character(x$f))
  expect_identical(table(y$f), table(x$f))
  expect_identical(y$named[["n01234"]], 1234L)
  expect_identical(y$frame["r02999", "v"], 2999L)
  expect_identical(rownames(y$frame), rownames(x$frame))
})

test_that("as.data.frame() of rdarrow's Arrow streams gives lazy strings", {
  frame <- string_frame(with_bytes = FALSE)
  frame$s[!is.na(frame$s) & Encoding(frame$s) == "latin1"] <- "latin"
  f <- saved(frame)
  df <- as.data.frame(rdata_to_arrow(f))
  expect_equal(lazy_state(df$u), "0 made")
  expect_identical(df$u, readRDS(f)$u)
  expect_identical(df$s, readRDS(f)$s)
})

test_that("a damaged string region is refused when the file is read, not at first use", {
  x <- sprintf("id-%06d", 1:3000)
  raw <- serialize(x, NULL, version = 3)
  # the 2000th string's length (each: flags, length, 9 bytes)
  header <- 14L + 4L + 5L + 4L + 4L + 4L # magic-less header, native encoding, type, length
  header <- length(raw) - 3000L * 17L
  at <- header + 1999L * 17L + 4L
  bad <- raw
  bad[at + 1:4] <- as.raw(c(0x7f, 0xff, 0xff, 0xf0))
  f <- tempfile(fileext = ".rds")
  writeBin(bad, f)
  expect_error(read_rds(f), class = "rdarrow_error")
  bad <- raw[seq_len(at + 2)]
  writeBin(bad, f)
  expect_error(read_rds(f), class = "rdarrow_error")
})
