"""claims and bounds: the checks that keep the glued numbers and their printed digits honest.

The rules are pure functions of a page's text and its glued values; one build
of a tiny book checks that ``check_claims`` reports a broken claim on its page.
"""

from __future__ import annotations

import json

import pytest
from book.checks import (
    bounds_beside_printouts,
    format_problems,
    pasted_values,
    problems,
    repeated_values,
    rounds_to_whole,
)
from bounds import at_least, at_most, in_words
from ext_support import Book, warnings


@pytest.mark.parametrize(
    ("value", "expected", "broken"),
    [
        ("5e-08", {"min": 0.0, "max": 1e-6}, False),
        ("0.002", {"min": 0.0, "max": 1e-6}, True),
        ("nan", {"max": 1.0}, True),
        ("50", {"equals": 50}, False),
        ("49", {"equals": 50}, True),
        ("'(5, 8)'", {"equals": "(5, 8)"}, False),
        ("not a number", {"min": 0}, True),
        ("'2044-07-12'", {"pattern": r"\d{4}-\d{2}-\d{2}"}, False),
        ("'2044-7-12'", {"pattern": r"\d{4}-\d{2}-\d{2}"}, True),
        ("'us'", {"pattern": "long|short|us|european"}, False),
        ("'usa'", {"pattern": "long|short|us|european"}, True),  # the whole text
        # a claim that names the instances one run gave is no longer a claim
        ("'us'", {"one_of": ["us", "long"]}, True),
        ("3", {"min": 0, "maxi": 5}, True),
    ],
)
def test_checker_tells_broken_claims_apart(value: str, expected: dict, broken: bool) -> None:
    assert (problems(value, expected) is not None) is broken


@pytest.mark.parametrize(
    ("value", "spec", "low", "high"),
    [
        (0.2479, ".2f", 0.24, 0.25),
        (0.112, ".2f", 0.11, 0.12),
        (98.47, ".1f", 98.4, 98.5),
        (7.450580596923828e-08, ".2e", 7.45e-08, 7.46e-08),
        (0.248, ".3f", 0.248, 0.248),
        (0.0, ".1e", 0.0, 0.0),
        (35332.5, ",.0f", 35332.0, 35333.0),
    ],
)
def test_bounds_round_the_safe_way_and_print_exactly(
    value: float, spec: str, low: float, high: float
) -> None:
    assert (at_least(value, spec), at_most(value, spec)) == (low, high)
    for bound in (low, high):
        assert float(format(bound, spec).replace(",", "")) == bound


def test_a_count_reads_as_a_word_only_when_it_is_zero() -> None:
    assert [in_words(count) for count in (0, 1, 12)] == ["none", "1", "12"]


@pytest.mark.parametrize(
    ("sentence", "bound"),
    [
        ("They differ by at most {glue:text}`x:.2f`.", "at most"),
        ("Every weight lies within {glue:text}`x:.2f` of 1/5.", "at most"),
        ("It keeps (up to {glue:text}`x:.1e`) its sum.", "at most"),
        ("Every seed scores at least {glue:text}`x:.1f` %.", "at least"),
        ("It is no more than {glue:text}`x:.1f`.", "at most"),
        ("The exponentials add up to {glue:text}`x:.3f`.", None),
        ("Its ratio never falls below {glue:text}`x:.3f`.", "at least"),
        ("The loss is not above {glue:text}`x:.3f`.", "at most"),
        ("The largest difference is {glue:text}`x:.1e`.", None),
    ],
)
def test_words_before_a_pasted_value_make_it_a_bound(sentence: str, bound: str | None) -> None:
    assert pasted_values(sentence)[0][3] == bound


def test_the_second_value_of_between_is_an_upper_bound() -> None:
    found = pasted_values("Weights lie between {glue:text}`a:.3f` and\n{glue:text}`b:.3f`.")
    assert [(key, line, bound) for key, _, line, bound in found] == [
        ("a", 1, "at least"),
        ("b", 2, "at most"),
    ]


@pytest.mark.parametrize(
    ("wanted", "fires"),
    [
        ({"a": {"equals": 1088}, "b": {"equals": 1088}}, True),  # equal by construction
        ({"a": {"equals": 1088}, "b": {"equals": 1089}}, False),
        ({"a": {"min": 0, "max": 10}, "b": {"min": 0, "max": 10}}, False),  # may happen to match
        ({"a": {"equals": 64}, "b": {"min": 60, "max": 70}}, False),  # a timing beside a count
    ],
)
def test_a_value_said_twice_counts_only_when_it_cannot_differ(wanted: dict, fires: bool) -> None:
    sentence = "Both hold {glue:text}`a` for ours and {glue:text}`b` for theirs."
    assert bool(repeated_values(sentence, wanted)) is fires
    same_key = "It is {glue:text}`a` for ours and\n{glue:text}`a` for theirs."
    assert repeated_values(same_key, {}) == [(1, "a", "a")]
    far = "It is {glue:text}`a` for ours, and after a long aside about it, {glue:text}`a`."
    assert repeated_values(far, {}) == []


