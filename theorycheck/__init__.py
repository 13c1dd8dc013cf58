"""theorycheck: derive, integrate and verify implicit-bias claims of GD and SAM on L-layer
linear diagonal networks (Moon, Si, Yun, arXiv 2603.08290).

The public API (``import theorycheck as tc``; documented in docs/api.md)::

    s = tc.Setting.from_z([1, 2, 3], optimizer="sam-l2", rho=1.0, alpha=0.5)
    tr = tc.solve(s, t_max=50)          # Trajectory; tr.as_dict() == `theorycheck trajectory --json`
    tc.thresholds(s)                    # ThresholdsResult (α_c and the closed-form boundaries)
    tc.verify("C4")                     # VerifyResult

Every result has ``as_dict()``: exactly the JSON the matching CLI command prints. Names are
imported on first use, so ``import theorycheck`` loads neither sympy, scipy.optimize,
matplotlib nor torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from theorycheck.errors import ArgumentError, NotSeparableError, SettingError, TheorycheckError
from theorycheck.version import __version__

#: public name -> (module, attribute); imported on first access
_LAZY: dict[str, tuple[str, str]] = {
    "Setting": ("theorycheck.setting", "Setting"),
    "Init": ("theorycheck.setting", "Init"),
    "solve": ("theorycheck.api", "solve"),
    "max_margin": ("theorycheck.api", "max_margin"),
    "describe": ("theorycheck.api", "describe"),
    "reproduce": ("theorycheck.api", "reproduce"),
    "thresholds": ("theorycheck.api", "thresholds"),
    "prove_trajectory": ("theorycheck.api", "prove_trajectory"),
    "exact_inputs": ("theorycheck.setting", "exact_inputs"),
    "heatmap": ("theorycheck.api", "heatmap"),
    "proved_regime_map": ("theorycheck.proofs.minor_first.proved.regime_map", "proved_regime_map"),
    "RunOptions": ("theorycheck.sweep.run", "RunOptions"),
    "SweepResult": ("theorycheck.sweep.result", "SweepResult"),
    "verify": ("theorycheck.api", "verify"),
    "run_claim": ("theorycheck.api", "run_claim"),
    "prove": ("theorycheck.api", "prove"),
    "derive": ("theorycheck.api", "derive"),
    "check_certificate": ("theorycheck.api", "check_certificate"),
    "list_packs": ("theorycheck.api", "list_packs"),
    "list_experiments": ("theorycheck.api", "list_experiments"),
    "claim_candidates": ("theorycheck.api", "claim_candidates"),
    "predict_limit": ("theorycheck.api", "predict_limit"),
    "run_cnn": ("theorycheck.api", "run_cnn"),
    "cnn_config": ("theorycheck.api", "cnn_config"),
    "linear_images": ("theorycheck.api", "linear_images"),
    "linear_images_config": ("theorycheck.api", "linear_images_config"),
    "linear_images_pairs": ("theorycheck.api", "linear_images_pairs"),
    "Claim": ("theorycheck.claims.claim", "Claim"),
    "Outcome": ("theorycheck.claims.claim", "Outcome"),
    "register_claim": ("theorycheck.claims.registry", "register_claim"),
    "unregister_claim": ("theorycheck.claims.registry", "unregister_claim"),
    "packs": ("theorycheck.packs", None),
    "optimizers": ("theorycheck.optimizers", None),
    "vocabulary": ("theorycheck.vocabulary", None),
}

__all__ = ["ArgumentError", "Claim", "Init", "NotSeparableError", "Outcome", "RunOptions", "Setting", "SettingError", "SweepResult",
           "TheorycheckError", "__version__", "check_certificate", "claim_candidates", "cnn_config", "derive", "describe", "exact_inputs", "heatmap", "linear_images", "linear_images_config", "linear_images_pairs", "list_experiments",
           "list_packs", "max_margin", "optimizers",
           "packs", "predict_limit", "prove", "prove_trajectory", "proved_regime_map", "register_claim", "reproduce", "run_claim", "run_cnn", "solve",
           "thresholds", "unregister_claim", "verify",
           "vocabulary"]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'theorycheck' has no attribute {name!r}") from None
    mod = importlib.import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from theorycheck import optimizers, packs, vocabulary  # noqa: F401
    from theorycheck.api import (  # noqa: F401
        check_certificate,
        claim_candidates,
        cnn_config,
        derive,
        describe,
        heatmap,
        linear_images,
        linear_images_config,
        linear_images_pairs,
        list_experiments,
        list_packs,
        max_margin,
        predict_limit,
        prove,
        prove_trajectory,
        reproduce,
        run_claim,
        run_cnn,
        solve,
        thresholds,
        verify,
    )
    from theorycheck.claims.claim import Claim, Outcome  # noqa: F401
    from theorycheck.claims.registry import register_claim, unregister_claim  # noqa: F401
    from theorycheck.setting import Init, Setting, exact_inputs  # noqa: F401
    from theorycheck.sweep.result import SweepResult  # noqa: F401
    from theorycheck.sweep.run import RunOptions  # noqa: F401
