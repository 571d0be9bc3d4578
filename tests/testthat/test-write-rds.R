# write_rds() and write_rdata(): every object kind, in versions 2 and 3,
# XDR and ASCII, with every compression, below and above the block size:
# the decompressed bytes are those of saveRDS()/save() with compress =
# FALSE, readRDS()/load() give the objects back, and the files are one gzip
# member, bzip2 stream or xz stream that R's single-member readers read.

file_bytes <- function(f) readBin(f, "raw", file.size(f))
decompressed <- function(path) rdarrow:::rdata_decompressed_impl(path)
# the same object: R writes the same bytes for both (environments,
# external pointers and closures have no identical() across a file)
same_object <- function(a, b) identical(serialize(a, NULL), serialize(b, NULL))

# Objects of packages, made by real R: a Matrix, a model, S4 classes of
# Bioconductor and Seurat where they are installed.
package_objects <- function() {
  set.seed(46)
  d <- data.frame(y = rnorm(50), x = rnorm(50), g = gl(5, 10))
  objs <- list(
    fit = lm(y ~ x + g, data = d),
    glm = glm(I(y > 0) ~ x, family = binomial, data = d),
    dgc = Matrix::rsparsematrix(40, 30, 0.1),
    dge = Matrix::Matrix(matrix(rnorm(12), 3)),
    fits = lapply(1:5, function(i) lm(y ~ poly(x, i), data = d))
  )
  # (Bioconductor's and Seurat's packages are no dependency: named by
  # variables, where they are installed)
  sce <- "SingleCellExperiment"
  s4v <- "S4Vectors"
  seurat <- "SeuratObject"
  if (requireNamespace(sce, quietly = TRUE) && requireNamespace(s4v, quietly = TRUE)) {
    objs$sce <- getExportedValue(sce, "SingleCellExperiment")(
      assays = list(counts = Matrix::rsparsematrix(20, 10, 0.3)),
      colData = getExportedValue(s4v, "DataFrame")(cond = rep(c("a", "b"), 5))
    )
  }
  if (requireNamespace(seurat, quietly = TRUE)) {
    e <- new.env()
    utils::data("pbmc_small", package = seurat, envir = e)
    objs$pbmc <- e$pbmc_small
  }
  objs
}

test_that("write_rds() writes saveRDS()'s bytes for every object kind, version and format", {
  skip_on_cran()
  objs <- c(writer_objects(), package_objects())
  dir <- local_tempdir()
  ref <- file.path(dir, "ref.rds")
  f <- file.path(dir, "x.rds")
  for (nm in names(objs)) for (ver in 2:3) for (ascii in c(FALSE, TRUE)) {
    label <- sprintf("%s, version %d%s", nm, ver, if (ascii) ", ascii" else "")
    saveRDS(objs[[nm]], ref, version = ver, ascii = ascii, compress = FALSE)
    write_rds(objs[[nm]], f, compress = FALSE, version = ver, ascii = ascii)
    expect_identical(file_bytes(f), file_bytes(ref), label = label)
    # what R itself reads back from its own file (a version 2 file holds
    # no compact sequences, a closure read back loses its byte code...)
    expect_true(same_object(readRDS(f), readRDS(ref)), label = paste(label, "read back"))
  }
  # every compression, on the whole collection at once
  all <- objs
  # (ASCII once, with gzip: the compression does not see the format)
  for (ver in 2:3) for (ascii in c(FALSE, TRUE)) {
    for (cmp in if (ascii) list(TRUE) else list(TRUE, "gzip", "bzip2", "xz")) {
      # R's bytes at the same moment: calling a closure marks it for the
      # JIT compiler, and the objects' environments reach the test's
      # helpers
      saveRDS(all, ref, version = ver, ascii = ascii, compress = FALSE)
      label <- sprintf("all objects, version %d%s, %s", ver, if (ascii) ", ascii" else "", cmp)
      write_rds(all, f, compress = cmp, version = ver, ascii = ascii, threads = 2)
      expect_identical(decompressed(f), file_bytes(ref), label = label)
      expect_true(same_object(readRDS(f), readRDS(ref)), label = paste(label, "read back"))
      expect_true(same_object(read_rds(f), readRDS(ref)), label = paste(label, "read_rds()"))
    }
  }
})

