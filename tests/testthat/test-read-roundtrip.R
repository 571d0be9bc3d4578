# read_rdata() against R's own load()/readRDS()/unserialize(), for every way
# R writes a stream: save() and saveRDS() in XDR, ASCII and ASCII-hex, format
# versions 2 and 3, uncompressed, gzip, bzip2 and xz; and raw serialize()
# streams in XDR, native binary, ASCII and ASCII-hex (helper-roundtrip.R).

# Minutes of checks over many objects: they run where NOT_CRAN is set
# (tools/test.sh), not in CRAN's time-limited check.
skip_on_cran()

# ---------------------------------------------------------------------------
# Atomic vectors

test_that("logical, integer, double, complex and raw vectors with NA and extremes", {
  expect_roundtrip(list(
    lgl = c(TRUE, FALSE, NA),
    int = c(0L, 1L, -1L, NA, .Machine$integer.max, -.Machine$integer.max),
    dbl = c(0, -0, 1, -1, NA, NaN, Inf, -Inf, .Machine$double.xmax,
            -.Machine$double.xmax, .Machine$double.xmin, 4.9406564584124654e-324,
            pi, 1 / 3, 0.1, 1e300, -1e-300, 2^53 + 1, 123456789.123456789),
    cpl = complex(real = c(1, NA, NaN, -0, Inf, 0, .Machine$double.xmax),
                  imaginary = c(NA, 1, -0, NaN, -Inf, 1e-300, -1)),
    cpl_na = NA_complex_,
    raw = as.raw(0:255),
    scalar_int = 42L,
    scalar_dbl = 2.5,
    scalar_lgl = NA
  ))
})

test_that("empty vectors of every type and NULL", {
  expect_roundtrip(list(
    lgl0 = logical(0), int0 = integer(0), dbl0 = double(0), cpl0 = complex(0),
    chr0 = character(0), raw0 = raw(0), list0 = list(), expr0 = expression(),
    nul = NULL, named0 = structure(list(), names = character(0)),
    int0_attr = structure(integer(0), foo = "bar")
  ))
})

test_that("NA_real_, NaN, NaN payloads and -0 keep R's bit patterns", {
  payload_nan <- readBin(as.raw(c(0x23, 0x01, 0, 0, 0, 0, 0xf8, 0x7f)), "double",
                         endian = "little")
  d <- c(NA_real_, NaN, -NaN, payload_nan, -0, 0, NA_real_)
  z <- complex(real = c(NA_real_, NaN, -0), imaginary = c(NaN, NA_real_, -0))
  v <- expect_roundtrip(list(d = d, z = z))
  for (i in seq_len(nrow(v))) {
    lab <- v$label[[i]]
    got <- v$got[[i]]
    ref <- v$ref[[i]]
    for (nm in intersect(names(ref), c("d", "z"))) {
      g <- got[[nm]]
      r <- ref[[nm]]
      if (is.complex(r)) {
        expect_identical(double_bits(Re(g)), double_bits(Re(r)), label = paste(lab, nm, "Re bits"))
        expect_identical(double_bits(Im(g)), double_bits(Im(r)), label = paste(lab, nm, "Im bits"))
      } else {
        expect_identical(double_bits(g), double_bits(r), label = paste(lab, nm, "bits"))
        expect_identical(is.na(g) & !is.nan(g), c(TRUE, FALSE, FALSE, FALSE, FALSE, FALSE, TRUE),
                         label = paste(lab, "NA_real_ positions"))
        expect_identical(is.nan(g), c(FALSE, TRUE, TRUE, TRUE, FALSE, FALSE, FALSE),
                         label = paste(lab, "NaN positions"))
        expect_identical(1 / g[5:6], c(-Inf, Inf), label = paste(lab, "-0 sign"))
      }
    }
    # Binary formats carry the bits verbatim, so they must also match the
    # original vector (ASCII ones write "NA"/"NaN" and lose payloads).
    if (v$format[[i]] %in% c("xdr", "binary") && "d" %in% names(got)) {
      expect_identical(double_bits(got$d), double_bits(d), label = paste(lab, "original bits"))
    }
  }
})

# ---------------------------------------------------------------------------
# Strings and encodings

