"""The shared-flip page (``tumble export --out FILE.html``) in a real browser: Debian's Chromium,
headless, WebGL through SwiftShader, the network off. It loads with no console error and asks no
server for anything, draws, moves, its time slider sets the pose, the mouse turns the view, and
the body's quaternion as the viewer applies it is ``tumble simulate``'s within 1e-3 rad. The
notebook's ``tumble.show(sc, interactive=True)`` shows the same page in an iframe that does the same.
"""

from __future__ import annotations

import html
import io
import re
import time

import numpy as np
import pytest
from chromium import console_errors, missing, open_chromium, requested_urls
from conftest import tumble
from scipy.spatial.transform import Rotation

import tumble as tumble_api
from tumble.export import gltf as G
from tumble.physics import diagnostics

pytestmark = pytest.mark.slow

#: the promise: the page's pose within this of the run (rad)
POSE_RAD = 1e-3
#: the longest a test waits for the page (s): SwiftShader draws on the CPU of a loaded machine
WAIT_S = 60
#: the 6 s export the tests open
DURATION_S = 6.0


def wait_for(driver, script: str, timeout: float = WAIT_S):
    """The value of ``script`` once it is truthy (polled), failing past ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(script)
        if value:
            return value
        assert time.monotonic() < deadline, f"waited {timeout} s for: {script}"
        time.sleep(0.1)


def screenshot(driver) -> np.ndarray:
    import imageio.v3 as iio

    return iio.imread(io.BytesIO(driver.get_screenshot_as_png()))[..., :3].astype(int)


def scene_part(image: np.ndarray) -> np.ndarray:
    """The middle of the picture, clear of the text and the controls."""
    h, w = image.shape[:2]
    return image[int(0.2 * h):int(0.8 * h), int(0.25 * w):int(0.75 * w)]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    reason = missing()
    if reason:
        pytest.fail(reason)
    driver = open_chromium(tmp_path_factory.mktemp("chromium"))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``tumble export t-handle --out flip.html --duration 6`` and ``tumble simulate t-handle
    --duration 6``, each in a child as a user runs them: (page, simulate's columns)."""
    folder = tmp_path_factory.mktemp("page")
    res = tumble("export", "t-handle", "--out", folder / "flip.html", "--duration", DURATION_S)
    assert res.returncode == 0, res.stderr
    res = tumble("simulate", "t-handle", "--duration", DURATION_S, "--out", folder / "run.npz")
    assert res.returncode == 0, res.stderr
    return folder / "flip.html", dict(np.load(folder / "run.npz"))


@pytest.fixture(scope="module")
def page(browser, exported):
    """The page opened offline; the console's messages and the requests of its load."""
    path, _ = exported
    console_errors(browser), requested_urls(browser)  # drained: what follows is the page's own
    browser.get(path.as_uri())
    wait_for(browser, "return window.tumble && (window.tumble.ready || window.tumble.error)")
    return {"errors": console_errors(browser), "urls": requested_urls(browser), "uri": path.as_uri()}


def test_the_page_loads_offline_with_no_console_error_and_asks_no_server(browser, page):
    assert browser.execute_script("return window.tumble.error") is None
    assert browser.execute_script("return window.tumble.ready") is True
    assert page["errors"] == []
    assert set(page["urls"]) <= {page["uri"]} | {u for u in page["urls"] if u.startswith("data:")}, page["urls"]
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    # it drew with WebGL, in software
    renderer = browser.execute_script(
        "var g = document.createElement('canvas').getContext('webgl2');"
        "var e = g.getExtension('WEBGL_debug_renderer_info'); return g.getParameter(e.UNMASKED_RENDERER_WEBGL);")
    assert "SwiftShader" in renderer
    assert browser.title.startswith("T-handle")
    assert "intermediate axis" in browser.find_element("id", "why2").text


