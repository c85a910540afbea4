"""File > Export animation...: the choices, a preview of the output, and a background export.

The export runs in a child process, ``python -m tumble export SCENARIO.toml ... --progress-json``,
driven by a ``QProcess`` (:mod:`app.export.protocol`), not in a thread of this process:

- VTK may only be used on the thread that created its render window, and a crash inside
  VTK or the GL driver aborts the whole process (STYLE.md). A child process renders on its
  own main thread, and if it dies the window only shows an error.
- Rendering on the GUI thread in timer-driven chunks would take 15-40 ms of every display
  frame from the live view; in a child process the live view is not disturbed beyond
  sharing the CPU, and the child's progress arrives as ``QProcess`` signals on the GUI
  thread, so the window stays responsive with no thread of ours to manage.
- Cancel is a line on the child's stdin; it stops between two frames and deletes its
  temporary file. Closing the dialog (Esc, Close) or the window cannot wait for the next
  frame (the child may still be starting: importing, simulating): it sends SIGTERM, which
  the child turns into the same clean stop, and kills it if it has not stopped within
  TERM_WAIT_MS; then it removes what a killed child may have left (its temporary output
  beside the target; its other temporary files live in the dialog's own folder).

One dialog per window: File > Export animation raises the open one.

Signals (GUI thread): ``export_finished(str)`` with the output path, ``export_failed(str)``
with a one-line message, ``export_cancelled()``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from PyQt5.QtCore import QEvent, QProcess, QProcessEnvironment, Qt, QTimer, QUrl, pyqtSignal
from PyQt5.QtGui import QDesktopServices
from PyQt5.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...export import ExportSettings, Overlay, estimate_bytes, plan_export
from ...export import protocol
from ...export.settings import (
    DEFAULT_DURATION,
    DEFAULT_FPS,
    DEFAULT_SIZE,
    GIF_DEFAULT_FPS,
    GIF_DEFAULT_SIZE,
    MAX_FPS,
    MAX_SIZE,
    MAX_SPEED,
    MIN_SIZE,
    MIN_SPEED,
    default_title,
)
from ...physics.errors import ParameterError
from ...scenario import dumps
from ...views import get_view
from .file_dialogs import export_stem, save_path
from ..common.theme import ERROR_TEXT, MUTED_TEXT, OK_TEXT

#: output formats offered: label, extension
FORMAT_CHOICES = (("MP4 video (H.264)", ".mp4"), ("GIF (loops, for chats and slides)", ".gif"),
                  ("PNG frames (NAME_0000.png, ...)", ".png"),
                  ("3D model, glTF (.glb: slides, Blender, phones)", ".glb"),
                  ("Web page that turns with the mouse (.html, plays offline)", ".html"))
#: the formats that hold the body's motion itself (glTF), with no frame rate or frame size
GLTF_EXTENSIONS = (".glb", ".html")
#: the progress bar's steps for a glTF export (it reports the fraction simulated)
GLTF_STEPS = 1000
#: frame sizes offered; "Custom" keeps the spin boxes free
SIZE_CHOICES = ("1920x1080", "1280x720", "854x480", "640x360", "480x270", "Custom")
#: after "cancel" on stdin, wait this long (ms) before SIGTERM, and as long again before SIGKILL
CANCEL_GRACE_MS = 5000
#: closing the dialog during an export: SIGTERM, and SIGKILL if the child has not stopped
#: within this long (ms); a child between two frames or still starting stops in far less
TERM_WAIT_MS = 1000
#: after SIGKILL, the longest wait (ms) for the system to reap the child
KILL_WAIT_MS = 2000
#: the status bar's "Open folder" offer stays this long (ms)
OPEN_FOLDER_OFFER_MS = 30000


def _human_bytes(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover


class ExportDialog(QDialog):
    """Choices of an animation export and its progress. GUI thread only; modeless.

    Parameters
    ----------
    scenario : the :class:`~app.scenario.Scenario` to export (re-simulated from its start)
    out : initial output path (default ``~/<scenario>.mp4``, or the last folder used)
    view, options : a registered view's name (app.views; None: the main view) and its own options
        (``{"integrators": (A, B), "dts": (DT_A, DT_B)}`` for compare), see :func:`app.export.protocol.view_argv`
    """

    export_finished = pyqtSignal(str)
    export_failed = pyqtSignal(str)
    export_cancelled = pyqtSignal()

    def __init__(self, scenario, parent=None, out=None, view=None, options=None):
        super().__init__(parent)
        self.scenario = scenario
        self.view, self.options = view, dict(options or {})
        #: the ``tumble export`` arguments choosing the view ([] for the main view)
        self.view_args = tuple(protocol.view_argv(view, self.options))
        title = get_view(view).title if self.view_args else ""
        self.setWindowTitle("Export animation" + (f": {title}" if title else ""))
        self.process: QProcess | None = None
        self._workdir: tempfile.TemporaryDirectory | None = None
        self._cancel_requested = False
        self._started = 0.0
        self._first_progress: tuple | None = None
        self._done_event: dict | None = None
        self._stdout_tail = b""
        self._plan = None
        self._out: Path | None = None  # the target of the running export
        self._leftovers_before: set = set()
        self._build(Path(out) if out is not None else Path.home() / f"{export_stem(scenario.name)}.mp4")
        self._refresh_preview()
        if parent is not None:
            # the window closing must stop the child cleanly (QProcess's destructor would
            # SIGKILL it, leaving its temporary file behind)
            parent.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        """The parent window is closing: cancel a running export first (GUI thread)."""
        if watched is self.parent() and event.type() == QEvent.Close and self.running:
            self.abort_export()
        return False

    # ------------------------------------------------------------------ layout

    def _build(self, out: Path) -> None:
        run = float(self.scenario.solver.duration)
        form = QFormLayout()
        self.out_edit = QLineEdit(str(out))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.out_edit, 1)
        row.addWidget(browse)
        form.addRow("Save as", row)
        self.format_combo = QComboBox()
        for label, ext in FORMAT_CHOICES:
            self.format_combo.addItem(label, ext)
        exts = [e for _, e in FORMAT_CHOICES]
        self.format_combo.setCurrentIndex(exts.index(out.suffix.lower()) if out.suffix.lower() in exts else 0)
        self.format_combo.currentIndexChanged.connect(self._format_changed)
        form.addRow("Format", self.format_combo)

        self.size_combo = QComboBox()
        self.size_combo.addItems(SIZE_CHOICES)
        self.width_spin = QSpinBox()
        self.height_spin = QSpinBox()
        for spin, lo, hi in ((self.width_spin, MIN_SIZE[0], MAX_SIZE[0]), (self.height_spin, MIN_SIZE[1], MAX_SIZE[1])):
            spin.setRange(lo, hi)
            spin.setSingleStep(2)
            spin.setSuffix(" px")
        size_row = QHBoxLayout()
        size_row.addWidget(self.size_combo)
        size_row.addWidget(self.width_spin)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.height_spin)
        form.addRow("Frame size", size_row)
        self.fps_spin = QSpinBox()
        self.fps_spin.setRange(1, MAX_FPS)
        self.fps_spin.setSuffix(" fps")
        form.addRow("Frame rate", self.fps_spin)

        self.start_spin = QDoubleSpinBox()
        self.start_spin.setRange(0.0, max(0.0, run - 0.01))
        self.start_spin.setDecimals(2)
        self.start_spin.setSuffix(" s")
        self.start_spin.setToolTip("Simulated time of the first frame")
        form.addRow("Start at", self.start_spin)
        self.duration_spin = QDoubleSpinBox()
        self.duration_spin.setRange(0.05, 600.0)
        self.duration_spin.setDecimals(2)
        self.duration_spin.setSuffix(" s")
        self.duration_spin.setValue(min(DEFAULT_DURATION, run))
        self.duration_spin.setToolTip("Length of the clip (seconds of video)")
        form.addRow("Clip length", self.duration_spin)
        self.speed_spin = QDoubleSpinBox()
        self.speed_spin.setRange(MIN_SPEED, MAX_SPEED)
        self.speed_spin.setDecimals(2)
        self.speed_spin.setValue(1.0)
        self.speed_spin.setSuffix(" ×")
        self.speed_spin.setToolTip("Simulated seconds per second of video: below 1 slow motion, above 1 time-lapse")
        form.addRow("Playback speed", self.speed_spin)

        self.plots_check = QCheckBox("Plots beside the scene (L, ω, drift), as in the window")
        form.addRow("Content", self.plots_check)
        overlay = QWidget()
        ov = QHBoxLayout(overlay)
        ov.setContentsMargins(0, 0, 0, 0)
        self.time_check = QCheckBox("time")
        self.flips_check = QCheckBox("flip count")
        self.title_check = QCheckBox("title")
        self.legend_check = QCheckBox("colour key")
        self.ghost_check = QCheckBox("exact ghost")
        for box in (self.time_check, self.flips_check, self.title_check, self.legend_check):
            box.setChecked(True)
            ov.addWidget(box)
        from ...physics.reference import exact_unavailable_reason

        reason = exact_unavailable_reason(self.scenario.model)
        self.ghost_check.setEnabled(reason is None)
        self.ghost_check.setToolTip("The body as the closed-form torque-free solution moves it, from the same start"
                                    if reason is None else f"Exact ghost unavailable: this scenario has {reason}")
        ov.addWidget(self.ghost_check)
        self.title_edit = QLineEdit(default_title(self.scenario))
        ov.addWidget(self.title_edit, 1)
        form.addRow("Overlay", overlay)

        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setFormat("%v / %m frames")
        self.progress.setValue(0)
        self.status = QLabel()
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)

        self.export_button = QPushButton("Export")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start_export)
        self.cancel_button = QPushButton("Cancel export")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_export)
        close = QPushButton("Close")
        close.clicked.connect(self.reject)
        self.open_folder_button = QPushButton("Open folder")
        self.open_folder_button.setToolTip("Show the folder of the file written last")
        self.open_folder_button.clicked.connect(lambda: open_folder(self.open_folder_button.toolTip()))
        self.open_folder_button.hide()  # until a file is written
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_folder_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(close)

        outer = QVBoxLayout(self)
        outer.addLayout(form)
        outer.addWidget(self.preview)
        outer.addWidget(self.progress)
        outer.addWidget(self.status)
        outer.addLayout(buttons)

        self._apply_format_defaults(self.format_combo.currentData())
        self.size_combo.currentTextChanged.connect(self._size_chosen)
        for spin in (self.width_spin, self.height_spin, self.fps_spin, self.start_spin, self.duration_spin,
                     self.speed_spin):
            spin.valueChanged.connect(self._refresh_preview)
        for box in (self.plots_check, self.time_check, self.flips_check, self.title_check):
            box.toggled.connect(self._refresh_preview)
        self.out_edit.textChanged.connect(self._path_edited)
        self.out_edit.textChanged.connect(self._refresh_preview)
        self.title_edit.textChanged.connect(self._refresh_preview)

    # ------------------------------------------------------------------ choices

    def _apply_format_defaults(self, ext: str) -> None:
        w, h = GIF_DEFAULT_SIZE if ext == ".gif" else DEFAULT_SIZE
        self.fps_spin.setValue(GIF_DEFAULT_FPS if ext == ".gif" else DEFAULT_FPS)
        self.size_combo.setCurrentText(f"{w}x{h}")
        self._size_chosen(f"{w}x{h}")
        self._show_frame_choices(ext not in GLTF_EXTENSIONS)

    def _show_frame_choices(self, frames: bool) -> None:
        """Frame size, rate, plots and the drawn overlay apply to frames only: glTF (.glb, .html)
        holds the motion itself, and the viewer draws it at its own size and rate."""
        for widget in (self.size_combo, self.fps_spin, self.plots_check, self.time_check, self.flips_check,
                       self.legend_check):
            widget.setEnabled(frames)
        self.ghost_check.setEnabled(frames and self.ghost_check.toolTip().startswith("The body"))
        self.progress.setFormat("%v / %m frames" if frames else "simulated %p%")
        custom = self.size_combo.currentText() == "Custom"
        self.width_spin.setEnabled(frames and custom)
        self.height_spin.setEnabled(frames and custom)

    def is_gltf(self) -> bool:
        """Whether the chosen format is glTF (.glb) or its page (.html)."""
        return self.format_combo.currentData() in GLTF_EXTENSIONS

    def _format_changed(self, _index: int) -> None:
        ext = self.format_combo.currentData()
        path = Path(self.out_edit.text() or "tumble")
        self.out_edit.setText(str(path.with_suffix(ext)))
        self._apply_format_defaults(ext)

    def _size_chosen(self, text: str) -> None:
        custom = text == "Custom"
        self.width_spin.setEnabled(custom)
        self.height_spin.setEnabled(custom)
        if not custom:
            w, h = (int(v) for v in text.split("x"))
            self.width_spin.setValue(w)
            self.height_spin.setValue(h)
        self._refresh_preview()

    def _browse(self) -> None:
        ext = self.format_combo.currentData()
        filters = ";;".join(f"{label} (*{e})" for label, e in FORMAT_CHOICES)
        chosen = next(f"{label} (*{e})" for label, e in FORMAT_CHOICES if e == ext)
        path, _ = save_path(self, "Export animation", self.out_edit.text(), filters, chosen)
        if path:
            self.out_edit.setText(path)

    def _path_edited(self, text: str) -> None:
        """A file name typed or chosen with another format's extension selects that format."""
        suffix = Path(text).suffix.lower()
        exts = [e for _, e in FORMAT_CHOICES]
        if suffix in exts and suffix != self.format_combo.currentData():
            self.format_combo.blockSignals(True)
            self.format_combo.setCurrentIndex(exts.index(suffix))
            self.format_combo.blockSignals(False)
            self._show_frame_choices(suffix not in GLTF_EXTENSIONS)

    def settings(self) -> ExportSettings:
        """The export the dialog describes now."""
        title = self.title_edit.text() if self.title_check.isChecked() else None  # "" is the default title
        if self.is_gltf():
            return ExportSettings(out=Path(self.out_edit.text()).expanduser(), duration=self.duration_spin.value(),
                                  start=self.start_spin.value(), speed=self.speed_spin.value(),
                                  overlay=Overlay(title=title))
        return ExportSettings(
            out=Path(self.out_edit.text()).expanduser(), fps=self.fps_spin.value(),
            duration=self.duration_spin.value(), start=self.start_spin.value(), speed=self.speed_spin.value(),
            size=(self.width_spin.value(), self.height_spin.value()), with_plots=self.plots_check.isChecked(),
            overlay=Overlay(time=self.time_check.isChecked(), flips=self.flips_check.isChecked(), title=title,
                            legend=self.legend_check.isChecked(),
                            ghost=self.ghost_check.isChecked() and self.ghost_check.isEnabled()))

    def _refresh_preview(self, *_args) -> None:
        """Check the choices and show what they make (or why they cannot)."""
        if self.is_gltf():
            return self._refresh_gltf_preview()
        try:
            plan = plan_export(self.scenario, self.settings())
            if plan.format not in ("mp4", "gif", "png"):
                raise ParameterError("out", str(plan.out), "end in .mp4, .gif or .png")
        except ParameterError as err:
            self._refused(err)
        else:
            self._plan = plan
            if self.process is None and self.progress.maximum() != plan.n_frames:
                self.progress.setRange(0, plan.n_frames)  # "0 / N frames" of this clip
                self.progress.setValue(0)
            w, h = plan.size
            what = "PNG files" if plan.format == "png" else plan.format.upper()
            self.preview.setText(
                f"{w} × {h} px, {plan.n_frames} frames at {plan.fps} fps = {plan.duration:.2f} s of video, "
                f"showing t = {plan.start:.2f} to {plan.end:.2f} s; {what}, about "
                f"{_human_bytes(estimate_bytes(plan))}")
            self.preview.setStyleSheet(f"color: {MUTED_TEXT};")
        self.export_button.setEnabled(self._plan is not None and self.process is None)

    def _refused(self, err: ParameterError) -> None:
        """No export for these choices: the preview says why."""
        self._plan = None
        self.preview.setText(str(err))
        self.preview.setStyleSheet(f"color: {ERROR_TEXT};")

    def _refresh_gltf_preview(self) -> None:
        from ...export.gltf import plan_gltf

        settings = self.settings()
        try:
            plan = plan_gltf(self.scenario, settings.out, duration=settings.duration, speed=settings.speed,
                             start=settings.start)
        except ParameterError as err:
            self._refused(err)
        else:
            self._plan = plan
            if self.process is None and self.progress.maximum() != GLTF_STEPS:
                self.progress.setRange(0, GLTF_STEPS)
                self.progress.setValue(0)
            what = ("a glTF 2.0 model: the body turning by the run's own quaternions, for slides, Blender and "
                    "phones" if plan.format == "glb" else
                    "one web page that plays it offline in any browser and turns with the mouse")
            self.preview.setText(f"{plan.duration:.2f} s of animation, showing t = {plan.start:.2f} to {plan.end:.2f} s, "
                                 f"played by the viewer at its own size and frame rate; {what}")
            self.preview.setStyleSheet(f"color: {MUTED_TEXT};")
        self.export_button.setEnabled(self._plan is not None and self.process is None)

    # ------------------------------------------------------------------ running (GUI thread)

    @property
    def running(self) -> bool:
        return self.process is not None

    def start_export(self) -> None:
        """Start the child process for the current choices."""
        if self.process is not None or self._plan is None:
            return
        settings = self.settings()
        self._workdir = tempfile.TemporaryDirectory(prefix="tumble-export-")
        self._out = self._plan.out
        self._leftovers_before = set(_temporaries(self._out))
        toml = Path(self._workdir.name) / "scenario.toml"
        toml.write_text(dumps(self.scenario, base_dir=self._workdir.name), encoding="utf-8")
        argv = protocol.command(toml, settings, view=self.view, options=self.options)
        self._cancel_requested = False
        self._first_progress = None
        self._done_event = None
        self._stdout_tail = b""
        self._started = time.monotonic()
        self.progress.setRange(0, GLTF_STEPS if self.is_gltf() else self._plan.n_frames)
        self.progress.setValue(0)
        self.status.setText("Simulating and starting the renderer…")
        self.status.setStyleSheet("")
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("TMPDIR", self._workdir.name)  # the child's own temporary files die with the folder
        proc.setProcessEnvironment(env)
        proc.setProgram(argv[0])
        proc.setArguments(argv[1:])
        proc.readyReadStandardOutput.connect(self._read_progress)
        proc.finished.connect(self._finished)
        proc.errorOccurred.connect(self._process_error)
        self.process = proc
        self.export_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        proc.start()

    def _read_progress(self) -> None:
        """Progress lines of the child (QProcess signal, GUI thread)."""
        if self.process is None:
            return
        data = self._stdout_tail + bytes(self.process.readAllStandardOutput())
        *lines, self._stdout_tail = data.split(b"\n")
        for raw in lines:
            event = protocol.parse_line(raw.decode("utf-8", "replace"))
            if event is None:
                continue
            if event["event"] == "progress":
                self._show_progress(int(event["done"]), int(event["total"]))
            elif event["event"] == "done":
                self._done_event = event

    def _show_progress(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self._first_progress is None:
            self._first_progress = (now, done)
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        t0, d0 = self._first_progress
        rate = (done - d0) / (now - t0) if now > t0 and done > d0 else 0.0
        left = f", about {(total - done) / rate:.0f} s left" if rate > 0 else ""
        if self.is_gltf():
            self.status.setText(f"Simulating: {100 * done / max(total, 1):.0f}%{left}")
            return
        self.status.setText(f"Rendering frame {done} of {total}{left}")

    def cancel_export(self) -> None:
        """Ask the child to stop; it deletes what it wrote. Escalates if it does not stop.
        A child still starting (no progress yet: importing, simulating) reads no 'cancel'
        until its first frame, so it gets SIGTERM at once (it has written nothing yet)."""
        proc = self.process
        if proc is None:
            return
        self._cancel_requested = True
        self.cancel_button.setEnabled(False)
        self.status.setText("Cancelling…")
        proc.write((protocol.CANCEL_LINE + "\n").encode())
        if self._first_progress is None:
            proc.terminate()
        _after(proc, CANCEL_GRACE_MS, proc.terminate)
        _after(proc, 2 * CANCEL_GRACE_MS, proc.kill)

    def abort_export(self) -> None:
        """Stop a running export now (closing the dialog or the window; GUI thread).

        SIGTERM first: the child turns it into its clean stop, or, still starting, simply
        ends. A child that has not stopped within TERM_WAIT_MS is killed, and the temporary
        output it may have left beside the target is removed here.
        """
        proc = self.process
        if proc is None:
            return
        self._cancel_requested = True
        self.cancel_button.setEnabled(False)
        proc.terminate()
        if not proc.waitForFinished(TERM_WAIT_MS):
            proc.kill()
            proc.waitForFinished(KILL_WAIT_MS)
            self._remove_leftovers()
        if self.process is not None:  # finished was not delivered while waiting
            self._finished(proc.exitCode(), proc.exitStatus())

    def _remove_leftovers(self) -> None:
        """Delete the temporary outputs (a file or a frame folder, named as
        :func:`app.atomic.atomic_path` names them) that appeared beside the target since the
        export started: a killed child could not delete them itself."""
        for path in set(_temporaries(self._out)) - self._leftovers_before:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    path.unlink()
                except OSError:
                    pass

    def _process_error(self, error) -> None:
        if error == QProcess.FailedToStart:
            self._finish_with("failed", f"could not start the export: {self.process.errorString()}")

    def _finished(self, exit_code: int, exit_status) -> None:
        """The child ended (QProcess signal, GUI thread)."""
        if self.process is None:
            return
        self._read_progress()
        stderr = bytes(self.process.readAllStandardError()).decode("utf-8", "replace")
        lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and "WARN|" not in ln]
        if self._cancel_requested:
            self._finish_with("cancelled", "Cancelled; nothing was written.")
        elif exit_code == 0 and exit_status == QProcess.NormalExit and self._done_event is not None:
            ev = self._done_event
            files = f" and {ev['files'] - 1} more" if ev.get("files", 1) > 1 else ""
            what = f"{ev['keyframes']} keyframes" if "keyframes" in ev else f"{ev['frames']} frames"
            self._finish_with("finished", f"Wrote {ev['path']}{files}: {what}, "
                                          f"{_human_bytes(ev['bytes'])} in {ev['seconds']:.1f} s",
                              path=ev["path"])
        else:
            message = lines[-1] if lines else f"the export stopped (exit status {exit_code})"
            for prefix in ("tumble: error: ", "tumble: "):
                if message.startswith(prefix):
                    message = message[len(prefix):]
                    break
            self._finish_with("failed", message)

    def _finish_with(self, outcome: str, message: str, path: str | None = None) -> None:
        proc, self.process = self.process, None
        if proc is not None:
            proc.deleteLater()
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None
        self.cancel_button.setEnabled(False)
        self.status.setText(message)
        color = {"finished": OK_TEXT, "failed": ERROR_TEXT}.get(outcome)
        self.status.setStyleSheet(f"color: {color};" if color else "")
        if outcome == "finished":
            self.progress.setValue(self.progress.maximum())
            self.open_folder_button.setToolTip(str(Path(path).resolve().parent))
            self.open_folder_button.show()
            self.export_finished.emit(path)
        elif outcome == "failed":
            self.export_failed.emit(message)
        else:
            self.progress.setValue(0)
            self.export_cancelled.emit()
        self._refresh_preview()

    def reject(self) -> None:
        """Esc, the Close button and the title bar's close (QDialog.closeEvent calls this):
        stop a running export at once, then hide (and, opened by :meth:`open_for`, go)."""
        self.abort_export()
        super().reject()

    # ------------------------------------------------------------------ the main window's entry

    @classmethod
    def open_for(cls, window, scenario, status_bar=None, view=None, options=None) -> "ExportDialog":
        """Show a modeless export dialog over ``window`` for ``scenario``; on success
        ``status_bar`` (a ``QStatusBar``) offers to open the containing folder.

        One per window: if one is open already (perhaps exporting), it is raised and
        returned instead, so two exports can never write the same file at once.
        """
        for dialog in window.findChildren(cls):
            if dialog.isVisible():
                dialog.raise_()
                dialog.activateWindow()
                return dialog
        dialog = cls(scenario, parent=window, view=view, options=options)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        if status_bar is not None:
            dialog.export_finished.connect(lambda path: offer_open_folder(status_bar, path))
        dialog.show()
        return dialog


