"""The public Python API (``import theorycheck as tc``): every function checks a value, and
every CLI command's ``--json`` equals the library result's ``as_dict()`` for the same
arguments (timing fields aside)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import theorycheck as tc
from theorycheck.cli.main import main
from theorycheck.jsonio import to_plain

ROOT = Path(__file__).resolve().parents[1]
TIMING = {"seconds"}


def cli_json(capsys, *argv, rc_ok=(0,)):
    rc = main(list(argv))
    out = capsys.readouterr().out
    assert rc in rc_ok, out
    return json.loads(out)


def plain(result) -> dict:
    """A result's as_dict() as the CLI would print it (through to_plain and JSON)."""
    return json.loads(json.dumps(to_plain(result.as_dict(), nonfinite="raise")))


def untimed(obj):
    if isinstance(obj, dict):
        return {k: untimed(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [untimed(v) for v in obj]
    return obj


# ---------------------------------------------------------------------------- the package itself
HEAVY = ("sympy", "scipy.optimize", "matplotlib", "torch", "hypothesis", "mpmath")


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.replace("'", '"'))


def test_import_theorycheck_loads_no_heavy_dependency():
    assert _loaded_after("import theorycheck") == []


def test_building_the_parser_loads_no_heavy_dependency_and_registers_every_command():
    assert _loaded_after("from theorycheck.cli.parser import build_parser; build_parser()") == []
    from theorycheck.cli.parser import COMMAND_MODULES, build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == [m.rsplit(".", 1)[1].replace("_", "-") for m in COMMAND_MODULES]  # check_certificate, linear_images: hyphenated


def test_public_names_resolve_lazily_and_unknown_names_raise():
    for name in tc.__all__:
        assert getattr(tc, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tc.nope  # noqa: B018
    assert tc.Setting is __import__("theorycheck.setting", fromlist=["Setting"]).Setting


def test_cnn_dataset_choices_are_the_data_modules():
    from theorycheck import vocabulary
    from theorycheck.cnn import data

    assert data.DATASETS is vocabulary.CNN_DATASETS


def test_vocabulary_names_and_checks():
    from theorycheck import optimizers
    from theorycheck import vocabulary as v
    from theorycheck.symbolic import model as sy

    # every registered optimizer (the CLI's choices); the symbolic layer's default rescaled product flows
    # are the three of the default sets whose ascent is one full-batch, scale-invariant step (ASAM's is too,
    # run where it is named)
    assert v.OPTIMIZERS == optimizers.names() == ("gd", "sam-l2", "sam-linf", "n-sam", "1-sam", "asam")
    assert sy.OPTIMIZERS == ("gd", "sam-l2", "sam-linf")
    assert v.LOSSES == sy.LOSSES == ("logistic", "exponential")
    assert v.check_depth(3.0) == 3 and v.check_rho("0.5") == 0.5
    for bad, fn in [(0, v.check_depth), (True, v.check_depth), (2.5, v.check_depth), (-1, v.check_rho),
                    (math.inf, v.check_rho), ("adam", v.check_optimizer), ("hinge", v.check_loss)]:
        with pytest.raises(tc.SettingError):
            fn(bad)


# ---------------------------------------------------------------------------- solve
def test_solve_minor_first_major_last_and_cli_equality(capsys):
    from theorycheck.proofs.minor_first.predict import thresholds as th

    s = tc.Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.5)
    tr = tc.solve(s)
    d = tr.as_dict()
    # α = 0.5 lies between the closed-form boundaries: sequential amplification 1 → 2 → 3
    assert th.alpha_all_shrink([1, 2, 3], 1.0).value < 0.5 < th.alpha_gd_like([1, 2, 3], 1.0).value
    assert d["initial_index"] == th.initial_index(np.array([1.0, 2, 3]), 0.5, 1.0) == 1
    assert [w["to"] for w in d["switches"]] == [2, 3] and d["final_index"] == 3
    assert d["t_max"] == 50.0 and d["time_kind"] == "rescaled"
    # the one-example limit direction is e_3 = the ℓ1 max-margin direction: angle ≈ 0
    assert d["angle_l1_deg"] < 1e-3
    cli = cli_json(capsys, "trajectory", "--z", "1,2,3", "--optimizer", "sam-l2", "--rho", "1", "--alpha", "0.5",
                   "--json")
    assert cli == plain(tr)


def test_solve_discrete_reports_eta_and_agrees_with_the_cli(capsys):
    s = tc.Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.5)
    tr = tc.solve(s, discrete=True, eta=0.1, steps=200)
    d = tr.as_dict()
    assert d["eta"] == 0.1 and d["method"] == "discrete" and d["t_max"] == pytest.approx(20.0)
    assert d["stopped_because"] == "steps" and d["initial_index"] == 1
    cli = cli_json(capsys, "trajectory", "--z", "1,2,3", "--optimizer", "sam-l2", "--rho", "1", "--alpha", "0.5",
                   "--discrete", "--eta", "0.1", "--steps", "200", "--json")
    assert cli == plain(tr)


