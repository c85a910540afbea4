"""``tumble fit-bench`` and ``tumble live-bench`` through their command line: the tables and lines
the README publishes (the same columns and rows), and figures that say what the benches measure:
a fit within its own standard errors, every flight found, the drag that makes predictions right,
the live fit equal to the offline one within its standard errors, the samples a clear loses.

No figure of speed is asserted (the benches print them); only that they are consistent."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import ROOT, tumble

from tumble.throws.live.client import POLL_MEASURING_S, REQUEST_TIMEOUT_S

README = ROOT.joinpath("README.md").read_text(encoding="utf-8")
#: a fitted ratio may lie this many of the fit's standard errors from the truth (a wider miss is a
#: biased fit, not noise)
SIGMAS = 5
#: a kept session fitted again lands this near the ratios written beside it (5 clean flights)
RATIO_TOLERANCE = 0.01


def table(lines: list[str], header_start: str) -> tuple[list[str], list[list[str]]]:
    """(header cells, rows of cells) of the Markdown table whose header begins ``header_start``."""
    k = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[k:]]
    assert set(lines[k + 1]) <= set("|-"), lines[k + 1]
    rows = []
    for line, row in zip(lines[k + 2:], cells[2:]):
        if not line.startswith("|"):
            break
        rows.append(row)
    return cells[0], rows


def pct(cell: str) -> float:
    assert cell.endswith("%"), cell
    return float(cell[:-1]) / 100


def published(header: list[str]) -> list[list[str]]:
    """The README's rows (backticks dropped) of the table with this header."""
    lines = [line.replace("`", "") for line in README.splitlines()]
    head, rows = table(lines, "| " + " | ".join(header) + " |")
    assert head == header
    return rows


# ------------------------------------------------------------------ tumble fit-bench

@pytest.fixture(scope="module")
def fit_bench_run(tmp_path_factory):
    """``tumble fit-bench --out DIR`` run once (the README's command, its default seed): (the lines
    it prints, DIR). ``--out`` changes no printed figure; it keeps the sessions and the figures."""
    out = tmp_path_factory.mktemp("fit-bench") / "bench"
    res = tumble("fit-bench", "--out", out, cwd=out.parent, timeout=540)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines(), out


@pytest.fixture(scope="module")
def fit_bench(fit_bench_run):
    """The lines ``tumble fit-bench`` prints."""
    return fit_bench_run[0]


@pytest.mark.timeout(600)
def test_fit_bench_recovers_the_body_within_its_standard_errors(fit_bench):
    header, rows = table(fit_bench, "| data |")
    assert [r[0] for r in rows] == [r[0] for r in published(header)]
    by = {r[0]: dict(zip(header, r)) for r in rows}
    for label, r in by.items():
        found, flights = (int(x) for x in re.match(r"(\d+)/(\d+)", r[header[1]]).groups())
        error, std = pct(r["ratio error (max)"]), pct(r["ratio std error (max)"])
        if "--axes sensor" in label:
            # ignoring the 2 degree turn: the same flights are found (finding them does not depend
            # on --axes), but the sensor's frame fits them worse, and the standard errors say so
            assert found == flights and "extra" not in r[header[1]], r
            assert float(r["worst start error (ms)"]) <= 20.0
            fitted = by["5 flights of 1 s, 100 Hz"]
            assert std > 10 * pct(fitted["ratio std error (max)"])
            assert pct(r["drag error (max)"]) > 10 * pct(fitted["drag error (max)"])
            continue
        # every flight found, starting within the 20 ms the column names, no extra
        assert found == flights and "extra" not in r[header[1]], r
        assert float(r["worst start error (ms)"]) <= 20.0
        # the printed error rounds to 0.001%: within SIGMAS standard errors plus that rounding
        assert error <= SIGMAS * std + 5e-6, r
        assert float(r["fit (s)"]) > 0
    assert int(by["100 flights of 1 s, up to 38 rad/s (clipped samples left out)"]["clipped samples"]) > 0
    # the reference line: the ratio printed is the fit's time over the reference's
    ref = next(line for line in fit_bench if line.startswith("reference: "))
    seconds, times = re.search(r"took ([\d.]+) s; the fit took (\d+)x that", ref).groups()
    fit_s = float(by["100 flights of 1 s, up to 38 rad/s (clipped samples left out)"]["fit (s)"])
    assert int(times) == pytest.approx(fit_s / float(seconds), rel=0.05, abs=1)


