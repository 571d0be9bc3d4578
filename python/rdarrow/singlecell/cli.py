"""The ``rdarrow to-h5ad`` and ``rdarrow from-h5ad`` commands (``python -m
rdarrow``): single-cell experiments between R's files and ``.h5ad``."""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, Sequence

from .._errors import RDataError
from .._optional import need
from . import to_h5ad, write_sce, write_seurat


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m rdarrow to-h5ad in.rds -o out.h5ad`` and ``python -m
    rdarrow from-h5ad in.h5ad -o out.rds --as seurat|sce``."""
    import argparse

    p = argparse.ArgumentParser(prog="rdarrow", description="R single-cell experiments as AnnData")
    sub = p.add_subparsers(dest="command", required=True)
    h = sub.add_parser("to-h5ad", help="write a Seurat object or a (Single Cell|Summarized)Experiment as .h5ad")
    h.add_argument("input", help="an .rds/.RData file, URL or glob")
    h.add_argument("-o", "--output", required=True, help="the .h5ad file to write (.h5mu for several assays)")
    h.add_argument("--object", help="the object of an .RData file")
    h.add_argument("--assay", help="the Seurat assay to write alone, or the experiment's assay for X")
    h.add_argument("--compression", choices=["gzip", "lzf"], help="HDF5 compression of the arrays")
    f = sub.add_parser("from-h5ad", help="write an .h5ad (or .h5mu) file as a Seurat object or a SingleCellExperiment")
    f.add_argument("input", help="an .h5ad file (.h5mu: a MuData)")
    f.add_argument("-o", "--output", required=True, help="the .rds file to write (.RData: saved under its name)")
    f.add_argument("--as", dest="kind", choices=["seurat", "sce"], default="seurat", help="the R object to write (default: seurat)")
    f.add_argument("--seurat-version", type=int, choices=[4, 5], default=5, help="SeuratObject's assay class: 5 (Assay5, the default) or 4 (Assay)")
    f.add_argument("--compress", default=None, help="the file's compression: gzip (the default), bzip2, xz or none")
    args = p.parse_args(argv)

    try:
        if args.command == "to-h5ad":
            to_h5ad(args.input, args.output, object=args.object, assay=args.assay, compression=args.compression)
        else:
            from_h5ad(args.input, args.output, kind=args.kind, seurat_version=args.seurat_version, compress=args.compress)
    except (RDataError, OSError, TypeError, ValueError, ImportError) as e:
        print(f"rdarrow: {e}", file=sys.stderr)
        return 1
    return 0


def from_h5ad(path: Any, out: Any, kind: str = "seurat", seurat_version: int = 5, compress: Optional[str] = None) -> None:
    """Write an ``.h5ad`` file (``.h5mu``: a MuData) as a Seurat object or a
    SingleCellExperiment (:func:`rdarrow.write_seurat`,
    :func:`rdarrow.write_sce`)."""
    p = os.fspath(path)
    if p.lower().endswith(".h5mu"):
        data = need("mudata", "reading .h5mu files").read_h5mu(p)
    else:
        anndata = need("anndata", "reading .h5ad files")
        data = anndata.read_h5ad(p)
    if kind == "sce":
        write_sce(data, out, compress=compress)
    else:
        write_seurat(data, out, version=seurat_version, compress=compress)
