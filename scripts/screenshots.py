"""Take the web app guide's screenshots (docs/images/*.png) from `rankscope serve --demo`.

Starts the demo server on a free port in a temporary directory, grades a few results
as the demo's judge with the keyboard (so the agreement and disagreement pages have
something to show), then visits every page the guide shows at 1280 x 800 with
Debian's Chromium driven by Playwright (``/usr/bin/chromium``; nothing downloaded).

    .venv/bin/python scripts/screenshots.py [--out docs/images]
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
MAIN = "import sys; from rankscope.cli.main import main; sys.exit(main())"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(workdir: Path, port: int) -> tuple[subprocess.Popen[str], dict[str, str]]:
    process = subprocess.Popen([sys.executable, "-c", MAIN, "serve", "--demo", "--port",
                                str(port)], cwd=workdir, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    text = ""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and "rankscope serving" not in text:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            raise SystemExit("the demo server stopped:\n" + text)
        text += line
    login = re.search(r"as admin / (\S+) \(admin\) or judge / (\S+) \(judge\); "
                      r"evaluation #(\d+).*\n\s+#(\d+): .*#(\d+): ", text)
    if login is None:
        raise SystemExit("no login in the demo's output:\n" + text)
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    return process, {"admin": login[1], "judge": login[2], "ready": login[3],
                     "baseline": login[4], "tuned": login[5]}


def _sign_in(page, name: str, password: str) -> None:  # type: ignore[no-untyped-def]
    page.goto("/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.keyboard.press("Enter")
    page.wait_for_url("**/projects")


def _settle(page) -> None:  # type: ignore[no-untyped-def]
    # a selector, not a JavaScript string: the app's Content-Security-Policy forbids eval
    page.wait_for_selector("body:not([aria-busy])", state="attached")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs"
                                             / "images"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server, login = _start(Path(tmp), port)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                size = {"width": 1280, "height": 800}
                judge = browser.new_context(base_url=f"http://127.0.0.1:{port}", viewport=size)
                page = judge.new_page()
                _sign_in(page, "judge", login["judge"])
                page.goto(f"/evaluations/{login['ready']}/grade")
                for i in range(14):  # a second opinion on the assessor's grades
                    page.keyboard.press("2" if i % 3 else "0")
                    time.sleep(0.05)
                    _settle(page)
                page.screenshot(path=out / "grading.png")
                page.keyboard.press("h")
                page.screenshot(path=out / "grading_keys.png")
                page.keyboard.press("Escape")
                page.goto(f"/evaluations/{login['ready']}/queries/q03")
                page.screenshot(path=out / "grading_list.png")
                judge.close()

                admin = browser.new_context(base_url=f"http://127.0.0.1:{port}", viewport=size)
                page = admin.new_page()
                _sign_in(page, "admin", login["admin"])
                shots = {
                    "metrics.png": f"/evaluations/{login['baseline']}/metrics",
                    "snapshot.png": f"/evaluations/{login['baseline']}/snapshot/q02",
                    "coverage.png": f"/evaluations/{login['tuned']}/coverage",
                    "compare.png": f"/evaluations/{login['tuned']}/compare",
                    "history.png": f"/evaluations/{login['ready']}/history",
                    "agreement.png": f"/evaluations/{login['ready']}/agreement",
                    "disagreements.png": f"/evaluations/{login['ready']}/disagreements",
                    "llm.png": f"/evaluations/{login['ready']}/llm",
                    "users.png": "/admin/users",
                }
                for name, url in shots.items():
                    page.goto(url)
                    page.screenshot(path=out / name)
                admin.close()
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    for png in sorted(out.glob("*.png")):
        sys.stdout.write(f"{png.name}: {png.stat().st_size // 1024} kB\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
