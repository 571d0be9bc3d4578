"""rdarrow's DuckDB extension (tools/duckdb-extension.sh), loaded into the
duckdb Python package and into the DuckDB command line: every data frame
of the peer corpus against what R itself loads, the type mapping, sources
(globs, lists, object paths, a lazy-load data base, a URL), projection,
replacement scans, listings and errors (hostile files included)."""

import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest

import rdarrow
from test_corpus import check_frames_against_r

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = Path(os.environ.get("RDARROW_DUCKDB_EXTENSION", ROOT / "target" / "duckdb" / "rdarrow.duckdb_extension"))

duckdb = pytest.importorskip("duckdb", reason="the duckdb package is not installed (tools/setup.sh installs it)")


def _extension():
    if not EXTENSION.is_file():
        msg = f"the DuckDB extension is not built ({EXTENSION}): run tools/duckdb-extension.sh"
        if os.environ.get("RDARROW_REQUIRE_DUCKDB"):
            pytest.fail(msg)
        pytest.skip(msg)
    return str(EXTENSION)


def connect():
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{_extension()}'")
    return con


@pytest.fixture(scope="module")
def con():
    return connect()


def q(con, sql, *params):
    return con.execute(sql, list(params)).to_arrow_table() if params else con.execute(sql).to_arrow_table()


# every column kind of the mapping, NA in each
KINDS_R = r"""
n <- 6L
df <- data.frame(
  i = c(1L, NA, 3L, -4L, 5L, 6L),
  d = c(1.5, NA, NaN, Inf, -Inf, 0),
  b = c(TRUE, NA, FALSE, TRUE, FALSE, TRUE),
  s = c("a", NA, "\u00e9t\u00e9", "", "a much longer string than twelve bytes", "\u65e5\u672c"),
  f = factor(c("lo", NA, "hi", "lo", "mid", "hi"), levels = c("lo", "mid", "hi", "unused")),
  o = factor(c("x", "y", NA, "x", "y", "x"), levels = c("y", "x"), ordered = TRUE),
  day = as.Date("2020-02-28") + c(0:1, NA, 3:5),
  t = as.POSIXct("2021-06-01 12:00:00", tz = "UTC") + c(0, NA, 1.5, 60, 3600, -86400),
  tz = as.POSIXct("2021-06-01 12:00:00", tz = "Europe/Berlin") + c(0, 1, NA, 3, 4, 5),
  dt = as.difftime(c(1.5, NA, 3, 4, 5, 6), units = "mins"),
  big = bit64::as.integer64(c("9007199254740993", NA, "-1", "0", "1", "2")),
  hm = hms::hms(seconds = c(0, 59.5, NA, 3600, 86399, 1)),
  # fractions finer than any timestamp unit keeps: still a timestamp here
  fine = as.POSIXct(1.5e9 + c(0.123456789, 1, 2, NA, 4, 5), origin = "1970-01-01", tz = "UTC"),
  stringsAsFactors = FALSE
)
df$lst <- list(1:3, NULL, integer(0), 4L, NA_integer_, 7:8)
df$inner <- data.frame(p = c(1, 2, NA, 4, 5, 6), q = c("u", "v", "w", NA, "y", "z"))
df$m <- matrix(c(1:11, NA), ncol = 2)
save(df, file = file.path(out, "kinds.RData"))
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory, run_r):
    d = tmp_path_factory.mktemp("duck")
    run_r(
        f'out <- "{d}"\n'
        + KINDS_R
        + r"""
mk <- function(k, extra) {
  x <- data.frame(id = seq_len(k), g = factor(rep(c("a", "b"), length.out = k)), v = seq_len(k) / 2)
  x[[extra]] <- rep(extra, k)
  x
}
dir.create(file.path(out, "archive"))
a <- mk(3, "only_a"); save(a, file = file.path(out, "archive", "p1.RData"))
b <- mk(4, "only_b"); b$g <- factor(as.character(b$g), levels = c("b", "a")); b$v <- 1:4
save(b, file = file.path(out, "archive", "p2.RData"), compress = "xz")
saveRDS(mk(2, "only_a"), file.path(out, "archive", "p3.rds"), compress = "bzip2")
lst <- list(a = data.frame(x = 1:3, y = c("p", "q", "r")), b = list(deep = data.frame(z = c(2.5, NA))))
save(lst, file = file.path(out, "lists.RData"))
saveRDS(data.frame(x = 1:5, y = letters[1:5]), file.path(out, "one.rds"))
a <- data.frame(p = 1); b <- data.frame(q = 2); save(a, b, file = file.path(out, "two.RData"))
big <- data.frame(x = seq_len(300000) / 4, f = factor(rep("b", 300000), levels = c("a", "b")),
                  s = rep(c("p", "q", "r"), 100000))
