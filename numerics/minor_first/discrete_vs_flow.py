"""Discrete SAM against the flow: is the η → 0 limit what the discrete algorithm does?

What it runs: one example z = (1, …, 6), L = 2, logistic loss, ρ = 1, ℓ2-SAM, real time.
The flow (batch.MultiExample, rtol 1e-10) and the algorithm w ← w − η ∇Lo(w + ε(w))
(batch.discrete_run, from the same compiled field) for η ∈ {0.2, 0.05, 0.0125} (two with
--quick), at α = α_c(1 + 0.01) (regime 2, near collapse: the plateau) and α = 0.5 (regime 2,
sequential amplification), t = kη up to 300 (grid geometric from 1e-2, 120 points).

Figure ``discrete_vs_flow``: top, the loss against t for the flow (black) and each η;
bottom, j† against t.

Expected: the flows are the η → 0 limits of the algorithms (THEORY.md, Setting) at fixed ρ:
the distance between the discrete and continuous loss curves shrinks like η (first order),
and for small η the discrete j† follows the flow's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from theorycheck.numerics.minor_first._common import describe_row
from theorycheck.proofs.minor_first.predict import grids as G

from theorycheck import status as bst
from theorycheck import sweep as S
from theorycheck.batched import discrete as bdisc
from theorycheck.batched import systems as bsys
from theorycheck.report import plots
from theorycheck.vocabulary import TimeKind

NAME = "discrete-vs-flow"
TITLE = "Discrete ℓ2-SAM (step η) against the ℓ2-SAM flow, real time"
Z = np.arange(1.0, 7.0)
RHO = 1.0


def compute(*, quick: bool, ctx) -> dict:
    ac = float(G.collapse_threshold_per_rho(Z, [RHO], backend="serial", progress=False)["alpha_c"][0])
    alphas = np.array([ac * 1.01, 0.5])
    ts = S.time_grid(300.0, 120, log=True, t_min=1e-2)
    etas = (0.2, 0.05) if quick else (0.2, 0.05, 0.0125)
    opts = S.RunOptions(rtol=1e-10, atol=1e-12)
    flow = S.heatmap(Z[None, :], thresholds=G.heatmap_thresholds, optimizer="sam-l2", rho=RHO, alphas=alphas, times=ts, method="multi", opts=opts,
                     backend="serial", progress=ctx.progress)
    flow.meta["alpha_c"] = ac
    out = {"flow": flow}
    for eta in etas:
        system = bsys.MultiExample(Z[None, :], alphas, RHO, optimizer="sam-l2")
        res = bdisc.discrete_run(system, eta, ts)
        arrays = {"alpha": alphas, "time": res.grid, "status": res.status, "t_stop": res.t_stop, **res.obs}
        meta = {"kind": "discrete", "optimizer": "sam-l2", "rho": RHO, "eta": eta, "depth": 2, "n": 1, "d": Z.size,
                "time_kind": TimeKind.REAL, "integrator": res.meta, "versions": S.versions(), "seconds": res.seconds}
        out[f"eta-{eta:g}"] = S.SweepResult(arrays, meta)
    # cross-check: discrete.run (layers, sam_step) for the largest η at the second α
    from theorycheck.setting import Setting
    from theorycheck.solvers import discrete

    eta = etas[0]
    traj = discrete.run(Setting.from_z(Z, optimizer="sam-l2", rho=RHO, alpha=float(alphas[1])), eta=eta,
                        steps=int(round(300.0 / eta)))
    out[f"eta-{eta:g}"].meta["crosscheck"] = {"alpha": float(alphas[1]), "t": traj.t,
                                              "log_beta_max": traj.log_abs_beta.max(axis=1)}
    return out


def _etas(results: dict) -> list[float]:
    return sorted((float(r.meta["eta"]) for k, r in results.items() if k.startswith("eta-")), reverse=True)


def draw(results: dict, out: Path) -> list[Path]:
    flow = results["flow"]
    alphas = flow["alpha"]
    fig, axes = plots.figure(5.4, 3.4, ncols=2, nrows=2)
    import matplotlib as mpl

    cols = mpl.colormaps["viridis"]
    etas = _etas(results)
    for c, a in enumerate(alphas):
        ax, axj = axes[0, c], axes[1, c]
        ax.loglog(flow["time"], flow["loss"][c], "k-", lw=2.4, label="flow (η → 0)")
        axj.step(flow["time"], flow["jdag"][c], where="post", color="k", lw=2.4, label="flow")
        for i, eta in enumerate(etas):
            r = results[f"eta-{eta:g}"]
            col = cols(0.15 + 0.7 * i / max(len(etas) - 1, 1))
            ok = r["jdag"][c] >= 0
            ax.loglog(r["time"][ok], r["loss"][c][ok], "-", color=col, lw=1.2, label=f"discrete, η = {eta:g}")
            axj.step(r["time"][ok], r["jdag"][c][ok] + 0.08 * (i + 1), where="post", color=col, lw=1.2,
                     label=f"η = {eta:g}")
        title = "α = α_c(1 + 0.01)" if c == 0 else f"α = {a:g}"
        ax.set_title(f"ℓ2-SAM loss, {title}, ρ = {RHO:g}")
        ax.set_xlabel("time t")
        ax.set_ylabel("training loss")
        ax.legend(fontsize=7)
        axj.set_xscale("log")
        axj.set_yticks(range(0, Z.size + 1))
        axj.set_ylim(-0.3, Z.size + 0.6)
        axj.set_xlabel("time t")
        axj.set_ylabel("j†")
        axj.set_title(f"dominant feature, {title}")
        axj.legend(fontsize=7, loc="lower right")
    return plots.save(fig, Path(out) / "discrete_vs_flow", ["png", "svg"])


def summarize(results: dict) -> tuple[list[str], list[str]]:
    flow = results["flow"]
    alphas = flow["alpha"]
    etas = _etas(results)
    summary, dev = [], []
    for key in (k for k in results if k.startswith("eta-")):
        cc = results[key].meta.get("crosscheck")
        if cc:
            r = results[key]
            c = int(np.argmin(np.abs(alphas - cc["alpha"])))
            tc = np.asarray(cc["t"], float)
            ok = r["jdag"][c] >= 0
            ref = np.interp(r["time"][ok], tc, np.asarray(cc["log_beta_max"], float))
            d = float(np.max(np.abs(ref - r["log_beta_max"][c][ok])))
            summary.append(f"cross-check: discrete.run (sam_step on the layers), η = {r.meta['eta']:g}, "
                           f"α = {cc['alpha']:g}: max |Δ ln max_j |β_j|| = {d:.2g} against batch.discrete_run.")
            if d > 1e-8:
                dev.append(f"batch.discrete_run and discrete.run differ by {d:.2g} in ln|β| (η = {r.meta['eta']:g}).")
    for c, a in enumerate(alphas):
        dists = []
        summary.append(f"flow, α = {a:.6g}: j† visits {describe_row(flow['jdag'][c], flow['time'], 't')}.")
        for eta in etas:
            r = results[f"eta-{eta:g}"]
            ok = (r["jdag"][c] >= 0) & np.isfinite(r["loss"][c])
            # the discrete iterates sit at t = kη: compare with the flow interpolated there (log–log)
            lf = np.interp(np.log(r["time"][ok]), np.log(flow["time"]), np.log(flow["loss"][c]))
            dist = float(np.max(np.abs(np.log(r["loss"][c][ok]) - lf))) if ok.any() else np.inf
            dists.append(dist)
            st = bst.STATUS[int(r["status"][c])]
            summary.append(f"discrete, η = {eta:g}, α = {a:.6g}: status {st}; max |ln loss − ln loss_flow| = "
                           f"{dist:.3g}; j† visits {describe_row(r['jdag'][c], r['time'], 't')}.")
            if st != "done":
                dev.append(f"discrete, η = {eta:g}, α = {a:.4g}: stopped ({st}) at t = {r['t_stop'][c]:.3g} — the "
                           "step overshoots (u_j would change sign), which the flow never does.")
        if len(dists) >= 2 and all(np.isfinite(dists)):
            orders = [np.log(d1 / d2) / np.log(e1 / e2) for d1, d2, e1, e2 in zip(dists, dists[1:], etas, etas[1:])]
            orders = [round(float(o), 2) for o in orders]
            summary.append(f"α = {a:.6g}: observed order of convergence in η: {orders} "
                           "(1 expected for an explicit one-step method).")
            if not all(0.6 < o < 1.6 for o in orders):
                dev.append(f"α = {a:.4g}: the discrete loss does not approach the flow at first order in η "
                           f"(orders {orders}): at these η the algorithm is not yet in the "
                           "flow's asymptotic regime (near α_c the escape from the collapse region amplifies the "
                           "O(η) differences).")
        small = results[f"eta-{etas[-1]:g}"]
        if S.visits(small["jdag"][c]) != S.visits(flow["jdag"][c]):
            dev.append(f"α = {a:.4g}: with the smallest η = {etas[-1]:g} the discrete j† sequence "
                       f"{S.visits(small['jdag'][c])} differs from the flow's {S.visits(flow['jdag'][c])}.")
    return summary, dev
