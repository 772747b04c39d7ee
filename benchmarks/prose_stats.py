"""Measure the running prose of the built lesson pages: sentence length, numbers, hedges.

Run it with an interpreter that has BeautifulSoup (``beautifulsoup4``, which
the theme installs into the docs environment), after a build::

    .nox/docs/bin/python benchmarks/prose_stats.py [--html DIR] [PAGE ...]

``DIR`` defaults to ``docs/_build/html``; the pages default to the seven
lessons from recurrence to the modern architecture (``PAGE`` is the file name
without ``.html``). For every page, and for all of them together, it prints
the sentences, words, mean words per sentence, the share of sentences of 35
words or more, the numbers per 100 words and the hedges per 1,000 words.
``--long N`` lists each page's N longest sentences, ``--hedges`` every hedge
in its context, ``--sample N`` the first N sentences of each page (to check
the extraction by eye) and ``--json`` prints the figures as JSON instead.
The figures are printed, never asserted.

What counts as prose. Only the page's ``<article class="bd-article">``
(sphinx-book-theme's article body) is read, so the navigation, the sidebars
and the previous/next footer are never seen. Inside it these are removed:

- code: notebook cells with their outputs (``div.cell``), listings and their
  captions (``div.highlight``, ``pre``, ``div.literal-block-wrapper``), sphinx-design
  tab labels, the attention explorer's data (``script``, ``style``);
- math, inline and display (``span.math``, ``div.math``; the site renders it
  as MathML, ``<math>``, with the TeX in an ``<annotation>``);
- tables, figures with their captions (captions are not running prose), the
  gallery thumbnails;
- headings, admonition titles ("Question (...)", "Answer to ..."), rubrics and
  the ``#`` permalinks;
- footnotes and parenthetical citations ("[Vaswani *et al.*, 2017]"); a
  narrative citation ("Xiong *et al.* [2020]") keeps its authors, not the year;
- two lines of boilerplate every lesson has: the notebook download line
  (``p.lesson-notebook``) and the build provenance (``p.provenance``: versions,
  CPU, seeds, execution time).

Kept: every paragraph (``p``) and list item (``li`` without a ``p`` of its own)
left, the self-check questions, their dropdown answers and the exercises
included; inline code (a name such as ``self_attention()`` is one word) and the
numbers the build pastes into the text. Where display math sits inside a
sentence (a paragraph that ends without ``.``, ``?`` or ``!``, the math, then
one that starts in lower case), the two paragraphs are read as one.

Sentences. A paragraph is split after ``.``, ``?`` or ``!`` (and any closing
quote or bracket) followed by white space and an upper-case letter, an opening
bracket or quote, or inline code or math; not after the abbreviations in
:data:`ABBREVIATIONS` (e.g., i.e., Fig., Eq., et al., vs., ...). A decimal point
(3.14) is never followed by white space, so numbers are never split.

Words are the runs of letters, digits, ``_``, ``'``, ``-``, ``.`` and ``,``
that start with a letter or digit (:data:`WORD`), trailing ``.,'-`` stripped,
so 1,024, 0.98, 1.1e-16 and ``scaled_dot_product_attention`` are one word
each; inline math counts no words. A number is a word with a digit in it (2017,
float32, the 3 of "Fig. 3"). A hedge is a whole-word, case-insensitive
occurrence of one of :data:`HEDGES`; a phrase of several words is one hedge.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, Tag

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "docs" / "_build" / "html"
PAGES = (
    "recurrence",
    "self_attention",
    "multihead_attention",
    "positional_encoding",
    "encoder_block",
    "translation",
    "modern_architecture",
)
LONG = 35  # a sentence of this many words or more is long
HEDGES = (
    "at most",
    "at least",
    "up to",
    "within",
    "about",
    "roughly",
    "exactly",
    "measured",
    "here",
    "on this machine",
    "seed",
    "seeds",
)
# A period after one of these (lower-cased, the period dropped) ends no sentence.
ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "fig",
        "figs",
        "eq",
        "eqs",
        "al",
        "vs",
        "cf",
        "approx",
        "resp",
        "sec",
        "ch",
        "no",
        "nos",
        "ref",
        "refs",
        "listing",
    ]
)
# Elements that are not running prose (CSS selectors, matched inside the article).
REMOVED = (
    "script, style, nav, footer, h1, h2, h3, h4, h5, h6, .headerlink, "
    "div.cell, div.highlight, pre, div.output, .cell_output, div.literal-block-wrapper, "
    ".code-block-caption, label.sd-tab-label, "
    "div.math, .math, math, mjx-container, table, .pst-scrollable-table-container, "
    "figure, figcaption, img, .sphx-glr-thumbnails, "
    "p.admonition-title, p.rubric, p.lesson-notebook, p.provenance, "
    "aside.footnote-list, .footnote, a.footnote-reference, div.citation, "
    "section#references, section#bibliography"
)
MATH = "\ue000"  # stands in for inline math: no word, but may start a sentence
INLINE = "\ue001"  # marks the start of inline code or emphasis: it may start a sentence
APOSTROPHES = "'\u2019"  # straight and curly
OPENING = "([\"'\u201c\u2018"  # brackets and quotes that may open a sentence
CLOSING = ")]\"'\u201d\u2019"  # and that may close one
WORD = re.compile(rf"[A-Za-z0-9][\w{APOSTROPHES}.,-]*")
HEDGE = re.compile(
    r"\b(?:"
    + "|".join(r"\s+".join(map(re.escape, h.split())) for h in sorted(HEDGES, key=len)[::-1])
    + r")\b",
    re.IGNORECASE,
)
# A candidate sentence end: the punctuation, closing quotes or brackets, white
# space, then (looked at, not taken) what may start a sentence.
BOUNDARY = re.compile(
    rf"[.?!][{re.escape(CLOSING)}]*\s+(?=[A-Z{re.escape(OPENING)}{MATH}{INLINE}])"
)


@dataclass
class Page:
    """The prose of one page and its figures."""

    name: str
    paragraphs: list[str]
    sentences: list[str]

    @property
    def words(self) -> list[str]:
        """Every word of every sentence."""
        return [w for s in self.sentences for w in words(s)]

    def figures(self) -> dict[str, float]:
        """Count and rate what the table and ``--json`` print."""
        lengths = [len(words(s)) for s in self.sentences]
        n_words = sum(lengths)
        numbers = sum(any(c.isdigit() for c in w) for w in self.words)
        hedges = sum(len(HEDGE.findall(s)) for s in self.sentences)
        return {
            "paragraphs": len(self.paragraphs),
            "sentences": len(self.sentences),
            "words": n_words,
            "words_per_sentence": statistics.fmean(lengths) if lengths else 0.0,
            "long_sentences_pct": 100 * sum(n >= LONG for n in lengths) / max(len(lengths), 1),
            "numbers_per_100_words": 100 * numbers / max(n_words, 1),
            "hedges_per_1000_words": 1000 * hedges / max(n_words, 1),
        }


def words(text: str) -> list[str]:
    """Split ``text`` into words, trailing punctuation stripped."""
    return [w.rstrip(f".,-{APOSTROPHES}") for w in WORD.findall(text)]


def clean(text: str) -> str:
    """``text`` without the inline math and code markers, white space collapsed."""
    text = re.sub(r"\s+", " ", text.replace(INLINE, "").replace(MATH, ""))
    return re.sub(r" ([,.;:)])", r"\1", text).strip()


def join_across_math(article: Tag) -> None:
    """Merge two paragraphs that one sentence spans around display math."""
    for math in article.select("div.math"):
        before, after = math.find_previous_sibling(), math.find_next_sibling()
        if not (isinstance(before, Tag) and isinstance(after, Tag)):
            continue
        if before.name != "p" or after.name != "p":
            continue
        head, tail = before.get_text().rstrip(), after.get_text().lstrip()
        if head and head[-1] not in ".?!" and tail[:1].islower():
            before.append(f" {MATH} ")
            for child in list(after.contents):
                before.append(child.extract())
            after.decompose()


def prose(html: str) -> list[str]:
    """Extract the paragraphs of running prose of a built page (see the module docstring)."""
    soup = BeautifulSoup(html, "html.parser")
    article = soup.find("article") or soup.select_one("[role=main]")
    if not isinstance(article, Tag):
        raise ValueError("no <article> or role=main element")
    join_across_math(article)
    for citation in article.select("span.bibtex-citation"):
        text = citation.get_text()
        if text.lstrip().startswith("["):
            citation.decompose()
        else:  # narrative: "Xiong et al. [2020]" keeps the authors
            citation.replace_with(re.sub(r"\s*\[[^\]]*\]", "", text))
    for math in article.select("span.math"):
        math.replace_with(MATH)
    for math in article.select("math"):  # MathML outside span.math, div.math
        if not math.find_parent("div", class_="math"):
            math.replace_with(MATH)
    for code in article.select("code"):
        code.replace_with(INLINE + code.get_text())
    for emphasis in article.select("em"):  # "*cat* is a thing": a sentence may start so
        emphasis.insert_before(INLINE)
    for paragraph in article.select("p"):  # a run-in heading: "**Overview.** ..."
        first = next((c for c in paragraph.children if str(c).strip()), None)
        if isinstance(first, Tag) and first.name == "strong" and first.get_text()[-1:] in ".:":
            first.decompose()
    for element in article.select(REMOVED):
        if not element.decomposed:
            element.decompose()
    blocks = [b for b in article.find_all(["p", "li"]) if b.name == "p" or not b.find(["p", "li"])]
    texts = (re.sub(r"\s+", " ", b.get_text()).strip() for b in blocks)
    return [t for t in texts if words(t)]


def sentences(paragraph: str) -> list[str]:
    """Split one paragraph into sentences (see the module docstring)."""
    out: list[str] = []
    start = 0
    for match in BOUNDARY.finditer(paragraph):
        before = paragraph[start : match.start() + 1]
        last = before.split()[-1].lower() if before.split() else ""
        if paragraph[match.start()] == "." and last.strip(OPENING).rstrip(".") in ABBREVIATIONS:
            continue
        out.append(paragraph[start : match.start() + 1])
        start = match.end()
    out.append(paragraph[start:])
    return [s for s in (clean(s) for s in out) if words(s)]


def read(folder: Path, name: str) -> Page:
    """Read and split one built page."""
    paragraphs = prose((folder / f"{name}.html").read_text(encoding="utf-8"))
    return Page(name, [clean(p) for p in paragraphs], [s for p in paragraphs for s in sentences(p)])


def table(header: list[str], rows: list[list[str]]) -> str:
    """Format a Markdown table (readable as plain text too), as build_bench.py does."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        first, *rest = (c.rjust(w) for c, w in zip(cells, widths, strict=True))
        return "| " + " | ".join([first.strip().ljust(widths[0]), *rest]) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


