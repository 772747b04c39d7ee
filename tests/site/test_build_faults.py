"""A broken source fails the build with a message naming the file and the line.

Each case builds a small copy of the book (the real configuration, extensions
and package; a tiny index; one faulty page or example) and checks that
``sphinx-build`` exits non-zero and says where the fault is.
"""

from __future__ import annotations

import re
from pathlib import Path

from site_support import NOTEBOOK_HEADER, make_book, run_sphinx

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
    result = run_sphinx(docs, docs / "_build" / "html")
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
    page = NOTEBOOK_HEADER + (
        "# Broken\n\nSome prose.\n\n"
        "```{code-cell} ipython3\nx = 1\n```\n\n"
        "```{code-cell} ipython3\ny = x / 0\n```\n"
    )
    docs = make_book(tmp_path, {"broken_cell": page}, {"plot_good.py": GOOD_EXAMPLE})
    code, output = build(docs)
    assert code != 0
    assert "broken_cell.md" in output, output[-4000:]
    assert re.search(r"broken_cell\.md:\d+", output), output[-4000:]
    assert "ZeroDivisionError" in output


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
    assert re.search(r"faults\.md:\d+: WARNING: undefined label: 'no-such-label'", output)
    assert re.search(r"faults\.md:\d+: WARNING: image file not readable: images/missing", output)
    assert re.search(r"faults\.md: WARNING: claims: the answer \('answer'\) is 41", output)


def test_malformed_math_names_its_page_and_line(tmp_path: Path) -> None:
    page = "# Math\n\nFine: $x^2$.\n\n$$\n\\frac{1}{\n$$\n"
    docs = make_book(tmp_path, {"bad_math": page}, {"plot_good.py": GOOD_EXAMPLE})
    code, output = build(docs)
    assert code != 0
    assert re.search(r"bad_math\.md:\d+: cannot typeset", output), output[-4000:]
