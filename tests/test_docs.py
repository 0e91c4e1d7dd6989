"""The documentation site (mkdocs.yml, docs/): it builds with --strict (a broken link, anchor or nav entry
fails), every nav entry has its page, no page cites the workspace's ../shared, and the README stays a short
front page whose links to the site's pages resolve."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 120
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _nav_pages() -> list[str]:
    """The page paths the nav of mkdocs.yml names (read as text: it holds a `!!python/name` tag)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:\n", 1)[1]
    return re.findall(r"^\s*- (?:[^\n]*?: )?([\w./-]+\.md)\s*$", nav, re.M)


def _links(text: str) -> list[str]:
    """Relative links of a Markdown text, without their anchors (web and mail links left out)."""
    out = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        out.append(target.split("#", 1)[0])
    return out


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs / mkdocs-material not installed (`make setup` installs them: the dev extra)")
def test_the_site_builds_strict_and_offline(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    for page in _nav_pages():  # a folder's README.md becomes its index page
        built = re.sub(r"README\.md$", "index.md", page)
        assert (tmp_path / "site" / built).with_suffix(".html").is_file(), page
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in html  # theme.font: false (the build fetches nothing)
    for built in (tmp_path / "site").rglob("*.html"):  # a diagram needing a CDN's script shows as raw text offline
        text = built.read_text(encoding="utf-8")
        assert 'class="mermaid"' not in text and "unpkg.com" not in text, built


def test_no_page_draws_with_a_script_the_offline_site_lacks():
    """The architecture diagram was a mermaid fence: raw text in the offline (file://) build (issue 37)."""
    for page in [README, *DOCS.rglob("*.md")]:
        assert "```mermaid" not in page.read_text(encoding="utf-8"), page.relative_to(ROOT)


def test_every_nav_page_exists_and_every_page_is_in_the_nav():
    nav = _nav_pages()
    assert len(nav) >= 15 and len(set(nav)) == len(nav), nav
    for page in nav:
        assert (DOCS / page).is_file(), f"mkdocs.yml names {page}, which docs/ lacks"
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages == set(nav), f"pages outside the nav: {sorted(pages - set(nav))}"
    for reader in ("students.md", "instructors/gradescope.md", "instructors/clusters.md", "authors.md",
                   "security.md", "architecture.md"):
        assert reader in nav, reader


def test_no_page_cites_the_workspace_shared_folder():
    for page in [README, *DOCS.rglob("*.md")]:
        text = page.read_text(encoding="utf-8")
        assert not re.findall(r"\.\./(?:\.\./)*shared\b", text), f"{page.relative_to(ROOT)} cites ../shared"


def test_the_readme_is_a_short_front_page_whose_links_resolve():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_MAX_LINES, len(text.splitlines())
    assert "make demo" in text and "make test" in text and "make docs" in text
    links = _links(text)
    for page in ("docs/students.md", "docs/instructors/index.md", "docs/authors.md", "docs/security.md",
                 "docs/architecture.md"):
        assert page in links, f"the README does not point to {page}"
    for target in links:
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def test_links_between_pages_resolve_without_mkdocs():
    """What the strict build checks, in a form that runs where mkdocs is not installed (files only)."""
    for page in DOCS.rglob("*.md"):
        for target in _links(page.read_text(encoding="utf-8")):
            assert (page.parent / target).resolve().is_relative_to(DOCS.resolve()), (page, target)
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to {target}, which does not exist"


def test_the_nav_reader_sees_the_links_a_page_uses():
    assert _links("[a](b.md#c) [w](https://x.org) [s](#top) ![i](img/p.png)") == ["b.md", "img/p.png"]
