"""numerics/ and ``theorycheck reproduce``: experiments write their figures, arrays and a
summary in numbers; redraw works from the saved arrays alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from theorycheck.numerics.minor_first import EXPERIMENTS

from theorycheck import experiments as ex
from theorycheck.cli.main import main


def test_every_experiment_documents_what_it_runs_and_expects():
    import importlib

    for name, module in EXPERIMENTS.items():
        mod = importlib.import_module(module)
        doc = mod.__doc__ or ""
        assert "What it runs" in doc and "Expected" in doc and ("Figure" in doc or "figure" in doc), name
        assert mod.NAME == name and mod.TITLE


def test_regime_map_quick_writes_figures_arrays_and_numbers(tmp_path):
    rep = ex.run(EXPERIMENTS["regime-map"], tmp_path, pack="minor-first", quick=True, ctx=ex.Context(backend="serial"))
    assert {p.suffix for p in rep.figures} == {".png", ".svg"} and all(p.stat().st_size > 0 for p in rep.figures)
    assert any(p.suffix == ".npz" for p in rep.data)
    text = " ".join(rep.summary)
    assert "α_c(ρ)/ρ = 0.31948" in text  # z = (1,…,6): the computed collapse threshold per unit ρ
    assert "agree" in text and "alpha_all_shrink ≤ α_c ≤ alpha_gd_like for every ρ: True" in text
    again = ex.redraw(EXPERIMENTS["regime-map"], tmp_path, pack="minor-first")
    assert again.summary == rep.summary and again.deviations == rep.deviations


def test_loss_plateau_quick_reports_the_plateau_and_where_the_paper_differs(tmp_path):
    rep = ex.run(EXPERIMENTS["loss-plateau"], tmp_path, pack="minor-first", quick=True, ctx=ex.Context(backend="serial"))
    text = " ".join(rep.summary)
    assert "plateau at loss" in text and "ln 2" in text
    assert any("drop" in d for d in rep.deviations)  # the loss drops while a minor feature dominates
    # α_c(1+1e-9) is within the float64 run's error of the saddle: its collapse is not reported as its fate,
    # the certified bracket's answer is
    (line,) = [s for s in rep.summary if s.startswith("ℓ2-SAM, α =") and "(α_c(1+1e-09))" in s]
    assert "fate undecided in float64" in line and "1e-07" in line and "the flow's fate is: no collapse" in line
    (line,) = [s for s in rep.summary if s.startswith("ℓ2-SAM, α =") and "(α_c(1+1e-06))" in s]
    assert "fate: no collapse (float64 run" in line
    (line,) = [s for s in rep.summary if "(0.9·α_c)" in s]
    assert "fate: collapse (float64 run" in line
    assert any("plateau length" in s and "[None, " in s for s in rep.summary)


def test_a_run_too_close_to_alpha_c_does_not_decide_its_fate():
    from theorycheck.numerics.minor_first.loss_plateau import fate

    ac, br = 0.3194848765749644, (0.319484876574961188, 0.319484876574967577)
    f = fate(ac * (1 + 1e-9), ac, br, 1e-8, True)
    assert not f["decided"] and f["bracket_says"] == "no collapse" and f["run"] == "collapse"
    assert "undecided in float64" in f["text"] and "no collapse" in f["text"]
    f = fate(ac * (1 - 1e-3), ac, br, 1e-8, True)
    assert f["decided"] and f["bracket_says"] == "collapse" and f["text"].startswith("fate: collapse")
    f = fate(ac * (1 + 1e-3), ac, br, 1e-8, True)  # a decided run that disagrees with the bracket says so
    assert f["decided"] and "the bracket says no collapse" in f["text"]
    f = fate(ac * (1 + 1e-15), ac, br, 1e-8, False)  # inside the bracket: the bracket says nothing either
    assert not f["decided"] and f["bracket_says"] is None and "α_c's bracket" not in f["text"]


def test_reproduce_cli_single_experiment_json(capsys, tmp_path):
    rc = main(["reproduce", "discrete-vs-flow", "--out", str(tmp_path), "--quick", "--backend", "serial", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and [e["name"] for e in doc["experiments"]] == ["discrete-vs-flow"]
    exp = doc["experiments"][0]
    assert set(exp) == {"name", "pack", "title", "figures", "data", "summary", "deviations", "seconds"}
    assert exp["pack"] == "minor-first" and all("/data/minor-first/discrete-vs-flow/" in d for d in exp["data"])
    assert (tmp_path / "SUMMARY.md").is_file() and (tmp_path / "discrete_vs_flow.png").is_file()
    assert "order of convergence" in " ".join(exp["summary"])


def test_reproduce_unknown_name_and_redraw_without_data(capsys, tmp_path):
    assert main(["reproduce", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert main(["reproduce", "regime-map", "--out", str(tmp_path), "--redraw"]) == 2
    assert "no saved results for regime-map" in capsys.readouterr().err


@pytest.mark.slow
def test_reproduce_all_quick_from_the_command_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "theorycheck", "reproduce", "all", "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    names = {p.name for p in tmp_path.iterdir()}
    for stem in ("e1_one_example_heatmaps", "e1_linf_seeds", "e1_synthetic_heatmaps", "e1_synthetic_loss", "regime_map",
                 "loss_plateau", "discrete_vs_flow"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names
    summary = (tmp_path / "SUMMARY.md").read_text()
    assert "ℓ2-SAM, α =" in summary and "j† visits" in summary


def test_ranges_in_summaries_are_never_degenerate():
    import re

    from theorycheck.numerics.minor_first._common import span

    assert span([0.3207]) == "α = 0.3207" and span([0.32070001, 0.32070002]) == "α = 0.3207"
    assert span([0.32, 0.41]) == "α ∈ [0.32, 0.41]" and span([1.0, 2.0], ".3g", "t") == "t ∈ [1, 2]"
    # no summary line of the experiments' modules formats a range by hand: every "∈ [" goes through span(),
    # or names two different quantities
    degenerate = re.compile(r"∈ \[([^,\]]+), \1\]")
    assert degenerate.search("α ∈ [0.3207, 0.3207]") and not degenerate.search(span([0.3207, 0.3207]))


def test_lp_margin_directional_title_renders_the_norm_and_names_the_depths_drawn(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import mathtext
    from theorycheck.numerics.lp_margin import directional

    title = directional.figure_title([2, 3])
    assert title.endswith("(L = 2, 3)") and "‖β‖_{2/L}" not in title
    math = title[title.index("$"): title.rindex("$") + 1]
    w, h, depth = mathtext.MathTextParser("path").parse(math)[:3]  # mathtext renders it (raises if it cannot)
    assert w > 0 and h > 0
    res = {"result": {"rows": [{"depth": L, "log_t": [1.0, 10.0], "kkt": [1e-2, 1e-3], "kkt_orthant": [1e-3, 1e-4]}
                               for L in (2, 3)]}}
    (png, svg) = directional.draw(res, tmp_path)
    assert png.stat().st_size > 10_000 and svg.stat().st_size > 10_000
