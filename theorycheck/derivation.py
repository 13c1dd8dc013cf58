"""A flow as the symbolic layer derives it, for reading: :func:`derive` gives a
:class:`Derivation` (sympy expressions; :meth:`Derivation.as_dict` is what
``theorycheck derive --format json`` prints)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.vocabulary import check_loss, check_optimizer

__all__ = ["Derivation", "PmDerivation", "derivation", "derive"]


def derivation(depth: int, optimizer: str, *, balanced: bool, dim: int | None = None,
               loss: str = "logistic", examples: int = 1) -> dict:
    """The flow as sympy expressions: coordinate form (any d) and, with ``dim``, the
    explicit system for that d. Returns a dict of named expressions and a description."""
    check_optimizer(optimizer)
    check_loss(loss)
    if depth < 1:
        raise TheorycheckError(f"--depth {depth}: the depth L must be ≥ 1")
    if dim is not None and not 1 <= dim <= 6:
        raise TheorycheckError(f"--dim {dim}: choose 1..6 (the explicit system grows quickly)")
    if examples < 1 or examples > 3:
        raise TheorycheckError(f"--examples {examples}: choose 1..3")
    out: dict[str, object] = {"depth": depth, "optimizer": optimizer, "balanced": balanced}
    if balanced:
        if examples != 1:
            raise TheorycheckError("--balanced applies to the one-example rescaled flow: drop --examples")
        out["time"] = "rescaled"
        out["equations"] = {
            "du_j/dtau": cf.balanced_field(depth, optimizer),
            "uhat_j": cf.balanced_perturbed_point(depth, optimizer),
        }
        if optimizer == "sam-l2":
            out["equations"]["N**2"] = sp.Sum(cf.balanced_norm_summand(depth).subs(
                {cf.z_j: sp.Symbol("z_k"), cf.u_j: sp.Symbol("u_k")}), (sp.Symbol("k"), 1, sp.Symbol("d")))
        if optimizer == "sam-linf":
            out["equations"]["du_j/dtau (z_j > 0, u_j > 0)"] = cf.balanced_field_linf_positive(depth)
        if dim:
            u = sp.Matrix(1, dim, lambda _, j: sp.Symbol(f"u{j + 1}", real=True))
            z = sy.data_symbols(1, dim)
            F = sy.balanced_rescaled_flow(u, z, depth, optimizer)
            out["system"] = {f"du{j + 1}/dtau": F[0, j] for j in range(dim)}
        return out
    if examples == 1:
        out["time"] = "rescaled"
        G, w, g = sy.layer_gradient_coordinate(depth)
        out["equations"] = {
            "dw_kj/dtau": sp.Symbol("z_j") * sp.Symbol("Π_{m≠k} ŵ_mj"),
            "what_kj": sp.Symbol("w_kj") + sy.perturbation_coordinate(optimizer)[2].subs(
                sy.g_coord, -sp.Symbol("z_j") * sp.Symbol("Π_{m≠k} w_mj")),
            "S**2": sp.Symbol("Σ_k Σ_j z_j² (Π_{m≠k} w_mj)²"),
        }
    else:
        out["time"] = "real"
        out["equations"] = {
            "dw_kj/dt": -sp.Symbol("G_j(ŵ)") * sp.Symbol("Π_{m≠k} ŵ_mj"),
            "G_j(w)": sp.Symbol("(1/n) Σ_i ℓ'(<β(w), z_i>) z_ij"),
            "l'(s)": sy.loss_derivative(loss),
            "what_kj": sp.Symbol("w_kj") + sy.perturbation_coordinate(optimizer)[2].subs(
                sy.g_coord, sp.Symbol("G_j") * sp.Symbol("Π_{m≠k} w_mj")),
        }
    if dim:
        W = sy.layer_symbols(depth, dim)
        if examples == 1:
            F = sy.rescaled_flow(W, sy.data_symbols(1, dim), optimizer)
            name = "dw{k}_{j}/dtau"
        else:
            F = sy.flow(W, sy.data_symbols(examples, dim), optimizer, loss)
            name = "dw{k}_{j}/dt"
        out["system"] = {name.format(k=k + 1, j=j + 1): F[k, j] for k in range(depth) for j in range(dim)}
    return out


@dataclass(frozen=True)
class Derivation:
    """``equations``: name -> sympy expression (coordinate form, any d); ``system``: the
    explicit system for ``dim`` (empty without it); ``time``: "rescaled" (one example,
    dτ = −ℓ′(m̂) dt) or "real"."""

    depth: int
    optimizer: str
    balanced: bool
    time: str
    equations: dict
    system: dict
    dim: int | None = None
    loss: str = "logistic"
    examples: int = 1

    def as_dict(self) -> dict:
        """Keys: depth, optimizer, balanced, time, equations (sympy str), latex, system (with
        ``dim``)."""
        out = {"depth": self.depth, "optimizer": self.optimizer, "balanced": self.balanced, "time": self.time,
               "equations": {k: sp.sstr(v) for k, v in self.equations.items()},
               "latex": {k: sp.latex(v) for k, v in self.equations.items()}}
        if self.system:
            out["system"] = {k: sp.sstr(v) for k, v in self.system.items()}
        return out


@dataclass(frozen=True)
class PmDerivation:
    """The gradient flow of the signed parametrisation β = w₊^D − w₋^D with the squared loss
    (``equations``: name → text, from :mod:`theorycheck.symbolic.regression`)."""

    depth: int
    equations: dict

    def as_dict(self) -> dict:
        """Keys: depth, param ("pm"), loss ("squared"), equations."""
        return {"depth": self.depth, "param": "pm", "loss": "squared", "equations": dict(self.equations)}


def derive(depth: int = 2, optimizer: str = "sam-l2", *, balanced: bool = False, dim: int | None = None,
           loss: str = "logistic", examples: int = 1, param: str = "product") -> Derivation | PmDerivation:
    """The GD, ℓ2-SAM or ℓ∞-SAM flow of depth L as derived by sympy: one example in rescaled
    time (``examples`` 2–3: real time, loss ``loss``), ``balanced`` for w_k = u, and with
    ``dim`` (1..6) the explicit system for that d. ``param="pm"`` (with ``loss="squared"``):
    the gradient flow of β = w₊^D − w₋^D for regression."""
    if param not in ("product", "pm"):
        raise TheorycheckError(f"--param {param!r}: choose product or pm")
    if param == "pm" or loss == "squared":
        if param != "pm" or loss != "squared" or depth < 2:
            raise TheorycheckError("--param pm goes with --loss squared and --depth ≥ 2")
        from theorycheck.symbolic.regression import derivation as pm_derivation

        return PmDerivation(depth, pm_derivation(depth))
    res = derivation(depth, optimizer, balanced=balanced, dim=dim, loss=loss, examples=examples)
    return Derivation(depth=depth, optimizer=optimizer, balanced=balanced, time=res["time"],
                      equations=res["equations"], system=res.get("system", {}), dim=dim, loss=loss,
                      examples=examples)