test_that("strings in UTF-8, latin1, bytes and native encodings, NA_character_ and empty", {
  utf8 <- c("h\u00e9llo", "\u2603 snow", "\u65e5\u672c\u8a9e", "\U0001F600", "ascii")
  latin1 <- iconv(c("caf\u00e9", "na\u00efve", "plain"), "UTF-8", "latin1")
  bytes <- c("\xff\xfe\x80", "abc")
  Encoding(bytes) <- "bytes"
  native <- "caf\u00e9"
  Encoding(native) <- "unknown"
  expect_identical(Encoding(latin1), c("latin1", "latin1", "unknown"))
  expect_identical(Encoding(bytes)[1], "bytes")
  objs <- list(
    utf8 = utf8, latin1 = latin1, bytes = bytes, native = native,
    mixed = c(utf8[1], latin1[1], NA, "", bytes[1], native),
    na_chr = NA_character_, empty_str = "",
    utf8_names = stats::setNames(1:3, c("\u00e9", "b", "\u4e2d"))
  )
  v <- expect_roundtrip(objs)
  # Spell the encodings out as well: Encoding() and bytes per element.
  for (i in seq_len(nrow(v))) {
    got <- v$got[[i]]
    ref <- v$ref[[i]]
    for (nm in names(ref)) {
      if (!is.character(ref[[nm]])) next
      expect_identical(Encoding(got[[nm]]), Encoding(ref[[nm]]),
                       label = paste(v$label[[i]], nm, "Encoding()"))
      expect_identical(lapply(got[[nm]], charToRaw), lapply(ref[[nm]], charToRaw),
                       label = paste(v$label[[i]], nm, "bytes"))
      expect_identical(is.na(got[[nm]]), is.na(ref[[nm]]),
                       label = paste(v$label[[i]], nm, "NA positions"))
    }
  }
})

test_that("a string of a million characters", {
  long <- paste0(strrep("abcdefghij", 1e5 - 1), "\u00e9\u00e9\u00e9\u00e9\u00e9")
  long2 <- strrep("x", 1e6)
  expect_identical(nchar(long), 999995L)
  v <- expect_roundtrip(list(long = long, long2 = c(long2, NA, "y")),
                        formats = c("xdr", "ascii", "binary"))
  got <- v$got[v$kind == "rdata"][[1]]
  expect_identical(nchar(got$long2), c(1e6L, NA, 1L))
  expect_identical(got$long, long)
})

# ---------------------------------------------------------------------------
# Classed vectors

test_that("factors, ordered factors, Dates, POSIXct/POSIXlt, difftime", {
  ct <- as.POSIXct("2020-03-08 01:59:59.25", tz = "America/New_York") + c(0, 1, NA, 3600)
  expect_roundtrip(list(
    fct = factor(c("b", "a", NA, "c", "a"), levels = c("c", "b", "a", "unused")),
    fct_na_level = addNA(factor(c("x", NA))),
    fct0 = factor(character(0)),
    ord = factor(c("lo", "hi", "mid"), levels = c("lo", "mid", "hi"), ordered = TRUE),
    date = as.Date(c("2020-01-01", NA, "1969-12-31", "9999-12-31")),
    date_frac = structure(c(18262.5, -0.25), class = "Date"),
    date_int = structure(c(18262L, NA), class = "Date"),
    ct = ct,
    ct_utc = as.POSIXct(c("1970-01-01 00:00:00", "2038-01-19 03:14:08"), tz = "UTC"),
    ct_notz = structure(c(0, 1.5e9), class = c("POSIXct", "POSIXt")),
    lt = as.POSIXlt("2021-06-15 10:30:00", tz = "Europe/Paris"),
    dt_hours = as.difftime(c(1.5, NA, -2), units = "hours"),
    dt_secs = as.difftime(30L, units = "secs")
  ))
})

test_that("hms and integer64 columns (if installed)", {
  skip_if_not_installed("hms")
  skip_if_not_installed("bit64")
  expect_roundtrip(list(
    hms = hms::hms(seconds = c(1.5, 3600, NA)),
    i64 = bit64::as.integer64(c("9007199254740993", NA, "-1"))
  ))
})

# ---------------------------------------------------------------------------
# Data frames, tibbles, data.tables, matrices

