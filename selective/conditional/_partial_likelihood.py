r"""Cox's log partial likelihood, its score and its Hessian, vectorised (Breslow or Efron ties).

The same quantities as statsmodels' ``PHReg.loglike``, ``score`` and ``hessian`` (against which
the tests check them to 1e-10), computed with one sort of the times and cumulative sums instead
of a Python loop over the distinct event times: the Cox lasso evaluates them dozens of times per
fit, and the loop dominated its cost (about 10 ms per call at n = 1000).

With the rows sorted by decreasing time, the risk set of an event time :math:`t` (the rows with
time :math:`\ge t`) is a prefix, so :math:`S_0=\sum_{R}e^{\eta}` and :math:`S_1=\sum_R e^{\eta}x` are
cumulative sums read at the end of each group of tied times. Breslow:
:math:`\ell=\sum_i\delta_i\eta_i-\sum_g d_g\log S_{0g}`. Efron: the :math:`d_g` events tied at
:math:`t_g` contribute :math:`-\sum_{r<d_g}\log(S_{0g}-\tfrac r{d_g}T_{0g})`, with :math:`T` the
sums over those events. The Hessian's :math:`\sum_g c_g S_{2g}` is :math:`X^\top\mathrm{diag}(w\,C)X`
with :math:`C_i` the sum of :math:`c_g` over the event times at or before row i's time, so no
:math:`p\times p` matrix is formed per event time.
"""

from __future__ import annotations

import numpy as np


class CoxPartialLikelihood:
    """Log partial likelihood of ``X`` (n, p) at coefficients ``b``; ``time``, ``status`` (0/1)."""

    def __init__(self, time, X, status, ties: str = "breslow"):
        time = np.asarray(time, dtype=float)
        order = np.argsort(-time, kind="stable")
        self.ties = ties
        self.X = np.asarray(X, dtype=float)[order]
        if self.X.ndim == 1:
            self.X = self.X[:, None]
        t = time[order]
        self.delta = np.asarray(status, dtype=float)[order]
        new = np.r_[True, t[1:] != t[:-1]]
        group = np.cumsum(new) - 1                          # group of tied times, by position
        ends = np.r_[np.nonzero(new)[0][1:] - 1, t.size - 1]  # last position of each group
        d = np.bincount(group, weights=self.delta, minlength=ends.size)
        ev = d > 0
        self.group, self.ends, self.d = group, ends[ev], d[ev]
        self.n_groups = ends.size
        self.event_groups = np.nonzero(ev)[0]
        # the event groups at or before (in time) each row: groups g >= group(i) in this order
        self.delta_x = self.delta @ self.X
        if ties == "efron":
            counts = self.d.astype(int)
            self.rep = np.repeat(np.arange(self.d.size), counts)           # event row -> group
            self.phi = np.concatenate([np.arange(c) / c for c in counts]) if counts.size else np.zeros(0)
            # map each row's group to its index among event groups (-1 when no event)
            self.event_index = np.full(ends.size, -1)
            self.event_index[self.event_groups] = np.arange(self.event_groups.size)

    def _parts(self, b):
        eta = self.X @ np.asarray(b, dtype=float)
        shift = float(np.max(eta)) if eta.size else 0.0
        w = np.exp(eta - shift)
        S0 = np.cumsum(w)[self.ends]
        return eta, shift, w, S0

    def _tied_events(self, values):
        """Sums over the events of each event group of ``values`` (n,) or (n, p)."""
        gi = self.event_index[self.group]
        keep = (self.delta > 0) & (gi >= 0)
        if values.ndim == 1:
            return np.bincount(gi[keep], weights=values[keep], minlength=self.d.size)
        out = np.zeros((self.d.size, values.shape[1]))
        np.add.at(out, gi[keep], values[keep])
        return out

    def loglike(self, b) -> float:
        eta, shift, w, S0 = self._parts(b)
        first = float(self.delta @ eta)
        if self.ties == "breslow":
            return first - float(self.d @ (np.log(S0) + shift))
        T0 = self._tied_events(w)
        D = S0[self.rep] - self.phi * T0[self.rep]
        return first - float(np.sum(np.log(D) + shift))

    def score(self, b) -> np.ndarray:
        eta, shift, w, S0 = self._parts(b)
        S1 = np.cumsum(w[:, None] * self.X, axis=0)[self.ends]
        if self.ties == "breslow":
            return self.delta_x - (self.d / S0) @ S1
        T0 = self._tied_events(w)
        T1 = self._tied_events(w[:, None] * self.X)
        D = S0[self.rep] - self.phi * T0[self.rep]
        N = S1[self.rep] - self.phi[:, None] * T1[self.rep]
        return self.delta_x - np.sum(N / D[:, None], axis=0)

    def hessian(self, b) -> np.ndarray:
        eta, shift, w, S0 = self._parts(b)
        wx = w[:, None] * self.X
        S1 = np.cumsum(wx, axis=0)[self.ends]
        a = np.zeros(self.n_groups)
        if self.ties == "breslow":
            a[self.event_groups] = self.d / S0
            M = S1 / S0[:, None]
            outer = (M * self.d[:, None]).T @ M
            c = w * np.cumsum(a[::-1])[::-1][self.group]
        else:
            T0 = self._tied_events(w)
            T1 = self._tied_events(wx)
            D = S0[self.rep] - self.phi * T0[self.rep]
            a[self.event_groups] = np.bincount(self.rep, weights=1 / D, minlength=self.d.size)
            bg = np.bincount(self.rep, weights=self.phi / D, minlength=self.d.size)
            N = (S1[self.rep] - self.phi[:, None] * T1[self.rep]) / D[:, None]
            outer = N.T @ N
            c = w * np.cumsum(a[::-1])[::-1][self.group]
            gi = self.event_index[self.group]
            tied = (self.delta > 0) & (gi >= 0)
            c[tied] -= w[tied] * bg[gi[tied]]
        return -((self.X * c[:, None]).T @ self.X - outer)
