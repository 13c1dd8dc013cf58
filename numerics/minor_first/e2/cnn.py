"""The E2 experiment: paired GD / SAM training of small CNNs and their Grad-CAM attention.

For every seed and init scale α one initialisation is drawn (``torch.manual_seed(seed)``,
then scaled by α) and one batch order (``numpy`` generator seeded with the seed); every
optimizer starts from that same network and sees the same batches (*paired runs*). GD is
plain minibatch SGD with step η (no momentum, no weight decay); ``sam-l2`` / ``sam-linf``
are :class:`~theorycheck.cnn.sam.SAM` around the same SGD. At evenly spaced checkpoints a
run records training loss and accuracy (on a fixed slice of the training set), test
accuracy, and the Grad-CAM background fraction of a fixed set of test images (target:
the true class). THEORY.md E2 lists why each of these choices is there.

The comparison: for each SAM variant and α, the per-seed difference SAM − GD of the mean
background fraction, (a) at the last step (matched steps) and (b) at the first
checkpoint where each run's training loss is at most the loss both runs reach (matched
loss); the mean over seeds with a Student-t 95 % interval. Pairs where a run *stalled*
(final training loss ≥ 90 % of ln C, i.e. it never left chance level: C5's collapse
regime when ρ is large next to ‖θ₀‖) are reported apart and left out.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
from theorycheck.numerics.minor_first.e2.cnn_statistics import compare, summary_line
from torch import nn

from theorycheck.cnn import data as D
from theorycheck.cnn.gradcam import UPSAMPLING, Fields, gradcam, receptive_fields, summarize, upsample
from theorycheck.cnn.models import SmallCNN, parameter_norm
from theorycheck.cnn.sam import SAM
from theorycheck.errors import ArgumentError
from theorycheck.optimizers import GD
from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers import names as optimizer_names
from theorycheck.record import Keys, ListOf, Record
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import float_check
from theorycheck.symbolic.model import OPTIMIZERS
from theorycheck.vocabulary import CNN_DEVICES as DEVICES

__all__ = ["Config", "quick_config", "run_experiment", "STALL_FRACTION"]

#: a run has stalled when its final training loss is at least this fraction of ln C
STALL_FRACTION = 0.9

#: default ℓ2 radius per dataset: at α = 1 (‖θ₀‖ ≈ 4.7) SAM-ℓ2 trains visibly slower than GD
#: but leaves chance level (the intermediate regime), chosen from the training loss of pilot
#: runs without Grad-CAM; ρ = 0.2 stalls on the CIFAR-10 subset (the collapse regime)
DEFAULT_RHO = {"mnist": 0.2, "cifar10": 0.1, "svhn": 0.1}


def torch_step_names() -> tuple[str, ...]:
    """The registered optimizers the torch SAM steps (a full-batch ascent: :attr:`Optimizer.has_torch_step`);
    the default set is :data:`OPTIMIZERS`."""
    return tuple(n for n in optimizer_names() if get_optimizer(n).has_torch_step)


@dataclass(frozen=True)
class Config:
    """Everything that determines the numbers (the same Config gives the same results)."""

    dataset: str = "mnist"
    optimizers: tuple[str, ...] = OPTIMIZERS
    init_scales: tuple[float, ...] = (0.7, 1.0, 2.0)
    rho: float | None = None         # ℓ2-SAM radius; None: DEFAULT_RHO[dataset]
    rho_linf: float | None = None    # ℓ∞-SAM radius; None: rho/√P (the same ‖ε‖₂ as ℓ2)
    lr: float = 0.1
    epochs: int = 5
    batch_size: int = 64
    seed: int = 0
    seeds: int = 5
    train_size: int | None = None    # None: the whole training split
    test_size: int | None = None
    cam_images: int = 1000
    eval_train: int = 2000           # training images used for the training loss/accuracy
    checkpoints: int = 8
    widths: tuple[int, ...] = (8, 16, 32)
    batchnorm: bool = False
    upsample: str = "rf"
    grid_images: int = 8
    device: str = "cpu"
    threads: int = 1
    data_dir: str | None = None

    def validate(self) -> Config:
        """Check every field; returns the Config with ρ resolved (one-line errors)."""
        if self.dataset not in D.DATASETS:
            raise ArgumentError(f"dataset={self.dataset!r}: choose one of {', '.join(D.DATASETS)}", "dataset")
        if not self.optimizers or GD.name not in self.optimizers or len(set(self.optimizers)) != len(self.optimizers):
            raise ArgumentError("optimizers must list gd (the reference of every comparison) and SAM "
                                "variants, each once, e.g. gd,sam-l2,sam-linf", "optimizers")
        ok = torch_step_names()
        bad = [o for o in self.optimizers if o not in ok]
        if bad:
            raise ArgumentError(f"optimizers: unknown {', '.join(bad)}; choose from {', '.join(ok)}",
                                "optimizers")
        if not self.init_scales or any(not (a > 0 and math.isfinite(a)) for a in self.init_scales):
            raise ArgumentError("init_scales must be positive finite numbers, e.g. 0.7,1,2", "init_scales")
        for name in ("rho", "lr"):
            v = getattr(self, name)
            if v is None:
                continue
            if not (v >= 0 and math.isfinite(v)) or (name == "lr" and v == 0):
                raise ArgumentError(f"{name}={v}: must be {'> 0' if name == 'lr' else '≥ 0'} and finite", name)
        if self.rho_linf is not None and not (self.rho_linf >= 0 and math.isfinite(self.rho_linf)):
            raise ArgumentError(f"rho_linf={self.rho_linf}: must be ≥ 0 and finite", "rho_linf")
        for name in ("epochs", "batch_size", "seeds", "cam_images", "eval_train", "grid_images", "threads"):
            if getattr(self, name) < 1:
                raise ArgumentError(f"{name}={getattr(self, name)}: must be ≥ 1", name)
        if self.checkpoints < 2:
            raise ArgumentError(f"checkpoints={self.checkpoints}: must be ≥ 2 (the start and the end)", "checkpoints")
        if self.upsample not in UPSAMPLING:
            raise ArgumentError(f"upsample={self.upsample!r}: choose one of {', '.join(UPSAMPLING)}", "upsample")
        if self.device not in DEVICES:
            raise ArgumentError(f"device={self.device!r}: choose one of {', '.join(DEVICES)}", "device")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ArgumentError("device='cuda': no CUDA device is visible to torch here; use device='cpu'", "device")
        if not 1 <= len(self.widths) <= 4 or any(w < 1 for w in self.widths):
            raise ArgumentError("widths: 1 to 4 positive channel counts, e.g. 8,16,32", "widths")
        if self.rho is None:
            return replace(self, rho=DEFAULT_RHO[self.dataset])
        return self


def quick_config(**overrides) -> Config:
    """``--quick``: a small class-balanced subset and few steps (about two minutes on 2 CPU
    cores with the default three optimizers and one α): 2000 training images, 10 epochs
    of batch 64 (310 steps), 5 seeds, α = 1, 200 Grad-CAM images, 7 checkpoints."""
    base = Config(init_scales=(1.0,), epochs=10, seeds=5, train_size=2000, test_size=500, cam_images=200,
                  eval_train=500, checkpoints=7)
    return replace(base, **overrides)


# ---------------------------------------------------------------------------- data
@dataclass
class _Tensors:
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_eval: torch.Tensor
    y_eval: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    x_cam: torch.Tensor
    y_cam: torch.Tensor
    mask_cam: np.ndarray
    raw_cam: np.ndarray
    mean: list[float]
    std: list[float]


def _tensors(ds: D.ImageSet, cfg: Config) -> _Tensors:
    dev = torch.device(cfg.device)
    xtr = torch.from_numpy(D.to_float(ds.x_train))
    mean = xtr.mean(dim=(0, 2, 3)).tolist()
    std = xtr.std(dim=(0, 2, 3)).clamp_min(1e-6).tolist()
    xte = torch.from_numpy(D.to_float(ds.x_test))
    ytr, yte = torch.from_numpy(ds.y_train), torch.from_numpy(ds.y_test)
    n_eval, n_cam = min(cfg.eval_train, len(ytr)), min(cfg.cam_images, len(yte))
    return _Tensors(xtr.to(dev), ytr.to(dev), xtr[:n_eval].to(dev), ytr[:n_eval].to(dev), xte.to(dev),
                    yte.to(dev), xte[:n_cam].to(dev), yte[:n_cam].to(dev),
                    D.background_mask(ds.name, ds.x_test[:n_cam]), ds.x_test[:n_cam], mean, std)


# ---------------------------------------------------------------------------- one run
@dataclass
class Run:
    """The record of one (optimizer, α, seed) training run."""

    optimizer: str
    alpha: float
    seed: int
    rho: float
    rho_relative: float | None
    init_norm: float
    final_norm: float = math.nan
    stalled: bool = False
    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    train_accuracy: list[float] = field(default_factory=list)
    test_accuracy: list[float] = field(default_factory=list)
    background_fraction: list[float | None] = field(default_factory=list)
    blank_maps: list[int] = field(default_factory=list)
    baseline_pixels: list[float] = field(default_factory=list)
    baseline_cells: list[float] = field(default_factory=list)
    grid_maps: np.ndarray | None = None  # final pixel maps of the grid images (first seed only)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("grid_maps")
        return d


@torch.no_grad()
def _evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1000) -> tuple[float, float]:
    was = model.training
    model.eval()
    loss, correct = 0.0, 0
    for i in range(0, len(y), batch):
        out = model(x[i:i + batch])
        loss += float(nn.functional.cross_entropy(out, y[i:i + batch], reduction="sum"))
        correct += int((out.argmax(1) == y[i:i + batch]).sum())
    model.train(was)
    return loss / len(y), correct / len(y)


def _train_run(model: nn.Module, run: Run, order: np.ndarray, T: _Tensors, cfg: Config, fields: Fields,
               checkpoints: Sequence[int], n_classes: int, keep_grid: bool, log: Callable[[str], None]) -> Run:
    lossf = nn.CrossEntropyLoss()
    if not get_optimizer(run.optimizer).perturbs:
        opt: torch.optim.Optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    else:
        opt = SAM(model.parameters(), torch.optim.SGD, rho=run.rho, optimizer=run.optimizer, model=model, lr=cfg.lr)
    order_t = torch.from_numpy(order).to(T.x_train.device)
    size = T.mask_cam.shape[-1]
    total = checkpoints[-1]
    t0 = time.perf_counter()

    def record(step: int) -> None:
        tl, ta = _evaluate(model, T.x_eval, T.y_eval)
        _, te = _evaluate(model, T.x_test, T.y_test)
        cams = gradcam(model, model.target_layer, T.x_cam, T.y_cam)
        maps = upsample(cams, size, cfg.upsample, fields)
        s = summarize(maps, T.mask_cam, cell_side=cams.shape[-1], method=cfg.upsample, fields=fields)
        run.steps.append(step)
        run.train_loss.append(tl)
        run.train_accuracy.append(ta)
        run.test_accuracy.append(te)
        run.background_fraction.append(s.fraction)
        run.blank_maps.append(s.n_blank)
        run.baseline_pixels.append(s.baseline_pixels)
        run.baseline_cells.append(s.baseline_cells)
        if keep_grid and step == total:
            run.grid_maps = maps[: cfg.grid_images]
        bg = "blank" if s.fraction is None else f"{s.fraction:.3f}"
        log(f"  {run.optimizer:8s} α={run.alpha:g} seed={run.seed} step {step:5d}/{total}: loss {tl:.4f} "
            f"test acc {te:.3f} background {bg} (flat {s.baseline_cells:.3f}) blank {s.n_blank} "
            f"[{time.perf_counter() - t0:.1f} s]")

    record(0)
    next_ck = 1
    for step in range(1, total + 1):
        idx = order_t[(step - 1) * cfg.batch_size: step * cfg.batch_size]
        x, y = T.x_train[idx], T.y_train[idx]

        def closure(x=x, y=y) -> torch.Tensor:
            loss = lossf(model(x), y)
            loss.backward()
            return loss

        if isinstance(opt, SAM):
            opt.step(closure)
        else:
            opt.zero_grad()
            closure()
            opt.step()
        if step == checkpoints[next_ck]:
            record(step)
            next_ck += 1
    run.final_norm = parameter_norm(model)
    run.stalled = run.train_loss[-1] >= STALL_FRACTION * math.log(n_classes)
    return run


# ---------------------------------------------------------------------------- driver
def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _torch_settings(cfg: Config) -> None:
    """torch's threads, and deterministic cuDNN kernels on CUDA (the runs must be reproducible)."""
    torch.set_num_threads(cfg.threads)
    if cfg.device == "cuda":
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def run_experiment(cfg: Config, *, log: Callable[[str], None] = _stderr) -> dict:
    """Train every (seed, α, optimizer), compare, and return the JSON-ready result
    (figures are made by :mod:`theorycheck.numerics.minor_first.e2.cnn_figures`, from ``result["_grid"]``)."""
    cfg = cfg.validate()
    _torch_settings(cfg)
    t_start = time.perf_counter()
    full = D.load(cfg.dataset, cfg.data_dir)
    ds = full.subset(cfg.train_size, cfg.test_size, seed=0)
    T = _tensors(ds, cfg)
    n_classes = len(full.classes)
    n_train = len(ds.y_train)
    steps_per_epoch = n_train // cfg.batch_size
    if steps_per_epoch < 1:
        raise ArgumentError(f"batch_size={cfg.batch_size} is larger than the {n_train} training images", "batch_size")
    total = steps_per_epoch * cfg.epochs
    checkpoints = sorted(set(np.linspace(0, total, cfg.checkpoints).round().astype(int).tolist()))
    log(f"[cnn] {cfg.dataset}: {n_train} train / {len(ds.y_test)} test images ({full.source}); "
        f"{len(cfg.optimizers)} optimizers × {len(cfg.init_scales)} init scales × {cfg.seeds} seeds, "
        f"{total} steps each (batch {cfg.batch_size}, lr {cfg.lr})")

    def build(alpha: float, seed: int) -> SmallCNN:
        torch.manual_seed(seed)
        return SmallCNN(ds.channels, n_classes, ds.size, widths=cfg.widths, alpha=alpha,
                        batchnorm=cfg.batchnorm, mean=T.mean, std=T.std).to(cfg.device)

    probe = build(1.0, cfg.seed)
    n_params = sum(p.numel() for p in probe.parameters())
    fields = receptive_fields(list(probe.features), ds.size)
    rho_linf = cfg.rho_linf if cfg.rho_linf is not None else cfg.rho / math.sqrt(n_params)

    runs: list[Run] = []
    n_runs = len(cfg.optimizers) * len(cfg.init_scales) * cfg.seeds
    for si, seed in enumerate(range(cfg.seed, cfg.seed + cfg.seeds)):
        rng = np.random.default_rng(seed)
        order = np.concatenate([rng.permutation(n_train)[: steps_per_epoch * cfg.batch_size]
                                for _ in range(cfg.epochs)])
        for alpha in cfg.init_scales:
            model0 = build(alpha, seed)
            init_norm = parameter_norm(model0)
            for opt in cfg.optimizers:
                rho = get_optimizer(opt).radius(rho_linf if get_optimizer(opt).discontinuous else cfg.rho)
                # ‖ε‖₂ relative to ‖θ₀‖: ρ for ℓ2, ρ√P for ℓ∞ (the optimizer's; None where it depends on ∇L or w)
                eps_norm = get_optimizer(opt).torch_ascent_norm(rho, n_params)
                if eps_norm is None and rho == 0:
                    eps_norm = 0.0
                run = Run(opt, alpha, seed, rho, None if eps_norm is None else eps_norm / init_norm, init_norm)
                log(f"[cnn] run {len(runs) + 1}/{n_runs}: {opt} α={alpha:g} seed={seed} "
                    f"(ρ={rho:.4g}, ‖ε‖/‖θ₀‖="
                    f"{'varies' if run.rho_relative is None else format(run.rho_relative, '.4f')})")
                runs.append(_train_run(copy.deepcopy(model0), run, order, T, cfg, fields, checkpoints, n_classes,
                                       keep_grid=si == 0, log=log))
    comparisons = compare(runs, cfg)
    summary = summary_line(comparisons, cfg.dataset)
    log(f"[cnn] done in {time.perf_counter() - t_start:.0f} s")
    cfg_json = asdict(cfg)
    cfg_json["rho_linf"] = rho_linf
    return {
        "command": "cnn",
        "dataset": cfg.dataset,
        "data_source": full.source,
        "config": cfg_json,
        "n_params": n_params,
        "n_train": n_train,
        "n_test": int(len(ds.y_test)),
        "steps": total,
        "checkpoint_steps": checkpoints,
        "background": {
            "definition": _background_definition(cfg.dataset),
            "upsample": cfg.upsample,
            "cam_images": int(len(T.y_cam)),
            "target": "true class",
            "cells_per_side": len(fields),
            "receptive_field": int(max(hi - lo + 1 for lo, hi in fields.intervals)),
        },
        "stall_rule": f"final training loss ≥ {STALL_FRACTION} · ln {n_classes}",
        "runs": [r.as_dict() for r in runs],
        "comparisons": comparisons,
        "summary": summary,
        "_grid": {"runs": [r for r in runs if r.grid_maps is not None], "images": ds.x_test[: cfg.grid_images],
                  "masks": T.mask_cam[: cfg.grid_images]},
    }


