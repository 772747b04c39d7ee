"""Reference implementations for *The Transformer Architecture*.

Every algorithm the book teaches lives here once; the lesson pages and the
gallery examples import it, and the tests check it against PyTorch's own
modules.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lessons-code")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