saveRDS(big, file.path(out, "big.rds"), compress = FALSE)
"""
    )
    lazy = run_r('cat(system.file("data", "Rdata.rdb", package = "datasets"))').strip()
    return d, lazy


def test_every_corpus_frame_has_the_values_r_loads(r_frames, con):
    def read(f, obj):
        if obj is None:
            return q(con, "SELECT * FROM read_rdata(?)", f)
        return q(con, "SELECT * FROM read_rdata(?, object := ?)", f, obj)

    check_frames_against_r(r_frames, read, duckdb.Error, timestamps_hold_nan=False)


def test_every_column_kind_maps_as_documented(files, con):
    d, _ = files
    f = str(d / "kinds.RData")
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_rdata('{f}'))").fetchall())
    assert types == {
        "i": "INTEGER",
        "d": "DOUBLE",
        "b": "BOOLEAN",
        "s": "VARCHAR",
        "f": "ENUM('lo', 'mid', 'hi', 'unused')",
        "o": "ENUM('y', 'x')",
        "day": "DATE",
        "t": "TIMESTAMP WITH TIME ZONE",
        "tz": "TIMESTAMP WITH TIME ZONE",
        "dt": "INTERVAL",
        "big": "BIGINT",
        "hm": "TIME",
        "fine": "TIMESTAMP WITH TIME ZONE",
        "lst": "INTEGER[]",
        "inner": "STRUCT(p DOUBLE, q VARCHAR)",
        "m": "INTEGER[2]",
    }, types
    con.execute("SET TimeZone = 'UTC'")
    rows = con.execute(f"SELECT * FROM read_rdata('{f}')").fetchall()
    import datetime as dt

    utc = dt.timezone.utc
    assert [r[0] for r in rows] == [1, None, 3, -4, 5, 6]
    assert rows[0][1] == 1.5 and rows[1][1] is None and rows[2][1] != rows[2][1]  # NA is NULL, NaN stays NaN
    assert [r[1] for r in rows][3:] == [float("inf"), float("-inf"), 0.0]
    assert [r[2] for r in rows] == [True, None, False, True, False, True]
    assert [r[3] for r in rows] == ["a", None, "\u00e9t\u00e9", "", "a much longer string than twelve bytes", "\u65e5\u672c"]
    assert [r[4] for r in rows] == ["lo", None, "hi", "lo", "mid", "hi"]
    assert [r[5] for r in rows] == ["x", "y", None, "x", "y", "x"]
    assert rows[0][6] == dt.date(2020, 2, 28) and rows[1][6] == dt.date(2020, 2, 29) and rows[2][6] is None
    assert rows[0][7] == dt.datetime(2021, 6, 1, 12, tzinfo=utc)
    assert rows[1][7] is None
    assert rows[2][7] == dt.datetime(2021, 6, 1, 12, 0, 1, 500000, tzinfo=utc)
    assert rows[5][7] == dt.datetime(2021, 5, 31, 12, tzinfo=utc)
    assert rows[0][8] == dt.datetime(2021, 6, 1, 10, tzinfo=utc)  # 12:00 in Berlin (summer)
    assert rows[0][9] == dt.timedelta(seconds=90) and rows[1][9] is None
    assert [r[10] for r in rows] == [9007199254740993, None, -1, 0, 1, 2]
    assert rows[1][11] == dt.time(0, 0, 59, 500000) and rows[2][11] is None
    assert rows[0][12] == dt.datetime(2017, 7, 14, 2, 40, 0, 123457, tzinfo=utc)
    rows = [r[:11] + r[13:] for r in rows]
    assert [r[11] for r in rows] == [[1, 2, 3], None, [], [4], [None], [7, 8]]
    assert rows[2][12] == {"p": None, "q": "w"} and rows[3][12] == {"p": 4.0, "q": None}
    assert [list(r[13]) for r in rows] == [[1, 7], [2, 8], [3, 9], [4, 10], [5, 11], [6, None]]
    # the same as DuckDB makes of the Arrow table rdarrow.read_table() gives
    tb = rdarrow.read_table(f, time_unit="us")  # noqa: F841
    via_arrow = con.execute("SELECT i, d, b, s, CAST(f AS VARCHAR), day, big, lst, \"inner\", m FROM tb").fetchall()
    ext = con.execute(f"SELECT i, d, b, s, CAST(f AS VARCHAR), day, big, lst, \"inner\", m FROM read_rdata('{f}')").fetchall()
    assert repr(via_arrow) == repr(ext)


def test_globs_lists_and_directories_are_one_table_by_column_name(files, con):
    d, _ = files
    arch = d / "archive"
    t = q(con, f"SELECT * FROM read_rdata('{arch}/*.RData', filename := true)")
    assert t.column_names == ["id", "g", "v", "only_a", "only_b", "filename"]
    assert t.column("id").to_pylist() == [1, 2, 3, 1, 2, 3, 4]
    # factor levels differ between the files: text
    assert t.schema.field("g").type == pa.string()
    assert t.column("g").to_pylist() == ["a", "b", "a", "a", "b", "a", "b"]
    # double and integer: double
    assert t.column("v").to_pylist() == [0.5, 1.0, 1.5, 1.0, 2.0, 3.0, 4.0]
    assert t.column("only_a").to_pylist() == ["only_a"] * 3 + [None] * 4
    assert t.column("only_b").to_pylist() == [None] * 3 + ["only_b"] * 4
    assert t.column("filename").to_pylist() == [str(arch / "p1.RData")] * 3 + [str(arch / "p2.RData")] * 4
    # a list of files, and a directory (every R data file in it)
    n = con.execute(f"SELECT count(*) FROM read_rdata(['{arch}/p3.rds', '{arch}/p1.RData'])").fetchall()
    assert n == [(5,)]
    assert con.execute(f"SELECT count(*), count(only_a) FROM read_rdata('{arch}')").fetchall() == [(9, 5)]
    # the same levels everywhere stay an ENUM
    t = q(con, f"SELECT g FROM read_rdata(['{arch}/p1.RData', '{arch}/p3.rds'])")
    assert pa.types.is_dictionary(t.schema.field("g").type)
    with pytest.raises(duckdb.Error, match="no file matches"):
        con.execute(f"SELECT * FROM read_rdata('{arch}/*.nothing')")


def test_object_paths_lazy_load_bases_and_read_rds(files, con):
    d, lazy = files
    f = d / "lists.RData"
    assert con.execute(f"SELECT * FROM read_rdata('{f}', object := 'lst$a')").fetchall() == [(1, "p"), (2, "q"), (3, "r")]
    assert con.execute(f"SELECT z FROM read_rdata('{f}', object := 'lst$b$deep')").fetchall() == [(2.5,), (None,)]
    assert con.execute(f"SELECT * FROM read_rds('{d}/one.rds')").fetchall() == [(i + 1, "abcde"[i]) for i in range(5)]
    # the one object of each file, as R's read_rds() reads
    with pytest.raises(duckdb.Error, match=r"the file holds 2 objects \('a', 'b'\), not one: read it with read_rdata\(\)"):
        con.execute(f"SELECT * FROM read_rds('{d}/two.RData')")
    t = q(con, f"SELECT * FROM read_rdata('{lazy}', object := 'mtcars')")
    ref = rdarrow.read_table(lazy, object="mtcars")
    assert t.num_rows == 32 and t.column_names == ref.column_names
    assert t.column("mpg").to_pylist() == ref.column("mpg").to_pylist()
    t = q(con, f"SELECT * FROM read_rdata('{lazy}', object := 'iris')")
    assert t.column("Species").to_pylist()[:1] == ["setosa"]
    assert pa.types.is_dictionary(t.schema.field("Species").type)


def test_a_url_on_a_local_web_server(files, con):
    d, _ = files

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(d), **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/kinds.RData"
        assert con.execute(f"SELECT sum(i) FROM read_rdata('{url}')").fetchall() == [(11,)]
        with pytest.raises(duckdb.Error, match="404"):
            con.execute(f"SELECT * FROM read_rdata('{url}.missing')")
    finally:
        server.shutdown()
        server.server_close()


def test_projection_converts_only_the_asked_for_columns(files, con, tmp_path):
    d, _ = files
    # the factor's codes are all 2; make them 99 (outside its levels): only
    # a query that converts that column can notice
    raw = (d / "big.rds").read_bytes()
    codes = (2).to_bytes(4, "big") * 300000
    at = raw.index(codes)
    bad = tmp_path / "bad-codes.rds"
    bad.write_bytes(raw[:at] + (99).to_bytes(4, "big") * 300000 + raw[at + len(codes):])
    assert con.execute(f"SELECT sum(x), count(s) FROM read_rdata('{bad}')").fetchall() == [(sum(range(1, 300001)) / 4, 300000)]
    assert con.execute(f"SELECT count(*) FROM read_rdata('{bad}')").fetchall() == [(300000,)]
    with pytest.raises(duckdb.Error, match=r"factor code 99"):
        con.execute(f"SELECT f FROM read_rdata('{bad}')").fetchall()
    # the columns := argument reads only those
    t = q(con, f"SELECT * FROM read_rdata('{d}/big.rds', columns := ['s', 'x'])")
    assert t.column_names == ["s", "x"] and t.num_rows == 300000


def test_replacement_scans_read_r_files_named_in_from(files, con):
    d, _ = files
    assert con.execute(f"SELECT count(*) FROM '{d}/one.rds'").fetchall() == [(5,)]
    assert con.execute(f"SELECT count(*) FROM '{d}/archive/*.RData'").fetchall() == [(7,)]
    assert con.execute(f"SELECT sum(i) FROM '{d}/kinds.RData'").fetchall() == [(11,)]


def test_rdata_objects_lists_as_r_does(files, con):
    d, _ = files
    f = d / "lists.RData"
    rows = con.execute(f"SELECT name, class, type, length, nrow, ncol FROM rdata_objects('{f}')").fetchall()
    assert rows == [("lst", "list", "list", 2, None, None)]
    rows = con.execute(f"SELECT name, class, nrow, ncol FROM rdata_objects('{f}', recursive := true)").fetchall()
    assert ("lst$a", "data.frame", 3, 2) in rows and ("lst$b$deep", "data.frame", 2, 1) in rows
    # counts are integers (BIGINT), as R's rdata_objects() gives them
    types = con.execute(f"SELECT typeof(length), typeof(nrow), typeof(ncol), typeof(bytes) FROM rdata_objects('{f}')").fetchall()
    assert types == [("BIGINT",) * 4]
    listed = con.execute(f"SELECT file, name FROM rdata_objects('{d}/archive')").fetchall()
    assert [n for _, n in listed] == ["a", "b", "p3"]
    ref = rdarrow.list_objects(str(d / "kinds.RData"))
    got = con.execute(f"SELECT name, bytes FROM rdata_objects('{d}/kinds.RData')").fetchall()
    assert got == [(o["name"], o["bytes"]) for o in ref]


def test_errors_say_what_and_where(files, con, tmp_path):
    d, _ = files
    with pytest.raises(duckdb.Error, match="cannot open"):
        con.execute(f"SELECT * FROM read_rdata('{tmp_path}/missing.rds')")
    notr = tmp_path / "not-r.rds"
    notr.write_text("hello, world\n")
    with pytest.raises(duckdb.Error, match="not R data|not an R data"):
        con.execute(f"SELECT * FROM read_rdata('{notr}')")
    cut = tmp_path / "cut.rds"
    cut.write_bytes((d / "big.rds").read_bytes()[:5000])
    with pytest.raises(duckdb.Error, match=r"byte|truncated|ends"):
        con.execute(f"SELECT * FROM read_rdata('{cut}')").fetchall()
    with pytest.raises(duckdb.Error, match="nothing"):
        con.execute(f"SELECT * FROM read_rdata('{d}/lists.RData', object := 'nothing')")



def test_a_promise_is_refused_by_every_table_function(crafted, con):
    """DuckDB never runs R code: a file holding a promise where R keeps
    none is the engine's error, naming its place; listing still works."""
    d, places = crafted
    for name, place in places.items():
        f = d / name
        for fn in ("read_rdata", "read_rds") if name.endswith(".rds") else ("read_rdata",):
            with pytest.raises(duckdb.Error, match=re.escape(place) + " is a promise"):
                con.execute(f"SELECT * FROM {fn}('{f}')").fetchall()
        assert con.execute(f"SELECT count(*) FROM rdata_objects('{f}')").fetchone()[0] >= 1
    assert not (d / "ran").exists()

