"""The type stubs are true for a type checker: mypy accepts the stubs, a
client that calls every public function as the stubs say type-checks, and
calls the stubs forbid are refused (test_stubs.py checks the stubs against
the package's own signatures)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rdarrow

PKG = Path(rdarrow.__file__).parent

CLIENT = '''
import pyarrow
import rdarrow

objects = rdarrow.list_objects("x.RData", recursive=True, storage_options={"region": "eu"})
name: str = objects[0]["name"]
values = rdarrow.read_objects("x.RData", names=["a", "lst$b"], plain=True)
reader = rdarrow.RDataReader("x.rds", object=("lst", 2), columns=["a"], chunk_size=10, time_unit="ms")
table: pyarrow.Table = rdarrow.read_table(b"RDX3", object="df")
frame = rdarrow.read_pandas("x.RData", columns=["a"])
rdarrow.to_parquet("x.RData", "x.parquet", compression="zstd", compression_level=3)
rdarrow.to_ipc("x.RData", "x.arrow", format="stream", chunk_size=None)
rdarrow.write_rdata({"t": table}, "y.RData", compress="xz", compression_level=9)
rdarrow.write_rds(table, "y.rds", version=2)
rdarrow.write_sce(object(), "y.rds")
rdarrow.write_seurat(object(), "y.rds", version=4, format_version=3)
rdarrow.to_h5ad("x.rds", "x.h5ad", assay="RNA")
adata = rdarrow.read_anndata("x.rds", object="pbmc")
try:
    pass
except rdarrow.UsageError as e:
    message: str = str(e)
'''

BAD = '''
import rdarrow
rdarrow.write_rds(1, "y.rds", version="3")
rdarrow.list_objects("x.RData", recursive="yes")
'''


def _mypy(tmp_path, *args):
    """mypy on ``args`` in this interpreter (which finds the installed
    package, typed by its stubs and py.typed)."""
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed (tools/test-env.sh installs tools/requirements-test.txt)")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull, "--ignore-missing-imports", *args],
        capture_output=True, text=True, cwd=tmp_path,
    )


def test_the_stubs_type_check(tmp_path):
    # the stubs alone, as a package of their own (mypy refuses files inside
    # site-packages)
    stubs = tmp_path / "stubs" / "rdarrow"
    stubs.mkdir(parents=True)
    for f in ("__init__.pyi", "_rdarrow.pyi"):
        (stubs / f).write_text((PKG / f).read_text())
    res = _mypy(tmp_path, "stubs/rdarrow")
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_client_of_every_public_function_type_checks(tmp_path):
    (tmp_path / "client.py").write_text(CLIENT)
    res = _mypy(tmp_path, "--follow-imports", "silent", "client.py")
    assert res.returncode == 0, res.stdout + res.stderr


def test_calls_the_stubs_forbid_are_refused(tmp_path):
    (tmp_path / "client.py").write_text(BAD)
    res = _mypy(tmp_path, "--follow-imports", "silent", "client.py")
    assert res.returncode != 0
    assert 'Argument "version" to "write_rds" has incompatible type "str"' in res.stdout
    assert 'Argument "recursive" to "list_objects" has incompatible type "str"' in res.stdout
