"""Every number glued into the prose holds what its claim in docs/claims/ expects of it.

The build already refuses a claim that fails (docs/_ext/claims.py); this test
reads the values the built site was made from and checks them once more, so a
regression shows up as a named test failure too.
"""

from __future__ import annotations

import sys

import pytest
from site_support import DOCS, BuildResult

sys.path.insert(0, str(DOCS / "_ext"))
from bounds import at_least, at_most
from claims import (
    bounds_beside_printouts,
    glued_values,
    load_expectations,
    pasted_values,
    problems,
    repeated_values,
    rounds_to_whole,
)

EXPECTATIONS = load_expectations(DOCS / "claims")
CASES = [
    (page, key, expected)
    for page, claims in sorted(EXPECTATIONS.items())
    for key, expected in sorted(claims.items())
]


@pytest.mark.parametrize(
    ("page", "key", "expected"), CASES, ids=[f"{page}.{key}" for page, key, _ in CASES]
)
def test_claim_holds(built_site: BuildResult, page: str, key: str, expected: dict) -> None:
    glued = glued_values(DOCS / "_build" / "jupyter_execute", page)
    assert glued is not None, f"{page} glued nothing"
    assert key in glued, f"{page} does not glue {key!r}"
    assert problems(glued[key], expected) is None, (expected.get("what"), glued[key])


def test_every_glued_value_has_an_expectation(built_site: BuildResult) -> None:
    folder = DOCS / "_build" / "jupyter_execute"
    unchecked = []
    for path in sorted(folder.rglob("*.glue.json")):
        docname = path.relative_to(folder).as_posix().removesuffix(".glue.json")
        for key in glued_values(folder, docname) or {}:
            if key not in EXPECTATIONS.get(docname, {}):
                unchecked.append(f"{docname}.{key}")
    assert unchecked == []


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
    ],
)
def test_bounds_round_the_safe_way_and_print_exactly(
    value: float, spec: str, low: float, high: float
) -> None:
    assert (at_least(value, spec), at_most(value, spec)) == (low, high)
    for bound in (low, high):
        assert float(format(bound, spec)) == bound


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
    cells = (
        'print(f"largest difference: {max_diff:.2e}")\n'
        'glue("max_diff", at_most(max_diff, ".2e"), display=False)\n'
        'glue("gap", at_least(gap, ".2f"), display=False)\n'
    )
    assert bounds_beside_printouts(cells) == [(2, "max_diff", "max_diff")]
