"""Loading pickles that may come from anywhere, without running any of their code.

A pickle runs code by naming a callable (``GLOBAL``, ``STACK_GLOBAL``, ``INST``, ``OBJ``,
``EXT*``) and calling it (``REDUCE``, ``NEWOBJ``, ``BUILD``); every way to name one goes
through :meth:`pickle.Unpickler.find_class`. Refusing every name there leaves the opcodes
that build builtin containers and scalars (dict, list, tuple, set, str, bytes, int, float,
bool, None) — all a PyTorch memory snapshot holds — and nothing else.
"""

from __future__ import annotations

import io
import pickle

from rca.errors import FileFormatError


class _NoGlobalsUnpickler(pickle.Unpickler):
    """An unpickler that admits no class or function at all."""

    def find_class(self, module: str, name: str) -> object:
        raise pickle.UnpicklingError(f"the pickle asks for {module}.{name}, and pickles here may hold plain data only")


def loads(data: bytes) -> object:
    """The plain data pickled in ``data``; :class:`FileFormatError` for a pickle that names code or is damaged."""
    try:
        return _NoGlobalsUnpickler(io.BytesIO(data)).load()
    except pickle.UnpicklingError as err:
        raise FileFormatError(f"refused to unpickle: {err}") from None
    except (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError, MemoryError, RecursionError) as err:
        raise FileFormatError(f"damaged pickle ({type(err).__name__}: {str(err)[:120]})") from None
