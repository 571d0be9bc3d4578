"""Writes small Arrow IPC files and streams covering the types rdarrow maps
to R, for the ipc_to_rdata fuzz seeds.

Usage: python make_ipc_seeds.py <outdir> [r_metadata_ascii.txt r_metadata_gz.txt]
"""
import datetime as dt
import decimal
import os
import sys

import pyarrow as pa
import pyarrow.ipc as ipc

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
md_files = sys.argv[2:]

n = 5
cols = {
    "null": pa.nulls(n),
    "bool": pa.array([True, False, None, True, False]),
    "i8": pa.array([1, -2, None, 127, -128], pa.int8()),
    "i16": pa.array([1, -2, None, 32767, -32768], pa.int16()),
    "i32": pa.array([1, -2, None, 2**31 - 1, -(2**31) + 1], pa.int32()),
    "i64": pa.array([1, -2, None, 2**40, -(2**63)], pa.int64()),
    "i64s": pa.array([1, -2, None, 4, 5], pa.int64()),
    "u8": pa.array([1, 2, None, 255, 0], pa.uint8()),
    "u16": pa.array([1, 2, None, 65535, 0], pa.uint16()),
    "u32": pa.array([1, 2, None, 2**32 - 1, 0], pa.uint32()),
    "u64": pa.array([1, 2, None, 2**64 - 1, 0], pa.uint64()),
    "f16": pa.array([1.5, None, 0.0, -2.0, 65504.0], pa.float16()) if hasattr(pa, "float16") else pa.nulls(n),
    "f32": pa.array([1.5, None, float("nan"), float("inf"), -0.0], pa.float32()),
    "f64": pa.array([1.5, None, float("nan"), float("-inf"), 1e300]),
    "dec128": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"), decimal.Decimal("0"), decimal.Decimal("99.99")], pa.decimal128(10, 2)),
    "dec256": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"), decimal.Decimal("0"), decimal.Decimal("99.99")], pa.decimal256(40, 2)),
    "utf8": pa.array(["a", None, "\u00e9t\u00e9", "", "zz"]),
    "lutf8": pa.array(["a", None, "b", "", "zz"], pa.large_string()),
    "vutf8": pa.array(["a", None, "a string longer than twelve bytes", "", "zz"], pa.string_view()),
    "bin": pa.array([b"\x00\x01", None, b"", b"abc", b"\xff"], pa.binary()),
    "lbin": pa.array([b"\x00\x01", None, b"", b"abc", b"\xff"], pa.large_binary()),
    "vbin": pa.array([b"\x00\x01", None, b"", b"abcdefghijklmnop", b"\xff"], pa.binary_view()),
    "fbin": pa.array([b"ab", None, b"cd", b"ef", b"gh"], pa.binary(2)),
    "d32": pa.array([dt.date(2020, 1, 1), None, dt.date(1970, 1, 1), dt.date(1900, 3, 1), dt.date(2100, 12, 31)], pa.date32()),
    "d64": pa.array([0, None, 86_400_000, -86_400_000, 1_000], pa.date64()),
    "ts_s": pa.array([0, None, 1, 2, 3], pa.timestamp("s")),
    "ts_ms": pa.array([0, None, 1, 2, 3], pa.timestamp("ms", tz="UTC")),
    "ts_us": pa.array([0, None, 1, 2, 3], pa.timestamp("us", tz="Europe/Paris")),
    "ts_ns": pa.array([0, None, 1, 2, 3], pa.timestamp("ns", tz="+01:00")),
    "t32s": pa.array([0, None, 1, 2, 86399], pa.time32("s")),
    "t32ms": pa.array([0, None, 1, 2, 3], pa.time32("ms")),
    "t64us": pa.array([0, None, 1, 2, 3], pa.time64("us")),
    "t64ns": pa.array([0, None, 1, 2, 3], pa.time64("ns")),
    "dur_s": pa.array([0, None, 1, -2, 3], pa.duration("s")),
    "dur_ms": pa.array([0, None, 1, -2, 3], pa.duration("ms")),
    "dur_us": pa.array([0, None, 1, -2, 3], pa.duration("us")),
    "dur_ns": pa.array([0, None, 1, -2, 3], pa.duration("ns")),
    "dict": pa.array(["x", "y", None, "x", "z"]).dictionary_encode(),
    "odict": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 0, 1], pa.int16()), pa.array(["lo", "hi"]), ordered=True),
    "idict": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 0, 1], pa.int32()), pa.array([10, 20])),
    "bdict": pa.DictionaryArray.from_arrays(pa.array([0, 1, 1, 0, None], pa.int8()), pa.array([b"ab", b"c"])),
    "list": pa.array([[1, 2], None, [], [3], [4, 5, 6]], pa.list_(pa.int32())),
    "llist": pa.array([["a"], None, [], ["b", None], ["c"]], pa.large_list(pa.string())),
    "flist": pa.array([[1, 2], None, [3, 4], [5, 6], [7, 8]], pa.list_(pa.int16(), 2)),
    "struct": pa.array([{"p": 1, "q": "a"}, None, {"p": 3, "q": None}, {"p": 4, "q": "d"}, {"p": 5, "q": "e"}],
                       pa.struct([("p", pa.int32()), ("q", pa.string())])),
    "map": pa.array([[("k", 1)], None, [], [("a", 2), ("b", 3)], [("z", 0)]], pa.map_(pa.string(), pa.int64())),
    "nested": pa.array([[[1], [2, 3]], None, [], [[]], [[4]]], pa.list_(pa.list_(pa.int64()))),
}
try:
    cols["lview"] = pa.array([[1, 2], None, [], [3], [4, 5, 6]], pa.list_view(pa.int32()))
    cols["llview"] = pa.array([[1, 2], None, [], [3], [4, 5, 6]], pa.large_list_view(pa.int32()))