test_that("data frames: zero rows, zero columns, row names, list and data-frame columns", {
  df_list <- data.frame(id = 1:3)
  df_list$l <- I(list(1, "a", NULL))
  df_nested <- data.frame(id = c(2.5, NA, 1))
  df_nested$sub <- data.frame(a = 1:3, b = c("x", NA, "z"))
  df_nested$m <- matrix(1:6, nrow = 3)
  expect_roundtrip(list(
    cars = utils::head(mtcars, 7),
    iris = iris,
    zero_rows = mtcars[0, ],
    zero_cols = data.frame(),
    zero_cols_rows = data.frame(row.names = c("r1", "r2", "r3")),
    int_rownames = data.frame(x = 1:3, row.names = c(10L, 20L, 30L)),
    df_list = df_list,
    df_nested = df_nested,
    df_strings = data.frame(s = c("a", NA, "\u00e9"), f = factor(c("u", "v", "u")),
                            stringsAsFactors = FALSE),
    airquality = airquality
  ))
})

test_that("tibbles", {
  skip_if_not_installed("tibble")
  expect_roundtrip(list(
    tb = tibble::tibble(x = 1:3, y = c("a", "b", NA), z = list(1, "two", NULL)),
    tb0 = tibble::tibble(),
    tb_nested = tibble::tibble(g = 1:2, data = list(tibble::tibble(a = 1), tibble::tibble(b = "x")))
  ))
})

test_that("data.tables with their .internal.selfref external pointer", {
  skip_if_not_installed("data.table")
  dt <- data.table::data.table(a = c(3L, 1L, 2L), b = c("x", "y", NA))
  data.table::setkey(dt, a)
  expect_identical(typeof(attr(dt, ".internal.selfref")), "externalptr")
  v <- expect_roundtrip(list(dt = dt, dt0 = data.table::data.table()))
  got <- v$got[v$kind == "rdata"][[1]]
  expect_s3_class(got$dt, "data.table")
  expect_identical(typeof(attr(got$dt, ".internal.selfref")), "externalptr")
  expect_identical(attr(got$dt, "sorted"), "a")
})

test_that("matrices and arrays with dimnames, tables, time series", {
  expect_roundtrip(list(
    mat = matrix(1:6, 2, dimnames = list(c("a", "b"), c("x", "y", "z"))),
    mat_chr = matrix(c("a", NA, "c", "d"), 2),
    mat_lgl = matrix(c(TRUE, NA), 1),
    mat_named_dimnames = matrix(c(1.5, 2), 1, dimnames = list(rows = "r", cols = c("c1", "c2"))),
    mat0 = matrix(numeric(0), 0, 3),
    arr = array(1:24, 2:4, dimnames = list(NULL, letters[1:3], LETTERS[1:4])),
    arr_cpl = array(complex(real = 1:8, imaginary = -1), c(2, 2, 2)),
    titanic = Titanic,
    state = state.x77,
    tbl = table(c("a", "b", "a", NA), useNA = "ifany"),
    ts = AirPassengers,
    mts = ts(matrix(1:10, 5), start = c(2000, 1), frequency = 4)
  ))
})

test_that("sparse matrices from Matrix (S4, if installed)", {
  skip_if_not_installed("Matrix")
  expect_roundtrip(list(
    sp = Matrix::sparseMatrix(i = c(1, 3, 5), j = c(2, 2, 4), x = c(1.5, -2, NA)),
    dense = Matrix::Matrix(1:6, 2, 3)
  ))
})

# ---------------------------------------------------------------------------
# Lists and language objects

test_that("nested and named lists, pairlists", {
  deep <- list(leaf = "end")
  for (i in 1:200) deep <- list(deep, i)
  expect_roundtrip(list(
    nested = list(a = list(b = list(c = 1:3, d = list()), e = NULL), f = "x"),
    named = list(x = 1, y = "two", z = list(TRUE), 4),
    partly_named = stats::setNames(list(1, 2, 3), c("a", "", NA)),
    pl = pairlist(a = 1, b = "x", 3L),
    pl1 = as.pairlist(list(x = NULL)),
    deep = deep,
    with_attrs = structure(list(1, 2), class = "myclass", extra = list(a = 1), comment = "note")
  ))
})

