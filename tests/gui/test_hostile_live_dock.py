"""Hostile round, the window's Phone dock: a dripping phone cannot hold the window's close (the
live thread stops within 1 s), and the dock shows the state the thread is in (a 400-digit
number is a reconnect it names; a thread that failed says so, in the status bar too)."""

from __future__ import annotations

import time

from conftest import PhoneServer, WAIT_MS, answer

CONFIG = b'{"title": "Gyroscope"}'


def drip_body(conn, _line, stopping):
    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 1000000\r\n\r\n")
    while not stopping.is_set():
        conn.sendall(b" ")
        time.sleep(0.1)


def test_closing_stops_the_live_thread_within_a_second_whatever_the_phone_drips(open_window, qtbot):
    with PhoneServer(drip_body) as phone:
        window = open_window("t-handle", paused=True)
        dock = window.connect_phone(phone.url)
        qtbot.waitUntil(lambda: phone.connections > 0, timeout=WAIT_MS)
        time.sleep(0.3)  # inside the dripping answer
        thread = dock.thread
        began = time.monotonic()
        dock.stop_and_join()
        assert not thread.is_alive()
        assert time.monotonic() - began < 1.0


def test_a_400_digit_number_is_a_reconnect_the_dock_names(open_window, qtbot):
    body = (b'{"buffer":{"gyr_time":{"buffer":[0.01,0.02]},"gyrX":{"buffer":[1.0,' + b"9" * 400
            + b']},"gyrY":{"buffer":[1,1]},"gyrZ":{"buffer":[1,1]}},"status":{"session":"a","measuring":true}}')

    def handle(conn, line, _stopping):
        answer(conn, CONFIG if "/config" in line else body)

    with PhoneServer(handle) as phone:
        window = open_window("t-handle", paused=True)
        dock = window.connect_phone(phone.url)
        qtbot.waitUntil(lambda: "number of 400 characters" in dock.state_label.text(), timeout=WAIT_MS)
        assert dock.connected and dock.thread.is_alive()
        assert window.statusBar().currentMessage().startswith("phone: reconnecting")
        dock.stop_and_join()


def test_a_thread_that_failed_is_shown_as_failed(open_window, qtbot, monkeypatch):
    from tumble.throws.live.client import PhoneStream

    def broken(self):
        raise RuntimeError("a bug nothing foresaw")

    monkeypatch.setattr(PhoneStream, "poll", broken)
    window = open_window("t-handle", paused=True)
    dock = window.connect_phone("http://127.0.0.1:9")
    qtbot.waitUntil(lambda: not dock.connected and dock.thread is None, timeout=WAIT_MS)
    assert dock.state_label.text().startswith("failed (RuntimeError: a bug nothing foresaw)")
    assert window.statusBar().currentMessage().startswith("phone: failed")
