"""Every file rdarrow writes is read by every reader of R's files.

The matrix: writers (R's write_rds(), write_rdata(), arrow_to_rdata(),
ipc_to_rdata() and parquet_to_rdata(); Python's write_rds() and
write_rdata(); the command line's to-rdata) x compressions (gzip, bzip2,
xz) x sizes (a small data frame, and one of more than three 8 MiB blocks).
Every file is read back by R by path (gzip also through gzcon() and url()
from a loopback HTTP server) as the frame R made, is read by pyreadr,
Python's rdata and rds2py as each reads R's own saveRDS()/save() file of the
same frame, passes gzip -t / bzip2 -t / xz -t, and is one gzip member, one
bzip2 stream or one xz stream.
"""

import concurrent.futures
import functools
import http.server
import math
import multiprocessing
import os
import re
import shutil
import subprocess
import threading
import warnings
import zlib
from pathlib import Path

import pytest

import rdarrow

SIZES = {"small": 300, "large": 1_300_000}
COMPRESSIONS = ["gzip", "bzip2", "xz"]
# xz at level 1: how the blocks are joined is tested here, not xz itself
LEVEL = {"gzip": None, "bzip2": None, "xz": 1}
WRITERS = [
    "write_rds", "write_rdata", "arrow_to_rdata", "ipc_to_rdata", "parquet_to_rdata",
    "py_write_rds", "py_write_rdata", "cli",
]

FRAME_R = r"""
make_frame <- function(n) {
  set.seed(46)
  df <- data.frame(id = sample.int(1e6L, n, TRUE), x = round(rnorm(n), 2), y = sample.int(400L, n, TRUE) / 4)
  # factors, logicals and strings in the small frame only (R-free readers
  # convert them one by one)
  if (n < 1000) {
    df$f <- factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi"))
    df$b <- sample(c(TRUE, FALSE, NA), n, TRUE)
    df$s <- sample(c("a", "bc", "\u00e9t\u00e9", NA), n, TRUE)
  }
  df
}
"""


def _ext(writer):
    return ".RData" if writer in ("write_rdata", "py_write_rdata") else ".rds"


def _cli(root):
    """The command-line binary, built (or found up to date) by cargo."""
    manifest = root / "src" / "rust" / "Cargo.toml"
    if shutil.which("cargo") is None and not (Path.home() / ".cargo" / "bin" / "cargo").exists():
        pytest.skip("cargo is not available to build the command line")
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    subprocess.run([cargo, "build", "--release", "-q", "-p", "rdarrow-cli", "--manifest-path", str(manifest)],
                   check=True)
    target = os.environ.get("CARGO_TARGET_DIR", str(root / "src" / "rust" / "target"))
    return str(Path(target) / "release" / "rdarrow")


