"""Every JSON key a command prints is documented on its page in docs/commands/, and nothing else is.

Three things are held together: the declaration of each result class (``KEYS``, a
:class:`theorycheck.record.Keys`: names only), the page's key table of that declaration (meaning, type,
unit: written once, there) and what ``as_dict()`` emits on sample runs of every command. A failure
names the page, the table and the key: a key the code declares and the page omits, a key the page
documents and the code no longer declares, a key a run emits that the code does not declare, a value
whose JSON kind the page's type does not allow, a declared key no sample run emits."""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import json
import shlex
import tempfile
from pathlib import Path

import pytest
from _docs import COMMANDS, KEY_HEADER, KINDS, allows, documented_keys, key_tables, kinds, marks, tables

from theorycheck.cli.main import main
from theorycheck.cli.parser import build_parser
from theorycheck.record import Keys

#: command → where its result classes declare their keys ("module:Class", or a module with ``KEYS``)
ROOTS = {
    "setting": ["theorycheck.api:SettingSummary"],
    "derive": ["theorycheck.derivation:Derivation", "theorycheck.derivation:RegressionDerivation"],
    "prove": ["theorycheck.symbolic.theorem:ProveResult"],
    "verify": ["theorycheck.claims.runner:VerifyResult"],
    "thresholds": ["theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult", "theorycheck.proofs.minor_first.proved.regime_map:RegimeMap"],
    "check-certificate": ["theorycheck.proved.check:CertificateCheck"],
    "trajectory": ["theorycheck.solvers.trajectory:Trajectory", "theorycheck.proofs.minor_first.proved.trajectory:ProvedTrajectory",
                   "theorycheck.solvers.regression:RegressionResult"],
    "maxmargin": ["theorycheck.api:MaxMarginResult"],
    "saddles": ["theorycheck.api:SaddlesResult"],
    "heatmap": ["theorycheck.sweep.result:SweepResult"],
    "reproduce": ["theorycheck.api:ReproduceResult"],
    "cnn": ["theorycheck.numerics.minor_first.e2.cnn:CnnResult"],
    "linear-images": ["theorycheck.numerics.minor_first.e2.linear_images:LinearImagesResult", "theorycheck.numerics.minor_first.e2.linear_pairs:PairsResult"],
    "packs": ["theorycheck.packs:PackList"],
    "predict": ["theorycheck.proofs.kernel_rich.predictions", "theorycheck.proofs.lp_margin.predictions",
                "theorycheck.proofs.minor_first.predictions"],
}


def declaration(spec: str) -> Keys:
    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module)
    return (getattr(obj, attr) if attr else obj).KEYS


def where(spec: str) -> str:
    return spec.replace(":", ".") + ".KEYS"


def page(command: str) -> Path:
    return COMMANDS / f"{command}.md"


@functools.cache
def declared() -> dict[str, tuple[Keys, str, str]]:
    """Every schema reachable from the roots: name → (Keys, the command whose roots reach it first, the
    root declaration that reaches it)."""
    out: dict[str, tuple[Keys, str, str]] = {}
    for command, specs in ROOTS.items():
        for spec in specs:
            for name, keys in declaration(spec).schemas().items():
                if name in out:
                    assert out[name][0] is keys, f"two different declarations are named {name!r}"
                    continue
                out[name] = (keys, command, spec)
    return out


@functools.cache
def documented() -> dict[str, tuple[Path, list[list[str]]]]:
    """Every key table of docs/commands/: schema name → (page, rows); a name documented twice fails."""
    out: dict[str, tuple[Path, list[list[str]]]] = {}
    for p in sorted(COMMANDS.glob("*.md")):
        for name, rows in key_tables(p).items():
            assert name not in out, f"{name!r} has a key table on {out[name][0].name} and on {p.name}"
            out[name] = (p, rows)
    return out


def rel(p: Path) -> str:
    return str(p.relative_to(COMMANDS.parents[1]))


