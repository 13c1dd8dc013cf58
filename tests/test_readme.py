"""README.md says what the commands print: its tables and counts are compared here with the
commands (or the library calls behind them), so that they cannot drift. Nothing is hard-coded:
each test reads the README and runs the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from theorycheck.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
STATUSES = ("holds", "fails", "inconclusive", "error")
KEY = re.compile(r"[A-Z][A-Za-z0-9]*\.[a-z][\w.-]*")


def section(title: str) -> str:
    """The text under the heading ``title`` (any level), up to the next heading."""
    m = re.search(rf"^#+ {re.escape(title)}\s*$", README, re.M)
    assert m, f"README has no heading {title!r}"
    rest = README[m.end():]
    nxt = re.search(r"^#+ ", rest, re.M)
    return rest[: nxt.start()] if nxt else rest


def table(text: str) -> list[list[str]]:
    """The rows (cells, stripped) of the first Markdown table in ``text``, header and rule left out."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
        elif rows:
            break
    assert len(rows) >= 2 and set(rows[1][0]) <= set("-:"), "not a Markdown table"
    return rows[2:]


def run(argv, capsys) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().out


def test_reproduce_table_lists_every_experiment_of_every_pack(capsys):
    rc, out = run(["reproduce", "--list"], capsys)
    assert rc == 0
    listed = [re.match(r"(\S+)\s+\[(\S+)\]", line).groups() for line in out.splitlines() if line.strip()]
    rows = table(section("`theorycheck reproduce`"))
    assert [(r[0].strip("`"), r[1]) for r in rows] == listed


def test_counts_of_claims_and_theorems_are_the_packs(capsys):
    rc, out = run(["packs", "--json"], capsys)
    packs = json.loads(out)["packs"]
    claims, theorems = sum(p["claims"] for p in packs), sum(p["theorems"] for p in packs)
    n = len(packs)
    words = {3: "three"}.get(n, str(n))
    for m in re.finditer(r"(\d+) claims of the (\w+) packs", README):
        assert (int(m.group(1)), m.group(2)) == (claims, words), m.group(0)
    for m in re.finditer(r"(\d+) theorems(?: of the (\w+) packs)?", README):
        assert int(m.group(1)) == theorems, m.group(0)
    rows = table(section("What `theorycheck verify` finds (fast profile, seed 0)"))
    mf = next(p for p in packs if p["name"] == "minor-first")
    assert len([r for r in rows if not r[0].startswith("↳")]) == mf["claims"]


def test_alpha_c_quoted_for_one_to_six_is_the_certified_one():
    import numpy as np

    from theorycheck.predict import thresholds as th

    (quoted,) = re.findall(r"α_c \(= ([0-9.]+)·ρ for z = \(1,…,6\)", README)
    value = th.collapse_threshold(np.arange(1.0, 7.0), 1.0).value
    assert f"{value:.{len(quoted) - 2}f}" == quoted


def test_every_timing_says_wall_or_cpu():
    """A duration in prose ("about 60 s", "takes 2.5 s") says wall or CPU time in its sentence; the
    Timings table has both columns; budgets ("a 30 s budget") are not timings."""
    for doc in (ROOT / "README.md", ROOT / "docs" / "api.md", ROOT / "docs" / "writing-a-pack.md"):
        timed_table = False  # inside a table whose header names wall or CPU time
        for line in doc.read_text().splitlines():
            if not line.startswith("|"):
                timed_table = False
            elif "wall" in line or "CPU" in line:
                timed_table = True
            if timed_table:
                continue
            for m in re.finditer(r"(?:about|takes|took|~|in)\s*[0-9][0-9.–]*\s*(?:s|min|ms)\b", line):
                near = line[max(0, m.start() - 120): m.end() + 120]
                assert re.search(r"wall|CPU|budget", near), f"{doc.name}: {line.strip()}"
    timings = table(section("Timings"))
    head = re.search(r"^\| command \| wall time \| CPU time \|$", section("Timings"), re.M)
    assert head and all(len(r) == 3 for r in timings)


def _verdicts() -> dict:
    import theorycheck as tc

    res = tc.verify(profile="fast", seed=0)
    out = {}
    for v in res.verdicts:
        for w in (v, v.refined):
            if w is not None:
                out[w.key] = w
    return out