def _background_definition(name: str) -> str:
    if name == "mnist":
        return f"pixels with un-normalised intensity < {D.MNIST_BACKGROUND_THRESHOLD} (of 1)"
    return (f"border ring of width {D.BORDER_WIDTH} px (proxy: {name} has no object masks; the centre box "
            "is taken as the object)")


class CnnResult(Record):
    """The E2 experiment's results; :meth:`as_dict` is what ``theorycheck cnn --json`` prints and what
    ``DIR/results.json`` holds (keys and meanings: docs/commands/cnn.md)."""

    KEYS = Keys(
        "cnn", "command", "dataset", "data_source", "n_params", "n_train", "n_test", "steps", "checkpoint_steps",
        "stall_rule", strength=STRENGTH_KEYS,
        config=Keys("cnn.config", "dataset", "optimizers", "init_scales", "rho", "rho_linf", "lr", "epochs",
                    "batch_size", "seed", "seeds", "train_size", "test_size", "cam_images", "eval_train",
                    "checkpoints", "widths", "batchnorm", "upsample", "grid_images", "device", "threads", "data_dir"),
        background=Keys("cnn.background", "definition", "upsample", "cam_images", "target", "cells_per_side",
                        "receptive_field"),
        runs=ListOf(Keys("cnn.run", "optimizer", "alpha", "seed", "rho", "rho_relative", "init_norm", "final_norm",
                         "stalled", "steps", "train_loss", "train_accuracy", "test_accuracy", "background_fraction",
                         "blank_maps", "baseline_pixels", "baseline_cells")),
        comparisons=ListOf(Keys("cnn.comparison", "optimizer", "alpha", "matched", "n_pairs", "n_stalled_pairs",
                                "n_all_blank_pairs", "stalled_seeds", "differences", "mean_difference", "ci95",
                                "verdict", "gd_fraction", "sam_fraction", "gd_steps", "sam_steps", "baseline_pixels",
                                "baseline_cells")),
        summary=Keys("cnn.summary", "verdict", "supported", "counts",
                     settings=ListOf(Keys("cnn.setting", "optimizer", "alpha", "steps", "loss", "verdict"))),
        figures=Keys("cnn.figures", "gradcam_grid", "curves"))


def cnn(cfg: Config, out: str | Path, *, log: Callable[[str], None] = _stderr) -> CnnResult:
    """Run the E2 experiment (:func:`run_experiment`), draw its figures in ``out``
    (``gradcam_grid.png``, ``curves.png``) and write ``out/results.json``."""
    from theorycheck.numerics.minor_first.e2 import cnn_figures as figures

    from theorycheck.jsonio import emit
    from theorycheck.outputs import make_parent, output_folder

    out = output_folder(out, "out")
    make_parent(out / "results.json", "out")
    result = run_experiment(cfg, log=log)
    grid = figures.gradcam_grid(result, out / "gradcam_grid.png")
    curves = figures.curves(result, out / "curves.png")
    result.pop("_grid")
    result["figures"] = {"gradcam_grid": str(grid), "curves": str(curves)}
    result["strength"] = float_check().as_dict()  # measured on trained networks (float32), no proof
    emit(result, str(out / "results.json"))
    return CnnResult(result)
