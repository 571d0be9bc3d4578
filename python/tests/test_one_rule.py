"""One rule, asked by every front end: the same inputs through R, Python,
the command line and DuckDB make the same choice, or are refused with the
same message (the engine's). Paths with odd names (each object named by
its file), globs with ``**``, directories, every compression name and a
bad one, levels out of range, and files of every kind, damaged ones too."""

import gzip
import json
import os
import re
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rdarrow
from conftest import cargo_cli
from rdarrow._sources import files_of
from test_duckdb import connect

# names as users give them: spaces, '#', several dots, non-ASCII, brackets
# (a file, not a pattern, since it exists), a leading dot, no extension
ODD = ["a b.rds", "x#1.v2.rds", "\u00e9t\u00e9.rds", "[x].rds", ".hidden.rds", "noext"]



def unhinted(message):
    """An error message without the hint that names the host's salvage."""
    return re.sub(r"; read it with .*? to recover what is intact", "", message)

def cli(*args):
    return subprocess.run([cargo_cli(), *args], capture_output=True, text=True)


def cli_error(res):
    """The message of a failed command (its first line, after the prefix)."""
    assert res.returncode != 0, res.stdout
    return res.stderr.splitlines()[0].removeprefix("rdarrow: error: ")


def r_lines(run_r, code):
    return run_r(code).splitlines()


def r_str(x):
    return '"' + str(x).replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.fixture(scope="module")
def tree(tmp_path_factory, run_r):
    """A folder of R data files written by R, odd names and subfolders."""
    d = tmp_path_factory.mktemp("one-rule")
    files = [str(d / n) for n in ODD] + [
        str(d / "sub" / "b.RData"),
        str(d / "sub" / "deep" / "c.rds"),
        str(d / "sub" / "deep" / "Z.rda"),
    ]
    (d / "sub" / "deep").mkdir(parents=True)
    (d / "sub" / "deep" / "notes.txt").write_text("not R data")
    run_r(
        "df <- data.frame(a = 1:2)\n"
        + "\n".join(
            f"if (grepl('[.]r(da|data)$', {r_str(f)}, ignore.case = TRUE)) save(df, file = {r_str(f)}) "
            f"else saveRDS(df, {r_str(f)})"
            for f in files
        )
    )
    return d


def files_by_r(run_r, given):
    """The files R's rdata_objects() lists for `given` (in order), or its
    error message."""
    out = r_lines(
        run_r,
        f"x <- tryCatch(rdarrow::rdata_objects({r_str(given)}), error = function(e) e)\n"
        'if (inherits(x, "error")) cat("ERROR", conditionMessage(x), "\\n", sep = "") else '
        'cat(unique(x$file), sep = "\\n")',
    )
    return out


def files_by_duckdb(con, given):
    try:
        rows = con.execute("SELECT file FROM rdata_objects(?)", [given]).fetchall()
    except Exception as e:  # noqa: BLE001 - DuckDB's error classes vary
        return ["ERROR" + str(e)]
    seen = []
    for (f,) in rows:
        if f not in seen:
            seen.append(f)
    return seen


def files_by_cli(given):
    res = cli("ls", "--json", given)
    if res.returncode != 0:
        return ["ERROR" + cli_error(res)]
    seen = []
    for o in json.loads(res.stdout):
        if o["file"] not in seen:
            seen.append(o["file"])
    return seen


def files_by_python(given):
    try:
        return files_of(given)
    except rdarrow.RDataError as e:
        return ["ERROR" + str(e)]


