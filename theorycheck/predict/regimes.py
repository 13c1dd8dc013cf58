"""Where an initialisation lies among the regimes of one example (C2, C3, C5): the regime
thresholds in α — closed forms where THEORY.md gives one, computed where not — and, for a
given α, its regime and the trajectory's switches. :func:`thresholds` is what
``theorycheck thresholds`` prints; :func:`thresholds_data` what ``--data`` prints."""

from __future__ import annotations

import numpy as np

from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.predict import thresholds as th
from theorycheck.record import Record
from theorycheck.setting import Setting, parse_floats
from theorycheck.symbolic import forms as C
from theorycheck.vocabulary import REGIME_DESCRIPTIONS

__all__ = ["REGIMES", "ThresholdsResult", "thresholds", "thresholds_data"]


class ThresholdsResult(Record):
    """Keys (as the README documents): optimizer, depth, z, rho; ℓ2-SAM: alpha_all_shrink,
    alpha_gd_like, alpha_collapse (each {value, value_text, closed_form, expression, note, …});
    L ≥ 3: initial_rate, alpha_all_grow, small_alpha, equilibrium; with α: alpha,
    initial_index, regime, regime_name and the trajectory's trajectory_initial_index,
    final_index, final_index_status, final_index_reason, switches, collapsed, collapse_time, blowup_time, stopped_because, time_kind
    (and warning when the regime and the trajectory disagree); ℓ∞-SAM: alpha, grows,
    stationary, predicted_index, predicted_direction, blowup_times (L ≥ 3); GD:
    predicted_index. ``--data``: data, n, d, alpha_collapse (not certified, with evidence)."""

    _THRESHOLDS = ("alpha_all_shrink", "alpha_all_grow", "alpha_gd_like", "alpha_collapse")

    def _repr_markdown_(self) -> str:
        """A notebook's view: each threshold with its digits and how it was obtained, then where
        ``alpha`` lies and what its trajectory does (the numbers of :meth:`as_dict`)."""
        from theorycheck.markdown import number, table

        d = self.as_dict()
        where = (f"z = ({', '.join(number(v, 4) for v in d['z'])})" if "z" in d
                 else f"data {d.get('data')} ({d.get('n')} example{'s' * (d.get('n') != 1)})")
        head = f"**thresholds of {d.get('optimizer')}**, L = {d.get('depth')}, ρ = {number(d.get('rho'))}, {where}"
        rows = []
        for key in self._THRESHOLDS:
            if key in d and d[key] is not None:
                t = d[key]
                value = t.get("value_text") or number(t.get("value"), 12)
                how = (f"closed form {t['expression']}" if t.get("closed_form") else
                       ("certified" if t.get("certificate") else "computed (not certified)"))
                rows.append((key, value, how, t.get("note") or ""))
        parts = [head]
        if rows:
            parts.append(table(("threshold", "value", "how", "note"), rows))
        facts = []
        if "alpha" in d:
            a = d["alpha"]
            facts.append(("α", number(a) if np.ndim(a) == 0 else "(" + ", ".join(number(v) for v in np.ravel(a)) + ")"))
        for key in ("regime", "regime_name", "initial_index", "predicted_index", "final_index"):
            if key in d and d[key] is not None:
                facts.append((key, d[key]))
        if "switches" in d:
            sym = "τ" if d.get("time_kind") == "rescaled" else "t"
            facts.append(("j† of the trajectory", " → ".join(
                [str(d.get("trajectory_initial_index"))] + [f"{w['to']} ({sym} = {number(w['time'])})"
                                                            for w in d["switches"]])))
        if d.get("collapsed"):
            facts.append(("collapse", f"{number(d['collapse_time'], 10)}"))
        if "warning" in d:
            facts.append(("warning", d["warning"]))
        if facts:
            parts.append(table(("", "value"), facts))
        return "\n\n".join(parts)


#: regime code -> what happens (the one table: :data:`theorycheck.vocabulary.REGIMES`)
REGIMES = REGIME_DESCRIPTIONS


