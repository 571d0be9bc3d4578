"""``python -m rdarrow to-h5ad in.rds -o out.h5ad``: see
:func:`rdarrow.anndata.main`."""

import sys

from .anndata import main

sys.exit(main())