def test_globs_directories_and_odd_names_name_the_same_files_everywhere(tree, run_r):
    con = connect()
    every = sorted(
        str(p) for p in tree.rglob("*") if p.is_file() and p.suffix.lower() in (".rds", ".rda", ".rdata")
    )
    cases = {
        f"{tree}/**/*.rds": None,
        f"{tree}/*.rds": None,
        f"{tree}/**/*.r*": None,
        f"{tree}/sub": None,
        str(tree): every,
        f"{tree}/**/*.nomatch": None,
    }
    for given, want in cases.items():
        by_r = files_by_r(run_r, given)
        by_py = files_by_python(given)
        by_cli = files_by_cli(given)
        by_duck = files_by_duckdb(con, given)
        if by_r[0].startswith("ERROR"):
            # refused: the engine's message, in each front end's words around it
            message = by_r[0].removeprefix("ERROR")
            assert message.startswith("no file matches"), message
            for other in (by_py, by_cli, by_duck):
                assert other[0].startswith("ERROR") and message in other[0], (given, other)
            continue
        assert by_py == by_r, given
        assert by_cli == by_r, given
        assert by_duck == by_r, given
        assert len(by_r) >= 2, given
        if want is not None:
            # a directory: its R data files (not notes.txt, not "noext"), sorted
            assert by_r == [f for f in want if not f.endswith("noext")], given
    con.close()


def test_a_file_with_an_odd_name_is_read_and_its_object_named_alike(tree, run_r):
    con = connect()
    for n in ODD:
        f = str(tree / n)
        (by_r,) = r_lines(run_r, f"cat(rdarrow::rdata_objects({r_str(f)})$name)")
        by_py = rdarrow.list_objects(f)[0]["name"]
        by_cli = json.loads(cli("ls", "--json", f).stdout)[0]["name"]
        (by_duck,) = con.execute("SELECT name FROM rdata_objects(?)", [f]).fetchone()
        assert by_r == by_py == by_cli == by_duck == rdarrow._rdarrow.object_name_of(n), n
        # and the data frame reads back the same everywhere
        assert rdarrow.read_table(f).column("a").to_pylist() == [1, 2]
        assert con.execute("SELECT sum(a) FROM read_rdata(?)", [f]).fetchone()[0] == 3
    con.close()


def test_files_of_every_kind_are_told_by_their_bytes_or_refused_alike(tmp_path, run_r):
    # R data under misleading names, and files that are not R data
    run_r(
        f"df <- data.frame(a = 1:2)\n"
        f'saveRDS(df, "{tmp_path}/gz.RData")\n'
        f'saveRDS(df, "{tmp_path}/bz.rds", compress = "bzip2")\n'
        f'saveRDS(df, "{tmp_path}/xz.txt", compress = "xz")\n'
        f'saveRDS(df, "{tmp_path}/plain.rda", compress = FALSE)\n'
        f'saveRDS(df, "{tmp_path}/ascii.rds", ascii = TRUE)\n'
        f'save(df, file = "{tmp_path}/saved.rds")\n'
    )
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "table.rds")
    (tmp_path / "text.rds").write_text("hello, not R data\n")
    (tmp_path / "empty.rds").write_bytes(b"")
    whole = (tmp_path / "gz.RData").read_bytes()
    (tmp_path / "cut.rds").write_bytes(gzip.compress(gzip.decompress(whole)[:30]))
    good = ["gz.RData", "bz.rds", "xz.txt", "plain.rda", "ascii.rds", "saved.rds"]
    bad = ["table.rds", "text.rds", "empty.rds", "cut.rds"]
    con = connect()
    for n in good + bad:
        f = str(tmp_path / n)
        (by_r,) = r_lines(
            run_r,
            f"x <- tryCatch(rdarrow::rdata_objects({r_str(f)}), error = function(e) e)\n"
            'if (inherits(x, "error")) cat("ERROR", gsub("\\n", " ", conditionMessage(x)), "\\n", sep = "") '
            'else cat(x$name, x$class, "\\n")',
        )
        res = cli("ls", "--json", f)
        try:
            listed = rdarrow.list_objects(f)
            by_py = f"{listed[0]['name']} {listed[0]['class'][0]}"
        except rdarrow.RDataError as e:
            by_py = "ERROR" + str(e)
        try:
            row = con.execute("SELECT name, class FROM rdata_objects(?)", [f]).fetchone()
            by_duck = f"{row[0]} {row[1].split(',')[0]}"
        except Exception as e:  # noqa: BLE001 - DuckDB's error classes vary
            by_duck = "ERROR" + str(e)
        if n in good:
            assert not by_r.startswith("ERROR"), (n, by_r)
            o = json.loads(res.stdout)[0]
            assert by_r.strip() == by_py == by_duck == f"{o['name']} {o['class'].split(',')[0]}", (n, by_r, by_py, by_duck, o)
        else:
            assert by_r.startswith("ERROR"), (n, by_r)
            # the engine's message, after the file's name where R gives it;
            # each host names its own way to salvage a damaged file
            message = re.sub(r"^.*?: ", "", by_r.removeprefix("ERROR").strip(), count=1) if f in by_r else by_r.removeprefix("ERROR").strip()
            message = unhinted(message)
            for other in (cli_error(res), by_py, by_duck):
                assert message in unhinted(other), (n, message, other)
    con.close()


