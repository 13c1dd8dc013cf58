"""Reading the reference pages of docs/commands/ for the tests that hold them to the code
(tests/test_docs_keys.py, tests/test_docs_options.py).

A page documents one command: its options in tables headed ``| option | default | meaning |`` and
each JSON object it prints in a table headed ``| key | type | unit | meaning |`` that follows the line
``<!-- keys: NAME -->``, NAME being the name of a :class:`theorycheck.record.Keys` declaration."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ROOT / "docs" / "commands"
KEY_HEADER = ["key", "type", "unit", "meaning"]
OPTION_HEADER = ["option", "default", "meaning"]
MARK = re.compile(r"^<!-- keys: (\S+) -->\s*$")
#: the JSON kinds a type cell may name (the first word of each alternative, alternatives joined by " or ")
KINDS = {"integer", "number", "string", "bool", "null", "list", "object", "map"}


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` inside a cell is not a separator)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def tables(text: str) -> list[tuple[str | None, list[str], list[list[str]], int]]:
    """Every Markdown table of ``text``: (the ``keys`` mark on the line before it or None, header cells,
    body rows, line number of the header)."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|[\s:|-]+\|", lines[i + 1].strip()):
            m = MARK.match(lines[i - 1]) if i > 0 else None
            head = cells(lines[i])
            j = i + 2
            rows = []
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(cells(lines[j]))
                j += 1
            out.append((m.group(1) if m else None, head, rows, i + 1))
            i = j
        else:
            i += 1
    return out


def marks(text: str) -> list[tuple[str, int]]:
    """Every ``<!-- keys: NAME -->`` line (NAME, line number), whether a table follows or not."""
    return [(m.group(1), n + 1) for n, line in enumerate(text.splitlines()) if (m := MARK.match(line))]


def code_names(cell: str) -> list[str]:
    """The names in backticks of a table cell: ``\\`a\\`, \\`b\\``` → [a, b]."""
    return re.findall(r"`([^`]+)`", cell)


def key_tables(path: Path) -> dict[str, list[list[str]]]:
    """Schema name → rows of its key table on the page (the rows as cells)."""
    return {mark: rows for mark, head, rows, _ in tables(path.read_text(encoding="utf-8"))
            if mark is not None and head == KEY_HEADER}


def documented_keys(rows: list[list[str]]) -> dict[str, list[str]]:
    """Key → its row, for a key table (a row may name several keys: ``\\`a\\`, \\`b\\```)."""
    out = {}
    for row in rows:
        for key in code_names(row[0]):
            out[key] = row
    return out


def kinds(type_cell: str) -> set[str]:
    """The JSON kinds a type cell allows: the first word of each alternative ("number or null",
    "list of numbers", "object (below)", "list (of [lo, hi] or null) or null"); " or " inside
    brackets does not separate alternatives."""
    depth, parts, cur = 0, [], ""
    i = 0
    while i < len(type_cell):
        c = type_cell[i]
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0 and type_cell.startswith(" or ", i):
            parts.append(cur)
            cur = ""
            i += 4
            continue
        cur += c
        i += 1
    parts.append(cur)
    return {p.strip().split(" ")[0].strip("`") for p in parts if p.strip()}


def json_kind(value) -> str:
    """The kind word of a JSON value (as the type cells name them)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object"


def allows(type_cell: str, value) -> bool:
    """Whether a value's kind is one the type cell names (an integer is a number too, an object of
    data-keyed entries a map)."""
    k, allowed = json_kind(value), kinds(type_cell)
    return (k in allowed or (k == "integer" and "number" in allowed) or (k == "object" and "map" in allowed))
