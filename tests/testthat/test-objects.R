# rdata_objects(): one row per object with what R itself says about it.

# Minutes of checks over many objects: they run where NOT_CRAN is set
# (tools/test.sh), not in CRAN's time-limited check.
skip_on_cran()

# The length of the serialization header (everything before the first
# item) that serialize() writes for `ascii`/`version`.
header_length <- function(ascii, version, xdr = TRUE) {
  # serialize(NULL) is the header followed by one 4-byte item (NILVALUE_SXP,
  # "254\n" in ASCII).
  length(serialize(NULL, NULL, ascii = ascii, xdr = xdr, version = version)) - 4L
}

mixed_objects <- function() {
  setClass("RdarrowListed", representation(x = "numeric"), where = environment())
  setClass("RdarrowListedNum", contains = "numeric", where = environment())
  e <- new.env(parent = emptyenv())
  e$a <- 1
  e$b <- "two"
  e$c <- NULL
  fml <- y ~ x + z
  environment(fml) <- globalenv()
  df_chr <- utils::head(mtcars, 5)
  list(
    lgl = c(TRUE, NA), int = 1:3 + 0L, dbl = c(1.5, NA), cpl = 1i, chr = c("a", NA, "\u00e9"),
    raw = as.raw(1:4), nul = NULL, lst = list(1, "a", list()),
    fct = factor(c("a", "b", "a")), ord = factor("x", ordered = TRUE),
    date = as.Date("2020-01-01") + 0:4,
    ct = as.POSIXct("2020-01-01", tz = "UTC"),
    df = data.frame(a = 1:4, b = letters[1:4]),
    df_chr = df_chr, df0 = mtcars[0, 1:3],
    df_nocol = data.frame(row.names = c("a", "b", "c")),
    df_empty = data.frame(),
    mat = matrix(1:6, 2), mat_chr = matrix(letters[1:6], 3),
    mat_cls = structure(matrix(1:4, 2), class = "myclass"),
    arr = array(1:24, 2:4), arr1 = array(1:3),
    fun = make_closure("function(x) x"), bi = sum, sp = `if`,
    fml = fml, call = quote(f(x)), assign = quote(x <- 1), if_call = quote(if (a) b),
    brace = quote({}), sym = quote(s), expr = expression(1, a),
    pl = pairlist(a = 1, b = 2, 3),
    env = e, glob = globalenv(), xp = new("externalptr"),
    s4 = new("RdarrowListed", x = 1:3 + 0), s4num = new("RdarrowListedNum", c(1, 2)),
    seq = seq_len(1e6), deferred = as.character(1:7), wrapped = sort(c(2, 1, 3)),
    classed_int = structure(1:2, class = c("a", "b", "c"))
  )
}

test_that("rdata_objects() of a mixed .RData says what R says, in every format", {
  objs <- mixed_objects()
  expected <- expected_listing(objs)
  v <- save_variants(objs, dir = local_tempdir(), kinds = "rdata")
  for (i in seq_len(nrow(v))) {
    f <- v$file[[i]]
    lab <- v$label[[i]]
    lst <- rdata_objects(f)
    expect_listing(lst, expected, lab)
    # the names are load()'s, in its order
    e <- new.env()
    expect_identical(lst$name, load(f, envir = e), label = paste(lab, "names vs load()"))
    # bytes: the objects' sizes add up to less than the stream
    dec <- rdarrow:::rdata_decompressed_impl(f)
    expect_lte(sum(lst$bytes), length(dec) - 5 - header_length(v$format[[i]] != "xdr", v$version[[i]]))
  }
})

test_that("rdata_objects() of an .rds or a serialize() stream: one row named after the file", {
  objs <- mixed_objects()[c("df", "lst", "mat", "env", "s4num", "seq", "fml", "nul", "chr")]
  expected <- expected_listing(objs)
  v <- save_variants(objs, dir = local_tempdir(), kinds = c("rds", "stream"))
  for (i in seq_len(nrow(v))) {
    f <- v$file[[i]]
    lab <- v$label[[i]]
    lst <- rdata_objects(f)
    expect_identical(nrow(lst), 1L, label = paste(lab, "rows"))
    ex <- expected[expected$name == v$object[[i]], ]
    rownames(ex) <- NULL
    expect_listing(lst, ex, lab)
    # the one object fills the whole stream after the header
    dec <- rdarrow:::rdata_decompressed_impl(f)
    hdr <- header_length(if (v$format[[i]] == "asciihex") NA else v$format[[i]] == "ascii",
                         v$version[[i]], xdr = v$format[[i]] != "binary")
    expect_identical(as.numeric(lst$bytes), as.numeric(length(dec) - hdr),
                     label = paste(lab, "bytes"))
  }
})

