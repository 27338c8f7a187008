"""The one decorator for compiled code: cached, IEEE arithmetic, no fastmath."""

from numba import njit

__all__ = ["jit", "JIT_OPTIONS"]

# error_model="numpy": x/0 gives inf/nan as on the device, not ZeroDivisionError.
# No fastmath: results are compared bit for bit.
JIT_OPTIONS = {"cache": True, "error_model": "numpy"}


def jit(func=None, **options):
    """``numba.njit`` with the house options (``@jit`` or ``@jit(inline="always")``)."""
    merged = {**JIT_OPTIONS, **options}
    if func is None:
        return njit(**merged)
    return njit(**merged)(func)
