"""Share the results of slow, deterministic experiments within the book's build.

The order-detection experiment and the depth study are run by a gallery
example *and* quoted by a lesson page. Both call the same package functions
with the same arguments, and on the CPU those functions are deterministic, so
computing them twice in one build buys nothing. While the book is built (and
only then), this module wraps the listed functions with a disk cache:

* the key is the function's name, its bound arguments (defaults applied), the
  PyTorch version and a digest of every source file of ``lessons_code`` -- an
  edit anywhere in the package makes every key new, so a stale result cannot
  be served;
* the store is ``docs/_build/.result_cache`` (one pickle per key), removed by
  deleting the build folder.

Gallery examples get the wrapper from sphinx-gallery's ``reset_modules`` hook
(``install_for_gallery``); lesson pages from a hidden first cell that
``docs/_ext/code_deps.py`` adds (``install``). A reader who downloads a script
or notebook runs the real functions: nothing of this ships with them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from code_deps import digest

DOCS = Path(__file__).resolve().parents[1]
CACHE_DIR = Path(os.environ.get("LESSONS_RESULT_CACHE", DOCS / "_build" / ".result_cache"))
PACKAGE_DIR = DOCS.parent / "lessons_code"

#: ``module:function`` names whose results are shared within a build.
CACHED = (
    "lessons_code.order_task:run_order_experiment",
    "lessons_code.depth:train_deep_stack",
    "lessons_code.depth:run_depth_grid",
)


def package_digest() -> str:
    """SHA-256 over every source file of ``lessons_code``."""
    return digest(sorted(PACKAGE_DIR.rglob("*.py")), PACKAGE_DIR)


def _key(function: Callable[..., Any], args: tuple, kwargs: dict, digest: str) -> str:
    import torch

    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    if "device" in bound.arguments:  # None and "cpu" name the same device
        bound.arguments["device"] = str(torch.device(bound.arguments["device"] or "cpu"))
    arguments = sorted((name, repr(value)) for name, value in bound.arguments.items())
    # Float results depend on the number of intra-op threads (reduction order).
    threads = torch.get_num_threads()
    text = repr(
        (function.__module__, function.__qualname__, arguments, torch.__version__, threads, digest)
    )
    return hashlib.sha256(text.encode()).hexdigest()


def cached(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its results stored under ``CACHE_DIR``."""
    if getattr(function, "__wrapped_by_result_cache__", False):
        return function
    digest = package_digest()

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        path = CACHE_DIR / f"{_key(function, args, kwargs, digest)}.pkl"
        if path.is_file():
            with path.open("rb") as handle:
                return pickle.load(handle)
        result = function(*args, **kwargs)
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        with partial.open("wb") as handle:
            pickle.dump(result, handle)
        partial.replace(path)  # atomic: parallel readers never see half a file
        return result

    wrapper.__wrapped_by_result_cache__ = True  # type: ignore[attr-defined]
    return wrapper


def install() -> None:
    """Wrap every function in ``CACHED`` in its module (idempotent)."""
    for name in CACHED:
        module_name, function_name = name.split(":")
        module = importlib.import_module(module_name)
        setattr(module, function_name, cached(getattr(module, function_name)))


def install_for_gallery(gallery_conf: dict, fname: str) -> None:
    """sphinx-gallery ``reset_modules`` hook: install before each example."""
    install()
