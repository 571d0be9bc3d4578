"""What a new user trips over, from Python: a compression level is used
(or refused) for every sink, a ``.qs`` sink is refused before anything is
written, and ``read_objects()`` takes ``object=`` as every reader does."""

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import rdarrow
from rdarrow import UsageError


def table(n=100_000):
    import numpy as np

    rng = np.random.default_rng(1)
    return pa.table({"a": rng.normal(size=n), "b": rng.integers(0, 26, size=n).astype("int32")})


@pytest.mark.parametrize("ext", [".qs2", ".qdata"])
def test_a_qs2_or_qdata_sink_uses_the_level_given(tmp_path, ext):
    t = table()
    sizes = []
    for level in (1, 9, 19):
        p = tmp_path / f"x{level}{ext}"
        rdarrow.write_rds(t, p, compression_level=level)
        assert rdarrow.read_table(p).equals(t)
        sizes.append(p.stat().st_size)
    # the level is used (it was ignored: the same bytes at every level)
    assert len(set(sizes)) > 1
    for bad in (0, 23):
        with pytest.raises(UsageError, match="out of range"):
            rdarrow.write_rds(t, tmp_path / f"bad{ext}", compression_level=bad)
    with pytest.raises(UsageError, match="compressed with zstd"):
        rdarrow.write_rds(t, tmp_path / f"bad{ext}", compress="gzip")
    assert not (tmp_path / f"bad{ext}").exists()


def test_a_qs_sink_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "x.qs"
    with pytest.raises(UsageError, match=r"\.qs2"):
        rdarrow.write_rds(table(10), out)
    with pytest.raises(UsageError, match=r"\.qs2"):
        rdarrow.write_rdata({"x": table(10)}, out)
    assert not out.exists()
    src = tmp_path / "x.rds"
    rdarrow.write_rds(table(10), src)
    exe = str(Path(sys.executable).parent / "rdarrow")
    r = subprocess.run([exe, "to-rdata", str(src), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and ".qs2" in r.stderr, r.stderr
    assert not out.exists()


def test_read_objects_takes_object_as_every_reader_does(tmp_path):
    p = tmp_path / "two.RData"
    rdarrow.write_rdata({"a": [1, 2], "b": "x"}, p)
    assert list(rdarrow.read_objects(p, object="a")) == ["a"]
    assert list(rdarrow.read_objects(p, object=["b", "a"])) == ["b", "a"]
    assert list(rdarrow.read_objects(p, names=["b"])) == ["b"]
    with pytest.raises(UsageError, match="not both"):
        rdarrow.read_objects(p, object="a", names=["b"])
