"""The audit trail: save an analysis to JSON, read it back, and verify it against the data.

An audit record holds what a reviewer needs to check a corrected table: a fingerprint of the
data, the plan as it was run (with the seed used), the ledger, the selections (labels, values,
certificates), the test specs and their naive results, the table itself and the SHA-256 of
its rendering (the table file ``selective analyze --out`` wrote). :func:`verify_audit`
re-runs the plan on the data and compares *every* field of the record with the recomputed
one, and the table file with its recorded hash.

Writing is ordered so that a crash, a kill or an interrupt at any point never leaves a table
next to an audit that does not match it (:func:`write_table_and_audit`).

Audit format, version 3 (version 2 audits, whose data fingerprint was one stream over the
columns, are still read and verified on in-memory data; version 1 audits, whose fingerprint
was a CSV rendering of the whole frame, are no longer read: re-run ``selective analyze``)::

    format, version, package_version, created       what wrote it, and when (not verified)
    data: sha256, n_rows, columns, source            the fingerprint (:func:`data_fingerprint`)
    seed, alpha, n_candidates, adjust                the run's settings
    plan                                             the plan as run (its [analysis] seed is `seed`)
    ledger, selections, tests, table                 what the run produced
    output: file, format, columns, sha256            the rendered table and where it went
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..accounting.certificates import brief, certificate_from_dict
from ..accounting.ledger import Ledger, load_json
from ..exceptions import RecordFormatError
from .files import atomic_write_text, write_table_and_audit
from .fingerprint import data_fingerprint
from .report import OPTIONAL_COLUMNS, TABLE_COLUMNS, CorrectedTable
from .rows import ADJUST_METHODS

__all__ = ["AUDIT_FORMAT", "AUDIT_VERSION", "FORMATS", "data_fingerprint", "audit_record", "render_table",
           "write_audit", "read_audit", "validate_audit", "table_from_audit", "spec_to_dict", "spec_from_dict",
           "atomic_write_text", "write_table_and_audit", "sha256_text"]

AUDIT_FORMAT = "selective.audit"
AUDIT_VERSION = 3  # 3: per-column fingerprint (any partitions); 2: chunked fingerprint, plan as run, table hash
READ_VERSIONS = (2, 3)  # versions this package reads and verifies
#: renderings of the table (``--format``)
FORMATS = ("md", "tex", "html", "csv")
_COLUMN_SETS = ("default", "short", "compact", "all")
#: the column set each format uses when none is asked for
DEFAULT_COLUMNS = {"md": "short", "tex": "compact", "html": "short", "csv": "all"}
_HEX64 = re.compile(r"[0-9a-f]{64}")


def plan_sha256(plan: Any) -> str:
    """SHA-256 of the plan as canonical JSON (sorted keys): an edit of the stored plan alone,
    even one that would run to the same table, makes ``verify`` fail."""
    return sha256_text(json.dumps(plan, sort_keys=True, separators=(",", ":"), default=str))


def sha256_text(text: str) -> str:
    """SHA-256 (hex) of ``text`` encoded as UTF-8: the hash of a table file as written."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------------------
# Building a record
# ------------------------------------------------------------------------------------------


def _jsonable(x: Any) -> Any:
    if isinstance(x, (np.bool_,)):
        return bool(x)
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


def spec_from_dict(d: Any, *, where: str = "test spec") -> Any:
    """Rebuild a test spec written by :func:`spec_to_dict` (only the test specs exported by
    :mod:`selective.hypotheses` are accepted). Raises :class:`RecordFormatError` naming
    ``where`` on anything else."""
    from .. import hypotheses

    if not isinstance(d, dict):
        raise RecordFormatError(f"{where}: must be an object with class and fields; got {brief(d)}.")
    name = d.get("class")
    cls = getattr(hypotheses, name, None) if isinstance(name, str) and name in hypotheses.__all__ else None
    if cls is None or not isinstance(cls, type) or not dataclasses.is_dataclass(cls) or not hasattr(cls, "run"):
        raise RecordFormatError(f"{where}: unknown test spec class {brief(name)} in the audit record.")
    fields = d.get("fields", {})
    if not isinstance(fields, dict):
        raise RecordFormatError(f"{where}.fields: must be an object; got {brief(fields)}.")
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(brief(k) for k in fields if k not in known)
    if unknown:
        raise RecordFormatError(f"{where}.fields: unknown field(s) {', '.join(unknown)} for {name}; allowed: "
                                f"{', '.join(sorted(known))}.")
    for k, v in fields.items():
        if not (_is_plain(v) or (isinstance(v, list) and all(_is_plain(x) for x in v))):
            raise RecordFormatError(f"{where}.fields.{k}: must be a string, a number, a boolean, null or a list of "
                                    f"those; got {brief(v)}.")
    try:
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in fields.items()})
    except (TypeError, ValueError) as exc:
        raise RecordFormatError(f"{where}: {exc}") from None


