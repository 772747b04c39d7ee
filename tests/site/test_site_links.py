"""Every internal link and in-page anchor of the built site resolves."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from site_support import BuildResult, site_pages


class _LinkCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(values[key])
        if tag == "a" and values.get("href"):
            self.links.append(values["href"])
        if tag in {"img", "script"} and values.get("src"):
            self.links.append(values["src"])
        if tag == "link" and values.get("href"):
            self.links.append(values["href"])


def parse(path: Path) -> _LinkCollector:
    collector = _LinkCollector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


def test_internal_links_and_anchors_resolve(built_site: BuildResult) -> None:
    html = built_site.html
    pages = site_pages(html)
    parsed = {page: parse(page) for page in pages}
    broken: list[str] = []
    checked = 0
    for page, collector in parsed.items():
        for link in collector.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue  # external: never requested by the site itself
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            where = f"{page.relative_to(html)} -> {link}"
            if not target.is_file():
                broken.append(f"{where}: no such file")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where}: no element with id {parts.fragment!r}")
    assert checked > 100, f"only {checked} links found: is the site complete?"
    assert broken == [], "\n".join(broken)
