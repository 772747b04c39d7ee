"""A broken source fails the build with a message naming the file and the line.

Each case builds a small copy of the book (the real configuration, extensions
and package; a tiny index; one faulty page or example) and checks that
``sphinx-build`` exits non-zero and says where the fault is.
"""

from __future__ import annotations

import re
from pathlib import Path

from site_support import NOTEBOOK_HEADER, make_book

from book_tools import sphinx_build

GOOD_EXAMPLE = '''"""
A working example
=================

It prints a number.
"""

# %%
print(1 + 1)
'''

BROKEN_EXAMPLE = '''"""
A broken example
================

Its second cell divides by zero.
"""

# %%
x = 1

# %%
y = x / 0
'''


def build(docs: Path) -> tuple[int, str]:
    result = sphinx_build(docs=docs)
    return result.returncode, result.output


def test_the_copy_builds_when_nothing_is_broken(tmp_path: Path) -> None:
    page = NOTEBOOK_HEADER + "# Fine\n\n```{code-cell} ipython3\nprint(2 + 2)\n```\n"
    docs = make_book(tmp_path, {"fine": page}, {"plot_good.py": GOOD_EXAMPLE})
    code, output = build(docs)
    assert code == 0, output[-4000:]


def test_a_failing_example_names_its_file_and_line(tmp_path: Path) -> None:
    docs = make_book(tmp_path, {}, {"plot_good.py": GOOD_EXAMPLE, "plot_broken.py": BROKEN_EXAMPLE})
    code, output = build(docs)
    assert code != 0
    line = BROKEN_EXAMPLE.splitlines().index("y = x / 0") + 1
    assert re.search(rf'plot_broken\.py", line {line}\b', output), output[-4000:]
    assert "ZeroDivisionError" in output


def test_a_failing_cell_names_its_page_and_line(tmp_path: Path) -> None:
    # The failing cell has options (a removed cell): its line is that of its code.
    page = NOTEBOOK_HEADER + (
        "# Broken\n\nSome prose.\n\n"
        "```{code-cell} ipython3\nx = 1\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\ny = x / 0\n```\n"
    )
    docs = make_book(tmp_path, {"broken_cell": page}, {"plot_good.py": GOOD_EXAMPLE})
    line = page.splitlines().index("y = x / 0") + 1
    expected = (
        rf"broken_cell\.md:{line}: \S+ a code cell raised ZeroDivisionError: division by zero"
    )
    # The next build, with nothing changed, fails alike: a failed run is never reused.
    for _ in range(2):
        code, output = build(docs)
        assert code != 0
        assert re.search(expected, output), output[-4000:]
    assert not (docs / "_build" / "html" / "_downloads" / "notebooks").exists()


def test_a_formula_that_cannot_be_typeset_names_its_page_and_line(tmp_path: Path) -> None:
    page = NOTEBOOK_HEADER + (
        "# Formula\n\n```{code-cell} ipython3\nx = 1\n```\n\n"
        "A fraction with no denominator, $\\frac{1}{$, cannot be typeset.\n"
    )
    docs = make_book(tmp_path, {"formula": page}, {"plot_good.py": GOOD_EXAMPLE})
    line = page.splitlines().index(
        "A fraction with no denominator, $\\frac{1}{$, cannot be typeset."
    )
    code, output = build(docs)
    assert code != 0
    assert f"formula.md:{line + 1}: cannot typeset" in output, output[-4000:]


def test_reference_image_and_claim_faults_are_each_reported(tmp_path: Path) -> None:
    page = NOTEBOOK_HEADER + (
        "# Faults\n\nA link to {ref}`no-such-label`.\n\n"
        "```{image} images/missing.png\n:alt: A picture that is not there\n```\n\n"
        "```{code-cell} ipython3\nfrom myst_nb import glue\n\n"
        "glue('answer', 41, display=False)\n```\n\n"
        "The answer is {glue:text}`answer`.\n"
    )
    docs = make_book(tmp_path, {"faults": page}, {"plot_good.py": GOOD_EXAMPLE})
    (docs / "claims" / "faults.toml").write_text(
        '[answer]\nwhat = "the answer"\nequals = 42\n', encoding="utf-8"
    )
    code, output = build(docs)
    assert code != 0
    # the lines of the file itself: the build puts nothing before a page's text
    link = page.split("\n").index("A link to {ref}`no-such-label`.") + 1
    image = page.split("\n").index("```{image} images/missing.png") + 1
    assert f"faults.md:{link}: WARNING: undefined label: 'no-such-label'" in output
    assert f"faults.md:{image}: WARNING: image file not readable: images/missing" in output
    assert re.search(r"faults\.md: WARNING: claims: the answer \('answer'\) is 41", output)


