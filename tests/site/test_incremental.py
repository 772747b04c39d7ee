"""Rebuilds execute exactly what changed, and never leave a stale output.

A small copy of the book (the real configuration, extensions and package) has
three lesson pages and two gallery examples:

* ``direct`` and ``plot_direct.py`` import ``lessons_code.positional``;
* ``indirect`` imports ``lessons_code.order_task``, which imports
  ``positional`` in turn, and only in a removed cell (a cell with options:
  the import must be seen all the same);
* ``unrelated`` and ``plot_unrelated.py`` never load ``positional``;
  ``unrelated`` imports ``bounds``, one of the book's build modules.

Every page and example prints a value computed by the package and a stamp of
the moment it ran, so the built HTML tells both what was computed and whether
it was computed again. The copy is built once from scratch, then rebuilt after
no change, after a prose edit, after an edit to one example, after an edit to
``bounds.py`` and after an edit to ``positional.py`` that doubles every
encoding.
"""

from __future__ import annotations

import re
from pathlib import Path

from site_support import NOTEBOOK_HEADER, make_book

from book_tools import executed, execution_report, sphinx_build

STAMP = "import time\n\nprint('stamp', time.perf_counter_ns(), time.time_ns())\n"

DIRECT_PAGE = NOTEBOOK_HEADER + (
    "# Direct\n\n"
    "```{code-cell} ipython3\n"
    "from lessons_code.positional import positional_encoding\n\n"
    "print('direct', float(positional_encoding(4, 4).abs().max()))\n"
    f"{STAMP}```\n"
)
INDIRECT_PAGE = NOTEBOOK_HEADER + (
    "# Indirect\n\n"
    "```{code-cell} ipython3\n"
    ":tags: [remove-cell]\n\n"
    "from lessons_code.order_task import OrderClassifier\n"
    "```\n\n"
    "```{code-cell} ipython3\n"
    "import torch\n\n"
    "torch.manual_seed(0)\n"
    "model = OrderClassifier(d_model=4, num_heads=1, use_pos_enc=True).double()\n"
    "logit = model(torch.zeros(1, 3, 4, dtype=torch.float64)).item()\n"
    "print('indirect', f'{logit:.12f}')\n"
    f"{STAMP}```\n"
)
UNRELATED_PAGE = NOTEBOOK_HEADER + (
    "# Unrelated\n\nSome prose.\n\n"
    "```{code-cell} ipython3\n"
    "import numpy as np\n\n"
    "from lessons_code.attention import softmax\n\n"
    "print('unrelated', softmax(np.zeros(4)).tolist())\n"
    f"{STAMP}```\n\n"
    # a build module on the kernel's path (docs/_ext): a dependency too
    "```{code-cell} ipython3\n"
    ":tags: [remove-cell]\n\n"
    "from bounds import at_least\n"
    "```\n"
)
# Not a notebook: the API reference's lists of the lessons that import a name.
LISTING_PAGE = (
    "# Listing\n\n"
    "```{eval-rst}\n.. used-in-pages:: lessons_code.positional.positional_encoding\n```\n\n"
    "```{eval-rst}\n.. used-in-pages:: lessons_code.order_task.OrderClassifier\n```\n"
)
DIRECT_EXAMPLE = f'''"""
Direct example
==============

It prints the largest positional-encoding value.
"""

# %%
from lessons_code.positional import positional_encoding

print("direct", float(positional_encoding(4, 4).abs().max()))
{STAMP}'''
UNRELATED_EXAMPLE = f'''"""
Unrelated example
=================

It prints a softmax.
"""

# %%
import numpy as np

from lessons_code.attention import softmax

print("unrelated", softmax(np.zeros(4)).tolist())
{STAMP}'''

# Appended to positional.py: every caller now gets twice the encoding.
DOUBLING = """

_single_positional_encoding = positional_encoding


def positional_encoding(*args, **kwargs):  # noqa: D103 -- added by test_incremental
    return 2 * _single_positional_encoding(*args, **kwargs)
"""

