"""The library calls behind the commands that are not a flow, a threshold or a verdict: re-checking a
certificate, deriving a flow, listing packs and asking one for its prediction, the experiments on images
(CNNs, diagonal networks over pixels) and the figures of a run. Each command of the CLI is a thin shell over
one of these or over the functions of :mod:`theorycheck.api`; the CLI imports nothing else of the library's
upper stages (``tests/test_cli_thin.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from theorycheck.errors import TheorycheckError

if TYPE_CHECKING:
    from theorycheck.derivation import Derivation, RegressionDerivation
    from theorycheck.numerics.minor_first.e2.cnn import CnnResult
    from theorycheck.numerics.minor_first.e2.cnn import Config as CnnConfig
    from theorycheck.numerics.minor_first.e2.linear_images import Config as ImagesConfig
    from theorycheck.numerics.minor_first.e2.linear_images import LinearImagesResult
    from theorycheck.numerics.minor_first.e2.linear_pairs import PairsResult
    from theorycheck.packs import PackList
    from theorycheck.proved.check import CertificateCheck

#: besides these, MAX_GRID_POINTS, MAX_MEMBERS, MARKS, RunOptions, StepStatus and Verdict (see ``__getattr__``)
__all__ = ["check_certificate", "claim_candidates",
           "cnn_config", "derive", "linear_images", "linear_images_config", "linear_images_pairs",
           "list_experiments", "list_packs", "plot_heatmap", "plot_trajectory", "predict_limit", "run_cnn", "time_grid", "visits"]


def __getattr__(name: str) -> Any:
    """The constants and types a command's options are checked against, from the stage that owns them."""
    owners = {"MAX_GRID_POINTS": "theorycheck.sweep.grid", "MAX_MEMBERS": "theorycheck.sweep.grid",
              "MARKS": "theorycheck.symbolic.theorem", "StepStatus": "theorycheck.symbolic.theorem",
              "RunOptions": "theorycheck.sweep.run", "Verdict": "theorycheck.claims.claim"}
    if name not in owners:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(owners[name]), name)


# ---------------------------------------------------------------------------- certificates
def check_certificate(certificate: dict | str | Path) -> CertificateCheck:
    """Re-check a proof certificate (``thresholds --prove --certificate FILE``; L = 2 or even L ≥ 4): the dict,
    or the path of its JSON (read with bounded size and nesting). Returns the checker's result
    (``ok``, ``steps``, ``lower``/``upper``, ``inputs``, ``failures``, ``strength``); a file that is not a
    certificate is a one-line :class:`TheorycheckError`."""
    from theorycheck.proofs.minor_first.proved.checker import check_certificate as check_any_certificate
    from theorycheck.proved.check import read_certificate

    where = certificate if not isinstance(certificate, dict) else "the certificate"
    cert = certificate if isinstance(certificate, dict) else read_certificate(certificate)
    try:
        return check_any_certificate(cert)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise TheorycheckError(f"check-certificate: {where} is not a readable certificate ({e})") from None


# ---------------------------------------------------------------------------- derivations and packs
def derive(depth: int = 2, optimizer: str | None = None, *, balanced: bool = False, dim: int | None = None,
           loss: str = "logistic", examples: int = 1, param: str = "product", max_seconds: float | None = 60.0,
           progress: bool | None = None) -> Derivation | RegressionDerivation:
    """The flow of ``optimizer`` at depth L as derived by the symbolic layer (:func:`theorycheck.derivation.derive`):
    coordinate form, explicit system for ``dim``, or a regression flow in its log chart."""
    from theorycheck.derivation import derive as derive_flow

    return derive_flow(depth, optimizer, balanced=balanced, dim=dim, loss=loss, examples=examples, param=param,
                       max_seconds=max_seconds, progress=progress)


def list_packs() -> PackList:
    """Every installed pack (built-in first, then entry points) with its theorems, claims and experiments counted."""
    from theorycheck.packs import list_packs as installed

    return installed()


