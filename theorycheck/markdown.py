"""Markdown for results shown in a notebook (``_repr_markdown_``): tables and numbers, plain
Python, so that every stage's result classes can use it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["cell", "number", "table"]


def number(x, digits: int = 6) -> str:
    """A number as a table shows it: ``digits`` significant digits; "—" for None."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return cell(x)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.{digits}g}"


def cell(x, limit: int = 160) -> str:
    """Text for one table cell: "|" escaped, newlines folded, at most ``limit`` characters."""
    text = "—" if x is None else str(x)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    """A Markdown table; cells are passed through :func:`cell`."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
