"""An R array to NumPy: rdarrow's tensors against the existing route, all
measured in the same run, each read in a fresh process (its time, and its
peak memory: VmHWM).

The array: a double matrix of --gib GiB (8192 rows), saved by R's
saveRDS() gzip-compressed (R's default) and uncompressed. For each file:

  anchor   R: readRDS(file)                                   (Rscript)
  before   Python: numpy.asarray(<the one value of rdarrow.read_objects(file)>)
  tensor   Python: rdarrow.to_tensor(file).to_numpy()
  file     R: rdata_to_tensor(file, t) (Rscript), then Python:
           pyarrow.ipc.read_tensor(pyarrow.memory_map(t)).to_numpy()

Every NumPy array is checked against R's (its shape, order and a sum of a
sample of its elements); ratios are against `before` (the route the issue
names) and against readRDS().

Run from the repository root (the .venv of tools/setup.sh, R with rdarrow):
  .venv/bin/python bench/tensor.py            # 1 GiB
  .venv/bin/python bench/tensor.py --gib 0.25 # quick
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PY = sys.executable

# a child's peak: VmHWM of /proc/self/status, in MB
HWM_R = 'hwm <- function() as.numeric(sub("[^0-9]*([0-9]+).*", "\\\\1", grep("VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024'
HWM_PY = """
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
"""

CHECK_PY = """
import numpy as np
def check(a):
    assert a.shape == SHAPE, a.shape
    s = float(a[::997, ::991].sum())
    return s
"""


def run_r(code):
    out = subprocess.run(["Rscript", "--vanilla", "-e", HWM_R + "\n" + code], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_py(code, shape):
    full = "import json, time, sys\n" + HWM_PY + CHECK_PY.replace("SHAPE", repr(tuple(shape))) + code
    out = subprocess.run([PY, "-c", full], capture_output=True, text=True, env={**os.environ, "R_LIBS": ""})
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    rows = 8192
    cols = int(a.gib * 2**30 / 8 / rows)
    shape = [rows, cols]
    d = a.dir or tempfile.mkdtemp(prefix="rdarrow-tensor-")
    files = {"gzip": os.path.join(d, "x_gzip.rds"), "none": os.path.join(d, "x_none.rds")}
    if not all(os.path.exists(f) for f in files.values()):
        print(f"writing a {rows} x {cols} double matrix ({rows * cols * 8 / 2**30:.2f} GiB) ...", flush=True)
        run_r(f"""
            set.seed(58); x <- matrix(round(rnorm({rows * cols}), 3), {rows})
            saveRDS(x, "{files['gzip']}"); saveRDS(x, "{files['none']}", compress = FALSE)
            cat(jsonlite_free <- "{{}}", "\\n")
        """)
    # R's sum of the same sample, to check every route's array against
    want = run_r(f"""x <- readRDS("{files['none']}"); s <- sum(x[seq(1, nrow(x), 997), seq(1, ncol(x), 991)])
                     cat(sprintf('{{"sum": %.17g}}', s), "\\n")""")["sum"]
    print(f"load: {open('/proc/loadavg').read().split()[:3]}; {os.cpu_count()} cores; array {rows} x {cols}")
    rows_out = []
    for kind, f in files.items():
        anchor = run_r(f"""t0 <- Sys.time(); x <- readRDS("{f}"); s <- as.numeric(Sys.time() - t0, units = "secs")
                          cat(sprintf('{{"s": %f, "peak": %f}}', s, hwm()), "\\n")""")
        before = run_py(f"""
import rdarrow, numpy as np
t0 = time.perf_counter()
a = np.asarray(next(iter(rdarrow.read_objects({f!r}).values())))
s = time.perf_counter() - t0
sm = check(a)
print(json.dumps(dict(s=s, peak=hwm(), sum=sm, fortran=bool(a.flags["F_CONTIGUOUS"]))))
""", shape)
        tensor = run_py(f"""
import rdarrow
t0 = time.perf_counter()
a = rdarrow.to_tensor({f!r}).to_numpy()
s = time.perf_counter() - t0
sm = check(a)
print(json.dumps(dict(s=s, peak=hwm(), sum=sm, fortran=bool(a.flags["F_CONTIGUOUS"]), owns=bool(a.flags["OWNDATA"]))))
""", shape)
        t = os.path.join(d, f"x_{kind}.tensor")
        write = run_r(f"""library(rdarrow); t0 <- Sys.time(); rdata_to_tensor("{f}", "{t}")
                         s <- as.numeric(Sys.time() - t0, units = "secs"); cat(sprintf('{{"s": %f, "peak": %f}}', s, hwm()), "\\n")""")
        mapped = run_py(f"""
import pyarrow as pa
t0 = time.perf_counter()
a = pa.ipc.read_tensor(pa.memory_map({t!r})).to_numpy()
s = time.perf_counter() - t0
sm = check(a)
print(json.dumps(dict(s=s, peak=hwm(), sum=sm, fortran=bool(a.flags["F_CONTIGUOUS"]))))
""", shape)
        os.remove(t)
        for r in (before, tensor, mapped):
            assert abs(r["sum"] - want) < 1e-6 * max(1.0, abs(want)), (r, want)
            assert r["fortran"]
        rows_out.append((kind, anchor, before, tensor, write, mapped))

    print()
    print("| file | route | s | peak (MB) | time vs `read_objects()` + `asarray()` | peak vs it | time vs `readRDS()` | peak vs it |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for kind, anchor, before, tensor, write, mapped in rows_out:
        def line(name, s, peak):
            print(f"| {kind} | {name} | {s:.2f} | {peak:.0f} | {s / before['s']:.2f} | {peak / before['peak']:.2f} | "
                  f"{s / anchor['s']:.2f} | {peak / anchor['peak']:.2f} |")
        line("R `readRDS()` (anchor)", anchor["s"], anchor["peak"])
        line("`numpy.asarray(read_objects(f))` (before)", before["s"], before["peak"])
        line("`rdarrow.to_tensor(f).to_numpy()`", tensor["s"], tensor["peak"])
        line("R `rdata_to_tensor()`", write["s"], write["peak"])
        line("`read_tensor(memory_map(t)).to_numpy()`", mapped["s"], mapped["peak"])
        line("`rdata_to_tensor()` + mapped, together", write["s"] + mapped["s"], max(write["peak"], mapped["peak"]))


if __name__ == "__main__":
    main()