test_that("rdata_objects() bytes are the size of each object's serialization", {
  # Objects without symbols or shared references serialize to the same
  # bytes inside a file as alone, so their sizes are known exactly.
  objs <- list(d = c(1.5, 2, NA), s = c("a", NA, "bc"), i = c(1L, NA), r = as.raw(1:9),
               l = list(1, "x"), n = NULL, b = c(TRUE, FALSE))
  for (ascii in list(FALSE, TRUE)) {
    f <- local_tempfile(".RData")
    e <- list2env(objs)
    save(list = names(objs), envir = e, file = f, ascii = ascii)
    lst <- rdata_objects(f)
    size <- vapply(objs, function(x) {
      as.numeric(length(serialize(x, NULL, ascii = ascii, version = 3L)) - header_length(ascii, 3L))
    }, 0)
    expect_identical(lst$name, names(objs))
    expect_identical(as.numeric(lst$bytes), unname(size), label = paste("ascii =", ascii))
  }
})

test_that("rdata_decompressed_impl() gives the bytes R decompresses", {
  objs <- list(x = mtcars, y = letters)
  v <- save_variants(objs, dir = local_tempdir(), kinds = c("rdata", "rds"),
                     formats = c("xdr", "ascii"))
  for (i in seq_len(nrow(v))) {
    f <- v$file[[i]]
    con <- gzfile(f, "rb") # reads gzip, bzip2, xz and plain files
    r <- readBin(con, "raw", 1e7)
    close(con)
    expect_identical(rdarrow:::rdata_decompressed_impl(f), r, label = v$label[[i]])
  }
})

test_that("rdata_objects() lists objects that R cannot build, and read_rdata() skips them", {
  # A persistent reference (serialize()'s refhook) has no restore method
  # outside the session that wrote it: load() fails on it, a listing never
  # builds it, and read_rdata() can read the other objects.
  e <- new.env(parent = emptyenv())
  e$v <- 1
  ok <- 1:3 + 0L
  after <- "after"
  body <- serialize(as.pairlist(list(ok = ok, p = e, after = after)), NULL,
                    refhook = function(x) if (is.environment(x)) "key" else NULL)
  f <- local_tempfile(".RData")
  writeBin(c(charToRaw("RDX3\n"), body), f)
  expect_error(load(f, envir = new.env()), "no restore method")

  lst <- rdata_objects(f)
  expect_identical(lst$name, c("ok", "p", "after"))
  expect_identical(lst$type[c(1, 3)], c("integer", "character"))
  expect_identical(lst$length[c(1, 3)], c(3L, 1L))
  expect_identical(read_rdata(f, objects = c("ok", "after")), list(ok = ok, after = after))
  expect_identical(read_rdata(f, objects = "after"), list(after = after))
  err <- tryCatch(read_rdata(f), error = function(e) e)
  expect_s3_class(err, "rdarrow_error")
  expect_match(conditionMessage(err), "restore", fixed = TRUE)
  expect_identical(err$object, "p")
})

test_that("a namespace of a package that is not installed reads as load() gives it", {
  # R 4.2's load() replaces it by the global environment, with a warning.
  ns <- asNamespace("stats")
  ok <- 1:3 + 0L
  f0 <- local_tempfile(".RData")
  save(ok, ns, file = f0, compress = FALSE)
  b <- readBin(f0, "raw", file.size(f0))
  pat <- c(as.raw(c(0, 4, 0, 9, 0, 0, 0, 5)), charToRaw("stats"))
  starts <- which(vapply(seq_len(length(b) - length(pat) + 1L),
                         function(i) all(b[i:(i + length(pat) - 1L)] == pat), TRUE))
  expect_length(starts, 1L)
  b[starts + 8:12] <- charToRaw("zqxwv")
  f <- local_tempfile(".RData")
  writeBin(b, f)
  e <- new.env()
  expect_warning(load(f, envir = e), "zqxwv")
  expect_identical(e$ns, globalenv())

  lst <- rdata_objects(f)
  expect_identical(lst$name, c("ok", "ns"))
  expect_identical(lst$type, c("integer", "environment"))
  expect_identical(lst$class, c("integer", "environment"))
  expect_identical(read_rdata(f, objects = "ok"), list(ok = ok))
  got <- suppressWarnings(read_rdata(f))
  expect_identical(got, list(ok = ok, ns = globalenv()))
})

test_that("rdata_objects() on files written by R's own examples of odd objects", {
  # active bindings in an environment, locked environments, ALTREP lengths
  e <- new.env(parent = emptyenv())
  makeActiveBinding("ab", make_closure("function() 1"), e)
  e$x <- 1
  lockEnvironment(e, bindings = TRUE)
  big <- seq_len(3e6)
  objs <- list(e = e, big = big, defer = as.character(seq_len(1e5)))
  f <- local_tempfile(".rda")
  save(list = names(objs), envir = list2env(objs), file = f)
  lst <- rdata_objects(f)
  expect_listing(lst, expected_listing(objs), "odd objects")
  expect_identical(lst$length, c(2L, 3000000L, 100000L))
})
