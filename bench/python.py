"""rdarrow's Python package against the Python readers of R files (pyreadr,
the pure-Python `rdata`), all measured in the same run.

What it measures (the bench/ frame of bench.R: integer sequence, two
doubles, logical with NAs, character from 1000 words, factor, Date, POSIXct
in UTC; saved by R's save(), gzip), at each of --sizes rows:
  1. Reading to a pyarrow Table, median of --reps:
       rdarrow.read_table(file)
       pyreadr.read_r(file) + pyarrow.Table.from_pandas()
       rdata.read_rda(file) + pyarrow.Table.from_pandas()   (once at sizes
       above 1e6: it takes minutes)
     targets: rdarrow >= 10x faster than pyreadr, >= 200x faster than rdata.
  2. Reading to pandas: rdarrow.read_pandas() against pyreadr.read_r();
     target >= 4x faster.
  3. Peak memory of reading (VmHWM above VmRSS after the imports, in a fresh
     Python per reader, VmHWM reset through /proc/self/clear_refs):
     rdarrow.read_table() against pyreadr.read_r(); target <= 0.5x.
  4. Writing the table as .RData (gzip): rdarrow.write_rdata() against
     pyreadr.write_rdata(compress="gzip") (once above 1e6 rows); target
     >= 10x faster. The file
     rdarrow writes is read back by R and compared with identical().

With --qs DIR (the x.qs2 and x.rds that bench/qs.R keeps with
RDARROW_BENCH_KEEP=DIR): rdarrow.read_table() of the .qs2 file against the
same frame's gzip .rds, median of --reps; target: faster.

With --fst DIR (the x.fst that bench/fst.R keeps with
RDARROW_BENCH_KEEP=DIR): rdarrow.read_table() of the .fst file against
fstio.read_fst() (pip install fstio: PyPI's fst reader, pandas), median of
--reps, and the peak memory of each (a fresh Python each); target: <= 0.3x
fstio's time.

How to run (from the repository root, with the .venv of tools/setup.sh,
pyreadr and rdata installed from PyPI, and R with the rdarrow package):
  .venv/bin/python bench/python.py                       # 5e5 and 5e6 rows
  .venv/bin/python bench/python.py --sizes 2e5 --reps 3  # quick run
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def make_file(rows, folder):
    path = os.path.join(folder, f"frame-{rows}.RData")
    code = f'source("{HERE}/common.R"); df <- bench_frame({rows}); save(df, file = "{path}")'
    subprocess.run(["Rscript", "--vanilla", "-e", code], check=True)
    return path


def timed(f, reps):
    out = []
    for _ in range(reps):
        gc.collect()
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return out


PEAK = r"""
import sys, gc, importlib
def status(field):
    for line in open('/proc/self/status'):
        if line.startswith(field + ':'):
            return int(line.split()[1]) * 1024
import pyarrow as pa, pandas as pd, rdarrow
what, path, other = sys.argv[1], sys.argv[2], sys.argv[3]
other_module = importlib.import_module(other)
gc.collect()
open('/proc/self/clear_refs', 'w').write('5')
base = status('VmRSS')
if what == 'rdarrow':
    x = rdarrow.read_table(path)
elif other == 'fstio':
    x = other_module.read_fst(path)
else:
    x = other_module.read_r(path)
print(base, status('VmHWM'))
"""


def peak(what, path, other="pyreadr"):
    """Peak memory (bytes above the baseline) of reading `path` with
    rdarrow (`what` "rdarrow") or with the module `other` (pyreadr, fstio),
    in a fresh Python."""
    out = subprocess.run([sys.executable, "-c", PEAK, what, path, other], check=True, capture_output=True, text=True)
    base, hwm = map(int, out.stdout.split())
    return hwm - base


def qs_rows(folder, reps):
    """read_table() of a .qs2 file against the same frame's gzip .rds."""
    import rdarrow

    qs2 = os.path.join(folder, "x.qs2")
    rds = os.path.join(folder, "x.rds")
    t_qs2 = statistics.median(timed(lambda: rdarrow.read_table(qs2), reps))
    t_rds = statistics.median(timed(lambda: rdarrow.read_table(rds), reps))
    assert rdarrow.read_table(qs2).equals(rdarrow.read_table(rds))
    print("| read_table() of | s | vs gzip .rds |")
    print("|---|---:|---:|")
    print(f"| x.rds (gzip) | {t_rds:.2f} | 1.00 |")
    print(f"| x.qs2 (qs_save() defaults) | {t_qs2:.2f} | **{t_qs2 / t_rds:.2f}** |")


