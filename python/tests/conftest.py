"""Shared helpers: R data files written by the real R (Rscript), so that
every test checks what R itself saved."""

import os
import shutil
import subprocess

import pytest


def _rscript():
    r = shutil.which("Rscript")
    if r is None:
        pytest.skip("Rscript is not on the PATH: these tests check files written by R itself")
    return r


@pytest.fixture(scope="session")
def run_r():
    """Run R code (with `out` bound to the output folder) and return its
    standard output."""
    rscript = _rscript()

    def run(code, **env):
        res = subprocess.run(
            [rscript, "--vanilla", "-e", code],
            capture_output=True,
            text=True,
            env={**os.environ, "TZ": "UTC", **env},
        )
        if res.returncode != 0:
            raise AssertionError(f"R failed:\n{res.stderr}")
        return res.stdout

    return run


# A data frame with every common column kind, NA in each; the same code
# makes it in every test that needs it.
FRAME_R = r"""
n <- 1000L
set.seed(1)
df <- data.frame(
  i = c(NA, seq_len(n - 1L)),
  d = c(rnorm(n - 2L), NA, NaN),
  b = c(NA, rep(c(TRUE, FALSE), length.out = n - 1L)),
  s = c(NA, sample(c("a", "é", "日本", ""), n - 1L, replace = TRUE)),
  f = factor(c(NA, sample(c("lo", "mid", "hi"), n - 1L, replace = TRUE)),
             levels = c("lo", "mid", "hi", "unused")),
  day = as.Date("2020-01-01") + c(NA, seq_len(n - 1L)),
  t = as.POSIXct("2021-06-01", tz = "UTC") + c(NA, seq_len(n - 1L)) * 60,
  stringsAsFactors = FALSE
)
attr(df$t, "tzone") <- "UTC"
"""


@pytest.fixture(scope="session")
def frame_files(tmp_path_factory, run_r):
    """The frame saved by save() (gzip), saveRDS() (xz) and, for
    comparison, written by arrow R's write_feather() (what arrow R makes of
    it), when arrow R is installed."""
    d = tmp_path_factory.mktemp("frame")
    files = {
        "rdata": d / "frame.RData",
        "rds": d / "frame.rds",
        "feather": d / "frame.arrow",
        "json": d / "frame.json",
    }
    run_r(
        FRAME_R
        + f"""
save(df, file = "{files['rdata']}")
saveRDS(df, "{files['rds']}", compress = "xz")
if (requireNamespace("arrow", quietly = TRUE)) {{
  arrow::write_feather(df, "{files['feather']}", compression = "uncompressed")
}}
"""
    )
    return files


def plain(arr):
    """An Arrow array's values as Python values, NaN as the string "NaN"
    (NaN equals nothing, itself included), for comparing two arrays."""
    import math

    def fix(x):
        if isinstance(x, float) and math.isnan(x):
            return "NaN"
        if isinstance(x, dict):
            return {k: fix(v) for k, v in x.items()}
        if isinstance(x, list):
            return [fix(v) for v in x]
        return x

    return [fix(x) for x in arr.to_pylist()]
