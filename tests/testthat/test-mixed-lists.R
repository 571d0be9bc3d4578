# Every object with data into Arrow: lists whose elements differ in type
# (a named list a struct of one row, an unnamed one a dense union), S4
# objects (a struct of their slots), S4 vectors (their vector); what arrow
# R makes of them; lme4's fits and profiles back with the bytes R writes;
# slots read by @ paths in a SingleCellExperiment; what stays refused.
# (Every route of the circle for these objects: test-lossless-circle.R,
# whose objects include them; Python, DuckDB, Polars and Spark:
# python/tests/test_mixed_lists.py.)

mixed_file <- function(dir) {
  lc_classes()
  f <- file.path(dir, "mixed.RData")
  res <- list(coef = c(a = 1.5, b = -2), n = 10L, method = "ols", ok = TRUE)
  unnamed <- list(1:3, "a", c(2.5, NA), NULL, list(1, "b"))
  df <- data.frame(id = 1:3)
  df$l <- list(1:2, "a", NULL)
  rec <- methods::new("lcRecord", num = c(1, 2), chr = "z", lst = list(1L, "a"),
                      mat = matrix(c(1.5, 2.5, 3.5, 4.5), 2L), fac = factor("p"))
  cnt <- methods::new("lcCount", 1:3, note = "n")
  fun <- function(x) x + 1
  frm <- y ~ x
  env <- new.env()
  save(res, unnamed, df, rec, cnt, fun, frm, env, file = f)
  f
}

test_that("a named list of mixed types is a struct, an unnamed one and a list column a dense union", {
  f <- mixed_file(local_tempdir())
  s <- nanoarrow::infer_nanoarrow_schema(rdata_to_arrow(f, object = "res"))
  expect_identical(s$children$res$format, "+s")
  expect_identical(names(s$children$res$children), c("coef", "n", "method", "ok"))
  s <- nanoarrow::infer_nanoarrow_schema(rdata_to_arrow(f, object = "unnamed"))
  expect_match(s$children$unnamed$format, "^\\+ud:")
  s <- nanoarrow::infer_nanoarrow_schema(rdata_to_arrow(f, object = "df"))
  expect_match(s$children$l$format, "^\\+ud:")
  s <- nanoarrow::infer_nanoarrow_schema(rdata_to_arrow(f, object = "rec"))
  expect_identical(names(s$children$rec$children), c("num", "chr", "lst", "mat", "fac"))
  s <- nanoarrow::infer_nanoarrow_schema(rdata_to_arrow(f, object = "cnt"))
  expect_identical(s$children$cnt$format, "i")
})

test_that("arrow R takes what rdata_to_arrow() gives and validates it", {
  skip_if_not_installed("arrow")
  f <- mixed_file(local_tempdir())
  for (o in c("res", "unnamed", "df", "rec", "cnt")) {
    tab <- arrow::as_arrow_table(rdata_to_arrow(f, object = o))
    expect_true(tab$Validate(), label = o)
    expect_gt(tab$num_rows, 0L)
    out <- file.path(local_tempdir(), "back.rds")
    arrow_to_rdata(tab, out)
    e <- new.env()
    load(f, e)
    expect_true(identical(readRDS(out), get(o, e)), label = o)
  }
  # the struct's values as arrow R reads them
  tab <- arrow::as_arrow_table(rdata_to_arrow(f, object = "res"))
  coef <- tab$res$chunk(0)$field(0)$as_vector()
  expect_identical(as.numeric(unlist(coef)), c(1.5, -2))
})

test_that("raw vectors keep their type among elements of other types, on every route", {
  # (identical(); a data frame's list column comes back with other bytes
  # than R's, raw or not: issue 55's attributes)
  dir <- local_tempdir()
  objs <- list(
    named = list(a = as.raw(1:3), b = "x", c = 1L),
    unnamed = list(as.raw(0:255), 1.5),
    nested = list(a = 1, r = list(as.raw(1), "z")),
    column = local({ d <- data.frame(i = 1:2); d$l <- list(as.raw(7), "w"); d })
  )
  f <- file.path(dir, "raw.rds")
  out <- file.path(dir, "back.rds")
  for (n in names(objs)) {
    saveRDS(objs[[n]], f)
    rdata_to_ipc(f, file.path(dir, "x.arrow"))
    ipc_to_rdata(file.path(dir, "x.arrow"), out)
    expect_identical(readRDS(out), objs[[n]], info = paste(n, "IPC"))
    rdata_to_parquet(f, file.path(dir, "x.parquet"))
    parquet_to_rdata(file.path(dir, "x.parquet"), out)
    expect_identical(readRDS(out), objs[[n]], info = paste(n, "Parquet"))
    arrow_to_rdata(rdata_to_arrow(f), out)
    expect_identical(readRDS(out), objs[[n]], info = paste(n, "C stream"))
  }
})

