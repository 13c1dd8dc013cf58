"""The optimizer object: what a flow, a solver, a figure or the CLI needs to know about one
optimizer, asked of the object instead of compared with its name.

An optimizer is a subclass of :class:`Optimizer` with its name, title and one-line description,
and a method :meth:`Optimizer.ascent` returning its ascent step ε from the symbolic layer
(:class:`theorycheck.symbolic.model.Ascent`). Everything else is read off that formula (GD's ε is
0, ℓ2-SAM's uses the joint norm, ℓ∞-SAM's jumps, unnormalised steps have no rescaled time), and a
module overrides only what differs: its torch perturbation, its sliding rule, what it integrates.
The symbolic layer is imported on first use: ``import theorycheck`` stays light.
"""

from __future__ import annotations

from typing import Any

from theorycheck.vocabulary import PARAMETRISATIONS, REGRESSION_PARAMETRISATIONS

__all__ = ["Optimizer", "PARAMETRISATIONS", "REGRESSION_PARAMETRISATIONS"]


class Optimizer:
    """One optimizer: ``name`` (the word a user types), ``title`` (for text and figures),
    ``description`` (one line), ``color`` (its colour in figures) and :meth:`ascent`."""

    name: str = ""
    title: str = ""
    description: str = ""
    color: str = "tab:gray"
    #: whether the default optimizer sets include it (the experiments' and property draws' defaults:
    #: linear-images, cnn, the strategies' settings, ``symbolic.model.OPTIMIZERS``). An optimizer added
    #: after those defaults were documented sets False: it runs wherever it is named, and the defaults and
    #: their documented outputs do not change.
    default_sets: bool = True

    def ascent(self) -> Any:
        """The symbolic ascent step (:class:`theorycheck.symbolic.model.Ascent`)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<optimizer {self.name}>"

    def __str__(self) -> str:
        return self.name

    # ------------------------------------------------------------------ read off the formula
    @property
    def perturbs(self) -> bool:
        """ε is not identically 0: ρ matters (False for gradient descent)."""
        return not self.ascent().trivial

    @property
    def normalised(self) -> bool:
        """ε divides by the joint gradient norm (ℓ2-SAM): the field is singular where ∇Lo = 0."""
        return self.ascent().uses_norm

    @property
    def weighted(self) -> bool:
        """ε depends on the weights as well as on the gradient (ASAM: ρ T(w)² g/‖T(w) g‖₂): the balanced
        closed forms and the batched engines, written for ε(g), do not take it (:meth:`supports` says where
        it runs)."""
        return self.ascent().weighted

    @property
    def discontinuous(self) -> bool:
        """ε jumps where a gradient entry changes sign (ℓ∞-SAM): needs :meth:`sliding`."""
        return self.ascent().discontinuous

    @property
    def per_example(self) -> bool:
        """ε is taken from each example's own gradient and the perturbed gradients averaged (1-SAM)."""
        return self.ascent().per_example

    @property
    def rescalable(self) -> bool:
        """One example has a rescaled time τ (THEORY.md, "Rescaled flows"): ε is invariant under a
        positive factor of the gradient. False for the unnormalised steps."""
        return self.ascent().scale_invariant

    def radius(self, rho: float) -> float:
        """The radius this optimizer uses of a setting's ρ: ρ, or 0 when ε ≡ 0."""
        return float(rho) if self.perturbs else 0.0

    # ------------------------------------------------------------------ what it integrates
    def supports(self, param: str, loss: str, depth: int) -> str | None:
        """None when the engine integrates this optimizer's flow for parametrisation ``param``, loss
        ``loss`` and depth ``depth``; else the reason, one line (``derive`` and ``Setting`` refuse
        with it). The classification flows (``product``, logistic / exponential) take the optimizers
        whose ascent is one full-batch step; the regression flows are the subclasses' business."""
        if param == "product":
            if loss == "squared":
                return "the squared loss goes with the regression parametrisations pm and uv"
            if self.per_example:
                return f"{self.title} perturbs each example apart: its product flow is not built (use pm or uv)"
            if not self.rescalable:
                return (f"{self.title}'s ascent is unnormalised: the product classification flows are not built "
                        "for it (use pm or uv with the squared loss)")
            return None
        if param in REGRESSION_PARAMETRISATIONS:
            if loss != "squared":
                return f"param={param!r} is a regression parametrisation: it goes with loss='squared'"
            return self.regression_refusal(param, depth)
        return f"unknown parametrisation {param!r}: choose one of {', '.join(PARAMETRISATIONS)}"

    def regression_refusal(self, param: str, depth: int) -> str | None:
        """Why the regression flow of ``param`` at ``depth`` is not integrated (None: it is)."""
        return f"{self.title} on the regression parametrisations is not built"

    # ------------------------------------------------------------------ discontinuity
    def sliding(self, L: int, loss: str = "logistic", backend: str = "numpy") -> Any:
        """Filippov's sliding rule where the field is discontinuous
        (:class:`theorycheck.symbolic.forms.SlidingForms`: the weight λ with λ a₊ + (1 − λ) a₋ = 0 and
        the combination λ f₊ + (1 − λ) f₋), or None for a continuous field."""
        if not self.discontinuous:
            return None
        from theorycheck.symbolic.forms import sliding_forms

        return sliding_forms(L, loss, backend)

    # ------------------------------------------------------------------ torch
    @property
    def has_torch_step(self) -> bool:
        """The torch optimizer :class:`theorycheck.cnn.sam.SAM` can take this optimizer's step."""
        return not self.per_example

    def torch_perturbation(self, grad, norm, rho, weight=None):
        """ε for one parameter tensor's gradient ``grad`` at its value ``weight`` (the parameter
        tensor; needed by a :attr:`weighted` step) given the joint norm ``norm`` of all gradients (a 0-d
        tensor: ‖T(w) ⊙ g‖₂ over every tensor, :meth:`torch_norm_weight`) and the radius ``rho``: the symbolic
        ascent compiled for torch (:func:`theorycheck.symbolic.forms.perturbation`). None when the step is
        undefined (a normalised step at norm 0: the caller keeps w)."""
        if self.per_example:
            raise ValueError(f"{self.title} perturbs each example apart: it has no full-batch torch step")
        if self.normalised and not bool(norm > 0):
            return None
        from theorycheck.symbolic.forms import perturbation

        return perturbation(self.ascent(), "torch")(grad, norm, rho, weight)

    def torch_norm_weight(self, weight):
        """T(w) of one parameter tensor ``weight`` in the joint norm S = ‖T(w) ⊙ ∇Lo‖₂ (compiled from
        :meth:`theorycheck.symbolic.model.Ascent.weight`), or None for the unweighted norm ‖∇Lo‖₂."""
        from theorycheck.symbolic.forms import norm_weight

        T = norm_weight(self.ascent(), "torch")
        return None if T is None else T(weight)

    def torch_ascent_norm(self, rho: float, n_params: int) -> float | None:
        """‖ε‖₂ of the full-batch ascent step over ``n_params`` parameters when it does not depend on
        the gradient (ρ for ℓ2, ρ√P for ℓ∞, 0 for GD), else None (also for a weighted step)."""
        if not self.perturbs:
            return 0.0
        if self.weighted:
            return None
        if self.normalised:
            return float(rho)
        if self.discontinuous:
            return float(rho) * float(n_params) ** 0.5
        return None
