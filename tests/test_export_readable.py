"""Issue 34, item 11: a 640x360 GIF's colour key was about 9 px high, unreadable on a slide."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np

from conftest import tumble

#: the least height (px) of a key row's text, ascenders to descenders, in a 640x360 frame: a
#: slide shows such a GIF at twice its size or more, and 24 px of type reads across a room
KEY_TEXT_MIN_PX = 12


def test_a_small_gifs_colour_key_reads_on_a_slide(tmp_path):
    out = tmp_path / "small.gif"
    res = tumble("export", "t-handle", "--out", out, "--duration", "0.4", "--size", "640x360", "--fps", "5",
                 timeout=300)
    assert res.returncode == 0, res.stderr
    frame = iio.imread(out, index=0)[..., :3].astype(int)
    assert frame.shape[:2] == (360, 640)
    # the key's first row, "body x axis" (b, d, y: ascender to descender), right of its swatch
    band = frame[:60, 24:110]
    text_rows = np.flatnonzero((band.min(axis=2) > 150).any(axis=1))  # light text on the dark backing
    assert text_rows.size, "no key text at the top left"
    runs = np.split(text_rows, np.flatnonzero(np.diff(text_rows) > 1) + 1)
    first = runs[0]
    assert first[-1] - first[0] + 1 >= KEY_TEXT_MIN_PX, (first[0], first[-1])


def test_a_replay_clips_key_keeps_every_entry_inside_its_panel(synthetic_timeline):
    """Item 10: the replay export's key (six curves and a flip, on one row over a 480 px panel)
    ran past the panel's left edge and lost its omega-x entry."""
    from tumble.export.plots import PlotPanel
    from tumble.views.replay import REPLAY_PLOTS

    runs = (synthetic_timeline(), synthetic_timeline())
    panel = PlotPanel((480, 720), REPLAY_PLOTS, runs, 8.0, t_start=0.0)
    renderer = panel.canvas.get_renderer()
    fig = panel.canvas.figure
    (ax,) = fig.axes
    legend = ax.get_legend()
    box = legend.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1, (box, fig.bbox)
    assert [t.get_text() for t in legend.get_texts()][:1] == ["ωx"]
    title = panel.titles[0].get_window_extent(renderer)
    assert title.y0 >= box.y1 - 1 or title.x1 <= box.x0  # the title clear of its key


def test_a_long_title_breaks_after_its_comma():
    """Item 10: "Replay of phone-throws.zip, flight 1 at 0.96 s" broke as "... flight / 1 at 0.96 s"."""
    from tumble.export.canvas import wrap_text

    text = "Replay of phone-throws.zip, flight 1 at 0.96 s"
    lines = wrap_text(text, 34, len, 2).splitlines()
    assert lines == ["Replay of phone-throws.zip,", "flight 1 at 0.96 s"]
    assert wrap_text(text, 100, len, 2) == text  # one line where it fits


def test_tumble_replay_says_how_long_its_clip_is(tmp_path):
    """Item 10: "wrote replay.mp4 (95 frames at 30 fps, 3.9 s)" read as a 3.9 s clip of 3.17 s
    (the 3.9 s was the time taken to make it)."""
    import re
    import subprocess

    import imageio_ffmpeg

    out = tmp_path / "replay.mp4"
    res = tumble("replay", "phone-throws", "--out", out, timeout=300)
    assert res.returncode == 0, res.stderr
    m = re.search(r"a (\d+\.\d\d) s clip \((\d+) frames at (\d+) fps\), made in [\d.]+ s", res.stdout)
    assert m, res.stdout
    probe = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-i", str(out)], capture_output=True, text=True)
    h, mnt, sec = re.search(r"Duration: (\d+):(\d+):([\d.]+)", probe.stderr).groups()
    assert abs(float(m.group(1)) - (float(sec) + 60 * float(mnt))) <= 1 / int(m.group(3)) + 0.01
