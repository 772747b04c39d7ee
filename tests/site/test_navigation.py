"""Finding one's way: the contents, the pager, the headings, search, the glossary.

Each test reads the built site in headless Chromium. Screenshots of the
landing page, the glossary and a search results page (1280 px wide, light and
dark) are saved in ``test-artifacts/`` for a maintainer to look at.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from site_support import LESSON_PAGES, PageVisit, make_book, settle, site_pages

from book_tools import sphinx_build

LESSONS = LESSON_PAGES

# A query made of a lesson's title words, and the lesson that must come first.
SEARCHES = {
    "positional": "positional_encoding.html",
    "multi-head": "multihead_attention.html",
    "layer normalisation": "encoder_block.html",
    "causal mask": "self_attention.html",
}

# The theme's colour-mode menu; none of it belongs in a snippet.
BUTTON_TEXT = re.compile(r"System Settings|\bLight\s+Dark\b")

TERM_LINK = re.compile(r'href="(?:\.\./)*glossary\.html#(term-[^"]+)"')


@pytest.fixture
def visit(browser, site_url):
    """Open pages of the site; every page opened is closed after the test."""
    opened: list[PageVisit] = []

    def open_page(path: str, *, mode: str = "light") -> PageVisit:
        page = PageVisit(browser, site_url, path, mode=mode)
        opened.append(page)
        return page

    yield open_page
    for page in opened:
        page.close()


def test_lesson_list_has_its_own_heading(visit) -> None:
    """Every toctree of the landing page sits in the section "Contents", nothing else."""
    page = visit("index.html").page
    homes = page.evaluate(
        """() => Array.from(document.querySelectorAll("article .toctree-wrapper")).map((toc) =>
             toc.closest("section").querySelector("h2, h1").textContent.replace("#", "").trim())"""
    )
    assert homes, "no toctree on the landing page"
    assert set(homes) == {"Contents"}, homes
    captions = page.locator("article .toctree-wrapper .caption-text").all_inner_texts()
    assert captions == ["Lessons", "Examples and reference"], captions


def test_landing_page_contents_sidebar_lists_every_section(visit) -> None:
    """The on-page contents name every section (a toctree mid-page cut the list short)."""
    page = visit("index.html").page
    sections = page.evaluate(
        """() => Array.from(document.querySelectorAll("article section > h2"))
             .map((h) => h.textContent.replace("#", "").trim())"""
    )
    listed = page.locator(".bd-sidebar-secondary nav a").all_inner_texts()
    assert len(sections) >= 5
    assert [text.strip() for text in listed] == sections


def test_pager_reads_naturally(visit, built_site) -> None:
    """No pager link repeats its own label ("Next / Next: ...")."""
    labels = {}
    for path in site_pages(built_site.html):
        text = path.read_text(encoding="utf-8")
        for title in re.findall(r'<p class="prev-next-title">(.*?)</p>', text, re.S):
            labels.setdefault(path.relative_to(built_site.html).as_posix(), []).append(title)
    repeated = {
        page: titles
        for page, titles in labels.items()
        if any(re.match(r"\s*(next|previous)\b", title, re.I) for title in titles)
    }
    assert repeated == {}
    following = {
        "translation.html": "From the 2017 block to the models of today",
        "modern_architecture.html": "Vision Transformers",
    }
    for name, title in following.items():
        link = visit(name).page.locator("footer.prev-next-footer a.right-next")
        assert link.locator(".prev-next-subtitle").inner_text().strip().lower() == "next"
        assert link.locator(".prev-next-title").inner_text().strip() == title


@pytest.mark.parametrize("lesson", LESSONS)
def test_exercise_heading_matches_the_count(visit, lesson: str) -> None:
    """ "Exercise" heads one exercise, "Exercises" several; pages without none.

    The self-checks of "Check your understanding" are unnumbered exercises
    (class ``self-check``) in a section of their own: they do not count.
    """
    page = visit(lesson).page
    exercises = "article .exercise:not(.self-check)"
    found = page.evaluate(
        """(exercises) => Array.from(document.querySelectorAll("article section > h2"))
             .map((h) => h.textContent.replace("#", "").trim())
             .filter((t) => /^Exercises?$/.test(t))
             .map((t) => [t, document.querySelectorAll(exercises).length])""",
        exercises,
    )
    count = page.locator(exercises).count()
    if count == 0:
        assert found == [], found
        return
    assert len(found) == 1, found
    assert found[0][0] == ("Exercise" if count == 1 else "Exercises"), (found, count)


def _search(visit, query: str, *, mode: str = "light") -> tuple[PageVisit, list[dict]]:
    """Search the site; return the visit and the results with their snippets."""
    visit_ = visit(f"search.html?q={query}", mode=mode)
    page = visit_.page
    page.wait_for_function(
        "() => (document.querySelector('#search-results .search-summary') || {})"
        ".textContent?.startsWith('Search finished')",
        timeout=20_000,
    )
    # Snippets arrive one fetch per result after the list is complete.
    page.wait_for_load_state("networkidle")
    results = page.evaluate(
        """() => Array.from(document.querySelectorAll("#search-results ul.search > li")).map(
             (li) => ({href: li.querySelector("a").getAttribute("href"),
                       kind: li.className,
                       snippet: (li.querySelector("p.context") || {}).textContent || ""}))"""
    )
    return visit_, results


@pytest.mark.parametrize(("query", "lesson"), SEARCHES.items())
def test_search_ranks_the_lesson_first(visit, query: str, lesson: str) -> None:
    """A lesson's own title words find that lesson first, with a snippet of its text."""
    found, results = _search(visit, query)
    assert results, f"no result for {query!r}"
    assert results[0]["href"].split("#")[0] == lesson, [r["href"] for r in results[:5]]
    # The lessons come before the examples and the reference pages.
    kinds = ["lesson" if r["href"].split("#")[0] in LESSONS else "other" for r in results]
    assert kinds == sorted(kinds, key=lambda kind: kind != "lesson"), results
    snippet = results[0]["snippet"]
    words = [word[:5].lower() for word in re.split(r"\W+", query) if len(word) > 2]
    assert any(word in snippet.lower() for word in words), snippet
    assert found.console_errors == []


