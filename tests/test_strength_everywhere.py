"""Every command's JSON answer says how strong it is: a top-level ``strength`` of the one Strength type
(docs/commands/README.md#strength), parsed back here. ``packs`` is a listing, not an answer, and has none.
The expensive commands (reproduce, linear-images, cnn) are held to this in their own slow tests."""

from __future__ import annotations

import json

import pytest

from theorycheck.cli.main import main
from theorycheck.strength import Kind, Strength


def run_json(capsys, argv, rc_ok=(0,)) -> dict:
    rc = main(argv)
    out = capsys.readouterr().out
    assert rc in rc_ok, out
    return json.loads(out)


#: command line → the kind its answer has on these inputs
CASES = {
    "setting": (["setting", "--z", "1,2,3", "--rho", "1", "--alpha", "0.5", "--json"], Kind.FLOAT_CHECK),
    "derive": (["derive", "--depth", "2", "--optimizer", "sam-l2", "--format", "json"], Kind.PROVED),
    "derive-regression": (["derive", "--depth", "2", "--optimizer", "n-sam", "--param", "pm", "--loss", "squared",
                           "--format", "json"], Kind.PROVED),
    "maxmargin": (["maxmargin", "--z", "1,2,3", "--norm", "1", "--json"], Kind.FLOAT_CHECK),
    "prove": (["prove", "--only", "C1", "--json"], Kind.PROVED),
    "thresholds": (["thresholds", "--z", "1,2,3", "--rho", "1", "--json"], Kind.FLOAT_CHECK),
    "trajectory": (["trajectory", "--z", "1,2,3", "--rho", "1", "--alpha", "0.5", "--json"], Kind.FLOAT_CHECK),
    "heatmap": (["heatmap", "--z", "1,2", "--rho", "1", "--alphas", "0.3:1:3", "--t-max", "5", "--nt", "3",
                 "--backend", "serial", "--no-progress", "--json"], Kind.FLOAT_CHECK),
    "predict": (["predict", "--pack", "minor-first", "--z", "1,2,3", "--alpha", "0.5", "--json"], Kind.FLOAT_CHECK),
    "verify": (["verify", "--claims", "C5.initial-index", "--examples", "2", "--json", "-"], Kind.HOLDS_ON_INPUTS),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_answer_has_a_strength(name, capsys):
    argv, kind = CASES[name]
    out = run_json(capsys, argv)
    s = Strength.from_dict(out["strength"])
    assert s.kind is kind, (name, out["strength"])
    assert s.as_dict() == out["strength"]  # one type: what is printed is what the type writes
    # validated numerics reserves "certified" for rigour: no answer uses it for a floating-point check
    assert "certified" not in json.dumps(out, ensure_ascii=False)


def test_a_heatmap_with_runs_cut_by_a_budget_is_not_decided():
    import numpy as np

    import theorycheck as tc
    from theorycheck.sweep.run import RunOptions

    res = tc.heatmap(tc.Setting.from_z([1.0, 2.0], optimizer="sam-l2", rho=1.0), alphas=np.array([0.3, 0.6, 1.0]),
                     times=np.array([1.0, 50.0]), opts=RunOptions(max_steps=2), backend="serial", progress=False)
    out = res.as_dict()
    assert any(s != "done" for s in out["status"])
    s = Strength.from_dict(out["strength"])
    assert s.kind is Kind.NOT_DECIDED and "budget" in s.because


def test_a_trajectory_cut_by_a_budget_is_not_decided(capsys):
    out = run_json(capsys, ["trajectory", "--z", "1,2,3", "--rho", "1", "--alpha", "0.5", "--max-steps", "3", "--json"])
    assert out["stopped_because"] == "max_steps"
    assert Strength.from_dict(out["strength"]).kind is Kind.NOT_DECIDED


def test_a_proved_bracket_says_proved(capsys):
    """The answer of ``thresholds --prove`` is as strong as its weakest part (the float values it also prints);
    the proof itself is proved."""
    out = run_json(capsys, ["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", "--json"])
    assert Strength.from_dict(out["alpha_collapse"]["proof"]["strength"]).kind is Kind.PROVED
    assert Strength.from_dict(out["strength"]).kind is Kind.FLOAT_CHECK


def test_check_certificate_says_proved(capsys, tmp_path):
    cert = tmp_path / "c.json"
    run_json(capsys, ["thresholds", "--z", "1,2,3", "--rho", "1", "--prove", "--digits", "6", "--certificate",
                      str(cert), "--json"])
    out = run_json(capsys, ["check-certificate", str(cert), "--json"])
    assert Strength.from_dict(out["strength"]).kind is Kind.PROVED


def test_packs_is_a_listing_without_a_strength(capsys):
    out = run_json(capsys, ["packs", "--json"])
    assert "strength" not in out and out["packs"]
