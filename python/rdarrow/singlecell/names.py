"""The names both directions share, so that R -> AnnData -> R keeps them:
the reductions SingleCellExperiment names in capitals (``PCA``) and
AnnData's ``obsm`` keys (``X_pca``)."""

from __future__ import annotations

# AnnData's obsm key -> SingleCellExperiment's reducedDim name
REDUCED = {"X_pca": "PCA", "X_umap": "UMAP", "X_tsne": "TSNE"}


def obsm_key(reduced: str) -> str:
    """The ``obsm`` key of reducedDim ``reduced``: ``X_pca`` for ``PCA``,
    the name itself for one already ``X_``-prefixed or not of
    :data:`REDUCED`."""
    if reduced.startswith("X_"):
        return reduced
    key = f"X_{reduced.lower()}"
    return key if key in REDUCED else reduced