#: the longest default horizon (rescaled τ): 40/min|z_j| overflows for subnormal z_j
MAX_DEFAULT_HORIZON = 1e300


def default_horizon(z) -> float:
    """The trajectory's default horizon: 40/min_j |z_j| over z_j ≠ 0 (40 time units of the
    slowest coordinate), at most :data:`MAX_DEFAULT_HORIZON`."""
    zmin = float(np.min(np.abs(z[z != 0])))
    return min(40.0 / zmin, MAX_DEFAULT_HORIZON) if zmin > 40.0 / MAX_DEFAULT_HORIZON else MAX_DEFAULT_HORIZON


def _trajectory_facts(setting: Setting, t_max: float) -> dict:
    """The trajectory's own facts. Its j†(0+) is reported as ``trajectory_initial_index`` so
    that it never overwrites the thresholds' ``initial_index`` (derived from the initial rates,
    ties broken at second order and among equal z_j by the smallest index)."""
    from theorycheck.observe import summary
    from theorycheck.solvers.integrate import solve

    tr = solve(setting, t_max=t_max)
    s = summary(tr)
    out = {k: s[k] for k in ("final_index", "final_index_status", "final_index_reason", "switches", "collapsed", "collapse_time",
                             "blowup_time", "stopped_because", "time_kind")}
    out["trajectory_initial_index"] = s["initial_index"]
    return out


def _depth_l(out: dict, z: np.ndarray, rho: float, L: int, alpha, setting, T) -> dict:
    """ℓ2-SAM at depth L ≥ 3 (predict/depth.py): derived initial-rate thresholds, α_c(L) for even
    L (certified bracket), the statement of what happens at small α, and with ``alpha`` the
    initial index, the side of α_c and the trajectory."""
    from theorycheck.predict import depth as dl

    out.update(dl.thresholds(z, rho, L))
    if alpha is not None:
        if np.size(alpha) != 1:
            raise ArgumentError("give one scalar alpha for ℓ2-SAM (uniform init)", "alpha")
        a = float(np.asarray(alpha).reshape(-1)[0])
        out["alpha"] = a
        out["initial_index"] = dl.initial_index(z, a, rho, L)
        ac = out["alpha_collapse"]
        if ac["value"] is None:
            out["regime_name"] = "no collapse is possible (odd L): every coordinate is nondecreasing"
        else:
            cert = ac.get("certificate") or {}
            lo = cert.get("shrinks", {}).get("alpha", ac["value"])
            hi = cert.get("grows", {}).get("alpha", ac["value"])
            out["regime_name"] = ("collapse (every coordinate shrinks from a certified time on)" if a <= lo else
                                  "growth (every coordinate grows from a certified time on)" if a >= hi else
                                  "undecided: α lies in α_c(L)'s certified bracket")
        out.update(_trajectory_facts(setting, T))
    return out