test_that("functions, formulas and environments stay refused, naming the object and why", {
  f <- mixed_file(local_tempdir())
  for (o in c("fun", "env")) {
    err <- expect_error(rdata_to_arrow(f, object = o), class = "rdarrow_error")
    expect_match(conditionMessage(err), o, fixed = TRUE)
    expect_match(conditionMessage(err), "no Arrow equivalent (it is not data", fixed = TRUE)
  }
  err <- expect_error(rdata_to_arrow(f, object = "frm"), class = "rdarrow_error")
  expect_match(conditionMessage(err), "formula")
  # the file's own choice is unchanged: S4 objects are converted when named
  g <- file.path(local_tempdir(), "two.RData")
  v <- 1:3
  rec <- methods::new("lcRecord", num = 1, chr = "a", lst = list(), mat = matrix(1), fac = factor("x"))
  save(v, rec, file = g)
  expect_identical(nanoarrow::infer_nanoarrow_schema(rdata_to_arrow(g))$children$v$format, "i")
})

test_that("lme4's fits and profiles come back with the bytes R's save() and load() give", {
  # (CI installs lme4 with the set-up; skipped loudly where it is missing;
  # found, not loaded here: its classes would mask others in this session)
  pkg <- "lme4"
  if (!nzchar(system.file(package = pkg))) skip(paste(pkg, "is not installed (tools/test-env.sh installs it)"))
  dir <- local_tempdir()
  # in a child R process
  res <- callr::r(function(dir, lib, pkg) {
    .libPaths(c(lib, .libPaths()))
    suppressMessages({
      library(pkg, character.only = TRUE)
      library(rdarrow)
    })
    fm1 <- lmer(Reaction ~ Days + (Days | Subject), sleepstudy)
    gm1 <- glmer(cbind(incidence, size - incidence) ~ period + (1 | herd), data = cbpp,
                 family = binomial)
    pr1 <- profile(fm1, which = "beta_")
    f <- file.path(dir, "lme4.RData")
    save(fm1, gm1, pr1, file = f)
    e <- new.env()
    load(f, e)
    out <- character()
    for (o in c("fm1", "gm1", "pr1")) for (route in c("ipc", "parquet")) {
      x <- file.path(dir, paste0(o, ".", route))
      back <- file.path(dir, paste0(o, "-", route, ".rds"))
      if (route == "ipc") {
        rdata_to_ipc(f, x, object = o)
        ipc_to_rdata(x, back)
      } else {
        rdata_to_parquet(f, x, object = o)
        parquet_to_rdata(x, back)
      }
      same <- identical(serialize(readRDS(back), NULL, version = 2L),
                        serialize(get(o, e), NULL, version = 2L))
      out[[paste(o, route)]] <- if (same) "same bytes" else "different"
    }
    out
  }, args = list(dir = dir, lib = .libPaths()[[1]], pkg = pkg))
  expect_identical(unname(res), rep("same bytes", 6L), info = paste(names(res), res, collapse = "; "))
})