def open_folder(folder: str) -> None:
    """Show ``folder`` in the desktop's file manager (tests replace this function)."""
    QDesktopServices.openUrl(QUrl.fromLocalFile(folder))


def offer_open_folder(status_bar, path) -> QPushButton:
    """Show "Exported NAME" with an "Open folder" button in ``status_bar`` for a while.

    Both are one normal status-bar widget, not a temporary message: QStatusBar hides its
    normal widgets while a message shows, which kept the button out of sight until the
    message and the button expired together. The widget deletes itself (the status bar
    drops a deleted widget by itself) when the button is clicked or when its own timer
    runs out; no Python closure holds the status bar, so nothing can call into a status
    bar that was deleted in the meantime. Returns the button.
    """
    folder = str(Path(path).resolve().parent)
    offer = QWidget()
    row = QHBoxLayout(offer)
    row.setContentsMargins(0, 0, 0, 0)
    label = QLabel(f"Exported {Path(path).name}")
    label.setStyleSheet(f"color: {OK_TEXT};")
    button = QPushButton("Open folder")
    button.setToolTip(folder)
    button.clicked.connect(lambda: open_folder(folder))
    button.clicked.connect(offer.deleteLater)
    row.addWidget(label)
    row.addWidget(button)
    status_bar.addWidget(offer)
    _after(offer, OPEN_FOLDER_OFFER_MS, offer.deleteLater)
    return button


def _temporaries(out) -> list:
    """The temporary outputs :func:`app.atomic.atomic_path` (a file) or the PNG export (a
    folder) name after ``out``, in its folder: ``.NAME.*``."""
    out = Path(out)
    folder = out.parent if str(out.parent) else Path(".")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [folder / n for n in names if n.startswith(f".{out.name}.")]


def _after(owner, ms: int, slot) -> QTimer:
    """Call ``slot`` once after ``ms``, unless ``owner`` (a QObject) is deleted first."""
    timer = QTimer(owner)
    timer.setSingleShot(True)
    timer.timeout.connect(slot)
    timer.start(ms)
    return timer
