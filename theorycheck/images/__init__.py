"""E2 on diagonal linear networks over image pixels (MNIST, CIFAR-10): β is the pixel map.

:func:`linear_images` is what ``theorycheck linear-images`` calls."""

from theorycheck.images.experiment import Config, LinearImagesResult, linear_images, quick_config

__all__ = ["Config", "LinearImagesResult", "linear_images", "quick_config"]