def test_every_command_has_a_page_and_every_page_a_command():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    commands = set(sub.choices)
    pages = {p.stem for p in COMMANDS.glob("*.md")} - {"README"}
    assert commands - pages == set(), f"commands without a page in docs/commands/: {sorted(commands - pages)}"
    assert pages - commands == set(), f"pages of no command in docs/commands/: {sorted(pages - commands)}"
    assert set(ROOTS) == commands, f"tests/test_docs_keys.py ROOTS lacks {sorted(commands - set(ROOTS))}"
    index = (COMMANDS / "README.md").read_text(encoding="utf-8")
    for c in sorted(commands):
        assert f"({c}.md)" in index, f"docs/commands/README.md does not link {c}.md"


def test_every_key_table_is_marked_and_every_mark_has_a_table():
    for p in sorted(COMMANDS.glob("*.md")):
        text = p.read_text(encoding="utf-8")
        ts = tables(text)
        tabled = {mark for mark, head, _, _ in ts if mark is not None and head == KEY_HEADER}
        for name, line in marks(text):
            assert name in tabled, f"{rel(p)}:{line}: the mark of {name!r} is not followed by a table headed " \
                                   f"| {' | '.join(KEY_HEADER)} |"
        for mark, head, _, line in ts:
            if head == KEY_HEADER:
                assert mark is not None, f"{rel(p)}:{line}: a key table without a <!-- keys: NAME --> line before it"


@pytest.mark.parametrize("command", sorted(ROOTS))
def test_the_page_documents_every_object_the_command_prints(command):
    """Each root declaration has its table on the command's page; every object nested in it has a table
    on some page, and the command's page links the page that has it."""
    text = page(command).read_text(encoding="utf-8")
    docs = documented()
    for spec in ROOTS[command]:
        for name in declaration(spec).schemas():
            assert name in docs, (f"{rel(page(command))}: no key table for {name!r} (declared in {where(spec)}): "
                                  f"add '<!-- keys: {name} -->' and its table")
            p = docs[name][0]
            if p != page(command):
                assert f"({p.name}" in text, f"{rel(page(command))} does not link {p.name}, which documents {name!r}"


def test_no_page_documents_an_object_the_code_does_not_declare():
    decl = declared()
    for name, (p, _) in documented().items():
        assert name in decl, (f"{rel(p)} documents the keys of {name!r}, which no result class declares "
                              "(renamed or removed in the code?)")


@pytest.mark.parametrize("name", sorted(declared()))
def test_key_table_is_the_declaration(name):
    keys, command, spec = declared()[name]
    p, rows = documented().get(name, (page(command), None))
    assert rows is not None, f"{rel(p)}: no key table for {name!r} (declared in {where(spec)})"
    doc = documented_keys(rows)
    missing = [k for k in keys.keys if k not in doc]
    extra = [k for k in doc if k not in keys.keys]
    problems = ([f"key(s) {missing} are declared by the code but not documented"] if missing else []) + (
        [f"documents key(s) {extra}, which the code does not declare (no longer emitted?)"] if extra else [])
    assert not problems, f"{rel(p)}, table {name!r} (declared in {where(spec)}): " + "; ".join(problems)
    for row in rows:
        assert len(row) == len(KEY_HEADER) and all(row), f"{rel(p)}, table {name!r}: an empty cell in {row}"
        bad = kinds(row[1]) - KINDS
        assert not bad, (f"{rel(p)}, table {name!r}, {row[0]}: type {row[1]!r} names {sorted(bad)}, not a JSON "
                         f"kind ({', '.join(sorted(KINDS))})")


# ---------------------------------------------------------------------------- sample runs
DATA = {"two.csv": "x1,x2,y\n4,1,1\n1,-1,-1\n", "reg.csv": "x1,x2,x3,y\n1,0.5,-0.2,1.0\n0.3,-1,0.8,-0.5\n",
        "e1.csv": "x1,x2,y\n1.2,1.5,1\n2.7,2.0,1\n", "leave.csv": "x1,x2,x3,y\n0,0,-1,3\n-1,-3,1,-2\n",
        "tie.csv": "x1,x2,y\n1,1,1\n", "over.csv": "x1,y\n1,1\n2,1\n"}