test_that("write_rdata() writes save()'s bytes, objects found as save() finds them", {
  skip_on_cran()
  objs <- c(writer_objects()[c("int", "strs", "df", "fun_bc", "cyc", "s4", "xp", "seq")],
            package_objects()["fit"])
  env <- list2env(objs, envir = new.env(parent = emptyenv()))
  dir <- local_tempdir()
  ref <- file.path(dir, "ref.RData")
  f <- file.path(dir, "x.RData")
  for (ver in 2:3) for (ascii in c(FALSE, TRUE)) {
    label <- sprintf("version %d%s", ver, if (ascii) ", ascii" else "")
    save(list = names(objs), envir = env, file = ref, version = ver, ascii = ascii, compress = FALSE)
    write_rdata(list = names(objs), envir = env, file = f, version = ver, ascii = ascii,
                compress = FALSE)
    expect_identical(file_bytes(f), file_bytes(ref), label = label)
    for (cmp in c("gzip", "bzip2", "xz")) {
      write_rdata(list = names(objs), envir = env, file = f, version = ver, ascii = ascii,
                  compress = cmp)
      expect_identical(decompressed(f), file_bytes(ref), label = paste(label, cmp))
      back <- new.env()
      expect_identical(load(f, back), names(objs))
      r_back <- new.env()
      load(ref, r_back)
      for (nm in names(objs)) {
        expect_true(same_object(back[[nm]], r_back[[nm]]), label = paste(label, cmp, nm))
      }
    }
  }
  # names as save() takes them: symbols and strings in `...`, `list`, and
  # objects of enclosing environments; the defaults are save()'s
  a1 <- 1:3
  b1 <- list(x = "y")
  local({
    c1 <- "inner"
    write_rdata(a1, "b1", list = "c1", file = f)
    save(a1, "b1", list = "c1", file = ref)
  })
  expect_identical(decompressed(f), decompressed(ref))
  expect_identical(file_bytes(f)[1:2], as.raw(c(0x1f, 0x8b)))
  # ascii = TRUE is uncompressed by default, as save() writes it
  write_rdata(a1, file = f, ascii = TRUE)
  save(a1, file = ref, ascii = TRUE)
  expect_identical(file_bytes(f), file_bytes(ref))
  expect_error(write_rdata(a1, not_there, file = f), "object 'not_there' not found",
               class = "rdarrow_error_usage")
  expect_warning(write_rdata(file = f), "nothing specified")
  expect_identical(load(f, new.env()), character())
})

test_that("files above the block size are one member or stream, read by R and on every core", {
  skip_on_cran()
  set.seed(3)
  n <- 1e6
  big <- list(
    frame = data.frame(i = seq_len(n), d = round(rnorm(n), 4),
                       s = sample(c("alpha", "beta", "\u00e9t\u00e9", NA), n, TRUE),
                       f = factor(sample(letters, n, TRUE))),
    m = Matrix::rsparsematrix(2000, 3000, 0.05)
  )
  dir <- local_tempdir()
  ref <- file.path(dir, "ref.rds")
  for (ver in 2:3) {
    saveRDS(big, ref, version = ver, compress = FALSE)
    want <- file_bytes(ref)
    expect_gt(length(want), 3 * 8 * 2^20)
    for (cmp in if (ver == 3) c("gzip", "bzip2", "xz") else "gzip") {
      label <- sprintf("version %d, %s", ver, cmp)
      f <- file.path(dir, paste0("big-", cmp, ".rds"))
      # xz at level 1: the blocks' joining is what is tested here, not xz
      write_rds(big, f, compress = cmp, version = ver,
                compression_level = if (cmp == "xz") 1 else NULL, threads = 2)
      expect_identical(decompressed(f), want, label = label)
      expect_identical(readRDS(f), big, label = paste(label, "readRDS()"))
      expect_identical(read_rds(f), big, label = paste(label, "read_rds()"))
      if (cmp == "gzip") {
        # R 4.2's gzcon() reads one member only
        con <- gzcon(file(f, "rb"))
        expect_identical(readRDS(con), big, label = paste(label, "gzcon()"))
        close(con)
      }
      tool <- c(gzip = "gzip", bzip2 = "bzip2", xz = "xz")[[cmp]]
      if (nzchar(Sys.which(tool))) {
        expect_identical(system2(tool, c("-t", shQuote(f))), 0L, label = paste(tool, "-t"))
      }
    }
  }
})

test_that("the bytes do not depend on the thread count, and damaged indexes are never read wrongly", {
  skip_on_cran()
  set.seed(9)
  x <- list(a = rnorm(1.3e6), b = sample(1:100, 1.7e6, TRUE)) # two blocks and a part
  dir <- local_tempdir()
  for (cmp in c("gzip", "bzip2", "xz")) {
    files <- vapply(c(1, 3), function(t) {
      f <- file.path(dir, sprintf("%s-%d.rds", cmp, t))
      write_rds(x, f, compress = cmp, compression_level = 1, threads = t)
      f
    }, "")
    expect_identical(file_bytes(files[[2]]), file_bytes(files[[1]]), label = paste(cmp, "3 threads"))
  }
  # the gzip header's index (subfield "Rd" of the extra field): each
  # recorded block start changed; read as saved, or refused, never wrongly
  f <- file.path(dir, "gzip-1.rds")
  bytes <- file_bytes(f)
  expect_identical(bytes[4], as.raw(4)) # FEXTRA
  expect_identical(rawToChar(bytes[13:14]), "Rd")
  count <- readBin(bytes[23:24], "integer", size = 2, endian = "little")
  expect_gte(count, 2L)
  for (k in seq_len(count)) for (delta in c(-1, 1, 4, 1e6)) {
    m <- bytes
    at <- 25 + 8 * (k - 1)
    offset <- sum(as.numeric(m[at:(at + 5)]) * 256^(0:5)) + delta
    m[at:(at + 7)] <- as.raw(floor(offset / 256^(0:7)) %% 256)
    g <- file.path(dir, "mutated.rds")
    writeBin(m, g)
    got <- tryCatch(read_rds(g), rdarrow_error = function(e) e)
    if (!inherits(got, "rdarrow_error")) {
      expect_identical(got, x, label = sprintf("start %d moved by %g", k, delta))
    }
  }
})

