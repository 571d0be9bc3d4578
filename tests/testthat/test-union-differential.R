# The union and struct layouts against R: values of every kind mixed with
# every other in lists (a named list a struct, an unnamed one a dense
# union), thousands of random nested lists from a fixed-seed generator
# (helper-generator.R), the minimal objects it found wrong (kept as
# regression tests), and real fits whose NAs R's arithmetic made. Each
# comes back through the C stream, IPC, Parquet and the command line with
# the bytes R's serialize() writes for it, or is refused with a clear
# error.

# Minutes of checks over many objects: they run where NOT_CRAN is set
# (tools/test.sh), not in CRAN's time-limited check.
skip_on_cran()

# The routes each object takes (helper-lossless.R's lc_route(); "e" is
# the command line).
ud_routes <- c("a", "c", "p", "e")

# Send each of `objs` (a list) through `routes`: a data frame of object,
# route, status ("bytes": R's bytes back; "refused": an error; "changed")
# and message. Each object is saved alone, as `x`, and compared with what
# load() gives for it.
ud_run <- function(objs, routes, cli) {
  dir <- tempfile("ud-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  src <- file.path(dir, "x.RData")
  rows <- vector("list", length(objs) * length(routes))
  k <- 0L
  for (i in seq_along(objs)) {
    lc_save(list(x = objs[[i]]), src)
    e <- new.env(parent = emptyenv())
    load(src, e)
    for (route in routes) {
      got <- tryCatch(
        withCallingHandlers(lc_route(route, src, "x", dir, cli),
                            warning = function(w) invokeRestart("muffleWarning")),
        error = function(e) e)
      status <- if (inherits(got, "error")) {
        "refused"
      } else if (lc_same_bytes(got, e$x)) {
        "bytes"
      } else {
        "changed"
      }
      message <- switch(status,
        refused = conditionMessage(got),
        changed = lc_first_diff(got, e$x),
        "")
      k <- k + 1L
      rows[[k]] <- data.frame(object = if (is.null(names(objs))) as.character(i) else names(objs)[[i]],
                              route = route,
                              status = status, message = message, stringsAsFactors = FALSE)
    }
  }
  do.call(rbind, rows)
}

# Expect no object changed, and every refusal to say which object and why
# (the engine's errors name the object and the place in it).
ud_expect <- function(res, label) {
  changed <- res[res$status == "changed", ]
  expect(nrow(changed) == 0L, sprintf("%s: %d came back changed:\n%s", label, nrow(changed),
    paste(sprintf("  %s, route %s: %s", changed$object, changed$route, changed$message),
          collapse = "\n")))
  refused <- res[res$status == "refused", ]
  unclear <- refused[!grepl("'x'|x\\[|column|element", refused$message), ]
  expect(nrow(unclear) == 0L, sprintf("%s: refused without naming the place:\n%s", label,
    paste(sprintf("  %s, route %s: %s", unclear$object, unclear$route, unclear$message),
          collapse = "\n")))
  counts <- table(factor(res$route, unique(res$route)),
                  factor(res$status, c("bytes", "refused", "changed")))
  cat(sprintf("\n%s: %s\n", label, paste(sprintf("route %s %d bytes, %d refused",
    rownames(counts), counts[, "bytes"], counts[, "refused"]), collapse = "; ")))
  if (nrow(refused)) {
    why <- sort(table(sub("^.*?: ", "", refused$message)), decreasing = TRUE)
    cat(sprintf("  refused (%d): %s\n", nrow(refused),
                paste(sprintf("%s (%d)", names(why), why), collapse = "; ")))
  }
}

# One value of each kind, with NA (and the NA R's arithmetic gives, whose
# bits are not NA_real_'s).
ud_kinds <- function() {
  gen_classes()
  computed_na <- NA_real_ * 2
  k <- list(
    logical = c(TRUE, NA),
    integer = c(1L, NA, -.Machine$integer.max),
    double = c(-0, NA, NaN, Inf, computed_na, 1 / 3),
    complex = c(1+2i, NA, complex(real = NaN, imaginary = 1)),
    character = c("a", NA, "caf\u00e9", "\u65e5\u672c"),
    latin1 = c(iconv("caf\u00e9", "UTF-8", "latin1"), "x"),
    bytes = c("\xff\xfe", "ok"),
    raw = as.raw(c(0, 255, 7)),
    raw0 = raw(0),
    factor = factor(c("b", NA, "a"), levels = c("b", "a", "unused")),
    ordered = factor(c("lo", "hi"), levels = c("lo", "mid", "hi"), ordered = TRUE),
    date = as.Date(c("2020-02-29", NA)),
    date_int = structure(c(18000L, NA), class = "Date"),
    date_frac = structure(c(18000.5, computed_na), class = "Date"),
    posixct_utc = .POSIXct(c(1.6e9, NA, 1.6e9 + 0.25), tz = "UTC"),
    posixct_zone = .POSIXct(c(1.6e9, NA), tz = "America/New_York"),
    posixct_no_tz = structure(c(1.6e9, 1), class = c("POSIXct", "POSIXt")),
    posixct_empty_tz = .POSIXct(c(1.6e9, NA), tz = ""),
    posixct_int = structure(c(1600000000L, NA), class = c("POSIXct", "POSIXt"), tzone = "UTC"),
    posixlt = as.POSIXlt(.POSIXct(c(1.6e9, NA), tz = "UTC")),
    difftime_mins = as.difftime(c(1.5, NA), units = "mins"),
    difftime_int = structure(c(3L, NA), class = "difftime", units = "days"),
    hms = structure(c(3600.5, NA), class = c("hms", "difftime"), units = "secs"),
    named = c(a = 1.5, b = NA),
    matrix = matrix(c(1L, NA, 3L, 4L), 2L, dimnames = list(NULL, c("u", "v"))),
    frame = data.frame(i = 1:2, s = c("a", NA)),
    frame0 = structure(list(), class = "data.frame", row.names = c(NA, -2L)),
    frame_rn = structure(list(), row.names = c("r1", "r2"), class = "data.frame"),
    s4 = methods::new("genPoint", x = c(1, NA), label = "p"),
    s4_vector = methods::new("genCount", 1:2, note = "n"),
    null = NULL,
    list = list(1L, "z")
  )
  if (requireNamespace("bit64", quietly = TRUE)) {
    k$integer64 <- bit64::as.integer64(c("9007199254740993", NA))
  }
  if (requireNamespace("data.table", quietly = TRUE)) {
    k$data_table <- data.table::data.table(a = 1:2, b = c("x", "y"))
  }
  k
}

test_that("lists mixing each kind with each other kind come back with R's bytes", {
  cli <- cli_binary()
  kinds <- ud_kinds()
  pairs <- list()
  n <- names(kinds)
  for (i in seq_along(n)) for (j in seq_along(n)[seq_along(n) >= i]) {
    a <- kinds[i]
    b <- kinds[j]
    pairs[[paste0("list(", n[[i]], ", ", n[[j]], ")")]] <- c(unname(a), unname(b))
    pairs[[paste0("list(a = ", n[[i]], ", b = ", n[[j]], ")")]] <- list(a = a[[1]], b = b[[1]])
  }
  # and each kind inside a list column and a nested frame
  for (i in seq_along(n)) {
    d <- data.frame(id = 1:2)
    d$l <- list(kinds[[i]], "other")
    pairs[[paste0("list column with ", n[[i]])]] <- d
    pairs[[paste0("frame in list with ", n[[i]])]] <- list(d, 1L)
  }
  expect_gt(length(pairs), 1000L)
  res <- ud_run(pairs, ud_routes, cli)
  ud_expect(res, sprintf("%d lists of two kinds", length(pairs)))
  # nothing here is refused: every kind has data
  expect_identical(sum(res$status == "refused"), 0L,
                   info = paste(unique(res$message[res$status == "refused"]), collapse = "; "))
})

test_that("thousands of generated nested lists come back with R's bytes or are refused", {
  cli <- cli_binary()
  # the generator is what the test says it is: every kind, at depth
  seen <- character()
  walk <- function(v, depth) {
    seen <<- c(seen, class(v)[[1]], if (depth >= 3L) "depth 3")
    if (is.list(v)) for (e in unclass(v)) walk(e, depth + 1L)
  }
  for (s in 1:300) walk(gen_object(s), 0L)
  expect_true(all(c("raw", "complex", "Date", "POSIXct", "POSIXlt", "difftime", "hms",
                    "integer64", "factor", "ordered", "data.frame", "data.table", "tbl_df",
                    "genBag", "genPoint", "genCount", "matrix", "array", "myList",
                    "depth 3") %in% seen))
  seeds <- 1:1500
  res <- ud_run(lapply(seeds, gen_object), ud_routes, cli)
  res$object <- paste("seed", seeds[as.integer(res$object)])
  ud_expect(res, sprintf("%d generated objects", length(seeds)))
  # the other routes (an arrow R Table, IPC streams, .rds) for a part
  if (requireNamespace("arrow", quietly = TRUE)) {
    few <- 1:300
    res <- ud_run(lapply(few, gen_object), c("b", "d", "a.rds"), cli)
    res$object <- paste("seed", few[as.integer(res$object)])
    ud_expect(res, sprintf("%d generated objects, other routes", length(few)))
  } else {
    skip("the arrow R package is not installed (tools/test-env.sh builds it): the arrow Table route cannot run")
  }
})

test_that("the generator's finds stay fixed (its seed corpus)", {
  cli <- cli_binary()
  # the seeds whose objects came back changed before the fix of each
  found <- c(3L, 8L, 12L, 13L, 20L, 22L, 25L, 71L, 84L, 94L, 238L, 281L, 286L, 486L,
             534L, 1039L, 1222L, 1324L)
  res <- ud_run(lapply(found, gen_object), ud_routes, cli)
  res$object <- paste("seed", found[as.integer(res$object)])
  ud_expect(res, "the generator's seed corpus")
  expect_identical(sum(res$status != "bytes"), 0L)
  # and the smallest objects they came down to
  gen_classes()
  D <- function(x) structure(x, class = "Date")
  lt <- as.POSIXlt(.POSIXct(1e9, tz = "UTC"))
  dt_lt <- data.frame(a = 1)
  dt_lt$b <- lt
  dt_lt <- if (requireNamespace("data.table", quietly = TRUE)) data.table::as.data.table(dt_lt)
  minimal <- list(
    raw_struct = list(a = as.raw(1:3), b = "x", c = 1L),
    raw_union = list(as.raw(0:255), 1.5),
    raw_list_alone = list(as.raw(1), as.raw(2:3)),
    date_int_struct = list(a = D(1:2), b = "x"),
    date_int_alone = list(a = D(1:2)),
    difftime_units = list(as.difftime(1, units = "mins"), as.difftime(2, units = "days")),
    date_split = list(D(18686.5), D(1)),
    date_in_union_in_union = list(D(c(-21679, NA)), c(FALSE, TRUE),
                                  list(D(c(18686.5, 18321)), data.frame()), 1),
    complex_column_nested = list(s = data.frame(c1 = 1i), o = 1),
    logical_widened = list(list(1), NA, D(c(18686.5, 18322))),
    zero_columns = structure(list(), class = "data.frame", row.names = c(NA, -3L)),
    zero_columns_nested = list(a = structure(list(), class = "data.frame", row.names = 1:3), b = 1),
    row_names_only = list(a = structure(list(), row.names = c("a", "b"), class = "data.frame")),
    hms_order = structure(0, class = c("hms", "difftime"), units = "secs"),
    posixct_empty_named = structure(c(d = NA_real_), class = c("POSIXct", "POSIXt"), tzone = ""),
    computed_na = list(a = c(1, NA) * 2, b = "z"),
    computed_na_column = data.frame(x = c(1, NA) * 2),
    latin1_struct = list(a = c(iconv("caf\u00e9", "UTF-8", "latin1"), "x"), b = 1L),
    data_table_posixlt = dt_lt,
    data_table_nested = if (!is.null(dt_lt)) list(a = data.table::data.table(x = 1:2), b = "z")
  )
  minimal <- minimal[!vapply(minimal, is.null, TRUE)]
  res <- ud_run(minimal, ud_routes, cli)
  ud_expect(res, "the smallest objects found")
  expect_identical(sum(res$status != "bytes"), 0L)
})

test_that("lme4's stored fits and profiles, whose NAs R's arithmetic made, come back with R's bytes", {
  # (lme4's own test data, installed with it: tools/test-env.sh installs
  # r-cran-lme4)
  dir <- system.file("testdata", package = "lme4")
  if (!nzchar(dir)) skip("lme4 is not installed (tools/test-env.sh installs it)")
  cli <- cli_binary()
  files <- file.path(dir, c("badprof.rds", "gotway_hessianfly.rda", "tprfm1.RData"))
  objs <- list()
  for (f in files) {
    if (grepl("rds$", f)) {
      objs[["badprof"]] <- readRDS(f)
    } else {
      e <- new.env()
      for (o in load(f, e)) objs[[o]] <- get(o, e)
    }
  }
  expect_true(all(c("badprof", "gotway_hessianfly_fit", "gotway_hessianfly_prof", "tpr.fm1") %in%
                  names(objs)))
  # the NAs that differ from NA_real_ in their bits
  bits_differ <- function(x) {
    b <- serialize(x, NULL, xdr = TRUE)
    length(grepRaw(as.raw(c(0x7f, 0xf8, 0, 0, 0, 0, 0x07, 0xa2)), b, fixed = TRUE, all = TRUE))
  }
  expect_gt(bits_differ(objs$tpr.fm1), 0L)
  res <- ud_run(objs, ud_routes, cli)
  ud_expect(res, "lme4's stored fits and profiles")
  expect_identical(sum(res$status != "bytes"), 0L)
})

test_that("Biobase's objects saved before R 2.4 (S4 objects without the S4 bit) keep R's flags on every route", {
  # (Biobase's own test data, installed with it: tools/test-env.sh installs
  # r-bioc-biobase)
  dir <- system.file("unitTests", "VersionedClass_data", "2.0", package = "Biobase")
  if (!nzchar(dir)) skip("Biobase is not installed (tools/test-env.sh installs it)")
  cli <- cli_binary()
  names <- c("ExpressionSet", "AnnotatedDataFrame", "MultiSet", "SnpSet", "Versioned",
             "VersionedBiobase", "aggregator", "container", "phenoData")
  objs <- list()
  for (n in names) {
    e <- new.env()
    # (load() warns that they are pre-2.4 S4 objects)
    o <- suppressWarnings(load(file.path(dir, paste0(n, ".Rda")), e))
    objs[[n]] <- get(o[[1]], e)
  }
  # what makes them hard: S4 objects (typeof "S4") that R loads without
  # the S4 bit
  expect_true(all(vapply(objs, function(x) typeof(x) == "S4" && !isS4(x), TRUE)))
  res <- suppressWarnings(ud_run(objs, c(ud_routes, "a.rds", "b", "d", "e.rds"), cli))
  ud_expect(res, "Biobase's pre-2.4 S4 objects")
  expect_identical(sum(res$status != "bytes"), 0L)
})

test_that("glmmTMB's fits (an engine environment, external pointers) come back with R's bytes", {
  pkg <- "glmmTMB"
  if (!nzchar(system.file(package = pkg))) skip(paste(pkg, "is not installed (tools/test-env.sh installs it)"))
  cli <- cli_binary()
  dir <- local_tempdir()
  f <- file.path(dir, "fits.rds")
  # fitted in a child R process (glmmTMB's methods stay out of this one)
  callr::r(function(f, pkg) {
    suppressMessages(library(pkg, character.only = TRUE))
    m1 <- glmmTMB(count ~ mined + (1 | site), family = poisson, data = Salamanders)
    m2 <- suppressWarnings(glmmTMB(count ~ spp + mined + (1 | site), zi = ~spp,
                                   family = nbinom2, data = Salamanders))
    saveRDS(list(m1 = m1, m2 = m2), f)
  }, args = list(f = f, pkg = pkg))
  fits <- readRDS(f)
  expect_s3_class(fits$m1, "glmmTMB")
  res <- ud_run(fits, ud_routes, cli)
  ud_expect(res, "glmmTMB fits")
  expect_identical(sum(res$status != "bytes"), 0L)
})

test_that("damaged metadata of the new kinds gives a clear error or is left alone, never a crash", {
  skip_if_not_installed("arrow")
  dir <- local_tempdir()
  src <- file.path(dir, "x.rds")
  # a kept value's NaN payload: the "r" list travels in XDR too
  fit <- list(a = c(1, NA) * 2, f = y ~ x)
  environment(fit$f) <- list2env(list(v = c(NA_real_ * 3, 1)))
  saveRDS(fit, src)
  ipc <- file.path(dir, "x.arrow")
  rdata_to_ipc(src, ipc)
  # (arrow R warns that it leaves the formula out of its view)
  tab <- suppressWarnings(arrow::read_ipc_file(ipc, as_data_frame = FALSE))
  expect_true(all(c("r", "rdarrow.r") %in% suppressWarnings(names(tab$metadata))))
  back <- file.path(dir, "back.rds")
  ipc_to_rdata(ipc, back)
  expect_identical(serialize(readRDS(back), NULL), serialize(readRDS(src), NULL))
  # arrow R reads the ASCII "r" beside it
  expect_s3_class(suppressWarnings(as.data.frame(tab)), "data.frame")
  damaged <- file.path(dir, "damaged.arrow")
  write_with <- function(key, value) {
    t2 <- tab
    suppressWarnings(t2$metadata[[key]] <- value)
    suppressWarnings(arrow::write_ipc_file(t2, damaged))
  }
  # not an R serialization: a clear error naming the metadata
  write_with("rdarrow.r", "A\n3\nnot a stream")
  err <- expect_error(ipc_to_rdata(damaged, back), class = "rdarrow_error")
  expect_match(conditionMessage(err), "\"r\" schema metadata", fixed = TRUE)
  # NA bits that are not NA, not hex, or out of place: left alone
  df <- data.frame(x = c(1, NA) * 2)
  saveRDS(df, src)
  rdata_to_ipc(src, ipc)
  tab <- arrow::read_ipc_file(ipc, as_data_frame = FALSE)
  expect_match(tab$metadata$rdarrow, "^na\tx\t7ff80000000007a2\t2$", perl = TRUE)
  # a column whose NAs all came from arithmetic: one run
  src2 <- file.path(dir, "run.rds")
  ipc2 <- file.path(dir, "run.arrow")
  saveRDS(data.frame(x = rep(NA_real_, 1e5) * 2), src2)
  rdata_to_ipc(src2, ipc2)
  runs <- arrow::read_ipc_file(ipc2, as_data_frame = FALSE)$metadata$rdarrow
  expect_identical(runs, "na\tx\t7ff80000000007a2\t1-100000\n")
  ipc_to_rdata(ipc2, back)
  expect_identical(serialize(readRDS(back), NULL), serialize(readRDS(src2), NULL))
  for (note in c("na\tx\tzz\t2\n", "na\tx\t3ff0000000000000\t2\n", "na\tx\t7ff80000000007a2\t1,99999999999,-3\n",
                 "na\tnope\t7ff80000000007a2\t2\n", "na\tx\n")) {
    write_with("rdarrow", note)
    ipc_to_rdata(damaged, back)
    got <- readRDS(back)
    expect_identical(got$x[[1]], 2, info = note)
    expect_true(is.na(got$x[[2]]), info = note)
  }
})
