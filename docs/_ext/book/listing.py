"""A lesson's listing of the package's own source, and the names a listing leaves free.

**Listing.** Show the computation of a ``lessons_code`` function or class, not its paperwork.

A lesson page shows package code with::

    ```{listing} lessons_code.positional.positional_encoding
    :caption: optional caption
    ```

The listing is the object's own source lines, byte for byte (only their common
indentation removed), found with :mod:`ast` rather than by searching for text,
so that editing a comment or a docstring can never break a page. Left out:

* the docstring of the function, of the class and of each method;
* the input checks: a bare call of a ``check_*``/``_check*`` helper, a
  re-binding ``x = check_tensor(x, ...)`` of an argument to its checked value,
  an ``if ...: raise ...`` and a loop whose body is only such checks.

A listing that still calls a check after that (say ``y = check_int(x, ...)``,
whose result the shown code needs) is an error that names the line: the
listing is what a reader types, so it must run without the package's
private helpers.

What remains is the signature and the lines that compute. Private helpers
(``_name``) of a class are kept: they are part of how it computes.

On a lesson page, every name a listing reads from outside itself must be
defined by a cell the reader sees (an import, an assignment, a definition)
or by another listing of the page: the reader's notebook runs the listing
as a cell, so a listing that calls a helper the page never imports is an
error naming the page's line, here, rather than a failing notebook later.

**Free names.** The names a piece of Python reads from outside itself (standard library only).

The ``listing`` directive asks it of what a page shows, at build time; the
reader's-notebook test asks it again inside the reader's kernel, where only
the standard library can be relied on.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import symtable
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from .pages import is_lesson_text, myst_directives, read_page

if TYPE_CHECKING:
    pass


# -- listing ---------------------------------------------------------------

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _is_check_call(node: ast.AST | None) -> TypeGuard[ast.Call]:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.startswith(("check_", "_check"))


def _is_check(statement: ast.stmt) -> bool:
    """Whether ``statement`` only validates input (see the module docstring)."""
    if isinstance(statement, ast.Expr):
        return _is_check_call(statement.value)
    if isinstance(statement, ast.Assign) and _is_check_call(statement.value):
        call = statement.value
        targets = statement.targets
        return (
            len(targets) == 1
            and isinstance(targets[0], ast.Name)
            and bool(call.args)
            and isinstance(call.args[0], ast.Name)
            and call.args[0].id == targets[0].id
        )
    if isinstance(statement, ast.If):
        return not statement.orelse and (
            isinstance(statement.body[-1], ast.Raise) or all(map(_is_check, statement.body))
        )
    if isinstance(statement, ast.For):
        # A loop over arguments that checks each one (it may name the checked value).
        return not statement.orelse and all(
            _is_check(s) or (isinstance(s, ast.Assign) and _is_check_call(s.value))
            for s in statement.body
        )
    if isinstance(statement, ast.Try):
        # try: <compute something only a check needs> except ...: raise ...
        return bool(statement.handlers) and all(
            isinstance(handler.body[-1], ast.Raise) for handler in statement.handlers
        )
    return False


def _has_docstring(body: list[ast.stmt]) -> bool:
    first = body[0]
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


def _without_edge_blanks(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _first_line(node: ast.stmt) -> int:
    """The first source line of ``node``, its decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _render(node: _Definition, source: list[str]) -> list[str]:
    """The lines of ``node`` that a listing shows (``source``: the file's lines)."""
    body = node.body
    header = _without_edge_blanks(source[_first_line(node) - 1 : _first_line(body[0]) - 1])
    # A body on the header line (``def f(): return 1``) has no header of its own.
    lines = header or [source[node.lineno - 1]]
    if _has_docstring(body):
        previous_end, statements = body[0].end_lineno or body[0].lineno, body[1:]
    else:
        previous_end, statements = _first_line(body[0]) - 1, body
    shown_any = False
    for statement in statements:
        start = _first_line(statement)
        gap = source[previous_end : start - 1]  # comments and blank lines before it
        previous_end = statement.end_lineno or statement.lineno
        if _is_check(statement):
            continue
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            code = _render(statement, source)
        else:
            code = source[start - 1 : previous_end]
        lines = [*lines, *_trim_gap(gap, first=not shown_any), *code]
        shown_any = True
    return lines


def _trim_gap(gap: list[str], *, first: bool) -> list[str]:
    """The comment and blank lines before a shown statement; none left dangling at the top."""
    if first:
        return _without_edge_blanks(gap) if any(g.strip() for g in gap) else []
    # Keep at most one blank line where the source had blank lines.
    kept: list[str] = []
    for line in gap:
        if line.strip() or not kept or kept[-1].strip():
            kept.append(line)
    return kept