@pytest.mark.parametrize(
    ("value", "spec", "whole"),
    [
        ("0.9998", ".3f", "1.000"),
        ("0.9998", ".4f", None),
        ("1.0", ".3f", None),
        ("0.0004", ".2f", "0.00"),
        ("0.99996", ".1%", "100.0%"),
        ("99.996", ".2f", "100.00"),
        ("0.5", ".3f", None),
    ],
)
def test_a_round_figure_must_be_exact(value: str, spec: str, whole: str | None) -> None:
    assert rounds_to_whole(value, format(float(value), spec), spec) == whole


def test_a_bound_on_a_printed_variable_is_refused() -> None:
    page = (
        "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n---\n"  # lines 1-5
        "# Bounds\n\n"  # 6-7
        "```{code-cell} ipython3\n"  # 8
        'print(f"largest difference: {max_diff:.2e}")\n'  # 9
        "```\n\n"  # 10-11
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\n"  # 12-14
        "gap = 0.5\n"  # 15
        'glue("max_diff", at_most(max_diff, ".2e"), display=False)\n'  # 16
        'glue("gap", at_least(gap, ".2f"), display=False)\n'
        'glue("printed_later", at_most(max_diff_in_words, ".2e"), display=False)\n'
        "```\n"
    )
    assert bounds_beside_printouts(page) == [(16, "max_diff", "max_diff")]


def test_format_problems_name_the_line_of_a_bound_rounded_the_wrong_way() -> None:
    source = (
        "# Bounds\n\n"
        "Any two heads differ by at least {glue:text}`gap:.2f`, and every run\n"
        "keeps at least {glue:text}`share:.2f` of it.\n"
    )
    glued = {"gap": "0.248", "share": str(at_least(0.2479, ".2f"))}
    wanted = {"gap": {"max": 1.0}, "share": {"bound": "at least"}}
    assert format_problems(source, glued, wanted) == [
        (
            3,
            "'gap' follows words that make it a bound (at least); its expectation must "
            "say bound = 'at least' (it says None)",
        ),
        (
            3,
            "'gap' is a bound printed as 0.25 but glued as 0.248: glue "
            "bounds.at_least(value, '.2f') so the rounding keeps it true",
        ),
    ]


def test_a_bound_printed_with_thousands_separators_is_read_as_its_number() -> None:
    source = "The wave is at most {glue:text}`wave:,.0f` positions long.\n"
    wanted = {"wave": {"bound": "at most"}}
    assert format_problems(source, {"wave": str(at_most(35332.5, ",.0f"))}, wanted) == []
    assert format_problems(source, {"wave": "35332.5"}, wanted) == [
        (
            1,
            "'wave' is a bound printed as 35,332 but glued as 35332.5: glue "
            "bounds.at_most(value, ',.0f') so the rounding keeps it true",
        )
    ]


def test_format_problems_refuse_one_value_in_two_formats() -> None:
    source = "The width is {glue:text}`width:.2f` here;\nthe table says {glue:text}`width:.3f`.\n"
    assert format_problems(source, {"width": "3.14159"}, {"width": {"max": 4.0}}) == [
        (
            2,
            "'width' is pasted as '.3f' here and as '.2f' before: "
            "a quantity shown twice is shown one way",
        )
    ]


def test_a_difference_that_may_be_zero_is_not_pasted_in_e_notation() -> None:
    source = "The outputs differ by {glue:text}`gap:.2e`.\n"
    # 0.00e+00 on the machine where both sides round alike
    (found,) = format_problems(source, {"gap": "6.3e-08"}, {"gap": {"min": 0.0, "max": 1e-6}})
    assert found[0] == 1
    assert "admits 0" in found[1]
    # every arithmetic tried gives a non-zero difference, and the claim says so
    assert format_problems(source, {"gap": "6.3e-08"}, {"gap": {"min": 1e-12, "max": 1e-6}}) == []
    # a value pinned everywhere, or printed as a fixed-point number, is not such a template
    assert format_problems(source, {"gap": "0.0"}, {"gap": {"equals": 0.0}}) == []
    fixed = "The loss is {glue:text}`gap:.3f`.\n"
    assert format_problems(fixed, {"gap": "0.5"}, {"gap": {"min": 0.0, "max": 1.0}}) == []


CLAIMS = """\
[answer]
what = "the answer"
equals = 42

[ratio]
what = "the ratio"
min = 0.0
max = 1.0

[never]
what = "a value the page forgot"
max = 1.0
"""


def test_a_build_reports_each_broken_claim_on_its_page(book: Book) -> None:
    app = book(
        "claims",
        {"index.md": "# Claims\n\nThe prose pastes nothing here.\n", "claims/index.toml": CLAIMS},
        build=False,
    )
    # What MyST-NB writes for a page that glued values, beside the HTML output.
    glue = app.outdir.parent / "jupyter_execute" / "index.glue.json"
    glue.parent.mkdir(parents=True)
    values = {"answer": "41", "ratio": "np.float64(0.5)", "stray": "3"}
    glue.write_text(
        json.dumps({key: {"data": {"text/plain": text}} for key, text in values.items()}),
        encoding="utf-8",
    )
    app.build()
    lines = [line.split("index.md: ", 1)[-1] for line in warnings(app).splitlines()]
    assert lines == [
        "WARNING: claims: 'stray' is glued into the prose but claims/index.toml has no "
        "expectation [stray] for it [claims]",
        "WARNING: claims: the answer ('answer') is 41, expected 42 [claims]",
        "WARNING: claims: a value the page forgot ('never') is expected by "
        "claims/index.toml but the page never glued it [claims]",
    ]