test_that("formulas, calls, expressions and symbols", {
  fml <- y ~ x + log(z)
  environment(fml) <- globalenv()
  one_sided <- ~ a | b
  environment(one_sided) <- globalenv()
  fenv <- new.env(parent = globalenv())
  assign("k", 10, envir = fenv)
  fml_env <- y ~ k
  environment(fml_env) <- fenv
  expect_roundtrip(list(
    fml = fml, one_sided = one_sided, fml_env = fml_env,
    call = quote(f(x, y = 2, ...)),
    call_missing = quote(x[, 1]),
    call_nested = quote(if (a > 1) b else function(z = 3) z^2),
    expr = expression(a + b, 1, "s", NULL),
    sym = as.name("some_symbol"),
    sym_utf8 = as.name("\u00e9t\u00e9"),
    sym_list = list(quote(a), quote(`b c`), quote(a)),
    lang_fun = quote(function(x, ...) NULL)
  ))
})

# ---------------------------------------------------------------------------
# Functions

test_that("closures with and without srcref, byte-compiled closures, builtins", {
  plain <- make_closure("function(x, y = 2, ...) { x + y }")
  with_src <- make_closure("function(a,  b = 'default') {\n  # a comment\n  paste(a, b)\n}",
                           keep.source = TRUE)
  expect_false(is.null(attr(with_src, "srcref")))
  expect_null(attr(plain, "srcref"))
  compiled <- compiler::cmpfun(make_closure("function(n) { s <- 0; for (i in seq_len(n)) s <- s + i; s }"))
  expect_identical(typeof(body(compiled)), "language")
  expect_true(grepl("bytecode", paste(utils::capture.output(print(compiled)), collapse = "\n")))
  cenv <- new.env(parent = globalenv())
  assign("offset", 100, envir = cenv)
  closure_env <- make_closure("function(x) x + offset")
  environment(closure_env) <- cenv
  v <- expect_roundtrip(list(
    plain = plain, with_src = with_src, compiled = compiled, closure_env = closure_env,
    fun_list = list(f = plain, g = compiled),
    builtin = sum, builtins = list(f = sum, g = `[`, h = `if`, i = `(`)
  ))
  got <- v$got[v$kind == "rdata" & v$version == 3L][[1]]
  expect_identical(got$plain(1), 3)
  expect_identical(got$with_src("x"), "x default")
  expect_identical(got$compiled(10), 55)
  expect_identical(got$closure_env(1), 101)
  expect_identical(got$builtin, sum)
  expect_identical(got$builtins$h, `if`)
  expect_identical(paste(as.character(attr(got$with_src, "srcref")), collapse = "\n"),
                   paste(as.character(attr(with_src, "srcref")), collapse = "\n"))
})

# ---------------------------------------------------------------------------
# Environments

test_that("environments: cycles, sharing, locks, active bindings, attributes", {
  cyc <- new.env(parent = globalenv())
  cyc$self <- cyc
  cyc$x <- 1:3
  cyc$child <- new.env(parent = cyc)
  cyc$child$up <- cyc

  locked <- new.env(parent = emptyenv())
  locked$a <- "A"
  locked$b <- list(1)
  lockEnvironment(locked, bindings = TRUE)

  half_locked <- new.env(parent = emptyenv())
  half_locked$a <- 1
  half_locked$b <- 2
  lockBinding("a", half_locked)

  active <- new.env(parent = globalenv())
  makeActiveBinding("ab", make_closure("function() 42"), active)
  active$plain <- "p"

  unhashed <- new.env(hash = FALSE, parent = emptyenv())
  unhashed$u <- 1

  with_attr <- new.env(parent = emptyenv())
  attr(with_attr, "tag") <- "tagged"

  shared <- new.env(parent = emptyenv())
  shared$v <- 1
  v <- expect_roundtrip(list(
    cyc = cyc, locked = locked, half_locked = half_locked, active = active,
    unhashed = unhashed, with_attr = with_attr,
    shared_twice = list(shared, shared, list(shared))
  ))
  for (i in which(v$kind == "rdata")) {
    got <- v$got[[i]]
    f <- v$label[[i]]
    expect_true(identical(got$cyc$self, got$cyc), label = paste(f, "cycle"))
    expect_true(identical(got$cyc$child$up, got$cyc), label = paste(f, "inner cycle"))
    expect_true(identical(parent.env(got$cyc$child), got$cyc), label = paste(f, "enclosure"))
    expect_identical(parent.env(got$cyc), globalenv())
    expect_true(environmentIsLocked(got$locked), label = paste(f, "locked"))
    expect_true(bindingIsLocked("a", got$locked), label = paste(f, "binding locked"))
    expect_true(bindingIsLocked("a", got$half_locked), label = paste(f, "one binding locked"))
    expect_false(bindingIsLocked("b", got$half_locked), label = paste(f, "other binding unlocked"))
    expect_false(environmentIsLocked(got$half_locked), label = paste(f, "env unlocked"))
    expect_true(bindingIsActive("ab", got$active), label = paste(f, "active binding"))
    expect_identical(got$active$ab, 42)
    expect_identical(attr(got$with_attr, "tag"), "tagged")
    expect_true(identical(got$shared_twice[[1]], got$shared_twice[[2]]) &&
                  identical(got$shared_twice[[1]], got$shared_twice[[3]][[1]]),
                label = paste(f, "shared environment stays one environment"))
  }
})