def find_definition(qualname: str) -> tuple[Path, _Definition]:
    """The file and the ast node of ``package.module.Object[.member]``."""
    parts = qualname.split(".")
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            spec = importlib.util.find_spec(module_name)
        except ModuleNotFoundError:
            continue
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        path = Path(spec.origin)
        scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
        node: _Definition | None = None
        for name in parts[split:]:
            node = next(
                (
                    n
                    for n in scope
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    and n.name == name
                ),
                None,
            )
            if node is None:
                break
            scope = node.body
        if node is not None:
            return path, node
    raise ValueError(f"listing: no function or class {qualname!r} found")


def listing_lines(qualname: str) -> tuple[Path, list[str]]:
    """The source file of ``qualname`` and the dedented lines its listing shows."""
    path, node = find_definition(qualname)
    source = path.read_text(encoding="utf-8").splitlines()
    shown = textwrap.dedent("\n".join(_render(node, source))).splitlines()
    # What a reader types must not call the package's private checks: a check
    # the filter above does not recognise fails the build, here.
    for call in ast.walk(ast.parse("\n".join(shown))):
        if _is_check_call(call):
            raise ValueError(
                f"listing: {qualname} still shows a check of its arguments, line "
                f"{call.lineno} of the listing: {shown[call.lineno - 1].strip()!r}; "
                "check by rebinding the argument (x = check_...(x, ...)) or in a "
                "statement of its own"
            )
    return path, shown


def listed_objects(page_text: str) -> list[str]:
    """The dotted names of the objects a MyST page's ``{listing}`` directives show, in order."""
    return [directive.argument.split()[0] for directive in myst_directives(page_text, "listing")]


def bound_names(code: str) -> set[str]:
    """The names a cell's ``code`` binds at the top level (imports, assignments, definitions)."""
    # IPython's magics and shell escapes are not Python.
    python = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines()
    )
    try:
        table = symtable.symtable(python, "<cell>", "exec")
    except SyntaxError:
        return set()
    return {
        symbol.get_name()
        for symbol in table.get_symbols()
        if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()
    }


def unbound_names(page_text: str, code: str) -> list[str]:
    """The names ``code`` reads that no shown cell or listing of the lesson page binds."""
    bound = {name.rsplit(".", 1)[-1] for name in listed_objects(page_text)}
    for cell in read_page(page_text).code_cells:
        if cell.shown:
            bound |= bound_names(cell.source)
    return sorted(read_names(code) - bound)


class Listing(SphinxDirective):
    """``{listing} module.object``: the object's computation as a code block."""

    required_arguments = 1
    option_spec = {"caption": directives.unchanged}  # noqa: RUF012

    def run(self) -> list[nodes.Node]:
        try:
            path, lines = listing_lines(self.arguments[0])
        except ValueError as error:
            raise self.error(str(error)) from error
        self.env.note_dependency(str(path))
        code = "\n".join(lines)
        page = Path(self.env.doc2path(self.env.docname)).read_text(encoding="utf-8")
        if is_lesson_text(page):
            missing = unbound_names(page, code)
            if missing:
                raise self.error(
                    f"listing: {self.arguments[0]} reads {', '.join(missing)}, which no "
                    "cell the reader sees defines (nor another listing of the page): "
                    "import it in a visible cell, or show code that does not need it"
                )
        block = nodes.literal_block(code, code, language="python")
        block["classes"].append("lesson-listing")
        self.set_source_info(block)
        caption = self.options.get("caption")
        if not caption:
            return [block]
        container = nodes.container("", literal_block=True, classes=["literal-block-wrapper"])
        parsed, _ = self.state.inline_text(caption, self.lineno)
        container += nodes.caption(caption, "", *parsed)
        container += block
        self.set_source_info(container)
        return [container]


# -- free_names ------------------------------------------------------------


def read_names(code: str) -> set[str]:
    """The names ``code`` reads from outside itself (globals it does not bind)."""
    free: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        for symbol in table.get_symbols():
            outer = table.get_type() == "module" and not (
                symbol.is_assigned() or symbol.is_imported()
            )
            if symbol.is_referenced() and (symbol.is_global() or outer):
                free.add(symbol.get_name())
        for child in table.get_children():
            walk(child)

    walk(symtable.symtable(code, "<listing>", "exec"))
    return {name for name in free if not hasattr(builtins, name)}
