"""Where an initialisation lies among the regimes of one example (C2, C3, C5): the regime
thresholds in α — closed forms where THEORY.md gives one, computed where not — and, for a
given α, its regime and the trajectory's switches, all in floating point (each answer says how
strong it is). :func:`thresholds` takes a validated :class:`~theorycheck.setting.Setting` whole;
:func:`theorycheck.api.thresholds` adds the proofs (``proved/``) to what it returns.
:func:`thresholds_data` is what ``--data`` prints."""

from __future__ import annotations

import numpy as np
from theorycheck.proofs.minor_first.predict import alpha_c as AC
from theorycheck.proofs.minor_first.predict import thresholds as th

from theorycheck.arith.exact import INPUTS_KEYS
from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.record import Keys, ListOf, OneOf, Record
from theorycheck.setting import Setting, exact_inputs
from theorycheck.solvers.trajectory import SWITCH_KEYS
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import LEMMA_KEYS, Kind, Strength, float_check, not_decided
from theorycheck.symbolic import theory_forms as MF
from theorycheck.vocabulary import REGIME_DESCRIPTIONS

__all__ = ["REGIMES", "THRESHOLD_KEYS", "ThresholdsResult", "float_thresholds", "overall_strength", "thresholds_data"]

#: the thresholds a result may hold, in the order they are printed
THRESHOLD_KEYS = ("alpha_all_shrink", "alpha_all_grow", "alpha_gd_like", "alpha_collapse")


#: the run behind each end of α_c's bracket, by the shape of the certificate: L = 2 (the Taylor runs of
#: predict/collapse.py) or depth L (predict/depth.py)
_TAYLOR_RUN = Keys("thresholds.taylor_run", "alpha_unit", "outcome", "condition", "time", "N_scaled", "taylor_steps")
_DEPTH_RUN = Keys("thresholds.depth_run", "alpha", "c", "outcome", "condition", "time", "steps")
_CHECK = OneOf(
    Keys("thresholds.check", "arithmetic", "method", "evaluations", "scaling", "bracket", "relative_width",
         "significant_digits", collapses=_TAYLOR_RUN, grows=_TAYLOR_RUN),
    Keys("thresholds.check_depth", "arithmetic", "method", "evaluations", "scaling", "bracket", "relative_width",
         "significant_digits", "stopped", collapses=_DEPTH_RUN, grows=_DEPTH_RUN))
_FATE_PROOF = Keys("thresholds.fate_proof", "alpha", "fate", "lemma", "tau", "steps", "segments", "seconds", "why")
_PROOF = Keys("thresholds.proof", "status", "lower", "upper", "digits", "digits_requested", "value_text", "method",
              "note", "seconds", "certificate", collapses=_FATE_PROOF, grows=_FATE_PROOF,
              rests_on=ListOf(LEMMA_KEYS), inputs=INPUTS_KEYS,
              strength=STRENGTH_KEYS)
_DATA_RUN = Keys("thresholds.data_run", "alpha", "kind", "stopped_because", "collapse_time", "min_margin",
                 "loss_ratio", "t_end")
_EVIDENCE = Keys("thresholds.evidence", "monotone_on_scan", "relative_width", "stopped", scan=ListOf(_DATA_RUN),
                 collapses=_DATA_RUN, trains=_DATA_RUN)
_THRESHOLD = Keys("thresholds.threshold", "value", "value_text", "closed_form", "expression", "note", "enclosure",
                  check=_CHECK, proof=_PROOF, evidence=_EVIDENCE, strength=STRENGTH_KEYS)


