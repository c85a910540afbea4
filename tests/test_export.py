"""Animation and data export: decode what was written, from the command line with no display.

The command-line tests run ``python -m tumble export`` in a subprocess whose environment has
no DISPLAY (EGL offscreen rendering), as on a headless server; the in-process tests use
whatever display pytest-xvfb provides. Sizes are small where the size does not matter.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

from tumble.export import (
    ExportCancelled,
    ExportSettings,
    Overlay,
    estimate_bytes,
    export_animation,
    export_data,
    plan_export,
    sequence_paths,
)
from tumble.export.settings import GIF_DEFAULT_FPS, GIF_DEFAULT_SIZE
from tumble.physics.errors import ParameterError
from tumble.scenario import SolverSpec, load
from tumble.scene.style import AXIS_COLORS, BACKGROUND
from conftest import CHILD_S, ROOT, Running, headless_env, mp4_frames, refused, tumble_headless as tumble

SMALL = ["--size", "320x240"]
CLIP = ["--duration", "2", "--fps", "15"]  # 30 frames


def ffmpeg_exe() -> str:
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def mp4_stream_info(path) -> str:
    """ffmpeg's one-line description of the video stream (codec, pixel format, size, fps)."""
    res = subprocess.run([ffmpeg_exe(), "-hide_banner", "-i", str(path)], capture_output=True, text=True,
                         timeout=CHILD_S)
    return next(line for line in res.stderr.splitlines() if "Video:" in line)


def leftovers(folder: Path) -> list:
    """Hidden temporary files or folders an export would have made."""
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


@pytest.fixture(scope="module")
def t_handle():
    return load("t-handle")


@pytest.fixture(scope="module")
def cli_clips(tmp_path_factory):
    """One MP4 and one GIF of the same 2 s clip, twice each, from the CLI with no display."""
    folder = tmp_path_factory.mktemp("clips")
    runs = {}
    for name in ("a.mp4", "b.mp4", "a.gif"):
        res = tumble("export", "t-handle", "--out", folder / name, *CLIP, *SMALL)
        assert res.returncode == 0, res.stderr
        runs[name] = res
    return folder, runs


# ------------------------------------------------------------------ formats, from the CLI


def test_mp4_has_every_frame_at_the_requested_size(cli_clips):
    folder, runs = cli_clips
    frames = mp4_frames(folder / "a.mp4")
    assert len(frames) == 30
    assert all(f.shape == (240, 320, 3) for f in frames)
    out = runs["a.mp4"].stdout
    assert f"wrote {folder / 'a.mp4'}: 30 frames, 320x240, 15 fps" in out
    assert "real time" in out


def test_mp4_is_h264_yuv420p_with_the_index_in_front(cli_clips):
    folder, _ = cli_clips
    info = mp4_stream_info(folder / "a.mp4")
    assert "Video: h264" in info and "yuv420p" in info and "320x240" in info and "15 fps" in info
    head = (folder / "a.mp4").read_bytes()[:64]
    assert b"moov" in head  # faststart: playable before it is fully downloaded


def test_gif_has_every_frame_and_loops(cli_clips):
    folder, _ = cli_clips
    frames = iio.imread(folder / "a.gif", index=None)
    assert frames.shape == (30, 240, 320, 3)
    meta = iio.immeta(folder / "a.gif", index=0)
    assert meta["loop"] == 0
    from PIL import Image

    with Image.open(folder / "a.gif") as im:
        durations = []
        for k in range(im.n_frames):
            im.seek(k)
            durations.append(im.info["duration"])
    assert sum(durations) == pytest.approx(2000, abs=10)


def test_consecutive_frames_differ(cli_clips):
    folder, _ = cli_clips
    for frames in (mp4_frames(folder / "a.mp4"), list(iio.imread(folder / "a.gif", index=None))):
        for a, b in zip(frames, frames[1:]):
            assert np.abs(a.astype(int) - b).max() > 40, "the body moves every frame"


def test_same_settings_give_identical_frames(cli_clips):
    folder, _ = cli_clips
    a, b = mp4_frames(folder / "a.mp4"), mp4_frames(folder / "b.mp4")
    assert len(a) == len(b) == 30
    for fa, fb in zip(a, b):
        np.testing.assert_array_equal(fa, fb)


