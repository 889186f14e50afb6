"""The built site in a real headless browser: every page in the navigation renders (a title, an
article, no script error), following the navigation reaches each page, and the rendered CLI and
recipe reference pages show every option and field. It needs Playwright and a Chromium
(`pip install playwright`, Debian's `chromium`), and skips where either is missing: CI has
neither, so this is run by hand after a docs change (see the changelog)."""

import functools
import http.server
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "gen"))

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("playwright") is None, reason="playwright is not installed"
    ),
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine"),
    pytest.mark.skipif(
        importlib.util.find_spec("mkdocs") is None, reason="the docs extra is not installed"
    ),
    pytest.mark.slow,
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # a line per request would bury a failure's message
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    handler = functools.partial(_Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # The flags keep Chromium off the network this machine does not have.
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.errors = errors
        yield tab
        browser.close()


def _nav_links(tab) -> list[tuple[str, str]]:
    """The primary navigation's page links, as (absolute URL, label)."""
    return tab.eval_on_selector_all(
        "nav.md-nav--primary a.md-nav__link[href]",
        "els => els.map(e => [e.href, e.textContent.trim()]).filter(([h, _]) => !h.includes('#'))",
    )


def _sections(tab) -> dict[str, str]:
    """The rendered text under each h2 of the article, by the heading's text."""
    return dict(
        tab.evaluate("""() => {
        const out = []; let cur = null;
        for (const el of document.querySelector('article').children) {
            if (el.tagName === 'H2') {
                cur = [el.textContent.replace('¶', '').trim(), '']; out.push(cur);
            }
            else if (cur) { cur[1] += el.innerText + '\\n'; }
        }
        return out;
    }""")
    )


def test_every_page_in_the_navigation_renders_and_is_reached_by_clicking(site, page):
    page.goto(site)
    links = dict(_nav_links(page))
    assert len(links) >= 20, (
        links
    )  # home, getting started, 6 guides, 4 references, 5 notes, 6 benchmarks, changelog
    for url, label in links.items():
        page.goto(site)
        # Click the link as a reader would (a desktop-wide window shows every section's links);
        # found by its target, since two pages may share a label ("Online tuning").
        link = next(
            a
            for a in page.locator("nav.md-nav--primary a.md-nav__link[href]").all()
            if a.evaluate("e => e.href") == url
        )
        with page.expect_navigation():
            link.click()
        assert page.url.rstrip("/") == url.rstrip("/"), label
        article = page.locator("article.md-content__inner")
        assert article.count() == 1, label
        assert page.locator("article h1").count() == 1, label
        assert len(article.inner_text()) > 200, label
        assert "404" not in page.title(), label
    assert page.errors == []


def test_the_rendered_references_hold_every_cli_option_and_recipe_field(site, page):
    import cli_ref
    import model_ref

    page.goto(site + "reference/cli/")
    sections = _sections(page)
    for name, command in cli_ref.command().commands.items():
        text = sections[f"autotune {name}"]
        missing = [o for o in cli_ref.options(command) if o not in text]
        assert missing == [], name
    page.goto(site + "reference/recipe/")
    recipe = _sections(page)
    page.goto(site + "reference/online-options/")
    online_text = page.locator("article").inner_text()
    for model, fields in model_ref.field_names().items():
        text = online_text if model == "OnlineOptions" else recipe[model]
        assert [f for f in fields if f not in text] == [], model
