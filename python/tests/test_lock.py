"""The suite runs in the locked environment: an environment that differs
from tools/requirements-test.txt stops it at once, saying what differs."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_this_environment_matches_the_lock():
    from conftest import _lock_mismatches

    assert _lock_mismatches() == []


def test_an_environment_that_differs_from_the_lock_stops_the_suite(tmp_path):
    lock = (HERE.parents[1] / "tools" / "requirements-test.txt").read_text()
    # one package at another version, one the environment does not have
    wrong = lock.replace("\npytest==", "\npytest==0.0.1+", 1) + "no-such-package-here==1.0\n"
    assert wrong != lock
    (tmp_path / "lock.txt").write_text(wrong)
    test = tmp_path / "test_nothing.py"
    test.write_text("def test_nothing():\n    pass\n")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(HERE), "-c", "/dev/null",
         "--confcutdir", str(HERE), str(HERE / "conftest.py"), str(test)],
        capture_output=True, text=True,
        env={**__import__("os").environ, "RDARROW_TEST_LOCK": str(tmp_path / "lock.txt")},
    )
    out = r.stdout + r.stderr
    assert r.returncode == 3, out
    assert "does not match the test lock" in out
    assert "no-such-package-here==1.0 (installed: none)" in out
    assert "pytest==0.0.1+" in out
