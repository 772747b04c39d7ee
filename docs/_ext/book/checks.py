r"""The build's checks of what a page says: its glued numbers (claims) and its prose.

**Claims.** Check every number the prose states against the range its page's claims file allows.

Pages glue their measured numbers into the prose with MyST-NB's ``glue``. This
extension reads the glued values of every page after the pages have executed
and compares each one with its expectation in ``docs/claims/<page>.toml``
(one file per page, named after the page's document name):

.. code-block:: toml

   # docs/claims/positional_encoding.toml
   [pe_max_diff]
   what = "largest |torch - numpy| over the 50 x 32 encoding"
   min = 0.0
   max = 1e-6

An expectation is a range (``min``, ``max``), one value (``equals``), or, for a
text picked by a rule (the least sure output, the worst format), what the rule
guarantees of it as a regular expression the whole text matches (``pattern =
"\d{4}-\d{2}-\d{2}"``). Which date or format the rule picks can differ with
the reader's arithmetic, so no claim names it: a claim must hold on any
machine. A key outside these (``one_of``, a typo) is reported.

A value outside its range, a glued value with no expectation, or an expectation
whose value was never glued is reported as a warning on the page (and the build
treats warnings as errors), so the text can never silently contradict the code.

Six more rules keep the printed digits honest:

* **A bound is rounded the safe way.** A value the prose pastes after "at
  least", "at most", "within", "fewer than", ... is a bound, and rounding it
  to the nearest digit can break it (0.248 printed as "at least 0.25"). Its
  expectation says which bound it is, ``bound = "at least"`` or ``"at most"``,
  matching the words before it; the page glues it already rounded, with
  :func:`at_least` or :func:`at_most` and the format the prose prints it with,
  so that the format prints the glued value exactly.
* **One value, one format.** A page pastes each glued value with one format,
  so that a quantity shown twice reads the same twice.
* **A round figure is exact.** A value that prints as 0, 1 or 100 % is read as
  exactly that ("1.000 of its weight" is all of it); one that only rounds to it
  is printed with enough digits, or claimed and worded as a bound.
* **A printed value is pasted as printed.** A bound glued from a variable
  that a code cell of the page prints (``at_most(max_diff, ...)`` beside
  ``print(f"{max_diff:.2e}")``) would differ from the printout in its last
  digit; the prose pastes the value itself.
* **A value that may be zero is not pasted in e-notation.** A difference
  between two computations that round in another order is exactly 0 on one
  processor and 1e-8 on another: a value pasted as ``.2e`` whose claim admits
  0 would read "0.00e+00" on some reader's machine. The sentence says "equal
  to rounding" instead, or the claim's ``min`` says that every arithmetic
  tried gives a non-zero value.
* **A value equal by construction is said once.** The same value pasted twice
  in one clause, joined by "and" ("1088 for ours and 1088 for PyTorch's"),
  reads as a template; the prose says "both". Only values that cannot differ
  count (the same key, or keys claimed ``equals`` the same number), so two
  measurements that happen to round alike never trip it.

**Prose checks.** Fail the build on the kinds of text defect a reader has met in the book.

Each check below guards one kind of defect, everywhere, rather than one
sentence that once had it. A finding is a warning naming the page and line,
and the build turns warnings into errors.

* **Text lost to the markup.** MyST reads a line that starts with ``%`` as a
  comment, even in the middle of a paragraph, and drops it: a sentence wrapped
  so that a line begins with "% of ..." loses its clause without a trace. The
  sources are parsed with MyST's own Markdown parser and a comment that
  continues a paragraph is reported.
* **Math in headings.** A heading's text becomes a PDF bookmark, a search
  result and a browser tab title, where a formula turns into spaced letters.
  Headings are plain words (Unicode such as T² is fine).
* **Template sentences that read wrong for their value.** A zero written as
  ``0.00e+00`` or pasted after "at most", a count of one followed by a plural
  ("1 threads") come from a sentence written for other values. The page says
  what the value means instead ("exactly equal", "one"), and the value stays
  glued and claimed.
* **One way to write a percentage.** A page writes "50%" or "50 %"
  throughout, not both.

Bounds, round figures that read as exact, a value pasted twice in one clause
and the format of each glued value are checked by :mod:`claims`, which knows
the glued values and their expectations.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util import logging

from .config import book_config
from .mathml import Unreadable, symbols
from .mystnb import executed_folder, format_glued, glue_file
from .pages import (
    Role,
    first_cell_formulas,
    is_lesson_text,
    myst_roles,
    myst_tokens,
    read_page,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sphinx.application import Sphinx


# -- claims ----------------------------------------------------------------

logger = logging.getLogger(__name__)


def load_expectations(folder: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Read ``folder/*.toml``: page -> glue key -> {what, min, max, equals, pattern, bound}.

    A page in a subfolder, ``a/b``, has its claims in ``folder/a.b.toml``.
    """
    expectations = {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as handle:
            expectations[path.stem.replace(".", "/")] = tomllib.load(handle)
    return expectations


def glued_values(folder: Path, docname: str) -> dict[str, str] | None:
    """The ``text/plain`` form of each value page ``docname`` glued, or None."""
    path = glue_file(folder, docname)
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return {key: output["data"].get("text/plain", "") for key, output in data.items()}


_NUMPY_SCALAR = re.compile(r"^np\.\w+\((.*)\)$")


def _equal(text: str, number: float) -> bool:
    """Whether ``text`` reads as ``number``."""
    try:
        return float(text) == float(number)
    except ValueError:
        return False


#: What an expectation may say (see the module's docstring).
EXPECTATION_KEYS = {"what", "min", "max", "equals", "pattern", "bound"}


def problems(value_text: str, expected: dict[str, Any]) -> str | None:
    """Why ``value_text`` breaks ``expected``, or None when it holds."""
    scalar = _NUMPY_SCALAR.match(value_text.strip())
    if scalar:  # the repr of a NumPy scalar, e.g. np.float64(0.5)
        value_text = scalar.group(1)
    unknown = sorted(set(expected) - EXPECTATION_KEYS)
    if unknown:
        return f"the claim has keys {unknown} outside {sorted(EXPECTATION_KEYS)}"
    if "pattern" in expected:
        # a text picked by a rule: what the rule guarantees, never which one
        text = value_text.strip("'\"")
        if re.fullmatch(expected["pattern"], text):
            return None
        return f"expected a text matching {expected['pattern']!r}"
    if "equals" in expected:
        wanted = expected["equals"]
        if isinstance(wanted, str):
            return None if value_text.strip("'\"") == wanted else f"expected {wanted!r}"
        try:
            return None if float(value_text) == float(wanted) else f"expected {wanted}"
        except ValueError:
            return f"expected the number {wanted}"
    try:
        value = float(value_text)
    except ValueError:
        return "expected a number"
    if math.isnan(value):
        return "the value is NaN"
    low, high = expected.get("min", -math.inf), expected.get("max", math.inf)
    if not low <= value <= high:
        return f"expected a value in [{low}, {high}]"
    return None


# -- bounds and formats ----------------------------------------------------------


# Words before a pasted value that make it a bound, longest first.
BOUND_WORDS = {
    "no more than": "at most",
    "no fewer than": "at least",
    "no less than": "at least",
    "at most": "at most",
    "within": "at most",
    "up to": "at most",
    "below": "at most",
    "less than": "at most",
    "fewer than": "at most",
    "smaller than": "at most",
    "at least": "at least",
    "more than": "at least",
    "above": "at least",
    "greater than": "at least",
    "larger than": "at least",
    "between": "at least",
    "exceeds": "at least",
    "exceed": "at least",
}

# Comparisons that a "never", "not" or "no" just before them turns round.
NEGATABLE = {
    "below",
    "above",
    "less than",
    "more than",
    "fewer than",
    "greater than",
    "exceeds",
    "exceed",
}


def _glue_roles(source: str) -> list[tuple[str, str, Role]]:
    """(key, format, role) for every ``{glue:text}`` role of the MyST page ``source``."""
    found = []
    for role in myst_roles(source, "glue:text"):
        key, _, spec = role.content.partition(":")
        found.append((key.strip(), spec, role))
    return found


def pasted_values(source: str) -> list[tuple[str, str, int, str | None]]:
    """(key, format, line, bound) for every ``{glue:text}`` role in ``source``.

    ``bound`` is what the words just before the role make of the value ("at
    least", "at most") or None; in "between a and b", b is "at most".
    """
    found = []
    for key, spec, role in _glue_roles(source):
        before = re.sub(r"[*_`]", "", role.before)
        before = re.sub(r"[(\[{]", " ", before)
        before = " ".join(before.lower().split())
        phrase = next((words for words in BOUND_WORDS if before.endswith(f" {words}")), None)
        bound = BOUND_WORDS[phrase] if phrase else None
        if re.search(r"\b(?:adds?|sums?|amounts?) up to$", before):
            bound = None  # a total, not a bound
        elif phrase in NEGATABLE and re.search(
            rf"\b(?:never|not|no)(?: \w+){{0,2}} {re.escape(phrase)}$", before
        ):
            # "never falls below x": x bounds from the other side
            bound = "at least" if bound == "at most" else "at most"
        if bound is None and re.search(r"\bbetween n(?: %)? and$", before):
            bound = "at most"
        found.append((key, spec, role.line, bound))
    return found


# Two pasted values, at most this many characters apart and joined by "and",
# that always print the same: "1088 for ours and 1088 for PyTorch's" is "both 1088".
SAME_VALUE_GAP = 30


def repeated_values(source: str, wanted: dict[str, dict[str, Any]]) -> list[tuple[int, str, str]]:
    """(line, first key, second key) for a value pasted twice in one clause.

    Only values that are equal by construction count: the same key twice, or
    two keys whose expectations pin them to one exact value (``equals``). Two
    measurements that happen to round alike (two timings) never do, so the
    rule cannot fire by chance.
    """
    found = []
    for (a, _, first), (b, _, second) in itertools.pairwise(_glue_roles(source)):
        if first.paragraph != second.paragraph:
            continue
        pinned = "equals" in wanted.get(a, {}) and "equals" in wanted.get(b, {})
        if a != b and not (pinned and wanted[a]["equals"] == wanted[b]["equals"]):
            continue
        between = " ".join(second.before[len(first.before) + len(" N ") :].split())
        if len(between) <= SAME_VALUE_GAP and re.search(r"\band\b", between):
            found.append((first.line, a, b))
    return found


def _bound_glues(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, key, variable) of each ``glue("key", at_most(variable, ...))`` in ``tree``."""
    found = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        if call.func.id != "glue" or len(call.args) < 2:
            continue
        key, value = call.args[:2]
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in {"at_most", "at_least"}
            and value.args
            and isinstance(value.args[0], ast.Name)
        ):
            found.append((call.lineno, key.value, value.args[0].id))
    return found


def _formatted_names(tree: ast.AST) -> set[str]:
    """The variables that an f-string of ``tree`` formats with a spec (``{max_diff:.2e}``)."""
    return {
        part.value.id
        for part in ast.walk(tree)
        if isinstance(part, ast.FormattedValue)
        and part.format_spec is not None
        and isinstance(part.value, ast.Name)
    }


def bounds_beside_printouts(source: str) -> list[tuple[int, str, str]]:
    """(line, key, variable) for a bound glued from a variable the page prints.

    A code cell that prints ``max_diff`` as 7.45e-08 and prose that pastes
    ``at_most(max_diff, ".2e")`` as "at most 7.46e-08" disagree in the last
    digit on one screen. A value the reader sees printed is pasted as printed
    (the same format, no bound). ``source`` is a lesson page; its code cells
    are read by Python's own parser (a cell that does not parse is skipped:
    the build reports it when it runs).
    """
    glues: list[tuple[int, str, str]] = []
    printed: set[str] = set()
    if not is_lesson_text(source):
        return []
    for cell in read_page(source).code_cells:
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        glues += [(cell.body_line + line - 1, key, name) for line, key, name in _bound_glues(tree)]
        printed |= _formatted_names(tree)
    return [found for found in glues if found[2] in printed]


def rounds_to_whole(value: str, shown: str, spec: str) -> str | None:
    """``shown`` if rounding made ``value`` print as 0, 1 or 100 % without being it.

    "1.000 of its weight" for 0.9998 says *all* of it, and "0.00" for 0.004
    says *none*: a printed round figure is read as exact.
    """
    try:
        number = float(shown.strip().rstrip("%").strip())
        exact = float(value) * (100 if spec.endswith("%") else 1)
    except ValueError:
        return None
    whole = (0.0, 100.0) if spec.endswith("%") else (0.0, 1.0, 100.0)
    return shown if number in whole and exact != number else None


def format_problems(
    source: str, glued: dict[str, str], wanted: dict[str, dict[str, Any]]
) -> list[tuple[int, str]]:
    """(line, why) for every bound and format rule that ``source`` breaks."""
    found = [
        (
            line,
            f"{a!r} and {b!r} print the same value in one clause ('... and ...'): "
            "say it once ('both ...')",
        )
        for line, a, b in repeated_values(source, wanted)
    ]
    found += [
        (
            line,
            f"{key!r} is glued as a bound on {variable!r}, which a cell of the page "
            "prints: paste it as printed, without a bound, so the two agree",
        )
        for line, key, variable in bounds_beside_printouts(source)
    ]
    formats: dict[str, str] = {}
    for key, spec, line, bound in pasted_values(source):
        if formats.setdefault(key, spec) != spec:
            found.append(
                (
                    line,
                    f"{key!r} is pasted as {spec!r} here and as {formats[key]!r} before: "
                    "a quantity shown twice is shown one way",
                )
            )
        declared = wanted.get(key, {}).get("bound")
        if bound is not None and declared != bound:
            found.append(
                (
                    line,
                    f"{key!r} follows words that make it a bound ({bound}); its "
                    f"expectation must say bound = {bound!r} (it says {declared!r})",
                )
            )
        if not (bound or declared) and key in glued and spec:
            whole = rounds_to_whole(glued[key], format_glued(glued[key], spec), spec)
            if whole is not None:
                found.append(
                    (
                        line,
                        f"{key!r} prints as {whole}, which reads as exact, but is "
                        f"{glued[key]}: print enough digits to show it is not, or claim it "
                        "as a bound and say so",
                    )
                )
        if (bound or declared) and key in glued and spec:
            shown = format_glued(glued[key], spec)
            try:
                exact = float(shown.rstrip("%").replace(",", "")) == float(glued[key])
            except ValueError:
                exact = False
            if not exact:
                helper = "at_least" if (bound or declared) == "at least" else "at_most"
                found.append(
                    (
                        line,
                        f"{key!r} is a bound printed as {shown} but glued as {glued[key]}: "
                        f"glue bounds.{helper}(value, {spec!r}) so the rounding keeps it true",
                    )
                )
        if may_print_zero(spec, wanted.get(key, {})):
            found.append(
                (
                    line,
                    f"{key!r} is pasted as {spec!r} and its claim admits 0: on another "
                    "arithmetic it prints 0.00e+00 in the sentence. Say 'equal to rounding' "
                    "and leave the value to the printout, or, where every arithmetic tried "
                    "gives a non-zero value, claim a min above 0",
                )
            )
    return found


def may_print_zero(spec: str, expected: dict[str, Any]) -> bool:
    """Whether a value pasted with ``spec`` (e-notation) may be an exact zero.

    A difference of two computations that round in another order is 0 on one
    processor and 1e-8 on the next; a sentence written for the one reads
    "0.00e+00" on the other. A claim that pins the value (``equals``) says
    it is the same everywhere.
    """
    if not spec.lower().endswith("e") or "equals" in expected:
        return False
    return bool(expected.get("min", -math.inf) <= 0 <= expected.get("max", math.inf))


def check_claims(app: Sphinx, exception: BaseException | None) -> None:
    """Compare every page's glued values with ``claims/*.toml``, on every build."""
    if exception is not None:
        return
    env = app.env
    spec_dir = Path(app.srcdir) / book_config(app).claims
    expectations = load_expectations(spec_dir)
    folder = executed_folder(Path(app.outdir))
    for docname in sorted(env.found_docs):
        glued = glued_values(folder, docname) or {}
        wanted = expectations.get(docname, {})
        spec_name = f"{book_config(app).claims}/{docname.replace('/', '.')}.toml"
        for key in sorted(set(glued) - set(wanted)):
            logger.warning(
                f"claims: {key!r} is glued into the prose but {spec_name} has no "
                f"expectation [{key}] for it",
                location=docname,
                type="claims",
            )
        for key, expected in sorted(wanted.items()):
            what = expected.get("what", key)
            if key not in glued:
                logger.warning(
                    f"claims: {what} ({key!r}) is expected by {spec_name} "
                    "but the page never glued it",
                    location=docname,
                    type="claims",
                )
                continue
            reason = problems(glued[key], expected)
            if reason:
                logger.warning(
                    f"claims: {what} ({key!r}) is {glued[key]}, {reason}",
                    location=docname,
                    type="claims",
                )
        source = Path(env.doc2path(docname))
        if wanted and source.suffix == ".md":
            text = source.read_text(encoding="utf-8")
            for line, why in format_problems(text, glued, wanted):
                logger.warning(f"claims: {why}", location=(docname, line), type="claims")