except Exception:
    pass
try:
    cols["ree"] = pa.RunEndEncodedArray.from_arrays(pa.array([2, 4, 5], pa.int32()), pa.array(["a", None, "b"]))
except Exception:
    pass


def write(name, table, stream, compression=None, metadata=None):
    if metadata:
        table = table.replace_schema_metadata(metadata)
    opts = ipc.IpcWriteOptions(compression=compression)
    path = os.path.join(out, name + (".arrows" if stream else ".arrow"))
    with pa.OSFile(path, "wb") as f:
        w = (ipc.new_stream if stream else ipc.new_file)(f, table.schema, options=opts)
        for b in table.to_batches(max_chunksize=3):
            w.write_batch(b)
        w.close()


# one table per column (small, focused seeds), file and stream alternately
for i, (name, arr) in enumerate(cols.items()):
    t = pa.table({name: arr})
    write("col_" + name, t, stream=bool(i % 2))

# a few mixed tables
mixed = pa.table({k: cols[k] for k in ["i32", "f64", "utf8", "dict", "d32", "ts_us", "list", "struct"]})
write("mixed", mixed, stream=False)
write("mixed", mixed, stream=True)
write("mixed_lz4", mixed, stream=False, compression="lz4")
write("mixed_zstd", mixed, stream=True, compression="zstd")
write("empty", pa.table({"a": pa.array([], pa.int32()), "b": pa.array([], pa.string())}), stream=False)
write("nocols", pa.table({}), stream=True)

# arrow R's "r" metadata, plain and gzipped, and rdarrow's fidelity notes
for i, path in enumerate(md_files):
    with open(path, "rb") as f:
        md = f.read()
    t = pa.table({"a": cols["i32"], "b": cols["utf8"]})
    write("rmeta_%d" % i, t, stream=bool(i % 2), metadata={b"r": md})
notes = b"tzone-missing\tts\nunits\tdur\tmins\ninteger64\tbig\ndate-integer\tday\ntzone-empty\tts2\n"
t = pa.table({"ts": cols["ts_us"], "dur": cols["dur_s"], "big": cols["i64s"], "day": cols["d32"], "ts2": cols["ts_ms"]})
write("fidelity", t, stream=False, metadata={b"rdarrow": notes})
print("wrote", len(os.listdir(out)), "IPC seed files")
