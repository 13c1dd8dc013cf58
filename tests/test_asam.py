"""ASAM (adaptive SAM, Kwon et al. 2021): one module and its registration, its step against the paper's
formula typed here by hand, its derived flow, where it runs and where it is refused, and how it differs
from ℓ2-SAM at small initialisation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from theorycheck import api, optimizers
from theorycheck.errors import SettingError
from theorycheck.optimizers.asam import ASAM, Asam
from theorycheck.setting import Setting
from theorycheck.solvers.discrete import sam_step
from theorycheck.solvers.integrate import solve
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy

RNG = np.random.default_rng(11)


def kwon_epsilon(g: np.ndarray, w: np.ndarray, rho: float, eta: float) -> np.ndarray:
    """Kwon et al. (2021), element-wise: ε = ρ T² g / ‖T g‖₂ with T = diag(|w| + η), typed from the paper."""
    T = np.abs(w) + eta
    return rho * T**2 * g / np.linalg.norm(T * g)


@pytest.mark.parametrize("eta", [0.0, 0.01, 0.5])
def test_the_compiled_step_is_the_papers_formula(eta):
    opt = ASAM if eta == 0 else Asam(eta=eta, name=f"asam-{eta}")
    for _ in range(5):
        g, w = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
        T = C.norm_weight(opt)
        S = float(np.linalg.norm(T(w) * g))
        got = C.perturbation(opt)(g, S, 0.37, w)
        np.testing.assert_allclose(got, kwon_epsilon(g, w, 0.37, eta), rtol=1e-14, atol=0)


def test_the_torch_step_is_the_papers_formula():
    torch = pytest.importorskip("torch")
    from theorycheck.cnn.sam import SAM

    w0 = [RNG.normal(size=3), RNG.normal(size=(2, 2))]  # two tensors: the norm is joint over both
    params = [torch.nn.Parameter(torch.tensor(a, dtype=torch.float64)) for a in w0]
    grads = [RNG.normal(size=a.shape) for a in w0]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g, dtype=torch.float64)
    sam = SAM(params, torch.optim.SGD, rho=0.3, optimizer=ASAM.name, lr=0.1)
    sam.first_step()
    flat = kwon_epsilon(np.concatenate([g.ravel() for g in grads]), np.concatenate([a.ravel() for a in w0]), 0.3, 0.0)
    moved = np.concatenate([(p.detach().numpy() - a).ravel() for p, a in zip(params, w0)])
    np.testing.assert_allclose(moved, flat, rtol=1e-13, atol=1e-15)


def test_one_module_read_off_the_formula():
    assert ASAM.name in optimizers.names()
    assert ASAM.weighted and ASAM.normalised and ASAM.rescalable and ASAM.perturbs
    assert not ASAM.discontinuous and not ASAM.per_example and ASAM.has_torch_step
    assert not any(o.weighted for o in (optimizers.GD, optimizers.SAM_L2, optimizers.SAM_LINF, optimizers.N_SAM))
    # the default sets (experiments, property draws) are unchanged; named, it runs
    assert ASAM not in optimizers.default_set() and ASAM in optimizers.supporting()
    assert ASAM.name not in sy.OPTIMIZERS
    assert ASAM.torch_ascent_norm(0.1, 10) is None  # ‖ε‖ depends on the gradient and the weights
    assert ASAM.supports("pm", "squared", 2) is not None  # normalised: no regression limit
    with pytest.raises(ValueError):
        Asam(eta=-1)


def test_the_derived_flow_weighs_the_norm_by_w():
    W, Z = sy.layer_symbols(2, 2), sy.data_symbols(1, 2)
    defs, F = sy.flow_named(W, Z, ASAM.name, rescaled=True)
    S = dict(defs)[sp.Symbol("S", real=True)]
    g = sp.Matrix(2, 2, lambda k, j: -Z[0, j] * W[1 - k, j])  # the rescaled gradient entries
    assert sp.simplify(S**2 - sum((W[k, j] * g[k, j]) ** 2 for k in range(2) for j in range(2))) == 0
    # the named system is the direct one (sympy.diff of the model, ε from the same ascent)
    direct = sy.rescaled_flow(W, Z, ASAM.name)
    vals = {s: v for s, v in zip(list(W) + list(Z), [0.7, -1.1, 0.4, 0.9, 1.3, -0.6])}
    vals[sy.rho] = 0.45
    a = np.array(sy.expand_named(defs, F).subs(vals).evalf(20), dtype=float)
    b = np.array(direct.subs(vals).evalf(20), dtype=float)
    np.testing.assert_allclose(a, b, rtol=1e-15)
    with pytest.raises(ValueError, match="weights"):
        sy.perturbation(g, ASAM.name)


@pytest.mark.parametrize("L", [2, 3])
def test_the_balanced_closed_form_is_the_flow_on_balanced_layers(L):
    """closed_forms.balanced_field with ASAM's weighted N (from the ascent's own norm term) equals the
    general rescaled flow restricted to balanced layers."""
    u = sp.Matrix(1, 2, lambda _, j: sp.Symbol(f"u{j + 1}", positive=True))
    z = sy.data_symbols(1, 2)
    F = sy.balanced_rescaled_flow(u, z, L, ASAM.name)
    N = sp.sqrt(sum(cf.balanced_norm_summand(L, ASAM.name).subs({cf.z_j: z[j], cf.u_j: u[j]}) for j in range(2)))
    for j in range(2):
        closed = cf.balanced_field(L, ASAM.name).subs({cf.z_j: z[j], cf.u_j: u[j], cf.N: N}, simultaneous=True)
        vals = {u[0]: 0.8, u[1]: 1.7, z[0]: 0.5, z[1]: 2.0, sy.rho: 0.3}
        for k in range(L):
            assert float((F[k, j] - closed).subs(vals)) == pytest.approx(0.0, abs=1e-14)


def test_a_discrete_step_is_a_step_of_the_weighted_flow():
    W = RNG.normal(size=(2, 3))
    Z = RNG.normal(size=(2, 3))
    eta, rho = 0.05, 0.4
    new = sam_step(W, Z, optimizer=ASAM.name, rho=rho, eta=eta)
    g = lambda V: (sam_step(V, Z, optimizer=optimizers.GD.name, rho=0.0, eta=1.0) - V) * -1.0  # noqa: E731  ∇Lo(V)
    eps = kwon_epsilon(g(W), W, rho, 0.0)
    np.testing.assert_allclose(new, W - eta * g(W + eps), rtol=1e-13, atol=1e-15)


def test_asam_does_not_collapse_below_sqrt_L_where_l2_sam_does():
    """Balanced, one example z > 0: ASAM's perturbed point is û_j = u_j (1 − ρ z_j u_j^L/‖√L z ⊙ u^L‖₂) ≥
    u_j (1 − ρ/√L), so for ρ < √L no coordinate is ever pushed through 0 and the flow grows at every α;
    ℓ2-SAM at the same α and ρ collapses (α < α_c)."""
    z = [1.0, 2.0, 3.0]
    l2 = solve(Setting.from_z(z, optimizer=optimizers.SAM_L2.name, rho=1.0, alpha=1e-3), t_max=50.0)
    assert l2.collapsed
    run = solve(Setting.from_z(z, optimizer=ASAM.name, rho=1.0, alpha=1e-3), t_max=2000.0)
    assert not run.collapsed and run.log_abs_beta[-1].max() > math.log(1e-6) + 5


@pytest.mark.parametrize("call", [
    lambda s: api.thresholds(s),
    lambda s: api.heatmap(s, alphas=[0.1, 1.0], times=[0.0, 1.0]),
    lambda s: api.prove_trajectory(s),
])
def test_the_closed_form_paths_refuse_it_in_one_line(call):
    s = Setting.from_z([1.0, 2.0], optimizer=ASAM.name, rho=0.5, alpha=0.3)
    with pytest.raises(SettingError) as e:
        call(s)
    assert "\n" not in str(e.value) and "ASAM" in str(e.value)


def test_the_batched_engines_do_not_take_it():
    from theorycheck.batched.pixels import OPTIMIZER_CODES
    from theorycheck.batched.systems import product_optimizers

    assert ASAM.name not in product_optimizers() and ASAM.name not in OPTIMIZER_CODES


def water_filling_direction(z, rho: float, L: int = 2) -> np.ndarray:
    """The limit direction of β derived by hand for ASAM (η = 0), L = 2, balanced, one example z > 0: the growth
    rates dθ_j/dτ = z_j r_j, r_j = 1 − ρ v_j/√L with v = z ⊙ β/‖z ⊙ β‖₂, are equal (= c) on the coordinates that
    stay and below c elsewhere: v_j = √L (z_j − c)₊/(ρ z_j) with ‖v‖₂ = 1 (c by bisection), β_j ∝ v_j/z_j."""
    z = np.asarray(z, float)
    lo, hi = -1e3, float(z.max())
    for _ in range(200):
        c = (lo + hi) / 2
        if np.sum((math.sqrt(L) * np.maximum(z - c, 0) / (rho * z)) ** 2) > 1:
            lo = c
        else:
            hi = c
    v = math.sqrt(L) * np.maximum(z - (lo + hi) / 2, 0) / (rho * z)
    return (v / z) / np.linalg.norm(v / z)


@pytest.mark.parametrize("z,rho,alpha", [([1.0, 2.0, 3.0], 1.0, 0.1), ([1.0, 2.0, 3.0], 1.0, 1e-3),
                                         ([0.5, 1.0, 2.0, 4.0], 0.5, 0.2), ([1.0, 2.0, 3.0], 0.2, 0.3)])
def test_asam_tends_to_the_water_filling_direction(z, rho, alpha):
    """ASAM's implicit bias at L = 2 is neither GD's nor ℓ2-SAM's: several coordinates share the limit when ρ is
    large (z = (1, 2, 3), ρ = 1: β/‖β‖ → (0, 0.7007, 0.7134) from α = 0.1 and from 1e-3), the largest alone
    when ρ is small (ρ = 0.2). The flow, run to the end of the float64 range, meets the hand-derived direction."""
    tr = solve(Setting.from_z(z, optimizer=ASAM.name, rho=rho, alpha=alpha), t_max=400.0)
    la = np.asarray(tr.log_abs_beta[-1])
    d = np.exp(la - la.max())
    np.testing.assert_allclose(d / np.linalg.norm(d), water_filling_direction(z, rho), atol=1e-9)


@pytest.mark.parametrize("optimizer", [ASAM.name, optimizers.SAM_L2.name])
def test_an_underflowing_start_is_not_read_as_a_collapse(optimizer):
    """At α = 1e-300 (L = 2) β = α² rounds to 0 in float64 although no weight is 0: the layers system says the
    scales lie outside float64 (range_limit) instead of reporting the rounding's zero as a collapse; the
    mpmath run integrates it."""
    X, y = np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([1, -1])
    s = Setting(X, y, optimizer=optimizer, rho=0.3, alpha=1e-300)
    tr = solve(s, t_max=5.0)
    assert tr.stopped_because == "range_limit" and not tr.collapsed
    if optimizer == ASAM.name:
        assert solve(s, t_max=5.0, method="mpmath", digits=20).stopped_because == "t_max"


@pytest.mark.parametrize("alpha,z", [(1e20, [1e-300, 2e-300]), (1e-160, [1.0, 2.0, 3.0])])
def test_tiny_gradients_at_large_weights_are_not_a_stationary_point(alpha, z):
    """z ~ 1e-300 at α = 1e20: the gradient's squares underflow, its norm (scaled first) does not; and at α = 1e-160
    the joint norm of the weighted step is taken without underflow."""
    tr = solve(Setting.from_z(z, optimizer=ASAM.name, rho=0.5, alpha=alpha), t_max=5.0)
    assert tr.stopped_because == "t_max"


def test_the_cnn_experiment_takes_it_by_name_and_its_default_set_is_unchanged():
    pytest.importorskip("torch")
    from theorycheck.numerics.minor_first.e2.cnn import OPTIMIZERS as CNN_DEFAULT

    from theorycheck.errors import ArgumentError

    assert ASAM.name not in CNN_DEFAULT
    cfg = api.cnn_config(quick=True, optimizers=(optimizers.GD.name, ASAM.name))
    assert cfg.optimizers == (optimizers.GD.name, ASAM.name)
    with pytest.raises(ArgumentError):  # 1-SAM has no full-batch torch step
        api.cnn_config(quick=True, optimizers=(optimizers.GD.name, optimizers.ONE_SAM.name))


def test_a_zero_weight_is_not_an_underflow():
    """A weight exactly 0 (T(w) = 0 at η = 0) makes its term of the weighted norm 0 honestly: the run goes on."""
    W0 = np.array([[0.0, 0.8, 1.1], [0.7, 0.9, 1.2]])
    s = Setting(np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]), np.array([1, -1]), optimizer=ASAM.name, rho=0.3,
                alpha=W0)
    tr = solve(s, t_max=5.0)
    assert tr.stopped_because == "t_max"