@pytest.mark.parametrize("query", SEARCHES)
def test_search_snippets_are_page_text(visit, query: str) -> None:
    """No snippet holds the theme's buttons; every page hit has one."""
    _, results = _search(visit, query)
    with_button_text = [r for r in results if BUTTON_TEXT.search(r["snippet"])]
    assert with_button_text == []
    # API objects carry a description instead of a snippet; every other hit has one.
    missing = [r["href"] for r in results if "kind-object" not in r["kind"] and not r["snippet"]]
    assert missing == []


def _term_uses(html: Path) -> dict[str, set[str]]:
    """Term anchor -> the pages that link to it (the glossary and the index aside)."""
    uses: dict[str, set[str]] = {}
    for path in site_pages(html):
        name = path.relative_to(html).as_posix()
        if name in {"glossary.html", "genindex.html"}:  # the glossary and the index of terms
            continue
        for term in TERM_LINK.findall(path.read_text(encoding="utf-8")):
            uses.setdefault(term, set()).add(name)
    return uses


def test_glossary_lists_where_each_term_is_used(visit, built_site) -> None:
    """Each used term has a "Used in:" list; its links resolve to sections that use it."""
    uses = _term_uses(built_site.html)
    assert uses, "no page links to the glossary"
    glossary = visit("glossary.html").page
    entries = glossary.evaluate(
        """() => Array.from(document.querySelectorAll("article dl.glossary > dt")).map((dt) => {
             const dd = dt.nextElementSibling;
             const list = dd.querySelector("p.glossary-used-in");
             return {id: dt.id, links: list ? Array.from(list.querySelectorAll("a")).map(
               (a) => ({href: a.getAttribute("href"), text: a.textContent})) : null};
           })"""
    )
    by_id = {entry["id"]: entry for entry in entries}
    assert set(uses) <= set(by_id), set(uses) - set(by_id)
    for term, entry in by_id.items():
        if term not in uses:
            assert entry["links"] is None, entry
            continue
        assert entry["links"], f"{term} is used on {sorted(uses[term])} but lists nothing"
        listed_pages = {link["href"].split("#")[0] for link in entry["links"]}
        assert listed_pages == uses[term], (term, listed_pages, uses[term])
    # Every link lands on a section (or page) that links back to the term.
    checked = 0
    targets = {link["href"] for entry in entries for link in entry["links"] or []}
    pages = {href.split("#")[0] for href in targets}
    for name in sorted(pages):
        page = visit(name).page
        for href in sorted(h for h in targets if h.split("#")[0] == name):
            anchor = href.partition("#")[2]
            terms = page.evaluate(
                """(anchor) => {
                     const scope = anchor ? document.getElementById(anchor)
                                          : document.querySelector("article");
                     if (!scope) return null;
                     return Array.from(scope.querySelectorAll("a[href*='glossary.html#term-']"))
                       .map((a) => a.getAttribute("href").split("#")[1]);
                   }""",
                anchor,
            )
            assert terms is not None, f"{href}: no such anchor"
            listing = [e["id"] for e in entries if any(x["href"] == href for x in e["links"] or [])]
            assert set(listing) <= set(terms), (href, listing, terms)
            checked += 1
    assert checked == len(targets)


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots_for_maintainers(visit, artifacts: Path, mode: str) -> None:
    """The landing page, the glossary and a search results page, 1280 px wide."""
    shots = {
        "index": lambda: visit("index.html", mode=mode),
        "glossary": lambda: visit("glossary.html", mode=mode),
        "search": lambda: _search(visit, "positional", mode=mode)[0],
    }
    for name, open_page in shots.items():
        page = open_page().page
        page.set_viewport_size({"width": 1280, "height": 900})
        page.evaluate("window.scrollTo(0, 0)")
        settle(page)
        target = artifacts / f"navigation-{name}-{mode}.png"
        page.screenshot(path=str(target), full_page=True)
        assert target.stat().st_size > 10_000
        assert page.evaluate("document.documentElement.dataset.theme") == mode