test_that("global, base and empty environments, namespaces and package environments", {
  v <- expect_roundtrip(list(
    glob = globalenv(), base = baseenv(), empty = emptyenv(),
    ns = environment(stats::sd), ns_fun = stats::sd,
    pkg = as.environment("package:stats"),
    envs = list(globalenv(), baseenv(), emptyenv(), asNamespace("utils"))
  ))
  for (got in v$got[v$kind == "rdata"]) {
    expect_identical(got$glob, globalenv())
    expect_identical(got$base, baseenv())
    expect_identical(got$empty, emptyenv())
    expect_identical(got$ns, asNamespace("stats"))
    expect_identical(got$ns_fun, stats::sd)
    expect_identical(got$pkg, as.environment("package:stats"))
    expect_identical(got$envs[[4]], asNamespace("utils"))
  }
})

# ---------------------------------------------------------------------------
# S4

test_that("S4 objects, including one extending numeric", {
  setClass("RdarrowPoint", representation(x = "numeric", label = "character"),
           where = environment())
  setClass("RdarrowMeasure", contains = "numeric", representation(unit = "character"),
           where = environment())
  setClass("RdarrowBag", contains = "list", representation(tag = "character"),
           where = environment())
  pt <- new("RdarrowPoint", x = c(1, NA), label = "p")
  ms <- new("RdarrowMeasure", c(1.5, 2.5), unit = "kg")
  bag <- new("RdarrowBag", list(1, "a"), tag = "t")
  expect_true(isS4(ms))
  expect_identical(typeof(ms), "double")
  v <- expect_roundtrip(list(pt = pt, ms = ms, bag = bag, in_list = list(pt, ms)))
  for (i in which(v$kind != "rdata" & v$object %in% c("pt", "ms", "bag"))) {
    expect_true(isS4(v$got[[i]][[1]]), label = paste(v$label[[i]], "isS4"))
  }
  got <- v$got[v$kind == "rdata"][[1]]
  expect_true(isS4(got$ms))
  expect_identical(got$ms@unit, "kg")
  expect_identical(got$ms@.Data, c(1.5, 2.5))
  expect_identical(got$pt@x, c(1, NA))
  expect_identical(attr(class(got$pt), "package"), attr(class(pt), "package"))
})

# ---------------------------------------------------------------------------
# ALTREP

altrep_objects <- function() {
  list(
    seq10 = 1:10,
    seq_rev = 10:-5,
    seq_real = 3e9:(3e9 + 4),
    seq_attr = structure(1:10, foo = "bar"),
    deferred_int = as.character(1:5),
    deferred_real = as.character(c(1.5, 1e5, 1e-20)),
    wrap_real = sort(c(3, 1, 2)),
    wrap_int = sort(c(3L, NA, 1L)),
    wrap_str = sort(c("b", "a", "c")),
    in_list = list(1:3, as.character(4:6))
  )
}

test_that("ALTREP objects (compact sequences, deferred strings, wrappers) read as load() gives them", {
  objs <- altrep_objects()
  expect_identical(altrep_class(objs$seq10), "compact_intseq")
  expect_identical(altrep_class(objs$seq_real), "compact_realseq")
  expect_identical(altrep_class(objs$deferred_int), "deferred_string")
  expect_identical(altrep_class(objs$wrap_real), "wrap_real")
  expect_roundtrip(objs)
})

