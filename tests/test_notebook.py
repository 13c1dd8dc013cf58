"""The tutorial notebook (examples/tutorial.ipynb) runs top to bottom in a fresh kernel and shows
what it says: a trajectory's switches, α_c, a heatmap figure inline, verdicts as tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_tutorial_notebook_runs_and_shows_its_results():
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
    nbclient = pytest.importorskip("nbclient", reason="the test extra installs nbclient")
    pytest.importorskip("ipykernel", reason="the test extra installs ipykernel")
    import theorycheck as tc

    nb = nbformat.read(ROOT / "examples" / "tutorial.ipynb", as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")  # stored without outputs
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env_path] if env_path else []))
    try:
        nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
                                ).execute()
    finally:
        os.environ["PYTHONPATH"] = env_path
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    markdown = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1 and len(markdown) == 4
    # the numbers shown are the library's
    tr = tc.solve(tc.Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.5))
    assert markdown[0] == tr._repr_markdown_() and "1 → 2 (τ = 1.45288) → 3 (τ = 3.07177)" in markdown[0]
    assert "alpha_collapse | 0.43642630596" in markdown[1] and "| regime | 2 |" in markdown[1]
    assert "| C4.switch-level | holds |" in markdown[2]
    assert "| mine.gd-major | holds | holds on 9 inputs | 9 (1 pinned + 8 drawn) |" in markdown[3]
