"""A theory's reduction of the flow is the pack's, handed to the engine (theorycheck.solvers.reduction): the engine
builds none itself, uses the first that applies, and says where one comes from when it is asked for and has none."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from theorycheck.proofs.minor_first.reduced import REDUCTION, REDUCTIONS

from theorycheck import packs
from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting
from theorycheck.solvers.integrate import solve
from theorycheck.solvers.reduction import Reduction
from theorycheck.sweep import SystemSpec
from theorycheck.sweep.recipes import heatmap

Z = np.array([1.0, 2.0, 3.0])


def test_the_installed_packs_offer_the_first_papers_reduction():
    assert REDUCTION in packs.reductions() and isinstance(REDUCTION, Reduction)
    assert packs.get("minor-first").reduction_list() == REDUCTIONS
    assert packs.get("kernel-rich").reduction_list() == ()


def test_a_pack_whose_reductions_do_not_load_says_so():
    bad = packs.Pack("x", "t", "r", reductions="theorycheck.proofs.minor_first.reduced:NOT_THERE")
    with pytest.raises(TheorycheckError, match="reductions .* failed to load"):
        bad.reduction_list()


def test_a_sweep_reduces_only_with_a_reduction_at_hand():
    kw = dict(optimizer="sam-l2", rho=1.0, alphas=[0.3, 0.8], times=[1.0, 2.0], backend="serial", progress=False)
    assert heatmap(Z, reductions=REDUCTIONS, **kw).meta["system"] == "reduced"
    plain = heatmap(Z, **kw)
    assert plain.meta["system"] == "balanced"  # the engine alone integrates the balanced flow
    with pytest.raises(TheorycheckError, match="needs a theory's reduction"):
        heatmap(Z, method="reduced", **kw)
    with pytest.raises(TheorycheckError, match="needs ℓ2-SAM, L = 2"):
        heatmap(Z, method="reduced", reductions=REDUCTIONS, **{**kw, "optimizer": "gd", "rho": 0.0})
    # where it does not apply, "auto" runs the balanced flow with the reduction at hand too
    assert heatmap(Z, reductions=REDUCTIONS, **{**kw, "optimizer": "sam-linf"}).meta["system"] == "balanced"


def test_the_reduced_and_the_balanced_sweep_agree():
    kw = dict(optimizer="sam-l2", rho=1.0, alphas=np.geomspace(0.05, 1.5, 9), times=[0.5, 2.0, 8.0], backend="serial",
              progress=False)
    a, b = heatmap(Z, reductions=REDUCTIONS, **kw), heatmap(Z, **kw)
    assert np.array_equal(a["jdag"], b["jdag"])


def test_solve_reduced_needs_a_reduction_and_matches_the_full_flow():
    s = Setting.from_z(Z, optimizer="sam-l2", rho=1.0, alpha=0.5)
    with pytest.raises(TheorycheckError, match="needs a theory's reduction"):
        solve(s, t_max=5.0, method="reduced")
    red, full = solve(s, t_max=5.0, method="reduced", reductions=REDUCTIONS), solve(s, t_max=5.0, method="scipy")
    assert red.method == "reduced" and red.system != full.system
    assert np.allclose(red.log_abs_beta[-1], full.at(red.t_end)[0], rtol=1e-8, atol=1e-8)
    with pytest.raises(TheorycheckError, match="needs ℓ2-SAM, L = 2"):
        solve(Setting.from_z(Z, optimizer="gd", alpha=0.5), t_max=1.0, method="reduced", reductions=REDUCTIONS)


def test_a_spec_carries_its_reduction_to_another_process_as_the_same_object():
    spec = SystemSpec("reduced", Z, np.array([0.5]), np.array([1.0]), 2, "sam-l2", reduction=REDUCTION)
    back = pickle.loads(pickle.dumps(spec))
    assert back.reduction is REDUCTION and back.take(slice(0, 1)).reduction is REDUCTION
    with pytest.raises(TheorycheckError, match="needs the theory's reduction"):
        SystemSpec("reduced", Z, np.array([0.5]), np.array([1.0])).build(None)
