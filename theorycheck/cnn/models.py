"""Small CNNs with an initialisation scale α (THEORY.md E2, the three regimes of C5).

``SmallCNN``: a fixed input standardisation (training-set mean/std per channel), then
conv blocks ``Conv3×3(pad 1) → [BatchNorm] → ReLU`` with a 2×2 max-pool after every block
but the last, and a linear head on the flattened last feature map. Grad-CAM reads the
last block's ReLU (:attr:`SmallCNN.target_layer`). α multiplies every conv and linear
weight and bias of PyTorch's default initialisation; BatchNorm's affine parameters keep
(1, 0), so with BatchNorm α acts on the head only (scale invariance) — off by default.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["SmallCNN", "Standardize", "parameter_norm"]


class Standardize(nn.Module):
    """``(x − mean) / std`` per channel, with fixed (non-trained) buffers."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__()
        self.register_buffer("mean", torch.tensor(list(mean), dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(list(std), dtype=torch.float32).view(1, -1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


class SmallCNN(nn.Module):
    """Conv blocks of the given ``widths`` and a linear head (see the module docstring).

    Args:
        in_channels, n_classes, image_size: input channels, classes, side of a square image.
        widths: output channels of each conv block (2–4 blocks is the intended range).
        alpha: initialisation scale α > 0 (multiplies the default init).
        batchnorm: insert BatchNorm2d after each conv.
        mean, std: per-channel input statistics for :class:`Standardize`.
    """

    def __init__(self, in_channels: int, n_classes: int, image_size: int, *,
                 widths: Sequence[int] = (8, 16, 32), alpha: float = 1.0, batchnorm: bool = False,
                 mean: Sequence[float] | None = None, std: Sequence[float] | None = None) -> None:
        super().__init__()
        if not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        if len(widths) < 1:
            raise ValueError("widths needs at least one conv block")
        self.alpha = float(alpha)
        mean = [0.0] * in_channels if mean is None else mean
        std = [1.0] * in_channels if std is None else std
        layers: list[nn.Module] = [Standardize(mean, std)]
        c, size = in_channels, image_size
        for i, w in enumerate(widths):
            layers.append(nn.Conv2d(c, w, kernel_size=3, padding=1))
            if batchnorm:
                layers.append(nn.BatchNorm2d(w))
            layers.append(nn.ReLU())
            if i < len(widths) - 1:
                layers.append(nn.MaxPool2d(2))
                size //= 2
            c = w
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(c * size * size, n_classes))
        self.feature_size = size
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    m.weight.mul_(self.alpha)
                    if m.bias is not None:
                        m.bias.mul_(self.alpha)

    @property
    def target_layer(self) -> nn.Module:
        """The last conv block's ReLU: the feature maps Grad-CAM weighs."""
        return self.features[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def parameter_norm(model: nn.Module) -> float:
    """‖θ‖₂ over all trainable parameters jointly (the norm SAM's ℓ2 radius is measured in)."""
    with torch.no_grad():
        return float(torch.linalg.vector_norm(torch.stack(
            [torch.linalg.vector_norm(p.detach().double()) for p in model.parameters() if p.requires_grad])))