def _check_rows(rows, verdicts, verdict_col: int, text_cols: tuple[int, ...]) -> None:
    for r in rows:
        key = KEY.search(r[0]).group(0)
        v = verdicts[key]
        listed = re.findall("|".join(STATUSES), r[verdict_col])
        assert listed, (key, r[verdict_col])
        assert v.status in listed, f"{key}: README says {listed}, verify says {v.status}"
        if v.status != listed[0]:  # only a time budget on a loaded host may change a verdict
            assert v.status == "inconclusive" and v.inconclusive_examples and all(
                "max_seconds" in json.dumps(e["detail"]) for e in v.inconclusive_examples), (key, v.status)
        else:
            for col in (verdict_col, *text_cols):
                for m in re.finditer(r"(\d+) inputs", r[col]):
                    assert int(m.group(1)) == v.tried, f"{key}: README says {m.group(0)}, verify tried {v.tried}"
    assert len(rows) >= 5


@pytest.mark.slow
def test_verify_tables_are_what_verify_prints():
    verdicts = _verdicts()
    rows = table(section("What `theorycheck verify` finds (fast profile, seed 0)"))
    _check_rows(rows, verdicts, 1, (2,))
    keys = [KEY.search(r[0]).group(0) for r in rows]
    assert sorted(keys) == sorted(k for k in verdicts if not k.startswith(("KR.", "LM.")))
    rows = table(section("What `verify --pack kernel-rich` and `--pack lp-margin` find (fast profile, seed 0)"))
    _check_rows(rows, verdicts, 1, ())
    assert sorted(KEY.search(r[0]).group(0) for r in rows) == sorted(k for k in verdicts if k.startswith(("KR.", "LM.")))


@pytest.mark.slow
def test_prove_counts_are_what_prove_prints():
    import theorycheck as tc

    res = tc.prove()
    steps = [s.status for r in res.results for _, s in r.steps]
    m = re.search(r"(\d+) theorems of the \w+ packs, (\d+) steps — (\d+) verified, (\d+) incomplete, (\d+) refuted",
                  README)
    assert m, "README's prove summary not found"
    assert (int(m.group(1)), int(m.group(2))) == (len(res.results), len(steps))
    assert (int(m.group(3)), int(m.group(4)), int(m.group(5))) == (
        steps.count("verified"), steps.count("incomplete"), steps.count("refuted"))
    for m in re.finditer(r"(\d+) theorems, (\d+) steps", README):
        assert (int(m.group(1)), int(m.group(2))) == (len(res.results), len(steps)), m.group(0)


def test_the_python_example_is_the_commands_json(capsys):
    """The README's Python block, run as written, gives what the command in its comment prints."""
    block = re.search(r"^## Python\n.*?```python\n(.*?)```", README, re.S | re.M).group(1)
    expr, command = re.search(r"^(tr\.as_dict\(\)\[\"switches\"\])\s+# == `theorycheck (.*?)`$", block, re.M).groups()
    ns: dict = {}
    exec(block.split(expr)[0], ns)  # noqa: S102 - the README's own example
    value = eval(expr, ns)  # noqa: S307
    rc, out = run(command.split(), capsys)
    assert rc == 0 and json.loads(out)["switches"] == json.loads(json.dumps(value)) and len(value) == 2


def test_the_trajectory_example_reports_what_the_readme_says(capsys):
    import math

    m = re.search(r"Example: `theorycheck (trajectory [^`]*--json)`\s+reports `slide` events for features "
                  r"(\d+) and (\d+) at τ = ln 2 and ln 10 / 3 \(C2\) and\s+`final_index` (\d+)", README)
    assert m, "README's trajectory example not found"
    rc, out = run(m.group(1).split(), capsys)
    doc = json.loads(out)
    slides = [(e["index"], e["time"]) for e in doc["events"] if e["kind"] == "slide"]
    assert [i for i, _ in slides] == [int(m.group(2)), int(m.group(3))]
    assert [t for _, t in slides] == pytest.approx([math.log(2), math.log(10) / 3], rel=1e-9)
    assert doc["final_index"] == int(m.group(4))


@pytest.mark.slow
def test_the_api_study_prints_what_docs_api_shows(capsys):
    api = (ROOT / "docs" / "api.md").read_text()
    code = re.search(r"## A study in ten lines\n\n```python\n(.*?)```", api, re.S).group(1)
    shown = re.search(r"prints \(run as written, on this checkout\):\n\n```\n(.*?)```", api, re.S).group(1)
    exec(code, {})  # noqa: S102 - the documentation's own example
    assert capsys.readouterr().out == shown
