"""E2.linear over MNIST class pairs at a chosen training size (the README's evidence): the rule of
proofs/e2_linear.py, written out as JSON (rewritten after every pair, so a run stopped by its
timeout keeps the pairs it finished). ``--n-train 0``: every training image of each pair.

Run: ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/e2_linear_pairs.py --n-train 1000 --write docs/e2_linear_pairs.json``
"""

from __future__ import annotations

import argparse
import json
import time

from theorycheck import imagedata as D
from theorycheck.proofs.e2_linear import PAIRS, pair_difference, verdict


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-train", type=int, default=1000)
    ap.add_argument("--pairs", default=";".join(f"{a},{b}" for a, b in PAIRS))
    ap.add_argument("--optimizers", default="sam-l2,sam-linf")
    ap.add_argument("--write", default=None)
    a = ap.parse_args()
    S = D.load("mnist")
    n_train = a.n_train if a.n_train > 0 else None
    pairs = [tuple(int(v) for v in p.split(",")) for p in a.pairs.split(";")]
    out = {"n_train": n_train, "pairs": [list(p) for p in pairs], "results": {}, "seconds": {}}
    t0, c0 = time.perf_counter(), time.process_time()

    def write():
        out["seconds"]["total_wall"] = time.perf_counter() - t0
        out["seconds"]["total_cpu"] = time.process_time() - c0
        if a.write:
            with open(a.write, "w") as fh:
                json.dump(out, fh, indent=1, default=float)

    for opt in a.optimizers.split(","):
        rows = []
        out["results"][opt] = {"verdict": None, "pairs": rows}
        for p in pairs:
            w, c = time.perf_counter(), time.process_time()
            rows.append(pair_difference(p, opt, n_train=n_train, images=S))
            rows[-1]["seconds"] = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c}
            print(opt, p, {k: rows[-1].get(k) for k in ("n_train", "alpha", "difference", "gd", "sam", "why",
                                                        "seconds")}, flush=True)
            write()
        out["results"][opt]["verdict"] = verdict(rows)
        print(opt, out["results"][opt]["verdict"], flush=True)
        write()


if __name__ == "__main__":
    main()
