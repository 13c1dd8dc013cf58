"""A torch SAM optimizer (ℓ2, ℓ∞, n-SAM, ASAM: any registered optimizer with a full-batch step) that wraps
any base optimizer.

``w ← w − η ∇Lo(w + ε(w))`` (THEORY.md, Setting), with ε the optimizer object's own torch step
(:meth:`theorycheck.optimizers.Optimizer.torch_perturbation`: its symbolic ascent compiled for torch):
ℓ2 ``ρ g / S`` with ``S`` the ℓ2 norm of the gradient over *all* parameters jointly, ℓ∞
``ρ sign(g)``, n-SAM ``ρ g``, ASAM ``ρ T(w)² g / ‖T(w) ⊙ g‖₂`` (T = |w| + η, the norm again over all
parameters). The base optimizer (SGD
with lr η gives the plain SAM iteration) takes its step from the original weights with
the gradient computed at the perturbed ones.

The API follows davda54/sam (``first_step`` / ``second_step`` / closure ``step``) and
fixes its three well-known problems: ρ = 0 reproduces the base optimizer bit for bit;
BatchNorm running statistics are not updated by the perturbed pass (pass ``model=``, or
wrap the second forward in :func:`frozen_bn_statistics`); ``state_dict`` carries the base
optimizer's state, so a reloaded SAM continues exactly where it stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from theorycheck.optimizers import get as get_optimizer

__all__ = ["SAM", "frozen_bn_statistics"]

_BN = (nn.modules.batchnorm._BatchNorm,)


@contextlib.contextmanager
def frozen_bn_statistics(model: nn.Module | None) -> Iterator[None]:
    """Run a forward pass without changing any BatchNorm buffer: ``running_mean``,
    ``running_var`` and ``num_batches_tracked`` are saved on entry and copied back on exit
    (exactly, whatever the momentum). ``None`` is a no-op."""
    if model is None:
        yield
        return
    saved: list[tuple[torch.Tensor, torch.Tensor]] = []
    for m in model.modules():
        if isinstance(m, _BN):
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                buf = getattr(m, name, None)
                if buf is not None:
                    saved.append((buf, buf.detach().clone()))
    try:
        yield
    finally:
        with torch.no_grad():
            for buf, copy in saved:
                buf.copy_(copy)


class SAM(torch.optim.Optimizer):
    """Sharpness-aware minimisation around a base optimizer.

    Args:
        params: the parameters (or parameter groups) to optimise.
        base_optimizer: an optimizer *class* (e.g. ``torch.optim.SGD``), built on the same
            parameter groups with ``**base_kwargs``.
        rho: the SAM radius ρ ≥ 0 (stored per group, so schedulers may change it; the ℓ2
            norm S is always taken over all groups jointly).
        optimizer: a registered optimizer's name or object with a full-batch step
            (:attr:`~theorycheck.optimizers.Optimizer.has_torch_step`: ``"sam-l2"`` for Foret et al.'s SAM; ℓ∞-SAM;
            n-SAM; gradient descent gives ε = 0: the base optimizer with a second, identical
            gradient evaluation). 1-SAM perturbs each example apart and is refused (ValueError).
        model: the module being trained; when given, the closure ``step`` freezes its
            BatchNorm statistics during the perturbed forward pass.

    Usage, explicit::

        loss_fn(model(x), y).backward(); sam.first_step(zero_grad=True)
        with frozen_bn_statistics(model): loss_fn(model(x), y).backward()
        sam.second_step(zero_grad=True)

    or ``sam.step(closure)`` with a closure that zeroes nothing, runs forward and backward
    and returns the loss (the gradients are zeroed by ``step``).
    """

    def __init__(self, params, base_optimizer: type[torch.optim.Optimizer], *, rho: float = 0.05,
                 optimizer, model: nn.Module | None = None, **base_kwargs: Any) -> None:
        self.opt = get_optimizer(optimizer)
        if not self.opt.has_torch_step:
            raise ValueError(f"{self.opt.title} has no full-batch step: the torch SAM takes {optimizer!r} only per example")
        if not rho >= 0:
            raise ValueError(f"rho must be ≥ 0, got {rho!r}")
        if isinstance(base_optimizer, torch.optim.Optimizer):
            raise TypeError("pass the base optimizer class (e.g. torch.optim.SGD) and its keyword arguments")
        super().__init__(params, dict(rho=float(rho), **base_kwargs))
        self.kind = self.opt.name
        self.model = model
        self.base_optimizer = base_optimizer(self.param_groups, **base_kwargs)
        # one list of groups shared by both: schedulers acting on SAM act on the base
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    # ------------------------------------------------------------------ the two halves
    def _params_with_grad(self) -> list[tuple[dict, torch.Tensor]]:
        return [(g, p) for g in self.param_groups for p in g["params"] if p.grad is not None]

    @torch.no_grad()
    def grad_norm(self) -> torch.Tensor:
        """S = ‖∇Lo‖₂ over all parameters jointly, or ‖T(w) ⊙ ∇Lo‖₂ for a weighted step (ASAM,
        :meth:`~theorycheck.optimizers.Optimizer.torch_norm_weight`); 0 when no parameter has a gradient."""
        params = [p for _, p in self._params_with_grad()]
        if not params:
            return torch.zeros(())
        parts = []
        for p in params:
            T = self.opt.torch_norm_weight(p) if self.opt.weighted else None
            parts.append(torch.linalg.vector_norm(p.grad if T is None else T * p.grad))
        return torch.linalg.vector_norm(torch.stack(parts))

    @torch.no_grad()
    def first_step(self, zero_grad: bool = False) -> None:
        """Move to ``w + ε(∇Lo(w))`` and remember ``w``. With S = 0 (a stationary point) the
        ℓ2 direction is undefined and ε = 0 is used."""
        S = self.grad_norm()
        for group, p in self._params_with_grad():
            self.state[p]["old_p"] = p.detach().clone()
            eps = self.opt.torch_perturbation(p.grad, S.to(p.grad.dtype), group["rho"], p)  # the optimizer's own step
            if eps is not None:  # None: ε undefined here (ℓ2 at ∇Lo = 0), w is kept
                p.add_(eps)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad: bool = False) -> None:
        """Return to ``w`` and let the base optimizer step with the perturbed gradient."""
        for group in self.param_groups:
            for p in group["params"]:
                old = self.state[p].pop("old_p", None) if p in self.state else None
                if old is not None:
                    p.copy_(old)
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def step(self, closure: Callable[[], torch.Tensor] | None = None) -> torch.Tensor:  # type: ignore[override]
        """One SAM step; ``closure`` runs forward + backward and returns the loss at ``w``
        (called twice: at ``w`` and at ``w + ε``). Returns the loss at ``w``."""
        if closure is None:
            raise ValueError("SAM.step needs a closure (forward + backward, returning the loss); "
                             "or call first_step / second_step yourself")
        closure = torch.enable_grad()(closure)
        self.zero_grad()
        loss = closure()
        self.first_step(zero_grad=True)
        with frozen_bn_statistics(self.model):
            closure()
        self.second_step()
        return loss

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:  # type: ignore[override]
        """The base optimizer's state dict (its groups carry ρ) and the perturbation kind."""
        return {"base": self.base_optimizer.state_dict(), "perturbation": self.kind}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:  # type: ignore[override]
        kind = state_dict.get("perturbation")
        if kind != self.kind:
            raise ValueError(f"state was saved by a {kind!r} SAM; this one is {self.kind!r}")
        self.base_optimizer.load_state_dict(state_dict["base"])
        self.param_groups = self.base_optimizer.param_groups