class ThresholdsResult(Record):
    """The regime thresholds of one example (or α_c of several), and where an α lies among them:
    what ``theorycheck thresholds --json`` prints (keys and meanings: docs/commands/thresholds.md)."""

    KEYS = Keys("thresholds", "optimizer", "depth", "z", "rho", "data", "n", "d", "small_alpha", "alpha",
                "initial_index", "regime", "regime_name", "trajectory_initial_index", "final_index",
                "final_index_status", "final_index_reason", "collapsed", "collapse_time", "blowup_time",
                "stopped_because", "time_kind", "warning", "grows", "stationary", "predicted_index",
                "predicted_direction", "blowup_times",
                alpha_all_shrink=_THRESHOLD, alpha_all_grow=_THRESHOLD, alpha_gd_like=_THRESHOLD,
                alpha_collapse=_THRESHOLD, switches=ListOf(SWITCH_KEYS),
                initial_rate=Keys("thresholds.initial_rate", "expression", "r_j0", "N0"),
                equilibrium=Keys("thresholds.equilibrium", "u_star_over_max_z_units", "expression"),
                small_alpha_evidence=ListOf(Keys("thresholds.small_alpha_run", "alpha", "stopped_because",
                                                 "blowup_time", "collapsed")),
                inputs=INPUTS_KEYS, strength=STRENGTH_KEYS)

    _THRESHOLDS = THRESHOLD_KEYS

    def _repr_markdown_(self) -> str:
        """A notebook's view: each threshold with its digits and how strong it is, then where ``alpha``
        lies and what its trajectory does (the numbers of :meth:`as_dict`)."""
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
                how = (f"closed form {t['expression']}" if t.get("closed_form") else "computed")
                rows.append((key, value, how, (t.get("strength") or {}).get("text", ""), t.get("note") or ""))
        parts = [head]
        if rows:
            parts.append(table(("threshold", "value", "how", "strength", "note"), rows))
        facts = _markdown_facts(d, number)
        if facts:
            parts.append(table(("", "value"), facts))
        return "\n\n".join(parts)


def _markdown_facts(d: dict, number) -> list:
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
    return facts


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
    out = {k: s[k] for k in ("final_index", "final_index_status", "final_index_reason", "switches", "collapsed",
                             "collapse_time", "blowup_time", "stopped_because", "time_kind")}
    out["trajectory_initial_index"] = s["initial_index"]
    return out


def _scalar_alpha(setting: Setting) -> float:
    if setting.init.kind != "scalar":
        raise ArgumentError("give one scalar alpha for ℓ2-SAM (uniform init)", "alpha")
    return float(setting.init.value)


def _depth_entries(out: dict) -> None:
    """Each threshold of the depth-L prediction with its ``strength`` (a floating-point check where it has a
    value or a closed form; not decided otherwise)."""
    for key in THRESHOLD_KEYS:
        t = out.get(key)
        if not isinstance(t, dict):
            continue
        if "strength" not in t:
            t["strength"] = (float_check() if t.get("value") is not None or t.get("closed_form") else
                             not_decided(t.get("note") or None)).as_dict()


def _depth_l(setting: Setting, out: dict, place: bool, T: float) -> dict:
    """ℓ2-SAM at depth L ≥ 3 (predict/depth.py): derived initial-rate thresholds, α_c(L) for even L (a
    floating-point bracket), the statement of what happens at small α, and (``place``) the initial index
    of the setting's α, its side of α_c and the trajectory."""
    from theorycheck.proofs.minor_first.predict import depth as dl

    z, rho, L = setting.z, setting.rho, setting.depth
    out.update(dl.depth_thresholds(z, rho, L))
    _depth_entries(out)
    if not place:
        return out
    a = _scalar_alpha(setting)
    out["alpha"] = a
    out["initial_index"] = dl.initial_index(z, a, rho, L)
    ac = out["alpha_collapse"]
    if ac["value"] is None:
        out["regime_name"] = "no collapse is possible (odd L): every coordinate is nondecreasing"
    else:
        check = ac.get("check") or {}
        lo = check.get("collapses", {}).get("alpha", ac["value"])
        hi = check.get("grows", {}).get("alpha", ac["value"])
        out["regime_name"] = ("collapse (every coordinate shrinks from a time on, checked in floating point)"
                              if a <= lo else
                              "growth (every coordinate grows from a time on, checked in floating point)" if a >= hi
                              else "undecided: α lies in α_c(L)'s floating-point bracket")
    out.update(_trajectory_facts(setting, T))
    return out


