"""The E2.linear rule over several class pairs, each pair one Dask task.

:func:`linear_images_pairs` runs, for every class pair, the replicate of
:mod:`theorycheck.proofs.minor_first.e2_linear` (α in the middle of the pair's intermediate range, GD and each
SAM variant from the same start, D = bg(SAM) − bg(GD) at matched training loss) and applies that
module's verdict rule (written before any run) to the pairs: holds / fails / inconclusive with
the 95 % t-interval. One task per pair runs every optimizer, so the pair's α scans are done once.
The tasks run on :func:`theorycheck.sweep.run.run_tasks` (a local Dask scheduler — processes or
threads — or a Dask cluster). The runs are deterministic: the result does not depend on the
scheduler.
"""

from __future__ import annotations

import time

from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.optimizers import GD, default_set
from theorycheck.pixel_task import parse_classes
from theorycheck.record import Keys, ListOf, MapOf, Record
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import float_check

__all__ = ["linear_images_pairs", "PairsResult", "VERDICT_WORDS"]

#: the verdict rule's three answers (proofs/e2_linear.py's ok: True / False / None)
VERDICT_WORDS = {True: "holds", False: "fails", None: "inconclusive"}
SAM_VARIANTS = tuple(o.name for o in default_set("product", "logistic", 2) if o.perturbs and not o.weighted)

_IMAGES: dict = {}


class PairsResult(Record):
    """What ``theorycheck linear-images --pairs … --json`` prints (keys and meanings:
    docs/commands/linear-images.md); ``results`` is keyed by optimizer."""

    KEYS = Keys(
        "linear-images.pairs", strength=STRENGTH_KEYS,
        config=Keys("linear-images.pairs.config", "pairs", "optimizers", "n_train", "depth", "rho", "loss_target",
                    "max_steps", "linf_max_steps", "gd_scan_hi", "collapse_brackets_given", "limit", "array_backend",
                    "scheduler", "workers"),
        results=MapOf(Keys(
            "linear-images.pairs.result",
            verdict=Keys("linear-images.pairs.verdict", "verdict", "ok", "pairs_used", "pairs_left_out",
                         "differences", "positive", "mean", "ci95", "why"),
            pairs=ListOf(Keys("linear-images.pairs.pair", "classes", "n_train", "alpha_collapse", "alpha_gd_like",
                              "usable", "why", "alpha", "rho", "status", "matched_loss", GD.name, "sam", "difference",
                              "flat_baseline", "l1_limit_background", "l1_limit_why",
                              angle_to_l1=Keys("linear-images.pairs.angle_to_l1", GD.name, "sam"))))),
        execution=Keys("linear-images.pairs.execution", "scheduler", "workers", "tasks", "address"),
        seconds=Keys("linear-images.pairs.seconds", "total",
                     tasks=ListOf(Keys("linear-images.pairs.task", "classes", "wall", "cpu"))))


def _pair_task(job: dict) -> dict:
    """One class pair, every optimizer (runs in a Dask worker)."""
    from theorycheck.proofs.minor_first.e2_linear import pair_difference

    from theorycheck import imagedata as D

    if "mnist" not in _IMAGES:
        _IMAGES["mnist"] = D.load("mnist")
    w, c = time.perf_counter(), time.thread_time()  # this task's thread (threads share the process)
    rows = {op: pair_difference(tuple(job["classes"]), op, n_train=job["n_train"], rho=job["rho"],
                                depth=job["depth"], loss_target=job["loss_target"], max_steps=job["max_steps"],
                                array_backend=job["array_backend"], images=_IMAGES["mnist"],
                                linf_max_steps=job["linf_max_steps"], gd_scan_hi=job["gd_scan_hi"],
                                collapse_bracket=job["collapse_bracket"], limit=job["limit"])
            for op in job["optimizers"]}
    return {"classes": list(job["classes"]), "rows": rows,
            "seconds": {"wall": time.perf_counter() - w, "cpu": time.thread_time() - c}}


