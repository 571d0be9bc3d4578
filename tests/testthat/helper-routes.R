# Every route from an R object to Arrow and back, for the objects of real
# data files: the C stream (to arrow_to_rdata() directly, and through an
# arrow R Table), IPC file and stream, Parquet, and a stream cut into
# small batches. Each gives back what readRDS() reads of the file written.

# x and y are the same object: identical(), or, for an object holding
# environments (a formula's, a function's: two reads of one file never give
# identical() environments), the same bytes under serialize()
# (lc_same_bytes(), helper-lossless.R).
rt_same <- function(x, y) {
  identical(x, y) || lc_same_bytes(x, y)
}

# The routes' results for `x`: "ok", "differs" or the error message, by
# route. Warnings (an object's strings repaired) are muffled.
rt_routes <- function(x, routes = c("stream", "table", "ipc_file", "ipc_stream", "parquet", "chunked")) {
  dir <- local_tempdir()
  src <- file.path(dir, "x.rds")
  saveRDS(x, src)
  # what R's own circle gives: the object each route must give back
  ref <- readRDS(src)
  one <- function(route) {
    out <- file.path(dir, paste0(route, ".rds"))
    res <- tryCatch(withCallingHandlers({
      switch(route,
        stream = arrow_to_rdata(rdata_to_arrow(src), out),
        table = arrow_to_rdata(arrow::as_arrow_table(rdata_to_arrow(src)), out),
        ipc_file = {
          p <- file.path(dir, "x.arrow")
          rdata_to_ipc(src, p)
          ipc_to_rdata(p, out)
        },
        ipc_stream = {
          p <- file.path(dir, "x.arrows")
          rdata_to_ipc(src, p, format = "stream")
          ipc_to_rdata(p, out)
        },
        parquet = {
          p <- file.path(dir, "x.parquet")
          rdata_to_parquet(src, p)
          parquet_to_rdata(p, out)
        },
        chunked = arrow_to_rdata(rdata_to_arrow(src, chunk_size = 2L), out)
      )
      if (rt_same(ref, readRDS(out))) "ok" else "differs"
    }, warning = function(w) invokeRestart("muffleWarning")),
    error = function(e) conditionMessage(e))
    res
  }
  vapply(routes, one, character(1))
}

# Expect every route to give `x` back.
expect_every_route <- function(x, label) {
  if (!requireNamespace("arrow", quietly = TRUE)) {
    skip("the arrow R package is not installed (tools/test-env.sh builds it): the arrow Table route cannot run")
  }
  got <- rt_routes(x)
  bad <- got[got != "ok"]
  expect(length(bad) == 0L,
         sprintf("%s: not the same object back by %s", label,
                 paste(sprintf("%s (%s)", names(bad), bad), collapse = ", ")))
}

# Run Python code in the test environment's Python (RETICULATE_PYTHON); its
# output lines.
rt_python <- function(code, ...) {
  py <- Sys.getenv("RETICULATE_PYTHON")
  if (!nzchar(py) || !file.exists(py)) {
    skip("RETICULATE_PYTHON is not set (tools/test.sh sets it to .venv/bin/python): the Python consumers cannot be checked")
  }
  script <- tempfile(fileext = ".py")
  on.exit(unlink(script))
  writeLines(code, script)
  out <- suppressWarnings(system2(py, c(script, ...), stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop(paste(out, collapse = "\n"))
  out
}

# pyarrow (full validation and to_pylist()), Polars and DuckDB read each
# IPC file and Parquet file in `paths`: one line per file, "<path> ok
# <rows>" or the error.
rt_consumers_read <- function(paths) {
  rt_python(c(
    "import sys, pyarrow as pa, pyarrow.ipc as ipc, pyarrow.parquet as pq, polars as pl, duckdb",
    "for p in sys.argv[1:]:",
    "    try:",
    "        if p.endswith('.parquet'):",
    "            t = pq.read_table(p)",
    "            d = pl.read_parquet(p)",
    "            n = duckdb.sql(f\"select count(*) from (select * from '{p}')\").fetchall()[0][0]",
    "        else:",
    "            t = ipc.open_file(p).read_all()",
    "            d = pl.read_ipc(p)",
    "            n = duckdb.sql('select count(*) from (select * from t)').fetchall()[0][0]",
    "        t.validate(full=True)",
    "        t.to_pylist()",
    "        d.to_dicts()",
    "        assert n == t.num_rows == d.height, (n, t.num_rows, d.height)",
    "        print(p, 'ok', t.num_rows)",
    "    except Exception as e:",
    "        print(p, 'error', type(e).__name__, str(e).replace(chr(10), ' ')[:300])"
  ), paths)
}
