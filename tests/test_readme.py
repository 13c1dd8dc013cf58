"""README.md is an entrance, and every page of the documentation stays true to itself: the README is short,
keeps the install-and-test line CI reads, links only to files that exist, carries no change notes and no
timings (they live in benchmarks/TIMINGS.md, with wall or CPU time said beside each); every relative link of
the documentation resolves. What the commands print is compared with the pages by tests/test_docs_*.py."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: user-facing pages: the README and docs/ (benchmarks/ records history and may say "before")
USER_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: every page that may quote a duration: it must say wall or CPU time beside it
TIMED_DOCS = [*USER_DOCS, ROOT / "benchmarks" / "TIMINGS.md"]


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


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def test_the_readme_is_an_entrance():
    lines = README.splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines (at most 300: the reference is in docs/)"
    for link in ("docs/commands/", "docs/findings/", "docs/api.md", "docs/design.md", "docs/writing-a-pack.md",
                 "benchmarks/"):
        assert f"]({link}" in README, f"README.md does not link {link}"


def test_the_install_and_test_line_ci_reads_is_there():
    """`.ci/run` runs the line after '# 2.' of "The two commands": it must start with the pinned torch."""
    two = section(README, "The two commands")
    lines = two.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("# 2."))
    assert lines[i + 1].startswith('pip install "torch==2.13.0" && ')
    assert lines[i + 1].endswith("python -m pytest -q")


def test_the_readme_lists_every_command_once():
    from theorycheck.cli.parser import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    rows = [ln for ln in section(README, "Commands").splitlines() if ln.startswith("| [`theorycheck ")]
    listed = [re.match(r"\| \[`theorycheck ([\w-]+)`\]\(docs/commands/([\w-]+)\.md\)", ln).groups() for ln in rows]
    assert sorted(c for c, _ in listed) == sorted(sub.choices)
    assert all(c == p for c, p in listed), listed


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")


def test_every_relative_link_of_the_documentation_resolves():
    for doc in [*USER_DOCS, *sorted((ROOT / "benchmarks").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (doc.parent / path).resolve() if path else doc
            assert dest.exists(), f"{rel(doc)}: link to {target}: no such file"
            if anchor and dest.suffix == ".md":
                heads = [_slug(h) for h in re.findall(r"^#+ (.*)$", dest.read_text(encoding="utf-8"), re.M)]
                assert anchor in heads, f"{rel(doc)}: link to {target}: no such heading in {dest.name}"


def test_user_docs_carry_no_change_notes():
    """A user reads what the tool does, not what it used to do."""
    notes = re.compile(r"\bformerly\b|\bwas renamed\b|\bused to (?:be|say|read)\b|\bsaid .{0,40}\bbefore\b|"
                       r"\bbefore the one\b|\bwas `[^`]+`", re.I)
    for doc in USER_DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            m = notes.search(line)
            assert not m, f"{rel(doc)}:{n}: a change note ({m.group(0)!r}): {line.strip()[:100]}"


def test_the_readme_quotes_no_timing():
    """Timings live in benchmarks/TIMINGS.md with the command and the host; the README links there."""
    for n, line in enumerate(README.splitlines(), 1):
        m = re.search(r"\b\d[\d.]*\s*(?:s|ms|min)\b(?! budget)", line)
        assert not m, f"README.md:{n}: a timing ({m.group(0)!r}); move it to benchmarks/TIMINGS.md"
    assert "](benchmarks/TIMINGS.md)" in README


def test_every_timing_says_wall_or_cpu():
    """A duration in prose ("about 60 s", "takes 2.5 s") says wall or CPU time in its sentence; a table whose
    header names wall or CPU time is read as such; budgets ("a 30 s budget") are not timings."""
    for doc in TIMED_DOCS:
        timed_table = False  # inside a table whose header names wall or CPU time
        for line in doc.read_text(encoding="utf-8").splitlines():
            if not line.startswith("|"):
                timed_table = False
            elif "wall" in line or "CPU" in line:
                timed_table = True
            if timed_table:
                continue
            for m in re.finditer(r"(?:about|takes|took|~|in)\s*[0-9][0-9.–]*\s*(?:s|min|ms)\b", line):
                near = line[max(0, m.start() - 120): m.end() + 120]
                assert re.search(r"wall|CPU|budget", near), f"{rel(doc)}: {line.strip()}"
    timings = section((ROOT / "benchmarks" / "TIMINGS.md").read_text(encoding="utf-8"), "Commands")
    head = re.search(r"^\| command \| wall time \| CPU time \| load \|$", timings, re.M)
    rows = [ln for ln in timings.splitlines() if ln.startswith("| `")]
    assert head and rows and all(len(re.split(r"(?<!\\)\|", r.strip())) == 6 for r in rows)
