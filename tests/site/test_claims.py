"""Every number glued into the prose holds what its claim in docs/claims/ expects of it.

The build already refuses a claim that fails (docs/_ext/claims.py); this test
reads the values the built site was made from and checks them once more, so a
regression shows up as a named test failure too. The unit tests of the
checker's rules, which need no build, are in tests/ext/test_claims.py.
"""

from __future__ import annotations

import sys

import pytest
from site_support import DOCS, BuildResult

sys.path.insert(0, str(DOCS / "_ext"))
from claims import glued_values, load_expectations, problems

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