DOCUMENTS = {
    "direct": "direct.html",
    "indirect": "indirect.html",
    "unrelated": "unrelated.html",
    "plot_direct": "auto_examples/plot_direct.html",
    "plot_unrelated": "auto_examples/plot_unrelated.html",
}

#: The names the build's execution report uses for them.
DOCUMENTS_BY_NAME = {
    "direct",
    "indirect",
    "unrelated",
    "auto_examples/plot_direct.py",
    "auto_examples/plot_unrelated.py",
}
#: What the last build's report gave as the reason for each.
WHY: dict[str, str] = {}
UNCHANGED = "unchanged code and dependencies"


def outputs(html: Path) -> dict[str, tuple[str, str]]:
    """For each page and example: (its printed value, its stamp)."""
    found = {}
    for name, file in DOCUMENTS.items():
        text = (html / file).read_text(encoding="utf-8")
        value = re.search(r"(?:direct|indirect|unrelated) (\S+)", text.split("<main", 1)[-1])
        stamp = re.search(r"stamp (\d+ \d+)", text)
        assert value, f"{file} shows no value"
        assert stamp, f"{file} shows no stamp"
        found[name] = (value.group(1), stamp.group(1))
    return found


def listed_lessons(html: Path) -> list[list[str]]:
    """The lesson titles that each list of the listing page links to."""
    text = (html / "listing.html").read_text(encoding="utf-8")
    found = re.findall(r'<p class="used-in-pages">(.*?)</p>', text, re.S)
    return [re.findall(r"<a [^>]*>([^<]+)</a>", listing) for listing in found]


def rebuild(docs: Path) -> tuple[set[str], set[str], dict[str, tuple[str, str]]]:
    """Build; return the pages and examples executed, and every output.

    They are read from the build's own report (``_build/execution.json``),
    which must account for every page and example and give each executed one
    its seconds; the reasons it gives are kept in ``WHY``.
    """
    html = docs / "_build" / "html"
    result = sphinx_build(docs=docs, out=html)
    assert result.returncode == 0, result.output[-6000:]
    pages, examples = executed(html)
    report = execution_report(html)
    assert set(report["executed"]) | set(report["reused"]) == set(DOCUMENTS_BY_NAME)
    assert set(report["seconds"]) == set(report["executed"])
    assert all(0 <= seconds < 600 for seconds in report["seconds"].values())
    assert "[execution]" in result.output
    WHY.clear()
    WHY.update(report["executed"] | report["reused"])
    return set(pages), set(examples), outputs(html)