@pytest.mark.parametrize("kw, fragment", [
    (dict(discrete=True, eta=0.1), "^discrete=True needs eta and steps$"),
    (dict(eta=0.1, steps=3), "apply to discrete=True only"),
    (dict(discrete=True, eta=0.1, steps=3, t_max=2.0), "drop t_max$"),
    (dict(t_max=-1.0), "t_max"),
    (dict(max_steps=0), "max_steps"),
])
def test_solve_refuses_bad_arguments_in_one_line(kw, fragment):
    s = tc.Setting.from_z([1, 2], optimizer="gd")
    with pytest.raises(tc.TheorycheckError, match=fragment):
        tc.solve(s, **kw)
    with pytest.raises(tc.TheorycheckError, match="Setting"):
        tc.solve([1, 2])


# ---------------------------------------------------------------------------- thresholds
def test_thresholds_linf_values_and_cli_equality(capsys):
    r = tc.thresholds(tc.Setting.from_z([1, 2, 3], rho=1.0, optimizer="sam-linf", alpha="0.5,2,0.9"))  # as typed
    # only α_2 > ρ grows, so the limit is e_2 (C3), and the trajectory stays at j† = 2
    assert r.grows == [False, True, False] and r.predicted_index == 2
    assert r["final_index"] == 2 and r["switches"] == []
    cli = cli_json(capsys, "thresholds", "--z", "1,2,3", "--rho", "1", "--alpha", "0.5,2,0.9", "--optimizer",
                   "sam-linf", "--json")
    assert cli == plain(r)
    assert tc.thresholds(tc.Setting.from_z("1,2,3", rho=1.0, optimizer="gd")).predicted_index == 3


@pytest.mark.slow
def test_thresholds_l2_alpha_c_and_cli_equality(capsys):
    r = tc.thresholds(tc.Setting.from_z([1, 2, 3], rho=1.0, alpha=0.5), place=True)
    lo, ac, hi = r.alpha_all_shrink["value"], r.alpha_collapse["value"], r.alpha_gd_like["value"]
    assert lo < ac < hi and r.regime == (1 if 0.5 < ac else 2)
    cli = cli_json(capsys, "thresholds", "--z", "1,2,3", "--rho", "1", "--alpha", "0.5", "--json")
    assert cli == plain(r)


def test_thresholds_errors():
    with pytest.raises(tc.TheorycheckError, match="Setting"):
        tc.thresholds([1, 2])
    with pytest.raises(tc.TheorycheckError, match="z > 0"):
        tc.thresholds(tc.Setting.from_z([1, -2]))
    with pytest.raises(AttributeError, match="has no value"):
        tc.thresholds(tc.Setting.from_z([1, 2], optimizer="gd")).alpha_collapse  # noqa: B018
    # ℓ∞-SAM is per coordinate: the setting's α is used whether placed or not
    a = tc.thresholds(tc.Setting.from_z([1, 2], optimizer="sam-linf", alpha=[0.5, 2.0]))
    assert a.grows == [False, True] and a.predicted_index == 2


# ---------------------------------------------------------------------------- heatmap
def test_heatmap_values_and_cli_equality(capsys):
    from theorycheck.proofs.minor_first.predict import alpha_c as AC
    from theorycheck.proofs.minor_first.predict import thresholds as th

    z = np.array([1.0, 2.0, 3.0])
    lo, hi = th.alpha_all_shrink(z, 1.0).value, th.alpha_gd_like(z, 1.0).value
    alphas = np.array([lo / 2, 0.5, 2 * hi])
    res = tc.heatmap(tc.Setting.from_z(z, optimizer="sam-l2", rho=1.0), alphas=alphas, times=np.linspace(1.0, 40.0, 40),
                     backend="serial")
    d = res.as_dict()
    assert d["thresholds"] == {"alpha_all_shrink": lo, "alpha_gd_like": hi,
                               "alpha_collapse": AC.collapse_threshold(z, 1.0, digits=8, max_seconds=30.0).value}
    assert d["visits"][0][-1] == 0 and d["collapse_time"][0] is not None  # below alpha_all_shrink: collapse
    assert d["visits"][1] == [1, 2, 3]                                    # between: minor first, major last
    assert d["visits"][2] == [3] and d["collapse_time"][2] is None          # above alpha_gd_like: GD-like
    assert d["out"] is None and d["saved"] is None
    cli = cli_json(capsys, "heatmap", "--z", "1,2,3", "--optimizer", "sam-l2", "--rho", "1", "--alphas",
                   f"{lo / 2!r}:{2 * hi!r}:3", "--t-max", "40", "--nt", "40", "--backend", "serial", "--json")
    api = plain(tc.heatmap(tc.Setting.from_z(z, optimizer="sam-l2", rho=1.0), alphas=np.linspace(lo / 2, 2 * hi, 3),
                           times=np.linspace(1.0, 40.0, 40), backend="serial"))
    assert cli == api


