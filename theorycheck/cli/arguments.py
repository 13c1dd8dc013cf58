"""Options shared by several commands, and turning them into library arguments.

Only the standard library is imported here (numpy and the library load when a command
runs), so that building the parser — ``theorycheck --help`` — stays instant.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers.registry import default_name, names
from theorycheck.vocabulary import ARRAY_BACKENDS, LOSSES, REGRESSION_LOSSES, SWEEP_BACKENDS


def add_setting_arguments(p: argparse.ArgumentParser, *, optimizer: bool = True, alpha: bool = True,
                          regression: bool = False) -> None:
    """The data/depth/optimizer/ρ/α options shared by the commands that build a Setting
    (``regression``: the squared loss is offered too)."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--z", metavar="Z1,Z2,…", help="one example z = y·x, comma-separated (label +1)")
    src.add_argument("--data", metavar="FILE.csv",
                     help="examples as CSV rows x1,…,xd,y (y = ±1" + ("; real y with --param pm|uv)" if regression else ")"))
    p.add_argument("--depth", "-L", type=int, default=2, help="number of layers L ≥ 1 (default 2)")
    if optimizer:
        p.add_argument("--optimizer", choices=names(), default=None,
                       help=f"flow to follow (default {default_name()}" + ("; with --param pm|uv, the first whose "
                                                                            "regression flow is integrated)" if regression else ")"))
    p.add_argument("--rho", default="1", metavar="R", help="SAM radius ρ ≥ 0 (default 1), read exactly (0.1 is 1/10)")
    if alpha:
        p.add_argument("--alpha", default="1", metavar="A|A1,…,Ad",
                       help="initialisation: one scale α for all layers, or one per feature (default 1), read exactly")
    losses = [*LOSSES, *REGRESSION_LOSSES] if regression else list(LOSSES)
    p.add_argument("--loss", choices=losses, default=None,
                   help="loss ℓ (default logistic" + ("; squared with --param pm|uv, its default there)" if regression
                                                       else ")"))


def setting_from_args(args: argparse.Namespace, **overrides: Any):
    """Build and validate a Setting from the options of :func:`add_setting_arguments`: the numbers typed
    (``--z``, ``--rho``, ``--alpha``) go to the Setting as text, read there once and exactly."""
    from theorycheck.setting import Setting

    param = getattr(args, "param", "product")
    loss = args.loss if args.loss is not None else (REGRESSION_LOSSES[0] if param != "product" else LOSSES[0])
    kw = dict(depth=args.depth, loss=loss, rho=args.rho, param=param)
    if hasattr(args, "optimizer"):
        kw["optimizer"] = args.optimizer
    if hasattr(args, "alpha"):
        kw["alpha"] = args.alpha
    kw.update(overrides)
    if args.z is not None:
        return Setting.from_z(args.z, **kw)
    return Setting.from_csv(args.data, **kw)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """Tolerances and where to run (shared by sweep commands)."""
    p.add_argument("--rtol", type=float, default=1e-8, help="relative tolerance (default 1e-8)")
    p.add_argument("--atol", type=float, default=1e-10, help="absolute tolerance (default 1e-10)")
    p.add_argument("--backend", choices=SWEEP_BACKENDS, default="processes",
                   help="where to run: this process, local processes (default) or a Dask cluster")
    p.add_argument("--workers", type=int, default=None,
                   help="number of processes / Dask workers to use (the compiled kernel: threads)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address (tcp://HOST:PORT); implies --backend dask")
    p.add_argument("--array-backend", choices=ARRAY_BACKENDS, default="auto",
                   help="auto (default): the compiled kernel (numba) for C4's reduced ℓ2 ODE when numba is "
                        "installed, numpy otherwise; numba (reduced ODE only); numpy; torch (CUDA when present)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")


def run_options(args: argparse.Namespace):
    """The sweep's RunOptions from :func:`add_run_arguments`'s options."""
    from theorycheck.api.calls import RunOptions

    return RunOptions(rtol=args.rtol, atol=args.atol, array_backend=args.array_backend)


def backend_of(args: argparse.Namespace) -> str:
    """--scheduler implies the dask backend."""
    return "dask" if args.scheduler else args.backend


def parse_range(text: str, what: str, *, log: bool = False):
    """``"LO:HI:N"`` -> N points from LO to HI (geometric with ``log``)."""
    import numpy as np

    parts = str(text).split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        lo, hi, n = float(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        raise TheorycheckError(f"{what} {text!r}: write LO:HI:N, e.g. 0.01:1:50") from None
    from theorycheck.api.calls import MAX_MEMBERS

    if n > MAX_MEMBERS:
        raise TheorycheckError(f"{what} {text!r}: N = {n} exceeds the limit of {MAX_MEMBERS} points")
    if n < 1 or not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo or (n > 1 and hi == lo):
        raise TheorycheckError(f"{what} {text!r}: need finite LO < HI and N ≥ 1")
    if log:
        if lo <= 0:
            raise TheorycheckError(f"{what} {text!r}: a log grid needs LO > 0")
        return np.geomspace(lo, hi, n)
    return np.linspace(lo, hi, n)


def positive(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number > 0")
    return v


def count(text: str) -> int:
    """argparse type: a whole number ≥ 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number ≥ 1")
    return v
