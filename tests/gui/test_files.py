"""Files from the window: every dialog starts in the folder used last, a saved scenario
says where it went and writes each vector on one line."""

from __future__ import annotations

import os

from tumble.scenario import load


def test_save_open_and_the_last_folder(open_window, qtbot, file_dialogs, tmp_path):
    dialogs = file_dialogs
    folder = tmp_path / "lecture"
    folder.mkdir()
    window = open_window("rocket-top", paused=True)

    dialogs.answers.append(str(folder / "mine.toml"))
    window.save_scenario()
    assert dialogs.started_in[-1] == os.getcwd()  # nothing chosen yet: the working directory
    saved = folder / "mine.toml"
    assert load(saved) == window.panel.scenario
    assert "angular_velocity = [0.0, 0.0, 10.0]" in saved.read_text()
    assert str(saved) in window.statusBar().currentMessage()

    for dialog in (window.open_scenario, window.save_screenshot_dialog, window.save_view_dialog,
                   window.export_trajectory_dialog):
        dialogs.answers.append("")  # cancelled
        dialog()
        assert dialogs.started_in[-1] == str(folder), dialog.__name__

    dialogs.answers.append(str(folder / "shot.png"))
    window.save_screenshot_dialog()
    assert (folder / "shot.png").is_file()
    assert str(folder / "shot.png") in window.statusBar().currentMessage()


def test_the_last_folder_outlives_the_window_and_serves_every_view(open_window, open_view, file_dialogs, tmp_path):
    dialogs = file_dialogs
    window = open_window("t-handle", paused=True)
    dialogs.answers.append(str(tmp_path / "t.toml"))
    window.save_scenario()
    window.close()
    compare = open_view("t-handle", view="compare", paused=True)
    dialogs.answers.append("")
    compare.open_scenario()
    assert dialogs.started_in[-1] == str(tmp_path)
    compare.close()
    stability = open_view("t-handle", view="stability", paused=True)
    dialogs.answers.append("")
    stability.save_screenshot_dialog()
    assert dialogs.started_in[-1] == str(tmp_path)


def test_a_saved_scenario_is_named_for_a_file():
    from tumble.gui.dialogs.file_dialogs import file_stem

    assert file_stem("T-handle (edited)") == "t-handle-edited"
    assert file_stem("Book (from the stability map)") == "book-from-the-stability-map"
    assert file_stem("((()))") == "scenario"
