"""Results as JSON: one conversion to plain Python (:func:`to_plain`: numpy scalars and arrays
become Python numbers and lists, keys become strings, non-finite floats follow a stated
policy), one writer (:func:`emit`) that every ``--json`` output goes through, and one reader
(:func:`read_json`) for every JSON file a user can hand the library (saved sweeps, saved
experiment results, certificates): bounded in size and depth, with one-line errors."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from theorycheck.errors import TheorycheckError

__all__ = ["to_plain", "dumps", "emit", "read_json", "MAX_JSON_BYTES", "MAX_JSON_DEPTH"]

#: the largest JSON file :func:`read_json` reads (bytes) and the deepest nesting it accepts; the
#: files the library writes are far inside both (a saved sweep's metadata: ~10 kB, depth ≤ 6)
MAX_JSON_BYTES = 256 * 2**20
MAX_JSON_DEPTH = 64


def to_plain(obj: Any, nonfinite: str = "keep") -> Any:
    """``nonfinite``: "keep" (leave inf/NaN as floats), "string" (→ "inf", "-inf", "nan":
    saved metadata) or "raise" (a non-finite number reaching an interface is a bug)."""
    if isinstance(obj, dict):
        return {str(k): to_plain(v, nonfinite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v, nonfinite) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, (bool, int, float, str)):
        return to_plain(obj.tolist(), nonfinite)  # numpy arrays and scalars
    if isinstance(obj, float) and type(obj) is not float:
        obj = float(obj)  # np.float64 subclasses float: plain, so that it prints as a number
    if isinstance(obj, float) and not math.isfinite(obj):
        if nonfinite == "raise":
            raise TheorycheckError(f"internal error: a non-finite number ({obj}) reached the JSON output")
        if nonfinite == "string":
            return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def dumps(obj: Any) -> str:
    """The JSON text the CLI prints for ``obj`` (indent 2, UTF-8 kept; NaN/inf never pass)."""
    return json.dumps(to_plain(obj, nonfinite="raise"), indent=2, allow_nan=False, ensure_ascii=False)


def emit(obj: Any, dest: str | Path | None = "-") -> None:
    """Write ``obj`` as JSON to stdout (dest '-' or None) or to a file."""
    text = dumps(obj)
    if dest in (None, "-"):
        print(text)
    else:
        from theorycheck.outputs import make_parent, output_file

        make_parent(output_file(dest, "dest"), "dest").write_text(text + "\n")


#: a JSON string (escapes included), and an innermost empty pair of brackets once strings and
#: everything but brackets are gone
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_INNER_PAIR = re.compile(rb"\[\]|\{\}")


def _depth_at_most(data: bytes, limit: int) -> bool:
    """Whether the brackets of ``data`` (outside strings) are balanced and nest at most ``limit``
    deep: each pass of a regular expression (C speed) removes the innermost pairs, so at most
    ``limit`` + 1 passes decide (Python's own parser recurses once per level and would raise
    RecursionError on a file nested 10⁵ deep)."""
    b = _NOT_BRACKET.sub(b"", _STRING.sub(b"", data))
    for _ in range(limit):
        if not b:
            return True
        b, n = _INNER_PAIR.subn(b"", b)
        if n == 0:
            return False  # unbalanced or crossed brackets
    return not b


def read_json(path: str | os.PathLike, what: str = "JSON file", *, max_bytes: int = MAX_JSON_BYTES,
              max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value in the file ``path``, read as untrusted input: at most ``max_bytes`` bytes
    and ``max_depth`` levels of nesting, UTF-8. Every failure (missing, a folder, too large, too
    deep, not JSON, a number Python refuses) is a one-line :class:`TheorycheckError` that starts
    with ``what`` and the path."""
    shown = str(path) if len(str(path)) <= 120 else str(path)[:120] + "…"
    head = f"{what} {shown}"
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except IsADirectoryError:
        raise TheorycheckError(f"{head}: is a folder, not a file") from None
    except OSError as exc:
        raise TheorycheckError(f"{head}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise TheorycheckError(f"{head}: larger than {max_bytes} bytes (the most read as JSON)")
    if not _depth_at_most(data, max_depth):
        raise TheorycheckError(f"{head}: not JSON nested at most {max_depth} deep (too deep, or unbalanced brackets)")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TheorycheckError(f"{head}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise TheorycheckError(f"{head}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits
        raise TheorycheckError(f"{head}: not readable JSON ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