test_that("long vectors and any object R can serialize are written; R's own error otherwise", {
  skip_on_cran()
  dir <- local_tempdir()
  f <- file.path(dir, "long.rds")
  # a raw vector of more than 2^31 - 1 bytes (a long vector)
  long <- raw(2^31 + 10)
  long[c(1, 2^31 + 10)] <- as.raw(c(7, 9))
  write_rds(long, f)
  back <- readRDS(f)
  expect_identical(length(back), length(long))
  expect_true(identical(back, long))
  rm(back, long)
  invisible(gc())
  # nested deeper than R's serializer's C stack: R's error, the old file kept
  deep <- list()
  for (i in 1:200000) deep <- list(deep)
  writeLines("old", f)
  err <- tryCatch(write_rds(deep, f), rdarrow_error = function(e) e)
  expect_s3_class(err, "rdarrow_error")
  expect_match(conditionMessage(err), "C stack")
  expect_false(inherits(err, "rdarrow_error_interrupted"))
  expect_identical(readLines(f), "old")
  expect_identical(list.files(dir, pattern = "rdarrow"), character())
  # the failure leaves nothing behind for the session's next calls
  expect_identical(decompressed(f), charToRaw("old\n"))
  write_rds(1:3, f)
  expect_identical(readRDS(f), 1:3)
  expect_error(write_rds(1, file.path(dir, "no", "such", "dir.rds")), class = "rdarrow_error_usage")
  expect_error(write_rds(1, f, compress = "lz4"), "compress", class = "rdarrow_error_usage")
})

# Self-contained (runs in a child R process, see lc_run_in_children()):
# each file of `files` loaded as R loads it, then its objects written by
# write_rdata() (gzip) and save() (uncompressed) in versions 2 and 3; the
# rows say whether the decompressed bytes are the same.
wr_corpus_child <- function(files, root, progress, helper) {
  h <- new.env()
  for (p in helper) sys.source(p, envir = h)
  rows <- h$corpus_rows(root, progress)
  ref <- tempfile(fileext = ".RData")
  out <- tempfile(fileext = ".RData")
  for (f in files) {
    rows$flush()
    opened <- h$corpus_open(f, progress)
    if (is.null(opened$kind)) {
      rows$add(f, NA_character_, NA_character_, "unloadable", "R cannot load() or readRDS() it")
      next
    }
    names <- ls(opened$env, all.names = TRUE, sorted = TRUE)
    for (ver in 2:3) {
      st <- tryCatch({
        save(list = names, envir = opened$env, file = ref, compress = FALSE, version = ver)
        rdarrow::write_rdata(list = names, envir = opened$env, file = out, version = ver)
        same <- identical(rdarrow:::rdata_decompressed_impl(out), readBin(ref, "raw", file.size(ref)))
        if (same) c("identical", "") else c("different", "the decompressed bytes differ from save()'s")
      }, error = function(e) c("error", conditionMessage(e)))
      rows$add(f, paste(names, collapse = ","), paste0("v", ver), st[[1]], st[[2]])
    }
  }
  rows$flush()
  invisible(NULL)
}

test_that("every object of the peer corpus is written with save()'s bytes", {
  skip_on_cran()
  dir <- corpus_dir("write_rdata() of the peer corpus is not run")
  skip_if_not_installed("callr")
  root <- paste0(dir, "/")
  files <- corpus_files(dir)
  res <- lc_run_in_children(wr_corpus_child, files, root, list(helper = corpus_helper_file()))
  expect_gt(sum(res$status == "identical"), 500L)
  bad <- res[!res$status %in% c("identical", "unloadable"), , drop = FALSE]
  expect(nrow(bad) == 0L, sprintf("%d of %d writes differ or fail, e.g. %s", nrow(bad), nrow(res),
                                  paste(utils::head(sprintf("%s (%s): %s %s", bad$file, bad$route,
                                                            bad$status, bad$message), 5),
                                        collapse = "; ")))
})
