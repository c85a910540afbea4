"""Adding a view is one registry entry: the command line exports a newly registered view (its window: tests/gui/test_new_view.py)."""

from __future__ import annotations


def test_the_command_line_exports_the_new_view(probe_view, tmp_path, capsys):
    from tumble.cli.core import main

    out = tmp_path / "probe.png"
    assert main(["export", "t-handle", "--view", "probe", "--out", str(out), "--duration", "0.1", "--fps", "10",
                 "--size", "320x240"]) == 0
    assert (tmp_path / "probe_0000.png").is_file()
    from conftest import refused, tumble_here

    refused(tumble_here(capsys, "export", "t-handle", "--view", "nope", "--out", out), "--view")