def linear_images_pairs(pairs=((0, 1), (2, 3), (4, 5), (6, 7), (8, 9)), *, optimizers=SAM_VARIANTS,
                        n_train: int | None = None, depth: int = 2, rho: float = 1.0, loss_target: float = 1e-2,
                        max_steps: int = 1500, linf_max_steps: int | None = None, gd_scan_hi: float = 2.0,
                        collapse_brackets: dict | None = None, limit: bool = True, array_backend: str = "numpy",
                        scheduler="processes", workers: int | None = None,
                        progress: bool | None = None) -> PairsResult:
    """E2.linear over MNIST class ``pairs`` (module docstring): every pair's replicate for each
    SAM variant in ``optimizers`` against GD, on ``n_train`` class-balanced training images per
    pair (None: every training image of the two classes), then the verdict rule per variant.
    Step budgets: ``max_steps`` per run (and the α scans'); ℓ∞-SAM runs ``linf_max_steps`` (None:
    the verify run's min(max_steps, 600)). ``gd_scan_hi``: the α_gd scan's upper end over ρ (the
    rule's 2); ``collapse_brackets``: {(a, b): [lo, hi]} α_c brackets from an earlier run of the
    same deterministic scan (same pair, size, ρ, depth, max_steps), used instead of scanning again.
    ``limit``: also the ℓ1 max-margin limit's background fraction per pair (an LP on the pair's
    images; reported beside D, not used by the verdict).
    ``scheduler``: "processes", "threads" or "sync" (local Dask), or a Dask scheduler address /
    ``distributed.Client``; ``workers``: local workers (default one per pair up to the cores)."""
    from theorycheck.proofs.minor_first.e2_linear import verdict

    from theorycheck.sweep.run import run_tasks

    t0 = time.perf_counter()
    try:
        pairs = [tuple(parse_classes(p)) for p in pairs]
    except (TheorycheckError, TypeError, ValueError) as exc:
        raise ArgumentError(f"pairs: {exc}", "pairs") from None
    if not pairs or any(len(p) != 2 or p[1] is None for p in pairs):
        raise ArgumentError("pairs must list class pairs (a, b), e.g. [(0, 1), (2, 3)]", "pairs")
    if len(set(pairs)) != len(pairs):
        raise ArgumentError("pairs: each class pair once", "pairs")
    optimizers = tuple(optimizers)
    if not optimizers or any(o not in SAM_VARIANTS for o in optimizers) or len(set(optimizers)) != len(optimizers):
        raise ArgumentError(f"optimizers must list SAM variants from {', '.join(SAM_VARIANTS)}, each once "
                            "(GD is the reference of every pair)", "optimizers")
    if n_train is not None and n_train < 2:
        raise ArgumentError(f"n_train = {n_train}: give at least 2 (one per class) or None for every image",
                            "n_train")
    if depth not in (1, 2, 3):
        raise ArgumentError(f"depth {depth}: choose 1, 2 or 3", "depth")
    for name, v in (("rho", rho), ("loss_target", loss_target)):
        if not (isinstance(v, (int, float)) and 0 < v < float("inf")):
            raise ArgumentError(f"{name} = {v!r}: must be > 0 and finite", name)
    for name, v in (("max_steps", max_steps), ("linf_max_steps", 1 if linf_max_steps is None else linf_max_steps)):
        if not (isinstance(v, int) and v >= 1):
            raise ArgumentError(f"{name} = {v!r}: give a whole number ≥ 1", name)
    if not (isinstance(gd_scan_hi, (int, float)) and 2.0 <= gd_scan_hi < float("inf")):
        raise ArgumentError(f"gd_scan_hi = {gd_scan_hi!r}: give a finite number ≥ 2 (the rule's scan end)",
                            "gd_scan_hi")
    given = {tuple(parse_classes(k)): v for k, v in (collapse_brackets or {}).items()}
    for k, v in given.items():
        if len(v) != 2 or not (0 < v[0] < v[1] < float("inf")):
            raise ArgumentError(f"collapse_brackets[{k}] = {v!r}: give [lo, hi] with 0 < lo < hi", "collapse_brackets")
    jobs = [{"classes": list(p), "gd_scan_hi": float(gd_scan_hi), "limit": bool(limit),
             "collapse_bracket": None if p not in given else [float(x) for x in given[p]], "optimizers": list(optimizers), "n_train": n_train, "rho": float(rho),
             "depth": int(depth), "loss_target": float(loss_target), "max_steps": int(max_steps),
             "linf_max_steps": linf_max_steps, "array_backend": array_backend} for p in pairs]
    done, how = run_tasks(_pair_task, jobs, scheduler=scheduler, workers=workers, progress=progress,
                          label="linear-images pairs")
    results = {}
    for op in optimizers:
        rows = [{**d["rows"][op]} for d in done]
        v = verdict(rows)
        results[op] = {"verdict": {"verdict": VERDICT_WORDS[v["ok"]], **v}, "pairs": rows}
    return PairsResult({
        "config": {"pairs": [list(p) for p in pairs], "optimizers": list(optimizers), "n_train": n_train,
                   "depth": int(depth), "rho": float(rho), "loss_target": float(loss_target),
                   "max_steps": int(max_steps), "linf_max_steps": linf_max_steps, "gd_scan_hi": float(gd_scan_hi),
                   "collapse_brackets_given": sorted([list(k) for k in given]), "limit": bool(limit),
                   "array_backend": array_backend,
                   "scheduler": scheduler if isinstance(scheduler, str) else "distributed", "workers": workers},
        "results": results,
        "execution": how,
        "seconds": {"total": time.perf_counter() - t0,
                    "tasks": [{"classes": d["classes"], **d["seconds"]} for d in done]},
        "strength": float_check().as_dict(),  # float64 flows on the pixels, no proof
    })
