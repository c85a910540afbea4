"""Errors of an export that are not bad settings (those are ParameterError)."""

from __future__ import annotations


class ExportCancelled(Exception):
    """The export was cancelled between two frames; nothing was written."""


class EncodeError(RuntimeError):
    """The encoder failed (a full disk, an unwritable file, a broken ffmpeg); nothing was written."""
