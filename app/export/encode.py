"""Encoders: raw RGB frames piped to ffmpeg (imageio-ffmpeg's binary) in its own process.

Rendering (this process) and encoding (ffmpeg's) run at the same time on different cores:
a writer thread feeds ffmpeg's stdin from a short queue, so the renderer never waits on the
pipe unless the encoder falls behind. Call tree::

    FfmpegPipe(args)            start ffmpeg reading rawvideo rgb24 from stdin
      .write(frame)             queue a frame; raises EncodeError if ffmpeg has died
      .finish()                 end of input; wait for ffmpeg; raise EncodeError on failure
      .abort()                  kill ffmpeg (cancel, or an error elsewhere)

The argument lists for MP4 (H.264), GIF (palette from sample frames, then paletteuse) and
PNG sequences are built by the functions below. Outputs are deterministic: x264 runs with a
fixed thread count, so the same frames give the same file on any machine.
"""

from __future__ import annotations

import queue
import re
import subprocess
import tempfile
import threading

import numpy as np

from .errors import EncodeError

#: x264 speed/size trade-off. Measured here (t-handle, 10 s, 1280x720, 30 fps, while
#: rendering): "veryfast" kept the export above real time with a file about a third of
#: "ultrafast"'s, at the same CRF (see README for the table)
X264_PRESET = "veryfast"
#: constant rate factor: 18 is visually lossless for this kind of flat, sharp-edged scene
X264_CRF = 20
#: x264 threads, fixed: the output then does not depend on the machine's core count
X264_THREADS = 2
#: frames waiting for the encoder's pipe; a few are enough to ride out jitter
QUEUE_FRAMES = 4
#: GIF palette: sample this many frames spread over the clip (bounded memory, any length)
GIF_PALETTE_FRAMES = 16
#: GIF dithering: an ordered (Bayer) pattern compresses far better than error diffusion and
#: does not crawl from frame to frame; scale 1..5, larger is finer
GIF_DITHER = "bayer:bayer_scale=4"
#: seconds to wait for ffmpeg to finish writing after the last frame, per 1000 frames
FINISH_TIMEOUT_PER_1000 = 120.0
#: bytes of ffmpeg's error output read for the message (its last line is shown)
STDERR_TAIL = 4000


def ffmpeg_exe() -> str:
    """Path of the ffmpeg binary shipped with imageio-ffmpeg (``IMAGEIO_FFMPEG_EXE`` overrides)."""
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def mp4_args(out) -> list:
    """H.264 in yuv420p (plays everywhere), BT.709 colours tagged, index at the front."""
    return ["-an", "-vf", "scale=out_color_matrix=bt709:out_range=tv:flags=bicubic,"
            "setparams=color_primaries=bt709:color_trc=bt709:colorspace=bt709:range=tv",
            "-c:v", "libx264", "-preset", X264_PRESET, "-crf", str(X264_CRF), "-pix_fmt", "yuv420p",
            "-threads", str(X264_THREADS), "-colorspace", "bt709", "-color_primaries", "bt709",
            "-color_trc", "bt709", "-color_range", "tv", "-movflags", "+faststart", "-f", "mp4", str(out)]


def palette_args(palette_png) -> list:
    """Pass 1 of a GIF: one 256-colour palette from the frames piped in."""
    return ["-vf", "palettegen=max_colors=256:stats_mode=full", "-update", "1", "-frames:v", "1",
            "-f", "image2", str(palette_png)]


def gif_args(palette_png, out) -> list:
    """Pass 2 of a GIF: map the frames onto the palette; loops forever, only changed
    rectangles are re-dithered, every frame kept (no dropping or merging)."""
    return ["-i", str(palette_png), "-lavfi", f"[0:v][1:v]paletteuse=dither={GIF_DITHER}:diff_mode=rectangle",
            "-fps_mode", "passthrough", "-loop", "0", "-f", "gif", str(out)]


def png_args(pattern) -> list:
    """A numbered PNG per frame, counting from 0 (``pattern`` holds ``%04d`` or wider)."""
    return ["-c:v", "png", "-fps_mode", "passthrough", "-start_number", "0", "-f", "image2", str(pattern)]


class FfmpegPipe:
    """ffmpeg reading raw RGB frames of one size from a pipe.

    Thread: ``write``, ``finish`` and ``abort`` from one thread (the exporter's); the
    writer thread is internal.
    """

    def __init__(self, size, fps: int, args: list):
        self.width, self.height = (int(v) for v in size)
        self.frames = 0
        cmd = [ffmpeg_exe(), "-hide_banner", "-nostats", "-loglevel", "error", "-y",
               "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{self.width}x{self.height}",
               "-framerate", str(int(fps)), "-i", "pipe:0", *args]
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._stderr)
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_FRAMES)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._feed, name="ffmpeg-feed", daemon=True)
        self._thread.start()

    def _feed(self) -> None:
        """Writer thread: move frames from the queue into ffmpeg's stdin."""
        stdin = self._proc.stdin
        try:
            while True:
                frame = self._queue.get()
                if frame is None:
                    break
                stdin.write(memoryview(frame).cast("B"))
        except BaseException as err:  # BrokenPipeError when ffmpeg died; reported by write/finish
            self._error = err
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def write(self, frame: np.ndarray) -> None:
        """Queue one (height, width, 3) uint8 frame (not to be modified afterwards)."""
        if frame.shape != (self.height, self.width, 3) or frame.dtype != np.uint8:
            raise ValueError(f"frame must be ({self.height}, {self.width}, 3) uint8, got {frame.shape} {frame.dtype}")
        frame = np.ascontiguousarray(frame)
        while True:
            if self._error is not None or not self._thread.is_alive():
                self._fail()
            try:
                self._queue.put(frame, timeout=0.2)
                self.frames += 1
                return
            except queue.Full:
                continue

    def finish(self) -> None:
        """No more frames: wait for ffmpeg to write the output; EncodeError on failure."""
        while self._thread.is_alive():
            try:
                self._queue.put(None, timeout=0.2)
                break
            except queue.Full:
                continue
        self._thread.join()
        try:
            rc = self._proc.wait(timeout=FINISH_TIMEOUT_PER_1000 * (1 + self.frames / 1000))
        except subprocess.TimeoutExpired:
            self.abort()
            raise EncodeError("ffmpeg did not finish writing in time") from None
        if rc != 0 or self._error is not None:
            self._fail(rc)
        self._stderr.close()

    def abort(self) -> None:
        """Stop ffmpeg now (its partial output is the caller's to delete)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        # unblock the writer thread if it waits for a frame
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass
        try:
            self._queue.put_nowait(None)
        except queue.Full:  # pragma: no cover - the queue was just emptied
            pass
        self._thread.join(timeout=5)
        if not self._stderr.closed:
            self._stderr.close()

    def _fail(self, rc=None) -> None:
        if rc is None:
            try:
                rc = self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                rc = None
        message = self._stderr_tail() or (f"exit status {rc}" if rc is not None else "no output")
        self.abort()
        raise EncodeError(f"ffmpeg failed: {message}")

    def _stderr_tail(self) -> str:
        if self._stderr.closed:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read()[-STDERR_TAIL:].decode("utf-8", "replace")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        # "[out#0/mp4 @ 0x55...] Error closing file: ..." -> "Error closing file: ..."
        return re.sub(r"^(\[[^]]*\]\s*)+", "", lines[-1]) if lines else ""