def _result_to_dict(r: Any) -> dict[str, Any]:
    return {
        "hypothesis": r.hypothesis, "estimate": _jsonable(r.estimate), "statistic": _jsonable(r.statistic),
        "df": _jsonable(r.df), "pvalue_naive": _jsonable(r.pvalue_naive), "ci_naive": _jsonable(list(r.ci_naive)),
        "method": r.method, "n_obs": int(r.n_obs),
    }


def render_table(table: CorrectedTable, fmt: str = "md", columns: str = "default", *,
                 record: dict[str, Any] | None = None) -> str:
    """The table as ``selective analyze`` writes it: ``fmt`` one of :data:`FORMATS`.

    ``columns`` "default" takes each format's own set (:data:`DEFAULT_COLUMNS`). "html" is one
    self-contained page (:func:`selective.analysis.html_report.html_report`: table, footnote,
    ledger, figures, and from ``record`` the plan and the data fingerprint)."""
    if columns == "default":
        columns = DEFAULT_COLUMNS.get(fmt, "short")
    if fmt == "md":
        return table.to_markdown(columns=columns) + "\n"
    if fmt == "tex":
        return table.to_latex(columns=columns)
    if fmt == "html":
        from .html_report import html_report

        return html_report(table, record=record, columns=columns)
    if fmt == "csv":
        return table.to_csv()
    raise ValueError(f"`fmt` must be one of {', '.join(FORMATS)}; got {fmt!r}.")


def audit_record(analysis: Any, table: CorrectedTable, *, plan: dict | None = None, data_source: str | None = None,
                 adjust: str | None = None, output: dict[str, Any] | None = None,
                 created: str | None = None) -> dict[str, Any]:
    """Everything needed to re-render ``table`` and to verify it against the data.

    Parameters
    ----------
    analysis : Analysis
        The analysis ``table`` comes from (``analysis.report(adjust=adjust)``).
    table : CorrectedTable
    plan : dict, optional
        The plan as run, with its [analysis] seed (``plan.with_seed``); ``verify`` needs it.
    data_source : str, optional
        Where the data came from (a file name; not verified).
    adjust : str, optional
        The multiple-testing adjustment the table was made with.
    output : dict, optional
        ``{"file": ..., "format": ..., "columns": ...}``: where and how the table was
        rendered (default: Markdown, the format's own columns, standard output). Its ``sha256``
        is set here.
    created : str, optional
        The creation time to record (ISO 8601; default: now). ``verify`` passes the recorded one,
        which the "html" page shows.
    """
    frame = table.frame
    out = {"file": None, "format": "md", "columns": "default"}
    out.update({k: v for k, v in (output or {}).items() if k in out})
    record = {
        "format": AUDIT_FORMAT,
        "version": AUDIT_VERSION,
        "package_version": __version__,
        "created": created or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": {"sha256": data_fingerprint(analysis.data), "n_rows": int(analysis.n_rows),
                 "columns": [str(c) for c in analysis.data.columns], "source": data_source},
        "seed": analysis.seed,
        "alpha": table.alpha,
        "n_candidates": analysis.n_candidates,
        "adjust": adjust,
        "plan": plan,
        "plan_sha256": plan_sha256(plan),
        "ledger": analysis.ledger.to_dict(),
        "selections": [{"label": s.label, "value": _jsonable(list(s.value) if isinstance(s.value, tuple) else s.value),
                        "certificate": s.certificate.to_dict()} for s in analysis.selections],
        "tests": [{"spec": spec_to_dict(spec), "result": _result_to_dict(r)} for spec, r in analysis._tests],
        "table": {"index": [str(i) for i in frame.index],
                  "columns": table_columns(frame.columns),
                  "rows": [[_jsonable(frame.iloc[i][c]) for c in table_columns(frame.columns)]
                           for i in range(len(frame))],
                  "footnote": table.footnote,
                  "ledger_rows": _jsonable(table.ledger_rows)},
        "output": out,
    }
    # the page of the "html" format shows the record (plan, data fingerprint), never its own hash
    out["sha256"] = sha256_text(render_table(table, out["format"], out["columns"], record=record))
    return record