def test_each_kind_of_text_defect_fails_the_build_where_it_is(tmp_path: Path) -> None:
    lines = [
        "# Text defects",
        "",
        "## The cost: $O(T^2)$",
        "",
        "```{code-cell} ipython3",
        ":tags: [remove-cell]",
        "",
        "from bounds import at_least",
        "from myst_nb import glue",
        "",
        "glue('diff', 0.0, display=False)",
        "glue('params', 1088, display=False)",
        "glue('gap', 0.248, display=False)",
        "glue('share', at_least(0.2479, '.2f'), display=False)",
        "glue('width', 3.14159, display=False)",
        "glue('weight', 0.9998, display=False)",
        "```",
        "",
        "The outputs differ by {glue:text}`diff:.2e`, and both hold",
        "{glue:text}`params` for ours and {glue:text}`params` for theirs.",
        "",
        "Any two heads differ by at least {glue:text}`gap:.2f`, and every run",
        "keeps at least {glue:text}`share:.2f` of it. The width is",
        "{glue:text}`width:.2f` here and {glue:text}`width:.3f` there.",
        "",
        "A sentence wrapped so that its next line begins with a percent sign: 92.2",
        "% of the clause is lost.",
        "",
        "The table has 1 distinct total.",
        "",
        "Head 2 puts {glue:text}`weight:.3f` of its weight on B.",
        "",
        "Half of the runs is 50 % of them.",
        "",
        "Most is 90% of them, and all is 100% of them.",
        "",
        "A symbol no table lists: $x + \\zeta$.",
    ]
    notation = (
        "# Notation\n\n| Symbol | Meaning |\n| --- | --- |\n| $x$ | a token |\n| $x$ | again |\n"
    )
    page = NOTEBOOK_HEADER + "\n".join(lines) + "\n"
    pages = {"prose": page, "notation": notation}
    docs = make_book(tmp_path, pages, {"plot_good.py": GOOD_EXAMPLE})
    claims = {
        "diff": "equals = 0.0",
        "params": "equals = 1088",
        "gap": "max = 1.0",
        "share": 'bound = "at least"',
        "width": "max = 4.0",
        "weight": "max = 1.0",
    }
    (docs / "claims" / "prose.toml").write_text(
        "".join(f'[{key}]\nwhat = "{key}"\n{rule}\n\n' for key, rule in claims.items()),
        encoding="utf-8",
    )
    code, output = build(docs)
    assert code != 0

    def line_of(text: str) -> int:
        return NOTEBOOK_HEADER.count("\n") + lines.index(text) + 1

    comment = line_of("% of the clause is lost.")
    zero = line_of("The outputs differ by {glue:text}`diff:.2e`, and both hold")
    one = line_of("The table has 1 distinct total.")
    gap = line_of("Any two heads differ by at least {glue:text}`gap:.2f`, and every run")
    width = line_of("{glue:text}`width:.2f` here and {glue:text}`width:.3f` there.")
    params = line_of("{glue:text}`params` for ours and {glue:text}`params` for theirs.")
    weight = line_of("Head 2 puts {glue:text}`weight:.3f` of its weight on B.")
    percent = line_of("Half of the runs is 50 % of them.")
    heading = line_of("## The cost: $O(T^2)$")
    symbol = line_of("A symbol no table lists: $x + \\zeta$.")
    expected = [
        r"notation\.md:6: WARNING: notation: 'x' is defined twice \(first on line 5\)",
        rf"prose\.md:{symbol}: WARNING: notation: "
        "\N{GREEK SMALL LETTER ZETA}"
        r" in \$x \+ \\zeta\$ is not in the notation table",
        rf"prose\.md:{comment}: WARNING: a line of this paragraph starts with '%'",
        rf"prose\.md:{heading}: WARNING: prose: the heading 'The cost: O\(T\^2\)' contains math",
        rf"prose\.md:{zero}: WARNING: prose: pasted value '0\.00e\+00' is zero",
        rf"prose\.md:{zero}: WARNING: prose: 'The outputs differ by 0\.00e\+00': an exact zero",
        rf"prose\.md:{params}: WARNING: claims: 'params' and 'params' print the same value",
        rf"prose\.md:{weight}: WARNING: claims: 'weight' prints as 1\.000, which reads as exact",
        rf"prose\.md:{percent}: WARNING: prose: a percentage is written '50 %' here",
        rf"prose\.md:{one}: WARNING: prose: '1 distinct total': write 'one'",
        rf"prose\.md:{gap}: WARNING: claims: 'gap' follows words that make it a bound \(at least\)",
        rf"prose\.md:{gap}: WARNING: claims: 'gap' is a bound printed as 0\.25 but glued as 0\.248",
        rf"prose\.md:{width}: WARNING: claims: 'width' is pasted as '\.3f' here",
    ]
    missing = [pattern for pattern in expected if not re.search(pattern, output)]
    assert missing == [], output[-6000:]
    # The bound glued with at_least, declared and printed exactly, passes.
    assert "'share'" not in output