def _l2_place(setting: Setting, out: dict, ac: th.Threshold, T: float) -> None:
    """ℓ2-SAM, L = 2: the setting's α among the regimes (from α_c's floating-point bracket; all z_j equal:
    decided exactly at the exact inputs) and its trajectory."""
    z, rho = setting.z, setting.rho
    a = _scalar_alpha(setting)
    out["alpha"] = a
    out["initial_index"] = th.initial_index(z, a, rho)
    gd = out["alpha_gd_like"]["value"]
    saddle = False
    if ac.value is None:
        out["regime"] = 1 if a < out["alpha_all_shrink"]["value"] else (3 if a >= gd else None)
    elif ac.check is None:  # all z_j equal: α_c in closed form, the fate decided exactly
        inp = exact_inputs(setting)
        sign = th.initial_norm_sign(inp.zq, inp.alpha.value, inp.rho.value, min(inp.zq))
        out["regime"] = {-1: 1, 1: 3}.get(sign)
        saddle = sign == 0
    else:
        lo_b, hi_b = (float(x) for x in ac.check["bracket"])
        out["regime"] = 1 if a <= lo_b else (3 if a >= gd else (2 if a >= hi_b else None))
    out["regime_name"] = REGIMES.get(out["regime"], "undecided: α lies in α_c's floating-point bracket, or α_c "
                                     "is inconclusive")
    if saddle:
        out["regime_name"] = ("at the saddle: N0 = ρ z exactly (all z_j equal), every rate is 0, the state "
                              "is an equilibrium: neither collapse nor growth")
    out.update(_trajectory_facts(setting, T))
    if out["regime"] is not None and (out["regime"] == 1) != out["collapsed"]:
        out["warning"] = ("the regime from α_c and the trajectory's fate disagree (the trajectory's horizon or "
                          "precision may be too short)")


def _l2(setting: Setting, out: dict, *, place: bool, T: float, digits: int, alpha_c_digits: int,
        progress) -> None:
    """ℓ2-SAM, L = 2: the closed forms (float64; at more than 15 digits enclosed at the exact inputs) and
    the floating α_c of the exact inputs."""
    inp = exact_inputs(setting, alpha=False)
    z, rho = setting.z, setting.rho
    ac = AC.collapse_threshold(inp.zq, inp.rho.value, digits=alpha_c_digits, progress=progress)
    out.update(alpha_all_shrink=th.alpha_all_shrink(z, rho).as_dict(), alpha_gd_like=th.alpha_gd_like(z, rho).as_dict(),
               alpha_collapse=ac.as_dict())
    for key in ("alpha_all_shrink", "alpha_gd_like"):  # the closed forms to the digits asked for, proved
        if out[key]["value"] is not None and digits > 15:
            enc = th.closed_form_enclosure(key, inp.zq, inp.rho.value, digits)
            out[key].update(value_text=enc["text"], enclosure=enc["enclosure"], strength=enc["strength"].as_dict())
            if enc["digits"] < digits:
                out[key]["note"] = ((out[key]["note"] + "; ") if out[key]["note"] else "") + (
                    f"{enc['digits']} common significant digits (asked {digits}): the value is at a rounding boundary")
    if place:
        _l2_place(setting, out, ac, T)


def _linf(setting: Setting, out: dict, T: float) -> None:
    """ℓ∞-SAM: per coordinate (α_j > ρ grows), the predicted limit index and direction, blow-up times (L ≥ 3)."""
    z, rho, L = setting.z, setting.rho, setting.depth
    a = np.broadcast_to(np.asarray(setting.init.value, float), z.shape)
    out["alpha"] = a
    out["grows"] = (a > rho).tolist()
    out["stationary"] = (a == rho).tolist()
    out["predicted_index"] = th.linf_prediction(z, a, rho, L)
    out["predicted_direction"] = th.linf_limit_direction(z, a, rho, L)
    if L >= 3:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # beyond float64: null
            ts = np.where(a > rho, MF.linf_blowup_time(L)(a, z, rho), np.inf)  # C3
        out["blowup_times"] = [float(t) if np.isfinite(t) else None for t in ts]
    out.update(_trajectory_facts(setting, T))
    out.setdefault("initial_index", out["trajectory_initial_index"])  # no competing prediction here