test_that("@ paths reach into a SingleCellExperiment's slots", {
  # (found, not loaded here: DelayedArray's Array class would mask arrow's)
  pkg <- "SingleCellExperiment"
  if (!nzchar(system.file(package = pkg))) skip(paste(pkg, "is not installed (tools/test-env.sh installs it)"))
  dir <- local_tempdir()
  f <- file.path(dir, "sce.rds")
  ref <- callr::r(function(f, pkg) {
    suppressMessages(library(pkg, character.only = TRUE))
    counts <- matrix(c(0L, 3L, 1L, 0L, 5L, 2L), 2L, dimnames = list(c("g1", "g2"), paste0("c", 1:3)))
    sce <- SingleCellExperiment(assays = list(counts = counts),
                                colData = DataFrame(group = c("a", "b", "a")))
    saveRDS(sce, f)
    list(counts = sce@assays@data@listData$counts, group = sce@colData@listData$group,
         rownames = sce@colData@rownames)
  }, args = list(f = f, pkg = pkg))
  got <- read_rdata(f, objects = c("sce@assays@data@listData$counts", "sce@colData@listData$group"))
  expect_identical(got[[1]], ref$counts)
  expect_identical(got[[2]], ref$group)
  # the same through Arrow: the matrix as a table of its columns
  tab <- rdata_to_arrow(f, object = "sce@colData")
  expect_identical(names(nanoarrow::infer_nanoarrow_schema(tab)$children), "sce@colData")
  listing <- rdata_objects(f, recursive = TRUE)
  expect_true(all(c("sce@assays", "sce@colData", "sce@colData@listData$group") %in% listing$name))
  expect_identical(listing$class[listing$name == "sce@colData"], "DFrame")
})

test_that("every peer-corpus object that converted before converts with the same schema", {
  dir <- corpus_dir("the peer corpus's schemas are not compared")
  # peer-schemas.tsv: each object that converted before lists and S4
  # objects did, with its schema then (schema_signature())
  want <- read.delim(test_path("peer-schemas.tsv"), quote = "\"", colClasses = "character",
                     na.strings = character(), comment.char = "")
  expect_gt(nrow(want), 500L)
  got <- vapply(seq_len(nrow(want)), function(k) {
    f <- file.path(dir, want$file[[k]])
    tryCatch({
      s <- suppressWarnings(rdata_to_arrow(f, object = want$object[[k]]))
      on.exit(s$release())
      schema_signature(nanoarrow::infer_nanoarrow_schema(s))
    }, error = function(e) paste("error:", conditionMessage(e)))
  }, "")
  bad <- which(got != want$schema)
  expect(length(bad) == 0L, sprintf("%d objects changed schema:\n%s", length(bad),
    paste(sprintf("  %s [%s]: was %s, now %s", want$file[bad], want$object[bad],
                  want$schema[bad], got[bad]), collapse = "\n")))
  # and more convert now: count the file's objects that convert
  files <- corpus_files(dir)
  n <- 0L
  for (f in files) {
    objs <- tryCatch(rdata_objects(f)$name, error = function(e) character())
    for (o in objs) {
      ok <- tryCatch({
        s <- suppressWarnings(rdata_to_arrow(f, object = o))
        s$release()
        TRUE
      }, error = function(e) FALSE)
      n <- n + ok
    }
  }
  cat(sprintf("\npeer corpus: %d objects converted before, %d now\n", nrow(want), n))
  expect_gt(n, nrow(want) + 100L)
})

test_that("a slot read alone is built alone, and a damaged file gives a clear error", {
  lc_classes()
  dir <- local_tempdir()
  f <- file.path(dir, "big.rds")
  # two large slots: the one asked for is decoded, the other stays in the
  # stream (a payload of more than 4096 elements)
  rec <- methods::new("lcRecord", num = as.numeric(1:10000), chr = "a",
                      lst = list(big = seq(0.5, 5000, by = 0.5)), mat = matrix(1:4, 2L),
                      fac = factor("p"))
  saveRDS(rec, f, compress = FALSE)
  expect_identical(read_rdata(f, objects = "big@num")[[1]], rec@num)
  expect_identical(read_rdata(f, objects = "big@lst$big")[[1]], rec@lst$big)
  expect_identical(read_rdata(f, objects = "big@lst")[[1]], rec@lst)
  for (comp in c("gzip", "xz")) {
    g <- file.path(local_tempdir(), "big.rds")
    saveRDS(rec, g, compress = comp)
    expect_identical(read_rdata(g, objects = "big@mat")[[1]], rec@mat)
    expect_identical(read_rdata(g, objects = "big@num")[[1]], rec@num)
  }
  # cut inside the first large slot, and inside the last
  bytes <- readBin(f, "raw", file.size(f))
  for (keep in c(2000L, length(bytes) - 100L)) {
    cut <- file.path(dir, sprintf("cut-%d.rds", keep))
    writeBin(bytes[seq_len(keep)], cut)
    err <- expect_error(read_rdata(cut, objects = "cut@num"), class = "rdarrow_error")
    expect_match(conditionMessage(err), "truncated|ends|unexpected end|only [0-9]+ remain", ignore.case = TRUE)
  }
})
