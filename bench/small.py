"""Many small files in Python: rdarrow against pyreadr (plus pyarrow where
the result is Arrow), all measured in the same run.

Collections (written by R with bench/common.R's write_small_collections(),
the same as bench/small.R's):
  datasets    every data set of R's datasets package, one save() file each
              (those pyreadr and rdarrow both read as one data frame)
  generated   --generated small data frames (5-60 rows, 6 columns), gzip .RData

Totals over each collection, one call per file, median of --reps:
  list        rdarrow.list_objects()  vs pyreadr.list_objects()
  to Arrow    rdarrow.read_table()    vs pyreadr.read_r() + pyarrow.Table.from_pandas()
              (target: at least 3x faster in total)
  to pandas   rdarrow.read_pandas()   vs pyreadr.read_r()  (target: no slower)
Then the generated folder to Parquet:
  rdarrow.dask.read_rdata(glob).to_parquet() (Dask's threads, every core)
  vs pyreadr.read_r() + pyarrow.parquet.write_table() of each file.
Then per call on mtcars (.rds, mean of 300).

How to run (from the repository root, with the .venv of tools/setup.sh and
pyreadr installed from PyPI, and R on the PATH):
  .venv/bin/python bench/small.py
  .venv/bin/python bench/small.py --generated 500 --reps 3
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(work, reps):
    """Median seconds of `work()` over `reps` runs."""
    work()  # warm: imports, caches
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        work()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generated", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyreadr
    import rdarrow
    import rdarrow.dask

    d = tempfile.mkdtemp(prefix="rdarrow-small-py-")
    try:
        r = (
            f"source({os.path.join(HERE, 'common.R')!r}); "
            f"invisible(write_small_collections({d!r}, {args.generated}))"
        )
        subprocess.run(["Rscript", "--vanilla", "-e", r], check=True)
        ds = sorted(os.path.join(d, "datasets", f) for f in os.listdir(os.path.join(d, "datasets")))
        gen = sorted(os.path.join(d, "generated", f) for f in os.listdir(os.path.join(d, "generated")))

        def both_read(f):
            # one data frame that both read (a benchmark, not a test)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    frames = pyreadr.read_r(f)
                    rdarrow.read_table(f)
                return len(frames) == 1 and isinstance(next(iter(frames.values())), pd.DataFrame)
            except Exception:
                return False

        collections = {"datasets": [f for f in ds if both_read(f)], "generated": gen}
        print(f"rdarrow {rdarrow.__version__}, pyreadr {pyreadr.__version__}, pyarrow {pa.__version__}, "
              f"{args.reps} repetitions, load average {os.getloadavg()}")
        print("\n| collection | files | list: pyreadr (s) | rdarrow (s) | ratio | to Arrow: pyreadr + from_pandas (s) "
              "| rdarrow read_table (s) | speed-up (>= 3) | to pandas: pyreadr (s) | rdarrow read_pandas (s) | ratio (<= 1) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, files in collections.items():
            def loop(f):
                def run():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        for x in files:
                            f(x)
                return run
            t_pl = timed(loop(pyreadr.list_objects), args.reps)
            t_ol = timed(loop(rdarrow.list_objects), args.reps)
            t_pa = timed(loop(lambda x: pa.Table.from_pandas(next(iter(pyreadr.read_r(x).values())))), args.reps)
            t_oa = timed(loop(rdarrow.read_table), args.reps)
            t_pp = timed(loop(pyreadr.read_r), args.reps)
            t_op = timed(loop(rdarrow.read_pandas), args.reps)
            print(f"| {name} | {len(files)} | {t_pl:.3f} | {t_ol:.3f} | {t_ol / t_pl:.2f} | {t_pa:.3f} | {t_oa:.3f} "
                  f"| {t_pa / t_oa:.1f}x | {t_pp:.3f} | {t_op:.3f} | {t_op / t_pp:.2f} |")

        # the generated folder to Parquet
        out = os.path.join(d, "lake")

        def pyreadr_lake():
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            for i, f in enumerate(gen):
                df = next(iter(pyreadr.read_r(f).values()))
                pq.write_table(pa.Table.from_pandas(df), os.path.join(out, f"part-{i}.parquet"))

        def dask_lake():
            shutil.rmtree(out, ignore_errors=True)
            rdarrow.dask.read_rdata(os.path.join(d, "generated", "*.RData")).to_parquet(out)

        t_base = timed(pyreadr_lake, args.reps)
        t_dask = timed(dask_lake, args.reps)
        print(f"\n| {len(gen)} generated files to Parquet | seconds | ratio |\n|---|---:|---:|")
        print(f"| pyreadr.read_r() + pyarrow.parquet.write_table() each | {t_base:.3f} | 1.00 |")
        print(f"| rdarrow.dask.read_rdata().to_parquet() | {t_dask:.3f} | {t_dask / t_base:.2f} |")

        # per call on mtcars
        rds = os.path.join(d, "mtcars.rds")
        subprocess.run(["Rscript", "--vanilla", "-e", f"saveRDS(mtcars, {rds!r})"], check=True)

        def per_call(f, n=300):
            for _ in range(20):
                f(rds)
            t = time.perf_counter()
            for _ in range(n):
                f(rds)
            return (time.perf_counter() - t) / n * 1000

        print("\n| per call on mtcars.rds (mean of 300) | ms |\n|---|---:|")
        for label, f in [
            ("pyreadr.read_r()", pyreadr.read_r),
            ("pyreadr.read_r() + from_pandas()", lambda x: pa.Table.from_pandas(pyreadr.read_r(x)[None])),
            ("pyreadr.list_objects()", pyreadr.list_objects),
            ("rdarrow.read_table()", rdarrow.read_table),
            ("rdarrow.read_pandas()", rdarrow.read_pandas),
            ("rdarrow.list_objects()", rdarrow.list_objects),
            ("rdarrow.read_objects()", rdarrow.read_objects),
        ]:
            print(f"| {label} | {per_call(f):.3f} |")
        print(f"\nLoad average after: {os.getloadavg()}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
