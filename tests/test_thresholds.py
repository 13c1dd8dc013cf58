"""Regime thresholds (C5): closed forms against their defining property, α_c against
independent integrations of the full system, and the CLI."""

import json

import numpy as np
import pytest

from theorycheck.claims import thresholds as th
from theorycheck.cli.main import main
from theorycheck.setting import Setting
from theorycheck.solve.integrate import solve
from theorycheck.symbolic.compile import balanced_field


def rates(z, alpha, rho):
    """Initial log-rates from the compiled balanced ℓ2 field (not from thresholds.py)."""
    f = balanced_field(2, "sam-l2", log=True)
    z = np.asarray(z, float)
    theta = np.full(z.shape, np.log(alpha))
    return f.field(z, theta, np.sqrt(f.summand(z, theta).sum()), rho)


@pytest.mark.parametrize("z, rho", [([1.0, 2.0, 3.0], 1.0), ([0.3, 0.7, 0.75, 4.0], 0.4), ([2.0, 5.0], 2.5)])
def test_closed_forms_have_their_defining_property(z, rho):
    a = th.alpha_all_shrink(z, rho).value
    assert np.all(rates(z, a * (1 - 1e-9), rho) < 0)
    assert np.any(rates(z, a * (1 + 1e-9), rho) > 0)
    g = th.alpha_gd_like(z, rho).value
    r = rates(z, g * (1 + 1e-9), rho)
    assert np.argmax(r) == np.argmax(z)
    r = rates(z, g * (1 - 1e-9), rho)
    assert np.argmax(r) != np.argmax(z)


def test_gd_like_at_a_top_tie_uses_the_next_distinct_value():
    t = th.alpha_gd_like([1.0, 2.0, 2.0], 1.0)
    assert t.value == pytest.approx(3 / (np.sqrt(2) * 3))
    assert "tie at the top" in t.note
    r = rates([1.0, 2.0, 2.0], t.value * (1 + 1e-9), 1.0)
    assert r[1] == r[2] and r[1] > r[0]
    assert th.alpha_gd_like([2.0, 2.0], 1.0).value == 0.0


def test_all_shrink_with_signs():
    assert th.alpha_all_shrink([1.0, 0.0, 2.0], 1.0).value is None
    t = th.alpha_all_shrink([-1.0, 2.0], 1.0)
    assert t.value == pytest.approx(2 / (np.sqrt(2) * np.sqrt(5))) and "negative" in t.note


def test_initial_index_tie_break_matches_integration():
    z = np.array([1.0, 2.0, 3.0])
    a = 3.0 / (np.sqrt(2) * np.linalg.norm(z))  # N0 = 3 = ρ(z_1 + z_2): rates of 1 and 2 tie
    assert th.initial_index(z, a, 1.0) == 2
    tr = solve(Setting.from_z(z, optimizer="sam-l2", rho=1.0, alpha=a), t_max=1e-3)
    assert int(np.argmax(tr.log_abs_beta[-1])) + 1 == 2


@pytest.fixture(scope="module")
def alpha_c():
    return th.collapse_threshold([1.0, 2.0, 3.0], 1.0)


def test_collapse_threshold_certificate(alpha_c):
    z, rho = [1.0, 2.0, 3.0], 1.0
    assert th.alpha_all_shrink(z, rho).value < alpha_c.value < th.alpha_gd_like(z, rho).value
    cert = alpha_c.certificate
    assert cert["collapses"]["collapses"] is True and cert["grows"]["collapses"] is False
    assert cert["collapses"]["alpha"] < alpha_c.value < cert["grows"]["alpha"]
    assert cert["significant_digits"] >= 10
    assert "30 digits" in cert["collapses"]["method"] and "30 digits" in cert["grows"]["method"]


def test_collapse_threshold_against_the_full_system(alpha_c):
    """Independent of the C4 reduction: the full d-dimensional flow (float64) on both sides."""
    for f, collapses in ((1 - 1e-6, True), (1 + 1e-6, False)):
        tr = solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=alpha_c.value * f),
                   t_max=60.0, method="scipy")
        assert tr.collapsed is collapses


@pytest.mark.slow
def test_collapse_threshold_against_the_full_system_at_30_digits(alpha_c):
    for f, collapses in ((1 - 1e-9, True), (1 + 1e-9, False)):
        tr = solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=alpha_c.value * f),
                   t_max=60.0, precision=30)
        assert tr.collapsed is collapses


@pytest.mark.slow
def test_collapse_threshold_scalings(alpha_c):
    # α_c(c z, ρ) = α_c(z, ρ) (time rescaling) and α_c(z, k ρ) = k α_c(z, ρ) (N ∝ α)
    assert th.collapse_threshold([2.0, 4.0, 6.0], 1.0).value == pytest.approx(alpha_c.value, rel=1e-10)
    assert th.collapse_threshold([1.0, 2.0, 3.0], 2.5).value == pytest.approx(2.5 * alpha_c.value, rel=1e-10)


def test_collapse_threshold_edge_cases():
    t = th.collapse_threshold([2.0, 2.0, 2.0], 1.0)
    assert t.closed_form and t.value == pytest.approx(th.alpha_all_shrink([2.0, 2.0, 2.0], 1.0).value)
    assert th.collapse_threshold([1.0, 2.0], 0.0).value == 0.0


@pytest.mark.slow
def test_cli_thresholds_json(capsys):
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--alpha", "0.6", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert res["alpha_all_shrink"]["closed_form"] is True and res["alpha_collapse"]["closed_form"] is False
    assert res["alpha_collapse"]["value"] == pytest.approx(0.436426305961, rel=1e-10)
    assert res["regime"] == 2 and res["final_index"] == 3 and res["switches"]
    assert res["initial_index"] == th.initial_index([1, 2, 3], 0.6, 1.0)


def test_cli_thresholds_linf_and_errors(capsys):
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--optimizer", "sam-linf", "--alpha", "2,0.5,3", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["predicted_index"] == 3 and res["final_index"] == 3
    rc = main(["thresholds", "--z", "1,2,3", "--rho", "1", "--depth", "3"])
    assert rc == 2 and "L = 2" in capsys.readouterr().err
    rc = main(["thresholds", "--z", "1,-2", "--rho", "1"])
    assert rc == 2 and "z > 0" in capsys.readouterr().err
