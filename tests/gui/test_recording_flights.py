"""The import dialog's verdicts on flights: a flight of another object is excluded by the fit,
greyed with its reason and can be put back; ratios no rigid body has are shown with the command
line's sentence and saved only when the user says so."""

import numpy as np
import pytest
from PyQt5.QtCore import Qt
from PyQt5.QtGui import QColor

from tumble.gui.common.theme import MUTED_TEXT
from tumble.scenario import load
from tumble.throws.benches import synthetic as syn
from tumble.throws.fitting.fit import triangle_violation
from conftest import WAIT_MS

#: a fit of a few flights takes seconds here; the machine may be busy
FIT_MS = 120000


def _session(folder, truth, rates, rng):
    t, w, _ = syn.make_recording(truth, rates, rng, flight_s=0.9)
    return syn.write_phyphox(folder, t, w)


@pytest.fixture(scope="module")
def with_a_stranger(tmp_path_factory):
    """Three throws of one body, and a recording of one throw of another body."""
    root = tmp_path_factory.mktemp("rec")
    body, other = syn.Truth(), syn.Truth(moments=(0.55, 0.62, 1.0), drag=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(4)
    ours = _session(root / "ours", body, [syn.spin_near(body, 1, 6.0, 16.0, rng),
                                          syn.spin_near(body, 2, 20.0, 18.0, rng),
                                          syn.spin_near(body, 1, 10.0, 20.0, rng)], rng)
    theirs = _session(root / "theirs", other, [syn.spin_near(other, 1, 8.0, 18.0, rng)], rng)
    return ours, theirs


def _dialog(window, qtbot):
    dialog = window.import_recording_dialog()
    qtbot.waitExposed(dialog)
    return dialog


def test_a_flight_the_fit_excluded_is_greyed_with_its_reason_and_can_be_put_back(open_window, qtbot,
                                                                                  with_a_stranger):
    ours, theirs = with_a_stranger
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as fitted:
        dialog.open_paths([ours, theirs])
    result = fitted.args[0]
    assert [f.excluded for f in result.flights] == [False, False, False, True]
    table = dialog.table
    row = 3
    assert table.item(row, 0).checkState() == Qt.Unchecked
    assert table.item(row, 8).text() == result.flights[3].reason and "not a free flight" in result.flights[3].reason
    assert all(table.item(row, c).foreground().color() == QColor(MUTED_TEXT) for c in range(1, 9))
    assert table.item(0, 1).foreground().color() != QColor(MUTED_TEXT)
    assert "3 flights fitted, 1 excluded" in dialog.status.text()
    np.testing.assert_allclose(result.moments, (0.3, 0.75, 1.0), atol=2e-3)  # the stranger left no trace
    # selecting it shows it (its own launch rate with the fitted body): the user sees why
    with qtbot.waitSignal(dialog.flight_shown, timeout=WAIT_MS):
        table.selectRow(row)
    assert len(dialog.fit_curves[0].getData()[0]) == len(result.flights[3].t)
    assert dialog.note_label.text().endswith(result.flights[3].reason)  # in full under the table
    # ticked, it is back in the next fit (the user's word beats the fit's)
    table.item(row, 0).setCheckState(Qt.Checked)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as refitted:
        dialog.start_fit()
    again = refitted.args[0]
    assert not any(f.excluded for f in again.flights)
    assert table.item(row, 0).checkState() == Qt.Checked and table.item(row, 8).text() == ""
    dialog.close()


@pytest.fixture(scope="module")
def unphysical(tmp_path_factory):
    """Throws of a 'body' whose moments break the triangle inequality (0.2 + 0.3 < 1)."""
    truth = syn.Truth(moments=(0.2, 0.3, 1.0))
    rng = np.random.default_rng(11)
    rates = [syn.spin_near(truth, 1, 8.0, 16.0, rng), syn.spin_near(truth, 1, 12.0, 20.0, rng),
             syn.spin_near(truth, 0, 20.0, 18.0, rng)]
    return _session(tmp_path_factory.mktemp("rec") / "flat", truth, rates, rng)


def test_ratios_no_body_has_are_said_as_the_command_line_says_and_not_saved_silently(open_window, qtbot,
                                                                                     unphysical, tmp_path):
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as fitted:
        dialog.open_paths([unphysical])
    sentence = triangle_violation(fitted.args[0].moments)
    assert sentence is not None
    assert dialog.status.text() == sentence
    assert not dialog.save_button.isEnabled() and dialog.keep_unphysical.isVisible()
    assert dialog.save_scenario(tmp_path / "refused.toml") is None and not (tmp_path / "refused.toml").exists()
    assert sentence in dialog.status.text()
    # the window still replays the flight (showing is not saving)
    assert window.panel.scenario.body.allow_unphysical
    dialog.keep_unphysical.setChecked(True)
    assert dialog.save_button.isEnabled()
    path = dialog.save_scenario(tmp_path / "kept.toml")
    assert path is not None and load(str(path)).body.allow_unphysical
    dialog.close()