# -- prose_checks ----------------------------------------------------------

logger = logging.getLogger(__name__)

# -- text lost to the markup ----------------------------------------------------


def comments_inside_paragraphs(text: str) -> list[int]:
    """1-based lines of ``%`` comments that continue a paragraph of ``text``.

    The text is tokenised by MyST's own parser, so code blocks, directives and
    comments that stand on their own (after a blank line) are left alone.
    """
    lines = []
    paragraph_end = -1
    for token in myst_tokens(text):
        if token.type == "paragraph_open" and token.map:
            paragraph_end = token.map[1]
        elif token.type == "myst_line_comment" and token.map and token.map[0] == paragraph_end:
            lines.append(token.map[0] + 1)
    return lines


def check_comments(app: Sphinx, docname: str) -> None:
    """Report a comment line that would cut a paragraph of a Markdown page."""
    page = Path(app.env.doc2path(docname))
    if page.suffix != ".md":
        return
    for line in comments_inside_paragraphs(page.read_text(encoding="utf-8")):
        logger.warning(
            "a line of this paragraph starts with '%', which MyST reads as a comment "
            "and drops from the page; rewrap the paragraph",
            location=(docname, line),
            type="prose",
        )


# -- what the reader reads ------------------------------------------------------

# A zero in scientific notation ("0.00e+00") is always a template's output: an
# exact zero is written in words, or as 0.
ZERO_IN_E_NOTATION = re.compile(r"(?<![\d.])0\.0*e[+-]?0+\b")
# The count nouns of the book after the number one: "1 threads", "1 distinct total".
COUNT_NOUNS = (
    "blocks|characters|columns|configurations|cores|dates|epochs|errors|examples|formats|"
    "heads|layers|models|pairs|parameters|positions|rows|runs|seeds|sequences|steps|threads|"
    "times|tokens|totals|updates|values|words"
)
ONE_WITH_PLURAL = re.compile(
    rf"(?<![\d.,\-])\b1 (?:(?:distinct|other|more) \w+|(?:{COUNT_NOUNS}))\b"
)