#: id → (command line after `theorycheck`; {tmp}: a folder with DATA, {out}: a file for the JSON, the
#: declaration its JSON follows). Fast: at least one run of every command.
FAST = {
    "setting": ("setting --z 1,2,3 --json", "theorycheck.api:SettingSummary"),
    "setting-data": ("setting --data {tmp}/two.csv --depth 3 --json", "theorycheck.api:SettingSummary"),
    "derive": ("derive --depth 2 --dim 2 --format json", "theorycheck.derivation:Derivation"),
    "derive-pm": ("derive --param pm --loss squared --depth 2 --format json", "theorycheck.derivation:RegressionDerivation"),
    "prove": ("prove --only C6 --json", "theorycheck.symbolic.theorem:ProveResult"),
    "verify": ("verify --claims C6.gd --examples 1 --json {out}", "theorycheck.claims.runner:VerifyResult"),
    "verify-inconclusive": ("verify --claims docs.undecided --json {out}", "theorycheck.claims.runner:VerifyResult"),
    "thresholds": ("thresholds --z 1,2,3 --rho 1 --alpha 0.5 --json", "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "thresholds-depth3": ("thresholds --z 1,2,3 --rho 1 --depth 3 --alpha 0.3 --json",
                          "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "thresholds-linf": ("thresholds --z 1,2,3 --rho 1 --optimizer sam-linf --depth 3 --alpha 1.5,2,1.2 --json",
                        "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "thresholds-warning": ("thresholds --z 1,2,3 --rho 1 --alpha 0.2 --t-max 0.01 --json",
                           "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "thresholds-gd": ("thresholds --z 1,2,3 --rho 1 --optimizer gd --alpha 0.5 --json",
                      "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "trajectory": ("trajectory --z 1,2,3 --optimizer sam-linf --rho 1 --alpha 0.5,2,0.9 --json",
                   "theorycheck.solvers.trajectory:Trajectory"),
    "trajectory-data": ("trajectory --data {tmp}/two.csv --optimizer gd --alpha 0.1 --t-max 20 --json",
                        "theorycheck.solvers.trajectory:Trajectory"),
    "trajectory-discrete": ("trajectory --z 1,2,3 --rho 1 --alpha 0.5 --discrete --eta 0.05 --steps 100 --json",
                            "theorycheck.solvers.trajectory:Trajectory"),
    "trajectory-prove": ("trajectory --z 1,2,3 --rho 1 --alpha 0.3 --prove --json",
                         "theorycheck.solvers.trajectory:Trajectory"),
    "trajectory-pm": ("trajectory --data {tmp}/reg.csv --loss squared --param pm --optimizer gd --alpha 0.1 --json",
                      "theorycheck.solvers.regression:RegressionResult"),
    "maxmargin": ("maxmargin --data {tmp}/two.csv --norm 2 --json", "theorycheck.api:MaxMarginResult"),
    "saddles": ("saddles --data {tmp}/leave.csv --json", "theorycheck.api:SaddlesResult"),
    "saddles-tie": ("saddles --data {tmp}/tie.csv --json", "theorycheck.api:SaddlesResult"),
    "saddles-lsq": ("saddles --data {tmp}/over.csv --max-jumps 1 --json", "theorycheck.api:SaddlesResult"),
    "heatmap": ("heatmap --z 1,2,3 --rho 1 --alphas 0.1:2:6 --t-max 10 --nt 10 --backend serial "
                "--array-backend numpy --json", "theorycheck.sweep.result:SweepResult"),
    "reproduce": ("reproduce transition --quick --out {tmp}/reproduce --backend serial --json",
                  "theorycheck.api:ReproduceResult"),
    "packs": ("packs --json", "theorycheck.packs:PackList"),
    "predict-kr": ("predict --pack kernel-rich --data {tmp}/reg.csv --alpha 0.01 --json",
                   "theorycheck.proofs.kernel_rich.predictions"),
    "predict-lm": ("predict --pack lp-margin --data {tmp}/two.csv --json", "theorycheck.proofs.lp_margin.predictions"),
    "predict-mf": ("predict --pack minor-first --z 1,2,3 --alpha 0.5 --json",
                   "theorycheck.proofs.minor_first.predictions"),
    "cnn": ("cnn --train-size 40 --test-size 20 --cam-images 8 --batch-size 20 --epochs 1 --seeds 2 --init-scales 1 --widths 4,8 "
            "--checkpoints 2 --out {tmp}/cnn --json", "theorycheck.numerics.minor_first.e2.cnn:CnnResult"),
    "linear-images": ("linear-images --n-train 40 --n-test 20 --alphas 0.1,1 --checkpoints 6 --max-steps 40 "
                      "--json", "theorycheck.numerics.minor_first.e2.linear_images:LinearImagesResult"),
    "check-certificate": ("check-certificate {tmp}/cert.json --json", "theorycheck.proved.check:CertificateCheck"),
}
#: the other shapes, at a cost of seconds each: the full tier
SLOW = {
    "thresholds-depth4": ("thresholds --z 1,2,3 --rho 1 --depth 4 --alpha 0.5 --json",
                          "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "thresholds-prove": ("thresholds --z 1,2 --rho 1 --prove --digits 6 --certificate {tmp}/c.json --json",
                         "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "thresholds-data": ("thresholds --data {tmp}/e1.csv --rho 0.5 --json", "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "regime-map": ("thresholds --z 1,2,3 --rho 1 --depth 4 --prove --alpha 1:1.01 --json",
                   "theorycheck.proofs.minor_first.proved.regime_map:RegimeMap"),
    "trajectory-mpmath": ("trajectory --z 1,2,3 --depth 4 --rho 1 --alpha 0.2 --digits 30 --json",
                          "theorycheck.solvers.trajectory:Trajectory"),
    "verify-prove": ("verify --claims C2.solution,C3.winner --examples 1 --prove --json {out}",
                     "theorycheck.claims.runner:VerifyResult"),
    "verify-grid": ("verify --claims SR.sparser --examples 1 --json {out}", "theorycheck.claims.runner:VerifyResult"),
    "thresholds-digits": ("thresholds --z 1,2,3 --rho 1 --digits 20 --json", "theorycheck.proofs.minor_first.predict.regimes:ThresholdsResult"),
    "linear-images-discrete": ("linear-images --n-train 40 --n-test 20 --alphas 0.1 --checkpoints 6 --max-steps 40 "
                               "--time discrete --eta 0.05 --t-max 1 --optimizers gd --json",
                               "theorycheck.numerics.minor_first.e2.linear_images:LinearImagesResult"),
    "linear-images-pairs": ("linear-images --pairs 0/1,2/3,6/7,4/5 --quick --n-train 60 --optimizers sam-l2 "
                            "--scheduler sync --json", "theorycheck.numerics.minor_first.e2.linear_pairs:PairsResult"),
    "linear-images-pair": ("linear-images --pairs 0/1 --quick --n-train 40 --optimizers sam-l2 --scheduler sync "
                           "--json", "theorycheck.numerics.minor_first.e2.linear_pairs:PairsResult"),
}
SAMPLES = {**FAST, **SLOW}

#: declared keys that no sample emits, and why (each is checked: declared, and still not emitted)
NOT_SAMPLED: dict[tuple[str, str], str] = {
    ("heatmap.run", "scheduler"): "only with --scheduler ADDRESS, a running Dask cluster (tests/test_sweep.py)",
    ("linear-images.pairs.execution", "address"): "only on a Dask cluster (--scheduler tcp://HOST:PORT)",
    ("linear-images.pairs.pair", "l1_limit_why"): "only when the ℓ1 max-margin LP of a pair fails",
}


@functools.cache
def _folder() -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="docs_keys_"))
    for name, text in DATA.items():
        (tmp / name).write_text(text)
    return tmp


