"""A sweep's result: arrays + metadata, saved as PREFIX.npz + PREFIX.json, and the versions
of what produced it."""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.jsonio import to_plain
from theorycheck.outputs import make_parent, output_prefix


def versions(array_backend: str = "numpy") -> dict:
    """Versions of what produced a result."""
    import scipy
    import sympy

    from theorycheck.version import __version__

    v = {"theorycheck": __version__, "python": platform.python_version(), "numpy": np.__version__,
         "scipy": scipy.__version__, "sympy": sympy.__version__, "platform": platform.platform()}
    if array_backend == "numba":
        v["numba"] = sys.modules["numba"].__version__
    if array_backend == "torch" or "torch" in sys.modules:
        try:
            import torch

            v["torch"] = torch.__version__
        except ImportError:  # pragma: no cover
            pass
    return v


def _paths(prefix: str | Path) -> tuple[Path, Path]:
    """PREFIX.npz and PREFIX.json (a trailing .npz/.json is dropped; dots in PREFIX are kept)."""
    text = str(prefix)
    for suf in (".npz", ".json"):
        if text.endswith(suf):
            text = text[: -len(suf)]
    return Path(text + ".npz"), Path(text + ".json")


@dataclass
class SweepResult:
    """A sweep's arrays and metadata.

    ``arrays``: name -> numpy array (e.g. ``jdag`` (A, T), ``alpha`` (A,), ``time`` (T,),
    ``status`` (A,)); ``meta``: JSON-able dict (kind, setting, grid description, tolerances,
    versions, how it ran, status counts). :meth:`save` writes PREFIX.npz + PREFIX.json.
    ``outputs``: files written from this result in this session (``saved``: the two files
    of :meth:`save`; ``out``: a figure), reported by :meth:`as_dict`, never saved."""

    arrays: dict[str, np.ndarray]
    meta: dict
    outputs: dict = field(default_factory=dict)

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def save(self, prefix: str | Path) -> tuple[Path, Path]:
        npz, js = output_prefix(prefix, "prefix")
        make_parent(npz, "prefix")
        np.savez_compressed(npz, **self.arrays)
        js.write_text(json.dumps(to_plain(self.meta, nonfinite="string"), indent=2, allow_nan=False, ensure_ascii=False) + "\n")
        self.outputs["saved"] = [str(npz), str(js)]
        return npz, js

    def as_dict(self) -> dict:
        """What ``theorycheck heatmap --json`` prints for a heatmap (keys documented in the
        README): optimizer, rho, depth, loss, n, d, time_kind, system, alpha, time, jdag,
        status (words), collapse_time (None: no collapse), visits, thresholds, rtol, atol,
        run, out, saved. Other sweeps: {"kind", "meta", "arrays"}."""
        m = self.meta
        if m.get("kind") != "heatmap":
            return {"kind": m.get("kind"), "meta": m, "arrays": dict(self.arrays)}
        from theorycheck.status import STATUS
        from theorycheck.sweep.grid import visits

        coll = self["event_collapse"] if "event_collapse" in self.arrays else np.full(self["alpha"].size, np.inf)
        return {
            "optimizer": m["optimizer"], "rho": m["rho"], "depth": m["depth"], "loss": m["loss"], "n": m["n"],
            "d": m["d"], "time_kind": m["time_kind"], "system": m["system"],
            "alpha": self["alpha"], "time": self["time"], "jdag": self["jdag"].astype(int),
            "status": [STATUS[int(s)] for s in self["status"]],
            "collapse_time": [None if not np.isfinite(c) else float(c) for c in coll],
            "visits": [visits(row) for row in self["jdag"]],
            "thresholds": m.get("thresholds"),
            "rtol": m["integrator"]["rtol"], "atol": m["integrator"]["atol"], "run": m["run"],
            "out": self.outputs.get("out"), "saved": self.outputs.get("saved"),
        }

    @classmethod
    def load(cls, prefix: str | Path) -> SweepResult:
        npz, js = _paths(prefix)
        if not npz.is_file() or not js.is_file():
            raise TheorycheckError(f"no saved sweep at {prefix} (need {npz.name} and {js.name})")
        try:
            with np.load(npz, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files}
            meta = json.loads(js.read_text())
        except (ValueError, OSError) as exc:  # pickled objects are refused, not loaded
            raise TheorycheckError(f"saved sweep {npz}: not a plain array file ({str(exc).splitlines()[0]}); "
                                   "only arrays of numbers are read") from None
        return cls(arrays, meta)