_CODE = (nodes.literal_block, nodes.literal, nodes.math, nodes.math_block)


def _is_output(node: nodes.Node | None) -> bool:
    """Whether ``node`` lies in what a code cell or an example printed."""
    while node is not None:
        classes: list[str] = node.get("classes", []) if isinstance(node, nodes.Element) else []
        if "cell_output" in classes or any(c.startswith("sphx-glr-script-out") for c in classes):
            return True
        node = node.parent
    return False


def _in_code(node: nodes.Node) -> bool:
    """Whether ``node`` lies in code or math (its own node included)."""
    while node is not None:
        if isinstance(node, _CODE):
            return True
        node = node.parent
    return False


def rendered_text(doctree: nodes.Node) -> Iterator[tuple[nodes.Element, str, bool]]:
    """(block, its text, whether it is printed output) for every block of text.

    Prose, captions and table cells give their words without inline code and
    math; what a cell or an example printed gives all its text, a table it
    displayed (raw HTML) without the tags. Code a reader types is left out.
    """
    for block in doctree.findall(nodes.Element):
        output = _is_output(block)
        if isinstance(block, nodes.raw):  # a table a cell or an example displayed
            if "html" in block.get("format", ""):
                yield block, re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block.astext())), True
            continue
        if isinstance(block, nodes.literal_block):
            if output:
                yield block, re.sub(r"\s+", " ", block.astext()), True
            continue
        if not isinstance(block, nodes.TextElement) or isinstance(block, nodes.Inline):
            continue
        if _in_code(block):
            continue
        words = [t.astext() for t in block.findall(nodes.Text) if not _in_code(t)]
        yield block, re.sub(r"\s+", " ", "".join(words)), output