@functools.cache
def emitted_json(sample: str):
    """Run a sample as the CLI does and read its JSON back (stdout, or the file it wrote)."""
    tmp = _folder()
    if sample == "check-certificate" and not (tmp / "cert.json").exists():  # a small certificate to re-check
        _cli(["thresholds", "--z", "1,2", "--rho", "1", "--prove", "--digits", "3", "--certificate",
              str(tmp / "cert.json"), "--json"])
    line, _ = SAMPLES[sample]
    out = tmp / f"{sample}.json"
    with _undecided_claim() if sample == "verify-inconclusive" else contextlib.nullcontext():
        rc, text = _cli(shlex.split(line.format(tmp=tmp, out=out)))
    assert rc in (0, 1), f"theorycheck {line}: exit status {rc}"
    return json.loads(out.read_text() if "{out}" in line else text)


@contextlib.contextmanager
def _undecided_claim():
    """A user's claim whose check always runs out of budget, registered for one run (its verdict is
    inconclusive and lists the inputs: ``inconclusive_examples``)."""
    from hypothesis import strategies as st

    import theorycheck as tc

    tc.register_claim(tc.Claim(key="docs.undecided", statement="a check that never decides", inputs=st.integers(0, 3),
                               check=lambda n: tc.Outcome(None, 0.0, {"why": "max_evaluations: a budget ran out"}),
                               tolerance="exact"))
    try:
        yield
    finally:
        tc.unregister_claim("docs.undecided")


