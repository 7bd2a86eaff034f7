"""Writing text files so that a crash, a kill or an interrupt never leaves a half-written file,
nor a table next to an audit it does not match (:func:`write_table_and_audit`)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["atomic_write_text", "write_table_and_audit"]


def _new_file_mode() -> int:
    """The mode a new file gets here (0o666 less the umask), read without changing the umask
    for long: the umask is set and restored at once."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _write_temp(path: Path, text: str) -> Path:
    """Write ``text`` to a new temporary file next to ``path``, flushed to disk, with the mode
    ``path`` has (or a new file's mode). The caller renames it or removes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = _new_file_mode()
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (atomic on POSIX).

    An existing file keeps its mode; the temporary file is removed if anything fails
    (including an interrupt)."""
    path = Path(path)
    tmp = _write_temp(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
    _sync_dir(path.parent)
    return path


def write_table_and_audit(table_path: str | os.PathLike | None, table_text: str,
                          audit_path: str | os.PathLike, audit_text: str) -> None:
    """Write a table file and its audit so that no moment leaves a table next to an audit it
    does not match.

    Order: both texts go to temporary files first (flushed to disk); then the old table is
    removed, the audit renamed into place, and the table renamed into place last. A kill after
    any step leaves either the previous audit with no table, the new audit with no table, or
    both new files; an exception or an interrupt removes the temporary files. Each file keeps
    the mode its predecessor had.
    """
    audit = Path(audit_path)
    table = None if table_path is None else Path(table_path)
    temps: list[Path] = []
    try:
        tmp_audit = _write_temp(audit, audit_text)
        temps.append(tmp_audit)
        if table is not None:
            tmp_table = _write_temp(table, table_text)
            temps.append(tmp_table)
            _remove(table)  # the previous run's table must not outlive the previous run's audit
        os.replace(tmp_audit, audit)
        temps.remove(tmp_audit)
        if table is not None:
            os.replace(tmp_table, table)
            temps.remove(tmp_table)
    except BaseException:
        for tmp in temps:
            _remove(tmp)
        raise
    for folder in {audit.parent} | ({table.parent} if table is not None else set()):
        _sync_dir(folder)