# A pasted whole number of five digits or more, written without separators
# (a year has four digits and is written bare).
LONG_BARE_NUMBER = re.compile(r"\d{5,}")


def template_sentences(doctree: nodes.Node) -> Iterator[tuple[nodes.Element, str]]:
    """(block, why) for every sentence that reads wrong for the value it got."""
    for block, text, output in rendered_text(doctree):
        for match in ONE_WITH_PLURAL.finditer(text):
            yield block, f"{match.group(0)!r}: write 'one' and the singular"
        if not output:
            for match in ZERO_IN_E_NOTATION.finditer(text):
                start = max(match.start() - 40, 0)
                yield (
                    block,
                    (
                        f"{text[start : match.end()]!r}: an exact zero is written in words "
                        "('exactly equal', 'no change')"
                    ),
                )
    for block in doctree.findall(nodes.paragraph):
        pasted = [n for n in block.findall(nodes.inline) if "pasted-text" in n["classes"]]
        for node in pasted:
            value = node.astext().strip()
            try:
                zero = float(value.rstrip("%").strip()) == 0
            except ValueError:
                zero = False
            if zero:
                yield block, f"pasted value {value!r} is zero: say what a zero means in words"
            if LONG_BARE_NUMBER.fullmatch(value):
                yield (
                    block,
                    f"pasted value {value!r} has no thousands separators: "
                    "glue it with a format such as `:,`",
                )