test_that("a data frame holding ALTREP columns is built natively, its columns as load() gives them", {
  # save() writes seq_len() columns and sort()ed vectors as ALTREP nodes; the
  # frame around them is built directly, each ALTREP node by R itself
  df <- data.frame(id = seq_len(2000), x = sort(runif(2000)), w = as.character(1:2000),
                   stringsAsFactors = FALSE)
  df$l <- list(1:3)
  f <- file.path(local_tempdir(), "frame.RData")
  save(df, file = f)
  res <- rdarrow:::rdata_read_impl(normalizePath(f), NULL, "frame", 1000L)
  expect_identical(res$fallback, FALSE)
  got <- read_rdata(f)$df
  ref <- reference_read(f)$df
  for (nm in names(ref)) {
    expect_identical(altrep_class(got[[nm]]), altrep_class(ref[[nm]]), label = sprintf("ALTREP class of '%s'", nm))
  }
  expect_identical(altrep_class(got$id), "compact_intseq")
  expect_identical(serialized(got, 3L), serialized(ref, 3L))
  expect_identical(got, ref)
})

test_that("ALTREP objects keep the compact form load() gives them", {
  # load() of a version-3 stream rebuilds compact sequences, deferred strings
  # and wrappers as ALTREP objects; a faithful reader gives the same objects,
  # not expanded copies (a million-element sequence is 4 MB expanded).
  objs <- c(altrep_objects()[c("seq10", "seq_real", "seq_attr", "deferred_int",
                               "deferred_real", "wrap_real", "wrap_str")],
            list(seq_big = seq_len(1e6)))
  v <- save_variants(objs, dir = local_tempdir(), kinds = c("rdata", "rds"),
                     formats = "xdr", versions = 3L, compress = c("none", "gzip"))
  for (i in seq_len(nrow(v))) {
    got <- read_rdata(v$file[[i]])
    ref <- reference_read(v$file[[i]])
    for (nm in names(ref)) {
      expect_identical(altrep_class(got[[nm]]), altrep_class(ref[[nm]]),
                       label = sprintf("%s: ALTREP class of '%s'", v$label[[i]], nm))
      # serialize() in version 3 writes ALTREP objects in their compact form.
      sg <- serialized(got[[nm]], 3L)
      sr <- serialized(ref[[nm]], 3L)
      expect(identical(sg, sr),
             sprintf("%s: version-3 serialization of '%s' differs from R's (%d vs %d bytes)",
                     v$label[[i]], nm, length(sg), length(sr)))
      # (after the checks above: identical() expands R's compact sequences)
      expect_true(identical(got[[nm]], ref[[nm]]),
                  label = sprintf("%s: identical() '%s'", v$label[[i]], nm))
    }
  }
})

# ---------------------------------------------------------------------------
# External pointers, weak references

test_that("external pointers and weak references", {
  objs <- list(
    xp = new("externalptr"),
    xp_list = list(a = new("externalptr"), b = 1)
  )
  if (requireNamespace("rlang", quietly = TRUE)) {
    key <- new.env(parent = emptyenv())
    objs$wr <- rlang::new_weakref(key, value = "payload")
    expect_identical(typeof(objs$wr), "weakref")
  }
  v <- expect_roundtrip(objs)
  got <- v$got[v$kind == "rdata"][[1]]
  expect_identical(typeof(got$xp), "externalptr")
  expect_identical(typeof(got$xp_list$a), "externalptr")
  if (!is.null(objs$wr)) expect_identical(typeof(got$wr), "weakref")
})

# ---------------------------------------------------------------------------
# Object names, selection, file names

test_that("objects with non-syntactic and non-ASCII names, in file order", {
  e <- new.env(parent = emptyenv())
  assign("na me", 1, envir = e)
  assign("\u00e9t\u00e9", "summer", envir = e)
  assign("zz", 2L, envir = e)
  assign(".hidden", 3, envir = e)
  assign("a", 4, envir = e)
  f <- local_tempfile(".RData")
  save(list = c("zz", "na me", "\u00e9t\u00e9", ".hidden", "a"), envir = e, file = f)
  got <- read_rdata(f)
  expect_identical(names(got), c("zz", "na me", "\u00e9t\u00e9", ".hidden", "a"))
  expect_same_as_load(f)
  expect_identical(got[["\u00e9t\u00e9"]], "summer")
})

