"""The tour notebook runs headless from top to bottom, and ``tumble.show`` in a notebook
plays the view inline (an animated GIF, or an MP4 in an HTML5 video) under a caption saying
what it shows, as a user's Jupyter runs them (nbclient, ipykernel)."""

from __future__ import annotations

import base64
import re

import imageio.v3 as iio
import nbformat
import numpy as np
import pytest
from conftest import ROOT, mp4_frames
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

import tumble

TOUR = ROOT / "resources" / "notebooks" / "tour.ipynb"
#: longest a cell may run (s): the fit and the map take seconds; a first run compiles kernels
CELL_TIMEOUT_S = 600


def run(nb, folder):
    """Execute ``nb`` in a fresh kernel in ``folder``; any cell's error fails (CellExecutionError)."""
    NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def outputs_of(cell) -> set:
    """The MIME types a code cell displayed."""
    return {mime for out in cell.get("outputs", []) for mime in out.get("data", {})}


def shown(cell, mime) -> list:
    """What a code cell displayed as ``mime``, in order."""
    return [out["data"][mime] for out in cell.get("outputs", []) if mime in out.get("data", {})]


def gif_frames(cell) -> np.ndarray:
    """The frames of the one animated GIF a cell displayed (n, height, width, 3)."""
    (gif,) = shown(cell, "image/gif")
    return iio.imread(base64.b64decode(gif), index=None, extension=".gif")


