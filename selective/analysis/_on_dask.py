"""Selection steps on a Dask DataFrame: the score on the cluster, the choice here (private)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from ..selectors.base import Selection
from ..selectors.description import OrderedTopK
from ..selectors.dp import SparseVectorScreen
from ..selectors.topk import NoisyTopK, TopK

__all__ = ["DaskScored"]

_DASK_SELECTORS = (TopK, NoisyTopK, OrderedTopK, SparseVectorScreen)


class _Scores:
    """A score function that returns scores computed beforehand (on the Dask frame)."""

    def __init__(self, scores: Any) -> None:
        self.scores = scores

    def __call__(self, data: Any) -> Any:
        return self.scores


class DaskScored:
    """Runs a score-based selector on a Dask frame: the score is reduced on the cluster, then the
    selector (and its noise, from ``rng``) runs here on the computed scores."""

    def __init__(self, selector: Any) -> None:
        if type(selector) not in _DASK_SELECTORS:
            names = ", ".join(c.__name__ for c in _DASK_SELECTORS)
            raise TypeError(f"on a Dask DataFrame, `selector` must be one of {names} (selectors that read the data "
                            f"only through their score); got {type(selector).__name__}. Nothing was recorded: the "
                            "data were not touched.")
        self.selector = selector

    def select(self, data: Any, rng: Any) -> Selection:
        scores = self.selector.score(data)
        if hasattr(scores, "__dask_graph__"):  # a lazy Dask result: computed on the cluster
            import dask

            (scores,) = dask.compute(scores)
        meta = getattr(data, "_meta", None)
        if not isinstance(meta, pd.DataFrame):  # pragma: no cover - every Dask DataFrame has one
            meta = pd.DataFrame({c: pd.Series(dtype=t) for c, t in data.dtypes.items()})
        return dataclasses.replace(self.selector, score=_Scores(scores)).select(meta, rng)
