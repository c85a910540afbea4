"""``tumble.fit`` and ``tumble.predict`` on a synthetic session of throws (as ``tumble
fit-bench`` makes them), against ``tumble fit --json`` of the same install."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from conftest import refused, tumble as cli

import tumble
from tumble.throws.benches import synthetic as syn

#: the same fit of the same file in two processes: the same floating-point operations, so
#: the ratios agree far below the 1e-9 asked for (BLAS is held to one thread by the fit)
TOL = 1e-9


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """A phyphox folder of 4 throws of a known body, like fit-bench's session."""
    rng = np.random.default_rng(2026)
    truth = syn.Truth.rotated(2.0)
    t, w, _ = syn.make_recording(truth, syn.throw_mix(truth, 4, rng), rng, flight_s=(0.8, 1.2))
    return syn.write_phyphox(tmp_path_factory.mktemp("api-fit") / "session", t, w)


@pytest.fixture(scope="module")
def fitted(session):
    return tumble.fit(session, axes="fit", inertia_scale=0.002)


def test_fit_is_the_commands_json(session, fitted):
    res = cli("fit", session, "--axes", "fit", "--inertia-scale", "0.002", "--json", timeout=600)
    assert res.returncode == 0, res.stderr
    expected = json.loads(res.stdout)
    got = fitted.to_dict()
    assert list(got) == list(expected)
    np.testing.assert_allclose(fitted.ratios, expected["ratios"], rtol=TOL, atol=TOL)
    np.testing.assert_allclose(got["inertia"], expected["inertia"], rtol=TOL, atol=TOL * 0.002)
    assert len(got["flights"]) == len(expected["flights"])


def test_the_fits_scenario_is_the_commands_toml(session, fitted, tmp_path):
    res = cli("fit", session, "--axes", "fit", "--inertia-scale", "0.002", "--out", tmp_path / "fit.toml",
              timeout=600)
    assert res.returncode == 0, res.stderr
    written = tumble.load(tmp_path / "fit.toml")
    sc = fitted.scenario()
    assert isinstance(sc, tumble.Scenario)
    np.testing.assert_allclose(sc.body.inertia, written.body.inertia, rtol=TOL, atol=TOL * 0.002)
    np.testing.assert_allclose(sc.angular_velocity, written.angular_velocity, rtol=TOL, atol=TOL)


def test_a_fit_pickles(fitted):
    back = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(back.ratios, fitted.ratios)
    assert back.to_dict() == fitted.to_dict()


def test_predict_takes_a_fit_or_its_scenario(session, fitted):
    from tumble.throws.fitting.predict import FLIGHT_KEYS

    flights = tumble.predict(fitted, session)
    assert flights and all(tuple(f) == FLIGHT_KEYS for f in flights)
    assert tumble.predict(fitted.scenario(), session) == flights
    # the body that threw them predicts them: omega within a few percent of |omega0|
    assert np.median([f["rms_relative"] for f in flights]) < 0.05


def test_fit_refuses_with_the_commands_line(session):
    line = refused(cli("fit", session, "--drag", "cubic"))
    with pytest.raises(tumble.ParameterError) as err:
        tumble.fit(session, drag="cubic")
    assert line == f"tumble: error: {err.value}"


def test_predict_is_the_commands_json(session, fitted, tmp_path):
    path = fitted.scenario().save(tmp_path / "fit.toml")
    res = cli("predict", path, session, "--lead", "0.1", "--json", timeout=600)
    assert res.returncode == 0, res.stderr
    expected = json.loads(res.stdout)["flights"]
    got = json.loads(json.dumps(tumble.predict(tumble.load(path), session, lead=0.1)))
    assert [list(f) for f in got] == [list(f) for f in expected]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a["omega0"], b["omega0"], rtol=TOL, atol=TOL)
        assert a["recording"] == b["recording"] and a["start"] == b["start"]


@pytest.mark.parametrize("name, argv", [
    ("fit", ["fit", "{session}", "--json"]),
    ("predict", ["predict", "{fit}", "{session}", "--json"]),
])
def test_fit_and_predict_commands_call_the_api(session, fitted, tmp_path, monkeypatch, capsys, name, argv):
    import tumble.api.functions as api
    from tumble.cli.core import main

    path = fitted.scenario().save(tmp_path / "fit.toml")
    calls = []
    original = getattr(api, name)
    monkeypatch.setattr(api, name, lambda *a, **k: calls.append(a) or original(*a, **k))
    assert main([a.format(session=session, fit=path) for a in argv]) == 0
    assert len(calls) == 1


def test_fit_and_predict_take_no_gui_or_plotting_modules(session):
    import subprocess
    import sys
    import textwrap

    from conftest import ROOT

    code = textwrap.dedent("""
        import sys
        import tumble
        fit = tumble.fit(sys.argv[1], axes="fit")
        tumble.predict(fit, sys.argv[1])
        fit.scenario(), fit.to_dict(), fit.summary()
        heavy = sorted({m.split(".")[0] for m in sys.modules} & {"PyQt5", "vtk", "vtkmodules", "pyvista",
                                                                  "pyvistaqt", "pyqtgraph", "matplotlib"})
        print(",".join(heavy) or "none")
    """)
    res = subprocess.run([sys.executable, "-c", code, str(session)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "none"
