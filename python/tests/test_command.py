"""The ``rdarrow`` command installed with the Python package: the Rust
command line (the same program as the cargo-built binary: its help, exit
codes and output) with the package's to-h5ad and from-h5ad."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rdarrow
from conftest import cargo_cli

ROOT = Path(__file__).resolve().parents[2]


def installed():
    """The ``rdarrow`` script the wheel installed beside this interpreter."""
    exe = Path(sys.executable).parent / "rdarrow"
    if not exe.exists():
        exe = shutil.which("rdarrow")
        if exe is None:
            pytest.fail("the wheel installed no rdarrow command beside the interpreter nor on the PATH")
    return str(exe)


def cargo_binary():
    return cargo_cli()


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def test_the_help_is_the_binarys_with_the_single_cell_commands():
    ours, theirs = run(installed(), "--help"), run(cargo_binary(), "--help")
    assert ours.returncode == theirs.returncode == 0
    extra = [line for line in ours.stdout.splitlines() if line not in theirs.stdout.splitlines()]
    assert [line.split()[0] for line in extra] == ["to-h5ad", "from-h5ad"]
    for cmd in ("ls", "to-arrow", "to-parquet", "to-tensor", "to-rdata", "to-dataset"):
        a, b = run(installed(), cmd, "--help"), run(cargo_binary(), cmd, "--help")
        assert a.returncode == 0 and a.stdout == b.stdout
    for cmd in ("to-h5ad", "from-h5ad"):
        res = run(installed(), cmd, "--help")
        assert res.returncode == 0 and f"rdarrow {cmd}" in res.stdout
    v = run(installed(), "--version")
    assert v.returncode == 0 and v.stdout == run(cargo_binary(), "--version").stdout


def test_exit_codes_and_output_are_the_binarys(tmp_path, run_r):
    run_r(f'df <- data.frame(a = 1:3, s = c("x", NA, "z")); save(df, file = "{tmp_path}/x.RData")')
    for args in (["ls", str(tmp_path / "x.RData")], ["ls", "--json", str(tmp_path / "x.RData")]):
        a, b = run(installed(), *args), run(cargo_binary(), *args)
        assert a.returncode == b.returncode == 0 and a.stdout == b.stdout
    # a data error: 1, the binary's message
    a, b = run(installed(), "ls", str(tmp_path / "missing.rds")), run(cargo_binary(), "ls", str(tmp_path / "missing.rds"))
    assert a.returncode == b.returncode == 1 and a.stderr == b.stderr
    # usage errors: 2
    for args in (["nosuch"], ["ls"], ["to-arrow", str(tmp_path / "x.RData"), "--format", "nope"]):
        a, b = run(installed(), *args), run(cargo_binary(), *args)
        assert a.returncode == b.returncode == 2 and a.stderr == b.stderr
    assert run(installed(), "from-h5ad").returncode == 2
    # a conversion: the same file
    run(installed(), "to-parquet", str(tmp_path / "x.RData"), "-o", str(tmp_path / "a.parquet"))
    run(cargo_binary(), "to-parquet", str(tmp_path / "x.RData"), "-o", str(tmp_path / "b.parquet"))
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    # python -m rdarrow is the same program
    m = run(sys.executable, "-m", "rdarrow", "ls", str(tmp_path / "x.RData"))
    assert m.returncode == 0 and m.stdout == run(cargo_binary(), "ls", str(tmp_path / "x.RData")).stdout
