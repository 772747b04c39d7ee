"""Keep the results of the slow experiments on disk, and reuse them.

Two functions of the package train many small models:
:func:`lessons_code.order_task.run_order_grid` and
:func:`lessons_code.depth.run_depth_grid`. The book shows each of them twice,
on a lesson page and in a gallery example, with the same arguments. Point the
environment variable ``LESSONS_CODE_RESULTS`` at a folder and each result is
computed once, saved there, and read back by every later call that would
compute exactly the same thing. The book's build sets it (``docs/conf.py``);
a reader may set it too, to rerun a notebook without training again.

Without the variable nothing is stored and nothing is read: the functions
train every time.

A saved result is used only when everything that decides it is the same:

* the function and its arguments, defaults filled in (``device=None`` and
  ``device="cpu"`` count as one);
* the source of every module of ``lessons_code`` (any edit to the package
  gives every call a new key, so an old result is never served);
* the PyTorch version, its number of intra-op threads and the processor
  code paths of its kernels and of MKL (``ARITHMETIC_VARS``): each can
  change the order of floating-point sums, hence the last bits of a result.

Processes that share the folder may make the same call at the same time (the
book's build runs gallery examples side by side): the first one computes the
result while the others wait for it, and then read it. The wait is a lock on a
file next to the result (``fcntl.flock``, or ``msvcrt.locking`` on Windows),
which the system releases if the computing process dies.

Results are stored with ``pickle``, so point the variable only at a folder
that you alone write to.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, ParamSpec, TypeVar, cast

import torch

__all__ = [
    "ARITHMETIC_VARS",
    "ENV_VAR",
    "package_digest",
    "result_key",
    "stored",
]

#: The environment variable naming the folder of saved results.
ENV_VAR = "LESSONS_CODE_RESULTS"

#: Environment variables that choose the code paths of the CPU's arithmetic
#: (PyTorch's kernels, MKL's matrix products); part of every result's key.
ARITHMETIC_VARS = ("ATEN_CPU_CAPABILITY", "MKL_CBWR")

P = ParamSpec("P")
R = TypeVar("R")


@functools.cache
def package_digest() -> str:
    """SHA-256 of the source of every module of ``lessons_code``.

    Returns
    -------
    str
        64 hexadecimal digits; they change whenever any module changes.

    Examples
    --------
    >>> len(package_digest())
    64
    """
    hasher = hashlib.sha256()
    folder = Path(__file__).resolve().parent
    for path in sorted(folder.glob("*.py")):
        hasher.update(
            path.name.encode() + b"\0" + path.read_bytes() + b"\0"
        )
    return hasher.hexdigest()


def result_key(
    function: Callable[..., object], *args: object, **kwargs: object
) -> str:
    """Return the name under which ``function(*args, **kwargs)``'s result is saved.

    Parameters
    ----------
    function
        The function called.
    *args, **kwargs
        Its arguments.

    Returns
    -------
    str
        64 hexadecimal digits, a digest of the function's name, its arguments
        with defaults filled in, the PyTorch version, thread count and CPU
        code path (``ARITHMETIC_VARS``) and :func:`package_digest`.

    Raises
    ------
    TypeError
        If the arguments do not fit the function's signature.

    Examples
    --------
    >>> def f(a, b=2):
    ...     return a + b
    >>> result_key(f, 1) == result_key(f, 1, b=2) != result_key(f, 1, b=3)
    True
    """
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    if "device" in bound.arguments:  # None and "cpu" name the same device
        bound.arguments["device"] = str(
            torch.device(bound.arguments["device"] or "cpu")
        )
    arguments = sorted(
        (name, repr(value)) for name, value in bound.arguments.items()
    )
    text = repr(
        (
            function.__module__,
            function.__qualname__,
            arguments,
            torch.__version__,
            torch.get_num_threads(),
            torch.backends.cpu.get_cpu_capability(),
            [os.environ.get(name, "") for name in ARITHMETIC_VARS],
            package_digest(),
        )
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _lock(handle: BinaryIO) -> None:
    """Block until this process holds the exclusive lock of the open file ``handle``."""
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        while True:
            try:  # gives up with OSError after about 10 s; try again
                msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                return
            except OSError:
                continue
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def _unlock(handle: BinaryIO) -> None:
    """Release the lock that :func:`_lock` took."""
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Hold the lock file ``path`` for the block, alone among all processes.

    The holder deletes the file when done (before unlocking). A process that
    was waiting on the deleted file then holds a lock nobody else can see, so
    it opens the file again: the lock counts only while it is on the file that
    ``path`` names.
    """
    while True:
        handle = path.open("a+b")
        try:
            _lock(handle)
            try:
                opened, named = os.fstat(handle.fileno()), os.stat(path)
                current = os.path.samestat(opened, named)
            except FileNotFoundError:
                current = False
            if current:
                break
            _unlock(handle)
        except BaseException:
            handle.close()
            raise
        handle.close()
    try:
        yield
    finally:
        # Windows cannot delete an open file: there the file stays.
        with contextlib.suppress(OSError):
            path.unlink()
        _unlock(handle)
        handle.close()


def _load(path: Path) -> object:
    """Return the result pickled in ``path``."""
    with path.open("rb") as handle:
        return pickle.load(handle)


def stored(function: Callable[P, R]) -> Callable[P, R]:
    """Make ``function`` save and reuse its results when ``LESSONS_CODE_RESULTS`` is set.

    Parameters
    ----------
    function
        A deterministic function whose result can be pickled.

    Returns
    -------
    Callable
        ``function`` with the same signature and documentation. With the
        variable unset it just calls ``function``. With it set, a call that
        another process is already computing waits for that result and
        returns it, instead of computing it a second time.
    """

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        folder = os.environ.get(ENV_VAR)
        if not folder:
            return function(*args, **kwargs)
        path = (
            Path(folder) / f"{result_key(function, *args, **kwargs)}.pkl"
        )
        if path.is_file():
            return cast(R, _load(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        # One process computes; the others with the same call wait here, then
        # find the result saved.
        with _exclusive(path.with_suffix(".lock")):
            if path.is_file():
                return cast(R, _load(path))
            result = function(*args, **kwargs)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            with partial.open("wb") as handle:
                pickle.dump(result, handle)
            partial.replace(path)  # atomic: never half a file to read
        return result

    return wrapper
