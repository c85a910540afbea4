"""Shared test configuration: every compiled kernel ready before the first test, and the shared
helpers of ``cli_run.py`` (the repository root, the one refusal check) as fixtures."""

from pathlib import Path

import pytest
from cli_run import ROOT, refused as _refused, tumble


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """Every compiled kernel loaded from numba's cache, or compiled into it, once per session
    before any test: no test's wait includes a first compile, and the commands the tests run in
    child processes find the kernels cached."""
    import os

    from tumble.physics.compiled import jit

    jit.compile_now(processes=min(2, os.cpu_count() or 1))


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def refused():
    """The one refusal check (``cli_run.refused``): ``refused(res, *words, unwritten=(), quiet=False)``."""
    return _refused


@pytest.fixture
def simulate_refuses(tmp_path):
    """``check(toml_text, field)``: ``tumble simulate`` of that file, run in a child, exits 2
    with one line ``FIELD must ... got ...`` on stderr and writes no output."""

    def check(text: str, field: str) -> None:
        path = tmp_path / "bad.toml"
        path.write_text(text)
        out = tmp_path / "x.csv"
        _refused(tumble("simulate", path, "--out", out, timeout=120), field + " must ", "got", unwritten=[out])

    return check


@pytest.fixture
def synthetic_timeline():
    """``make(scale=1, n=2001, t_end=8)``: an export Timeline (a Recording) whose every column and
    component is a different known function of t (drifts of ``scale`` * 4e-12), flips at 1.5, 3, 6.5 s."""
    import numpy as np

    from tumble.export.timeline import Timeline

    def make(scale: float = 1.0, n: int = 2001, t_end: float = 8.0) -> Timeline:
        t = np.linspace(0.0, t_end, n)
        k = np.arange(3)
        L = (k + 1) * np.sin(t[:, None] * (k + 1)) + 3 * k
        w = (k + 2) * np.cos(t[:, None] / (k + 1)) - k
        return Timeline(t=t, c=np.zeros((n, 3)), v=np.zeros((n, 3)), q=np.tile([1.0, 0, 0, 0], (n, 1)), w=w, L=L,
                        E_drift=scale * 4e-12 * np.sin(t), L_norm_drift=-scale * 2e-12 * t / t_end,
                        frame_index=np.arange(n // 2, n, 50), flips=np.array([1.5, 3.0, 6.5]))

    return make


@pytest.fixture
def pose_numbers():
    """``pose_numbers(view_scene)``: what a pose of a view sets, by name (the live window's
    and the export's poses of one run are compared with it)."""
    import numpy as np

    def numbers(view) -> dict:
        """Every actor's user matrix and the last point of every polyline of the view's scenes
        and ghosts, by name (what a pose sets), plus its 2D panes' data (the stability track)."""
        found: dict = {}

        def walk(prefix, scene):
            for key, sub in enumerate(getattr(scene, "scenes", ()) or ()):
                walk(f"{prefix}/{key}", sub)
            actors = getattr(scene, "_actors", None) or {}
            for key, actor in actors.items():
                if hasattr(actor, "user_matrix"):
                    found[f"{prefix}/{key}/matrix"] = np.array(actor.user_matrix)
                    data = actor.GetMapper().GetInput() if actor.GetMapper() is not None else None
                    if data is not None and data.GetNumberOfPoints():
                        found[f"{prefix}/{key}/end"] = np.array(data.GetPoint(data.GetNumberOfPoints() - 1))
            for key in ("construction", "herpolhode", "polhode"):
                value = getattr(scene, key, None)
                if isinstance(value, np.ndarray):
                    found[f"{prefix}/{key}"] = value
        for name, scene in view.scenes.items():
            walk(name, scene)
        for k, ghost in enumerate(view.ghosts):
            walk(f"ghost{k}", ghost)
        if hasattr(view, "track"):
            found["track"] = np.concatenate(view.track)
        return found

    return numbers


@pytest.fixture
def probe_view(monkeypatch):
    """Poinsot's construction registered again as the view ``probe``, hosted by the main
    window (as a new module in app/views/ would register it), for one test only."""
    import dataclasses

    from tumble import views
    from tumble.views.poinsot import SPEC as POINSOT

    spec = dataclasses.replace(POINSOT, name="probe", title="Tumble: probe", description="a view added for a test",
                               window="tumble.gui.windows.main_window:MainWindow")
    monkeypatch.setitem(views._VIEWS, "probe", spec)
    return spec
