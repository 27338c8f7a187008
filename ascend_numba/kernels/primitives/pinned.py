"""Pinned element functions: one implementation of each transcendental, run by compiled,
interpreted and fused code alike.

The obvious ``np.exp(x)`` in an element function is the host's math library: compiled, LLVM's
``expf``; interpreted, NumPy's ``exp``; they differ in the last bit for about a third of fp32
inputs, so the promise that an interpreted run gives the compiled bits would break.  These
functions are plain IEEE arithmetic (``+ - * /``, ``floor``, ``frexp``, ``ldexp``: each exactly
rounded, so Numba and Python compute the same bits) in float64, rounded once to fp32:

* ``exp_element``: range reduction ``x = k ln2 + r`` (Cody-Waite, ``|r| <= ln2 / 2``), a degree-13
  Taylor polynomial, scaled by ``2**k``;
* ``ln_element``: ``x = m 2**e`` (``m`` in ``[sqrt(1/2), sqrt(2))``), ``ln m = 2 atanh(s)`` with
  ``s = (m - 1) / (m + 1)`` as an odd series to ``s**23``, plus ``e ln2``;
* ``rsqrt_element``: ``1 / sqrt(x)``, both correctly rounded in float64 (within 2**-52 relative
  of the exact value), so the fp32 result is within 0.5 + 2**-28 ULP.

Error bound, against float64's ``numpy.exp`` / ``numpy.log`` rounded to fp32: the float64 value
is within 2**-50 relative of the exact one, so the fp32 result is the correctly rounded one but
within 2**-26 ULP of a rounding tie, and at most 0.5 + 2**-26 ULP from the exact value
(``tests/test_pinned_math.py`` sweeps it).  fp16 tiles take the fp32 result rounded to fp16, as
every fp16 vector op here does.  Special values: a NaN comes out quieted with its sign and
payload; ``exp(+inf) = +inf``, ``exp(-inf) = +0``; ``ln(+0) = ln(-0) = -inf``, ``ln(+inf) =
+inf``, ``ln(x < 0)`` and ``ln(-inf)`` the default NaN (``0x7FC00000``, positive).

Plain functions under ``@jit``: interpret mode runs their Python, the fused pass calls them by
name (:data:`ELEMENT_FUNCTIONS`).
"""

from __future__ import annotations

import math

import numpy as np

from ..._numba_compat.jit import jit

__all__ = ["exp_element", "ln_element", "rsqrt_element", "ELEMENT_FUNCTIONS"]

# ln 2 split so that k * _LN2_HI is exact for |k| < 2**11 (fdlibm's constants).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_SQRT_HALF = 0.70710678118654752440
# exp(r): 1/n! from n = 13 down to 0 (Horner); ln m: 2/(2j+1) from j = 11 down to 0.
_EXP_TERMS = tuple(1.0 / math.factorial(n) for n in range(13, -1, -1))
_LN_TERMS = tuple(2.0 / (2 * j + 1) for j in range(11, -1, -1))
# fp32's range: exp overflows past 88.73 and rounds to +0 below -103.98.
_EXP_OVER, _EXP_UNDER = 89.0, -104.0


@jit(always_inline=True)
def _exp64(x):
    if x != x:
        return x + x
    if x > _EXP_OVER:
        return math.inf
    if x < _EXP_UNDER:
        return 0.0
    k = math.floor(x * _INV_LN2 + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = 0.0
    for c in _EXP_TERMS:
        p = p * r + c
    return math.ldexp(p, k)


@jit(always_inline=True)
def _ln64(x):
    if x != x:
        return x + x
    if x < 0.0:
        return math.nan  # the default NaN: positive, quiet
    if x == 0.0:
        return -math.inf
    if x == math.inf:
        return x
    m, e = math.frexp(x)
    if m < _SQRT_HALF:
        m = m + m
        e = e - 1
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    p = 0.0
    for c in _LN_TERMS:
        p = p * z + c
    return e * _LN2_HI + (s * p + e * _LN2_LO)


@jit(always_inline=True)
def exp_element(x):
    """e**x of an fp32 value, computed in float64 and rounded once to fp32 (see the module doc)."""
    return np.float32(_exp64(np.float64(x)))


@jit(always_inline=True)
def ln_element(x):
    """ln x of an fp32 value, computed in float64 and rounded once to fp32 (see the module doc)."""
    return np.float32(_ln64(np.float64(x)))


@jit(always_inline=True)
def _rsqrt64(x):
    if x != x:
        return x + x
    if x < 0.0:
        return math.nan  # the default NaN (Python's math.sqrt would raise, interpreted)
    if x == 0.0:
        return math.copysign(math.inf, x)  # (Python's 1 / 0.0 would raise)
    return 1.0 / math.sqrt(x)


@jit(always_inline=True)
def rsqrt_element(x):
    """1 / sqrt(x) of an fp32 value, computed in float64 and rounded once to fp32 (see the module doc)."""
    return np.float32(_rsqrt64(np.float64(x)))


ELEMENT_FUNCTIONS = {"exp_element": exp_element, "ln_element": ln_element, "rsqrt_element": rsqrt_element}