def _cli(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        rc = main(argv)
    return rc, buf.getvalue()


def _check_sample(sample: str) -> set[tuple[str, str]]:
    line, spec = SAMPLES[sample]
    keys = declaration(spec)
    docs = documented()
    emitted = set()
    for path, schema, key, value in keys.visit(emitted_json(sample)):
        assert schema is not None, (f"theorycheck {line} emits {path}: not declared in the schema that holds it "
                                    f"(reached from {where(spec)}), nor documented")
        emitted.add((schema.name, key))
        assert schema.name in docs, f"theorycheck {line} emits {path}: no page has a key table for {schema.name!r}"
        p, rows = docs[schema.name]
        row = documented_keys(rows).get(key)
        assert row is not None, (f"theorycheck {line} emits {path}: declared in {schema.name!r} but not documented "
                                 f"in {rel(p)}, table {schema.name!r}")
        assert allows(row[1], value), (f"theorycheck {line} emits {path} = {json.dumps(value)[:80]}: a "
                                       f"{type(value).__name__}, but {rel(p)}, table {schema.name!r} gives its type "
                                       f"as {row[1]!r}")
    return emitted


@pytest.mark.parametrize("sample", sorted(FAST))
def test_a_run_emits_only_documented_keys_of_the_documented_kinds(sample):
    _check_sample(sample)


@pytest.mark.slow
@pytest.mark.parametrize("sample", sorted(SLOW))
def test_a_run_emits_only_documented_keys_of_the_documented_kinds_slow(sample):
    _check_sample(sample)


@pytest.mark.slow
def test_every_declared_key_is_emitted_by_some_sample_run():
    """A key declared (and documented) that no run emits is a key the code may no longer emit."""
    emitted = set().union(*(_check_sample(s) for s in sorted(SAMPLES)))
    everything = {(name, k) for name, (keys, _, _) in declared().items() for k in keys.keys}
    for pair, why in NOT_SAMPLED.items():
        assert pair in everything, f"NOT_SAMPLED lists {pair} ({why}), which is not declared"
        assert pair not in emitted, f"NOT_SAMPLED lists {pair} ({why}), but a sample emits it: take it off the list"
    never = sorted(everything - emitted - set(NOT_SAMPLED))
    lines = [f"{rel(documented()[n][0])}, table {n!r}: key {k!r}" for n, k in never]
    assert not never, "declared and documented, but emitted by no sample run:\n  " + "\n  ".join(lines)


def test_the_keys_walk_finds_undeclared_and_nested_keys():
    """The checker itself: a key missing from a declaration is found at any depth, in lists, maps and
    alternative shapes."""
    from theorycheck.record import ListOf, MapOf, OneOf

    a, b = Keys("t.a", "x", "y"), Keys("t.b", "x", "z")
    k = Keys("t", "n", items=ListOf(Keys("t.item", "v")), per=MapOf(Keys("t.per", "w")), shape=OneOf(a, b))
    undeclared, emitted = k.walk({"n": 1, "items": [{"v": 1}, {"v": 2, "u": 3}], "per": {"gd": {"w": 1, "q": 2}},
                                  "shape": {"x": 1, "z": 2}, "extra": None})
    assert undeclared == ["items[].u", "per{}.q", "extra"]
    assert ("t.b", "z") in emitted and ("t.a", "x") not in emitted
