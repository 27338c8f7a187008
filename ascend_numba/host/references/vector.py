"""The vector ops, one NumPy function per declared op (``host.primitives.VECTOR_OPS``).

Each takes the op's tile operands as arrays of the tile's element type (fp16 tiles as
``float16``, not their uint16 bits) and its scalar, and returns the ``dst`` a count-form call on
the whole tiles writes.  The rules they spell out (docs/kernels/primitives.md, "Bits"):

* fp16 tiles compute in fp32 and round once to fp16; a scalar first becomes the tile's type;
* arithmetic's NaN results are the default NaN (:func:`~ascend_numba.dtypes.with_default_nan`);
* selections and sign changes (Max, Min, Relu, Abs, Neg) move the chosen operand's bits;
* bits ops (And, Or, Not, Ands, Ors) take the integer tiles themselves (a uint16 tile's bits).

Exp, Ln and Rsqrt are float64 NumPy rounded once to fp32: the pinned kernels agree within one
ULP (tests/test_vector_bits.py), not bit for bit (a float64 value within 2**-26 ULP of a tie).
"""

from __future__ import annotations

import numpy as np

from ...dtypes import with_default_nan

__all__ = ["REFERENCES", "reference"]


def _arith(f, *tiles, scalar=None):
    """``f`` on the tiles (and the scalar) in fp32, NaN results the default NaN, rounded to the
    tiles' type."""
    dtype = tiles[0].dtype
    wide = [t.astype(np.float32) for t in tiles]
    if scalar is not None:
        wide.append(np.float32(dtype.type(np.float32(scalar))))
    with np.errstate(all="ignore"):
        result = np.asarray(f(*wide), np.float32)
        return with_default_nan(result).astype(dtype)


def _wide64(f):
    """A float64 NumPy function rounded once to fp32 (Exp, Ln, Rsqrt)."""
    return lambda x: f(x.astype(np.float64)).astype(np.float32)


def _select(keep_first, a, b):
    """``a`` where ``keep_first`` else ``b``, bits untouched (``b`` may be a scalar of a's type)."""
    return np.where(keep_first, a, np.asarray(b, a.dtype))


def _sign_bits(a, op):
    bits = a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint16)
    sign = np.array(1 << (8 * a.dtype.itemsize - 1), bits.dtype)
    return op(bits, sign).view(a.dtype)


def _max(a, b):
    return _select((a >= b) | np.isnan(a), a, b)


def _min(a, b):
    return _select((a <= b) | np.isnan(a), a, b)


def _relu(a):
    return _select((a > 0) | np.isnan(a), a, 0)


def _shift(a, scalar, left: bool):
    """A shift by a count of the tile's type; a count outside 0..width-1 shifts every bit out.  A
    signed left shift keeps the sign bit and drops the bit below it (the device's arithmetic left
    shift: int16 0xAAAA << 1 is 0xD554)."""
    width = 8 * a.dtype.itemsize
    count = int(np.array(a.dtype.type(scalar)).astype(f"u{a.dtype.itemsize}"))
    if not left:
        return np.where(a < 0, a, 0).astype(a.dtype) >> (width - 1) if count >= width else a >> a.dtype.type(count)
    bits = a.view(f"u{a.dtype.itemsize}")
    shifted = np.zeros_like(bits) if count >= width else bits << bits.dtype.type(count)
    if a.dtype.kind == "i":
        sign = bits.dtype.type(1 << (width - 1))
        shifted = (bits & sign) | (shifted & ~sign)
    return shifted.view(a.dtype)


def _scalar_of(a, scalar):
    return a.dtype.type(np.float32(scalar))  # a number enters a vector op as fp32, then the tile's type


REFERENCES = {
    "duplicate": lambda a, s: np.full(a.shape, _scalar_of(a, s), a.dtype),
    "adds": lambda a, s: _arith(np.add, a, scalar=s),
    "muls": lambda a, s: _arith(np.multiply, a, scalar=s),
    "add": lambda a, b: _arith(np.add, a, b),
    "sub": lambda a, b: _arith(np.subtract, a, b),
    "mul": lambda a, b: _arith(np.multiply, a, b),
    "div": lambda a, b: _arith(np.divide, a, b),
    "vmax": _max,
    "vsqrt": lambda a: _arith(np.sqrt, a),
    "vabs": lambda a: _sign_bits(a, lambda bits, sign: bits & ~sign),
    "vexp": lambda a: _arith(_wide64(np.exp), a),
    "vln": lambda a: _arith(_wide64(np.log), a),
    "vmin": _min,
    "maxs": lambda a, s: _max(a, _scalar_of(a, s)),
    "mins": lambda a, s: _min(a, _scalar_of(a, s)),
    "subs": lambda a, s: _arith(np.subtract, a, scalar=s),
    "divs": lambda a, s: _arith(np.divide, a, scalar=s),
    "relu": _relu,
    "vneg": lambda a: _sign_bits(a, lambda bits, sign: bits ^ sign),
    "reciprocal": lambda a: _arith(lambda x: np.float32(1) / x, a),
    "rsqrt": lambda a: _arith(_wide64(lambda x: 1 / np.sqrt(x)), a),
    "add_relu": lambda a, b: _arith(lambda x, y: _relu(x + y), a, b),
    "sub_relu": lambda a, b: _arith(lambda x, y: _relu(x - y), a, b),
    "abs_sub": lambda a, b: _arith(lambda x, y: np.abs(x - y), a, b),
    "prelu": lambda a, b: _arith(lambda x, y: np.where(x > 0, x, x * y), a, b),
    "leaky_relu": lambda a, s: _arith(lambda x, alpha: np.where(x > 0, x, x * alpha), a, scalar=s),
    # Bits ops take integer tiles (fp16 data as its uint16 bits); a scalar becomes the tile's type.
    "vand": lambda a, b: a & b,
    "vor": lambda a, b: a | b,
    "vnot": lambda a: ~a,
    "ands": lambda a, s: a & a.dtype.type(s),
    "ors": lambda a, s: a | a.dtype.type(s),
    "shift_left": lambda a, s: _shift(a, s, left=True),
    "shift_right": lambda a, s: _shift(a, s, left=False),
}


def reference(name: str, *operands):
    """The reference ``dst`` of vector op ``name`` on its tile operands and scalar."""
    return REFERENCES[name](*operands)
