"""``theorycheck linear-images``: GD vs ℓ2-SAM vs ℓ∞-SAM on an L-layer diagonal linear network
over image pixels (β is the pixel map). A thin layer over :func:`theorycheck.api.linear_images`."""

from __future__ import annotations

import argparse

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers.registry import names
from theorycheck.optimizers.registry import registered as get_optimizer


def _sam(name: str) -> bool:
    """A SAM variant (an ascent step); gradient descent is always run, as the reference."""
    return get_optimizer(name).perturbs


def _gd() -> str:
    """The reference optimizer's name: the registered one without an ascent step."""
    return next(n for n in names() if not _sam(n))


def _floats(text: str, what: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise TheorycheckError(f"{what} {text!r}: give comma-separated numbers, e.g. 0.02,0.2,2") from None


def config_from_args(args: argparse.Namespace):

    from theorycheck.api import linear_images_config

    given: dict = {"dataset": args.dataset, "progress": not args.json}
    if args.optimizers is not None:
        given["optimizers"] = tuple(o.strip() for o in args.optimizers.split(","))
    if args.alphas is not None:
        given["alphas"] = _floats(args.alphas, "--alphas")
    if args.classes is not None:
        given["classes"] = args.classes
    if args.time is not None:
        given["time_kind"] = args.time
    if args.no_margins:
        given["margins"] = False
    for name in ("depth", "rho", "rho_linf", "eta", "loss_target", "t_max", "checkpoints", "n_train", "n_test",
                 "preprocess", "max_steps", "rtol", "atol", "array_backend", "device", "threads", "seed", "data_dir"):
        v = getattr(args, name)
        if v is not None:
            given[name] = v
    return linear_images_config(quick=args.quick, **given)


#: options of the single-task run that the class-pairs rule fixes itself (MNIST, raw, τ-flow, its α)
_NOT_WITH_PAIRS = ("classes", "alphas", "rho_linf", "time", "eta", "t_max", "checkpoints", "n_test", "preprocess",
                   "rtol", "atol", "device", "threads", "seed", "data_dir", "save", "figures")


def _pairs(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        a, sep, b = part.strip().partition("/")
        try:
            out.append((int(a), int(b)))
        except ValueError:
            raise TheorycheckError(f"--pairs {text!r}: give class pairs A/B separated by commas, e.g. 0/1,2/3,4/5") \
                from None
        if not sep:
            raise TheorycheckError(f"--pairs {text!r}: give class pairs A/B separated by commas, e.g. 0/1,2/3,4/5")
    return out


def run_pairs(args: argparse.Namespace) -> int:
    from theorycheck.api import linear_images_pairs
    from theorycheck.jsonio import emit

    given = [n for n in _NOT_WITH_PAIRS if getattr(args, n) is not None] + (["no_margins"] if args.no_margins else [])
    if args.dataset != "mnist":
        given.append("dataset")
    if given:
        flags = ", ".join("--" + n.replace("_", "-") for n in given)
        raise TheorycheckError(f"--pairs runs the E2.linear rule (MNIST, raw intensities, τ-flow, α in each pair's "
                               f"intermediate range); drop {flags}")
    kw: dict = {"pairs": _pairs(args.pairs), "progress": not args.json, "scheduler": args.scheduler or "processes",
                "workers": args.workers, "n_train": 120 if args.quick and args.n_train is None else args.n_train}
    if args.optimizers is not None:
        kw["optimizers"] = tuple(o.strip() for o in args.optimizers.split(",") if o.strip() and _sam(o.strip()))
    for name in ("depth", "rho", "loss_target", "max_steps", "linf_max_steps", "array_backend"):
        if getattr(args, name) is not None:
            kw[name] = getattr(args, name)
    res = linear_images_pairs(**kw)
    if args.json:
        emit(res.as_dict())
        return 0
    _print_pairs(res.as_dict())
    return 0


def _print_pairs(r: dict) -> None:
    c = r["config"]
    size = "every training image" if c["n_train"] is None else f"{c['n_train']} training images"
    print(f"theorycheck linear-images --pairs — E2.linear over {len(c['pairs'])} MNIST class pairs ({size} per pair, "
          f"L = {c['depth']}, ρ = {c['rho']}, loss {c['loss_target']:g})")
    for op, res in r["results"].items():
        v = res["verdict"]
        print()
        for row in res["pairs"]:
            a, b = row["classes"]
            if row.get("usable"):
                print(f"  {op:8s} {a}/{b}: n = {row['n_train']}, α = {row['alpha']:.4g}, D = {row['difference']:+.4f} "
                      f"(GD {row[_gd()]:.4f}, SAM {row['sam']:.4f}, matched loss {row['matched_loss']:.2e})")
            else:
                print(f"  {op:8s} {a}/{b}: left out — {row.get('why')}")
        ci = v.get("ci95")
        tail = (f"mean D = {v['mean']:+.4f}, 95 % t-interval [{ci[0]:+.4f}, {ci[1]:+.4f}]" if ci else v.get("why", ""))
        print(f"{op}: {v['verdict']} — {tail} ({v['pairs_used']} pairs used, {v['pairs_left_out']} left out, "
              f"{v['positive']} positive)")
    e = r["execution"]
    print(f"\n{e['tasks']} Dask tasks on {e['scheduler']} ({e['workers']} workers), {r['seconds']['total']:.1f} s wall")


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import linear_images
    from theorycheck.jsonio import emit

    if args.pairs is not None:
        return run_pairs(args)
    if args.scheduler is not None or args.workers is not None or args.linf_max_steps is not None:
        raise TheorycheckError("--scheduler, --workers and --linf-max-steps belong to the class-pairs rule: they go "
                               "with --pairs")
    res = linear_images(config_from_args(args), save=args.save, figures=args.figures)
    if args.json:
        emit(res.as_dict())
        return 0
    _print(res.as_dict())
    return 0


def _f(v, fmt="{:.3f}") -> str:
    return "—" if v is None else fmt.format(v)


def _print(r: dict) -> None:
    t, g = r["task"], r["regimes"]
    print(f"theorycheck linear-images — {t['label']} ({t['source']})")
    print(f"{t['n_train']} train / {t['n_test']} test images, d = {t['d']} pixels ({t['d_active']} not always 0), "
          f"preprocess {t['preprocess']}, depth L = {r['config']['depth']}, time {r['config']['time_kind']}")
    print(f"background: {t['background_definition']} ({t['background_pixels']} pixels); flat-map baseline "
          f"{t['flat_baseline']:.3f} over the active pixels ({t['flat_baseline_all']:.3f} over all)")
    ac = g["alpha_collapse"]
    print(f"ρ = {g['rho']} (ℓ∞: {g['rho_linf']:.4g}); α_c(Z) ∈ {ac['bracket']} (a floating-point check), "
          f"α_gd(Z) = {_f(g['alpha_gd_like']['value'], '{:.4g}')}")
    for name, m in r["max_margin"].items():
        print(f"{name} max margin: γ = {m['margin']:.4g}, background fraction {m['background_fraction']:.3f}, "
              f"{m['nonzero_pixels']} nonzero pixels ({m['method']})")
    print()
    print(f"{'optimizer':9s} {'α':>8s} {'regime':>12s} {'status':>12s} {'loss':>9s} {'bg frac':>8s} {'test acc':>8s} "
          f"{'j† q':>5s} {'∠ℓ1':>6s} {'∠ℓ2':>6s}")
    for run in r["runs"]:
        c = run["checkpoints"][-1] if run["checkpoints"] else {}
        print(f"{run['optimizer']:9s} {run['alpha']:8.4g} {run['regime_name']:>12s} {run['status']:>12s} "
              f"{_f(c.get('train_loss'), '{:.2e}'):>9s} {_f(c.get('background_fraction')):>8s} "
              f"{_f(c.get('test_accuracy')):>8s} {_f(c.get('jdag_intensity_quantile'), '{:.2f}'):>5s} "
              f"{_f(c.get('angle_l1'), '{:.1f}'):>6s} {_f(c.get('angle_l2'), '{:.1f}'):>6s}")
    print("(last checkpoint; bg frac = background fraction of |β|; j† q = intensity quantile of j†, 0 dim, 1 bright)")
    print()
    print("SAM − GD background fraction:")
    for c in r["comparisons"]:
        ml, mt = c["matched_loss"], c["matched_time"]
        print(f"  {c['optimizer']:8s} α={c['alpha']:<8.4g} {c['regime_name']:12s} matched loss {ml['level']:.2e}: "
              f"{_f(ml['difference'], '{:+.4f}')} (GD {ml[_gd()]:.3f}, SAM {ml['sam']:.3f});  matched time "
              f"{mt['time']:.3g}: {_f(mt['difference'], '{:+.4f}')}")
    if r["figures"]:
        print("figures: " + ", ".join(r["figures"]))
    if r["saved"]:
        print(f"saved runs: {r['saved']}")


def register(sub) -> None:
    p = sub.add_parser(
        "linear-images", help="E2 on a diagonal linear network over pixels: GD vs ℓ2/ℓ∞-SAM, β as the pixel map",
        description="Train an L-layer diagonal linear network (on the doubled input (x, −x), balanced start α) "
        "on the pixels of a binary MNIST or CIFAR-10 task with GD, ℓ2-SAM and ℓ∞-SAM (flows in rescaled or "
        "real time, or the discrete algorithm), all (optimizer, α) members in one batch, and report where β "
        "puts its mass: background fraction, j†'s intensity, angles to the max-margin directions.")
    p.add_argument("--dataset", choices=["mnist", "cifar10"], default="mnist")
    p.add_argument("--classes", metavar="A,B", help="two classes (A: +1, B: −1) or one class A against the rest (default 0,1)")
    p.add_argument("--depth", type=int, choices=[1, 2, 3], help="layers L (default 2)")
    p.add_argument("--optimizers", metavar="gd,sam-l2,sam-linf", help="optimizers; gd is the reference (default all)")
    p.add_argument("--alphas", metavar="A1,A2,…", help="init scales (default: 8 spanning the regimes; --quick 3)")
    p.add_argument("--rho", type=float, help="ℓ2-SAM radius (default 1)")
    p.add_argument("--rho-linf", type=float, help="ℓ∞-SAM radius (default ρ/√P: the same ‖ε‖₂)")
    p.add_argument("--time", choices=["tau", "t", "discrete"], help="rescaled flow (default), real-time flow, or the algorithm")
    p.add_argument("--eta", type=float, help="step of the discrete algorithm (--time discrete)")
    p.add_argument("--loss-target", type=float, help="stop each run at this training loss (default 0.01)")
    p.add_argument("--t-max", type=float, help="last time (default τ 200, t 20000)")
    p.add_argument("--checkpoints", type=int, help="output times, geometric (default 120; --quick 60)")
    p.add_argument("--n-train", type=int, help="class-balanced training subset (default: every image of the classes)")
    p.add_argument("--n-test", type=int, help="class-balanced test subset (default: all)")
    p.add_argument("--preprocess", choices=["raw", "centred"], help="raw intensities in [0, 1] (default) or centred")
    p.add_argument("--max-steps", type=int, help="step budget per run (default 3000)")
    p.add_argument("--rtol", type=float, help="relative tolerance of the flows (default 1e-9: β within 1e-6 of a "
                   "high-accuracy run)")
    p.add_argument("--atol", type=float, help="absolute tolerance of the flows (default rtol/1000)")
    p.add_argument("--array-backend", choices=["numpy", "torch"], help="default numpy")
    p.add_argument("--device", choices=["cpu", "cuda"], help="torch device (default: cuda when torch sees one)")
    p.add_argument("--threads", type=int, help="torch CPU threads (the torch backend, and the numpy backend's sparse products)")
    p.add_argument("--seed", type=int, help="seed of the subsets (default 0)")
    p.add_argument("--data-dir", help="folder with the official CIFAR-10 batches (else the shared subset) or mnist.npz")
    p.add_argument("--no-margins", action="store_true", help="skip the ℓ1/ℓ2 max-margin programs (angles)")
    p.add_argument("--quick", action="store_true", help="200 images, 3 α: under a minute")
    p.add_argument("--save", metavar="DIR", help="one .npz per run and runs.json")
    p.add_argument("--figures", metavar="DIR", help="write beta_grid.png, background_curves.png, jdag_heatmap.png")
    p.add_argument("--pairs", metavar="A/B,C/D,…", help="run the E2.linear rule over these MNIST class pairs "
                   "(each pair one Dask task; with --quick 120 images per pair) instead of one task")
    p.add_argument("--scheduler", help="with --pairs: processes (default), threads, sync, or a Dask scheduler "
                   "address tcp://HOST:PORT")
    p.add_argument("--workers", type=int, help="with --pairs: local Dask workers (default one per pair up to the cores)")
    p.add_argument("--linf-max-steps", type=int, help="with --pairs: step budget of the ℓ∞-SAM runs (default: the "
                   "verify run's, the smaller of --max-steps and 600)")
    p.add_argument("--json", action="store_true", help="print the JSON result")
    p.set_defaults(func=run)