def math_in_titles(doctree: nodes.Node) -> Iterator[nodes.title]:
    """Headings that contain a formula."""
    for title in doctree.findall(nodes.title):
        if any(True for _ in title.findall(nodes.math)):
            yield title


# A percentage written "46.3 %" on one line of a page and "100.0%" on another.
PERCENT_SPACED = re.compile(r"\d(?:\u00a0| )%")
PERCENT_ATTACHED = re.compile(r"\d%")


def mixed_percent_styles(doctree: nodes.Node) -> Iterator[tuple[nodes.Element, str]]:
    """(block, why) where a page's prose writes percentages two ways.

    The style the page uses more often wins; each block written the other way
    is reported. Printed output is left alone: it is the code's, not the prose's.
    """
    spaced: list[nodes.Element] = []
    attached: list[nodes.Element] = []
    count = {"spaced": 0, "attached": 0}
    for block, text, output in rendered_text(doctree):
        if output:
            continue
        for name, pattern, found in (
            ("spaced", PERCENT_SPACED, spaced),
            ("attached", PERCENT_ATTACHED, attached),
        ):
            hits = len(pattern.findall(text))
            count[name] += hits
            if hits:
                found.append(block)
    if spaced and attached:
        fewer = count["spaced"] < count["attached"]
        odd, style = (spaced, "'50 %'") if fewer else (attached, "'50%'")
        usual = "'50%'" if style == "'50 %'" else "'50 %'"
        for block in odd:
            yield block, f"a percentage is written {style} here and {usual} elsewhere on the page"


