"""docs/findings/ says what the commands find about each paper: its verdict tables and counts are compared
here with what `verify`, `prove`, `packs` and `reproduce --list` print, so that they cannot drift. Nothing is
hard-coded: each test reads the pages and runs the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from theorycheck.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ROOT / "docs" / "findings"
STATUSES = ("holds", "fails", "inconclusive", "error")
KEY = re.compile(r"[A-Z][A-Za-z0-9]*\.[a-z][\w.-]*")


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def pages() -> dict[str, Path]:
    """Pack name → its findings page."""
    return {p.stem: p for p in sorted(FINDINGS.glob("*.md")) if p.stem != "README"}


def section(doc: str, title: str) -> str:
    """The text under the heading ``title`` (any level), up to the next heading (lines in fenced code
    blocks, such as ``# 2.`` comments, are not headings)."""
    lines, out, fence, inside = doc.splitlines(), [], False, False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        heading = not fence and re.match(r"^#+ ", line)
        if heading and inside:
            break
        if inside:
            out.append(line)
        if heading and re.fullmatch(rf"#+ {re.escape(title)}\s*", line):
            inside = True
    assert inside, f"no heading {title!r}"
    return "\n".join(out)


def table(doc: str) -> list[list[str]]:
    """The rows (cells, stripped) of the first Markdown table in ``doc``, header and rule left out."""
    rows = []
    for line in doc.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
        elif rows:
            break
    assert len(rows) >= 2 and set(rows[1][0]) <= set("-:"), "not a Markdown table"
    return rows[2:]


def verify_section(pack: str) -> str:
    doc = text(pages()[pack])
    title = next(m.group(1) for m in re.finditer(r"^## (What `theorycheck verify[^\n]*)$", doc, re.M))
    return section(doc, title)


def run(argv, capsys) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().out


def test_there_is_a_page_for_every_built_in_pack(capsys):
    rc, out = run(["packs", "--json"], capsys)
    names = {p["name"] for p in json.loads(out)["packs"]}
    assert rc == 0 and set(pages()) == names, f"findings pages {sorted(pages())}, packs {sorted(names)}"
    index = text(FINDINGS / "README.md")
    for name in names:
        assert f"({name}.md)" in index, f"docs/findings/README.md does not link {name}.md"


def test_reproduce_table_lists_every_experiment_of_every_pack(capsys):
    rc, out = run(["reproduce", "--list"], capsys)
    assert rc == 0
    listed = [re.match(r"(\S+)\s+\[(\S+)\]", line).groups() for line in out.splitlines() if line.strip()]
    rows = table(section(text(ROOT / "docs" / "commands" / "reproduce.md"), "`theorycheck reproduce`"))
    assert [(r[0].strip("`"), r[1]) for r in rows] == listed


def test_counts_of_claims_and_theorems_are_the_packs(capsys):
    rc, out = run(["packs", "--json"], capsys)
    packs = json.loads(out)["packs"]
    claims, theorems = sum(p["claims"] for p in packs), sum(p["theorems"] for p in packs)
    words = {3: "three", 4: "four", 5: "five"}.get(len(packs), str(len(packs)))
    for doc in (ROOT / "README.md", FINDINGS / "README.md"):
        for m in re.finditer(r"(\d+)\s+claims\s+of\s+the\s+(\w+)\s+packs", text(doc)):
            assert (int(m.group(1)), m.group(2)) == (claims, words), f"{doc.name}: {m.group(0)}"
        for m in re.finditer(r"(\d+)\s+theorems(?:\s+of\s+the\s+(\w+)\s+packs)?", text(doc)):
            assert int(m.group(1)) == theorems, f"{doc.name}: {m.group(0)}"
    by_pack = {p["name"]: p["claims"] for p in packs}
    for pack in pages():
        rows = table(verify_section(pack))
        assert len([r for r in rows if not r[0].startswith("↳")]) == by_pack[pack], \
            f"docs/findings/{pack}.md: {len(rows)} rows, the pack has {by_pack[pack]} claims"


def test_alpha_c_quoted_for_one_to_six_is_the_certified_one():
    import numpy as np
    from theorycheck.proofs.minor_first.predict import alpha_c as AC

    (quoted,) = re.findall(r"α_c \(= ([0-9.]+)·ρ for z = \(1,…,6\)", text(pages()["minor-first"]))
    value = AC.collapse_threshold(np.arange(1.0, 7.0), 1.0).value
    assert f"{value:.{len(quoted) - 2}f}" == quoted


def _verdicts():
    import theorycheck as tc

    res = tc.verify(profile="fast", seed=0)
    out = {}
    for v in res.verdicts:
        for w in (v, v.refined):
            if w is not None:
                out[w.key] = (w, res.packs.get(v.key))
    return out


def _check_rows(rows, verdicts, verdict_col: int, text_cols: tuple[int, ...]) -> None:
    for r in rows:
        key = KEY.search(r[0]).group(0)
        v, _ = verdicts[key]
        listed = re.findall("|".join(STATUSES), r[verdict_col])
        assert listed, (key, r[verdict_col])
        assert v.status in listed, f"{key}: the findings say {listed}, verify says {v.status}"
        if v.status != listed[0]:  # only a time budget on a loaded host may change a verdict
            assert v.status == "inconclusive" and v.inconclusive_examples and all(
                "max_seconds" in json.dumps(e["detail"]) for e in v.inconclusive_examples), (key, v.status)
        else:
            for col in (verdict_col, *text_cols):
                for m in re.finditer(r"(\d+) inputs", r[col]):
                    assert int(m.group(1)) == v.tried, f"{key}: the findings say {m.group(0)}, verify tried {v.tried}"


@pytest.mark.slow
def test_verify_tables_are_what_verify_prints():
    """Every pack's page has one row per claim and refined claim of the pack, with verify's verdict."""
    verdicts = _verdicts()
    seen = 0
    for pack in pages():
        rows = table(verify_section(pack))
        _check_rows(rows, verdicts, 1, (2,) if pack == "minor-first" else ())
        keys = [KEY.search(r[0]).group(0) for r in rows]
        assert sorted(keys) == sorted(k for k, (_, p) in verdicts.items() if p == pack), pack
        seen += len(rows)
    assert seen >= 5


@pytest.mark.slow
def test_prove_counts_are_what_prove_prints():
    import theorycheck as tc

    res = tc.prove()
    steps = [s.status for r in res.results for _, s in r.steps]
    docs = {p: text(p) for p in (ROOT / "README.md", *FINDINGS.glob("*.md"))}
    m = re.search(r"(\d+) theorems\s+of\s+the\s+\w+\s+packs,\s+(\d+)\s+steps\s+—\s+(\d+)\s+verified,\s+(\d+)\s+"
                  r"incomplete,\s+(\d+)\s+refuted", text(FINDINGS / "README.md"))
    assert m, "docs/findings/README.md: the prove summary not found"
    assert (int(m.group(1)), int(m.group(2))) == (len(res.results), len(steps))
    assert (int(m.group(3)), int(m.group(4)), int(m.group(5))) == (
        steps.count("verified"), steps.count("incomplete"), steps.count("refuted"))
    for p, doc in docs.items():
        for m in re.finditer(r"(\d+)\s+theorems,\s+(\d+)\s+steps", doc):
            assert (int(m.group(1)), int(m.group(2))) == (len(res.results), len(steps)), f"{p.name}: {m.group(0)}"