GLOSSARY_PAGE = """# Glossary

```{glossary}
alpha
  The first term.

beta
  The second term; see {term}`alpha`.
```
"""
ONE_PAGE = """# One

## First

Uses {term}`alpha`.

## Second

Uses {term}`Alpha` again, and {term}`the beta <beta>`.
"""
TRIVIAL_EXAMPLE = '''"""
Trivial example
===============

It prints a number.
"""

# %%
print(1)
'''


def _used_in(html: Path) -> dict[str, list[str]]:
    """Glossary term id -> the hrefs of its "Used in:" list."""
    text = (html / "glossary.html").read_text(encoding="utf-8")
    found = {}
    for entry in re.split(r'(?=<dt id="term-)', text)[1:]:
        term = re.match(r'<dt id="(term-[^"]+)"', entry)[1]
        listing = re.search(r'<p class="glossary-used-in">(.*?)</p>', entry, re.S)
        found[term] = re.findall(r'href="([^"]+)"', listing[1]) if listing else []
    return found


def test_glossary_backlinks_follow_incremental_builds(tmp_path: Path) -> None:
    """Adding and removing uses updates the lists, without touching glossary.md."""
    docs = make_book(
        tmp_path,
        {"glossary": GLOSSARY_PAGE, "one": ONE_PAGE, "two": "# Two\n\nNo term here.\n"},
        {"plot_trivial.py": TRIVIAL_EXAMPLE},
    )
    html = tmp_path / "html"

    def build() -> dict[str, list[str]]:
        result = sphinx_build(docs=docs, out=html)
        assert result.returncode == 0, result.output[-4000:]
        return _used_in(html)

    # The glossary's own reference (beta -> alpha) is not listed.
    assert build() == {
        "term-alpha": ["one.html#first", "one.html#second"],
        "term-beta": ["one.html#second"],
    }
    written = (html / "glossary.html").stat().st_mtime_ns
    assert build()["term-beta"] == ["one.html#second"]
    assert (html / "glossary.html").stat().st_mtime_ns == written, "rewritten without a change"

    (docs / "two.md").write_text("# Two\n\nNow {term}`beta` is used here.\n", encoding="utf-8")
    assert build()["term-beta"] == ["one.html#second", "two.html"]

    (docs / "one.md").write_text("# One\n\nNo term any more.\n", encoding="utf-8")
    assert build() == {"term-alpha": [], "term-beta": ["two.html"]}


def _used_in_links(html: Path) -> dict[str, list[tuple[str, str]]]:
    """Glossary term id -> (href, text) of each link of its "Used in:" list."""
    text = (html / "glossary.html").read_text(encoding="utf-8")
    found = {}
    for entry in re.split(r'(?=<dt id="term-)', text)[1:]:
        term = re.match(r'<dt id="(term-[^"]+)"', entry)[1]
        listing = re.search(r'<p class="glossary-used-in">(.*?)</p>', entry, re.S)
        links = re.findall(r'<a [^>]*href="([^"]+)"[^>]*>(.*?)</a>', listing[1]) if listing else []
        found[term] = [(href, re.sub(r"<[^>]+>", "", label).strip()) for href, label in links]
    return found


EXERCISE_PAGE = """# Three

## Practice

```{exercise} A first exercise
:label: ex-first

Uses {term}`alpha`.
```

```{solution-start} ex-first
:class: dropdown
```

The solution uses {term}`beta`.

```{solution-end}
```
"""


def test_glossary_backlinks_from_exercises_and_solutions(tmp_path: Path) -> None:
    """A use inside an exercise or its solution links to its section, named with it.

    sphinx-exercise wraps both in an untitled section whose id is the same for
    every solution; a backlink there had an empty name and led to the first
    solution of the page.
    """
    docs = make_book(
        tmp_path,
        {"glossary": GLOSSARY_PAGE, "three": EXERCISE_PAGE},
        {"plot_trivial.py": TRIVIAL_EXAMPLE},
    )
    html = tmp_path / "html"
    result = sphinx_build(docs=docs, out=html)
    assert result.returncode == 0, result.output[-4000:]
    arrow = "\N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK}"
    assert _used_in_links(html) == {
        "term-alpha": [("three.html#practice", f"Three {arrow} Practice, exercise")],
        "term-beta": [("three.html#practice", f"Three {arrow} Practice, solution")],
    }


def test_glossary_backlinks_name_a_section_of_the_book(built_site) -> None:
    """Every "Used in:" link of the book names its section and lands on one anchor."""
    arrow = "\N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK}"
    links = [link for found in _used_in_links(built_site.html).values() for link in found]
    assert links, "the glossary lists no uses"
    for href, label in links:
        page, _, anchor = href.partition("#")
        assert label, href
        assert not label.endswith(arrow), (href, label)
        if anchor:
            assert label.count(arrow) == 1, (href, label)
            assert label.split(arrow)[1].strip(), (href, label)
            text = (built_site.html / page).read_text(encoding="utf-8")
            assert text.count(f'id="{anchor}"') == 1, f"{href}: not one anchor"
