"""Issue 34, items 12-17: small things that were wrong in front of a class (those needing no window)."""

from __future__ import annotations

import contextlib
import io
import json
import re

import numpy as np
import pytest

from conftest import ROOT, tumble

README = (ROOT / "README.md").read_text(encoding="utf-8")
TOUR = ROOT / "resources" / "notebooks" / "tour.ipynb"


def test_the_readme_says_the_drift_is_what_the_plot_shows():
    """Item 14: a 20 s RK4 run of the T-handle keeps its energy to round-off, 1e-15 or so,
    not to parts per billion (1e-9): the README says what the drift plot shows."""
    import tumble as api

    assert "parts per billion" not in README
    run = api.simulate(api.load("t-handle").with_values({"solver.duration": 20.0}))
    drift = np.max(np.abs(run.drift()["E"]))
    assert drift < 1e-12  # round-off: 1000 times under a part per billion
    first = README.split("### Why it flips, in plain words", 1)[0]
    assert "round-off" in first and "10⁻¹⁵" in first


def test_the_readme_holds_no_leftover_editing_instruction():
    """Item 17: the live section held "... should then read: ..." glued to its limits heading."""
    assert "should then read" not in README
    for line in README.splitlines():
        if line.startswith("#"):
            assert line.count('"') % 2 == 0 and "section's bullets" not in line, line


def test_fit_toml_ends_with_a_newline(tmp_path):
    """Item 15: the FIT.toml ``tumble fit --out`` writes ends its last line."""
    out = tmp_path / "fit.toml"
    res = tumble("fit", "phone-throws", "--out", out, timeout=300)
    assert res.returncode == 0, res.stderr
    text = out.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")


def _cells(*starts) -> list[str]:
    nb = json.loads(TOUR.read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return [next(c for c in code if c.startswith(s)) for s in starts]


@pytest.mark.slow
def test_the_tours_drift_plot_spans_the_drift_and_its_predictions_read_as_times(tmp_path, monkeypatch):
    """Item 17: the tour's Run plot had a drift axis from 1e-314 to 10 (its exact zeros on a log
    axis), so its curves were flat; its prediction cell printed 16-digit floats and "None"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    space: dict = {}
    setup, scenario, simulate, plot, session, predict = _cells(
        "import pathlib", "sc = ", "run = tumble.simulate", "drift = run.drift()", "from tumble.throws.benches",
        "def seconds")
    for cell in (setup, scenario, simulate):
        exec(compile(cell, "tour", "exec"), space)
    exec(compile(plot, "tour", "exec"), space)
    bottom = plt.gcf().axes[1]
    low, high = bottom.get_ylim()
    drift = np.abs(space["drift"]["E"])
    drift = drift[drift > 0]
    assert low >= drift.min() / 10 and high <= 10 * max(drift.max(), np.abs(space["drift"]["L"]).max())
    assert high / low < 1e6  # the curves fill the plot: a few decades, not 315
    plt.close("all")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(session, "tour", "exec"), space)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(predict, "tour", "exec"), space)
    text = printed.getvalue()
    assert text.count("flip predicted") == len(space["flights"]) > 0
    assert "None" not in text and not re.search(r"\d\.\d{4,}", text), text
    assert re.search(r"flip predicted (\d+\.\d\d s|none \(no flip in the flight\))", text)