def test_rebuilds_run_exactly_what_changed_and_show_new_output(tmp_path: Path) -> None:
    pages = {
        "direct": DIRECT_PAGE,
        "indirect": INDIRECT_PAGE,
        "unrelated": UNRELATED_PAGE,
        "listing": LISTING_PAGE,
    }
    examples = {"plot_direct.py": DIRECT_EXAMPLE, "plot_unrelated.py": UNRELATED_EXAMPLE}
    docs = make_book(tmp_path, pages, examples)

    ran_pages, ran_examples, first = rebuild(docs)
    assert ran_pages == {"direct.md", "indirect.md", "unrelated.md"}
    assert ran_examples == {"plot_direct.py", "plot_unrelated.py"}
    assert first["direct"][0] == first["plot_direct"][0] == "1.0"
    assert first["unrelated"][0].startswith("[0.25,")
    assert set(WHY.values()) == {"first build"}
    html = docs / "_build" / "html"
    assert listed_lessons(html) == [["Direct"], ["Indirect"]]

    # No change: nothing runs, every output is the one of the first build.
    ran_pages, ran_examples, same = rebuild(docs)
    assert (ran_pages, ran_examples) == (set(), set())
    assert same == first
    assert set(WHY.values()) == {UNCHANGED}

    # An extension's code: every page is read again and shows what the
    # extension writes now; nothing runs.
    notebooks = docs / "_ext" / "book" / "downloads.py"
    notebooks.write_text(
        notebooks.read_text(encoding="utf-8").replace(
            "(it runs with the book's package)", "(it runs with lessons_code)"
        ),
        encoding="utf-8",
    )
    ran_pages, ran_examples, after_extension = rebuild(docs)
    assert (ran_pages, ran_examples) == (set(), set())
    assert after_extension == first
    for page in ("direct", "unrelated"):
        assert "(it runs with lessons_code)" in (html / f"{page}.html").read_text("utf-8")

    # Prose: the page shows the new sentence from its cached outputs.
    unrelated = docs / "unrelated.md"
    unrelated.write_text(
        unrelated.read_text(encoding="utf-8").replace("Some prose.", "Some new prose."),
        encoding="utf-8",
    )
    ran_pages, ran_examples, after_prose = rebuild(docs)
    assert (ran_pages, ran_examples) == (set(), set())
    assert after_prose == first
    assert WHY["unrelated"] == UNCHANGED
    assert "Some new prose." in (docs / "_build" / "html" / "unrelated.html").read_text("utf-8")

    # One example: only that example runs.
    script = tmp_path / "gallery" / "plot_unrelated.py"
    script.write_text(script.read_text(encoding="utf-8") + "# An edit.\n", encoding="utf-8")
    ran_pages, ran_examples, after_example = rebuild(docs)
    assert (ran_pages, ran_examples) == (set(), {"plot_unrelated.py"})
    assert WHY["auto_examples/plot_unrelated.py"] == "its code changed"
    assert after_example["plot_unrelated"][1] != first["plot_unrelated"][1]
    assert {k: v for k, v in after_example.items() if k != "plot_unrelated"} == {
        k: v for k, v in first.items() if k != "plot_unrelated"
    }

    # A build module a page's kernel imports (docs/_ext/bounds.py): that page
    # runs again, and only that one.
    bounds = docs / "_ext" / "bounds.py"
    bounds.write_text(bounds.read_text(encoding="utf-8") + "# An edit.\n", encoding="utf-8")
    ran_pages, ran_examples, after_bounds = rebuild(docs)
    assert (ran_pages, ran_examples) == ({"unrelated.md"}, set())
    assert WHY["unrelated"] == "bounds.py changed"
    assert after_bounds["unrelated"][1] != first["unrelated"][1]
    assert after_bounds["direct"] == first["direct"]

    # The package: every page and example that loads positional.py runs again,
    # directly or through order_task, and shows the doubled encoding; the
    # others keep their outputs.
    module = tmp_path / "lessons_code" / "positional.py"
    module.write_text(module.read_text(encoding="utf-8") + DOUBLING, encoding="utf-8")
    ran_pages, ran_examples, after_edit = rebuild(docs)
    assert ran_pages == {"direct.md", "indirect.md"}
    assert ran_examples == {"plot_direct.py"}
    for name in ("direct", "indirect", "auto_examples/plot_direct.py"):
        assert WHY[name] == "lessons_code.positional changed"
    assert after_edit["direct"][0] == after_edit["plot_direct"][0] == "2.0"
    assert after_edit["indirect"][0] != first["indirect"][0]
    for name in ("direct", "indirect", "plot_direct"):
        assert after_edit[name][1] != first[name][1], f"{name} was not executed again"
    assert after_edit["unrelated"] == after_bounds["unrelated"]
    assert after_edit["plot_unrelated"] == after_example["plot_unrelated"]

    # A lesson starts to import the name: it runs again, and the listing
    # (written from what every lesson imports) names it too.
    unrelated.write_text(
        unrelated.read_text(encoding="utf-8").replace(
            "from lessons_code.attention import softmax\n",
            "from lessons_code.attention import softmax\n"
            "from lessons_code.positional import positional_encoding\n",
        ),
        encoding="utf-8",
    )
    ran_pages, ran_examples, _ = rebuild(docs)
    assert (ran_pages, ran_examples) == ({"unrelated.md"}, set())
    assert WHY["unrelated"] == "its code changed"
    assert listed_lessons(html) == [["Direct", "Unrelated"], ["Indirect"]]
