"""rdarrow's DuckDB extension against the other ways into DuckDB, all
measured in the same process and run.

What it measures, on the bench/ frame of bench.R (5 million rows: integer
sequence, two doubles, logical with NAs, character from 1000 words,
factor, Date, POSIXct in UTC; R's save(), gzip), median of --reps, each
query fetched whole (`fetchall()`):

  extension:   SELECT count(*) / sum(x) FROM read_rdata(file), and
               CREATE TEMP TABLE t AS SELECT * FROM read_rdata(file)
  anchor:      rdarrow.read_table(file), then the same query over that
               Arrow table (DuckDB's Arrow scan), in this process
  pyreadr:     pyreadr.read_r(file), then the same query over the pandas
               frame (what users do without rdarrow)

Targets (issue 26): extension / anchor <= 1.1 for each query, and far
below pyreadr. Also: a glob of 8 copies of the file (count(*) and sum(x),
all threads), and the peak memory of `SELECT sum(x)` (VmHWM above the
baseline, in a fresh process) against the decompressed stream's size.

How to run (from the repository root, after tools/setup.sh and
tools/duckdb-extension.sh):
  .venv/bin/python bench/extension.py                 # 5e6 rows
  .venv/bin/python bench/extension.py --rows 1e6 --reps 3
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import python as python_bench  # bench/python.py: the frame's file, timings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXTENSION = os.path.join(ROOT, "target", "duckdb", "rdarrow.duckdb_extension")
QUERIES = {
    "SELECT count(*)": "SELECT count(*) FROM {}",
    "SELECT sum(x)": "SELECT sum(x) FROM {}",
    # every column, into a DuckDB table (fetching 5 million rows into
    # Python tuples would measure Python)
    "CREATE TABLE AS SELECT *": "CREATE OR REPLACE TEMP TABLE t AS SELECT * FROM {}",
}


def timed(f, reps):
    return statistics.median(python_bench.timed(f, reps))


PEAK = r"""
import sys, duckdb
def status(field):
    for line in open('/proc/self/status'):
        if line.startswith(field + ':'):
            return int(line.split()[1]) * 1024
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{sys.argv[1]}'")
open('/proc/self/clear_refs', 'w').write('5')
base = status('VmRSS')
con.execute(sys.argv[2]).fetchall()
print(base, status('VmHWM'))
"""


def peak(query):
    out = subprocess.run([sys.executable, "-c", PEAK, EXTENSION, query], check=True,
                         capture_output=True, text=True)
    base, hwm = map(int, out.stdout.split())
    return (hwm - base) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="5e6")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    rows = int(float(a.rows))

    import duckdb
    import pyreadr

    import rdarrow

    if not os.path.exists(EXTENSION):
        sys.exit(f"no extension at {EXTENSION}: run tools/duckdb-extension.sh first")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    print("# rdarrow DuckDB extension benchmark\n")
    print(f"- DuckDB {duckdb.__version__}; rdarrow {rdarrow.__version__}; {os.cpu_count()} cores; "
          f"load average at start: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    with tempfile.TemporaryDirectory() as folder:
        path = python_bench.make_file(rows, folder)
        print(f"- {rows:,} rows, {os.path.getsize(path) / 1e6:.1f} MB gzip; median of {a.reps}, seconds\n")
        print("| query | extension | rdarrow.read_table() + DuckDB | ratio (target <= 1.1) "
              "| pyreadr + DuckDB over pandas | extension speed-up |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, q in QUERIES.items():
            ext = timed(lambda: con.execute(q.format(f"read_rdata('{path}')")).fetchall(), a.reps)

            def anchor():
                tb = rdarrow.read_table(path)  # noqa: F841 (scanned by name)
                con.execute(q.format("tb")).fetchall()

            anc = timed(anchor, a.reps)

            def via_pandas():
                df = pyreadr.read_r(path)["df"]  # noqa: F841
                con.execute(q.format("df")).fetchall()

            pan = timed(via_pandas, 1)
            print(f"| `{label}` | {ext:.3f} | {anc:.3f} | {ext / anc:.2f} | {pan:.3f} | {pan / ext:.1f}x |")

        many = os.path.join(folder, "many")
        os.mkdir(many)
        for i in range(8):
            shutil.copy(path, os.path.join(many, f"part-{i}.RData"))
        print(f"\nA glob of 8 copies ({8 * rows:,} rows):\n")
        print("| query | extension | rdarrow.read_table() of each + DuckDB | ratio |")
        print("|---|---:|---:|---:|")
        import pyarrow as pa
        for label in ["SELECT count(*)", "SELECT sum(x)"]:
            q = QUERIES[label]
            ext = timed(lambda: con.execute(q.format(f"read_rdata('{many}/*.RData')")).fetchall(), a.reps)

            def anchor():
                files = sorted(os.listdir(many))
                tb = pa.concat_tables([rdarrow.read_table(os.path.join(many, f)) for f in files])  # noqa: F841
                con.execute(q.format("tb")).fetchall()

            anc = timed(anchor, a.reps)
            print(f"| `{label}` | {ext:.3f} | {anc:.3f} | {ext / anc:.2f} |")

        stream = rows and rdarrow.list_objects(path)[0]["bytes"] / 1e6
        p = peak(f"SELECT sum(x) FROM read_rdata('{path}')")
        print(f"\nPeak memory of `SELECT sum(x)`: {p:.1f} MB above the baseline; the decompressed "
              f"stream is {stream:.1f} MB (ratio {p / stream:.2f}).")


if __name__ == "__main__":
    main()
