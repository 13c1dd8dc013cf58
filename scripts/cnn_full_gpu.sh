#!/usr/bin/env bash
# The full-size E2 experiment (THEORY.md E2): every dataset available, three init scales,
# GD / ℓ2-SAM / ℓ∞-SAM, 5 paired seeds, whole training sets. Uses the GPU when torch sees
# one and falls back to the CPU otherwise (hours there: nothing requires a GPU).
#
#   bash scripts/cnn_full_gpu.sh                 # results and report.txt under out/cnn-full/<dataset>/
#   DATA_DIR=/data bash scripts/cnn_full_gpu.sh  # official CIFAR-10 batches / SVHN .mat files
#
# Environment: OUT (default out/cnn-full), DATA_DIR (default: none), DATASETS (default
# "mnist cifar10", plus svhn when DATA_DIR holds train_32x32.mat), SEEDS (5), EPOCHS (5),
# INIT_SCALES (0.7,1,2), EXTRA (more options for every run, e.g. "--batchnorm").
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/cnn-full}
SEEDS=${SEEDS:-5}
EPOCHS=${EPOCHS:-5}
INIT_SCALES=${INIT_SCALES:-0.7,1,2}
DATASETS=${DATASETS:-"mnist cifar10"}
if [[ -n "${DATA_DIR:-}" && -f "$DATA_DIR/train_32x32.mat" && "$DATASETS" != *svhn* ]]; then
  DATASETS="$DATASETS svhn"
fi
if python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  DEVICE=cuda
else
  DEVICE=cpu
  echo "cnn_full_gpu.sh: no CUDA device visible to torch: running on the CPU (this takes hours)" >&2
fi
for ds in $DATASETS; do
  args=(cnn --dataset "$ds" --optimizers gd,sam-l2,sam-linf --init-scales "$INIT_SCALES"
        --seeds "$SEEDS" --epochs "$EPOCHS" --device "$DEVICE" --out "$OUT/$ds")
  [[ -n "${DATA_DIR:-}" ]] && args+=(--data-dir "$DATA_DIR")
  mkdir -p "$OUT/$ds"
  # shellcheck disable=SC2086
  python -m theorycheck "${args[@]}" ${EXTRA:-} | tee "$OUT/$ds/report.txt"
done
