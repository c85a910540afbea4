"""The fit's speed bench (``tumble fit-bench --speed``, ``python -m tumble.throws.benches.speed_bench``):
its lines and figures hang together, its sessions are what it says. No speed is asserted."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tumble.throws.benches import speed_bench as sb


@pytest.fixture(scope="module")
def bench():
    lines = []
    figures = sb.run_speed_bench(say=lines.append, recordings=1)
    return lines, figures


@pytest.mark.slow
def test_speed_bench_prints_both_figures_with_their_ratios(bench):
    lines, figures = bench
    assert len(lines) == 3
    assert re.fullmatch(r"reference: the fit's integrator over 1 s at 200 Hz, best of 20: \d+ us", lines[0])
    ref = figures["reference_seconds"]
    clean, session = figures["clean_flight"], figures["racket_session"]
    assert ref > 0 and clean["seconds"] > 0 and session["seconds_per_100"] > 0
    assert clean["ratio_to_reference"] == pytest.approx(clean["seconds"] / ref)
    assert session["ratio_to_reference_per_100"] == pytest.approx(session["seconds_per_100"] / ref)
    assert session["seconds_per_100"] == pytest.approx(100 * session["seconds"] / session["flights_fitted"])
    assert f"{clean['seconds']:.3f} s" in lines[1] and f"{session['seconds_per_100']:.2f} s per 100 flights" in lines[2]


@pytest.mark.slow
def test_speed_bench_fits_what_it_times(bench):
    """The clean flight (no noise) gives its body's ratios to 1e-4; the racket-like session
    finds its throws and the racket's ratios (noise 0.01 rad/s: to 1%)."""
    _, figures = bench
    assert np.allclose(figures["clean_flight"]["moments"], sb.CLEAN_BODY, rtol=1e-4)
    session = figures["racket_session"]
    assert session["flights_fitted"] >= 0.9 * session["throws"]
    assert session["ratio_error"] < 0.01


def test_racket_session_has_the_samples_body():
    recordings, throws = sb.racket_session(recordings=2, throws=3)
    truth = sb.racket_truth()
    assert len(recordings) == 2 and throws >= 6  # bounces add throws
    assert np.allclose(truth.moments, (0.10268, 0.89946, 1.0))
    assert np.allclose(truth.axes.T @ truth.axes, np.eye(3), atol=1e-9)
    assert all(np.abs(r.w).max() <= 17.45 for r in recordings)  # the 1000 deg/s sensor clips
    assert any(r.saturated.any() for r in recordings)


def test_speed_bench_refuses_no_recordings(capsys):
    assert sb.main(["--recordings", "0"]) == 2
    assert "--recordings must be >= 1, got 0" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fit_bench_speed_prints_one_json_object():
    """``tumble fit-bench --speed --json``: the README's command, its figures as one object."""
    import json

    from conftest import tumble

    res = tumble("fit-bench", "--speed", "--json", timeout=840)
    assert res.returncode == 0, res.stderr
    figures = json.loads(res.stdout)
    assert set(figures) == {"reference_seconds", "clean_flight", "racket_session"}
    assert figures["racket_session"]["flights_fitted"] >= 90
    assert figures["clean_flight"]["ratio_to_reference"] == pytest.approx(
        figures["clean_flight"]["seconds"] / figures["reference_seconds"])
