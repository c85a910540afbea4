"""``demo``, the URL of no phone: a stand-in phone serving a shipped sample on 127.0.0.1, in process.

``tumble live demo``, ``tumble gui --live demo`` and the Phone dock's address ``demo`` start a
:class:`~app.throws.live.phyphox_server.PhyphoxReplay` of :data:`DEMO_SAMPLE` (over and over, in
real time, on a free port) and follow it as they would a phone: the throws land live without one.
"""

from __future__ import annotations

#: the address that means the stand-in phone
DEMO_URL = "demo"
#: the sample it plays (tumble samples): a bare phone's throws, still between them
DEMO_SAMPLE = "phone-throws"
#: the title it shows where a phone shows its experiment's
DEMO_TITLE = "demo: a stand-in phone playing phone-throws in a loop"


def is_demo(url) -> bool:
    """Whether ``url`` is :data:`DEMO_URL` (any case, spaces around it ignored)."""
    return isinstance(url, str) and url.strip().lower() == DEMO_URL


def start_demo(sample: str = DEMO_SAMPLE):
    """The stand-in phone serving the shipped sample named ``sample`` in a loop on 127.0.0.1 (a
    free port), started; its ``url`` is where to connect, its ``stop()`` ends it. The shipped
    file, whatever the current folder holds (a ``./phone-throws`` of the user's, a dangling link
    of that name): the demo names no file of the user's."""
    from ...physics.errors import ParameterError
    from ..recordings.samples import samples
    from .phyphox_server import replay_recordings

    path = next((s.path for s in samples() if s.name == sample), None)
    if path is None:
        raise ParameterError("demo", sample, "be a shipped sample (tumble samples lists them; a broken install: "
                             "reinstall tumble)")
    return replay_recordings([str(path)], loop=True, port=0, title=DEMO_TITLE).start()