def fst_rows(folder, reps):
    """read_table() of an .fst file against fstio.read_fst()."""
    import fstio

    import rdarrow

    f = os.path.join(folder, "x.fst")
    t_ours = statistics.median(timed(lambda: rdarrow.read_table(f), reps))
    t_fstio = statistics.median(timed(lambda: fstio.read_fst(f), reps))
    peaks = {what: peak(what, f, "fstio") / 1e6 for what in ("rdarrow", "fstio")}
    print(f"- fstio {getattr(fstio, '__version__', '?')}; rdarrow {rdarrow.__version__}")
    print("| reader of x.fst | s | peak MB | time vs fstio |")
    print("|---|---:|---:|---:|")
    print(f"| fstio.read_fst() | {t_fstio:.2f} | {peaks['fstio']:.0f} | 1.00 |")
    print(f"| rdarrow.read_table() | {t_ours:.2f} | {peaks['rdarrow']:.0f} | **{t_ours / t_fstio:.2f}** (target <= 0.3) |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="5e5,5e6")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--qs", default=None, help="a folder with x.qs2 and x.rds (bench/qs.R, RDARROW_BENCH_KEEP)")
    ap.add_argument("--fst", default=None, help="a folder with x.fst (bench/fst.R, RDARROW_BENCH_KEEP)")
    a = ap.parse_args()
    if a.fst:
        return fst_rows(a.fst, a.reps)
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    if a.qs:
        return qs_rows(a.qs, a.reps)

    import warnings

    import pyarrow as pa
    import pyreadr
    import rdata

    import rdarrow

    # the rdata package warns for every Date and POSIXct column
    warnings.filterwarnings("ignore", module="rdata")

    print("# rdarrow Python benchmark\n")
    print(f"- Python {sys.version.split()[0]}; rdarrow {rdarrow.__version__}; pyarrow {pa.__version__}; "
          f"pyreadr {getattr(pyreadr, '__version__', '?')}; rdata {rdata.__version__}")
    print(f"- load average at start: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    rows_out = []
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            path = make_file(n, folder)
            mb = os.path.getsize(path) / 1e6
            print(f"\n## {n:,} rows ({mb:.1f} MB, gzip), median of {a.reps}\n")
            m = {}
            m["rdarrow read_table"] = timed(lambda: rdarrow.read_table(path), a.reps)
            m["pyreadr + from_pandas"] = timed(
                lambda: pa.Table.from_pandas(pyreadr.read_r(path)["df"]), a.reps)
            rdata_reps = a.reps if n <= 1_000_000 else 1
            m["rdata + from_pandas"] = timed(
                lambda: pa.Table.from_pandas(rdata.read_rda(path)["df"]), rdata_reps)
            m["rdarrow read_pandas"] = timed(lambda: rdarrow.read_pandas(path), a.reps)
            m["pyreadr read_r"] = timed(lambda: pyreadr.read_r(path), a.reps)
            table = rdarrow.read_table(path)
            frame = pyreadr.read_r(path)["df"]
            ours = os.path.join(folder, "ours.RData")
            theirs = os.path.join(folder, "theirs.RData")
            m["rdarrow write_rdata"] = timed(lambda: rdarrow.write_rdata(table, ours, name="df"), a.reps)
            # pyreadr writes slowly (minutes at 5e6 rows): once above 1e6 rows
            m["pyreadr write_rdata"] = timed(
                lambda: pyreadr.write_rdata(theirs, frame, df_name="df", compress="gzip"), rdata_reps)
            del table, frame
            for k, v in m.items():
                print(f"- {k:24s} " + " ".join(f"{x:.3f}" for x in v))
            med = {k: statistics.median(v) for k, v in m.items()}
            same = subprocess.run(
                ["Rscript", "--vanilla", "-e",
                 f'a <- new.env(); load("{ours}", a); b <- new.env(); load("{path}", b); cat(identical(a$df, b$df))'],
                capture_output=True, text=True).stdout.strip()
            print(f"\nR's load() of rdarrow's file identical() to the frame save() wrote: {same}")
            p_ours, p_theirs = peak("rdarrow", path), peak("pyreadr", path)
            print(f"peak memory above baseline: rdarrow {p_ours / 1e6:.1f} MB, pyreadr {p_theirs / 1e6:.1f} MB")
            rows_out += [
                (n, "read_table: pyreadr + from_pandas / rdarrow", med["pyreadr + from_pandas"] / med["rdarrow read_table"], ">= 10"),
                (n, "read_table: rdata + from_pandas / rdarrow", med["rdata + from_pandas"] / med["rdarrow read_table"], ">= 200"),
                (n, "read_pandas: pyreadr / rdarrow", med["pyreadr read_r"] / med["rdarrow read_pandas"], ">= 4"),
                (n, "peak memory: rdarrow / pyreadr", p_ours / p_theirs, "<= 0.5"),
                (n, "write_rdata: pyreadr / rdarrow", med["pyreadr write_rdata"] / med["rdarrow write_rdata"], ">= 10"),
            ]
    print("\n| rows | ratio | value | target | verdict |\n|---:|---|---:|---|---|")
    for n, what, v, target in rows_out:
        op, bound = target.split()
        ok = v >= float(bound) if op == ">=" else v <= float(bound)
        print(f"| {n:,} | {what} | {v:.2f} | {target} | {'meets' if ok else 'misses'} |")
    print(f"\nload average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
