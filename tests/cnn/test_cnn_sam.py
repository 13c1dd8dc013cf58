"""The torch SAM optimizer: the symbolic layer's iteration, ρ = 0, BatchNorm, state."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from theorycheck.cnn.sam import SAM, frozen_bn_statistics  # noqa: E402
from theorycheck.symbolic import model as sy  # noqa: E402
from theorycheck.symbolic.compiler import lambdify  # noqa: E402


class DiagonalNet(nn.Module):
    """β = w_1 ⊙ … ⊙ w_L; the loss is the mean logistic loss of the margins <β, z_i>."""

    def __init__(self, W: np.ndarray):
        super().__init__()
        self.w = nn.ParameterList([nn.Parameter(torch.tensor(row, dtype=torch.float64)) for row in W])

    def loss(self, Z: torch.Tensor) -> torch.Tensor:
        beta = self.w[0]
        for wk in self.w[1:]:
            beta = beta * wk
        return nn.functional.softplus(-(Z @ beta)).mean()  # ℓ(s) = log(1 + e^{-s})


def _symbolic_flow(L: int, d: int, n: int, optimizer: str):
    W, Z = sy.layer_symbols(L, d), sy.data_symbols(n, d)
    F = sy.flow(W, Z, optimizer, "logistic")
    f = lambdify((*W, *Z, sy.rho), list(F), "numpy")
    return lambda Wn, Zn, rho: np.array(f(*Wn.ravel(), *Zn.ravel(), rho), dtype=float).reshape(L, d)


@pytest.mark.parametrize("optimizer", ["sam-l2", "sam-linf", "gd", "asam"])
@pytest.mark.parametrize("L", [2, 3])
def test_one_step_equals_symbolic_iteration(optimizer, L):
    """One torch SAM step with base SGD(lr η) is W + η F(W), F = symbolic.flow, to 1e-12."""
    d, n, rho, eta = 3, 3, 0.3, 0.7
    rng = np.random.default_rng(L)
    W0 = rng.uniform(0.3, 1.5, size=(L, d)) * rng.choice([-1, 1], size=(L, d))
    Z = rng.normal(size=(n, d))
    net = DiagonalNet(W0)
    Zt = torch.tensor(Z, dtype=torch.float64)
    opt = SAM(net.parameters(), torch.optim.SGD, rho=rho, optimizer=optimizer, lr=eta)

    def closure():
        loss = net.loss(Zt)
        loss.backward()
        return loss

    loss0 = opt.step(closure)
    got = np.stack([w.detach().numpy() for w in net.w])
    expected = W0 + eta * _symbolic_flow(L, d, n, optimizer)(W0, Z, rho)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # the same step through the trajectory code's discrete iteration (theorycheck.discrete)
    from theorycheck.solvers.discrete import sam_step

    np.testing.assert_allclose(got, sam_step(W0, Z, optimizer=optimizer, rho=rho, eta=eta), rtol=0, atol=1e-12)
    assert float(loss0.detach()) == pytest.approx(float(DiagonalNet(W0).loss(Zt).detach()), abs=1e-15)
    # and the step really moved (the test could fail): SAM differs from GD here
    if optimizer != "gd":
        gd = W0 + eta * _symbolic_flow(L, d, n, "gd")(W0, Z, rho)
        assert np.abs(got - gd).max() > 1e-4


def test_l2_norm_is_joint_over_all_parameter_groups():
    """Two groups: ε uses the norm of the whole gradient, not of each group."""
    W0 = np.array([[1.0, -0.5], [0.8, 1.2]])
    Z = np.array([[1.0, 2.0]])
    net = DiagonalNet(W0)
    groups = [{"params": [net.w[0]]}, {"params": [net.w[1]]}]
    opt = SAM(groups, torch.optim.SGD, rho=0.5, optimizer="sam-l2", lr=1.0)
    net.loss(torch.tensor(Z)).backward()
    g = np.concatenate([w.grad.numpy() for w in net.w])
    opt.first_step()
    eps = np.concatenate([w.detach().numpy() for w in net.w]) - W0.ravel()
    np.testing.assert_allclose(eps, 0.5 * g / np.linalg.norm(g), rtol=1e-14)


def _conv_model(bn: bool = True) -> nn.Module:
    torch.manual_seed(0)
    layers = [nn.Conv2d(1, 3, 3, padding=1)]
    if bn:
        layers.append(nn.BatchNorm2d(3))
    layers += [nn.ReLU(), nn.Flatten(), nn.Linear(3 * 6 * 6, 4)]
    return nn.Sequential(*layers).double()


def _batches(k: int = 4):
    g = torch.Generator().manual_seed(1)
    return [(torch.rand(8, 1, 6, 6, generator=g, dtype=torch.float64), torch.randint(0, 4, (8,), generator=g))
            for _ in range(k)]


def _train(model, opt, batches, *, sam: bool):
    lossf = nn.CrossEntropyLoss()
    for x, y in batches:
        if sam:
            opt.step(lambda x=x, y=y: _backward(lossf(model(x), y)))
        else:
            opt.zero_grad()
            lossf(model(x), y).backward()
            opt.step()


def _backward(loss):
    loss.backward()
    return loss


@pytest.mark.parametrize("optimizer", ["sam-l2", "sam-linf", "asam"])
def test_rho_zero_is_the_base_optimizer_bitwise(optimizer):
    m1 = _conv_model()
    m2 = copy.deepcopy(m1)
    kw = dict(lr=0.1, momentum=0.9, weight_decay=1e-3)
    base = torch.optim.SGD(m1.parameters(), **kw)
    sam = SAM(m2.parameters(), torch.optim.SGD, rho=0.0, optimizer=optimizer, model=m2, **kw)
    _train(m1, base, _batches(), sam=False)
    _train(m2, sam, _batches(), sam=True)
    for a, b in zip(m1.state_dict().values(), m2.state_dict().values()):
        assert torch.equal(a, b)
    # positive ρ does move away from the base optimizer (so the test can fail)
    m3 = _conv_model()
    _train(m3, SAM(m3.parameters(), torch.optim.SGD, rho=0.05, optimizer=optimizer, model=m3, **kw),
           _batches(), sam=True)
    assert not torch.equal(m3[0].weight, m1[0].weight)


def test_perturbed_pass_does_not_touch_batchnorm_statistics():
    model = _conv_model()
    ref = copy.deepcopy(model)
    x, y = _batches(1)[0]
    sam = SAM(model.parameters(), torch.optim.SGD, rho=0.5, optimizer="sam-l2", model=model, lr=0.1)
    sam.step(lambda: _backward(nn.functional.cross_entropy(model(x), y)))
    ref(x)  # one unperturbed forward in train mode: what the statistics must be
    bn, bn_ref = model[1], ref[1]
    assert int(bn.num_batches_tracked) == 1
    assert torch.equal(bn.running_mean, bn_ref.running_mean)
    assert torch.equal(bn.running_var, bn_ref.running_var)
    # without the model SAM cannot protect the statistics: the second pass moves them
    model2 = _conv_model()
    sam2 = SAM(model2.parameters(), torch.optim.SGD, rho=0.5, optimizer="sam-l2", lr=0.1)
    sam2.step(lambda: _backward(nn.functional.cross_entropy(model2(x), y)))
    assert int(model2[1].num_batches_tracked) == 2
    assert not torch.equal(model2[1].running_mean, bn_ref.running_mean)


def test_frozen_bn_statistics_restores_exactly_even_on_error():
    model = _conv_model()
    before = {k: v.clone() for k, v in model.state_dict().items() if "running" in k or "tracked" in k}
    with pytest.raises(RuntimeError), frozen_bn_statistics(model):
        model(_batches(1)[0][0])
        raise RuntimeError("boom")
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("optimizer", ["sam-l2", "sam-linf"])
def test_state_dict_round_trip_continues_identically(optimizer):
    kw = dict(lr=0.05, momentum=0.9)
    batches = _batches(5)
    model = _conv_model()
    sam = SAM(model.parameters(), torch.optim.SGD, rho=0.1, optimizer=optimizer, model=model, **kw)
    _train(model, sam, batches[:3], sam=True)
    saved_model = copy.deepcopy(model.state_dict())
    saved_opt = copy.deepcopy(sam.state_dict())
    assert saved_opt["base"]["state"], "the base optimizer's momentum buffers are saved"
    assert saved_opt["base"]["param_groups"][0]["rho"] == 0.1
    _train(model, sam, batches[3:], sam=True)

    fresh = _conv_model()
    fresh.load_state_dict(saved_model)
    sam2 = SAM(fresh.parameters(), torch.optim.SGD, rho=0.7, optimizer=optimizer, model=fresh, **kw)
    sam2.load_state_dict(saved_opt)
    assert sam2.param_groups[0]["rho"] == 0.1 and sam2.param_groups is sam2.base_optimizer.param_groups
    _train(fresh, sam2, batches[3:], sam=True)
    for a, b in zip(model.state_dict().values(), fresh.state_dict().values()):
        assert torch.equal(a, b)
    # without the optimizer state (momentum lost) the continuation differs
    other = _conv_model()
    other.load_state_dict(saved_model)
    _train(other, SAM(other.parameters(), torch.optim.SGD, rho=0.1, optimizer=optimizer, model=other, **kw),
           batches[3:], sam=True)
    assert not torch.equal(other[0].weight, model[0].weight)
    with pytest.raises(ValueError, match="saved by"):
        SAM(fresh.parameters(), torch.optim.SGD, rho=0.1,
            optimizer="sam-linf" if optimizer == "sam-l2" else "sam-l2", lr=0.1).load_state_dict(saved_opt)


def test_zero_gradient_gives_no_perturbation_and_no_nan():
    p = nn.Parameter(torch.tensor([1.0, 2.0], dtype=torch.float64))
    sam = SAM([p], torch.optim.SGD, rho=0.3, optimizer="sam-l2", lr=0.1)
    p.grad = torch.zeros_like(p)
    sam.first_step()
    assert torch.equal(p.detach(), torch.tensor([1.0, 2.0], dtype=torch.float64))


def test_symbolic_flow_helper_matches_hand_gradient():
    """Guard for the reference itself: L = 1, one example, GD flow is −ℓ'(<w,z>) z."""
    f = _symbolic_flow(1, 2, 1, "gd")
    w, z = np.array([[0.3, -0.2]]), np.array([[1.0, 2.0]])
    m = float((w @ z.T)[0, 0])
    expected = z / (1 + np.exp(m))
    np.testing.assert_allclose(f(w, z, 0.0), expected, rtol=1e-14)