def list_experiments(pack: str | None = None) -> list[dict]:
    """The experiments ``reproduce`` runs, one row each: ``name``, ``pack``, ``title`` (every pack's, or one's)."""
    import importlib

    from theorycheck.packs import select

    return [{"name": name, "pack": p.name, "title": importlib.import_module(mod).TITLE}
            for p in select(pack) for name, mod in p.experiments().items()]


def claim_candidates(pack: str | None = None) -> list[tuple[str, Any]]:
    """The claims ``verify`` chooses from, as (pack name, claim): every pack's, or one pack's, then the user's."""
    from theorycheck.packs import candidates

    return candidates(pack)


def predict_limit(pack: str, X, y, **options) -> dict:
    """(Not ``predict``: that is the stage ``theorycheck.proofs.minor_first.predict``.) A pack's predicted limit for the data (rows of ``X``, targets or labels ``y``), with its ``strength``."""
    from theorycheck.packs import predict as pack_predict

    return pack_predict(pack, X, y, **options)


# ---------------------------------------------------------------------------- experiments on images
def cnn_config(*, quick: bool = False, **options) -> CnnConfig:
    """The CNN experiment's validated Config: the ``quick`` preset (or the defaults), then ``options``."""
    from dataclasses import replace

    from theorycheck.numerics.minor_first.e2.cnn import Config, quick_config

    return replace(quick_config() if quick else Config(), **options).validate()


def run_cnn(config=None, out: str | Path = "out/cnn") -> CnnResult:
    """E2 on CNNs (GD vs SAM, Grad-CAM) with ``config`` (:func:`cnn_config`), figures and files under ``out``;
    a one-line error when torch is not installed."""
    from theorycheck.cnn import require_torch

    require_torch()
    from theorycheck.numerics.minor_first.e2.cnn import cnn

    return cnn(config if config is not None else cnn_config(), out)


def linear_images_config(*, quick: bool = False, **options) -> ImagesConfig:
    """The linear-images experiment's Config: the ``quick`` preset (or the defaults), then ``options``."""
    from dataclasses import replace

    from theorycheck.numerics.minor_first.e2.linear_images import Config, quick_config

    return replace(quick_config() if quick else Config(), **options).validate()


def linear_images(config=None, *, save: str | None = None, figures: str | None = None) -> LinearImagesResult:
    """GD vs ℓ2/ℓ∞-SAM on a diagonal linear network over pixels (β as the pixel map), with ``config``
    (:func:`linear_images_config`); arrays saved under ``save``, figures under ``figures``."""
    from theorycheck.numerics.minor_first.e2.linear_images import linear_images as run_images

    return run_images(config if config is not None else linear_images_config(), save=save, figures=figures)


def linear_images_pairs(**options) -> PairsResult:
    """E2.linear over MNIST class pairs (:func:`theorycheck.numerics.minor_first.e2.linear_pairs.linear_images_pairs`, its options)."""
    from theorycheck.numerics.minor_first.e2.linear_pairs import linear_images_pairs as run_pairs

    return run_pairs(**options)


# ---------------------------------------------------------------------------- grids and figures of a run
def time_grid(t_max: float, nt: int, *, log: bool = False, t_min: float | None = None):
    """The time grid of a heatmap: ``nt`` points up to ``t_max`` (geometric with ``log``)."""
    from theorycheck.sweep.grid import time_grid as grid

    return grid(t_max, nt, log=log, t_min=t_min)


def visits(row) -> list[int]:
    """The sequence of distinct j† values one α's row of a heatmap visits."""
    from theorycheck.sweep.grid import visits as seq

    return seq(row)


def plot_heatmap(result, path: str | Path) -> str:
    """Draw a heatmap's j† over (time, α) into ``path`` (.png, .svg or .pdf); returns the path."""
    from theorycheck.report import plots

    plots.save(plots.heatmap_figure(result), path)
    return str(path)


def plot_trajectory(trajectory, path: str | Path) -> str:
    """Draw a trajectory (β_j, j†, switches) into ``path``; returns the path."""
    from theorycheck.report.plots import plot_trajectory as draw

    draw(trajectory, path)
    return str(path)
