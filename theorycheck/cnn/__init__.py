"""Real networks (THEORY.md E2): a torch SAM optimizer, small CNNs with an init scale α,
real-image loaders, Grad-CAM background attention, and the paired GD-vs-SAM experiment.

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
