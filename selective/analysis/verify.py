"""Verification of an audit record: re-run its plan on the data and compare every field.

See :func:`verify_audit`. The record's own checks (types, versions, the ledger's order rules)
are :func:`selective.analysis.audit.validate_audit`; this module decides whether a well-formed
record is *true* of the data.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..accounting.certificates import brief
from ..exceptions import RecordFormatError
from .audit import audit_record, dump_record, plan_sha256
from .fingerprint import data_fingerprint, data_fingerprint_v2
from .sources import is_dask_frame, open_data

__all__ = ["verify_audit", "UNVERIFIED_FIELDS"]

#: fields of a record that are metadata, not results: shown nowhere and not verified
UNVERIFIED_FIELDS = (("created",), ("data", "source"))


def _show(v: Any) -> str:
    """A value as a reader wants to see it: plain numbers, short text."""
    if isinstance(v, float):
        return repr(v)
    if v is None:
        return "null"
    if v in ("nan", "inf", "-inf"):
        return v
    if isinstance(v, (list, dict)):
        text = json.dumps(v)
        return text if len(text) <= 80 else text[:77] + "..."
    return brief(v, 80)


def _show_pair(a: Any, b: Any) -> tuple[str, str]:
    """Two differing values; long texts are shown around their first difference."""
    if isinstance(a, str) and isinstance(b, str) and max(len(a), len(b)) > 80:
        i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        lo = max(0, i - 30)
        return (f"...{a[lo:i + 40]!r} (from character {lo})", f"...{b[lo:i + 40]!r}")
    return _show(a), _show(b)


def _same_leaf(a: Any, b: Any) -> bool:
    """Exact equality of two JSON leaves: same type, and floats equal bit for bit (so 0.0 and
    -0.0 differ, and 1 differs from 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a.hex() == b.hex()
    return a == b


def _compare(old: Any, new: Any, path: str, out: list[str], skip: set[str]) -> None:
    if path in skip:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in old:
            if k not in new:
                out.append(f"{path}.{k}: recorded {_show(old[k])}, not produced by the run")
        for k in new:
            if k not in old:
                out.append(f"{path}.{k}: missing from the record (the run gives {_show(new[k])})")
        for k in old:
            if k in new:
                _compare(old[k], new[k], f"{path}.{k}" if path else k, out, skip)
        return
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            out.append(f"{path}: recorded {len(old)} item(s), the run gives {len(new)}")
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            _compare(a, b, f"{path}[{i}]", out, skip)
        return
    if not _same_leaf(old, new):
        a, b = _show_pair(old, new)
        out.append(f"{path}: recorded {a}, the run gives {b}")


def _table_rows_readable(record: dict[str, Any], new: dict[str, Any], out: list[str]) -> None:
    """Name table differences by hypothesis and column, as the table shows them."""
    old_t, new_t = record["table"], new["table"]
    if old_t["index"] != new_t["index"]:
        return
    if old_t["columns"] != new_t["columns"]:
        out.append(f"table.columns: recorded {old_t['columns']}, the run gives {new_t['columns']}")
        return
    for h, a_row, b_row in zip(old_t["index"], old_t["rows"], new_t["rows"], strict=True):
        for col, a, b in zip(old_t["columns"], a_row, b_row, strict=True):
            if not _same_leaf(a, b):
                shown_a, shown_b = _show_pair(a, b)
                out.append(f"{h!r} {col}: recorded {shown_a}, the run gives {shown_b}")


def verify_audit(record: dict[str, Any], data: Any, *, audit_path: str | os.PathLike | None = None,
                 table_path: str | os.PathLike | None = None, source: str | None = None) -> list[str]:
    """Recompute an audit record from the data and return every difference (empty if none).

    The plan in the record is re-run on ``data`` with the record's seed, the table re-made
    with its adjustment and rendered in its format; the resulting record is compared with the
    stored one field by field, every field but :data:`UNVERIFIED_FIELDS` (when and from which
    file name it was made). The comparison is exact: same types, same text, floats equal bit
    for bit. Floats can be compared exactly because JSON writes the shortest text that reads
    back to the same double, and the run is deterministic given the data, the plan and the
    seed, on the same versions of this package and its numerical libraries (a different
    package version is itself reported). The table file (``table_path``, else the one the
    record names, relative to the audit's folder) must hash to the recorded SHA-256.

    Parameters
    ----------
    record : dict
        A record checked by :func:`validate_audit` (e.g. from :func:`read_audit`).
    data : pandas.DataFrame, dask.dataframe.DataFrame or path
        The data the record claims to be about (the sources :class:`~selective.Analysis`
        accepts; a path is read lazily with Dask). A version 2 record's fingerprint needs the
        data in memory (:func:`~selective.analysis.fingerprint.data_fingerprint_v2`).
    audit_path : path, optional
        Where the record was read from (to find the table file it names).
    table_path : path, optional
        The table file to check instead of the one the record names.
    source : str, optional
        The record's file name, for error messages (default: ``audit_path``).

    Raises
    ------
    RecordFormatError
        The record holds no plan (it was written without one): there is nothing to re-run, so
        it cannot be verified. Replaying its own ledger would only check it against itself.
    """
    from .plan import PlanError, parse_plan, run_plan

    if record.get("plan") is None:
        name = source or (str(audit_path) if audit_path is not None else "audit record")
        raise RecordFormatError(f"{name}: field 'plan': the record holds no plan; verify re-runs the plan, so it "
                                "refuses a record without one.")
    diffs: list[str] = []
    data = open_data(data)
    old = record.get("version") == 2
    if old and is_dask_frame(data):
        return ["the audit is version 2, whose data fingerprint cannot be computed over Dask partitions: verify it "
                "on the data in memory (a pandas DataFrame), or re-run `selective analyze`"]
    fp = data_fingerprint_v2(data) if old else data_fingerprint(data)
    if fp != record["data"]["sha256"]:
        diffs.append(f"data fingerprint differs: recorded {record['data']['sha256'][:16]}..., "
                     f"these data give {fp[:16]}...")
    out = record["output"]
    plan = parse_plan(record["plan"], source="plan in the audit record")
    if "seed" not in plan.analysis:
        return diffs + ["the plan in the audit has no [analysis] seed, so its run cannot be repeated"]
    try:
        analysis = run_plan(plan, data)  # with the plan's seed; the record's `seed` is compared below
        table = analysis.report(adjust=record["adjust"])
        new = audit_record(analysis, table, plan=record["plan"], data_source=record["data"]["source"],
                           adjust=record["adjust"], output={k: out[k] for k in ("file", "format", "columns")},
                           created=record["created"])
    except (PlanError, ValueError, TypeError, ArithmeticError) as exc:
        diffs.append(f"the plan in the audit does not run on these data: {exc}")
        return diffs
    new = json.loads(dump_record(new))  # the normal form the file holds
    skip = {".".join(p) for p in UNVERIFIED_FIELDS}
    if old:  # the re-run writes the current version and fingerprint; the fingerprint was compared above
        skip |= {"version", "data.sha256"}
    if fp != record["data"]["sha256"]:
        skip.add("data.sha256")
    found: list[str] = []
    _compare(record, new, "", found, skip)
    table_found: list[str] = []
    _table_rows_readable(record, new, table_found)
    if table_found:  # name the table's differences by hypothesis and column, once
        found = table_found + [f for f in found if not f.startswith("table.rows")]
    diffs += found
    if record.get("plan_sha256") != plan_sha256(record.get("plan")):
        diffs.append("the stored plan does not match its recorded hash (plan_sha256): the plan was edited")
    diffs += _check_table_file(record, audit_path, table_path)
    return diffs


def _check_table_file(record: dict[str, Any], audit_path: Any, table_path: Any) -> list[str]:
    out = record["output"]
    if table_path is None and out["file"] is None:
        return []
    if table_path is None:
        base = Path(audit_path).parent if audit_path is not None else Path.cwd()
        table_path = base / out["file"]
    path = Path(table_path)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return [f"the table file {str(path)!r} the audit names is missing (give it with --table)"]
    except OSError as exc:
        return [f"the table file {str(path)!r} cannot be read: {exc}"]
    if digest != out["sha256"]:
        return [f"the table file {str(path)!r} is not the table the audit records (SHA-256 {digest[:16]}..., "
                f"recorded {out['sha256'][:16]}...)"]
    return []
