"""The site holds what it must.

That it builds with no warning is the fixture's own check: the build runs with
``-W`` (warnings are errors), and a failed build fails every test that uses it.
"""

from __future__ import annotations

import html
import re

from site_support import LESSON_PAGES, BuildResult, site_pages


def test_pages_exist(built_site: BuildResult) -> None:
    for page in (
        "index.html",
        "positional_encoding.html",
        "api.html",
        "bibliography.html",
        "auto_examples/index.html",
        "auto_examples/plot_positional_encoding.html",
    ):
        assert (built_site.html / page).is_file(), page


def test_no_reference_to_another_host_in_markup(built_site: BuildResult) -> None:
    """No page loads a script, stylesheet, image or font from another host."""
    loader = re.compile(
        r"""<(?:script|link|img|iframe|source)\b[^>]*?(?:src|href)=["'](https?:)?//"""
    )
    offenders = [
        str(path.relative_to(built_site.html))
        for path in built_site.html.rglob("*.html")
        if loader.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_math_rendered_to_mathml_at_build_time(built_site: BuildResult) -> None:
    page = (built_site.html / "positional_encoding.html").read_text(encoding="utf-8")
    assert page.count("<math") >= 5
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert not [tag for tag in scripts if re.search("mathjax|katex", tag, re.IGNORECASE)]
    assert 'id="equation-eq-positional-encoding"' in page


def test_glued_difference_is_in_the_prose(built_site: BuildResult) -> None:
    page = (built_site.html / "positional_encoding.html").read_text(encoding="utf-8")
    match = re.search(
        r"largest difference between the two tables is\s*<span[^>]*>([0-9.]+e[-+][0-9]+)</span>",
        page,
    )
    assert match, "the glued maximum difference is missing from the page"
    assert 0.0 < float(match.group(1)) < 1e-6


DESCRIPTION = re.compile(r'<meta name="description" content="([^"]*)" />')


def test_every_page_has_a_description(built_site: BuildResult) -> None:
    """Search engines and link previews get each page's own summary (issue 26).

    Every page has one description of 20 to 160 characters, the same text as
    its link preview; a lesson's is the start of its opening paragraph, so
    no two lessons share one.
    """
    problems = []
    lessons = {}
    for path in site_pages(built_site.html):
        text = path.read_text(encoding="utf-8")
        found = DESCRIPTION.findall(text)
        name = path.relative_to(built_site.html).as_posix()
        if len(found) != 1 or not 20 <= len(html.unescape(found[0])) <= 160:
            problems.append(f"{name}: {found}")
        elif f'<meta property="og:description" content="{found[0]}" />' not in text:
            problems.append(f"{name}: no og:description equal to its description")
        if name in LESSON_PAGES:
            lessons[name] = found[0] if found else ""
    assert problems == []
    assert len(set(lessons.values())) == len(LESSON_PAGES), lessons
    assert "$" not in "".join(lessons.values())
    assert "\\" not in "".join(lessons.values())
