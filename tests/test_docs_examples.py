"""The examples of README.md and docs/ do what the text says they do: each test reads the example from the page,
runs it as written, and compares with the page's claim or with the command the page says it equals."""

from __future__ import annotations

import json
import math
import re
from functools import reduce
from pathlib import Path

import pytest

from theorycheck.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def text(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def run(argv, capsys) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().out


def test_the_readme_python_is_the_commands_json(capsys):
    """Every line ``X.as_dict()[…]  # == `theorycheck …``` of the README's Python block, run as written, gives
    what that command prints under the same keys."""
    block = re.search(r"^## Ten lines of Python\n.*?```python\n(.*?)```", text("README.md"), re.S | re.M).group(1)
    lines = block.splitlines()
    assert len([ln for ln in lines if ln.strip()]) <= 10, "more than ten lines of Python"
    checks = [(i, m) for i, ln in enumerate(lines)
              if (m := re.match(r"^(\w+)\.as_dict\(\)((?:\[\"\w+\"\])+)\s+# == `theorycheck (.*?)`$", ln))]
    assert len(checks) >= 3
    ns: dict = {}
    done = 0
    for i, m in checks:
        exec("\n".join(lines[done:i]), ns)  # noqa: S102 - the README's own example
        done = i + 1
        keys = re.findall(r"\[\"(\w+)\"\]", m.group(2))
        value = reduce(lambda d, k: d[k], keys, ns[m.group(1)].as_dict())
        rc, out = run(m.group(3).split(), capsys)
        assert rc == 0
        printed = reduce(lambda d, k: d[k], keys, json.loads(out))
        assert printed == json.loads(json.dumps(value)), f"{m.group(3)}: {keys} differ"
    switches = ns["tr"].as_dict()["switches"]
    assert "j† (the dominant feature) goes 1 → 2 → 3" in text("README.md")
    assert [ns["tr"].as_dict()["initial_index"], *(w["to"] for w in switches)] == [1, 2, 3]


def test_the_trajectory_example_reports_what_the_page_says(capsys):
    m = re.search(r"Example: `theorycheck (trajectory [^`]*--json)` reports\s+`slide` events for features "
                  r"(\d+) and (\d+) at τ = ln 2 and ln 10 / 3 \(C2\) and `final_index` (\d+)",
                  text("docs/commands/trajectory.md"))
    assert m, "docs/commands/trajectory.md: the trajectory example not found"
    rc, out = run(m.group(1).split(), capsys)
    doc = json.loads(out)
    slides = [(e["index"], e["time"]) for e in doc["events"] if e["kind"] == "slide"]
    assert [i for i, _ in slides] == [int(m.group(2)), int(m.group(3))]
    assert [t for _, t in slides] == pytest.approx([math.log(2), math.log(10) / 3], rel=1e-9)
    assert doc["final_index"] == int(m.group(4))


def test_the_depth4_thresholds_example_reports_what_the_page_says(capsys):
    m = re.search(r"Example: `theorycheck\s+thresholds --z (\S+) --rho\s+(\S+) --depth (\d) --alpha (\S+)` ends its "
                  r"trajectory at τ = ([0-9.]+) \(40/min z\) with j† = (\d), `final index not\s+final`",
                  text("docs/commands/thresholds.md"))
    assert m, "docs/commands/thresholds.md: the depth-4 example not found"
    z, rho, depth, alpha, tau, j = m.groups()
    rc, out = run(["thresholds", "--z", z, "--rho", rho, "--depth", depth, "--alpha", alpha, "--json"], capsys)
    doc = json.loads(out)
    assert rc == 0 and doc["time_kind"] == "rescaled" and doc["stopped_because"] == "t_max"
    assert f"{40 / min(float(v) for v in z.split(',')):.1f}" == tau
    assert doc["final_index"] == int(j) and doc["final_index_status"] == "not decided"


@pytest.mark.slow
def test_the_api_study_prints_what_docs_api_shows(capsys):
    api = text("docs/api.md")
    code = re.search(r"## A study in ten lines\n\n```python\n(.*?)```", api, re.S).group(1)
    shown = re.search(r"prints \(run as written, on this checkout\):\n\n```\n(.*?)```", api, re.S).group(1)
    exec(code, {})  # noqa: S102 - the documentation's own example
    assert capsys.readouterr().out == shown
