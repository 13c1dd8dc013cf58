"""Results as JSON: one conversion to plain Python (:func:`to_plain`: numpy scalars and arrays
become Python numbers and lists, keys become strings, non-finite floats follow a stated
policy) and one writer (:func:`emit`) that every ``--json`` output goes through."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from theorycheck.errors import TheorycheckError

__all__ = ["to_plain", "dumps", "emit"]


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
