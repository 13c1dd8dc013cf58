"""Benchmark: the proved regime map (ℓ2-SAM, L = 2, one example) against the method it replaced, in one process,
back to back, on one core.

- new: ``theorycheck.proofs.minor_first.proved.regime_map.proved_regime_map(z, ρ, "A:B")`` with its default budgets (validated steps,
  no clock): exact inputs, the crossing direction from the sign of N − N̄, graded first cuts around the
  floating-point α_c, a few steps after a growth certificate.
- baseline: ``benchmarks/regime_map_before.py`` (the same module before these changes) with the budget it was run
  with (``max_seconds=120``, its CLI default), on the same integrator.

Reported per case: CPU seconds (``time.process_time``: this process only; the host is shared, so wall times are
given but are noisy), wall seconds, the proved fraction of the range, the undecided pieces (count, total width, the
widest), validated steps, and the ratios new/baseline of CPU time and of undecided width. The host, its load
average before and after, and the command are written with the numbers.

Run (from the repository root; one core: ``taskset -c 0`` where available):
``PYTHONPATH=. taskset -c 0 python benchmarks/bench_regime_map.py --json benchmarks/regime_map_results.json --write benchmarks/REGIME_MAP.md``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

CASES = [("z = (1, 2, 3), ρ = 1, α ∈ [0.1, 2]", ["1", "2", "3"], "1", "0.1:2"),
         ("z = (1, 2, 3), ρ = 1, α ∈ [0.40, 0.44] (around α_c = 0.43642630596…)", ["1", "2", "3"], "1", "0.40:0.44")]
BASELINE_SECONDS = 120.0
COMMAND = ("PYTHONPATH=. taskset -c 0 python benchmarks/bench_regime_map.py --json benchmarks/regime_map_results.json "
           "--write benchmarks/REGIME_MAP.md")


def timed(f):
    t0, c0 = time.perf_counter(), time.process_time()
    out = f()
    return out, time.perf_counter() - t0, time.process_time() - c0


def summary(d: dict, wall: float, cpu: float, a: float, b: float) -> dict:
    und = [p for p in d["regime_map"] if p["status"] != "proved"]
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "proved_fraction": d["proved_width"] / (b - a),
            "undecided_width": d["undecided_width"], "undecided_pieces": len(und),
            "widest_undecided": max((p["width"] for p in und), default=0.0),
            "pieces": len(d["regime_map"]), "steps": d.get("steps"), "stopped": d["stopped"]}


def host() -> dict:
    model = ""
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return {"platform": platform.platform(), "python": sys.version.split()[0], "cpu": model,
            "cores_visible": os.cpu_count(), "cores_allowed": len(cores) if cores else None}


def run_case(name, z, rho, rng) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import regime_map_before as before
    from theorycheck.proofs.minor_first.proved.regime_map import proved_regime_map

    a, b = (float(x) for x in rng.split(":"))
    new, wn, cn = timed(lambda: proved_regime_map(z, rho, rng).as_dict())
    old, wo, co = timed(lambda: before.regime_map([float(v) for v in z], float(rho), rng,
                                                  max_seconds=BASELINE_SECONDS).as_dict())
    out = {"case": name, "new": summary(new, wn, cn, a, b), "baseline": summary(old, wo, co, a, b)}
    out["cpu_ratio_new_over_baseline"] = round(cn / co, 3)
    out["undecided_width_ratio_new_over_baseline"] = (new["undecided_width"] / old["undecided_width"]
                                                      if old["undecided_width"] else None)
    out["new_undecided"] = [[p["lower"], p["upper"], p["reason"][:100]] for p in new["regime_map"]
                            if p["status"] != "proved"]
    return out


def markdown(res: dict) -> str:
    lines = ["# The cost of a proved regime map", "", "Produced by (one process, back to back, new then baseline):", "",
             "```bash", res["command"], "```", "",
             f"Host: {res['host']['platform']}, {res['host']['cpu']}, Python {res['host']['python']}; "
             f"{res['host']['cores_visible']} cores shared with other jobs; load average before {res['load_before']}, "
             f"after {res['load_after']}. CPU times (this process only) are the measure; wall times vary with the load.",
             "", "| case | method | CPU | wall | proved | undecided pieces (total width; widest) | steps | stopped |",
             "|---|---|---|---|---|---|---|---|"]
    for c in res["cases"]:
        for key, label in (("new", "proved_regime_map (steps)"), ("baseline", f"before ({BASELINE_SECONDS:g} s)")):
            s = c[key]
            lines.append(f"| {c['case']} | {label} | {s['cpu_s']:.1f} s | {s['wall_s']:.1f} s | "
                         f"{100 * s['proved_fraction']:.5f} % | {s['undecided_pieces']} ({s['undecided_width']:.3g}; "
                         f"{s['widest_undecided']:.3g}) | {s['steps'] if s['steps'] is not None else '—'} | "
                         f"{s['stopped'] or '—'} |")
        w = c["undecided_width_ratio_new_over_baseline"]
        lines.append(f"| | ratio new / before | {c['cpu_ratio_new_over_baseline']:.2f} | | | "
                     f"{'—' if w is None else f'{w:.2g}'} (undecided width) | | |")
    lines += ["", "Undecided pieces of the new map, first case: " + "; ".join(
        f"[{lo}, {hi}] ({why})" for lo, hi, why in res["cases"][0]["new_undecided"]) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", default=None, help="write the numbers here (JSON)")
    p.add_argument("--write", default=None, help="write the markdown report here")
    p.add_argument("--first", action="store_true", help="only the first case")
    args = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import regime_map_before as before
    from theorycheck.proofs.minor_first.proved.regime_map import proved_regime_map

    proved_regime_map(["1", "2", "3"], "1", "0.3:0.31")  # warm: compile the forms of both, outside the measurements
    before.regime_map([1.0, 2.0, 3.0], 1.0, "0.3:0.31", max_seconds=30)
    res = {"command": COMMAND, "host": host(), "load_before": [round(x, 2) for x in os.getloadavg()], "cases": []}
    for case in CASES[:1] if args.first else CASES:
        res["cases"].append(run_case(*case))
        print(json.dumps(res["cases"][-1], indent=1), flush=True)
    res["load_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    if args.write:
        Path(args.write).write_text(markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