def thresholds(z, rho: float, *, optimizer: str = "sam-l2", alpha=None, depth: int = 2,
               t_max: float | None = None, digits: int = 12, progress: bool | None = None,
               prove: bool = False, certificate=None) -> ThresholdsResult:
    """The regime thresholds in α for one example ``z`` (what ``theorycheck thresholds``
    reports). ℓ2-SAM, L = 2 (z > 0): ``alpha_all_shrink`` and ``alpha_gd_like`` (closed forms)
    and ``alpha_collapse`` (α_c to ``digits`` certified digits, ``value_text``); L ≥ 3: the
    derived initial-rate thresholds, α_c(L) for even L (certified bracket) and what happens
    at small α. With a scalar ``alpha``: its initial index, regime (1 collapse, 2 sequential
    amplification, 3 GD-like) and the trajectory's switches up to ``t_max`` (rescaled τ,
    default 40/min|z_j|). ℓ∞-SAM (``alpha`` needed): per-coordinate growth, the predicted
    limit index and direction, blow-up times for L ≥ 3. GD: the predicted limit index.
    ``prove`` (ℓ2-SAM): ``alpha_collapse["proof"]`` is a proved bracket of α_c
    (:func:`theorycheck.proved.alpha_c.prove_alpha_c`: ``status``, ``lower``, ``upper``, ``digits``,
    ``method``, ``rests_on``); ``certificate`` (a path, L = 2 or even L ≥ 4, with ``prove``): every validated step of the proof
    is written there (:mod:`theorycheck.proved.certificate`; ``theorycheck check-certificate`` re-checks it)."""
    if certificate is not None and not prove:
        raise TheorycheckError("certificate: needs prove (a certificate is the data of a proof)")
    if certificate is not None and (depth != 2 and (depth < 4 or depth % 2)):
        raise TheorycheckError("certificate: written for depth 2 and even depths ≥ 4 (the depths with a proved α_c)")
    if prove and optimizer != "sam-l2":
        raise TheorycheckError("prove: a proved α_c exists for ℓ2-SAM only (the other optimizers have closed forms)")
    if isinstance(z, str):
        z = parse_floats(z, "z")
    if isinstance(alpha, str):
        a = parse_floats(alpha, "alpha")
        alpha = float(a[0]) if a.size == 1 else a
    z = np.asarray(z, float).reshape(-1)
    out: dict = {"optimizer": optimizer, "depth": depth, "z": z, "rho": rho}
    if alpha is not None:
        s = Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho, alpha=alpha)  # validates
    else:
        Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho)
    T = t_max or default_horizon(z)
    if optimizer == "sam-l2":
        if np.any(z <= 0):
            raise TheorycheckError("the ℓ2-SAM thresholds are computed for z > 0 (a balanced network has β = u² ≥ 0)")
        if depth == 1:
            raise ArgumentError("ℓ2-SAM at L = 1 has no regimes (C1: every α goes to z/‖z‖): use depth ≥ 2",
                                "depth")
        if depth >= 3:
            res = _depth_l(out, z, rho, depth, alpha, s if alpha is not None else None, T)
            if prove:
                from theorycheck.proved.alpha_c_depth import prove_alpha_c_depth

                if depth % 2:
                    raise TheorycheckError(f"prove: odd depth L = {depth} has no collapse threshold to prove")
                proof = prove_alpha_c_depth(z, rho, depth, digits=digits, record=certificate is not None)
                res["alpha_collapse"]["proof"] = proof.as_dict()
                if certificate is not None and proof.status == "proved":
                    from theorycheck.proved.certificate_depth import write_certificate_depth

                    write_certificate_depth(certificate, proof, z, rho, depth)
                    res["alpha_collapse"]["proof"]["certificate"] = str(certificate)
            return ThresholdsResult(res)
        # with prove, the floating α_c is computed once, 3 digits beyond the proof's, and is the proof's start
        ac = th.collapse_threshold(z, rho, digits=digits + 3 if prove else digits, progress=progress)
        out.update(alpha_all_shrink=th.alpha_all_shrink(z, rho).as_dict(),
                   alpha_gd_like=th.alpha_gd_like(z, rho).as_dict(),
                   alpha_collapse=ac.as_dict())
        if prove:
            from theorycheck.proved.alpha_c import prove_alpha_c

            proof = prove_alpha_c(z, rho, digits=digits, guess=ac.value_text if ac.value is not None and rho > 0 else None,
                                  record=certificate is not None)
            out["alpha_collapse"]["proof"] = proof.as_dict()
            if certificate is not None and proof.status == "proved":
                from theorycheck.proved.certificate import write_certificate

                write_certificate(certificate, proof, z, rho)
                out["alpha_collapse"]["proof"]["certificate"] = str(certificate)
        for key in ("alpha_all_shrink", "alpha_gd_like"):  # the closed forms to the digits asked for
            if out[key]["value"] is not None and digits > 15:
                out[key]["value_text"] = th.closed_form_text(key, z, rho, digits)
        if alpha is not None:
            a = float(np.asarray(alpha).reshape(-1)[0])
            if np.size(alpha) != 1:
                raise ArgumentError("give one scalar alpha for ℓ2-SAM (uniform init)", "alpha")
            out["alpha"] = a
            out["initial_index"] = th.initial_index(z, a, rho)
            gd = out["alpha_gd_like"]["value"]
            saddle = False
            if ac.value is None:
                out["regime"] = 1 if a < out["alpha_all_shrink"]["value"] else (3 if a >= gd else None)
            elif ac.certificate is None:  # all z_j equal: α_c in closed form, the fate decided exactly
                sign = th.initial_norm_sign(z, a, rho, float(z.min()))
                out["regime"] = {-1: 1, 1: 3}.get(sign)
                saddle = sign == 0
            else:
                lo_b, hi_b = (float(x) for x in ac.certificate["bracket"])
                out["regime"] = 1 if a <= lo_b else (3 if a >= gd else (2 if a >= hi_b else None))
            out["regime_name"] = REGIMES.get(out["regime"], "undecided: α lies in α_c's certified bracket, or α_c "
                                             "is inconclusive")
            if saddle:
                out["regime_name"] = ("at the saddle: N0 = ρ z exactly (all z_j equal), every rate is 0, the state "
                                      "is an equilibrium: neither collapse nor growth")
            out.update(_trajectory_facts(s, T))
            if out["regime"] is not None and (out["regime"] == 1) != out["collapsed"]:
                out["warning"] = ("the regime from α_c and the trajectory's fate disagree (the trajectory's horizon or "
                                  "precision may be too short)")
        return ThresholdsResult(out)
    if optimizer == "sam-linf":
        if alpha is None:
            raise ArgumentError("ℓ∞-SAM thresholds are per coordinate (α_j > ρ): give alpha", "alpha")
        a = np.broadcast_to(np.asarray(alpha, float), z.shape)
        out["alpha"] = a
        out["grows"] = (a > rho).tolist()
        out["stationary"] = (a == rho).tolist()
        out["predicted_index"] = th.linf_prediction(z, a, rho, depth)
        out["predicted_direction"] = th.linf_limit_direction(z, a, rho, depth)
        if depth >= 3:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # beyond float64: null
                ts = np.where(a > rho, C.linf_blowup_time(depth)(a, z, rho), np.inf)  # C3
            out["blowup_times"] = [float(t) if np.isfinite(t) else None for t in ts]
        out.update(_trajectory_facts(s, T))
        out.setdefault("initial_index", out["trajectory_initial_index"])  # no competing prediction here
        return ThresholdsResult(out)
    out["predicted_index"] = int(np.argmax(z)) + 1
    if alpha is not None:
        out.update(_trajectory_facts(s, T))
        out.setdefault("initial_index", out["trajectory_initial_index"])  # no competing prediction here
    return ThresholdsResult(out)


def thresholds_data(setting: Setting, *, progress: bool | None = None) -> ThresholdsResult:
    """α_c(Z) for ℓ2-SAM, L = 2, several examples (what ``theorycheck thresholds --data FILE.csv``
    prints; predict/dataset.py: a bracket from full integrations, with its evidence; not certified).
    ``data`` is the file the setting was read from (``Setting.source``), or null. ``progress``: a bar on stderr (None: when it is a terminal)."""
    from theorycheck.predict import dataset as ds

    if setting.optimizer != "sam-l2" or setting.depth != 2:
        raise ArgumentError("thresholds of several examples are computed for ℓ2-SAM at L = 2 "
                            "(optimizer='sam-l2', depth=2)", "optimizer", "depth")
    s, rho = setting, setting.rho
    return ThresholdsResult({"optimizer": s.optimizer, "depth": s.depth, "data": s.source, "n": int(s.X.shape[0]),
                             "d": int(s.X.shape[1]), "rho": rho,
                             "alpha_collapse": ds.collapse_threshold(s.X, s.y, rho, progress=progress)})


