"""The optimizers, one module each, and their registry.

``theorycheck.optimizers.get(name)`` gives the object; ``names()`` the registered names in order
(the CLI's ``--optimizer`` choices). A new optimizer is one module (a subclass of
:class:`~theorycheck.optimizers.base.Optimizer` with its ascent step built with the symbolic layer's
:class:`~theorycheck.symbolic.model.Ascent`) plus its import and its ``register`` line below. No other module writes an optimizer's name (``tests/test_optimizer_names.py``).
"""

from __future__ import annotations

from theorycheck.optimizers.asam import ASAM
from theorycheck.optimizers.base import PARAMETRISATIONS, REGRESSION_PARAMETRISATIONS, Optimizer
from theorycheck.optimizers.gd import GD
from theorycheck.optimizers.n_sam import N_SAM
from theorycheck.optimizers.one_sam import ONE_SAM
from theorycheck.optimizers.registry import check_optimizer, default_name, descriptions, names, register, registered
from theorycheck.optimizers.sam_l2 import SAM_L2
from theorycheck.optimizers.sam_linf import SAM_LINF

__all__ = ["Optimizer", "GD", "SAM_L2", "SAM_LINF", "N_SAM", "ONE_SAM", "ASAM", "PARAMETRISATIONS",
           "REGRESSION_PARAMETRISATIONS", "get", "names", "register", "check_optimizer", "default_name",
           "descriptions", "supporting", "default_set", "check_supported"]

register(GD)
register(SAM_L2, default=True)
register(SAM_LINF)
register(N_SAM)
register(ONE_SAM)
register(ASAM)


def get(optimizer) -> Optimizer:
    """The optimizer object of a registered name (or the object itself); an unknown name is a
    one-line SettingError naming the choices."""
    return registered(optimizer)


def supporting(param: str = "product", loss: str = "logistic", depth: int = 2) -> tuple[Optimizer, ...]:
    """The registered optimizers whose flow the engine integrates for (param, loss, depth)."""
    return tuple(o for o in (registered(n) for n in names()) if o.supports(param, loss, depth) is None)


def default_set(param: str = "product", loss: str = "logistic", depth: int = 2) -> tuple[Optimizer, ...]:
    """:func:`supporting` less the optimizers kept out of the default sets (:attr:`Optimizer.default_sets`):
    what an experiment or a property draw runs when no optimizer is named."""
    return tuple(o for o in supporting(param, loss, depth) if o.default_sets)


def check_supported(optimizer, param: str, loss: str, depth: int) -> Optimizer:
    """The optimizer object, or a one-line SettingError saying why its flow is not integrated."""
    from theorycheck.errors import SettingError

    opt = registered(optimizer)
    why = opt.supports(param, loss, depth)
    if why is not None:
        ok = ", ".join(o.name for o in supporting(param, loss, depth)) or "none"
        raise SettingError(f"optimizer={opt.name!r}, param={param!r}, loss={loss!r}, depth={depth}: {why} "
                           f"(integrated here: {ok})")
    return opt
