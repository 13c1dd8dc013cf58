"""One conversion of results to plain Python (for JSON and for reading): numpy scalars and
arrays become Python numbers and lists, keys become strings, and non-finite floats follow
a stated policy."""

from __future__ import annotations

import math
from typing import Any

from theorycheck.errors import TheorycheckError


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
