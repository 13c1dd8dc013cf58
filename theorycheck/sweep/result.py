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
from theorycheck.jsonio import read_json, to_plain
from theorycheck.outputs import make_parent, output_prefix
from theorycheck.record import Keys
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import float_check, not_decided


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


#: the most bytes a saved sweep's arrays may unpack to (a compressed file of a few kB can
#: declare gigabytes)
MAX_NPZ_BYTES = 4 * 2**30


def _check_npz_size(npz: Path) -> None:
    """Refuse an array file that is not a zip archive or that unpacks to more than MAX_NPZ_BYTES
    (the sizes its directory declares, read before anything is unpacked)."""
    import zipfile

    try:
        with zipfile.ZipFile(npz) as zf:
            total = sum(info.file_size for info in zf.infolist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise TheorycheckError(f"saved sweep {npz}: not an .npz archive ({str(exc).splitlines()[0]})") from None
    if total > MAX_NPZ_BYTES:
        raise TheorycheckError(f"saved sweep {npz}: unpacks to {total} bytes, more than the {MAX_NPZ_BYTES} read")


@dataclass
class SweepResult:
    """A sweep's arrays and metadata.

    ``arrays``: name -> numpy array (e.g. ``jdag`` (A, T), ``alpha`` (A,), ``time`` (T,),
    ``status`` (A,)); ``meta``: JSON-able dict (kind, setting, grid description, tolerances,
    versions, how it ran, status counts). :meth:`save` writes PREFIX.npz + PREFIX.json.
    ``outputs``: files written from this result in this session (``saved``: the two files
    of :meth:`save`; ``out``: a figure), reported by :meth:`as_dict`, never saved.

    ``KEYS``: what :meth:`as_dict` emits for a heatmap (``theorycheck heatmap --json``; meanings:
    docs/commands/heatmap.md); the library's other sweeps give {kind, meta, arrays}."""

    KEYS = Keys("heatmap", "optimizer", "rho", "depth", "loss", "n", "d", "time_kind", "system", "alpha", "time",
                "jdag", "status", "collapse_time", "visits", "rtol", "atol", "out", "saved", strength=STRENGTH_KEYS,
                thresholds=Keys("heatmap.thresholds", "alpha_all_shrink", "alpha_gd_like", "alpha_collapse"),
                run=Keys("heatmap.run", "backend", "workers", "chunks", "array_backend", "scheduler"))

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
        """What ``theorycheck heatmap --json`` prints for a heatmap (docs/commands/heatmap.md);
        other sweeps: {"kind", "meta", "arrays"}."""
        m = self.meta
        if m.get("kind") != "heatmap":
            return {"kind": m.get("kind"), "meta": m, "arrays": dict(self.arrays)}
        from theorycheck.status import FINISHED_OK, STATUS
        from theorycheck.sweep.grid import visits

        cut = int(np.sum(~np.isin(self["status"], FINISHED_OK)))
        strength = (not_decided(f"{cut} of {self['status'].size} runs ended on a budget or a non-finite value "
                                "(their `status`)") if cut else float_check())

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
            "out": self.outputs.get("out"), "saved": self.outputs.get("saved"), "strength": strength.as_dict(),
        }

    @classmethod
    def load(cls, prefix: str | Path) -> SweepResult:
        """The sweep saved at PREFIX (untrusted files: arrays of numbers only, at most
        :data:`MAX_NPZ_BYTES` unpacked, the metadata by :func:`theorycheck.jsonio.read_json`)."""
        npz, js = _paths(prefix)
        if not npz.is_file() or not js.is_file():
            raise TheorycheckError(f"no saved sweep at {prefix} (need {npz.name} and {js.name})")
        _check_npz_size(npz)
        try:
            with np.load(npz, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files}
        except (ValueError, OSError, EOFError) as exc:  # pickled objects are refused, not loaded
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TheorycheckError(f"saved sweep {npz}: not a plain array file ({first}); "
                                   "only arrays of numbers are read") from None
        meta = read_json(js, "saved sweep metadata")
        if not isinstance(meta, dict):
            raise TheorycheckError(f"saved sweep metadata {js}: not a JSON object")
        return cls(arrays, meta)
