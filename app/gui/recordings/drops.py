"""Recordings dropped on a main window open its import dialog (a TOML or anything else is left alone)."""

from __future__ import annotations

from PyQt5.QtCore import QEvent, QObject

from .opening import is_recording, open_recordings


def dropped_recordings(event) -> list[str]:
    """The local paths a drag carries, if every one is a recording; else []."""
    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return []
    paths = [url.toLocalFile() for url in mime.urls()]
    return paths if paths and all(p and is_recording(p) for p in paths) else []


class RecordingDrops(QObject):
    """Event filter on a main window (GUI thread): accepts drags of recordings and opens the
    import dialog on a drop."""

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind in (QEvent.DragEnter, QEvent.DragMove, QEvent.Drop) and dropped_recordings(event):
            event.acceptProposedAction()
            if kind == QEvent.Drop:
                open_recordings(watched, dropped_recordings(event))
            return True
        return False


def accept_recording_drops(window) -> None:
    """Let ``window`` (a main window) take recordings dropped on it."""
    window.setAcceptDrops(True)
    window.recording_drops = RecordingDrops(window)  # held: the filter's Python override must live on
    window.installEventFilter(window.recording_drops)