test_that("objects = selects objects by name", {
  f <- local_tempfile(".rda")
  a <- 1:3
  b <- letters
  cc <- list(x = mtcars)
  save(a, b, cc, file = f)
  ref <- reference_read(f)
  one <- read_rdata(f, objects = "b")
  expect_identical(names(one), "b")
  expect_identical(one$b, letters)
  two <- read_rdata(f, objects = c("cc", "a"))
  expect_setequal(names(two), c("a", "cc"))
  expect_length(two, 2L)
  expect_identical(two$a, ref$a)
  expect_identical(two$cc, ref$cc)
  all <- read_rdata(f, objects = c("a", "b", "cc"))
  expect_identical(all[names(ref)], ref)
  none <- read_rdata(f, objects = character(0))
  expect_length(none, 0L)
  # .rds: the one object is named after the file
  r <- file.path(local_tempdir(), "my.data.rds")
  saveRDS(mtcars, r)
  got <- read_rdata(r)
  expect_identical(names(got), "my.data")
  expect_identical(got$my.data, mtcars)
  expect_identical(read_rdata(r, objects = "my.data"), got)
})

# ---------------------------------------------------------------------------
# A mixed bag in one file, and a large data frame

test_that("a mixed file of many kinds of objects", {
  fml <- y ~ x
  environment(fml) <- globalenv()
  expect_roundtrip(list(
    cars = mtcars, letters = letters, fml = fml, f = make_closure("function(x) x"),
    l = list(1:3, list(a = "b")), m = diag(3), s = as.name("s"),
    e = globalenv(), n = NULL, fac = factor("a"), dt = Sys.Date() - 0:2
  ))
})

test_that("a data frame of a million rows (buffering)", {
  set.seed(42)
  n <- 1e6
  big <- data.frame(
    i = sample.int(n),
    d = stats::runif(n),
    s = sample(c(letters, NA, "\u00e9"), n, replace = TRUE),
    f = factor(sample(c("lo", "mid", "hi"), n, replace = TRUE)),
    l = sample(c(TRUE, FALSE, NA), n, replace = TRUE),
    stringsAsFactors = FALSE
  )
  d <- local_tempdir()
  v <- rbind(
    save_variants(list(big = big), dir = file.path(d, "a"), kinds = "rdata",
                  formats = "xdr", versions = 3L, compress = c("none", "gzip")),
    save_variants(list(big = big), dir = file.path(d, "b"), kinds = "rds",
                  formats = "ascii", versions = 2L, compress = "bzip2"),
    save_variants(list(big = big), dir = file.path(d, "c"), kinds = "rds",
                  formats = "asciihex", versions = 3L, compress = "none"),
    save_variants(list(big = big), dir = file.path(d, "d"), kinds = "stream",
                  formats = "binary", versions = 3L)
  )
  for (i in seq_len(nrow(v))) {
    got <- read_rdata(v$file[[i]])
    ref <- reference_read(v$file[[i]])
    expect_identical(names(got), names(ref))
    expect_true(identical(got[[1]], ref[[1]], num.eq = FALSE, single.NA = FALSE,
                          attrib.as.set = FALSE),
                label = paste(v$label[[i]], "identical"))
    expect_identical(dim(got[[1]]), c(1000000L, 5L))
  }
})

test_that("ASCII doubles parse exactly as R parses them (many magnitudes)", {
  # R's ASCII format writes doubles with 16 significant digits and reads
  # them with its own strtod; the reader must land on the same doubles.
  set.seed(7)
  x <- c(stats::runif(5000) * 10^sample(-300:300, 5000, replace = TRUE),
         stats::rnorm(5000), 0.1 + 0.2, 1e23, 2.2250738585072011e-308,
         .Machine$double.xmax, 9007199254740993, -1e-310)
  v <- save_variants(list(x = x), dir = local_tempdir(), kinds = c("rdata", "rds"),
                     formats = c("ascii", "asciihex"), versions = 3L, compress = "none")
  for (i in seq_len(nrow(v))) {
    got <- read_rdata(v$file[[i]])[[1]]
    ref <- reference_read(v$file[[i]])[[1]]
    bad <- which(double_bits(got) != double_bits(ref))
    expect(length(bad) == 0L,
           sprintf("%s: %d of %d doubles differ from R's, e.g. %s", v$label[[i]],
                   length(unique((bad - 1L) %/% 8L)), length(x),
                   paste(utils::head(sprintf("%a (R: %a)", got[unique((bad - 1L) %/% 8L) + 1L],
                                             ref[unique((bad - 1L) %/% 8L) + 1L]), 3),
                         collapse = ", ")))
  }
})