def test_png_sequence_names_and_determinism(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    for folder in (first, second):
        res = tumble("export", "t-handle", "--out", folder / "flip.png", "--duration", "1", "--fps", "10", *SMALL)
        assert res.returncode == 0, res.stderr
    names = sorted(p.name for p in first.iterdir())
    assert names == [f"flip_{i:04d}.png" for i in range(10)]
    for name in names:
        a, b = iio.imread(first / name), iio.imread(second / name)
        assert a.shape == (240, 320, 3)
        np.testing.assert_array_equal(a, b)


def test_png_sequence_replaces_only_its_own_older_frames(tmp_path, t_handle):
    """A shorter export trims the older, longer sequence of its name; a user's file that
    merely looks like a frame (NAME_2024.png, not part of a run from NAME_0000) stays."""
    for i in range(15):
        (tmp_path / f"flip_{i:04d}.png").write_bytes(b"old")
    (tmp_path / "flip_2024.png").write_bytes(b"mine")
    (tmp_path / "flip_notes.png").write_bytes(b"mine")
    result = export_animation(t_handle, ExportSettings(out=tmp_path / "flip.png", fps=10, duration=1,
                                                       size=(320, 240), overlay=Overlay(time=False, flips=False,
                                                                                        title=None)))
    assert result.frames == 10
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([f"flip_{i:04d}.png" for i in range(10)] + ["flip_2024.png", "flip_notes.png"])
    assert iio.imread(tmp_path / "flip_0009.png").shape == (240, 320, 3)
    assert (tmp_path / "flip_2024.png").read_bytes() == b"mine"


def test_the_arrows_stay_inside_a_wide_frame(tmp_path, t_handle):
    """The T-handle's L points straight up for the whole run; in a 16:9 frame (which nobody
    can zoom out of) it and omega must end below the top edge: the top rows are background."""
    export_animation(t_handle, ExportSettings(out=tmp_path / "f.png", fps=4, duration=2, size=(320, 180),
                                              overlay=Overlay(time=False, flips=False, title=None)))
    for path in sorted(tmp_path.glob("f_*.png")):
        top = iio.imread(path)[:3].astype(int)
        spread = np.abs(top - np.median(top, axis=1, keepdims=True)).max()
        assert spread <= 6, f"{path.name}: something is drawn on the top edge (spread {spread})"


def test_with_plots_frames_hold_the_plot_panel(tmp_path):
    out = tmp_path / "plots.png"
    res = tumble("export", "t-handle", "--out", out, "--duration", "1", "--fps", "4", "--start", "2",
                 "--size", "640x360", "--with-plots")
    assert res.returncode == 0, res.stderr
    last = iio.imread(sequence_paths(out, 4)[-1])
    assert last.shape == (360, 640, 3)
    panel = last[:, 640 - 240:]  # 0.375 of the width, the plots' share
    background = np.array([int(BACKGROUND[k:k + 2], 16) for k in (1, 3, 5)])
    # the panel is flat background with curves in the axis colours on it
    assert np.mean(np.all(np.abs(panel.astype(int) - background) <= 2, axis=-1)) > 0.5
    for rgb in AXIS_COLORS:
        target = np.round(np.asarray(rgb) * 255)
        near = np.all(np.abs(panel.astype(int) - target) <= 30, axis=-1)
        assert near.sum() > 20, f"a curve in {target} is drawn"
    # the scene is beside it, its body drawn in the axis colours too
    scene = last[:, : 640 - 240].astype(int)
    assert np.mean(np.any(np.abs(scene - background) > 30, axis=-1)) > 0.02


def test_data_exports_rows_per_frame(tmp_path):
    res = tumble("export", "t-handle", "--out", tmp_path / "traj.csv", "--duration", "2", "--fps", "5")
    assert res.returncode == 0, res.stderr
    rows = (tmp_path / "traj.csv").read_text().splitlines()
    assert rows[0].startswith("t,cx,cy,cz,vx,vy,vz,qw,qx,qy,qz,wx,wy,wz,Lx,Ly,Lz,T,V,E")
    assert len(rows) == 1 + 10
    t = np.loadtxt(tmp_path / "traj.csv", delimiter=",", skiprows=1)[:, 0]
    np.testing.assert_allclose(t, np.arange(10) * 0.2, atol=1e-12)
    res = tumble("export", "t-handle", "--out", tmp_path / "copy.toml")
    assert res.returncode == 0, res.stderr
    assert load(str(tmp_path / "copy.toml")).rigid_body.shape == "t-handle"


def test_a_data_export_reports_its_progress_and_an_interrupt_leaves_nothing(t_handle, tmp_path):
    out = tmp_path / "traj.csv"
    # 59 s of rk4 at dt 1e-3: 3000 samples before the first frame and 3476 after, each run
    # longer than the integrator's progress chunk
    settings = ExportSettings(out=out, start=30.0, duration=29.0, fps=30)
    fractions = []
    _, rows = export_data(t_handle, settings, progress=fractions.append)
    assert rows == 870 and fractions[-1] == 1.0
    assert fractions[0] >= 0 and np.all(np.diff(fractions) >= 0)
    # the run before the first frame and the one after it each report as they go, and the
    # first ends at its share of the simulated time
    before = 30.0 / (30.0 + 869 / 30)
    assert any(0 < f < before for f in fractions) and any(before < f < 1 for f in fractions)
    assert any(abs(f - before) < 1e-12 for f in fractions)

    out.unlink()

    def interrupt(fraction):
        if fraction > 0.5:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        export_data(t_handle, settings, progress=interrupt)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ bad input, failures, cancel


@pytest.mark.parametrize("args, flag", [
    (["--out", "{d}/x.avi"], "--out"),
    (["--out", "{d}/missing/x.mp4"], "--out"),
    (["--out", "{d}/x.mp4", "--size", "321x240"], "--size"),
    (["--out", "{d}/x.mp4", "--size", "8x8"], "--size"),
    (["--out", "{d}/x.mp4", "--size", "7680x4320"], "--size"),
    (["--out", "{d}/x.mp4", "--size", "wide"], "--size"),
    (["--out", "{d}/x.mp4", "--fps", "0"], "--fps"),
    (["--out", "{d}/x.mp4", "--fps", "241"], "--fps"),
    (["--out", "{d}/x.mp4", "--fps", "-3"], "--fps"),
    (["--out", "{d}/x.mp4", "--start", "-1"], "--start"),
    (["--out", "{d}/x.mp4", "--start", "60"], "--start"),
    (["--out", "{d}/x.mp4", "--duration", "61"], "--duration"),
    (["--out", "{d}/x.mp4", "--duration", "0"], "--duration"),
    (["--out", "{d}/x.mp4", "--speed", "0"], "--speed"),
    (["--out", "{d}/x.mp4", "--speed", "4", "--duration", "20"], "--duration"),
    (["--out", "{d}/x.mp4", "--with-plots", "--size", "320x240"], "--size"),
    (["--out", "{d}/x.mp4", "--overlay", "clock"], "--overlay"),
    (["--out", "{d}/x.mp4", "--dt", "0"], "--dt"),
])
def test_bad_input_is_one_line_exit_2_and_no_file(tmp_path, args, flag):
    res = tumble("export", "t-handle", *[a.format(d=tmp_path) for a in args], timeout=60)
    refused(res, flag, " must ", "got")
    assert list(tmp_path.iterdir()) == []


def test_unwritable_folder_is_refused(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        # root writes anywhere on a normal disk; /proc refuses even root
        target = folder / "x.mp4" if os.geteuid() != 0 else Path("/proc/tumble-export.mp4")
        res = tumble("export", "t-handle", "--out", target, timeout=60)
    finally:
        folder.chmod(stat.S_IRWXU)
    line = refused(res, unwritten=[target])
    assert line == f"tumble: error: --out must be in a writable folder, got '{target}'"


FAILING_FFMPEG = """\
#!{python}
# stands in for ffmpeg: writes a partial output, then fails as a full disk would
import sys
out = sys.argv[-1]
sys.stdin.buffer.read(100000)
with open(out, "wb") as fh:
    fh.write(b"partial")
sys.stderr.write(out + ": No space left on device\\n")
sys.exit(1)
"""


@pytest.mark.parametrize("name", ["clip.mp4", "clip.gif", "clip.png"])
def test_encoder_failure_leaves_nothing_and_keeps_the_old_file(tmp_path, name):
    fake = tmp_path / "bin" / "ffmpeg"
    fake.parent.mkdir()
    fake.write_text(FAILING_FFMPEG.format(python=sys.executable))
    fake.chmod(0o755)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    old = out_dir / (name if not name.endswith(".png") else "clip_0000.png")
    old.write_bytes(b"a good file from before")
    res = tumble("export", "t-handle", "--out", out_dir / name, *CLIP, *SMALL,
                 env=headless_env(IMAGEIO_FFMPEG_EXE=str(fake)))
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0] and "nothing written" in lines[0], res.stderr
    assert sorted(p.name for p in out_dir.iterdir()) == [old.name]
    assert old.read_bytes() == b"a good file from before"


@pytest.mark.parametrize("name", ["clip.mp4", "clip.png"])
def test_cancel_leaves_nothing_and_keeps_the_old_file(tmp_path, t_handle, name):
    import pyvista as pv

    old = tmp_path / (name if not name.endswith(".png") else "clip_0000.png")
    old.write_bytes(b"a good file from before")
    seen = []

    def progress(done, total):
        seen.append((done, total))

    with pytest.raises(ExportCancelled):
        export_animation(t_handle, ExportSettings(out=tmp_path / name, fps=15, duration=2, size=(320, 240)),
                         progress=progress, cancel=lambda: len(seen) > 5)
    assert seen[0] == (0, 30) and seen[-1] == (5, 30)
    assert sorted(p.name for p in tmp_path.iterdir()) == [old.name]
    assert old.read_bytes() == b"a good file from before"
    assert not pv.plotting.plotter._ALL_PLOTTERS, "the offscreen plotter was closed"


def test_progress_json_and_cancel_on_stdin(tmp_path):
    """The protocol of the window's dialog: progress lines on stdout, 'cancel' on stdin."""
    out = tmp_path / "long.mp4"
    with Running("export", "t-handle", "--out", out, "--duration", "20", "--fps", "30", *SMALL, "--progress-json",
                 env=headless_env(), stdin=True) as child:
        events = []
        while line := child.readline():
            event = json.loads(line)
            events.append(event)
            if event["event"] == "progress" and event["done"] >= 10:
                child.send("cancel\n")
                break
        _, err = child.finish(timeout=60)
    assert events[0] == {"event": "progress", "done": 0, "total": 600}
    assert child.proc.returncode == 1
    assert err.strip() == "tumble: export cancelled, nothing written"
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_replaced_by_a_complete_export(tmp_path, t_handle):
    out = tmp_path / "clip.gif"
    out.write_bytes(b"old")
    result = export_animation(t_handle, ExportSettings(out=out, fps=10, duration=1, size=(320, 240),
                                                       overlay=Overlay(time=False, flips=False, title=None)))
    assert result.paths == (out,) and result.frames == 10
    assert iio.imread(out, index=None).shape == (10, 240, 320, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.gif"]


# ------------------------------------------------------------------ plans and timing


def test_plan_defaults_and_frame_times(t_handle, tmp_path):
    plan = plan_export(t_handle, ExportSettings(out=tmp_path / "x.mp4"))
    assert (plan.fps, plan.size, plan.n_frames, plan.title) == (30, (1280, 720), 300, t_handle.name)
    gif = plan_export(t_handle, ExportSettings(out=tmp_path / "x.gif"))
    assert (gif.fps, gif.size) == (GIF_DEFAULT_FPS, GIF_DEFAULT_SIZE)
    slow = plan_export(t_handle, ExportSettings(out=tmp_path / "x.mp4", fps=20, start=1.5, speed=0.25, duration=2))
    np.testing.assert_allclose(slow.frame_times, 1.5 + np.arange(40) * 0.0125)
    short = t_handle.replace(solver=SolverSpec(**{**t_handle.solver.__dict__, "duration": 4.0}))
    plan = plan_export(short, ExportSettings(out=tmp_path / "x.mp4", start=1.0, speed=0.5))
    assert plan.n_frames == 180  # (4 - 1) / 0.5 = 6 s of video at 30 fps
    assert estimate_bytes(plan) > 0
    with pytest.raises(ParameterError, match="duration"):
        plan_export(short, ExportSettings(out=tmp_path / "x.mp4", start=1.0, speed=0.5, duration=7))


@pytest.mark.parametrize("name, title", [
    ("T-handle (edited)", "T-handle"), ("Book (from the stability map) (edited)", "Book"),
    ("Asymmetric, stable", "Asymmetric, stable"), ("(edited)", "(edited)")])
def test_the_default_title_is_the_name_without_the_window_s_notes(t_handle, tmp_path, name, title):
    plan = plan_export(t_handle.replace(name=name), ExportSettings(out=tmp_path / "x.mp4"))
    assert plan.title == title


def test_frames_fall_exactly_on_the_frame_times(t_handle, tmp_path):
    """The run is re-simulated from the start and sampled exactly at the frame times."""
    from tumble.export.timeline import simulate_timeline
    from tumble.physics.integrators import simulate

    exact = t_handle.replace(solver=SolverSpec(**{**t_handle.solver.__dict__, "integrator": "exact"}))
    plan = plan_export(exact, ExportSettings(out=tmp_path / "x.mp4", fps=12, start=0.7, speed=1.5, duration=2))
    tl = simulate_timeline(exact, plan)
    np.testing.assert_allclose(tl.t[tl.frame_index], plan.frame_times, rtol=0, atol=1e-12)
    direct = simulate(exact.model, exact.initial_state, "exact", 0.01, plan.end, sample=plan.end / 100)
    np.testing.assert_allclose(tl.q[tl.frame_index[-1]], direct.q[-1], atol=1e-9)
    assert tl.trail(tl.frame_index[-1]).shape[1] == 4


def test_the_module_stays_light_until_it_renders():
    code = textwrap.dedent("""
        import sys
        import tumble.export
        heavy = [m for m in ("vtk", "vtkmodules", "pyvista", "matplotlib", "PyQt5") if m in sys.modules]
        print(",".join(heavy))
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""


def test_a_new_file_gets_the_usual_permissions(cli_clips):
    """The temporary file starts private (mkstemp); the published one follows the umask."""
    folder, _ = cli_clips
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((folder / "a.mp4").stat().st_mode) == 0o666 & ~mask
