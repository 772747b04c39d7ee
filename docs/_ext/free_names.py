"""The names a piece of Python reads from outside itself (standard library only).

The ``listing`` directive asks it of what a page shows, at build time; the
reader's-notebook test asks it again inside the reader's kernel, where only
the standard library can be relied on.
"""

from __future__ import annotations

import builtins
import symtable

__all__ = ["read_names"]


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