def hedges_in(page: Page, width: int = 60) -> list[str]:
    """Every hedge of a page, with ``width`` characters of context either side."""
    found = []
    for sentence in page.sentences:
        for match in HEDGE.finditer(sentence):
            left = sentence[max(match.start() - width, 0) : match.start()]
            right = sentence[match.end() : match.end() + width]
            found.append(f"{left:>{width}}[{match.group()}]{right}")
    return found


def main(argv: list[str] | None = None) -> None:
    """Read the pages, then print the table and whatever the options ask for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=HTML, help=f"built HTML folder ({HTML})")
    parser.add_argument("pages", nargs="*", default=list(PAGES), help="page names, no .html")
    parser.add_argument("--long", type=int, default=0, metavar="N", help="N longest per page")
    parser.add_argument("--hedges", action="store_true", help="each hedge in its context")
    parser.add_argument("--sample", type=int, default=0, metavar="N", help="first N sentences")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    missing = [p for p in args.pages if not (args.html / f"{p}.html").is_file()]
    if missing:
        sys.exit(f"not in {args.html}: {', '.join(f'{p}.html' for p in missing)}")
    pages = [read(args.html, name) for name in args.pages]
    every = Page("all", [p for page in pages for p in page.paragraphs], [])
    every.sentences = [s for page in pages for s in page.sentences]
    figures = {page.name: page.figures() for page in [*pages, every]}
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"Prose of {len(pages)} pages in {args.html}\n")
        header = ["page", "sentences", "words", "words/sentence"]
        header += [f">= {LONG} words %", "numbers/100 words", "hedges/1000"]
        rows = [
            [
                name,
                str(f["sentences"]),
                str(f["words"]),
                f"{f['words_per_sentence']:.1f}",
                f"{f['long_sentences_pct']:.1f}",
                f"{f['numbers_per_100_words']:.1f}",
                f"{f['hedges_per_1000_words']:.1f}",
            ]
            for name, f in figures.items()
        ]
        print(table(header, rows))
    for page in pages:
        if args.sample:
            print(f"\nFirst {args.sample} sentences of {page.name}:\n")
            for sentence in page.sentences[: args.sample]:
                print(f"- ({len(words(sentence))}) {sentence}")
        if args.long:
            print(f"\nLongest {args.long} sentences of {page.name}:\n")
            ranked = sorted(page.sentences, key=lambda s: len(words(s)), reverse=True)
            for sentence in ranked[: args.long]:
                print(f"- ({len(words(sentence))}) {sentence}")
        if args.hedges:
            found = hedges_in(page)
            print(f"\nHedges of {page.name} ({len(found)}):\n")
            print("\n".join(found))


if __name__ == "__main__":
    main()
