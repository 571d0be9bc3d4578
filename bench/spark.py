"""The Spark data source (rdarrow.spark) and the Polars scans
(rdarrow.polars) against their anchors, measured in the same run.

Spark (local mode, 2 cores; one session; each query run --reps times, the
median): spark.read.format("rdata").load() + an aggregate (count and the
sum of a double column) over
  - the bench/ frame of bench.R (5e6 rows, gzip, save()), and
  - 2,000 small files (bench/common.R's write_small_collections()),
against (a) spark.read.parquet() of the same data converted to Parquet
(goal: at most 2x) and (b) pyreadr.read_r() + spark.createDataFrame() of
each file on the driver, the route people use today (goal: at least 5x
faster; run on the small files, and on the big file once).

Polars: scan_rdata(f).select(one column).sum() against
pl.from_arrow(rdarrow.read_table(f)) of the whole frame (goal: at most
0.5x) on the frame saved uncompressed, and pl.scan_parquet() of the same
data for reference.

    .venv/bin/python bench/spark.py [--rows 5e6] [--small 2000] [--reps 3]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(f, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def make(d, rows, small):
    big = os.path.join(d, "frame.RData")
    plain = os.path.join(d, "frame-none.rds")
    if not os.path.exists(big):
        code = (
            f'source("{HERE}/common.R"); df <- bench_frame({int(rows)}); '
            f'save(df, file = "{big}"); saveRDS(df, "{plain}", compress = FALSE)'
        )
        subprocess.run(["Rscript", "--vanilla", "-e", code], check=True)
    gen = os.path.join(d, "small", "generated")
    if not os.path.isdir(gen):
        os.makedirs(os.path.join(d, "small"), exist_ok=True)
        code = f'source("{HERE}/common.R"); invisible(write_small_collections("{d}/small", {small}))'
        subprocess.run(["Rscript", "--vanilla", "-e", code], check=True)
    return big, plain, gen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, default=5e6)
    ap.add_argument("--small", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "rdarrow-bench-spark"))
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    big, plain, gen = make(a.dir, a.rows, a.small)
    small_files = sorted(os.path.join(gen, f) for f in os.listdir(gen))

    import polars as pl
    import pyarrow.parquet as pq

    import rdarrow
    import rdarrow.polars as rp

    # the same data as Parquet (rdarrow's own conversion)
    big_pq = os.path.join(a.dir, "frame.parquet")
    if not os.path.exists(big_pq):
        rdarrow.to_parquet(big, big_pq)
    small_pq = os.path.join(a.dir, "small-parquet")
    if not os.path.isdir(small_pq):
        os.makedirs(small_pq)
        for f in small_files:
            rdarrow.to_parquet(f, os.path.join(small_pq, os.path.basename(f) + ".parquet"))

    rows = []
    # --- Polars ------------------------------------------------------------
    names = pq.read_schema(big_pq).names
    col = next(n for n in names if pq.read_schema(big_pq).field(n).type.__str__() == "double")
    plain_pq = big_pq
    t_scan = timed(lambda: rp.scan_rdata(plain).select(pl.col(col).sum()).collect(), a.reps)
    t_whole = timed(lambda: pl.from_arrow(rdarrow.read_table(plain)).select(pl.col(col).sum()), a.reps)
    t_pq = timed(lambda: pl.scan_parquet(plain_pq).select(pl.col(col).sum()).collect(), a.reps)
    rows.append(("Polars, frame (uncompressed .rds)", f"scan_rdata().select({col}).sum()", t_scan, t_whole, "whole read_table()", 0.5))
    rows.append(("Polars, frame", "pl.scan_parquet() (reference)", t_pq, t_whole, "whole read_table()", None))

    # --- Spark -------------------------------------------------------------
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import rdarrow.spark

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "6g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rdarrow.spark.register(spark)

    def agg(df):
        return df.agg(F.count(F.lit(1)), F.sum(F.col(col) if col in df.columns else F.lit(0))).collect()

    def agg_small(df):
        return df.agg(F.count(F.lit(1)), F.sum("v1")).collect()

    t_r = timed(lambda: agg(spark.read.format("rdata").load(big)), a.reps)
    t_p = timed(lambda: agg(spark.read.parquet(big_pq)), a.reps)
    rows.append(("Spark, frame (gzip .RData), count + sum", "format(\"rdata\")", t_r, t_p, "spark.read.parquet()", 2.0))
    t_rc = timed(lambda: agg(spark.read.format("rdata").option("columns", col).load(big)), a.reps)
    rows.append(("Spark, frame, count + sum", "format(\"rdata\").option(\"columns\")", t_rc, t_p, "spark.read.parquet()", 2.0))

    def every(df):
        return df.agg(*[F.count(c) for c in names]).collect()

    t_ra = timed(lambda: every(spark.read.format("rdata").load(big)), a.reps)
    t_pa = timed(lambda: every(spark.read.parquet(big_pq)), a.reps)
    rows.append(("Spark, frame, every column counted", "format(\"rdata\")", t_ra, t_pa, "spark.read.parquet()", 2.0))
    import zlib

    def inflate():
        d = zlib.decompressobj(31)
        with open(big, "rb") as fh:
            while True:
                b = fh.read(1 << 20)
                if not b:
                    break
                d.decompress(b)

    t_inf = timed(inflate, a.reps)
    rows.append(("frame (gzip .RData)", "inflate alone (zlib, one core)", t_inf, t_p, "spark.read.parquet()", None))

    import pyreadr

    import pyarrow as pa

    failures = []

    def pyreadr_route(files):
        """pyreadr on the driver, each frame handed to createDataFrame();
        where Spark refuses pandas' frame (pyreadr's logical with NaN is an
        object column, its nanosecond times do not fit Spark's
        microseconds), the frame goes through pyarrow instead, and the
        refusal is reported."""
        dfs = None
        for f in files:
            pdf = next(iter(pyreadr.read_r(f).values()))
            try:
                sdf = spark.createDataFrame(pdf)
            except Exception as e:
                if not failures:
                    failures.append(f"{os.path.basename(f)}: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
                sdf = spark.createDataFrame(pa.Table.from_pandas(pdf, preserve_index=False))
            dfs = sdf if dfs is None else dfs.unionByName(sdf)
        return dfs

    t_py_big = timed(lambda: agg(pyreadr_route([big])), 1)
    rows.append(("Spark, frame, count + sum", "pyreadr + createDataFrame()", t_py_big, t_r, "format(\"rdata\")", None))
    t_rs = timed(lambda: agg_small(spark.read.format("rdata").load(gen)), a.reps)
    t_ps = timed(lambda: agg_small(spark.read.parquet(small_pq)), a.reps)
    rows.append((f"Spark, {len(small_files)} small files", "format(\"rdata\")", t_rs, t_ps, "spark.read.parquet()", 2.0))
    t_pys = timed(lambda: agg_small(pyreadr_route(small_files)), 1)
    rows.append((f"Spark, {len(small_files)} small files", "pyreadr + createDataFrame()", t_pys, t_rs, "format(\"rdata\")", None))
    spark.stop()

    print("| data | reader | seconds | against | its seconds | ratio | goal |")
    print("|---|---|---:|---|---:|---:|---|")
    for data, reader, t, ref, refname, goal in rows:
        g = "" if goal is None else f"<= {goal}"
        print(f"| {data} | {reader} | {t:.2f} | {refname} | {ref:.2f} | {t / ref:.2f} | {g} |")
    print(f"pyreadr + createDataFrame() / format(\"rdata\"): frame {t_py_big / t_r:.1f}x, small files {t_pys / t_rs:.1f}x (goal >= 5x)")
    for f in failures:
        print(f"createDataFrame() of pyreadr's frame failed (went through pyarrow): {f}")


if __name__ == "__main__":
    main()
