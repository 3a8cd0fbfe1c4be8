"""The Playwright harness of the app's browser tests (part B extends it).

A real ``rankscope serve`` process on a free port over a prepared database,
and Debian's Chromium driven by Playwright (never ``playwright install``: the
browser comes from apt, its path is given). Tests are skipped when
/usr/bin/chromium or the playwright package is absent.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def require_browser() -> None:
    """Skip the test when the browser or Playwright is missing."""
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (apt install chromium)")
    pytest.importorskip("playwright.sync_api")


@contextmanager
def browser_page(base_url: str) -> Iterator[Any]:
    """A fresh Chromium page (its own context: no cookie shared between tests)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(base_url=base_url)
            context.set_default_timeout(15_000)
            yield context.new_page()
            context.close()
        finally:
            browser.close()


def sign_in(page: Any, name: str, password: str) -> None:
    """Sign in through the form, with the keyboard only."""
    page.goto("/login")
    # the name field has autofocus, which a loaded machine may apply after "load": typing
    # before it lands typed the name nowhere (CI saw the sign-in fail once)
    page.wait_for_selector("input[name=name]:focus", state="attached")
    page.keyboard.type(name)
    page.keyboard.press("Tab")
    page.keyboard.type(password)
    page.keyboard.press("Enter")
    page.wait_for_url("**/projects")
