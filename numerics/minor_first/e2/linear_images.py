"""E2 on a diagonal linear network: GD, ℓ2-SAM and ℓ∞-SAM on the pixels of a binary MNIST or
CIFAR-10 task, where β itself is the pixel map (no Grad-CAM in between).

One call (:func:`linear_images`) builds the task (:mod:`theorycheck.pixel_task`), places the
α grid among ℓ2-SAM's regimes (:mod:`theorycheck.proofs.minor_first.predict.pixels`: α_c(Z), α_gd(Z)), runs every
(optimizer, α) member in one batch (:func:`theorycheck.batched.pixels.run_pixels`), and reads
the observables (:mod:`theorycheck.observe_pixels`) at every checkpoint, at matched training
loss and at matched time; figures and saved runs are optional. The runs are deterministic
flows (or the discrete algorithm): there is no seed noise, so a comparison is one number per
α and task; replicates are class pairs (the E2.linear claim).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from theorycheck.proofs.minor_first.predict.pixels import REGIME_NAMES, alpha_collapse, pixel_alpha_gd_like, regime_of

from theorycheck import observe_pixels as ob
from theorycheck.batched.pixels import TIME_KINDS, run_pixels
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import GD, default_set
from theorycheck.optimizers import get as get_optimizer
from theorycheck.pixel_task import PREPROCESSING, PixelTask, parse_classes, pixel_task
from theorycheck.record import Keys, ListOf, Record
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import float_check

__all__ = ["Config", "quick_config", "linear_images", "LinearImagesResult", "compare", "DEFAULT_RHO"]

#: ℓ2-SAM radius: with raw intensities, MNIST 0-vs-1's α_c(Z) ≈ 0.04 ρ and α_gd(Z) ≈ 0.5 ρ (subsets)
DEFAULT_RHO = 1.0
#: the flows' default relative tolerance (Config.rtol)
DEFAULT_RTOL = 1e-9
OPTIMIZERS = tuple(o.name for o in default_set("product", "logistic", 2) if not o.weighted)


@dataclass(frozen=True)
class Config:
    """Everything that determines the numbers. ``alphas`` None: 8 values spanning the regimes
    (from α_c's lower end / 3 to 3 α_gd). ``rho_linf`` None: ρ/√P, P = L·2d the parameter count
    (the same ‖ε‖₂ as ℓ2). ``t_max`` None: 200 (τ), 2·10⁴ (t and discrete). ``rtol`` / ``atol``: the
    flows' tolerances (the batched Dormand–Prince engine; ``atol`` None: rtol/1000). The default 1e-9
    keeps β within 1e-6 (relative, ‖·‖₂) of a DOP853 run at rtol 1e-13 at every checkpoint of the GD
    depth-2 real-time flow on MNIST 0/1 (1000 images; 1e-6 left 8.8e-5: tests/test_linear_images_rtol.py)."""

    dataset: str = "mnist"
    classes: tuple = (0, 1)
    depth: int = 2
    optimizers: tuple[str, ...] = OPTIMIZERS
    alphas: tuple[float, ...] | None = None
    rho: float = DEFAULT_RHO
    rho_linf: float | None = None
    time_kind: str = "tau"
    eta: float | None = None
    loss_target: float = 1e-2
    t_max: float | None = None
    checkpoints: int = 120
    n_train: int | None = None
    n_test: int | None = None
    preprocess: str = "raw"
    margins: bool = True
    max_steps: int = 3000
    rtol: float = DEFAULT_RTOL
    atol: float | None = None
    array_backend: str = "numpy"
    device: str | None = None
    threads: int | None = None
    seed: int = 0
    data_dir: str | None = None
    progress: bool = False

    def validate(self) -> Config:
        """Check every field (one-line errors with the library's argument names)."""
        if self.dataset not in ("mnist", "cifar10"):
            raise TheorycheckError(f"dataset {self.dataset!r}: choose mnist or cifar10")
        classes = parse_classes(self.classes)
        if self.depth not in (1, 2, 3):
            raise TheorycheckError(f"depth {self.depth}: choose 1, 2 or 3")
        if not self.optimizers or GD.name not in self.optimizers or len(set(self.optimizers)) != len(self.optimizers) \
                or any(o not in OPTIMIZERS for o in self.optimizers):
            raise TheorycheckError("optimizers must list gd (the reference) and SAM variants from "
                                   f"{', '.join(OPTIMIZERS)}, each once")
        if self.alphas is not None and (not self.alphas or any(not (a > 0 and math.isfinite(a)) for a in self.alphas)):
            raise TheorycheckError("alphas must be positive finite numbers")
        for name in ("rho", "loss_target"):
            v = getattr(self, name)
            if not (v > 0 and math.isfinite(v)):
                raise TheorycheckError(f"{name} = {v}: must be > 0 and finite")
        if self.rho_linf is not None and not (self.rho_linf > 0 and math.isfinite(self.rho_linf)):
            raise TheorycheckError(f"rho_linf = {self.rho_linf}: must be > 0 and finite")
        if self.time_kind not in TIME_KINDS:
            raise TheorycheckError(f"time_kind {self.time_kind!r}: choose one of {', '.join(TIME_KINDS)}")
        if self.time_kind == "discrete" and not (self.eta is not None and self.eta > 0 and math.isfinite(self.eta)):
            raise TheorycheckError("time_kind 'discrete' needs a step eta > 0")
        if self.t_max is not None and not (self.t_max > 0 and math.isfinite(self.t_max)):
            raise TheorycheckError(f"t_max = {self.t_max}: must be > 0 and finite")
        if self.checkpoints < 3:
            raise TheorycheckError("checkpoints must be ≥ 3")
        if self.preprocess not in PREPROCESSING:
            raise TheorycheckError(f"preprocess {self.preprocess!r}: choose one of {', '.join(PREPROCESSING)}")
        if self.max_steps < 1:
            raise TheorycheckError("max_steps must be ≥ 1")
        if not (isinstance(self.rtol, (int, float)) and 0 < self.rtol < 1):
            raise TheorycheckError(f"rtol = {self.rtol!r}: give a relative tolerance in (0, 1)")
        if self.atol is not None and not (isinstance(self.atol, (int, float)) and 0 < self.atol < 1):
            raise TheorycheckError(f"atol = {self.atol!r}: give an absolute tolerance in (0, 1)")
        from theorycheck.batched.pixels import device_ops

        device_ops(self.array_backend, self.device)  # cuda without a CUDA device: refused here, before any work
        return replace(self, classes=classes)


def quick_config(**overrides) -> Config:
    """``--quick``: 200 training and 200 test images, 3 α (one per regime), 60 checkpoints, no
    max-margin programs; CI-sized."""
    base = dict(n_train=200, n_test=200, checkpoints=60, max_steps=600, margins=False)
    base.update(overrides)
    return Config(**base)


_MARGIN = Keys("linear-images.max_margin", "margin", "method", "kkt_residual", "background_fraction", "nonzero_pixels")


class LinearImagesResult(Record):
    """What ``theorycheck linear-images --json`` prints (keys and meanings: docs/commands/linear-images.md)."""

    KEYS = Keys(
        "linear-images", "figures", "saved", strength=STRENGTH_KEYS,
        config=Keys("linear-images.config", "dataset", "classes", "depth", "optimizers", "alphas", "rho", "rho_linf",
                    "time_kind", "eta", "loss_target", "t_max", "checkpoints", "n_train", "n_test", "preprocess",
                    "margins", "max_steps", "rtol", "atol", "array_backend", "device", "threads", "seed", "data_dir",
                    "progress"),
        task=Keys("linear-images.task", "dataset", "classes", "label", "n_train", "n_test", "d", "d_active", "shape",
                  "preprocess", "source", "background_definition", "background_pixels", "flat_baseline",
                  "flat_baseline_all"),
        regimes=Keys("linear-images.regimes", "rho", "rho_linf",
                     alpha_collapse=Keys("linear-images.alpha_collapse", "bracket", "value",
                                         "monotone_on_scan", "note", strength=STRENGTH_KEYS,
                                         scan=ListOf(Keys("linear-images.collapse_scan", "alpha", "kind", "status",
                                                          "t_stop", "loss_end"))),
                     alpha_gd_like=Keys("linear-images.alpha_gd_like", "value", "gd_pixel", "note",
                                        scan=Keys("linear-images.gd_scan", "alpha", "pixel"))),
        alphas=ListOf(Keys("linear-images.alpha", "alpha", "regime", "regime_name")),
        max_margin=Keys("linear-images.max_margins", l1=_MARGIN, l2=_MARGIN),
        runs=ListOf(Keys("linear-images.run", "optimizer", "alpha", "rho", "regime", "regime_name", "time_kind",
                         "status", "t_stop", "steps", "sliding_entries", "sliding_time", "npz",
                         checkpoints=ListOf(Keys("linear-images.checkpoint", "time", "train_loss",
                                                 "background_fraction", "test_accuracy", "jdag",
                                                 "jdag_intensity_quantile", "angle_l1", "angle_l2")))),
        comparisons=ListOf(Keys("linear-images.comparison", "optimizer", "alpha", "regime", "regime_name",
                                matched_loss=Keys("linear-images.matched_loss", "level", "gd_loss", "sam_loss",
                                                  "gd_time", "sam_time", GD.name, "sam", "difference"),
                                matched_time=Keys("linear-images.matched_time", "time", GD.name, "sam", "difference",
                                                  "gd_loss", "sam_loss"))),
        engine=Keys("linear-images.engine", "method", "rtol", "atol", "max_steps", "array_backend", "eta", "system",
                    "L", "loss", "time_kind", "n", "d", "d_active", "clock",
                    products=Keys("linear-images.products", "kind", "density", "calls")),
        seconds=Keys("linear-images.seconds", "total", "runs"))


def _grid(cfg: Config) -> np.ndarray:
    kind = cfg.time_kind
    t_max = cfg.t_max or (200.0 if kind == "tau" else 2e4)
    lo = t_max * (1e-5 if kind == "tau" else 1e-5)
    g = np.geomspace(lo, t_max, cfg.checkpoints - 1)
    if kind == "discrete":
        g = np.unique(np.ceil(g / cfg.eta - 1e-9) * cfg.eta)
    return np.concatenate([[0.0], g])


def _alpha_grid(ac: dict, agd: dict, lo: float, hi: float, k: int) -> np.ndarray:
    br = ac.get("bracket")
    a_lo = br[0] / 3 if br else lo
    a_hi = 3 * agd["value"] if agd["value"] is not None else hi
    if k == 3 and br:  # one per regime: collapse, the geometric middle of the intermediate range, GD-like
        mid = math.sqrt(br[1] * min(agd["value"] if agd["value"] is not None else hi, hi))
        return np.array([br[0] / 2, mid, a_hi])
    return np.geomspace(a_lo, max(a_hi, a_lo * 10), k)


def _margin_summary(mm, task: PixelTask, active: np.ndarray) -> tuple[dict, np.ndarray]:
    beta = np.zeros(task.X.shape[1])
    beta[active] = mm.direction
    return ({"margin": mm.margin, "method": mm.method, "kkt_residual": mm.kkt_residual,
             "background_fraction": float(ob.background_fraction(beta, task.background)),
             "nonzero_pixels": int(np.sum(np.abs(beta) > 1e-9 * np.abs(beta).max()))}, beta)


def compare(runs: list[dict], optimizer: str, alpha: float) -> dict | None:
    """SAM − GD background fraction for one α: at matched training loss (the first checkpoint of
    each run at or below the larger of the two runs' smallest losses) and at matched time (the last
    checkpoint both runs have)."""
    g = next((r for r in runs if not get_optimizer(r["optimizer"]).perturbs and r["alpha"] == alpha), None)
    s = next((r for r in runs if r["optimizer"] == optimizer and r["alpha"] == alpha), None)
    if g is None or s is None:
        return None

    def col(r, key):
        return np.array([np.nan if c[key] is None else c[key] for c in r["checkpoints"]], float)

    lg, ls = col(g, "train_loss"), col(s, "train_loss")
    level = max(np.nanmin(lg), np.nanmin(ls))
    ig, is_ = ob.first_at_or_below(lg, level), ob.first_at_or_below(ls, level)
    bg_g, bg_s = col(g, "background_fraction"), col(s, "background_fraction")
    last = min(int(np.flatnonzero(np.isfinite(lg))[-1]), int(np.flatnonzero(np.isfinite(ls))[-1]))

    def diff(a, b):
        return None if not (np.isfinite(a) and np.isfinite(b)) else float(b - a)

    return {"optimizer": optimizer, "alpha": alpha, "regime": s["regime"], "regime_name": s["regime_name"],
            "matched_loss": {"level": float(level), "gd_loss": float(lg[ig]), "sam_loss": float(ls[is_]),
                             "gd_time": g["checkpoints"][ig]["time"], "sam_time": s["checkpoints"][is_]["time"],
                             GD.name: _none(bg_g[ig]), "sam": _none(bg_s[is_]), "difference": diff(bg_g[ig], bg_s[is_])},
            "matched_time": {"time": g["checkpoints"][last]["time"], GD.name: _none(bg_g[last]), "sam": _none(bg_s[last]),
                             "difference": diff(bg_g[last], bg_s[last]),
                             "gd_loss": float(lg[last]), "sam_loss": float(ls[last])}}


def _none(v):
    return None if v is None or not np.isfinite(v) else float(v)


def linear_images(config: Config | None = None, *, save: str | Path | None = None, figures: str | Path | None = None,
                  task: PixelTask | None = None) -> LinearImagesResult:
    """Run E2 on a diagonal linear network (module docstring). ``save``: a folder for one .npz per
    run and runs.json; ``figures``: a folder for the PNGs (both checked before any work, by the
    rule of :mod:`theorycheck.outputs`). ``task``: a prebuilt task (tests)."""
    from theorycheck.outputs import output_folder

    save = output_folder(save, "save") if save is not None else None
    figures = output_folder(figures, "figures") if figures is not None else None
    cfg = (config or Config()).validate()
    t0 = time.perf_counter()
    _set_threads(cfg.threads)
    if task is None:
        task = pixel_task(cfg.dataset, cfg.classes, n_train=cfg.n_train, n_test=cfg.n_test,
                          preprocess=cfg.preprocess, data_dir=cfg.data_dir, seed=cfg.seed)
    plan = _plan(cfg, task)
    run = run_pixels(task.Z, plan["optimizers"], plan["alphas"], plan["rhos"], depth=cfg.depth,
                     time_kind=cfg.time_kind, grid=_grid(cfg), loss_target=cfg.loss_target, eta=cfg.eta,
                     max_steps=cfg.max_steps, rtol=cfg.rtol, atol=cfg.atol if cfg.atol is not None else cfg.rtol * 1e-3,
                     progress="linear-images" if cfg.progress else False,
                     array_backend=cfg.array_backend, device=cfg.device)
    mm_info, dirs = _max_margins(task) if cfg.margins else ({}, {})
    obs = _observations(run, task, dirs)
    runs = _runs(cfg, plan, run, obs)
    comps = [c for op in cfg.optimizers if get_optimizer(op).perturbs for a in plan["alphas"][: plan["grid"].size]
             if (c := compare(runs, op, a)) is not None]
    out = {
        "config": {**asdict(cfg), "classes": list(cfg.classes)},
        "task": _task_summary(task),
        "regimes": {"alpha_collapse": plan["ac"], "alpha_gd_like": plan["agd"], "rho": cfg.rho,
                    "rho_linf": plan["rho_linf"]},
        "alphas": [{"alpha": float(a), "regime": r, "regime_name": REGIME_NAMES[r]}
                   for a, r in zip(plan["grid"], plan["regimes"])],
        "max_margin": mm_info,
        "runs": runs,
        "comparisons": comps,
        "engine": {k: v for k, v in run.meta.items() if k != "events"},
        "seconds": {"total": None, "runs": run.seconds},
        "figures": [],
        "saved": None,
    }
    if save is not None:
        out["saved"] = _save(save, run, task, out)
    if figures is not None:
        from theorycheck.numerics.minor_first.e2.linear_figures import draw_all

        out["figures"] = draw_all(figures, run, task, out, obs["background"], obs["quantile"])
    out["seconds"]["total"] = time.perf_counter() - t0
    out["strength"] = float_check().as_dict()  # float64 flows at the run's rtol (config.rtol)
    return LinearImagesResult(out)


def _set_threads(threads: int | None) -> None:
    """torch's threads (the torch backend, and the numpy backend's CSR products), when torch is there."""
    if threads is None:
        return
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(int(threads))


def _plan(cfg: Config, task: PixelTask) -> dict:
    """The regimes (α_c bracket, α_gd-like), the α grid and the members (optimizer, α, ρ) to run."""
    d_act = int(task.active.sum())
    rho_linf = cfg.rho_linf if cfg.rho_linf is not None else cfg.rho / math.sqrt(cfg.depth * 2 * d_act)
    lo, hi = 1e-3 * cfg.rho, 2.0 * cfg.rho
    small = cfg.n_train is not None and cfg.n_train <= 1000
    ac = alpha_collapse(task.Z, cfg.rho, depth=cfg.depth, lo=lo, hi=hi, points=8 if small else 10,
                        refine=4 if small else 8, max_steps=min(cfg.max_steps, 1500),
                        array_backend=cfg.array_backend, device=cfg.device)
    agd = pixel_alpha_gd_like(task.Z, cfg.rho, depth=cfg.depth, lo=lo, hi=hi)
    grid = np.asarray(cfg.alphas if cfg.alphas is not None else _alpha_grid(ac, agd, lo, hi, 3 if small else 8), float)
    members = [(op, float(a), get_optimizer(op).radius(cfg.rho if get_optimizer(op).normalised else rho_linf))
               for op in cfg.optimizers for a in grid]
    return {"ac": ac, "agd": agd, "grid": grid, "regimes": [regime_of(float(a), ac, agd) for a in grid],
            "rho_linf": rho_linf, "optimizers": [m[0] for m in members], "alphas": [m[1] for m in members],
            "rhos": [m[2] for m in members]}


def _max_margins(task: PixelTask) -> tuple[dict, dict]:
    """Max-margin directions on the active pixels (ℓ1: HiGHS LP; ℓ2: SLSQP or, at full size, a
    dual working set): their summaries and directions (on every pixel)."""
    from theorycheck.solvers.maxmargin import l1_max_margin, l2_max_margin

    info, dirs = {}, {}
    Za = task.Z[:, task.active]
    for name, fn in (("l1", l1_max_margin), ("l2", l2_max_margin)):
        info[name], dirs[name] = _margin_summary(fn(Za), task, task.active)
    return info, dirs


def _observations(run, task: PixelTask, dirs: dict) -> dict:
    """Per (member, checkpoint): background fraction, test accuracy, j†, its intensity quantile,
    angles to the max-margin directions."""
    jd = ob.dominant_pixel(run.beta)
    return {"background": ob.background_fraction(run.beta, task.background),
            "accuracy": ob.accuracy(run.beta, task.X_test, task.y_test), "jdag": jd,
            "quantile": ob.intensity_quantile(jd, task.intensity, task.active),
            "angles": {k: ob.angle_degrees_rows(run.beta, v) for k, v in dirs.items()}}


def _checkpoints(run, obs: dict, b: int) -> list[dict]:
    ang = obs["angles"]
    return [{"time": float(run.times[k]), "train_loss": float(run.loss[b, k]),
             "background_fraction": _none(obs["background"][b, k]), "test_accuracy": _none(obs["accuracy"][b, k]),
             "jdag": int(obs["jdag"][b, k]), "jdag_intensity_quantile": _none(obs["quantile"][b, k]),
             "angle_l1": _none(ang["l1"][b, k]) if "l1" in ang else None,
             "angle_l2": _none(ang["l2"][b, k]) if "l2" in ang else None}
            for k in range(run.times.size) if np.isfinite(run.loss[b, k])]


def _runs(cfg: Config, plan: dict, run, obs: dict) -> list[dict]:
    ev = run.meta["events"]
    out = []
    for b, (op, a, rho) in enumerate(zip(plan["optimizers"], plan["alphas"], plan["rhos"])):
        reg = plan["regimes"][b % plan["grid"].size]
        out.append({"optimizer": op, "alpha": a, "rho": rho, "regime": reg,
                    "regime_name": REGIME_NAMES[reg], "time_kind": cfg.time_kind, "status": str(run.status[b]),
                    "t_stop": float(run.t_stop[b]), "steps": int(run.steps[b]),
                    "sliding_entries": int(ev["sliding_entries"][b]), "sliding_time": float(ev["sliding_time"][b]),
                    "checkpoints": _checkpoints(run, obs, b), "npz": None})
    return out


def _task_summary(task: PixelTask) -> dict:
    return {"dataset": task.dataset, "classes": list(task.classes), "label": task.label,
            "n_train": int(task.X.shape[0]), "n_test": int(task.X_test.shape[0]), "d": int(task.X.shape[1]),
            "d_active": int(task.active.sum()), "shape": list(task.shape), "preprocess": task.preprocess,
            "source": task.source,
            "background_definition": ("mean raw training intensity < 0.1" if task.dataset == "mnist"
                                      else "border ring of width 6"),
            "background_pixels": int(task.background.sum()),
            "flat_baseline": ob.flat_baseline(task.background, task.active),
            "flat_baseline_all": ob.flat_baseline(task.background)}


def _save(folder: Path, run, task: PixelTask, out: dict) -> str:
    """One .npz per run (plain arrays) and runs.json listing them."""
    folder.mkdir(parents=True, exist_ok=True)
    for b, r in enumerate(out["runs"]):
        ok = np.isfinite(run.loss[b])
        name = f"run_{b:03d}_{r['optimizer']}_a{r['alpha']:.4g}.npz"
        np.savez(folder / name, beta=run.beta[b][ok], times=run.times[ok], train_loss=run.loss[b][ok],
                 train_indices=task.train_indices, y=task.y, alpha=np.float64(r["alpha"]), rho=np.float64(r["rho"]),
                 depth=np.int64(out["config"]["depth"]))
        r["npz"] = str(folder / name)
    listing = {"task": out["task"], "config": out["config"],
               "runs": [{k: r[k] for k in ("optimizer", "alpha", "rho", "time_kind", "status", "npz")}
                        | {"depth": out["config"]["depth"],
                           "checkpoints": [{k: c[k] for k in ("time", "train_loss", "background_fraction",
                                                               "test_accuracy")} for c in r["checkpoints"]]}
                        for r in out["runs"]]}
    (folder / "runs.json").write_text(json.dumps(listing, indent=1, default=float))
    return str(folder / "runs.json")
