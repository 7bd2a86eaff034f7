"""Compact storage of the polyhedral selection events of forward stepwise and LAR.

Every constraint row of the FS and LAR events is a combination of a few *residualised
columns* ``r_k^{(t)} = (I - P_t) x_k``, where ``P_t`` projects on the first ``t`` entered
columns. With an orthonormal basis ``Q`` of the entered columns (Gram-Schmidt, nested) and
``W = X' Q``,

    r_k^{(t)}' v = x_k' v - W[k, :t] (Q[:, :t]' v),

so a row ``sum_parts coef * r_k^{(t)}`` is applied to any vector at cost O(p t) after one
product ``X' v``. A block of rows is a list of parts ``(t, M)`` with ``M`` a sparse
``(m, p)`` matrix of coefficients; the block's rows are ``G v = sum_parts M (R_t' v)``. The
event is ``G y >= u``. The dense ``(m, n)`` matrix is never formed unless asked for
(``to_dense``), which keeps fs + inference at n = 2000, p = 500 in megabytes instead of the
~300 MB a dense constraint matrix would take.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class StepConstraints:
    """Rows ``G y >= u`` of a stepwise selection event, stored as sparse combinations."""

    def __init__(self, X: np.ndarray, Q: np.ndarray, W: np.ndarray):
        self.X = X          # (n, p) centred / normalised design used by the path
        self.Q = Q          # (n, T) orthonormal basis of the entered columns, in entry order
        self.W = W          # (p, T) = X' Q
        self.blocks: list[tuple[list[tuple[int, sp.csr_matrix]], np.ndarray, int]] = []
        # each block: (parts, u, step) where step is the path step (1-based) that created it

    def add(self, parts: list[tuple[int, sp.csr_matrix]], u: np.ndarray, step: int) -> None:
        m = u.shape[0]
        for _, M in parts:
            if M.shape[0] != m:
                raise RuntimeError("internal: block parts must have the same number of rows")
        self.blocks.append((parts, np.asarray(u, dtype=float), step))

    def n_rows(self, max_step: int | None = None, extra: bool = True) -> int:
        return sum(u.shape[0] for _, u, st in self._select(max_step, extra))

    def _select(self, max_step, extra):
        out = []
        for blk in self.blocks:
            st = blk[2]
            if st < 0:
                if extra:
                    out.append(blk)
            elif max_step is None or st <= max_step:
                out.append(blk)
        return out

    def apply(self, v: np.ndarray, max_step: int | None = None, extra: bool = True) -> np.ndarray:
        """``G v`` for the rows of steps ``<= max_step`` (and extra rows, step < 0).

        ``v`` is one vector (n,) or several side by side (n, m); the result has shape (rows,)
        or (rows, m). Several vectors cost one product with ``X'`` and one with ``Q'`` in all.
        """
        xv = self.X.T @ v
        qv = self.Q.T @ v
        cache: dict[int, np.ndarray] = {}

        def rv(t):
            if t not in cache:
                cache[t] = xv - self.W[:, :t] @ qv[:t] if t else xv
            return cache[t]

        tail = v.shape[1:]
        pieces = []
        for parts, u, _ in self._select(max_step, extra):
            acc = np.zeros((u.shape[0],) + tail)
            for t, M in parts:
                acc += M @ rv(t)
            pieces.append(acc)
        return np.concatenate(pieces) if pieces else np.zeros((0,) + tail)

    def offsets(self, max_step: int | None = None, extra: bool = True) -> np.ndarray:
        us = [u for _, u, _ in self._select(max_step, extra)]
        return np.concatenate(us) if us else np.zeros(0)

    def to_dense(self, max_step: int | None = None, extra: bool = True) -> np.ndarray:
        """The dense matrix ``G`` (rows x n); memory-hungry for large problems."""
        n = self.X.shape[0]
        rows = []
        for parts, u, _ in self._select(max_step, extra):
            acc = np.zeros((u.shape[0], n))
            for t, M in parts:
                R = self.X - self.Q[:, :t] @ self.W[:, :t].T if t else self.X  # (n, p)
                acc += (M @ R.T) if not sp.issparse(M) else np.asarray(M @ R.T)
            rows.append(acc)
        return np.vstack(rows) if rows else np.zeros((0, n))

    @property
    def nbytes(self) -> int:
        """Bytes of the compact representation (sparse coefficients, offsets, Q and W)."""
        total = self.Q.nbytes + self.W.nbytes
        for parts, u, _ in self.blocks:
            total += u.nbytes
            for _, M in parts:
                total += M.data.nbytes + M.indices.nbytes + M.indptr.nbytes
        return int(total)

    def dense_nbytes(self, max_step: int | None = None) -> int:
        """Bytes a dense float64 constraint matrix of the same rows would take."""
        return int(8 * self.n_rows(max_step) * (self.X.shape[0] + 1))


def sparse_rows(m: int, p: int, rows, cols, vals) -> sp.csr_matrix:
    """CSR matrix with entries ``vals`` at ``(rows, cols)``; built directly (no COO step) when the
    rows are in order, as the path code makes them."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    vals = np.asarray(vals, dtype=float)
    if rows.size and np.all(rows[1:] >= rows[:-1]):
        indptr = np.searchsorted(rows, np.arange(m + 1), side="left")
        itype = np.int32 if max(p, rows.size) < 2 ** 31 - 1 else np.int64
        return sp.csr_matrix((vals, cols.astype(itype), indptr.astype(itype)), shape=(m, p))
    return sp.csr_matrix((vals, (rows, cols)), shape=(m, p))