def test_the_page_draws_the_body(browser, page):
    browser.execute_script("window.tumble.poseAt(1.0)")
    image = scene_part(screenshot(browser))
    background = np.array([0x16, 0x19, 0x1E])
    far = np.abs(image - background).sum(axis=2) > 60
    assert far.mean() > 0.01, far.mean()  # the body, its axes, the arrow: more than a speck
    # the body's colours, as in the window: its x (red) and z (blue) faces are both seen
    red = (image[..., 0] > image[..., 1] + 40) & (image[..., 0] > image[..., 2] + 40)
    blue = (image[..., 2] > image[..., 0] + 40) & (image[..., 2] > image[..., 1] + 20)
    assert red.sum() > 30 and blue.sum() > 30, (red.sum(), blue.sum())


def test_the_page_moves_as_it_plays(browser, page):
    browser.execute_script("window.tumble.setTime(0.5); window.tumble.play()")
    first_time = browser.execute_script("return window.tumble.time()")
    first = screenshot(browser)
    wait_for(browser, f"return window.tumble.time() > {first_time} + 0.4")
    second = screenshot(browser)
    assert browser.execute_script("return window.tumble.playing()")
    changed = np.abs(scene_part(first) - scene_part(second)).sum(axis=2) > 60
    assert changed.mean() > 0.002, changed.mean()
    browser.execute_script("window.tumble.pause()")


def test_the_time_slider_sets_the_pose(browser, page, exported):
    from selenium.webdriver.common.action_chains import ActionChains

    _, run = exported
    browser.execute_script("window.tumble.pause(); window.tumble.setTime(0)")
    slider = browser.find_element("id", "slider")
    width = slider.size["width"]
    ActionChains(browser).move_to_element_with_offset(slider, int(0.25 * width), 0).click().perform()
    at = browser.execute_script("return window.tumble.time()")
    assert abs(at - 0.75 * DURATION_S) < 0.05 * DURATION_S, at  # clicked three quarters along: about 4.5 s
    assert not browser.execute_script("return window.tumble.playing()")  # scrubbing pauses
    pose = browser.execute_script("return window.tumble.pose()")
    assert abs(pose["t"] - at) < 1e-9  # speed 1: the clock shows the animation's time
    assert browser.find_element("id", "clock").text == f"t = {pose['t']:.2f} s"
    flips = diagnostics.flip_times(tumble_api.load("t-handle").rigid_body, run["t"],
                                   np.column_stack([run["wx"], run["wy"], run["wz"]]))
    assert browser.find_element("id", "flips").text == f"flips: {int(np.sum(flips <= pose['t']))}"
    expected = run_rotation(run, pose["t"])
    assert (Rotation.from_quat(pose["quaternion"]) * expected.inv()).magnitude() <= POSE_RAD


def run_rotation(run, t) -> Rotation:
    """``tumble simulate``'s orientation at ``t`` (a time of its grid, to rounding)."""
    k = int(np.argmin(np.abs(run["t"] - t)))
    if abs(run["t"][k] - t) > 1e-9:  # between two samples: scipy's slerp of the run's own, 1 ms apart
        from scipy.spatial.transform import Slerp

        lo = max(0, min(k if run["t"][k] < t else k - 1, len(run["t"]) - 2))
        rots = Rotation.from_quat([[run[c][i] for c in ("qx", "qy", "qz", "qw")] for i in (lo, lo + 1)])
        return Slerp(run["t"][lo:lo + 2], rots)([t])[0]
    return Rotation.from_quat([run["qx"][k], run["qy"][k], run["qz"][k], run["qw"][k]])


