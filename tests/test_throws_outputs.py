"""What tumble fit writes and prints: the plot's layout, outputs published together, the small slips, bounded work."""

import json
import tracemalloc

import numpy as np
import pytest
from conftest import refused, tumble_here

from tumble.cli.core import main
from tumble.throws.fitting import report
from tumble.throws.benches import synthetic as syn
from tumble.throws.benches.fit_bench import recording_from_arrays
from tumble.throws.fitting.fit import fit_recordings
from tumble.throws.fitting.flights import DERIVATIVE_MAX_SAMPLES, smooth_and_derivative

TRUTH = syn.Truth.rotated(2.0)


def _session(n, seed=1):
    rng = np.random.default_rng(seed)
    rates = [syn.spin_near(TRUTH, 1, 5.0 + 2 * k, 15.0 + k, rng) for k in range(n)]
    return syn.make_recording(TRUTH, rates, rng, flight_s=0.9)


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    t, w, _ = _session(1)
    path = tmp_path_factory.mktemp("one") / "throw $\\foo{$ 1.csv"
    path.write_text("t,wx,wy,wz\n" + "".join(f"{a:.6f},{b:.9E},{c:.9E},{d:.9E}\n" for a, (b, c, d) in zip(t, w)))
    return path


def _boxes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [ax.title for ax in fig.axes] + ([fig._suptitle] if fig._suptitle else [])
    return [tx.get_window_extent(renderer) for tx in texts if tx.get_text()], fig.bbox


@pytest.mark.parametrize("n", [1, 5])
def test_the_plot_fits_its_titles_and_they_do_not_overlap(n):
    t, w, _ = _session(n)
    result = fit_recordings([recording_from_arrays("a rather long recording name " * 3, t, w)])
    assert len(result.flights) == n
    fig = report.plot_figure(result)
    boxes, frame = _boxes(fig)
    assert len(boxes) == n + 1
    for box in boxes:
        assert box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)


def test_a_dollar_in_a_name_is_plain_text_and_outputs_are_written(one, tmp_path, capsys):
    out, png = tmp_path / "fit.toml", tmp_path / "fit.png"
    assert main(["fit", str(one), "--out", str(out), "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.read_text().endswith("\n") and not out.read_text().endswith("\n\n")
    # the slips: one flight, no negative zero, a Markdown table whose header has its 10 columns
    assert "1 flight fitted" in text and "1 flights" not in text
    assert "-0.0000" not in text and "-0.000 " not in text
    header = next(line for line in text.splitlines() if line.startswith("| #"))
    assert header.count("|") == 11


def test_a_failed_plot_leaves_the_old_fit_toml(one, tmp_path, monkeypatch, capsys):
    out, png = tmp_path / "fit.toml", tmp_path / "fit.png"
    out.write_text("old\n")

    def broken(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "draw_plot", broken)
    assert main(["fit", str(one), "--out", str(out), "--plot", str(png)]) == 1
    assert out.read_text() == "old\n" and not png.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.toml"]
    capsys.readouterr()


def test_drag_is_never_negative_and_json_has_no_negative_zero(one, capsys):
    t, w, _ = _session(3, seed=5)
    # a body without drag: its fitted coefficients sit at the bound 0, not below
    body = syn.Truth(drag=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(9)
    t, w, _ = syn.make_recording(body, [syn.spin_near(body, 1, a, 17.0, rng) for a in (4, 8, 12)], rng, flight_s=0.9)
    result = fit_recordings([recording_from_arrays("nodrag", t, w)])
    assert np.all(result.drag >= 0.0)
    text = json.dumps(result.to_json())
    assert "-0.0," not in text and "-0.0]" not in text
    assert "-0" not in report.summary(result).replace("e-0", "")


def test_the_derivative_window_is_capped_in_samples():
    """20,000 stamps 8 us apart (a time column in the wrong unit): a 0.06 s window would be
    7,500 samples wide (gigabytes); capped, the work is small and a cubic's slope still exact."""
    t = np.arange(20000) * 8e-6
    w = np.stack([t ** 3, 2 * t, -t ** 2], axis=1) * 1e6
    tracemalloc.start()
    _, dw = smooth_and_derivative(t, w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200e6
    np.testing.assert_allclose(dw, np.stack([3 * t ** 2, 2 + 0 * t, -2 * t], axis=1) * 1e6, rtol=1e-6, atol=1e-3)
    assert DERIVATIVE_MAX_SAMPLES <= 31


def test_long_recordings_are_differentiated_in_bounded_memory():
    n = 400_000
    t = np.arange(n) * 0.01
    w = np.stack([np.sin(t), np.cos(t), t * 0], axis=1)
    tracemalloc.start()
    smooth_and_derivative(t, w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 30 * n * 8 * 3  # a few copies of the rates, not (n, window, 4) arrays


def test_exclude_names_a_flight_or_is_refused(one, capsys):
    assert refused(tumble_here(capsys, "fit", one, "--exclude", "500")).startswith("tumble: error: --exclude")
    # the only flight: nothing left to fit
    refused(tumble_here(capsys, "fit", one, "--json", "--exclude", "1.5"), "leave at least one flight")