def dump_record(record: dict[str, Any]) -> str:
    """The record as the JSON text an audit file holds (indented; no NaN literals)."""
    try:
        return json.dumps(record, indent=1, allow_nan=False) + "\n"
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the audit record cannot be written as JSON: {exc}") from None


# ------------------------------------------------------------------------------------------
# Writing files
# ------------------------------------------------------------------------------------------


def write_audit(path: str | os.PathLike, record: dict[str, Any]) -> Path:
    """Write an audit record as indented JSON, atomically."""
    return atomic_write_text(path, dump_record(record))


# ------------------------------------------------------------------------------------------
# Reading and checking a record
# ------------------------------------------------------------------------------------------


def _is_plain(v: Any) -> bool:
    return v is None or isinstance(v, (str, bool, int)) or (isinstance(v, float) and math.isfinite(v))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    """A number as the record writes it: finite, or the text "nan", "inf" or "-inf"."""
    return (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)) or v in ("nan", "inf",
                                                                                                   "-inf")


class _Checker:
    """Checks fields of a record; every failure names the file and the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, field: str, msg: str) -> RecordFormatError:
        return RecordFormatError(f"{self.source}: field {field!r}: {msg}")

    def obj(self, d: Any, field: str, keys: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(d, dict):
            raise self.fail(field, f"must be an object; got {brief(d)}.")
        missing = [k for k in keys if k not in d]
        if missing:
            raise self.fail(field, f"missing key(s) {', '.join(missing)}.")
        extra = sorted(brief(k) for k in d if k not in keys and k not in optional)
        if extra:
            raise self.fail(field, f"unknown key(s) {', '.join(extra)}; allowed: {', '.join(keys + optional)}.")
        return d

    def want(self, ok: bool, field: str, value: Any, what: str) -> None:
        if not ok:
            raise self.fail(field, f"must be {what}; got {brief(value)}.")

    def seq(self, v: Any, field: str, item: Callable[[Any], bool] | None = None, what: str = "") -> list:
        if not isinstance(v, list):
            raise self.fail(field, f"must be a list; got {brief(v)}.")
        if item is not None:
            for i, x in enumerate(v):
                self.want(item(x), f"{field}[{i}]", x, what)
        return v


_TOP_KEYS = ("format", "version", "package_version", "created", "data", "seed", "alpha", "n_candidates", "adjust",
             "plan", "plan_sha256", "ledger", "selections", "tests", "table", "output")
_RESULT_KEYS = ("hypothesis", "estimate", "statistic", "df", "pvalue_naive", "ci_naive", "method", "n_obs")
_LEDGER_ROW_KEYS = ("step", "label", "certificate", "role", "cumulative_maxinfo_bits", "maxinfo_scope",
                    "cumulative_mutual_info_bits")
_TEXT_COLUMNS = ("best_route", "note")


def validate_audit(d: Any, source: str = "audit record") -> dict[str, Any]:
    """Check every field of an audit record (a dict as read from JSON) and return it.

    Raises
    ------
    RecordFormatError
        A field is missing, unknown or of the wrong type, the version is not one of
        :data:`READ_VERSIONS`, the plan does not parse, the ledger breaks an order rule; the
        message names ``source`` and the field. A well-formed record may still be forged:
        :func:`verify_audit` recomputes it from the data.
    """
    from .plan_format import PlanError, parse_plan

    c = _Checker(source)
    if not isinstance(d, dict) or d.get("format") != AUDIT_FORMAT:
        raise RecordFormatError(f"{source}: not a selective audit record (no format {AUDIT_FORMAT!r}).")
    if d.get("version") not in READ_VERSIONS or not _is_int(d.get("version")):
        hint = (" Version 1 audits (CSV fingerprints) are no longer read: re-run `selective analyze`."
                if d.get("version") == 1 else "")
        raise c.fail("version", f"this package reads audit versions {READ_VERSIONS}; got {brief(d.get('version'))}."
                     + hint)
    c.obj(d, "record", _TOP_KEYS)
    c.want(isinstance(d["package_version"], str), "package_version", d["package_version"], "a string")
    c.want(isinstance(d["created"], str), "created", d["created"], "a date and time (ISO 8601 text)")
    data = c.obj(d["data"], "data", ("sha256", "n_rows", "columns", "source"))
    c.want(isinstance(data["sha256"], str) and bool(_HEX64.fullmatch(data["sha256"])), "data.sha256", data["sha256"],
           "64 hexadecimal digits")
    c.want(_is_int(data["n_rows"]) and data["n_rows"] >= 1, "data.n_rows", data["n_rows"], "an integer >= 1")
    c.seq(data["columns"], "data.columns", lambda x: isinstance(x, str), "a column name")
    c.want(data["source"] is None or isinstance(data["source"], str), "data.source", data["source"], "text or null")
    c.want(d["seed"] is None or (_is_int(d["seed"]) and d["seed"] >= 0), "seed", d["seed"],
           "null or a non-negative integer")
    c.want(isinstance(d["alpha"], float) and 0 < d["alpha"] < 1, "alpha", d["alpha"], "a number in (0, 1)")
    c.want(d["n_candidates"] is None or (_is_int(d["n_candidates"]) and d["n_candidates"] >= 1), "n_candidates",
           d["n_candidates"], "null or an integer >= 1")
    c.want(d["adjust"] is None or d["adjust"] in ADJUST_METHODS, "adjust", d["adjust"],
           f"null or one of {', '.join(ADJUST_METHODS)}")
    if d["plan"] is not None:  # a record written without a plan can be shown, not verified
        try:
            parse_plan(d["plan"], source=f"{source}: field 'plan'")
        except PlanError as exc:
            raise RecordFormatError(str(exc)) from None
    Ledger.from_dict(d["ledger"], source=f"{source}: field 'ledger'")
    for i, s in enumerate(c.seq(d["selections"], "selections")):
        where = f"selections[{i}]"
        c.obj(s, where, ("label", "value", "certificate"))
        c.want(isinstance(s["label"], str), f"{where}.label", s["label"], "a string")
        c.want(_is_plain(s["value"]) or (isinstance(s["value"], list) and all(_is_plain(v) for v in s["value"])),
               f"{where}.value", s["value"], "a value or a flat list of values")
        certificate_from_dict(s["certificate"], where=f"{source}: field '{where}.certificate'")
    for i, t in enumerate(c.seq(d["tests"], "tests")):
        where = f"tests[{i}]"
        c.obj(t, where, ("spec", "result"))
        c.obj(t["spec"], f"{where}.spec", ("class", "module", "fields"))
        spec_from_dict(t["spec"], where=f"{source}: field '{where}.spec'")
        r = c.obj(t["result"], f"{where}.result", _RESULT_KEYS)
        for key in ("hypothesis", "method"):
            c.want(isinstance(r[key], str), f"{where}.result.{key}", r[key], "a string")
        c.want(_is_num(r["pvalue_naive"]), f"{where}.result.pvalue_naive", r["pvalue_naive"], "a number")
        for key in ("estimate", "statistic", "df"):
            c.want(r[key] is None or _is_num(r[key]), f"{where}.result.{key}", r[key], "a number or null")
        c.seq(r["ci_naive"], f"{where}.result.ci_naive", _is_num, "a number")
        c.want(len(r["ci_naive"]) == 2, f"{where}.result.ci_naive", r["ci_naive"], "two numbers")
        c.want(_is_int(r["n_obs"]) and r["n_obs"] >= 0, f"{where}.result.n_obs", r["n_obs"], "an integer >= 0")
    t = c.obj(d["table"], "table", ("index", "columns", "rows", "footnote", "ledger_rows"))
    c.seq(t["index"], "table.index", lambda x: isinstance(x, str), "a hypothesis name")
    columns = t["columns"]
    c.want(isinstance(columns, list) and all(isinstance(x, str) for x in columns)
           and columns == table_columns(columns), "table.columns", columns,
           f"the columns {list(TABLE_COLUMNS)}, with any of {list(OPTIONAL_COLUMNS)} before 'note'")
    if not (isinstance(columns, list) and columns == table_columns(columns)):
        columns = list(TABLE_COLUMNS)
    c.seq(t["rows"], "table.rows")
    c.want(len(t["rows"]) == len(t["index"]), "table.rows", f"{len(t['rows'])} rows",
           f"one row per hypothesis ({len(t['index'])})")
    for i, row in enumerate(t["rows"]):
        c.seq(row, f"table.rows[{i}]")
        c.want(len(row) == len(columns), f"table.rows[{i}]", f"{len(row)} cells", f"{len(columns)} cells")
        for name, v in zip(columns, row, strict=len(row) == len(columns)):
            ok = isinstance(v, str) if name in _TEXT_COLUMNS else (v is None or _is_num(v))
            c.want(ok, f"table.rows[{i}].{name}", v, "text" if name in _TEXT_COLUMNS else "a number")
    c.want(isinstance(t["footnote"], str), "table.footnote", t["footnote"], "a string")
    for i, row in enumerate(c.seq(t["ledger_rows"], "table.ledger_rows")):
        where = f"table.ledger_rows[{i}]"
        c.obj(row, where, _LEDGER_ROW_KEYS)
        c.want(_is_int(row["step"]), f"{where}.step", row["step"], "an integer")
        for key in ("label", "certificate", "role", "maxinfo_scope"):
            c.want(isinstance(row[key], str), f"{where}.{key}", row[key], "a string")
        for key in ("cumulative_maxinfo_bits", "cumulative_mutual_info_bits"):
            c.want(_is_num(row[key]), f"{where}.{key}", row[key], "a number")
    out = c.obj(d["output"], "output", ("file", "format", "columns", "sha256"))
    c.want(out["file"] is None or (isinstance(out["file"], str) and out["file"] != ""), "output.file", out["file"],
           "null or a file name")
    c.want(out["format"] in FORMATS, "output.format", out["format"], f"one of {', '.join(FORMATS)}")
    c.want(out["columns"] in _COLUMN_SETS, "output.columns", out["columns"], "one of " + ", ".join(_COLUMN_SETS))
    c.want(isinstance(out["sha256"], str) and bool(_HEX64.fullmatch(out["sha256"])), "output.sha256",
           out["sha256"], "64 hexadecimal digits")
    return d


def read_audit(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check an audit record (:func:`validate_audit`); the ledger inside is
    re-validated step by step. Every failure is a :class:`RecordFormatError` naming the file
    and the field (a missing file: :class:`FileNotFoundError`)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"audit file {str(path)!r} does not exist.") from None
    except OSError as exc:
        raise RecordFormatError(f"audit file {str(path)!r} cannot be read: {exc}") from None
    return validate_audit(load_json(raw, f"audit file {str(path)!r}"), str(path))


def table_columns(present: Any) -> list[str]:
    """The audit's column list for a table with columns ``present``: :data:`TABLE_COLUMNS`, with
    the optional columns it has inserted before "note" in their fixed order."""
    have = set(map(str, present))
    core = list(TABLE_COLUMNS)
    return core[:-1] + [c for c in OPTIONAL_COLUMNS if c in have] + core[-1:]


def _cell(name: str, v: Any) -> Any:
    if name in _TEXT_COLUMNS:
        return v
    return math.nan if v is None else float(v)


def table_from_audit(record: dict[str, Any]) -> CorrectedTable:
    """The corrected table stored in an audit record, exactly as it was written."""
    t = record["table"]
    rows = [{c: _cell(c, v) for c, v in zip(t["columns"], r, strict=True)} for r in t["rows"]]
    frame = pd.DataFrame(rows, index=pd.Index(t["index"], name="hypothesis"), columns=t["columns"])
    return CorrectedTable(frame=frame, alpha=float(record["alpha"]), footnote=t.get("footnote", ""),
                          ledger_rows=t.get("ledger_rows", []))


def __getattr__(name: str) -> Any:
    """``verify_audit`` and ``UNVERIFIED_FIELDS`` live in :mod:`selective.analysis.verify`."""
    if name in ("verify_audit", "UNVERIFIED_FIELDS"):
        from . import verify

        return getattr(verify, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
