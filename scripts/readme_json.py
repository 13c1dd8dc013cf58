"""Run the documentation's example commands with --json and save their outputs, timing fields removed.

    python scripts/readme_json.py OUTDIR [--only NAME,...] [--resume] [--timeout S]
    python scripts/readme_json.py --diff BASEDIR NEWDIR

Every concrete ``theorycheck ...`` command of README.md, of the pages of docs/ and of benchmarks/*.md (a code span or a
code block line without placeholders) is run, plus one representative invocation of each command the
documentation gives with placeholders only (listed in EXTRA). Each runs as ``python -m theorycheck ...
--json`` in the current PYTHONPATH; its JSON (stdout, or the file it writes) is saved to
OUTDIR/NAME.json with the keys in TIMING removed at every depth (a command past ``--timeout``, 900 s by default, is
recorded with rc "timeout" and the next one runs; ``--resume`` skips the commands OUTDIR already holds). ``--diff`` compares two
such folders key by key and prints every path whose value differs.

Skipped (listed in SKIPPED): cnn (torch training, minutes), verify of every pack (about a
minute of CPU per run; one pack-level verify of a few claims is in EXTRA instead), reproduce
of the full grids (the --quick form runs).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMING = {"seconds", "wall", "wall_s", "cpu", "cpu_s", "elapsed", "versions", "time_s",
          "started", "finished", "timestamp", "duration"}
PLACEHOLDER = re.compile(r"[\[\]{}|…]|FILE|PREFIX|DIR\b|\bT\b|\bR\b|\bL\b|Z1|A1|NAME|\bA:B\b")
#: commands that need a problem: a mention without --z or --data is prose, not an example
NEEDS_DATA = ("trajectory", "thresholds", "heatmap", "maxmargin", "setting", "predict")

DATA = {
    "two.csv": "x1,x2,y\n4,1,1\n1,-1,-1\n",
    "e1.csv": "x1,x2,y\n1.2,1.5,1\n2.7,2.0,1\n",
    "reg.csv": "x1,x2,x3,y\n1,0.5,-0.2,1.0\n0.3,-1,0.8,-0.5\n",
}

# name -> argument list (after `theorycheck`); {tmp} is the temporary data folder.
EXTRA = {
    "setting_z": "setting --z 1,2,3 --json",
    "setting_data": "setting --data {tmp}/two.csv --json",
    "setting_depth3": "setting --z -1,2 --depth 3 --alpha 0.5 --optimizer sam-linf --json",
    "derive_l2_json": "derive --depth 2 --optimizer sam-l2 --format json",
    "derive_d4_dim6_ex3": "derive --depth 4 --dim 6 --examples 3 --format json",
    "derive_pm": "derive --param pm --loss squared --depth 2 --format json",
    "derive_linf_dim3": "derive --depth 3 --optimizer sam-linf --dim 3 --format json",
    "thresholds_123": "thresholds --z 1,2,3 --rho 1 --json",
    "thresholds_12345_d30": "thresholds --z 1,2,3,4,5 --rho 1 --digits 30 --json",
    "thresholds_alpha": "thresholds --z 1,2,3 --rho 1 --alpha 0.5 --json",
    "thresholds_depth4": "thresholds --z 1,2,3 --rho 1 --depth 4 --json",
    "thresholds_depth3_alpha": "thresholds --z 1,2,3 --rho 1 --depth 3 --alpha 0.3 --json",
    "thresholds_linf": "thresholds --z 1,2,3 --rho 1 --optimizer sam-linf --alpha 0.5,2,0.9 --json",
    "thresholds_linf_l3": "thresholds --z 1,2,3 --rho 1 --optimizer sam-linf --depth 3 --alpha 1.5,2,1.2 --json",
    "thresholds_gd": "thresholds --z 1,2,3 --rho 1 --optimizer gd --alpha 0.5 --json",
    "thresholds_data": "thresholds --data {tmp}/e1.csv --rho 0.5 --json",
    "thresholds_tie": "thresholds --z 1,2,2 --rho 1 --json",
    "trajectory_l2": "trajectory --z 1,2,3 --rho 1 --alpha 0.5 --json",
    "trajectory_l2_collapse": "trajectory --z 1,2,3 --rho 1 --alpha 0.1 --json",
    "trajectory_depth4_collapse": "trajectory --z 1,2,3 --depth 4 --optimizer sam-l2 --rho 1 --alpha 0.2 --json",
    "trajectory_linf": "trajectory --z 1,2,3 --optimizer sam-linf --rho 1 --alpha 0.5,2,0.9 --json",
    "trajectory_linf_l3": "trajectory --z 1,2,3 --depth 3 --optimizer sam-linf --rho 1 --alpha 1.5,2,1.2 --json",
    "trajectory_gd": "trajectory --z 1,2,3 --optimizer gd --alpha 0.5 --json",
    "trajectory_reduced": "trajectory --z 1,2,3 --rho 1 --alpha 0.5 --method reduced --json",
    "trajectory_mpmath": "trajectory --z 1,2,3 --depth 4 --rho 1 --alpha 0.2 --digits 30 --json",
    "trajectory_data": "trajectory --data {tmp}/two.csv --optimizer gd --alpha 0.1 --t-max 20 --json",
    "trajectory_data_l2": "trajectory --data {tmp}/e1.csv --rho 0.5 --alpha 0.4 --t-max 50 --json",
    "trajectory_discrete": "trajectory --z 1,2,3 --rho 1 --alpha 0.5 --discrete --eta 0.05 --steps 400 --json",
    "trajectory_pm": "trajectory --data {tmp}/reg.csv --loss squared --param pm --depth 2 --optimizer gd --alpha 0.1 --json",
    "trajectory_neg": "trajectory --z -1,2 --rho 0.5 --alpha 0.7 --json",
    "maxmargin_l1": "maxmargin --z 1,2,3 --norm 1 --json",
    "maxmargin_l2": "maxmargin --data {tmp}/two.csv --norm 2 --json",
    "heatmap_l2": "heatmap --z 1,2,3,4,5,6 --optimizer sam-l2 --rho 1 --alphas 0.04:2:30 --log --t-max 15 --nt 40 --log-time --t-min 1e-3 --backend serial --json",
    "heatmap_l2_numpy": "heatmap --z 1,2,3 --optimizer sam-l2 --rho 1 --alphas 0.1:2:12 --t-max 20 --nt 15 --backend serial --array-backend numpy --json",
    "heatmap_gd": "heatmap --z 1,2,3 --optimizer gd --rho 0 --alphas 0.1:2:8 --t-max 10 --nt 10 --backend serial --json",
    "heatmap_linf": "heatmap --z 1,2,3 --optimizer sam-linf --rho 1 --alphas 0.5:2:8 --t-max 10 --nt 10 --backend serial --json",
    "heatmap_balanced": "heatmap --z 1,2,3 --optimizer sam-l2 --rho 1 --alphas 0.2:2:6 --t-max 10 --nt 10 --method balanced --backend serial --json",
    "heatmap_data": "heatmap --data {tmp}/e1.csv --optimizer sam-l2 --rho 0.5 --alphas 0.2:2:6 --t-max 50 --nt 10 --backend serial --json",
    "heatmap_depth3_gd": "heatmap --z 1,2,3 --optimizer gd --rho 0 --depth 3 --alphas 0.1:1:5 --t-max 5 --nt 8 --backend serial --json",
    "packs": "packs --json",
    "predict_kr": "predict --pack kernel-rich --data {tmp}/reg.csv --depth 2 --alpha 0.01 --json",
    "predict_kr_d3": "predict --pack kernel-rich --data {tmp}/reg.csv --depth 3 --alpha 0.5 --json",
    "predict_lm": "predict --pack lp-margin --data {tmp}/two.csv --depth 2 --json",
    "predict_lm_z": "predict --pack lp-margin --z 1,2,3 --depth 3 --json",
    "prove_some": "prove --only R,B,C2 --json",
    "verify_few": "verify --claims C2.solution,C3.blowup-time,C6.gd,C5.initial-index --examples 3 --seed 0 --json {out}",
    "reproduce_quick": "reproduce all --quick --out {tmp}/repro --backend serial --json",
}

SKIPPED = {
    "cnn": "torch training (minutes per run, seeds); not part of the JSON baseline",
    "verify (all packs)": "about a minute of CPU; verify_few covers the JSON shape and numbers",
    "prove (all)": "prove_some covers R, B, C2",
    "reproduce all (full grids)": "about 25 s and figures; reproduce_quick runs the quick grids",
}


def readme_commands() -> dict[str, str]:
    """Concrete `theorycheck ...` commands of README.md, docs/**/*.md and benchmarks/*.md (no placeholders), json-able ones."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "benchmarks").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    found: dict[str, str] = {}
    candidates = re.findall(r"`(theorycheck [^`]+)`", text)
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        candidates += [ln.split("#")[0].strip() for ln in joined.splitlines()]
    for c in candidates:
        c = " ".join(c.split())
        if not c.startswith("theorycheck "):
            continue
        args = c[len("theorycheck "):]
        sub = args.split()[0]
        if sub in ("cnn", "verify", "prove", "reproduce", "X", "--help") or PLACEHOLDER.search(args):
            continue
        if sub in NEEDS_DATA and not re.search(r"--(z|data)\b", args):
            continue
        if len([a for a in args.split()[1:] if a.startswith("--") and a != "--json"]) < 1 \
                or args.split()[1:] in (["--json"], ["--format", "json"], ["--backend", "serial"]):
            continue
        if sub in ("derive",) and "--format" not in args:
            args += " --format json"
        elif sub == "heatmap":
            args = re.sub(r"--out \S+|--save \S+", "", args) + " --backend serial"
            if "--json" not in args:
                args += " --json"
        elif "--json" not in args and sub not in ("derive",):
            args += " --json"
        name = "readme_" + re.sub(r"[^a-z0-9]+", "_", args.lower()).strip("_")[:60]
        found[name] = " ".join(args.split())
    return found


def strip(obj):
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


def run_all(outdir: Path, only: set[str] | None, *, resume: bool = False, timeout: float = 900.0) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    cmds = {**readme_commands(), **EXTRA}
    tmp = Path(tempfile.mkdtemp(prefix="readme_json_"))
    for fname, body in DATA.items():
        (tmp / fname).write_text(body)
    old = outdir / "_commands.json"
    index = json.loads(old.read_text())["commands"] if ((only or resume) and old.exists()) else {}

    def write_index():
        (outdir / "_commands.json").write_text(json.dumps(
            {"commands": index, "skipped": SKIPPED, "timing_keys_removed": sorted(TIMING)},
            indent=1) + "\n")

    for name, args in cmds.items():
        if only and name not in only:
            continue
        if resume and (outdir / f"{name}.json").exists():
            continue
        outfile = tmp / f"{name}.out.json"
        argv = shlex.split(args.format(tmp=tmp, out=outfile))
        t0 = time.time()
        try:
            p = subprocess.run([sys.executable, "-m", "theorycheck", *argv], capture_output=True,
                               text=True, env=os.environ.copy(), timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:  # recorded, and the next command runs
            index[name] = {"args": args, "rc": "timeout", "stderr_tail": f"timed out after {timeout:g} s"}
            (outdir / f"{name}.json").write_text(json.dumps({"rc": "timeout", "json": None}) + "\n")
            print(f"{name:34s} rc=timeout {time.time() - t0:6.1f}s", flush=True)
            write_index()
            continue
        wall = time.time() - t0
        raw = outfile.read_text() if outfile.exists() else p.stdout
        try:
            data = strip(json.loads(raw))
        except json.JSONDecodeError:
            data = {"_not_json": raw[-2000:]}
        # the temporary folder's name is not a number: make it stable
        text = json.dumps({"rc": p.returncode, "json": data}, indent=1, sort_keys=True)
        text = text.replace(str(tmp), "<tmp>")
        (outdir / f"{name}.json").write_text(text + "\n")
        index[name] = {"args": args, "rc": p.returncode, "stderr_tail": p.stderr[-300:]}
        print(f"{name:34s} rc={p.returncode} {wall:6.1f}s", flush=True)
        write_index()
    write_index()


def diff_paths(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                yield f"{path}.{k}", "added", None, b[k]
            elif k not in b:
                yield f"{path}.{k}", "removed", a[k], None
            else:
                yield from diff_paths(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from diff_paths(x, y, f"{path}[{i}]")
    elif a != b:
        yield path, "changed", a, b


def diff(base: Path, new: Path) -> int:
    n = 0
    for f in sorted(base.glob("*.json")):
        if f.name.startswith("_"):
            continue
        g = new / f.name
        if not g.exists():
            print(f"{f.stem}: missing in {new}")
            n += 1
            continue
        for p, kind, x, y in diff_paths(json.loads(f.read_text()), json.loads(g.read_text())):
            n += 1
            sx, sy = json.dumps(x)[:100], json.dumps(y)[:100]
            print(f"{f.stem}{p}: {kind}: {sx} -> {sy}")
    for g in sorted(new.glob("*.json")):
        if not (base / g.name).exists() and not g.name.startswith("_"):
            print(f"{g.stem}: only in {new}")
    print(f"{n} differences")
    return 1 if n else 0


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        raise SystemExit(diff(Path(sys.argv[2]), Path(sys.argv[3])))
    only = None
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    timeout = float(sys.argv[sys.argv.index("--timeout") + 1]) if "--timeout" in sys.argv else 900.0
    run_all(Path(sys.argv[1]), only, resume="--resume" in sys.argv, timeout=timeout)
