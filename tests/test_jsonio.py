"""The one reader of untrusted JSON files (:func:`theorycheck.jsonio.read_json`): bounded in
size and depth, one-line errors (a file nested 10⁵ deep raised RecursionError in json.load)."""

from __future__ import annotations

import pytest

from theorycheck.errors import TheorycheckError
from theorycheck.jsonio import MAX_JSON_DEPTH, read_json


def _write(tmp_path, text, name="f.json"):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def test_reads_plain_json_with_brackets_inside_strings(tmp_path):
    p = _write(tmp_path, '{"a": [1, 2.5, {"b": "[[[{"}], "c": "\\"]}", "d": null, "e": "é"}')
    assert read_json(p) == {"a": [1, 2.5, {"b": "[[[{"}], "c": '"]}', "d": None, "e": "é"}


def test_depth_limit_is_exact(tmp_path):
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert read_json(_write(tmp_path, ok)) is not None
    with pytest.raises(TheorycheckError, match="nested at most"):
        read_json(_write(tmp_path, "[" + ok + "]"))


@pytest.mark.parametrize("text, match", [
    ("[" * 100_000 + "]" * 100_000, "nested at most"),
    ('{"a": ' * 50_000 + "1" + "}" * 50_000, "nested at most"),
    ("[}", "nested at most"),
    ("{'a': 1}", "not JSON"),
    ("", "not JSON"),
    ("[1] [2]", "not JSON"),
    (b"\xff\xfe[]", "not UTF-8"),
    ("1" * 5000, "not readable JSON"),
])
def test_untrusted_files_give_one_line_errors(tmp_path, text, match):
    with pytest.raises(TheorycheckError, match=match) as e:
        read_json(_write(tmp_path, text), "certificate")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("certificate ")


def test_size_limit_and_paths(tmp_path):
    p = _write(tmp_path, "[" + "1," * 100 + "1]")
    with pytest.raises(TheorycheckError, match="larger than 64 bytes"):
        read_json(p, max_bytes=64)
    assert len(read_json(p, max_bytes=1000)) == 101
    with pytest.raises(TheorycheckError, match="cannot be read"):
        read_json(tmp_path / "missing.json")
    with pytest.raises(TheorycheckError, match="is a folder"):
        read_json(tmp_path)


def test_a_saved_sweep_with_hostile_files_is_refused_in_one_line(tmp_path, monkeypatch):
    import numpy as np

    from theorycheck.sweep import result

    prefix = tmp_path / "run"
    result.SweepResult({"x": np.arange(3.0)}, {"kind": "test"}).save(prefix)
    assert result.SweepResult.load(prefix).meta == {"kind": "test"}
    (tmp_path / "run.json").write_text("[" * 10_000 + "]" * 10_000)
    with pytest.raises(TheorycheckError, match="saved sweep metadata .*nested at most") as e:
        result.SweepResult.load(prefix)
    assert "\n" not in str(e.value)
    (tmp_path / "run.json").write_text("[1, 2]")
    with pytest.raises(TheorycheckError, match="not a JSON object"):
        result.SweepResult.load(prefix)
    (tmp_path / "run.json").write_text("{}")
    # the sizes an archive's directory declares are checked before anything is unpacked
    result.SweepResult({"x": np.zeros(10_000)}, {}).save(prefix)
    monkeypatch.setattr(result, "MAX_NPZ_BYTES", 50_000)
    with pytest.raises(TheorycheckError, match="unpacks to"):
        result.SweepResult.load(prefix)
    (tmp_path / "run.npz").write_bytes(b"not a zip")
    with pytest.raises(TheorycheckError, match="not an .npz archive"):
        result.SweepResult.load(prefix)
