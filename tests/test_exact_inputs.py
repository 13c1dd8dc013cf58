"""Proved answers are about the numbers typed (0.29 is 29/100, not float64(0.29)), say how strong they are, and
echo their exact inputs; the thresholds path takes a Setting whole; the proved stage has one module for
decimal output and one for the bracket.

The reference values are independent of the code under test: α_c is exactly proportional to ρ and invariant
under z → c z, so α_c((0.52, 0.91, 1.77), 0.29) = 0.29·α_c((52, 91, 177), 1) and α_c((1, 2, 3), 0.1) =
0.1·α_c((1, 2, 3), 1), where the integer problems are exact in binary (what the code did before was right
for them). The 30-digit references were computed elsewhere from exact decimals.
"""

from __future__ import annotations

import ast
import json
from fractions import Fraction
from pathlib import Path

import pytest
from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c
from theorycheck.proofs.minor_first.proved.reduced_l2 import ReducedL2

from theorycheck.cli.main import main
from theorycheck.setting import Setting, exact_inputs

ROOT = Path(__file__).resolve().parents[1]
#: 0.29·α_c((52, 91, 177), 1) and 0.1·α_c((1, 2, 3), 1), from exact decimals, rounded to their last digit
REF_DECIMALS_TEXT = "0.126983007744102345961849200552"
REF_TENTH_TEXT = "0.043642630596106052975845542472568844"
#: the bracket the float64 inputs gave for --z 0.52,0.91,1.77 --rho 0.29 --digits 30 (it excludes the reference)
OLD_BRACKET = (Fraction("0.12698300774410233701524560737"), Fraction("0.12698300774410233701524560763"))


def _meets_rounded(lo: Fraction, hi: Fraction, ref_text: str) -> bool:
    """[lo, hi] meets the numbers that round to ``ref_text`` (± half a unit of its last digit)."""
    half = Fraction(1, 2 * 10 ** len(ref_text.split(".")[1]))
    ref = Fraction(ref_text)
    return lo <= ref + half and ref - half <= hi


def _bracket(r) -> tuple[Fraction, Fraction]:
    assert r.status == "proved", r.note
    return Fraction(r.lower), Fraction(r.upper)


