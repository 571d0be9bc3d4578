"""Seeds of the qdata_encoding fuzz target: the decompressed payloads of
the .qdata files make_qs_seeds.R made (qs2's container undone here: each
block's zstd frame inflated, its shuffle undone), after one byte of the
byte order (0: little-endian).

    python make_qdata_payloads.py SEEDS_DIR
"""
import struct
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa


def frame_size(frame: bytes) -> int:
    """The content size a zstd frame's header records (qs2 writes it)."""
    fhd = frame[4]
    single = (fhd >> 5) & 1
    at = 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3]
    width = [1 if single else 0, 2, 4, 8][fhd >> 6]
    size = int.from_bytes(frame[at:at + width], "little")
    return size + 256 if width == 2 else size


def payload(data: bytes) -> bytes:
    out, at = [], 24
    while at < len(data):
        (word,) = struct.unpack_from("<I", data, at)
        n = word & 0x7FFFFFFF
        frame = data[at + 4:at + 4 + n]
        at += 4 + n
        block = pa.decompress(frame, decompressed_size=frame_size(frame), codec="zstd").to_pybytes()
        if word >> 31:
            whole = len(block) // 8 * 8
            planes = np.frombuffer(block[:whole], dtype=np.uint8).reshape(8, whole // 8)
            block = planes.T.tobytes() + block[whole:]
        out.append(block)
    return b"".join(out)


seeds = Path(sys.argv[1])
(seeds / "qdata_encoding").mkdir(parents=True, exist_ok=True)
for f in sorted((seeds / "qs_formats").glob("*.qdata")):
    (seeds / "qdata_encoding" / f.stem).write_bytes(b"\0" + payload(f.read_bytes()))