def check_doctree(doctree: nodes.document, docname: str) -> None:
    """Report template sentences and math in headings on a page."""

    def where(node: nodes.Node) -> tuple[str, int | None]:
        return docname, node.line or None

    for block, why in [*template_sentences(doctree), *mixed_percent_styles(doctree)]:
        logger.warning(f"prose: {why}", location=where(block), type="prose")
    for title in math_in_titles(doctree):
        logger.warning(
            f"prose: the heading {title.astext()!r} contains math, which bookmarks, "
            "search results and tab titles show as loose letters; write it in words "
            "or Unicode",
            location=where(title),
            type="prose",
        )


# -- notation -------------------------------------------------------------------


def notation_table(text: str) -> tuple[dict[str, int], list[tuple[int, str]]]:
    """(symbol -> line, problems) of the notation page's tables.

    Symbols are :func:`~book.mathml.symbols`'s. Each row's first cell is one
    formula naming one symbol; a row that names none or several, and a symbol
    named by two rows, are problems.
    """
    table: dict[str, int] = {}
    found = []
    for line, formula in first_cell_formulas(text):
        try:
            named = symbols(formula)
        except Unreadable as exc:
            found.append((line, f"${formula}$ cannot be read: {exc}"))
            continue
        if len(named) != 1:
            found.append((line, f"a row must name one symbol; ${formula}$ names {sorted(named)}"))
            continue
        (symbol,) = named
        if symbol in table:
            found.append((line, f"{symbol!r} is defined twice (first on line {table[symbol]})"))
        table.setdefault(symbol, line)
    return table, found