def test_heatmap_save_is_reported(tmp_path):
    res = tc.heatmap(tc.Setting.from_z([1.0, 2.0], optimizer="gd", rho=0.0), alphas=[0.5], times=[1.0, 2.0], backend="serial")
    res.save(tmp_path / "h")
    assert res.as_dict()["saved"] == [str(tmp_path / "h.npz"), str(tmp_path / "h.json")]
    again = tc.SweepResult.load(tmp_path / "h")
    assert again.as_dict()["saved"] is None and again.as_dict()["jdag"].tolist() == res["jdag"].tolist()


# ---------------------------------------------------------------------------- verify, claims
def _even_claim(key="user.even"):
    from hypothesis import strategies as st

    return tc.Claim(key=key, statement="every whole number in 0..100 is even", inputs=st.integers(0, 100),
                    check=lambda n: tc.Outcome(n % 2 == 0, deviation=n % 2), tolerance="exact", pinned=(0, 2),
                    describe=lambda n: {"n": n})


def test_register_claim_runs_with_verify_and_fails_with_the_shrunk_counterexample():
    tc.register_claim(_even_claim())
    try:
        res = tc.verify("user", examples=30)
        assert [v.key for v in res.verdicts] == ["user.even"]
        v = res["user.even"]
        assert v.status == "fails" and v.counterexample == {"n": 1}  # hypothesis shrinks to the least odd number
        assert res.failed == ["user.even"] and not res.ok
        d = res.as_dict()
        assert list(d) == ["profile", "examples", "seed", "seconds", "claims", "failed", "packs", "strength"] and d["examples"] == 30
        assert d["packs"] == ["user"] and d["claims"][0]["pack"] == "user"
        with pytest.raises(tc.TheorycheckError, match="already registered"):
            tc.register_claim(_even_claim())
        tc.register_claim(_even_claim(), replace=True)
        # the user's claim is not the pack's
        assert "user.even" not in {c.key for c in tc.packs.get("minor-first").claims()}
    finally:
        tc.unregister_claim("user.even")
    with pytest.raises(tc.TheorycheckError, match="no claim matches"):
        tc.verify("user")


def test_verify_holds_and_matches_the_cli(capsys):
    res = tc.verify(["C5.initial-index"], examples=2, seed=0)
    assert [v.status for v in res.verdicts] == ["holds"] and res.verdicts[0].tried >= 2
    cli = cli_json(capsys, "verify", "--claims", "C5.initial-index", "--examples", "2", "--json", "-")
    assert untimed(cli) == untimed(plain(res))


def test_verify_argument_errors():
    with pytest.raises(tc.TheorycheckError, match="profile"):
        tc.verify(profile="slowest")
    with pytest.raises(tc.TheorycheckError, match="examples"):
        tc.verify(examples=-1)
    with pytest.raises(tc.TheorycheckError, match="unknown pack"):
        tc.verify(pack="no-such-pack")


# ---------------------------------------------------------------------------- prove
def test_prove_refutes_c2_as_stated_and_matches_the_cli(capsys):
    res = tc.prove("c2")
    assert res.refuted == ["C2"] and res["C2"].status == "refuted"
    cli = cli_json(capsys, "prove", "--only", "C2", "--json", rc_ok=(1,))
    assert untimed(cli) == untimed(plain(res))
    assert tc.prove(["R"]).ok
    with pytest.raises(tc.TheorycheckError, match="unknown theorem"):
        tc.prove("C9")