SWEEP = r"""
import duckdb, random, sys
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{sys.argv[1]}'")
data = open(sys.argv[2], "rb").read()
out = sys.argv[3]
rng = random.Random(7)
ok = failed = 0
for k in range(int(sys.argv[4])):
    b = bytearray(data)
    how = k % 3
    if how == 0:
        b = b[: rng.randrange(len(b))]
    else:
        for _ in range(1 + how):
            b[rng.randrange(len(b))] = rng.randrange(256)
    open(out, "wb").write(bytes(b))
    try:
        con.execute(f"SELECT * FROM read_rdata('{out}')").fetchall()
        ok += 1
    except duckdb.Error as e:
        assert "rdarrow" in str(e), str(e)
        failed += 1
print(ok, failed)
"""


def test_hostile_files_give_errors_never_a_crash(files, tmp_path):
    d, _ = files
    # an uncompressed file, so that the mutations reach R's serialization
    target = d / "kinds-plain.RData"
    rdarrow.write_rdata(rdarrow.read_table(str(d / "kinds.RData")), str(target), name="df", compress="none")
    for f, n in [(target, 400), (d / "kinds.RData", 200), (d / "archive" / "p2.RData", 100)]:
        res = subprocess.run(
            [sys.executable, "-c", SWEEP, _extension(), str(f), str(tmp_path / "m.RData"), str(n)],
            capture_output=True, text=True, timeout=600,
        )
        assert res.returncode == 0, f"the DuckDB process died (exit {res.returncode}) on mutations of {f.name}:\n{res.stderr[-3000:]}"
        ok, failed = map(int, res.stdout.split())
        assert ok + failed == n and failed > 0, (f.name, ok, failed)


