"""What every correction route shares (private): the :class:`Threshold` record, the unit
constant ``LN2``, the rounding margin for thresholds defined by a root, the [DFHPRR]_
Theorem 20 coefficients, and small array helpers.

References
----------
.. [DFHPRR] C. Dwork, V. Feldman, M. Hardt, T. Pitassi, O. Reingold, A. Roth, "Generalization in
   adaptive data analysis and holdout reuse", NIPS 2015; full version arXiv:1506.02629.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_probability

LN2 = math.log(2.0)


def _with_rounding_margin(info_nats: float) -> float:
    """An information bound raised by a margin that covers the rounding error of evaluating the
    binary KL divergence in double precision (about 1e-17 absolute near gamma = alpha, where
    its terms cancel), so that a threshold defined by a root is never on the invalid side. The
    effect on gamma is far below 1e-9 relative."""
    return info_nats * (1 + 1e-14) + 1e-15


@dataclass(frozen=True, slots=True)
class Threshold:
    r"""A valid rejection threshold γ(α) and how it was obtained.

    Attributes
    ----------
    alpha : float
        The level.
    log2_gamma : float
        :math:`\log_2\gamma` (exact even where γ underflows; ``-inf`` when no γ > 0 is valid).
    beta : float
        The slack β used (the optimum where β was optimised; NaN if not applicable).
    bits : float
        The max-information k at that β (NaN if not applicable).
    route : str
        Which correction produced it.
    """

    alpha: float
    log2_gamma: float
    beta: float = math.nan
    bits: float = math.nan
    route: str = ""
    details: dict = field(default_factory=dict, compare=False)

    @property
    def gamma(self) -> float:
        """γ as a float (0.0 where it underflows the double range)."""
        return float(2.0**self.log2_gamma) if self.log2_gamma > -1100 else 0.0


def _alpha(alpha) -> float:
    return check_probability("alpha", alpha, closed="neither")


def _scalar_or_array(x: np.ndarray, like):
    return float(x) if np.ndim(like) == 0 else x


def _log_p(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p)


def _clip1(x):
    return np.minimum(1.0, x)


def _thm20_ab(eps: float, n: int) -> tuple[float, float]:
    """Theorem 20 in nats is a + b sqrt(ln(2/beta))."""
    return eps * eps * n / 2.0, eps * math.sqrt(n / 2.0)
