"""Running a pack's experiments: one protocol for every pack (``theorycheck reproduce``).

An experiment is a module of a pack's experiments package (``numerics/<pack>/``) that says in
its docstring what it runs, over which grid, what its figure shows and what outcome the paper
leads us to expect, and defines:

- ``NAME`` and ``TITLE``;
- ``compute(*, quick, ctx) -> dict[str, SweepResult | dict]`` (the expensive part: named
  results, each a :class:`~theorycheck.sweep.result.SweepResult` or a JSON-able dict);
- ``draw(results, out_dir) -> list[Path]`` (PNG and SVG; from saved results only);
- ``summarize(results) -> (summary lines, deviations)``: numbers, and where the figures do
  NOT show what the paper describes.

:func:`run` computes, saves the results (``DIR/data/PACK/NAME/KEY.npz|json``), draws and
summarises; :func:`redraw` does the last two from saved results. No pack is special: the
built-in packs and installed ones go through the same two functions.
"""

from __future__ import annotations

import importlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorycheck.record import Keys

__all__ = ["Context", "Report", "redraw", "run", "write_summary"]


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
    """What one experiment produced (one item of ``theorycheck reproduce --json``'s ``experiments``:
    docs/commands/reproduce.md)."""

    KEYS = Keys("reproduce.experiment", "name", "pack", "title", "figures", "data", "summary", "deviations", "seconds")

    name: str
    title: str
    figures: list[Path] = field(default_factory=list)
    data: list[Path] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    seconds: float = 0.0
    pack: str | None = None

    def as_dict(self) -> dict:
        return {"name": self.name, "pack": self.pack, "title": self.title, "figures": [str(p) for p in self.figures],
                "data": [str(p) for p in self.data], "summary": self.summary, "deviations": self.deviations,
                "seconds": round(self.seconds, 2)}

    def text(self) -> str:
        where = f"{self.pack}/{self.name}" if self.pack else self.name
        lines = [f"## {self.title} ({where}, {self.seconds:.1f} s)", ""]
        lines += [f"- {s}" for s in self.summary]
        lines += ["", "Where the figures do not show what the paper describes:" if self.deviations
                  else "The figures show what the paper describes (checks below passed)."]
        lines += [f"- {s}" for s in self.deviations]
        lines += ["", "Figures: " + ", ".join(p.name for p in self.figures), ""]
        return "\n".join(lines)


def _folder(out: Path, pack: str, name: str) -> Path:
    return Path(out) / "data" / pack / name


def _save(results: dict, folder: Path) -> list[Path]:
    """Each named result: a SweepResult as KEY.npz + KEY.json, a dict as KEY.json."""
    from theorycheck.jsonio import to_plain
    from theorycheck.sweep.result import SweepResult

    paths: list[Path] = []
    folder.mkdir(parents=True, exist_ok=True)
    for key, res in results.items():
        if isinstance(res, SweepResult):
            paths += list(res.save(folder / key))
        else:
            p = folder / f"{key}.json"
            p.write_text(json.dumps(to_plain(res, nonfinite="string"), indent=1, allow_nan=False,
                                    ensure_ascii=False) + "\n")
            paths.append(p)
    return paths


def _load(folder: Path) -> tuple[dict, list[Path]]:
    """The results :func:`_save` wrote into ``folder``: a KEY.json beside a KEY.npz is a SweepResult."""
    from theorycheck.jsonio import read_json
    from theorycheck.sweep.result import SweepResult

    results: dict = {}
    paths: list[Path] = []
    for f in sorted(folder.glob("*.json")):
        key = f.name[: -len(".json")]
        npz = f.with_name(key + ".npz")
        if npz.is_file():
            results[key] = SweepResult.load(folder / key)
            paths += [npz, f]
        else:
            results[key] = read_json(f, "saved experiment result")
            paths.append(f)
    return results, paths


def run(module: str, out: Path, *, pack: str, quick: bool = False, ctx: Context | None = None) -> Report:
    """Compute, save, draw and summarise one experiment (the module named ``module``, of the
    pack ``pack``) into ``out``."""
    mod = importlib.import_module(module)
    ctx = ctx or Context()
    t0 = time.perf_counter()
    results = mod.compute(quick=quick, ctx=ctx)
    for res in results.values():
        meta = getattr(res, "meta", None)
        if meta is not None:
            meta.setdefault("experiment", mod.NAME)
            meta["quick"] = quick
    data = _save(results, _folder(out, pack, mod.NAME))
    rep = _finish(mod, pack, results, Path(out))
    rep.data = data
    rep.seconds = time.perf_counter() - t0
    return rep


def redraw(module: str, out: Path, *, pack: str) -> Report:
    """Draw and summarise from the results a previous :func:`run` saved in ``out``."""
    from theorycheck.errors import TheorycheckError

    mod = importlib.import_module(module)
    folder = _folder(out, pack, mod.NAME)
    results, data = _load(folder)
    if not results:
        raise TheorycheckError(f"no saved results for {mod.NAME} in {folder}: run the experiment into this folder "
                               "first, then redraw")
    t0 = time.perf_counter()
    rep = _finish(mod, pack, results, Path(out))
    rep.data = data
    rep.seconds = time.perf_counter() - t0
    return rep


def _finish(mod, pack: str, results: dict, out: Path) -> Report:
    figures = mod.draw(results, out)
    summary, deviations = mod.summarize(results)
    return Report(name=mod.NAME, title=mod.TITLE, figures=figures, summary=summary, deviations=deviations, pack=pack)


def write_summary(reports: list[Report], out: Path) -> Path:
    """DIR/SUMMARY.md (text) and DIR/summary.json."""
    out = Path(out)
    text = "# theorycheck reproduce: summary\n\n" + "\n".join(r.text() for r in reports)
    p = out / "SUMMARY.md"
    p.write_text(text)
    (out / "summary.json").write_text(json.dumps([r.as_dict() for r in reports], indent=2, ensure_ascii=False) + "\n")
    return p