@pytest.fixture(scope="module")
def matrix(tmp_path_factory, run_r):
    """Every (writer, compression, size) file, and R's own reference files."""
    d = tmp_path_factory.mktemp("matrix")
    sizes = ", ".join(f"{k} = {v}" for k, v in SIZES.items())
    # R: the reference files, the sources of the Arrow routes, and R's writers
    run_r(FRAME_R + f"""
    library(rdarrow)
    out <- "{d}"
    for (size in names(c({sizes}))) {{
      n <- c({sizes})[[size]]
      df <- make_frame(n)
      # R's own files: gzip, read by every reader, for the values; bzip2
      # and xz (small) for which readers read them at all
      for (cmp in if (size == "small") c("gzip", "bzip2", "xz") else "gzip") {{
        # xz at level 1, as rdarrow's xz files here
        con <- function() switch(cmp, gzip = gzfile, bzip2 = bzfile, xz = function(f, m) xzfile(f, m, compression = 1))
        ref <- con()(file.path(out, paste0("ref-", cmp, "-", size, ".rds")), "wb")
        saveRDS(df, ref)
        close(ref)
        ref <- con()(file.path(out, paste0("ref-", cmp, "-", size, ".RData")), "wb")
        save(df, file = ref)
        close(ref)
      }}
      src <- file.path(out, paste0("src-", size, ".rds"))
      write_rds(df, src, compress = FALSE)
      rdata_to_ipc(src, file.path(out, paste0("src-", size, ".arrow")))
      rdata_to_parquet(src, file.path(out, paste0("src-", size, ".parquet")))
      for (cmp in c("gzip", "bzip2", "xz")) {{
        lvl <- if (cmp == "xz") 1 else NULL
        name <- function(w, ext = ".rds") file.path(out, paste0(w, "-", cmp, "-", size, ext))
        write_rds(df, name("write_rds"), compress = cmp, compression_level = lvl)
        write_rdata(df, file = name("write_rdata", ".RData"), compress = cmp, compression_level = lvl)
        arrow_to_rdata(rdata_to_arrow(src), name("arrow_to_rdata"), compress = cmp, compression_level = lvl)
        ipc_to_rdata(file.path(out, paste0("src-", size, ".arrow")), name("ipc_to_rdata"),
                     compress = cmp, compression_level = lvl)
        parquet_to_rdata(file.path(out, paste0("src-", size, ".parquet")), name("parquet_to_rdata"),
                         compress = cmp, compression_level = lvl)
      }}
    }}
    """)
    exe = _cli(Path(__file__).resolve().parents[2])
    for size in SIZES:
        table = rdarrow.read_table(d / f"src-{size}.rds")
        for cmp in COMPRESSIONS:
            rdarrow.write_rds(table, d / f"py_write_rds-{cmp}-{size}.rds", compress=cmp,
                              compression_level=LEVEL[cmp])
            rdarrow.write_rdata({"df": table}, d / f"py_write_rdata-{cmp}-{size}.RData", compress=cmp,
                                compression_level=LEVEL[cmp])
            args = [exe, "to-rdata", str(d / f"src-{size}.parquet"), "-o", str(d / f"cli-{cmp}-{size}.rds"),
                    "--compress", cmp]
            if LEVEL[cmp] is not None:
                args += ["--level", str(LEVEL[cmp])]
            subprocess.run(args, check=True)
    files = {(w, c, s): d / f"{w}-{c}-{s}{_ext(w)}" for w in WRITERS for c in COMPRESSIONS for s in SIZES}
    for f in files.values():
        assert f.exists(), f
    return d, files


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_r_reads_every_file_by_path_gzcon_and_url(matrix, run_r):
    d, files = matrix
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(d)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        listing = d / "files.tsv"
        listing.write_text("writer\tcompression\tsize\tname\n" + "".join(
            f"{w}\t{c}\t{s}\t{f.name}\n" for (w, c, s), f in files.items()))
        out = run_r(FRAME_R + f"""
        listing <- read.delim("{listing}", stringsAsFactors = FALSE)
        files <- lapply(seq_len(nrow(listing)), function(i) unlist(listing[i, ]))
        want <- list(small = make_frame({SIZES['small']}), large = make_frame({SIZES['large']}))
        base <- "http://127.0.0.1:{server.server_address[1]}/"
        read_one <- function(how, path, rdata) {{
          con <- switch(how, path = path, gzcon = gzcon(file(path, "rb")), url = url(paste0(base, basename(path))))
          if (rdata) {{ e <- new.env(); load(con, e); if (!is.character(con)) close(con); e$df }}
          else {{ x <- readRDS(con); if (!is.character(con)) close(con); x }}
        }}
        for (f in files) {{
          path <- file.path("{d}", f[[4]])
          rdata <- grepl("RData$", path)
          for (how in c("path", if (f[[2]] == "gzip") c("gzcon", "url"))) {{
            got <- tryCatch(read_one(how, path, rdata), error = function(e) conditionMessage(e))
            ok <- identical(got, want[[f[[3]]]])
            cat(sprintf("%s %s %s %s %s\\n", f[[1]], f[[2]], f[[3]], how,
                        if (ok) "ok" else gsub("\\\\s+", "_", paste(format(got), collapse = " "))))
          }}
        }}
        """)
    finally:
        server.shutdown()
    lines = [line.split(" ", 4) for line in out.splitlines() if line.strip()]
    expected = sum(3 if c == "gzip" else 1 for (_, c, _) in files)
    assert len(lines) == expected
    bad = [line for line in lines if line[4] != "ok"]
    assert not bad, bad[:10]