# ---------------------------------------------------------------------------- max margin, setting, derive
def test_max_margin_closed_forms_and_cli_equality(capsys):
    z = np.array([1.0, 2.0, 3.0])
    r2 = tc.max_margin(z, 2)  # one example: β = z/‖z‖², γ = ‖z‖
    np.testing.assert_allclose(r2.beta, z / 14.0, rtol=1e-7)
    assert r2.margin == pytest.approx(math.sqrt(14.0), rel=1e-7) and r2.support == [1]
    r1 = tc.max_margin(tc.Setting.from_z(z), 1)  # ℓ1: all weight on the largest entry
    np.testing.assert_allclose(r1.beta, [0.0, 0.0, 1.0 / 3.0], atol=1e-12)
    assert r1.margin == pytest.approx(3.0)
    for p, r in ((1, r1), (2, r2)):
        assert cli_json(capsys, "maxmargin", "--z", "1,2,3", "--norm", str(p), "--json") == plain(r)
    with pytest.raises(tc.TheorycheckError, match="norm"):
        tc.max_margin(z, 3)
    with pytest.raises(tc.NotSeparableError):
        tc.max_margin([[1.0, 0.0], [-1.0, 0.0]], 2)


def test_describe_and_cli_equality(capsys):
    s = tc.Setting.from_z([1, 2, 3], depth=3, alpha=0.5)
    info = tc.describe(s)
    assert info.n == 1 and info.d == 3 and info.init_kind == "scalar" and info.balanced
    np.testing.assert_array_equal(info.layers0, np.full((3, 3), 0.5))
    assert info.separator_min_margin >= 1 - 1e-9
    # the library's defaults are the CLI's (sam-l2, ρ = 1)
    cli = cli_json(capsys, "setting", "--z", "1,2,3", "--depth", "3", "--alpha", "0.5", "--json")
    assert cli == plain(info)


def test_derive_values_and_cli_equality(capsys):
    import sympy as sp

    d = tc.derive(2, "gd", dim=1)
    # GD, L = 2, d = 1, rescaled time: dw1/dτ = z w2, dw2/dτ = z w1
    got = {k: sp.simplify(v) for k, v in d.system.items()}
    names = {str(s): s for e in got.values() for s in e.free_symbols}
    assert set(names) == {"w1_1", "w2_1", "z1"}
    assert sp.simplify(got["dw1_1/dtau"] - names["z1"] * names["w2_1"]) == 0
    assert sp.simplify(got["dw2_1/dtau"] - names["z1"] * names["w1_1"]) == 0
    for argv, r in ((["--depth", "3", "--optimizer", "sam-linf", "--dim", "2"], tc.derive(3, "sam-linf", dim=2)),
                    (["--optimizer", "gd", "--dim", "1"], d)):
        assert cli_json(capsys, "derive", *argv, "--format", "json") == plain(r)
    with pytest.raises(tc.TheorycheckError):
        tc.derive(0)
    with pytest.raises(tc.SettingError, match="unknown optimizer"):
        tc.derive(2, "adam")


# ---------------------------------------------------------------------------- reproduce
@pytest.mark.slow
def test_reproduce_matches_the_cli(capsys, tmp_path):
    res = tc.reproduce("discrete-vs-flow", tmp_path / "api", quick=True, backend="serial")
    assert [e["name"] for e in res.experiments] == ["discrete-vs-flow"] and res.reports[0].figures
    cli = cli_json(capsys, "reproduce", "discrete-vs-flow", "--quick", "--backend", "serial", "--out",
                   str(tmp_path / "cli"), "--json")
    norm = lambda d, p: json.loads(json.dumps(untimed(d)).replace(str(tmp_path / p), "OUT"))  # noqa: E731
    assert norm(cli, "cli") == norm(plain(res), "api")
    from theorycheck.strength import Kind, Strength

    assert Strength.from_dict(cli["strength"]).kind is Kind.FLOAT_CHECK


def test_names_live_in_their_stage():
    """Each name has one home: the sweep package re-exports its modules, the old aliases that
    resolved names of later stages lazily (sweep.run.parse_range from the CLI, claims.claim.run_claim
    from the runner) are gone."""
    import theorycheck.claims.claim as claim
    import theorycheck.sweep.run as old
    from theorycheck import sweep
    from theorycheck.sweep import recipes, result

    assert sweep.heatmap is recipes.heatmap and sweep.SweepResult is result.SweepResult
    for name in ("heatmap", "parse_range", "SweepResult"):
        assert not hasattr(old, name)
    for name in ("run_claim", "register", "REGISTRY"):
        assert not hasattr(claim, name)


def test_no_import_cycle_between_the_dispatcher_and_the_commands():
    """cli.main / cli.parser import no command module at import time (build_parser does), and
    every command module imports on its own."""
    code = ("import sys, importlib\nimport theorycheck.cli.main\n"
            "print(sorted(m for m in sys.modules if m.startswith('theorycheck.cli.commands.')))\n"
            "from theorycheck.cli.parser import COMMAND_MODULES\n"
            "for m in COMMAND_MODULES: importlib.import_module(m)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