def test_an_interrupt_stops_the_query(files):
    d, _ = files
    con = connect()
    big = d / "big.rds"
    stop = threading.Timer(0.05, con.interrupt)
    stop.start()
    with pytest.raises(duckdb.Error):
        for _ in range(200):
            con.execute(f"SELECT * FROM read_rdata(['{big}', '{big}', '{big}', '{big}'])").fetchall()
    stop.cancel()
    # the connection goes on
    assert con.execute(f"SELECT count(*) FROM read_rdata('{big}')").fetchall() == [(300000,)]


def test_the_duckdb_command_line_runs_a_script(files, tmp_path):
    d, _ = files
    cli = shutil.which("duckdb", path=os.path.dirname(sys.executable)) or shutil.which("duckdb")
    if cli is None:
        msg = "the DuckDB command line (duckdb-cli from PyPI) is not installed: tools/setup.sh installs it"
        if os.environ.get("RDARROW_REQUIRE_DUCKDB"):
            pytest.fail(msg)
        pytest.skip(msg)
    script = tmp_path / "q.sql"
    script.write_text(
        f"LOAD '{_extension()}';\n"
        f"SELECT f, count(*) AS n FROM read_rdata('{d}/kinds.RData') GROUP BY f ORDER BY f;\n"
        f"SELECT sum(id) FROM '{d}/archive/*.RData';\n"
    )
    res = subprocess.run([cli, "-unsigned", "-csv", "-f", str(script)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.split()
    assert lines[:5] == ["f,n", "lo,2", "mid,1", "hi,2", "NULL,1"] or lines[:5] == ["f,n", "lo,2", "mid,1", "hi,2", ",1"], res.stdout
    assert "16" in lines, res.stdout
    version = subprocess.run([cli, "-version"], capture_output=True, text=True).stdout
    assert version.strip()


def test_slots_of_s4_objects_by_at_paths(con, run_r, tmp_path):
    run_r(
        f"""
        setClass("Pt", representation(df = "data.frame", parts = "list"))
        pt <- new("Pt", df = data.frame(a = 1:3, s = c("u", NA, "w")), parts = list(inner = data.frame(z = c(2.5, NA))))
        save(pt, file = "{tmp_path}/pt.RData")
        """
    )
    f = tmp_path / "pt.RData"
    assert con.execute(f"SELECT * FROM read_rdata('{f}', object := 'pt@df')").fetchall() == [(1, "u"), (2, None), (3, "w")]
    assert con.execute(f"SELECT z FROM read_rdata('{f}', object := 'pt@parts$inner')").fetchall() == [(2.5,), (None,)]
    names = [n for (n,) in con.execute(f"SELECT name FROM rdata_objects('{f}', recursive := true)").fetchall()]
    assert {"pt", "pt@df", "pt@parts", "pt@parts$inner"} <= set(names)
    with pytest.raises(duckdb.Error, match="'pt@nope' not found"):
        con.execute(f"SELECT * FROM read_rdata('{f}', object := 'pt@nope')")
