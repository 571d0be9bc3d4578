"""Writes small Arrow Tensor messages for the tensor_message fuzz seeds:
pyarrow's (every numeric type, row- and column-major, dimension names, a
zero-length dimension, one and five dimensions) and, when given R data
files, rdarrow's (R's types and attributes in the message's "r").

Usage: python make_tensor_seeds.py <outdir> [file.rds ...]
"""
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, a, names=None):
    with pa.OSFile(os.path.join(out, name + ".tensor"), "wb") as f:
        ipc.write_tensor(pa.Tensor.from_numpy(a, dim_names=names), f)


for dtype in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]:
    a = np.arange(24).astype(dtype).reshape(2, 3, 4)
    write(f"{dtype}_c", a)
    write(f"{dtype}_f", np.asfortranarray(a), names=["a", "b", "c"])
write("empty", np.zeros((0, 3)))
write("one", np.arange(5.0))
write("five", np.arange(720.0).reshape(2, 3, 4, 5, 6))

if len(sys.argv) > 2:
    import rdarrow

    for i, path in enumerate(sys.argv[2:]):
        try:
            rdarrow.to_tensor(path, os.path.join(out, f"r{i}.tensor"))
        except rdarrow.RDataError:
            pass