def test_the_pose_the_viewer_applies_is_tumble_simulate_s(browser, page, exported):
    """At 25 times across the 6 s (a flip among them), the body node's quaternion as three.js
    applies it is the run's within 1e-3 rad, and its world quaternion in the page's y-up scene
    is the same turned by the root: Tumble's z up is the page's y up."""
    _, run = exported
    root = Rotation.from_quat(_xyzw(G.Z_UP_TO_Y_UP))
    worst = 0.0
    for t in np.round(np.linspace(0.0, DURATION_S, 25), 3):
        pose = browser.execute_script(f"return window.tumble.poseAt({t})")
        assert abs(pose["t"] - t) < 1e-9
        expected = run_rotation(run, t)
        local = Rotation.from_quat(pose["quaternion"])
        error = (local * expected.inv()).magnitude()
        worst = max(worst, error)
        assert error <= POSE_RAD, (t, error)
        assert (Rotation.from_quat(pose["world"]) * (root * expected).inv()).magnitude() <= POSE_RAD
    assert worst > 0  # the page's own numbers, not the run's copied
    assert browser.execute_script(f"return window.tumble.poseAt({DURATION_S})")["flips"] >= 1


def _xyzw(wxyz):
    return [wxyz[1], wxyz[2], wxyz[3], wxyz[0]]


def test_the_mouse_turns_the_view(browser, page):
    assert_the_mouse_turns_the_view(browser)


def assert_the_mouse_turns_the_view(browser):
    """A drag across the page's canvas turns the camera about the body, at the same distance."""
    from selenium.webdriver.common.action_chains import ActionChains

    browser.execute_script("window.tumble.pause()")
    before = np.array(browser.execute_script("return window.tumble.camera()"))
    canvas = browser.find_element("css selector", "#view canvas")
    ActionChains(browser).move_to_element(canvas).click_and_hold().move_by_offset(120, 40).release().perform()
    after = np.array(wait_for(browser, f"var c = window.tumble.camera(); return Math.hypot(c[0] - {before[0]}, "
                                       f"c[1] - {before[1]}, c[2] - {before[2]}) > 1e-6 && c"))
    target = np.array(browser.execute_script("var p = window.tumble.pose().position; return [p[0], p[2], -p[1]]"))
    # turned about the body, not moved away from it
    assert abs(np.linalg.norm(after - target) - np.linalg.norm(before - target)) < 1e-6 * np.linalg.norm(before - target)


def test_the_notebook_shows_the_page_inline_and_it_turns_with_the_mouse(browser, tmp_path):
    """``tumble.show(sc, interactive=True)`` in a real notebook kernel (nbclient) displays one
    HTML output: an iframe whose srcdoc is the page; opened in the browser, the page in it is
    ready, offline, and its pose is the run's."""
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell('import tumble\ntumble.show("t-handle", interactive=True, duration=3)')])
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for o in nb.cells[0]["outputs"] if "text/html" in o.get("data", {})]
    assert len(outputs) == 1
    frame_html = outputs[0]["data"]["text/html"]
    assert frame_html.startswith("<iframe srcdoc=")
    inner = html.unescape(re.search(r'srcdoc="([^"]*)"', frame_html)[1])
    assert inner.startswith("<!DOCTYPE html>") and "tumble-glb" in inner
    host = tmp_path / "notebook.html"
    host.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><link rel='icon' href='data:,'></head>"
                    f"<body>{frame_html}</body></html>", encoding="utf-8")
    console_errors(browser), requested_urls(browser)
    browser.get(host.as_uri())
    try:
        browser.switch_to.frame(browser.find_element("tag name", "iframe"))
        wait_for(browser, "return window.tumble && (window.tumble.ready || window.tumble.error)")
        assert browser.execute_script("return window.tumble.error") is None
        assert abs(browser.execute_script("return window.tumble.duration") - 3.0) < 1e-9
        pose = browser.execute_script("return window.tumble.poseAt(2.0)")
        run = dict(np.load(_simulate_npz(tmp_path, 3.0)))
        assert (Rotation.from_quat(pose["quaternion"]) * run_rotation(run, 2.0).inv()).magnitude() <= POSE_RAD
        assert_the_mouse_turns_the_view(browser)
    finally:
        browser.switch_to.default_content()
    assert console_errors(browser) == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in requested_urls(browser))


def _simulate_npz(folder, duration):
    out = folder / "run.npz"
    res = tumble("simulate", "t-handle", "--duration", duration, "--out", out)
    assert res.returncode == 0, res.stderr
    return out
