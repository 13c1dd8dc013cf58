"""Numbers as typed and data as read: a comma list (``--z 1,2,3``) and a CSV of examples, bounded in size
(bytes, line length, cells) and refused in one line (a :class:`~theorycheck.errors.SettingError`) when
ragged, non-numeric or not finite."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from theorycheck.errors import SettingError

__all__ = ["parse_floats", "read_csv", "check_finite", "MAX_CSV_BYTES", "MAX_CSV_LINE", "MAX_CSV_CELLS"]


def parse_floats(text: str, what: str) -> np.ndarray:
    """Parse ``"1,2,3"`` (as typed after ``--z`` or ``--alpha``) into a float array."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(p == "" for p in parts):
        raise SettingError(f"{what}: {text!r} is not a comma-separated list of numbers (e.g. 1,2,3)")
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise SettingError(f"{what}: {text!r} is not a comma-separated list of numbers (e.g. 1,2,3)") from None
    return values


def check_finite(a: np.ndarray, what: str) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        idx = np.argwhere(bad)[0]
        raise SettingError(
            f"{what} has a non-finite value ({a[tuple(idx)]}) at index {tuple(int(i) + 1 for i in idx)}: "
            "replace NaN/inf by a finite number"
        )


#: limits checked before anything is allocated: file size, one line, and cells in all
MAX_CSV_BYTES = 256 * 2**20
MAX_CSV_LINE = 4 * 2**20
MAX_CSV_CELLS = 20_000_000


def _decode(raw: bytes) -> str:
    """UTF-8 (with or without a byte-order mark); anything else is read as latin-1, which
    decodes every byte: numbers are ASCII either way, and a non-number cell is then named."""
    try:
        return raw.decode("utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read_csv(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read ``x1,…,xd,y`` rows (an optional header line is skipped) into (X, y).

    Limits (checked before reading or allocating): the file has at most
    :data:`MAX_CSV_BYTES` bytes, a line at most :data:`MAX_CSV_LINE` bytes, the data at
    most :data:`MAX_CSV_CELLS` cells. Text in UTF-8 or (as a fallback) latin-1."""
    path = Path(path)
    shown_path = str(path) if len(str(path)) <= 120 else str(path)[:120] + "…"
    try:
        is_file = path.is_file()
        is_dir = not is_file and path.is_dir()
        size = path.stat().st_size if is_file else 0
    except (OSError, ValueError):  # a name too long, a NUL character, no permission…
        is_file = is_dir = False
    if is_dir:
        raise SettingError(f"data file {shown_path!r} is a folder: give the path of a CSV file in it, with "
                           "columns x1..xd,y")
    if not is_file:
        raise SettingError(f"data file {shown_path!r} not found: give the path of a CSV with columns x1..xd,y")
    try:
        return _read_rows(path, size)
    except OSError as exc:
        raise SettingError(f"data file {shown_path!r}: cannot be read ({exc.strerror or exc})") from None


def _read_rows(path: Path, size: int) -> tuple[np.ndarray, np.ndarray]:
    if size > MAX_CSV_BYTES:
        raise SettingError(f"{path}: {size} bytes exceeds the limit of {MAX_CSV_BYTES} bytes for a data file")
    rows: list[list[float]] = []
    width = None
    cells_total = 0
    with path.open("rb") as fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_CSV_LINE + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > MAX_CSV_LINE:
                raise SettingError(f"{path}:{lineno}: line longer than the limit of {MAX_CSV_LINE} bytes")
            text = _decode(raw)
            if "\x00" in text:
                raise SettingError(f"{path}:{lineno}: contains a NUL byte: not a text CSV")
            try:
                row = next(csv.reader([text]), [])
            except csv.Error as exc:
                raise SettingError(f"{path}:{lineno}: unreadable CSV row ({exc})") from None
            cells = [c.strip() for c in row]
            if not cells or all(c == "" for c in cells) or cells[0].startswith("#"):
                continue
            try:
                values = [float(c) for c in cells]
            except ValueError:
                if not rows and width is None and lineno == 1:  # header
                    continue
                shown = ascii(row if len(row) <= 8 else row[:8] + ["…"])
                if len(shown) > 200:
                    shown = shown[:200] + "…"
                raise SettingError(f"{path}:{lineno}: not a number in {shown}: every cell must be numeric") from None
            if width is None:
                width = len(values)
            elif len(values) != width:
                raise SettingError(f"{path}:{lineno}: {len(values)} columns where earlier rows have {width}: fix the row")
            cells_total += width
            if cells_total > MAX_CSV_CELLS:
                raise SettingError(f"{path}: more than the limit of {MAX_CSV_CELLS} cells")
            rows.append(values)
    if not rows:
        raise SettingError(f"{path}: no data rows: the CSV needs rows x1,…,xd,y")
    if width is None or width < 2:
        raise SettingError(f"{path}: rows need at least two columns (x1..xd and the label y)")
    a = np.array(rows, dtype=float)
    return a[:, :-1], a[:, -1]
