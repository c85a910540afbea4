"""Debian's Chromium under Selenium, headless, with WebGL through SwiftShader and the network off:
the browser the shared-flip page (``tumble export --out FILE.html``) is tested in.

``open_chromium(home)`` starts one (its profile a fresh folder under ``home``) and returns the
driver; every request the browser makes is logged (Chrome's performance log), so a test can
assert that a page asked no server for anything.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

#: Debian's packages (chromium, chromium-driver)
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: the window the page is drawn in (CSS pixels)
WINDOW = (1024, 640)
#: flags: headless, WebGL on the CPU (SwiftShader through ANGLE), nothing that calls home,
#: no proxy and an unreachable one for anything that would try (the network is off)
FLAGS = (
    "--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
    "--ignore-gpu-blocklist", "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--no-default-browser-check", "--disable-default-apps", "--disable-extensions",
    "--disable-dev-shm-usage", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
    f"--window-size={WINDOW[0]},{WINDOW[1]}",
)


def missing() -> str | None:
    """Why the browser cannot run here (a missing package), or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if shutil.which(path) is None:
            return f"{path} is missing: apt-get install -y {package}"
    try:
        import selenium.webdriver  # noqa: F401 - is it installed
    except ImportError:
        return "selenium is missing: pip install selenium (the test extra)"
    return None


def open_chromium(home: Path):
    """A headless Chromium driven by Selenium, its profile a fresh folder in ``home``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-', dir=home)}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    # the network off: every request but the page's own file fails
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                           {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    driver.set_script_timeout(60)
    return driver


def console_errors(driver) -> list:
    """The browser console's errors (and warnings of SEVERE level) since the last call."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def requested_urls(driver) -> list:
    """Every URL the browser asked for since the last call (Chrome's performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls
