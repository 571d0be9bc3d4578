"""The ``rdarrow`` command (and ``python -m rdarrow``): the command line of
the Rust crate ``rdarrow-cli`` (``ls``, ``to-arrow``, ``to-parquet``,
``to-rdata``, ``to-dataset``: the same program, help, exit codes and
progress bar as the cargo-installed binary), with the Python package's
``to-h5ad`` and ``from-h5ad`` (see :func:`rdarrow.singlecell.cli.main`) in the
same help."""

import sys
from typing import List, Optional

# the package's own commands: name and help line
HOST = [
    ("to-h5ad", "Write a Seurat object or a (Single Cell|Summarized)Experiment as .h5ad (.h5mu for several assays)"),
    ("from-h5ad", "Write an .h5ad (or .h5mu) file as a Seurat object or a SingleCellExperiment"),
]


def main(argv: Optional[List[str]] = None) -> int:
    from . import _rdarrow

    args = list(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    code, host = _rdarrow.command_line(["rdarrow", *args], HOST)
    if host is None:
        return code
    from .singlecell.cli import main as single_cell

    return single_cell(args[args.index(host):])


def console() -> None:
    """The entry point of the installed ``rdarrow`` command: Ctrl-C stops
    it at once, as it stops the binary (the engine runs with the
    interpreter free, where Python's own handler would wait for it)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(main())


if __name__ == "__main__":
    console()