@pytest.mark.timeout(600)
def test_fit_bench_real_world_finds_every_throw_and_sets_the_other_object_aside(fit_bench):
    header, rows = table(fit_bench, "| recording |")
    assert [r[0] for r in rows] == [r[0] for r in published(header)]
    for row in rows:
        r = dict(zip(header, row))
        assert r["found as one flight"] == r["throws and bounces"], r
        # each edge within two samples (20 ms at 100 Hz) of the first and last unclipped samples of
        # the flight; on the 1000 deg/s sensor the one edge finder (issue 27, item 6) settles one
        # start three samples late, after a hand ramp that the short stretch judging it follows
        bound = 40.0 if "1000 deg/s" in r["recording"] else 20.0
        assert r["worst edge error (ms)"] == "-" or float(r["worst edge error (ms)"]) <= bound
        still = r["recording"].startswith(("still phone", "a different object"))
        assert (int(r["exact zeros"]) > 0) == still, r  # a still iPhone reads exactly 0
    other = dict(zip(header, rows[-1]))
    assert other["excluded"] == "1"
    assert dict(zip(header, rows[1]))["cut at the recording's edge"] == "1"  # it starts mid-flight
    line = next(x for x in fit_bench if x.startswith("real world: "))
    error, std = (float(x) / 100 for x in re.search(r"ratio error ([\d.]+)%, ratio std error ([\d.]+)%",
                                                        line).groups())
    assert error <= SIGMAS * std + 5e-6, line


@pytest.mark.timeout(600)
def test_fit_bench_predictions_need_the_drag(fit_bench):
    header, rows = table(fit_bench, "| model |")
    readme = [r[0] for r in published(header)]  # the README adds the rows of the table below to this one
    assert [r[0] for r in rows] == readme[:2]
    drag, plain = (dict(zip(header, r)) for r in rows)
    near = header[2]
    assert drag["throws"] == plain["throws"] == "50" and 0 < int(drag[near]) <= 50
    assert pct(drag["first flip within 5%"]) == 1.0
    assert pct(drag["median flip error"]) < pct(plain["median flip error"])
    assert pct(drag["median ω RMS / ‖ω0‖"]) < 0.1 < pct(plain["median ω RMS / ‖ω0‖"])
    header, rows = table(fit_bench, "| windows |")
    assert [r[0] for r in rows] == readme[2:]
    for row in rows:
        r = dict(zip(header, row))
        # omega0 fitted on the flight's first 0.1 s: at least as good as the mean of 3 samples
        assert 0 < int(r["near the intermediate axis"]) <= int(r["throws"]) == 50
        assert pct(r["first flip within 5%"]) == 1.0
        assert pct(r["median flip error"]) <= pct(drag["median flip error"])


@pytest.mark.timeout(600)
def test_fit_bench_out_keeps_its_sessions_with_their_truth_and_figures(fit_bench_run):
    lines, out = fit_bench_run
    kept = sorted(p.name for p in out.iterdir())
    assert {"five", "fast", "hundred", "session", "later", "world0", "figures.json"} <= set(kept)
    assert not [name for name in kept if name.startswith(".")]  # no temporary left behind
    truth = json.loads((out / "five" / "truth.json").read_text())
    # a kept session fits again to the body written beside it
    res = tumble("fit", out / "five", "--axes", "fit", "--json", cwd=out.parent)
    fitted = json.loads(res.stdout)
    assert np.max(np.abs(np.asarray(fitted["ratios"]) - truth["ratios"])) < RATIO_TOLERANCE
    assert len(truth["throws"]) == 5 and (out / "five" / "Raw Data.csv").is_file()
    # the kept figures (what --json prints) are the printed tables' figures
    figures = json.loads((out / "figures.json").read_text())
    header, rows = table(lines, "| data |")
    assert [r["data"] for r in figures["recovery"]] == [r[0] for r in rows]
    for kept_row, row in zip(figures["recovery"], rows):
        r = dict(zip(header, row))
        assert f"{kept_row['found']}/{kept_row['flights']}" in r[header[1]]
        assert f"{100 * kept_row['ratio_error']:.3f}%" == r["ratio error (max)"]
    header, rows = table(lines, "| model |")
    assert [p["model"] for p in figures["prediction"]] == [r[0] for r in rows]
    assert [r["data"] for r in figures["real_world"]["rows"]] == [r[0] for r in table(lines, "| recording |")[1]]
    assert lines[-1].startswith("kept the sessions in ") and lines[-1].endswith("figures in figures.json")