def check_notation(doctree: nodes.document, docname: str, table: set[str], page: str) -> None:
    """Every symbol of every formula on a page is in the notation ``table``."""
    if docname.startswith(("api", "gen_modules")):
        return
    for formula in doctree.findall(lambda node: isinstance(node, (nodes.math, nodes.math_block))):
        try:
            missing = sorted(symbols(formula.astext()) - table)
        except Unreadable:
            continue  # the HTML writer reports it, with its line
        if missing:
            where = formula.line or None
            logger.warning(
                f"notation: {', '.join(missing)} in ${formula.astext()}$ "
                f"is not in the notation table ({page}.md)",
                location=(docname, where),
                type="prose",
            )


def check_every_page(app: Sphinx, exception: BaseException | None) -> None:
    """Run every check on every page, after every build (incremental ones too).

    A page that did not change is checked again, so a defect is reported on
    every build until it is fixed, not only on the build that wrote the page.
    """
    if exception is not None:
        return
    page = book_config(app).notation_page
    notation = Path(app.srcdir) / f"{page}.md"
    table: set[str] | None = None
    if notation.is_file():
        symbols, problems = notation_table(notation.read_text(encoding="utf-8"))
        table = set(symbols)
        for line, why in problems:
            logger.warning(f"notation: {why}", location=(page, line), type="prose")
    for docname in sorted(app.env.found_docs):
        check_comments(app, docname)
        doctree = app.env.get_doctree(docname)
        check_doctree(doctree, docname)
        if table is not None:
            check_notation(doctree, docname, table, page)
