"""The commands' text output says what their JSON says: switch times beside the switch sequence."""

from __future__ import annotations

import json

from theorycheck.cli.main import main


def test_thresholds_alpha_text_gives_each_switch_with_its_time(capsys):
    argv = ["thresholds", "--z", "1,1.25,3", "--rho", "2", "--alpha", "1"]
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert len(doc["switches"]) == 3 and doc["time_kind"] == "rescaled"
    seq = " → ".join([str(doc["trajectory_initial_index"])]
                     + [f"{s['to']} (τ = {s['time']:.6g})" for s in doc["switches"]])
    assert f"j† {seq}; final index {doc['final_index']}" in text