def float_thresholds(setting: Setting, *, place: bool = False, t_max: float | None = None, digits: int = 12,
                     alpha_c_digits: int | None = None, progress: bool | None = None) -> ThresholdsResult:
    """The regime thresholds in α of ``setting`` (one example z; what ``theorycheck thresholds`` reports
    without ``--prove``). ℓ2-SAM, L = 2 (z > 0): ``alpha_all_shrink`` and ``alpha_gd_like`` (closed forms;
    ``digits`` > 15: proved digits at the exact inputs) and ``alpha_collapse`` (α_c to ``alpha_c_digits``
    checked digits, default ``digits``: a floating-point check); L ≥ 3: the derived initial-rate
    thresholds, α_c(L) for even L (a floating-point bracket) and what happens at small α. ``place``: the
    setting's α (scalar for ℓ2-SAM), its initial index, regime (1 collapse, 2 sequential amplification, 3
    GD-like) and the trajectory's switches up to ``t_max`` (rescaled τ, default 40/min|z_j|). ℓ∞-SAM (α
    always placed): per-coordinate growth, the predicted limit index and direction, blow-up times for
    L ≥ 3. GD: the predicted limit index. The setting is used as given: nothing is parsed here."""
    z, L, opt = setting.z, setting.depth, setting.optimizer
    out: dict = {"optimizer": opt, "depth": L, "z": z, "rho": setting.rho,
                 "inputs": exact_inputs(setting, alpha=place or get_optimizer(opt).discontinuous).as_dict()}
    T = t_max or default_horizon(z)
    if get_optimizer(opt).normalised:
        if np.any(z <= 0):
            raise TheorycheckError("the ℓ2-SAM thresholds are computed for z > 0 (a balanced network has β = u² ≥ 0)")
        if L == 1:
            raise ArgumentError("ℓ2-SAM at L = 1 has no regimes (C1: every α goes to z/‖z‖): use depth ≥ 2", "depth")
        if L >= 3:
            _depth_l(setting, out, place, T)
        else:
            _l2(setting, out, place=place, T=T, digits=digits, alpha_c_digits=alpha_c_digits or digits,
                progress=progress)
    elif get_optimizer(opt).discontinuous:
        _linf(setting, out, T)
    else:
        out["predicted_index"] = int(np.argmax(z)) + 1
        if place:
            out.update(_trajectory_facts(setting, T))
            out.setdefault("initial_index", out["trajectory_initial_index"])  # no competing prediction here
    out["strength"] = overall_strength(out).as_dict()
    return ThresholdsResult(out)


def overall_strength(out: dict) -> Strength:
    """The strength of a thresholds answer as a whole: the weakest of its thresholds (α_c counted by its
    proof when the proof is proved) and of its floating-point parts (a placed α's trajectory, the ℓ∞-SAM and
    GD predictions)."""
    parts = []
    for key in THRESHOLD_KEYS:
        t = out.get(key)
        if not isinstance(t, dict) or "strength" not in t:
            continue
        proof = t.get("proof")
        s = Strength.from_dict(proof["strength"] if proof and proof.get("status") == "proved" else t["strength"])
        if t.get("value") is None and s.kind is not Kind.NOT_DECIDED and not proof:
            continue  # a threshold that does not exist for these inputs weakens nothing
        parts.append(s)
    if any(k in out for k in ("final_index", "predicted_index", "regime_name")):
        parts.append(float_check())
    return Strength.weakest(parts) if parts else float_check()


def thresholds_data(setting: Setting, *, progress: bool | None = None) -> ThresholdsResult:
    """α_c(Z) for ℓ2-SAM, L = 2, several examples (what ``theorycheck thresholds --data FILE.csv``
    prints; predict/dataset.py: a bracket from full integrations, with its evidence: a floating-point check).
    ``data`` is the file the setting was read from (``Setting.source``), or null. ``progress``: a bar on
    stderr (None: when it is a terminal)."""
    from theorycheck.proofs.minor_first.predict import dataset as ds

    if not get_optimizer(setting.optimizer).normalised or setting.depth != 2:
        raise ArgumentError("thresholds of several examples are computed for ℓ2-SAM at L = 2 "
                            "(optimizer='sam-l2', depth=2)", "optimizer", "depth")
    s, rho = setting, setting.rho
    ac = ds.dataset_collapse_threshold(s.X, s.y, rho, progress=progress)
    return ThresholdsResult({"optimizer": s.optimizer, "depth": s.depth, "data": s.source, "n": int(s.X.shape[0]),
                             "d": int(s.X.shape[1]), "rho": rho, "inputs": exact_inputs(s, alpha=False).as_dict(),
                             "alpha_collapse": ac, "strength": ac["strength"]})
