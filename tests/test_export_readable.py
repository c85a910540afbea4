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
