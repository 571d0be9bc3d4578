"""Files from strangers: Python never runs R code, and every reader refuses
a file holding a promise where R keeps none (the engine's one rule) with
UnsafeError naming its place, never a crash; listing runs nothing. The
files are crafted byte by byte (the ``crafted`` fixture)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import rdarrow


def _refused(place):
    return pytest.raises(rdarrow.UnsafeError, match=re.escape(place) + " is a promise, which would run code")


def test_every_python_reader_refuses_a_promise_by_its_place(crafted):
    d, places = crafted
    for name, place in places.items():
        f = d / name
        listed = rdarrow.list_objects(f, recursive=True)
        assert len(listed) >= 1
        with _refused(place):
            rdarrow.read_objects(f)
        with _refused(place):
            rdarrow.read_table(f)
        with _refused(place):
            rdarrow.read_pandas(f)
        # bytes and a file object: the one object is named "value"
        with pytest.raises(rdarrow.UnsafeError, match="is a promise"):
            rdarrow.read_objects(f.read_bytes())
        with open(f, "rb") as fh, pytest.raises(rdarrow.UnsafeError, match="is a promise"):
            rdarrow.read_objects(fh)
        out = d / "out.parquet"
        with _refused(place):
            rdarrow.to_parquet(f, out)
        assert not out.exists()
    assert not (d / "ran").exists()


def test_the_command_line_refuses_with_the_message_and_lists(crafted, tmp_path):
    d, places = crafted
    exe = Path(sys.executable).parent / "rdarrow"
    for name, place in places.items():
        out = tmp_path / "out.arrow"
        res = subprocess.run([str(exe), "to-arrow", str(d / name), "-o", str(out)], capture_output=True, text=True)
        assert res.returncode == 1, res.stderr
        assert place + " is a promise" in res.stderr
        assert "Traceback" not in res.stderr and "panicked" not in res.stderr
        assert not out.exists()
        ls = subprocess.run([str(exe), "ls", str(d / name)], capture_output=True, text=True)
        assert ls.returncode == 0, ls.stderr
    assert not (d / "ran").exists()