LEVELS = [
    ("gzip", None),
    ("bzip2", 1),
    ("xz", 0),
    ("gzip", 9),
    ("none", 42),
    ("gzip", 10),
    ("bzip2", 0),
    ("xz", -1),
    ("lz4", None),
    ("zstd", None),
    ("GZIP", None),
]
MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ", "none": b"RDX3"}


def test_compression_names_and_levels_are_taken_or_refused_alike(tmp_path, run_r):
    src = tmp_path / "src.arrow"
    table = pa.table({"a": pa.array([1, 2], pa.int32())})
    with pa.ipc.new_file(src, table.schema) as w:
        w.write_table(table)
    by_r = r_lines(
        run_r,
        "cases <- list("
        + ", ".join(f"list({r_str(c)}, {'NULL' if lv is None else lv})" for c, lv in LEVELS)
        + ")\n"
        f'for (i in seq_along(cases)) {{ p <- file.path("{tmp_path}", paste0("r", i, ".RData"))\n'
        f'  x <- tryCatch({{ rdarrow::ipc_to_rdata("{src}", p, name = "df", compress = cases[[i]][[1]], '
        "compression_level = cases[[i]][[2]]); \"ok\" }, error = function(e) conditionMessage(e))\n"
        '  cat(x, "\\n", sep = "") }',
    )
    for i, (c, lv) in enumerate(LEVELS, start=1):
        try:
            rdarrow.write_rdata(table, tmp_path / f"py{i}.RData", name="df", compress=c, compression_level=lv)
            by_py = "ok"
        except rdarrow.RDataError as e:
            by_py = str(e)
        args = ["to-rdata", str(src), "-o", str(tmp_path / f"cli{i}.RData"), "--name", "df", "--compress", c]
        if lv is not None:
            args += ["--level", str(lv)]
        res = cli(*args)
        by_cli = "ok" if res.returncode == 0 else cli_error(res)
        assert by_r[i - 1] == by_py == by_cli, (c, lv, by_r[i - 1], by_py, by_cli)
        if by_py == "ok":
            for who in ("r", "py", "cli"):
                head = (tmp_path / f"{who}{i}.RData").read_bytes()[:5]
                assert head.startswith(MAGIC[c]), (who, c, head)
        else:
            assert by_py.startswith(("unknown compression", "compression level")), by_py
    # every file written loads in R, the same data frame
    ok = [i for i, _ in enumerate(LEVELS, start=1) if by_r[i - 1] == "ok"]
    assert len(ok) == 5
    out = run_r(
        "\n".join(
            f'e <- new.env(); load("{tmp_path}/{who}{i}.RData", e); stopifnot(identical(e$df, data.frame(a = 1:2)))'
            for i in ok
            for who in ("r", "py", "cli")
        )
        + '\ncat("loaded")'
    )
    assert out == "loaded"
