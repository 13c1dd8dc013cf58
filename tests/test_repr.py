"""Results shown in a notebook render as Markdown tables with the numbers of their as_dict()."""

from __future__ import annotations

from hypothesis import strategies as st

import theorycheck as tc
from theorycheck.markdown import cell, number, table


def test_markdown_helpers():
    assert table(("a", "b"), [(1, "x|y")]) == "| a | b |\n|---|---|\n| 1 | x\\|y |"
    assert number(None) == "—" and number(float("inf")) == "∞" and number(0.123456789, 3) == "0.123"
    assert number(True) == "true" and number(7) == "7" and cell("a\n  b") == "a b"


def test_trajectory_markdown_has_its_switches_and_end():
    tr = tc.solve(tc.Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.5))
    md, d = tr._repr_markdown_(), tr.as_dict()
    assert md.startswith("**sam-l2 flow**, L = 2, ρ = 1, 1 example, d = 3; rescaled time τ")
    path = " → ".join([str(d["initial_index"])] + [f"{w['to']} (τ = {w['time']:.6g})" for w in d["switches"]])
    assert f"| j† (0: β = 0) | {path} |" in md and f"| final index | {d['final_index']} |" in md
    assert "| stopped | t_max: " in md
    collapsed = tc.solve(tc.Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.1))
    assert f"| collapse | τ = {collapsed.collapse_time:.10g} |" in collapsed._repr_markdown_()


def test_thresholds_markdown_has_each_threshold_and_the_regime():
    r = tc.thresholds(tc.Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.5), place=True)
    md = r._repr_markdown_()
    for key in ("alpha_all_shrink", "alpha_gd_like", "alpha_collapse"):
        t = r[key]
        assert f"| {key} | {t['value_text'] or format(t['value'], '.12g')} |" in md
    assert "| regime | 2 |" in md and "| α | 0.5 |" in md
    linf = tc.thresholds(tc.Setting.from_z([1, 2, 3], optimizer="sam-linf", rho=1.0, alpha=[0.5, 2, 0.9])
                         )._repr_markdown_()
    assert "| α | (0.5, 2, 0.9) |" in linf and "| predicted_index | 2 |" in linf


def test_verdicts_render_as_the_verify_table_with_refined_rows():
    c = tc.Claim(key="md.small", statement="x < 5", inputs=st.integers(0, 100),
                 check=lambda x: tc.Outcome(x < 5, float(x)), tolerance="exact",
                 refined=tc.Claim(key="md.small.refined", statement="x ≤ 100", inputs=st.integers(0, 100),
                                  check=lambda x: tc.Outcome(x <= 100, 0.0), tolerance="exact"))
    v = tc.run_claim(c, examples=10)
    md = v._repr_markdown_()
    assert md.splitlines()[0] == "| claim | verdict | strength | tried | worst deviation | statement |"
    assert "| md.small | fails | a floating-point check (float64) |" in md and "counterexample: 5" in md
    assert (f"| ↳ md.small.refined | holds | holds on {v.refined.tried} inputs | {v.refined.tried} (0 pinned + "
            f"{v.refined.drawn} drawn) |") in md
    res = tc.verify("C4.switch-level", examples=2)
    md = res._repr_markdown_()
    assert md.startswith("**1 claim**, up to 2 drawn inputs each (profile fast, seed 0)") and "nothing fails" in md
    assert "| C4.switch-level | holds |" in md
