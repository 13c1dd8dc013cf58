"""Grad-CAM on a hand-built 1-conv model, receptive fields, and the background metric."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("captum")
nn = torch.nn

from theorycheck.cnn.gradcam import (  # noqa: E402
    Fields,
    background_fraction,
    gradcam,
    receptive_fields,
    summarize,
    upsample,
)
from theorycheck.cnn.models import SmallCNN  # noqa: E402

# input, 3×3:            conv K1 = [[1,0],[0,1]] → A1 = [[2,0],[0,2]]
X = [[1.0, 0.0, 2.0],  # conv K2 = [[0,1],[1,0]] → A2 = [[0,3],[4,0]]
     [0.0, 1.0, 0.0],
     [3.0, 0.0, 1.0]]
# head (no bias) on flatten(A1, A2): class 0 weights mean 2 on A1, −1 on A2 → cam0 = ReLU(2A1 − A2)
HEAD = [
    [1, 2, 3, 2, -1, -1, -1, -1],
    [-1, -1, -1, -1, 0, 0, 0, 4],  # class 1: a = (−1, 1) → cam1 = ReLU(A2 − A1)
    [-1, -1, -1, -1, -1, -1, -1, -1],  # class 2: a = (−1, −1) → blank
]


def tiny_model() -> tuple[nn.Module, nn.Module]:
    conv = nn.Conv2d(1, 2, kernel_size=2, bias=False)
    relu = nn.ReLU()
    lin = nn.Linear(8, 3, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]], [[[0.0, 1.0], [1.0, 0.0]]]]))
        lin.weight.copy_(torch.tensor(HEAD, dtype=torch.float32))
    return nn.Sequential(conv, relu, nn.Flatten(), lin), relu


def test_gradcam_matches_hand_computation_and_releases_hooks():
    model, relu = tiny_model()
    x = torch.tensor(X)[None, None].repeat(3, 1, 1, 1)
    cam = gradcam(model, relu, x, [0, 1, 2]).numpy()
    np.testing.assert_array_equal(cam[0], [[4, 0], [0, 4]])  # ReLU([[4,−3],[−4,4]])
    np.testing.assert_array_equal(cam[1], [[0, 3], [4, 0]])  # ReLU([[−2,3],[4,−2]])
    np.testing.assert_array_equal(cam[2], [[0, 0], [0, 0]])  # −(A1 + A2) ≤ 0: blank
    assert not relu._forward_hooks and not relu._backward_hooks
    assert model.training  # mode restored


def test_receptive_field_upsampling_by_hand():
    model, _ = tiny_model()
    rf = receptive_fields(list(model)[:2], 3)
    np.testing.assert_array_equal(rf.intervals, [[0, 1], [1, 2]])
    np.testing.assert_array_equal(rf.centres, [0.5, 1.5])
    cams = np.array([[[4, 0], [0, 4]], [[0, 3], [4, 0]]], dtype=float)
    maps = upsample(cams, 3, "rf", rf)
    np.testing.assert_allclose(maps[0], [[1, 1, 0], [1, 2, 1], [0, 1, 1]])
    np.testing.assert_allclose(maps[1], [[0, 0.75, 0.75], [1, 1.75, 0.75], [1, 1, 0]])
    # background = pixels ≤ 1: all but the corners (0,2)=2 and (2,0)=3
    mask = np.array(X) <= 1
    frac, blank = background_fraction(maps, np.broadcast_to(mask, maps.shape))
    np.testing.assert_allclose(frac, [1.0, 0.75])
    assert not blank.any()
    s = summarize(maps, np.broadcast_to(mask, maps.shape), cell_side=2, method="rf", fields=rf)
    assert s.fraction == pytest.approx(0.875)
    assert s.baseline_pixels == pytest.approx(7 / 9)
    # uniform cells → [[.25,.5,.25],[.5,1,.5],[.25,.5,.25]]: corners (0,2),(2,0) hold 0.5 of 4
    assert s.baseline_cells == pytest.approx(3.5 / 4)


def test_center_upsampling_is_a_mass_preserving_partition():
    rf = Fields(np.array([[0, 1], [1, 2]]), np.array([0.5, 1.5]))
    maps = upsample(np.array([[[4.0, 0], [0, 8]]]), 3, "center", rf)
    # centres 0.5 and 1.5: pixels 0,1 → cell 0 (the tie at pixel 1 goes to the lower cell), pixel 2 → cell 1
    np.testing.assert_allclose(maps[0], [[1, 1, 0], [1, 1, 0], [0, 0, 8]])
    assert maps.sum() == pytest.approx(12)


def test_background_metric_on_hand_made_maps():
    maps = np.zeros((4, 4, 4))
    maps[0, 0, 0] = 1.0                      # all on the background pixel
    maps[1, 2, 2] = 3.0                      # all on the object
    maps[2] = 1.0                            # uniform
    mask = np.zeros((4, 4, 4), dtype=bool)
    mask[:, 0, :] = True                     # background: the top row (4 of 16 pixels)
    frac, blank = background_fraction(maps, mask)
    np.testing.assert_allclose(frac[:3], [1.0, 0.0, 0.25])
    assert np.isnan(frac[3]) and blank.tolist() == [False, False, False, True]
    s = summarize(maps, mask, cell_side=4, method="center",
                  fields=Fields(np.array([[i, i] for i in range(4)]), np.arange(4.0)))
    assert s.n_blank == 1 and s.n_images == 4
    assert s.fraction == pytest.approx((1.0 + 0.0 + 0.25) / 3)
    assert s.baseline_pixels == pytest.approx(0.25) and s.baseline_cells == pytest.approx(0.25)
    with pytest.raises(ValueError, match="non-negative"):
        background_fraction(-maps, mask)


def test_all_blank_has_no_fraction():
    s = summarize(np.zeros((2, 3, 3)), np.ones((2, 3, 3), dtype=bool), cell_side=3, method="center",
                  fields=Fields(np.array([[0, 0], [1, 1], [2, 2]]), np.arange(3.0)))
    assert s.fraction is None and s.n_blank == 2


def test_receptive_fields_match_gradient_support():
    """Analytic fields = where ∂(cell)/∂(input) ≠ 0, for a conv/avg-pool stack with positive
    weights (no cancellation), padding included."""
    torch.manual_seed(0)
    layers = [nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2), nn.Conv2d(2, 2, 3, padding=1),
              nn.ReLU(), nn.AvgPool2d(2), nn.Conv2d(2, 1, 5, padding=2, stride=1)]
    net = nn.Sequential(*layers).double()
    with torch.no_grad():
        for m in net:
            if isinstance(m, nn.Conv2d):
                m.weight.uniform_(0.1, 1.0)
                m.bias.fill_(1.0)
    size = 20
    rf = receptive_fields(layers, size)
    assert len(rf) == 5
    x = torch.rand(1, 1, size, size, dtype=torch.float64) + 0.5
    for i in range(len(rf)):
        x.grad = None
        x.requires_grad_(True)
        net(x)[0, 0, i, 2].backward()
        rows = np.flatnonzero(x.grad[0, 0].abs().sum(dim=1).numpy() > 0)
        assert (rows.min(), rows.max()) == tuple(rf.intervals[i])


def test_small_cnn_receptive_field_and_flat_baseline():
    model = SmallCNN(1, 10, 28, widths=(4, 4, 4))
    layers = list(model.features)
    rf = receptive_fields(layers, 28)
    # 3×3 conv, pool 2, 3×3 conv, pool 2, 3×3 conv: field 18 pixels, jump 4, offset −7
    assert len(rf) == model.feature_size == 7
    np.testing.assert_array_equal(rf.intervals[3], [12 - 7, 12 + 10])
    np.testing.assert_array_equal(rf.intervals[0], [0, 10])
    np.testing.assert_array_equal(rf.intervals[6], [17, 27])
    np.testing.assert_allclose(rf.centres, 4 * np.arange(7) + 1.5)
    # a uniform cell map through "rf" is not uniform on pixels (the centre is seen by more
    # cells): the cell baseline reports how much. Pixel 0 is seen by cells 0 ([0,10]) and
    # 1 ([0,14]); pixel 14 by cells 1 ([0,14]), 2, 3, 4 (18 wide) and 5 ([13,27]).
    flat = upsample(np.ones((1, 7, 7)), 28, "rf", rf)[0]
    assert flat.sum() == pytest.approx(49)
    assert flat[0, 0] == pytest.approx((1 / 11 + 1 / 15) ** 2)
    assert flat[14, 14] == pytest.approx((2 / 15 + 3 / 18) ** 2)
    flat_c = upsample(np.ones((1, 7, 7)), 28, "center", rf)[0]
    np.testing.assert_allclose(flat_c, np.full((28, 28), 49 / 784))