def moves(frames) -> bool:
    """Whether the middle of the picture (the body, away from the overlay's text) changes
    between the first frame and the middle one."""
    h, w = frames.shape[1:3]
    middle = (slice(h // 4, 3 * h // 4), slice(w // 4, 3 * w // 4))
    return np.any(frames[0][middle] != frames[len(frames) // 2][middle], axis=-1).mean() > 0.01


@pytest.mark.slow  # the whole notebook in a kernel
def test_the_tour_runs_headless_without_an_error(tmp_path):
    nb = run(nbformat.read(TOUR, as_version=4), tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not any(o.get("output_type") == "error" for o in c.outputs) for c in code)
    show = next(c for c in code if "tumble.show(" in c.source)
    frames = gif_frames(show)
    assert len(frames) > 1 and moves(frames)
    (caption,) = shown(show, "text/markdown")
    # the tour shows its 12 s run: the first 10 s at real time, its flips named
    assert caption.startswith("**T-handle**, main view: t = 0 to 10 s of the 12 s run, real time"), caption
    assert "flips at " in caption
    plots = [c for c in code if "plt.show()" in c.source]
    assert plots and all("image/png" in outputs_of(c) for c in plots)
    scenario = next(c for c in code if c.source.rstrip().endswith("\nsc"))
    assert "text/markdown" in outputs_of(scenario)
    fit = next(c for c in code if c.source.rstrip().endswith("\nfit"))
    (table,) = shown(fit, "text/html")
    assert "Inertia ratios" in table and "Flights" in table and "Rounded to what they mean" in table
    # each fitted ratio is written to the place of its two-digit standard error
    ratios = table[table.index("Inertia ratios"):].split("</table>")[0]
    pairs = re.findall(r'<td style="text-align:right">(0\.\d+)</td><td style="text-align:right">(0\.\d+)</td>', ratios)
    assert len(pairs) == 2, table
    for value, error in pairs:
        digits = error.split(".")[1]
        assert len(value.split(".")[1]) == len(digits) and 10 <= int(digits.lstrip("0")) <= 99, (value, error)


@pytest.mark.slow  # a view played in a notebook kernel
def test_show_in_a_notebook_plays_the_view_and_says_what_it_shows(tmp_path):
    nb = new_notebook(cells=[
        new_code_cell('import tumble\nsc = tumble.load("book")\ntumble.show(sc)'),
        new_code_cell('tumble.show(tumble.simulate(sc, duration=1.0), view="poinsot", format="mp4")'),
    ])
    run(nb, tmp_path)
    scenario, short = nb.cells
    frames = gif_frames(scenario)
    assert frames.shape[1:] == (270, 480, 3) and len(frames) == 150  # 10 s at 15 fps, the book's whole run
    assert moves(frames)
    (caption,) = shown(scenario, "text/markdown")
    assert caption.startswith("**Book**, main view: t = 0 to 10 s, real time (10 s of video at 15 fps"), caption
    # a run of 1 s plays in slow motion as a video: its caption says so
    (caption,) = shown(short, "text/markdown")
    assert "poinsot view: t = 0 to 0.99 s of the 1 s run, slow motion, 0.33x (3 s of video" in caption, caption
    flips = tumble.simulate("book", duration=1.0).flips  # the same run, here
    assert caption.endswith(f"flips at {', '.join(f'{t:.2f}' for t in flips)} s." if len(flips)
                            else "no flip in this span."), caption
    (video,) = shown(short, "text/html")
    assert video.startswith("<video controls")
    mp4 = base64.b64decode(re.search(r'src="data:video/mp4;base64,([^"]+)"', video)[1])
    path = tmp_path / "shown.mp4"
    path.write_bytes(mp4)
    clip = np.stack(mp4_frames(path))
    assert clip.shape == (45, 270, 480, 3)  # 3 s at 15 fps
    assert moves(clip)



def test_a_short_run_plays_in_slow_motion_and_the_caption_says_so():
    """A run shorter than SHOW_SHORTEST_S (a fitted flight lasts under a second) is slowed so the
    clip lasts at least that long and still shows the whole run (made here, as show makes it)."""
    from tumble.api.draw import SHOW_SHORTEST_S, inline_clip

    run = tumble.simulate("book", duration=0.8)
    data, fmt, caption = inline_clip(run, size=(160, 120), fps=10)
    assert fmt == "gif"
    frames = iio.imread(data, index=None, extension=".gif")
    speed = float(re.search(r"slow motion, ([0-9.]+)x", caption)[1])
    assert 0 < speed < 1
    assert len(frames) / 10 >= SHOW_SHORTEST_S  # s of video at 10 fps
    # the frames cover the run to within one frame's step of simulated time
    assert 0.8 - speed / 10 <= (len(frames) - 1) * speed / 10 <= 0.8
    assert caption.startswith(f"Book, main view: t = 0 to 0.8 s, slow motion, {speed:g}x"), caption


@pytest.mark.parametrize("given, message", [
    ({"format": "avi"}, "format must be gif or mp4, got 'avi'"),
    ({"speed": -1}, "--speed must be a number from 0.01 to 100, got -1"),
    ({"start": 99}, "--start must be >= 0 and < the scenario's run (10 s), got '99'"),
    ({"size": (3, 3)}, "--size must have an even width and height"),
    ({"view": "nope"}, "--view must be one of main"),
])
def test_a_bad_choice_for_the_inline_clip_is_a_one_line_refusal(given, message):
    from tumble.api.draw import inline_clip

    with pytest.raises(tumble.ParameterError) as err:
        inline_clip("book", **given)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_the_poinsot_view_plays_slowly_at_a_low_frame_rate():
    """A clip whose frames lie 0.1 s of simulated time apart: the book turns far between the
    samples, and the herpolhode's orientations stayed paired with their rates (it raised a
    broadcast error when only the orientations were filled in)."""
    from tumble.api.draw import inline_clip

    run = tumble.simulate("book", duration=2.0)
    data, _, caption = inline_clip(run, view="poinsot", speed=0.5, fps=5, size=(320, 240))
    frames = iio.imread(data, index=None, extension=".gif")
    assert len(frames) == 20 and moves(frames)  # 4 s of video at 5 fps
    assert caption.startswith("Book, poinsot view: t = 0 to 2 s, slow motion, 0.5x"), caption
