"""``theorycheck derive``: print a flow as derived by the symbolic layer."""

from __future__ import annotations

import argparse

import sympy as sp

from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy


def derivation(depth: int, optimizer: str, *, balanced: bool, dim: int | None = None,
               loss: str = "logistic", examples: int = 1) -> dict:
    """The flow as sympy expressions: coordinate form (any d) and, with ``dim``, the
    explicit system for that d. Returns a dict of named expressions and a description."""
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


def _fmt(expr, fmt: str) -> str:
    if fmt == "latex":
        return sp.latex(expr)
    if fmt == "json":
        return sp.sstr(expr)
    return sp.pretty(expr, use_unicode=True) if "\n" in sp.pretty(expr) else sp.sstr(expr)


def run(args: argparse.Namespace) -> int:
    from theorycheck.cli.main import emit_json

    if args.param == "pm" or args.loss == "squared":
        from theorycheck.symbolic.regression import derivation as pm_derivation

        if args.param != "pm" or args.loss != "squared" or args.depth < 2:
            raise TheorycheckError("--param pm goes with --loss squared and --depth ≥ 2")
        eqs = pm_derivation(args.depth)
        if args.format == "json":
            emit_json({"depth": args.depth, "param": "pm", "loss": "squared", "equations": eqs})
        else:
            print(f"signed parametrisation beta = w_p^{args.depth} - w_m^{args.depth}, squared loss, gradient flow")
            for k, v in eqs.items():
                print(f"{k}: {v}")
        return 0
    res = derivation(args.depth, args.optimizer, balanced=args.balanced, dim=args.dim,
                     loss=args.loss, examples=args.examples)
    if args.format == "json":
        payload = {k: v for k, v in res.items() if k not in ("equations", "system")}
        payload["equations"] = {k: sp.sstr(v) for k, v in res["equations"].items()}
        payload["latex"] = {k: sp.latex(v) for k, v in res["equations"].items()}
        if "system" in res:
            payload["system"] = {k: sp.sstr(v) for k, v in res["system"].items()}
        emit_json(payload)
        return 0
    title = (f"{args.optimizer} flow, L = {args.depth}, "
             f"{'balanced (w_k = u for all k), ' if args.balanced else ''}"
             f"{'one example, rescaled time dτ = −ℓ′(m̂) dt' if res['time'] == 'rescaled' else f'{args.examples} examples, real time'}")
    print(title)
    print("=" * len(title))
    def show(k, v):
        text = _fmt(v, args.format)
        print(f"{k} =\n{text}\n" if "\n" in text else f"{k} = {text}")

    for k, v in res["equations"].items():
        show(k, v)
    if "system" in res:
        print(f"\nexplicit system for d = {args.dim}:")
        for k, v in res["system"].items():
            show(k, v)
    return 0


def register(sub) -> None:
    p = sub.add_parser("derive", help="print the GD / SAM flow derived by sympy",
                       description="Print the GD, ℓ2-SAM or ℓ∞-SAM flow for depth L, as derived by the "
                       "symbolic layer: coordinate form for any d, and with --dim the explicit system.")
    p.add_argument("--depth", "-L", type=int, default=2, help="number of layers L ≥ 1 (default 2)")
    p.add_argument("--optimizer", choices=sy.OPTIMIZERS, default="sam-l2")
    p.add_argument("--balanced", action="store_true", help="restrict to balanced layers w_k = u (one example)")
    p.add_argument("--dim", type=int, default=None, help="also print the explicit system for this d (1..6)")
    p.add_argument("--examples", type=int, default=1, help="number of examples n (1: rescaled time; 2-3: real time)")
    p.add_argument("--loss", choices=(*sy.LOSSES, "squared"), default="logistic")
    p.add_argument("--param", choices=["product", "pm"], default="product",
                   help="product β = w_1⊙…⊙w_L (default) or pm β = w₊^D − w₋^D (with --loss squared)")
    p.add_argument("--format", choices=["text", "latex", "json"], default="text")
    p.set_defaults(func=run)
