"""Fast floating-point noise for SIMULATIONS ONLY: its output carries no privacy certificate.

These functions call numpy's ``laplace``, ``normal`` and ``gumbel`` samplers on doubles. Such
samplers are vulnerable to floating-point attacks (Mironov, CCS 2012; THEORY.md 7.1): the set
of attainable outputs depends on the true value, so a release made with them is **not**
differentially private, whatever the scale. Use them to simulate the ideal mechanisms (type-I
error studies, the paper's experiments), never to protect data; the exact samplers of
:mod:`selective.mechanisms.samplers` are the ones the selectors use.
"""

from __future__ import annotations

from typing import Any

from .._validation import check_positive, check_rng

__all__ = ["simulation_laplace", "simulation_gaussian", "simulation_gumbel", "simulation_exponential"]


def simulation_laplace(scale: float, *, size: Any = None, rng: Any = None) -> Any:
    """Continuous Laplace(0, ``scale``) draws on doubles. No certificate: simulations only."""
    b = check_positive("scale", scale)
    return check_rng(rng).laplace(0.0, b, size=size)


def simulation_gaussian(sigma: float, *, size: Any = None, rng: Any = None) -> Any:
    """Continuous N(0, ``sigma`` squared) draws on doubles. No certificate: simulations only."""
    s = check_positive("sigma", sigma)
    return check_rng(rng).normal(0.0, s, size=size)


def simulation_gumbel(scale: float, *, size: Any = None, rng: Any = None) -> Any:
    """Continuous Gumbel(0, ``scale``) draws on doubles. No certificate: simulations only."""
    b = check_positive("scale", scale)
    return check_rng(rng).gumbel(0.0, b, size=size)


def simulation_exponential(scale: float, *, size: Any = None, rng: Any = None) -> Any:
    """Continuous Exponential(``scale``) draws on doubles. No certificate: simulations only."""
    b = check_positive("scale", scale)
    return check_rng(rng).exponential(b, size=size)
