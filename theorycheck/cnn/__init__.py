"""Real networks in torch: a SAM optimizer for any registered optimizer with a full-batch step, small CNNs with
an init scale α, real-image loaders and Grad-CAM background attention (the first paper's paired GD-vs-SAM
experiment E2 on them is its pack's, :mod:`theorycheck.numerics.minor_first.e2.cnn`).

torch and captum are optional dependencies: nothing in this package imports them at
``import theorycheck`` time; :func:`require_torch` turns their absence into one line.
"""

from __future__ import annotations

from theorycheck.errors import TheorycheckError

INSTALL_HINT = 'install torch==2.13.0 and captum: pip install "torch==2.13.0" && pip install -e ".[torch]"'


def require_torch() -> None:
    """Raise a one-line :class:`TheorycheckError` when torch or captum is missing."""
    try:
        import torch  # noqa: F401, I001  (torch first: captum needs it)
        import captum  # noqa: F401
    except ImportError as exc:
        raise TheorycheckError(f"the cnn experiment needs torch and captum ({exc.name} is missing): "
                               f"{INSTALL_HINT}") from None
