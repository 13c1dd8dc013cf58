"""Figures: a log time axis when switches span decades, j† labels that never overlap, z
and α_c on the heatmap."""

from __future__ import annotations

import numpy as np
import pytest

from theorycheck.report import plots


def test_log_time_only_when_switches_span_decades():
    assert plots.use_log_time(5000.0, [11.3, 18.8])
    assert plots.use_log_time(10.0, [1e-3, 5.0])
    assert not plots.use_log_time(50.0, [11.3, 18.8])
    assert not plots.use_log_time(50.0, [])
    assert not plots.use_log_time(50.0, [0.0])


@pytest.mark.parametrize("seed", range(5))
def test_strip_labels_never_overlap(seed):
    rng = np.random.default_rng(seed)
    bounds = np.concatenate([[0.0], np.sort(rng.uniform(0, 1, 40)), [1.0]])
    labels = rng.integers(0, 5, bounds.size - 1).tolist()
    kept = plots._strip_labels(list(bounds), labels, lambda x: x, min_gap=0.05)
    xs = [x for x, _ in kept]
    assert all(b - a >= 0.05 - 1e-12 for a, b in zip(xs, xs[1:]))
    for x, text in kept:  # each label sits on a segment at least min_gap wide, and says its j†
        i = int(np.searchsorted(bounds, x)) - 1
        assert bounds[i + 1] - bounds[i] >= 0.05
        assert text == (f"j†={labels[i]}" if labels[i] else "0")


def test_data_label():
    assert plots.data_label([[1.0, 2.0, 3.0]], 1) == "z = (1, 2, 3)"
    assert plots.data_label(np.ones((1, 9)), 1).endswith("… (9 entries))")
    assert plots.data_label(np.ones((3, 2)), 3) == "3 examples"


def test_trajectory_figure_with_early_switches(tmp_path):
    from theorycheck import Setting
    from theorycheck.observe import switches
    from theorycheck.solvers.integrate import solve

    tr = solve(Setting.from_z([1.0, 2.0, 3.0], rho=1.0, alpha=0.44), t_max=5000.0)
    sw = switches(tr)
    assert [(w.from_, w.to) for w in sw] == [(1, 2), (2, 3)]
    assert plots.use_log_time(tr.t_end, [w.time for w in sw])
    p = plots.plot_trajectory(tr, tmp_path / "t.png")
    assert p.stat().st_size > 10_000


def test_heatmap_figure_title_and_alpha_c(tmp_path):
    from theorycheck.sweep.result import SweepResult

    res = SweepResult({"jdag": np.array([[1, 2], [0, 0]]), "alpha": np.array([0.5, 1.0]), "time": np.array([1.0, 2.0])},
                      {"optimizer": "sam-l2", "depth": 2, "rho": 1.0, "n": 1, "d": 2, "time_kind": "tau",
                       "data": [[1.0, 2.0]]})
    fig = plots.heatmap_figure(res, lines=[(0.7, "α_c (collapse threshold)", "-")])
    ax = fig.axes[0]
    assert "z = (1, 2)" in ax.get_title()
    assert "α_c (collapse threshold)" in [t.get_text() for t in ax.get_legend().get_texts()]


def _legend(fig) -> list[str]:
    leg = fig.axes[0].get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def test_heatmap_figure_from_python_draws_the_clis_threshold_lines(tmp_path, monkeypatch, capsys):
    """One drawing path: tc.heatmap(...) → plots.heatmap_figure(res) has the lines `heatmap --out` draws."""
    from theorycheck.proofs.minor_first.predict import alpha_c as AC
    from theorycheck.proofs.minor_first.predict import thresholds as th

    import theorycheck as tc
    from theorycheck.cli.main import main

    z = np.array([1.0, 2.0, 3.0])
    res = tc.heatmap(tc.Setting.from_z(z, optimizer="sam-l2", rho=1.0), alphas=np.geomspace(0.05, 1.5, 6), times=np.array([1.0, 5.0]),
                     backend="serial", progress=False)
    lines = plots.threshold_lines(res)
    assert [lab for _, lab, _ in lines] == ["alpha_all_shrink", "alpha_gd_like", "α_c (collapse threshold)"]
    assert lines[0][0] == pytest.approx(th.alpha_all_shrink(z, 1.0).value, rel=1e-15)
    assert lines[2][0] == pytest.approx(AC.collapse_threshold(z, 1.0).value, rel=1e-7)
    fig = plots.heatmap_figure(res)
    assert _legend(fig) == [lab for _, lab, _ in lines]
    drawn = sorted(round(float(ln.get_ydata()[0]), 12) for ln in fig.axes[0].get_lines()
                   if not ln.get_label().startswith("_"))  # each line is drawn twice: a white halo, then black
    assert drawn == sorted(round(v, 12) for v, _, _ in lines)
    # the command's figure: the same lines
    shown = {}
    monkeypatch.setattr(plots, "save", lambda f, path, formats=None: shown.setdefault("fig", f) and [path])
    assert main(["heatmap", "--z", "1,2,3", "--rho", "1", "--alphas", "0.05:1.5:6", "--log", "--t-max", "5",
                 "--nt", "2", "--backend", "serial", "--out", str(tmp_path / "h.png")]) == 0
    capsys.readouterr()
    assert _legend(shown["fig"]) == _legend(fig)
    # ℓ∞-SAM: α = ρ, from Python too
    linf = tc.heatmap(tc.Setting.from_z(z, optimizer="sam-linf", rho=1.0), alphas=np.array([0.5, 2.0]), times=np.array([1.0]),
                      backend="serial", progress=False)
    assert _legend(plots.heatmap_figure(linf)) == ["α = ρ"] and plots.heatmap_figure(linf, lines=[]).axes[0].get_legend() is None
