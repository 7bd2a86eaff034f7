"""The audit trail: save an analysis to JSON and read it back, exactly.

An audit record holds what a reviewer needs to check a corrected table: a fingerprint of the
data (SHA-256 of a canonical CSV rendering), the ledger, the selections (labels, values,
certificates), the test specs and their naive results, the seed, the package version, the plan
(when the analysis came from a plan file) and the table itself. Files are written atomically
(a temporary file in the same folder, then a rename), so a crash never leaves half a file.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..accounting.certificates import certificate_from_dict
from ..accounting.ledger import Ledger
from .report import TABLE_COLUMNS, CorrectedTable

__all__ = ["AUDIT_FORMAT", "data_fingerprint", "audit_record", "write_audit", "read_audit", "table_from_audit",
           "spec_to_dict", "spec_from_dict", "atomic_write_text"]

AUDIT_FORMAT = "selective.audit"
AUDIT_VERSION = 1


def data_fingerprint(data: pd.DataFrame) -> str:
    """SHA-256 (hex) of ``data`` rendered as CSV with the full precision of every float.

    The same frame (values, column names and order, row order) gives the same fingerprint on
    every platform; any change of a value changes it.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    text = data.to_csv(index=False, float_format="%.17g", lineterminator="\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonable(x: Any) -> Any:
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        f = float(x)
        return f if math.isfinite(f) else str(f)  # "nan", "inf", "-inf" (float() reads them back)
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    return x


def spec_to_dict(spec: Any) -> dict[str, Any]:
    """A test spec (a dataclass from :mod:`selective.hypotheses`) as a JSON-able dict."""
    if not dataclasses.is_dataclass(spec):
        raise TypeError(f"`spec` must be a test spec dataclass; got {type(spec).__name__}.")
    fields = {f.name: _jsonable(getattr(spec, f.name)) for f in dataclasses.fields(spec)}
    return {"class": type(spec).__name__, "module": type(spec).__module__, "fields": fields}


def spec_from_dict(d: dict[str, Any]) -> Any:
    """Rebuild a test spec written by :func:`spec_to_dict` (only classes of
    :mod:`selective.hypotheses` are accepted)."""
    from .. import hypotheses

    name = d.get("class")
    cls = getattr(hypotheses, name, None) if isinstance(name, str) else None
    if cls is None or not dataclasses.is_dataclass(cls):
        raise ValueError(f"unknown test spec class {name!r} in the audit record.")
    fields = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.get("fields", {}).items()}
    return cls(**fields)


def _result_to_dict(r: Any) -> dict[str, Any]:
    return {
        "hypothesis": r.hypothesis, "estimate": _jsonable(r.estimate), "statistic": _jsonable(r.statistic),
        "df": _jsonable(r.df), "pvalue_naive": _jsonable(r.pvalue_naive), "ci_naive": _jsonable(list(r.ci_naive)),
        "method": r.method, "n_obs": int(r.n_obs),
    }


def audit_record(analysis: Any, table: CorrectedTable, *, plan: dict | None = None,
                 data_source: str | None = None) -> dict[str, Any]:
    """Everything needed to re-render ``table`` and to verify it against the data."""
    frame = table.frame
    return {
        "format": AUDIT_FORMAT,
        "version": AUDIT_VERSION,
        "package_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": {"sha256": data_fingerprint(analysis.data), "n_rows": int(len(analysis.data)),
                 "columns": [str(c) for c in analysis.data.columns], "source": data_source},
        "seed": analysis.seed,
        "alpha": table.alpha,
        "n_candidates": analysis.n_candidates,
        "plan": plan,
        "ledger": analysis.ledger.to_dict(),
        "selections": [{"label": s.label, "value": _jsonable(s.value), "certificate": s.certificate.to_dict()}
                       for s in analysis.selections],
        "tests": [{"spec": spec_to_dict(spec), "result": _result_to_dict(r)} for spec, r in analysis._tests],
        "table": {"index": [str(i) for i in frame.index],
                  "columns": list(TABLE_COLUMNS),
                  "rows": [[_jsonable(frame.iloc[i][c]) for c in TABLE_COLUMNS] for i in range(len(frame))],
                  "footnote": table.footnote,
                  "ledger_rows": _jsonable(table.ledger_rows)},
    }


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (atomic on POSIX)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def write_audit(path: str | os.PathLike, record: dict[str, Any]) -> Path:
    """Write an audit record as indented JSON, atomically."""
    return atomic_write_text(path, json.dumps(record, indent=1, allow_nan=False) + "\n")


def read_audit(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check an audit record; the ledger inside is re-validated step by step."""
    path = Path(path)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"audit file {str(path)!r} does not exist.") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"audit file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(d, dict) or d.get("format") != AUDIT_FORMAT:
        raise ValueError(f"{str(path)!r} is not a selective audit record (no format {AUDIT_FORMAT!r}).")
    if d.get("version") != AUDIT_VERSION:
        raise ValueError(f"{str(path)!r} has audit version {d.get('version')!r}; this package reads {AUDIT_VERSION}.")
    Ledger.from_dict(d["ledger"])  # raises if the ledger breaks an order rule or is malformed
    for s in d.get("selections", []):
        certificate_from_dict(s["certificate"])
    return d


def table_from_audit(record: dict[str, Any]) -> CorrectedTable:
    """The corrected table stored in an audit record, exactly as it was written."""
    t = record["table"]
    rows = []
    for r in t["rows"]:
        row = {}
        for c, v in zip(t["columns"], r):
            row[c] = v if c in ("best_route", "note") else float(v) if v is not None else math.nan
        rows.append(row)
    frame = pd.DataFrame(rows, index=pd.Index(t["index"], name="hypothesis"), columns=list(TABLE_COLUMNS))
    return CorrectedTable(frame=frame, alpha=float(record["alpha"]), footnote=t.get("footnote", ""),
                          ledger_rows=t.get("ledger_rows", []))