# ------------------------------------------------------------------ tumble live-bench

#: throws of the live bench's session: small, so that it replays in about 10 s at speed 1
LIVE_THROWS = 4
LIVE_LINES = [
    r"(\d+) of (\d+) throws reported as one flight each \(start and end within 0\.1 s\); (\d+) within 2 s of the catch",
    r"latency after the catch: median ([\d.]+) s, max ([\d.]+) s",
    r"events: (\d+) reconnecting, (\d+) cleared; exit (\d+)",
    r"CPU ([\d.]+) s over ([\d.]+) s wall = (\d+)% of one core",
    r"end ratios ([\d.]+), ([\d.]+), ([\d.]+), offline fit ([\d.]+), ([\d.]+), ([\d.]+): largest difference ([\d.]+)",
    r"samples in the CSV files: (\d+) of (\d+) played \(a clear discards those it empties\)",
]


@pytest.fixture(scope="module")
def live_bench():
    res = tumble("live-bench", "--throws", LIVE_THROWS, timeout=240)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


@pytest.mark.timeout(300)
def test_live_bench_prints_the_readmes_lines(live_bench):
    """The same six lines as the README's block, in its order."""
    assert len(live_bench) == len(LIVE_LINES), live_bench
    block = README.split("`tumble live-bench` replays", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    assert len(block.strip().splitlines()) == len(LIVE_LINES)
    for line, published_line, pattern in zip(live_bench, block.strip().splitlines(), LIVE_LINES):
        assert re.fullmatch(pattern, line), line
        assert re.fullmatch(pattern, published_line), published_line


@pytest.mark.timeout(300)
def test_live_bench_follows_the_session_through_the_outage_and_the_clear(live_bench, tmp_path):
    from tumble.throws.benches.live_bench import session
    from tumble.throws.fitting.fit import fit_paths

    m = [re.fullmatch(p, line) for p, line in zip(LIVE_LINES, live_bench)]
    found, throws, quick = (int(x) for x in m[0].groups())
    # every throw found; the README's runs missed at most the first one (a spin about the minor
    # axis that alone does not tell the ratios)
    assert throws == LIVE_THROWS and found >= throws - 1 and quick <= found
    median, worst = float(m[1][1]), float(m[1][2])
    assert 0 < median <= worst
    reconnecting, cleared, status = (int(x) for x in m[2].groups())
    assert reconnecting >= 1 and cleared == 1 and status == 0  # the outage and the clear were seen
    cpu, wall, share = float(m[3][1]), float(m[3][2]), int(m[3][3])
    assert 0 < cpu and share == pytest.approx(100 * cpu / wall, abs=1)
    live, offline = np.array(m[4].groups()[:3], float), np.array(m[4].groups()[3:6], float)
    assert live[2] == offline[2] == 1.0
    assert float(m[4][7]) == pytest.approx(np.max(np.abs(live - offline)), abs=1e-4)
    # the live fit is the offline fit of the same session, within the offline fit's standard errors
    path, t, _, _ = session(tmp_path, LIVE_THROWS, 2026)
    _, reference = fit_paths([str(path)])
    np.testing.assert_allclose(offline, reference.moments, atol=5e-5)  # the same offline fit, printed to 4 places
    assert np.all(np.abs(live - reference.moments) <= 2 * reference.moments_std + 5e-5)
    served, played = int(m[5][1]), int(m[5][2])
    assert played == len(t)
    # only the clear loses samples: those measured after the last poll before it, one poll
    # period apart, or a request's timeout when the poll hangs
    rate = 1 / np.median(np.diff(t))
    assert played - rate * max(POLL_MEASURING_S, REQUEST_TIMEOUT_S) <= served <= played
