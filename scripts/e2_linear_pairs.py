"""E2.linear over MNIST class pairs at a chosen training size (the evidence of docs/findings/minor-first.md): the rule of
proofs/e2_linear.py through :func:`theorycheck.numerics.minor_first.e2.linear_pairs.linear_images_pairs` (each pair one
Dask task), written out as JSON. ``--n-train 0``: every training image of each pair.
``--collapse-from FILE``: α_c brackets from an earlier run's JSON (the same deterministic scan),
so that a second pass (a wider α_gd scan, ℓ∞ with a larger budget) does not scan again.

Run: ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/e2_linear_pairs.py --n-train 1000 --write out.json``
"""

from __future__ import annotations

import argparse
import json
import time

from theorycheck.numerics.minor_first.e2.linear_pairs import linear_images_pairs
from theorycheck.proofs.minor_first.e2_linear import PAIRS

from theorycheck.jsonio import to_plain


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-train", type=int, default=1000)
    ap.add_argument("--pairs", default=";".join(f"{a},{b}" for a, b in PAIRS))
    ap.add_argument("--optimizers", default="sam-l2,sam-linf")
    ap.add_argument("--linf-max-steps", type=int, default=None)
    ap.add_argument("--gd-scan-hi", type=float, default=2.0)
    ap.add_argument("--collapse-from", default=None)
    ap.add_argument("--no-limit", action="store_true", help="skip the ℓ1 max-margin LP per pair")
    ap.add_argument("--scheduler", default="processes")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--write", default=None)
    a = ap.parse_args()
    pairs = [tuple(int(v) for v in p.split(",")) for p in a.pairs.split(";")]
    brackets = None
    if a.collapse_from:
        old = json.load(open(a.collapse_from))
        brackets = {tuple(row["classes"]): row["alpha_collapse"] for res in old["results"].values()
                    for row in res["pairs"] if row.get("alpha_collapse")}
    t0, c0 = time.perf_counter(), time.process_time()
    r = linear_images_pairs(pairs, optimizers=tuple(a.optimizers.split(",")), n_train=a.n_train or None,
                            linf_max_steps=a.linf_max_steps, gd_scan_hi=a.gd_scan_hi, collapse_brackets=brackets, limit=not a.no_limit,
                            scheduler=a.scheduler, workers=a.workers, progress=True)
    out = r.as_dict()
    out["seconds"].update(driver_wall=time.perf_counter() - t0, driver_cpu=time.process_time() - c0)
    for op, res in out["results"].items():
        print(op, res["verdict"], flush=True)
    if a.write:
        with open(a.write, "w") as fh:
            json.dump(to_plain(out), fh, indent=1)


if __name__ == "__main__":
    main()
