# Objects that are neither data frames nor vectors at the top of an .rds
# (or as named objects of an .RData): a bare CHARSXP, a symbol, NULL,
# environments, a formula, a function, the missing argument in a list.
# read_rdata() must give what readRDS()/load() give, and rdata_objects()
# what R says of them (class, type, length).

# serialize() of `x` (a character vector of one string) without the
# character vector around its single element: what is left is a stream
# whose item is a bare CHARSXP, which readRDS() returns as a value of type
# "char". After the header come the STRSXP's flags word (16: no
# attributes) and length (1), then the CHARSXP; those 8 bytes go.
bare_charsxp_stream <- function(x, version = 3L) {
  stopifnot(is.character(x), length(x) == 1L)
  s <- serialize(x, NULL, version = version, xdr = TRUE)
  # the header: serialize(NULL) is the header and one 4-byte item
  at <- length(serialize(NULL, NULL, version = version, xdr = TRUE)) - 4L
  wrapper <- readBin(s[at + 1:8], "integer", n = 2L, endian = "big")
  stopifnot(identical(wrapper, c(16L, 1L)))
  s[-(at + 1:8)]
}

# Write the stream as an .rds file (`gzip`: through a gzip connection, as
# saveRDS() compresses by default).
write_rds_stream <- function(stream, file, gzip = FALSE) {
  con <- if (gzip) gzfile(file, "wb") else file(file, "wb")
  on.exit(close(con))
  writeBin(stream, con)
  invisible(file)
}

bare_strings <- function() {
  latin1 <- "caf\xe9"
  Encoding(latin1) <- "latin1"
  bytes <- "\xff\xfe"
  Encoding(bytes) <- "bytes"
  list(ascii = "abc", na = NA_character_, latin1 = latin1,
       utf8 = enc2utf8("\u00e9t\u00e9 \u4e2d"), bytes = bytes, empty = "")
}

# read_rdata() of `file` gives R's objects (expect_same_as_load(), which
# compares with identical() and serialize(), so a CHARSXP's encoding
# counts), and rdata_objects() lists them as R describes them.
expect_read_and_listed_like_r <- function(file, label) {
  ref <- reference_read(file)
  expect_same_as_load(file, expected = ref, label = label)
  lst <- tryCatch(rdata_objects(file), error = function(e) e)
  if (inherits(lst, "error")) {
    fail(sprintf("%s: rdata_objects() failed: %s", label, conditionMessage(lst)))
  } else {
    expect_listing(lst, expected_listing(ref), label)
  }
}

test_that("a bare CHARSXP in an .rds reads as readRDS() gives it", {
  dir <- local_tempdir()
  strings <- bare_strings()
  for (v in c(3L, 2L)) {
    for (gzip in c(FALSE, TRUE)) {
      for (nm in names(strings)) {
        f <- file.path(dir, sprintf("%s-v%d-%s.rds", nm, v, if (gzip) "gzip" else "none"))
        write_rds_stream(bare_charsxp_stream(strings[[nm]], v), f, gzip = gzip)
        label <- basename(f)
        ref <- readRDS(f)
        # the file is what it should be: R reads a "char" of the string's
        # length ("NA" for NA_character_)
        expect_identical(typeof(ref), "char", label = paste(label, "typeof(readRDS())"))
        expect_identical(length(ref), if (is.na(strings[[nm]])) 2L else nchar(strings[[nm]], "bytes"),
                         label = paste(label, "length(readRDS())"))
        got <- tryCatch(read_rdata(f), error = function(e) e)
        if (inherits(got, "error")) {
          fail(sprintf("%s: read_rdata() failed: %s", label, conditionMessage(got)))
          next
        }
        expect_length(got, 1L)
        expect_identical(typeof(got[[1]]), "char", label = paste(label, "typeof(read_rdata())"))
        expect_true(identical(got[[1]], ref), label = paste(label, "identical() to readRDS()"))
        expect_read_and_listed_like_r(f, label)
      }
    }
  }
})

test_that("a bare CHARSXP saved as an object of an .RData reads as load() gives it", {
  dir <- local_tempdir()
  strings <- bare_strings()
  chars <- lapply(names(strings), function(nm) {
    f <- file.path(dir, paste0(nm, ".rds"))
    write_rds_stream(bare_charsxp_stream(strings[[nm]]), f)
    readRDS(f)
  })
  names(chars) <- paste0("char_", names(strings))
  env <- list2env(chars, envir = new.env(parent = emptyenv()))
  for (v in c(3L, 2L)) {
    f <- file.path(dir, sprintf("chars-v%d.RData", v))
    save(list = names(chars), envir = env, file = f, version = v)
    expect_identical(unname(vapply(load_objects(f), typeof, "")), rep("char", length(chars)))
    expect_read_and_listed_like_r(f, basename(f))
  }
})

# The bare objects, each as R builds it; environments whose identity R
# keeps (global, base, empty) and one of our own with bindings.
bare_objects <- function() {
  holder <- new.env(parent = globalenv())
  assign("a", 1, envir = holder)
  assign("b", c("x", NA), envir = holder)
  assign(".hidden", list(TRUE), envir = holder)
  list(
    symbol = quote(x),
    null = NULL,
    env = holder,
    globalenv = globalenv(),
    emptyenv = emptyenv(),
    baseenv = baseenv(),
    formula = stats::as.formula("y ~ x + log(z)", env = globalenv()),
    closure = make_closure("function(x, y = 2L, ...) { if (x > y) x else list(...) }"),
    missing_arg_in_list = list(quote(expr = )),
    missing_arg_named = list(a = quote(expr = ), b = 1)
  )
}

# For an environment that is not one of the session's: the same bindings
# (names and values, hidden ones included) and the same enclosure.
expect_same_environment <- function(got, ref, label) {
  if (!is.environment(got)) {
    fail(sprintf("%s: read_rdata() gives a %s, not an environment", label, typeof(got)))
    return(invisible())
  }
  expect_identical(as.list(got, all.names = TRUE, sorted = TRUE),
                   as.list(ref, all.names = TRUE, sorted = TRUE),
                   label = paste(label, "bindings"))
  expect_identical(parent.env(got), parent.env(ref), label = paste(label, "enclosure"))
}

test_that("bare symbols, NULL, environments, formulas and functions in .rds files", {
  dir <- local_tempdir()
  objs <- bare_objects()
  for (v in c(3L, 2L)) {
    for (nm in names(objs)) {
      f <- file.path(dir, sprintf("v%d", v), paste0(nm, ".rds"))
      dir.create(dirname(f), showWarnings = FALSE)
      saveRDS(objs[[nm]], f, version = v)
      label <- sprintf("%s (v%d)", basename(f), v)
      expect_read_and_listed_like_r(f, label)
      if (nm == "env") {
        got <- tryCatch(read_rdata(f)[[1]], error = function(e) NULL)
        expect_same_environment(got, readRDS(f), label)
      }
    }
  }
})

test_that("bare symbols, NULL, environments, formulas and functions as objects of an .RData", {
  dir <- local_tempdir()
  objs <- bare_objects()
  env <- as_object_env(objs)
  for (v in c(3L, 2L)) {
    f <- file.path(dir, sprintf("bare-v%d.RData", v))
    save(list = names(objs), envir = env, file = f, version = v)
    label <- basename(f)
    expect_read_and_listed_like_r(f, label)
    got <- tryCatch(read_rdata(f), error = function(e) NULL)
    ref <- load_objects(f)
    expect_same_environment(got$env, ref$env, label)
  }
})
