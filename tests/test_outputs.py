"""One rule for every output path (theorycheck.outputs.RULE), in the library and in every command:
missing folders on the way are created, a folder is refused where a file or a prefix is expected (the
message says what to give), a file in the way is refused — all before any work starts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from theorycheck.cli.main import main
from theorycheck.errors import TheorycheckError
from theorycheck.outputs import FIGURE_SUFFIXES, output_file, output_folder, output_prefix

HEATMAP = ["heatmap", "--z", "1,2", "--rho", "1", "--alphas", "0.2:1:3", "--t-max", "1", "--nt", "4",
           "--array-backend", "numpy", "--backend", "serial", "--no-progress"]


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_rule_in_the_library(tmp_path):
    (tmp_path / "afile").write_text("x")
    assert output_file(tmp_path / "new" / "deeper" / "f.png", suffixes=FIGURE_SUFFIXES).name == "f.png"
    assert output_prefix(tmp_path / "new" / "run.npz") == (tmp_path / "new" / "run.npz", tmp_path / "new" / "run.json")
    assert output_folder(tmp_path / "new" / "dir") == tmp_path / "new" / "dir"
    for call, fragment in [
        (lambda: output_file(tmp_path), "is a folder; give a file name in it"),
        (lambda: output_file(f"{tmp_path}/sub/"), "is a folder"),
        (lambda: output_file(tmp_path / "afile" / "x.png"), "is a file, not a folder"),
        (lambda: output_file(tmp_path / "x.txt", suffixes=FIGURE_SUFFIXES), "end the name with .png, .svg, .pdf"),
        (lambda: output_prefix(f"{tmp_path}/"), "names a folder, not a prefix"),
        (lambda: output_prefix(f"{tmp_path}/.npz"), "names a folder, not a prefix"),
        (lambda: output_prefix(tmp_path), "names a folder, not a prefix"),
        (lambda: output_prefix(tmp_path / "afile" / "run"), "is a file, not a folder"),
        (lambda: output_folder(tmp_path / "afile"), "is a file; give a folder"),
        (lambda: output_file("a\x00b"), "NUL"),
    ]:
        with pytest.raises(TheorycheckError, match=fragment.replace(".", r"\.")):
            call()


def test_sweep_save_and_figure_create_missing_folders_and_refuse_folders(tmp_path):
    import theorycheck as tc
    from theorycheck.report import plots

    res = tc.heatmap(tc.Setting.from_z([1.0, 2.0], optimizer="sam-l2", rho=1.0), alphas=np.array([0.2, 1.0]),
                     times=np.array([0.5, 1.0]), backend="serial", progress=False)
    npz, js = res.save(tmp_path / "a" / "b" / "run")
    assert npz.is_file() and js.is_file() and npz.name == "run.npz"
    with pytest.raises(TheorycheckError, match="prefix=.*: names a folder"):
        res.save(tmp_path / "a")
    assert not (tmp_path / "a" / ".npz").exists()
    (p,) = plots.save(plots.heatmap_figure(res), tmp_path / "c" / "d" / "h.png")
    assert p.is_file()
    with pytest.raises(TheorycheckError, match="path=.*: is a folder"):
        plots.save(plots.heatmap_figure(res), tmp_path / "c")


def test_every_command_follows_the_rule(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    # a file in the way: refused by each command, naming its own option
    for argv, option in [(["trajectory", "--z", "1,2", "--plot", "afile/x.png"], "--plot"),
                         (["verify", "--claims", "C1", "--json", "afile/v.json"], "--json"),
                         (HEATMAP + ["--out", "afile/h.png"], "--out"),
                         (HEATMAP + ["--save", "afile/run"], "--save"),
                         (["reproduce", "loss-plateau", "--out", "afile/dir"], "--out"),
                         (["reproduce", "loss-plateau", "--out", "afile"], "--out")]:
        rc, out, err = run(argv, capsys)
        assert rc == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert f"{option} afile" in err and ("is a file" in err), err
    # missing folders are created, for a figure and a prefix alike
    rc, out, err = run(HEATMAP + ["--out", "figs/new/h.png", "--save", "runs/new/h", "--json"], capsys)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["out"] == "figs/new/h.png" and doc["saved"] == ["runs/new/h.npz", "runs/new/h.json"]
    assert (tmp_path / "figs/new/h.png").is_file() and (tmp_path / "runs/new/h.npz").is_file()
    assert not list(tmp_path.rglob(".npz")) and not list(tmp_path.rglob(".json"))


@pytest.mark.parametrize("argv, fragment", [
    (["trajectory", "--data", "."], "data file '.' is a folder: give the path of a CSV file in it"),
    (HEATMAP + ["--out", "."], "--out .: is a folder; give a file name in it, e.g. ./result.png"),
])
def test_folder_messages_say_what_to_give(argv, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(argv, capsys)
    assert rc == 2 and fragment in err and "not found" not in err and "write .png" not in err, err


def _unwritable_folder(tmp_path):
    """A folder nothing can be written into, root included: /proc where it exists (a virtual
    file system: permission bits said writable for root, and the write failed after the work)."""
    import os

    if os.path.isdir("/proc/self") and os.geteuid() == 0:
        return "/proc"
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    if os.access(d, os.W_OK):  # pragma: no cover - root without /proc
        pytest.skip("no folder this user cannot write")
    return str(d)


def test_unwritable_folders_are_found_by_trying(tmp_path, monkeypatch, capsys):
    ro = _unwritable_folder(tmp_path)
    for call in (lambda: output_file(f"{ro}/x.png"), lambda: output_prefix(f"{ro}/sub/run"),
                 lambda: output_folder(f"{ro}/a/b")):
        with pytest.raises(TheorycheckError, match="is not writable"):
            call()
    monkeypatch.chdir(tmp_path)
    for argv, option in [(HEATMAP + ["--out", f"{ro}/h.png"], "--out"),
                         (HEATMAP + ["--save", f"{ro}/sub/run"], "--save"),
                         (["trajectory", "--z", "1,2", "--plot", f"{ro}/x.png"], "--plot"),
                         (["reproduce", "loss-plateau", "--out", f"{ro}/r"], "--out"),
                         (["cnn", "--quick", "--out", f"{ro}/c"], "--out"),
                         (["linear-images", "--quick", "--save", f"{ro}/s"], "--save"),
                         (["linear-images", "--quick", "--figures", f"{ro}/f"], "--figures")]:
        rc, out, err = run(argv, capsys)
        assert rc == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert option in err and "not writable" in err, (argv, err)
    assert not list(tmp_path.rglob(".theorycheck-probe-*"))


def test_linear_images_checks_its_folders_before_the_work(tmp_path):
    from theorycheck.numerics.minor_first.e2.linear_images import linear_images

    (tmp_path / "afile").write_text("x")
    for kw in ({"save": tmp_path / "afile" / "s"}, {"figures": tmp_path / "afile"}):
        with pytest.raises(TheorycheckError, match=f"{next(iter(kw))}=") as e:
            linear_images(None, **kw)
        assert "\n" not in str(e.value)
