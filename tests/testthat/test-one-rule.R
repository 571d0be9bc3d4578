# One rule, asked by every front end: the file format from the path. R's
# arrow_to_rdata(), the command line's to-rdata and Python's single-cell
# writers make the same choice for the same name (the engine's
# path_is_rds()).

# What a written file is: "RData" (save()'s magic) or "rds".
or_kind <- function(path) {
  con <- gzfile(path, "rb")
  on.exit(close(con))
  magic <- readBin(con, "raw", 5L)
  if (identical(rawToChar(magic[1:3]), "RDX")) "RData" else "rds"
}

test_that("R, the command line and Python choose .rds or .RData from the name alike", {
  cli <- cli_binary()
  dir <- local_tempdir()
  names <- c("x.rds", "X.RDS", "x.Rds", "x.RData", "x.rda", "x.bin", "x", "x.rds.gz", "rds")
  want <- c("rds", "rds", "rds", "RData", "RData", "RData", "RData", "RData", "RData")
  src <- file.path(dir, "src.rds")
  saveRDS(data.frame(a = 1:2), src)
  ipc <- file.path(dir, "src.arrow")
  rdata_to_ipc(src, ipc)
  got_r <- got_cli <- character()
  for (n in names) {
    p <- file.path(dir, "r", n)
    dir.create(dirname(p), showWarnings = FALSE)
    arrow_to_rdata(rdata_to_arrow(src), p, name = "df")
    got_r[[n]] <- or_kind(p)
    p <- file.path(dir, "cli", n)
    dir.create(dirname(p), showWarnings = FALSE)
    lc_cli_run(cli, c("to-rdata", ipc, "-o", p, "--name", "df"))
    got_cli[[n]] <- or_kind(p)
  }
  expect_identical(unname(got_r), want)
  expect_identical(unname(got_cli), want)
  # Python's single-cell writers, each file read back by R
  pydir <- file.path(dir, "py")
  dir.create(pydir)
  out <- rt_python(c(
    "import sys, os, numpy as np, anndata, rdarrow",
    "a = anndata.AnnData(X=np.array([[1.0, 0.0], [2.0, 3.0]], dtype=np.float32))",
    "for n in sys.argv[2:]:",
    "    rdarrow.write_sce(a, os.path.join(sys.argv[1], n))",
    "    print(n, rdarrow._rdarrow.path_is_rds(n))"
  ), pydir, names)
  expect_identical(out, paste(names, ifelse(want == "rds", "True", "False")))
  got_py <- vapply(names, function(n) or_kind(file.path(pydir, n)), "")
  expect_identical(unname(got_py), want)
  # an .RData from Python holds the object under the file's name
  e <- new.env()
  expect_identical(load(file.path(pydir, "x.bin"), e), "x")
})