def _scaled_integer_bracket(z_int, rho: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    lo, hi = _bracket(prove_alpha_c(z_int, 1, digits=digits))  # exact in binary: the old code's case too
    return rho * lo, rho * hi


@pytest.mark.parametrize("z, z_int, rho", [("0.52,0.91,1.77", [52, 91, 177], "0.29"), ("1,2,3", [1, 2, 3], "0.1")])
def test_a_17_digit_bracket_of_decimal_inputs_meets_the_exact_scaling(z, z_int, rho):
    # 17 digits: a bracket of relative width ~1e-19, narrower than float64's rounding of the inputs (~1e-17)
    s = Setting.from_z(z, rho=rho)
    inp = exact_inputs(s, alpha=False)
    r = prove_alpha_c(inp.z, inp.rho, digits=17)
    lo, hi = _bracket(r)
    ref_lo, ref_hi = _scaled_integer_bracket(z_int, inp.rho.value, 17)
    assert lo <= ref_hi and ref_lo <= hi  # both contain the exact α_c, so they meet
    assert _meets_rounded(lo, hi, REF_DECIMALS_TEXT if z.startswith("0.52") else REF_TENTH_TEXT)
    assert r.inputs.as_dict() == {"z": z.split(","), "rho": rho, "depth": 2, "from_float": False, "float_inputs": []}


def test_the_float_bracket_of_the_old_code_misses_the_decimal_alpha_c():
    # what the test above guards against: the float64 inputs' bracket lies beside the exact-decimal α_c
    assert not _meets_rounded(*OLD_BRACKET, REF_DECIMALS_TEXT)


def test_balls_contain_the_typed_decimals_and_not_their_floats():
    from flint import fmpq

    from theorycheck.arith.balls import arb_context

    pr = ReducedL2("0.52,0.91,1.77", "0.29", 20)
    with arb_context(prec=pr.prec):
        assert pr.rho.contains(fmpq(29, 100)) and not pr.rho.contains(fmpq(*Fraction(0.29).as_integer_ratio()))
        assert pr.z[0].contains(fmpq(13, 25)) and not pr.z[0].contains(fmpq(*Fraction(0.52).as_integer_ratio()))
    # α is read exactly too: "0.1" is 1/10 (Arb's own string parser would give a ball at the working precision)
    f = pr.run("0.1")
    assert f.fate == "collapse" and f.alpha == "0.1"


def test_a_float_input_is_its_binary_value_and_the_answer_says_so():
    r = prove_alpha_c([0.52, 0.91, 1.77], 0.29, digits=8)
    d = r.as_dict()["inputs"]
    assert d["from_float"] and d["float_inputs"] == ["z", "rho"]
    assert d["rho"] == "0.289999999999999980015985556747182272374629974365234375"


@pytest.mark.slow
def test_30_digit_brackets_contain_the_exact_decimal_alpha_c(capsys):
    brackets = []
    for argv, z_int, rho, ref in (
            (["--z", "0.52,0.91,1.77", "--rho", "0.29"], [52, 91, 177], Fraction("0.29"), REF_DECIMALS_TEXT),
            (["--z", "1,2,3", "--rho", "0.1"], [1, 2, 3], Fraction("0.1"), REF_TENTH_TEXT)):
        assert main(["thresholds", *argv, "--prove", "--digits", "30", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        pf = doc["alpha_collapse"]["proof"]
        assert pf["status"] == "proved" and pf["digits"] >= 30 and pf["strength"]["kind"] == "proved"
        lo, hi = Fraction(pf["lower"]), Fraction(pf["upper"])
        assert _meets_rounded(lo, hi, ref) and hi - lo < Fraction(1, 10**31)
        ref_lo, ref_hi = _scaled_integer_bracket(z_int, rho, 30)
        assert lo <= ref_hi and ref_lo <= hi
        assert pf["inputs"]["z"] == argv[1].split(",") and pf["inputs"]["rho"] == argv[3]
        assert not pf["inputs"]["from_float"]
        brackets.append((lo, hi))
    lo, hi = brackets[0]
    assert not (OLD_BRACKET[1] >= lo and hi >= OLD_BRACKET[0])  # disjoint from the float64 inputs' bracket


def test_closed_forms_beyond_15_digits_are_proved_at_the_exact_inputs(capsys):
    from theorycheck.proofs.minor_first.predict.thresholds import closed_form_enclosure

    enc = closed_form_enclosure("alpha_all_shrink", "0.52,0.91,1.77", "0.29", 30)
    # ρ z_min/(√2‖z‖) = 0.29·0.52/√(2·(0.52² + 0.91² + 1.77²)): its square is rational, compared exactly
    lo, hi = (Fraction(x) for x in enc["enclosure"])
    sq = Fraction(29, 100) ** 2 * Fraction(52, 100) ** 2 / (2 * (Fraction(52, 100) ** 2 + Fraction(91, 100) ** 2
                                                                 + Fraction(177, 100) ** 2))
    assert lo * lo < sq < hi * hi and enc["digits"] == 30 and enc["strength"].proved
    assert main(["thresholds", "--z", "0.52,0.91,1.77", "--rho", "0.29", "--digits", "20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for key in ("alpha_all_shrink", "alpha_gd_like"):
        assert doc[key]["strength"]["kind"] == "proved" and len(doc[key]["enclosure"]) == 2
    assert doc["alpha_collapse"]["strength"]["kind"] == "floating-point check"


def test_the_float_alpha_c_is_computed_for_the_exact_decimals():
    from theorycheck.proofs.minor_first.predict.alpha_c import collapse_threshold, exact_scale_floats

    zs, exact_floats = exact_scale_floats(["0.52", "0.91", "1.77"])
    assert exact_floats and list(zs) == [52.0, 91.0, 177.0]
    zs, exact_floats = exact_scale_floats([Fraction(1, 3), Fraction(2, 3)])
    assert exact_floats and list(zs) == [1.0, 2.0]
    assert not exact_scale_floats(["0.1234567890123456789", "1"])[1]
    t = collapse_threshold(["0.52", "0.91", "1.77"], Fraction(29, 100), digits=20)
    lo, hi = (Fraction(x) for x in t.check["bracket"])
    assert _meets_rounded(lo, hi, REF_DECIMALS_TEXT) and t.strength.kind == "floating-point check"


# ---------------------------------------------------------------- strength
def test_every_answer_of_thresholds_says_how_strong_it_is(capsys):
    assert main(["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", "--digits", "6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for key in ("alpha_all_shrink", "alpha_gd_like", "alpha_collapse"):
        assert doc[key]["strength"]["kind"] == "floating-point check"
        assert "certificate" not in doc[key] and "certified" not in json.dumps(doc[key]["check"] or {})
    pf = doc["alpha_collapse"]["proof"]
    assert pf["strength"]["kind"] == "proved" and doc["strength"]["kind"] == "floating-point check"
    assert [r["name"] for r in pf["rests_on"]] == ["C4", "P1", "P2", "P3"]
    assert all(r["strength"]["kind"] == "proved" and r["statement"] for r in pf["rests_on"])
    assert doc["inputs"] == {"z": ["1", "2", "3"], "rho": "1", "depth": 2, "from_float": False, "float_inputs": []}
    assert main(["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", "--digits", "6"]) == 0
    text = capsys.readouterr().out
    assert "strength: proved" in text and "P3 (proved)" in text and "about the inputs (exact): z = (1, 2, 3)" in text
    assert "certified" not in text


def test_a_bracket_resting_on_a_lemma_not_proved_for_its_depth_is_not_called_proved(monkeypatch):
    from theorycheck.proofs.minor_first import lemmas

    from theorycheck.strength import not_decided, proved

    def weak(name, *, depth, dim):
        return not_decided(f"{name} not checked at L = {depth}, d = {dim}") if name == "P3" else proved()

    monkeypatch.setattr(lemmas, "strength", weak)
    r = prove_alpha_c([1, 2, 3], 1, digits=5)
    d = r.as_dict()
    assert r.status == "not proved" and r.lower is not None  # the enclosures hold; the bracket is not proved
    assert d["strength"]["kind"] == "not decided" and "P3" in d["strength"]["because"]
    assert {x["name"]: x["strength"]["kind"] for x in d["rests_on"]}["P3"] == "not decided"


def test_strength_of_lemmas_decides_the_strength_of_the_answer():
    from theorycheck.proved.lemmas import resting_strength
    from theorycheck.strength import Kind, float_check, not_decided, proved

    assert resting_strength([("C4", proved()), ("P1", proved())]).proved
    s = resting_strength([("P3", proved()), ("P5", float_check(30))])
    assert s.kind is Kind.FLOAT_CHECK and s.digits == 30 and "P5" in s.because and dict(s.rests_on)["P3"].proved
    assert resting_strength([("P5", float_check(30)), ("P6", not_decided("L = 6"))]).kind is Kind.NOT_DECIDED


def test_box_proofs_carry_a_strength():
    from theorycheck.proved.boxes import PROVED, Box, Decision, prove_on_box

    def positive(b, box):
        return Decision(PROVED) if b["x"] > 0 else Decision("undecided")

    from theorycheck.proofs.minor_first.lemmas import BOOK

    box = Box.of({"x": ("0.1", "0.3")}, {"L": 2, "d": 3})
    r = prove_on_box(positive, box, rests_on=("C4",), book=BOOK)
    assert r.status == PROVED and r.as_dict()["strength"]["kind"] == "proved"
    bare = prove_on_box(positive, box, rests_on=("C4",))  # no book: the lemma's strength is unknown
    assert bare.status == PROVED and bare.as_dict()["strength"]["kind"] == "not decided"
    lo, hi = r.box.bounds[0][1:]
    assert Fraction(lo) <= Fraction(1, 10) and Fraction(3, 10) <= Fraction(hi)  # outward: contains [0.1, 0.3]


# ---------------------------------------------------------------- one shape for trajectory, with or without --prove
def test_trajectory_prove_json_has_the_trajectory_keys_and_the_proof(capsys):
    argv = ["trajectory", "--z", "1,2,3", "--rho", "1", "--alpha", "0.5", "--json"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(argv + ["--prove"]) == 0
    proved_doc = json.loads(capsys.readouterr().out)
    assert set(plain) <= set(proved_doc) and set(proved_doc) - set(plain) == {"proof", "inputs"}
    assert plain["strength"]["kind"] == "floating-point check"  # the same key: the proof replaces its value
    assert proved_doc["switches"][0].keys() == plain["switches"][0].keys()
    pf = proved_doc["proof"]
    assert pf["proved"] and proved_doc["final_index_status"] == "proved" and proved_doc["strength"]["kind"] == "proved"
    assert pf["inputs"]["alpha"] == "0.5" and [r["name"] for r in pf["rests_on"]] == ["C4", "P1", "LOCK"]
    for w, f in zip(pf["switches"], plain["switches"]):
        assert Fraction(w["time"][0]) <= Fraction(f["time"]) <= Fraction(w["time"][1])


def test_trajectory_prove_reads_alpha_exactly():
    from theorycheck.api import prove_trajectory

    r = prove_trajectory(Setting.from_z("1,2,3", rho="1", alpha="0.1"), max_seconds=30).as_dict()
    assert r["inputs"]["alpha"] == "0.1" and not r["inputs"]["from_float"] and r["proof"]["fate"] == "collapse"


# ---------------------------------------------------------------- a Setting travels whole
def _source(rel: str) -> ast.Module:
    return ast.parse((ROOT / rel).read_text(encoding="utf-8"))


def _imports(tree: ast.Module) -> list[str]:
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module:
            out += [n.module] + [f"{n.module}.{a.name}" for a in n.names]
        elif isinstance(n, ast.Import):
            out += [a.name for a in n.names]
    return out


def test_regimes_neither_parses_nor_rebuilds_settings_nor_proves():
    tree = _source("proofs/minor_first/predict/regimes.py")
    assert not any(m.startswith("theorycheck.proved") for m in _imports(tree))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "parse_floats" not in names | attrs and "exact_range" not in names | attrs
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert not any(isinstance(f, ast.Name) and f.id == "Setting" for f in calls)
    assert not any(isinstance(f, ast.Attribute) and f.attr in ("from_z", "from_csv", "replace") for f in calls)


def test_the_cli_reads_the_numbers_once_and_exactly(monkeypatch, capsys):
    import theorycheck.setting as setting_module

    def refuse(*a, **k):
        raise AssertionError("parse_floats called: a number typed is read as a float")

    monkeypatch.setattr(setting_module, "parse_floats", refuse)
    assert main(["thresholds", "--z", "1,2,3", "--rho", "0.1", "--alpha", "0.05", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["inputs"]["rho"] == "0.1" and doc["inputs"]["alpha"] == "0.05" and doc["rho"] == 0.1
    assert main(["thresholds", "--z", "1,2,3", "--rho", "1/3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"]["rho"] == "1/3"
    assert main(["trajectory", "--z", "1,2,3", "--rho", "0.1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rho"] == 0.1


def test_a_range_of_alpha_is_read_exactly_at_the_edge(capsys, monkeypatch):
    import theorycheck.proofs.minor_first.proved.regime_map as rm

    seen = {}
    real = rm.proved_regime_map

    def spy(z, rho, alpha, **kw):
        seen["alpha"] = alpha
        return real(z, rho, alpha, **kw)

    monkeypatch.setattr(rm, "proved_regime_map", spy)
    assert main(["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", "--alpha", "0.1:0.11", "--max-seconds",
                 "20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert seen["alpha"] == (Fraction(1, 10), Fraction(11, 100)) and doc["alpha_range"] == ["0.1", "0.11"]
    assert main(["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", "--alpha", "0.2:0.1"]) == 2
    assert "0 < A < B" in capsys.readouterr().err


def test_api_thresholds_takes_the_setting_whole():
    import inspect

    from theorycheck.proofs.minor_first.predict import regimes

    assert list(inspect.signature(regimes.float_thresholds).parameters)[0] == "setting"
    tree = _source("theorycheck/api/__init__.py")
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "thresholds")
    call = next(n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "float_thresholds")
    assert isinstance(call.args[0], ast.Name) and call.args[0].id == "setting"


# ---------------------------------------------------------------- the proved stage's organisation
MINE = ["theorycheck/arith/exact.py", "theorycheck/setting/__init__.py", "theorycheck/setting/tables.py",
        "theorycheck/setting/geometry.py", "theorycheck/api/__init__.py", "proofs/minor_first/predict/regimes.py",
        "proofs/minor_first/predict/thresholds.py", "proofs/minor_first/predict/collapse.py", "proofs/minor_first/predict/dataset.py",
        "proofs/minor_first/proved/alpha_c.py", "theorycheck/arith/decimals.py", "theorycheck/proved/bracket.py",
        "proofs/minor_first/proved/trajectory.py", "theorycheck/proved/boxes.py", "theorycheck/cli/commands/thresholds.py",
        "theorycheck/cli/commands/trajectory.py", "theorycheck/cli/arguments.py"]


@pytest.mark.parametrize("rel", MINE)
def test_no_private_name_crosses_a_module_and_functions_are_short(rel):
    tree = _source(rel)
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("theorycheck"):
            assert not [a.name for a in n.names if a.name.startswith("_")], (rel, n.lineno)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.attr.startswith("_") \
                and not n.attr.startswith("__") and n.value.id in ("rm", "th", "col", "C", "dl", "cf", "S"):
            raise AssertionError(f"{rel}:{n.lineno}: {n.value.id}.{n.attr}")
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert n.end_lineno - n.lineno + 1 <= 80, (rel, n.name)


def test_one_module_rounds_decimals_outwards_and_counts_common_digits():
    defs = {}
    for path in (ROOT / "theorycheck").rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.FunctionDef) and n.name in ("common_digits", "_certified_digits", "_decimal",
                                                             "_rounded", "outward"):
                defs.setdefault(n.name, []).append(path.relative_to(ROOT).as_posix())
    assert all(v == ["theorycheck/arith/decimals.py"] for v in defs.values()), defs
    assert "sqrt(2)" not in (ROOT / "proofs/minor_first/proved/alpha_c.py").read_text(encoding="utf-8")  # from symbolic/


def test_decimals_round_outwards_in_exact_arithmetic():
    import mpmath as mp
    from flint import arb

    from theorycheck.arith.decimals import common_digits, lo_hi, outward

    third = Fraction(1, 3)
    assert outward(third, 5, "down") == "0.33333" and outward(third, 5, "up") == "0.33334"
    assert outward(Fraction(-1, 3), 3, "down") == "-0.334" and outward(Fraction(1, 8), 2, "up") == "0.13"
    assert outward(Fraction(1, 8), 2, "down") == "0.12" and outward("1e-400", 3, "up") == "1e-400"
    lo, hi = lo_hi(arb(1) / 3)
    assert Fraction(lo) < third < Fraction(hi)
    assert common_digits("0.12345", "0.12349", 10) == (4, "0.1235")
    assert common_digits("0.99996", "0.99999", 10) == (4, "1.000")
    assert common_digits(mp.mpf(1) / 3, mp.mpf(1) / 3, 8) == (8, "0.33333333")
    assert common_digits("0.1", "-0.1", 5) == (0, None)


# ---------------------------------------------------------------- edges: extreme scales, inputs float64 cannot hold
def test_extreme_scales_are_proved_on_the_exactly_rescaled_problem():
    lo1, hi1 = _bracket(prove_alpha_c([1, 2, 3], 1, digits=8))
    tiny = prove_alpha_c(["1e-300", "2e-300", "3e-300"], 1, digits=8)  # α_c(c z) = α_c(z)
    lo, hi = _bracket(tiny)
    assert lo <= hi1 and lo1 <= hi
    assert Fraction(tiny.collapses.tau[0]) > 10**299  # times in the problem's own clock (τ scales like 1/z)
    rho = Fraction(1, 10**300)
    lo, hi = _bracket(prove_alpha_c([1, 2, 3], "1e-300", digits=8))  # α_c(z, ρ) = ρ α_c(z, 1)
    assert lo <= rho * hi1 and rho * lo1 <= hi
    lo, hi = _bracket(prove_alpha_c(["1e300", "2e300", "3e300"], "1e-300", digits=8))
    assert lo <= rho * hi1 and rho * lo1 <= hi


def test_no_certificate_of_a_rescaled_proof(tmp_path, capsys):
    assert main(["thresholds", "--z", "1e-300,2e-300", "--rho", "1", "--prove", "--certificate",
                 str(tmp_path / "c.json")]) == 2
    assert "2^±64" in capsys.readouterr().err and not (tmp_path / "c.json").exists()


@pytest.mark.slow
def test_a_z_that_float64_rounds_is_proved_for_the_decimal_typed():
    # no multiple of z fits in 53 bits: the floating start is corrected to first order, the proof is exact
    exact_r = prove_alpha_c(["0.1234567890123456789", "1"], 1, digits=30)
    rounded_r = prove_alpha_c([0.1234567890123456789, 1.0], 1, digits=30)
    lo, hi = _bracket(exact_r)
    lo_f, hi_f = _bracket(rounded_r)
    assert hi < lo_f or hi_f < lo  # the typed number and its float have different α_c at 30 digits
    assert rounded_r.inputs.from_float and not exact_r.inputs.from_float


def test_proof_requests_are_checked_before_any_work(capsys):
    for argv, word in ((["--digits", "100"], "--digits 100: give 1 to 60"), (["--depth", "3"], "no collapse threshold"),
                       (["--optimizer", "gd"], "ℓ2-SAM only")):
        assert main(["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", *argv]) == 2
        assert word in capsys.readouterr().err
