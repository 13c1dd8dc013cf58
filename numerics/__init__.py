"""The paper's experiments, one module each (DESIGN.md: numerics/).

Every module says in its docstring what it runs, over which grid, what its figure shows and
what outcome the paper leads us to expect, and defines:

- ``NAME`` and ``TITLE``;
- ``compute(*, quick, ctx) -> dict[str, SweepResult]`` (the expensive part);
- ``draw(results, out_dir) -> list[Path]`` (PNG and SVG; from saved arrays only);
- ``summarize(results) -> (summary lines, deviations)``: numbers, and where the figures do
  NOT show what the paper describes.

:func:`run` computes, saves the arrays (``DIR/data/NAME/*.npz|json``), draws and summarises;
:func:`redraw` does the last two from saved arrays. ``theorycheck reproduce`` is the CLI.
"""

from __future__ import annotations

import importlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: experiment name -> module, in the order ``reproduce all`` runs them
EXPERIMENTS: dict[str, str] = {
    "e1-one-example": "theorycheck.numerics.e1_one_example",
    "e1-synthetic": "theorycheck.numerics.e1_synthetic",
    "regime-map": "theorycheck.numerics.regime_map",
    "loss-plateau": "theorycheck.numerics.loss_plateau",
    "discrete-vs-flow": "theorycheck.numerics.discrete_vs_flow",
}


@dataclass
class Context:
    """How to run: backend (serial | processes | dask), workers, Dask scheduler, progress bars."""

    backend: str = "processes"
    workers: int | None = None
    scheduler: Any = None
    progress: bool | None = None

    def kw(self) -> dict:
        return {"backend": self.backend, "workers": self.workers, "scheduler": self.scheduler,
                "progress": self.progress}


@dataclass
class Report:
    """What one experiment produced."""

    name: str
    title: str
    figures: list[Path] = field(default_factory=list)
    data: list[Path] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "figures": [str(p) for p in self.figures],
                "data": [str(p) for p in self.data], "summary": self.summary, "deviations": self.deviations,
                "seconds": round(self.seconds, 2)}

    def text(self) -> str:
        lines = [f"## {self.title} ({self.name}, {self.seconds:.1f} s)", ""]
        lines += [f"- {s}" for s in self.summary]
        lines += ["", "Where the figures do not show what the paper describes:" if self.deviations
                  else "The figures show what the paper describes (checks below passed)."]
        lines += [f"- {s}" for s in self.deviations]
        lines += ["", "Figures: " + ", ".join(p.name for p in self.figures), ""]
        return "\n".join(lines)


def module(name: str):
    if name not in EXPERIMENTS:
        from theorycheck.errors import TheorycheckError

        raise TheorycheckError(f"unknown experiment {name!r}: choose one of {', '.join(EXPERIMENTS)} or all")
    return importlib.import_module(EXPERIMENTS[name])


def run(name: str, out: Path, *, quick: bool = False, ctx: Context | None = None) -> Report:
    """Compute, save, draw and summarise one experiment into ``out``."""
    mod = module(name)
    ctx = ctx or Context()
    t0 = time.perf_counter()
    results = mod.compute(quick=quick, ctx=ctx)
    data = []
    for key, res in results.items():
        res.meta.setdefault("experiment", name)
        res.meta["quick"] = quick
        data += list(res.save(Path(out) / "data" / name / key))
    rep = _finish(mod, name, results, Path(out))
    rep.data = data
    rep.seconds = time.perf_counter() - t0
    return rep


def redraw(name: str, out: Path) -> Report:
    """Draw and summarise from the arrays a previous :func:`run` saved in ``out``."""
    from theorycheck.errors import TheorycheckError
    from theorycheck.sweep.result import SweepResult

    mod = module(name)
    folder = Path(out) / "data" / name
    files = sorted(folder.glob("*.json"))
    if not files:
        raise TheorycheckError(f"no saved arrays for {name} in {folder}: run `theorycheck reproduce {name}` first")
    results = {p.name[: -len(".json")]: SweepResult.load(p) for p in files}
    t0 = time.perf_counter()
    rep = _finish(mod, name, results, Path(out))
    rep.data = [p for f in files for p in (Path(str(f)[: -len(".json")] + ".npz"), f)]
    rep.seconds = time.perf_counter() - t0
    return rep


def _finish(mod, name: str, results: dict, out: Path) -> Report:
    figures = mod.draw(results, out)
    summary, deviations = mod.summarize(results)
    return Report(name=name, title=mod.TITLE, figures=figures, summary=summary, deviations=deviations)


def run_pack_experiment(pack: str, mod, out: Path, *, quick: bool = False) -> Report:
    """Run an experiment module of another pack (``NAME``, ``TITLE``, ``compute(quick=)``,
    ``draw(results, out)``, ``summarize(results) -> (lines, deviations)``): its results as
    DIR/data/PACK/NAME.json, its figures, and the report."""
    import json
    import time

    t0 = time.perf_counter()
    out = Path(out)
    (out / "data" / pack).mkdir(parents=True, exist_ok=True)
    res = mod.compute(quick=quick)
    data = out / "data" / pack / f"{mod.NAME}.json"
    data.write_text(json.dumps(res, indent=1) + "\n")
    figs = mod.draw(res, out)
    summary, deviations = mod.summarize(res)
    return Report(name=f"{pack}/{mod.NAME}", title=mod.TITLE, figures=figs, data=[data], summary=summary,
                  deviations=deviations, seconds=time.perf_counter() - t0)


def write_summary(reports: list[Report], out: Path) -> Path:
    """DIR/SUMMARY.md (text) and DIR/summary.json."""
    out = Path(out)
    text = "# theorycheck reproduce: summary\n\n" + "\n".join(r.text() for r in reports)
    p = out / "SUMMARY.md"
    p.write_text(text)
    (out / "summary.json").write_text(json.dumps([r.as_dict() for r in reports], indent=2, ensure_ascii=False) + "\n")
    return p


def experiments() -> dict[str, str]:
    """The pack's experiments: name → module (run by ``theorycheck reproduce``)."""
    return dict(EXPERIMENTS)