def _norm(x):
    """A reader's result as plain values, NaN made comparable."""
    import numpy as np
    import pandas as pd

    if isinstance(x, pd.DataFrame):
        return {"frame": {str(k): _norm(v) for k, v in x.items()}, "index": _norm(x.index.to_numpy())}
    if isinstance(x, pd.Series):
        if isinstance(x.dtype, pd.CategoricalDtype):
            return {"categories": _norm(list(x.cat.categories)), "codes": _norm(x.cat.codes.to_numpy())}
        return _norm(x.to_numpy())
    if isinstance(x, np.ndarray):
        if x.dtype != object:
            # exact, NaN payloads included, and fast for long columns
            return ("array", x.dtype.str, x.shape, x.tobytes())
        return [_norm(v) for v in x.tolist()]
    if isinstance(x, dict):
        return {str(k): _norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, range)):
        return [_norm(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if x is pd.NA or x is pd.NaT:
        return "NA"
    if hasattr(x, "to_pandas"):
        return _norm(x.to_pandas())
    return repr(x)


def _read(reader, path):
    """`path` read by `reader` as plain values, or its refusal (in a worker
    process: the readers run two at a time)."""
    import pyreadr
    import rdata
    import rds2py

    rdata_file = str(path).endswith(".RData")
    read = {
        "pyreadr": lambda p: pyreadr.read_r(p),
        "rdata": lambda p: rdata.read_rda(p) if rdata_file else rdata.read_rds(p),
        "rds2py": lambda p: rds2py.read_rda(p) if rdata_file else rds2py.read_rds(p),
    }[reader]
    with warnings.catch_warnings():
        # rds2py warns about R classes it does not convert, for R's file too
        warnings.simplefilter("ignore")
        try:
            return True, _norm(read(str(path)))
        except Exception as e:  # noqa: BLE001 - a reader's own refusal
            return False, str(e)


def test_python_readers_read_every_file_as_they_read_r_s_own(matrix):
    d, files = matrix
    readers = ["pyreadr", "rdata", "rds2py"]
    refs = [(r, c, s, ext, d / f"ref-{c}-{s}{ext}") for r in readers for c in COMPRESSIONS for s in SIZES
            for ext in (".rds", ".RData") if c == "gzip" or s == "small"]
    ours = [(r, c, s, f.suffix, f) for r in readers for (w, c, s), f in files.items()]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        got_refs = list(pool.map(_read, [r for r, *_ in refs], [p for *_, p in refs]))
        got = list(pool.map(_read, [r for r, *_ in ours], [p for *_, p in ours]))
    want = {key[:4]: value for key, value in zip(refs, got_refs)}
    # R's own gzip files are read by every reader (rds2py reads no bzip2 or
    # xz file, R's own included)
    assert all(want[(r, "gzip", s, ext)][0] for r in readers for s in SIZES for ext in (".rds", ".RData"))
    read_any = 0
    for (r, c, s, ext, f), (ok, value) in zip(ours, got):
        if not want[(r, c, "small", ext)][0]:
            # a reader that does not read R's own file of this compression
            assert not ok, f"{r} reads {f.name} but not R's own {c} file"
            continue
        assert ok, f"{r} cannot read {f.name}: {value}"
        # the values of R's own file (the same stream, gzip-compressed)
        assert value == want[(r, "gzip", s, ext)][1], f"{r} reads {f.name} otherwise than R's own file"
        read_any += 1
    assert read_any >= len(readers) * len(WRITERS) * len(SIZES)


def test_every_file_passes_the_tools_and_is_one_member_or_stream(matrix):
    d, files = matrix
    tool = {"gzip": "gzip", "bzip2": "bzip2", "xz": "xz"}
    for (w, c, s), f in files.items():
        if shutil.which(tool[c]) is None:
            pytest.fail(f"{tool[c]} is not installed (tools/setup.sh installs it)")
        res = subprocess.run([tool[c], "-t", str(f)], capture_output=True, text=True)
        assert res.returncode == 0 and not res.stderr, (f.name, res.stderr)
        data = f.read_bytes()
        if c == "gzip":
            dec = zlib.decompressobj(31)
            dec.decompress(data)
            assert dec.eof and dec.unused_data == b"", f"{f.name}: not one gzip member"
        elif c == "bzip2":
            # (bzip2 -t above read it whole) a second stream would start on a
            # byte boundary with its header and a block's magic number
            again = re.search(rb"BZh[1-9]\x31\x41\x59\x26\x53\x59", data[4:])
            assert data[:3] == b"BZh" and again is None, f"{f.name}: not one bzip2 stream"
        else:
            listing = subprocess.run(["xz", "--robot", "--list", str(f)], capture_output=True, text=True,
                                     check=True).stdout
            totals = [line.split("\t") for line in listing.splitlines() if line.startswith("totals")][0]
            assert totals[1] == "1", f"{f.name}: {totals[1]} xz streams"
            if s == "large":
                assert int(totals[2]) > 3, f"{f.name}: {totals[2]} blocks"


def test_large_gzip_files_carry_the_index_and_read_back_in_parallel(matrix):
    d, files = matrix
    for (w, c, s), f in files.items():
        if c != "gzip" or s != "large":
            continue
        head = f.read_bytes()[:64]
        assert head[3] == 4 and head[12:14] == b"Rd", f"{f.name}: no block index in the header"
