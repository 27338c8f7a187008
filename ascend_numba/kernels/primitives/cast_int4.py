"""Cast between fp16 and int4b_t, the count form (``cast_int4``; references:
:mod:`ascend_numba.host.references.convert`).

An int4b_t tensor is an int8 (or uint8) tile holding two elements a byte, element i in the low
four bits of byte i // 2 when i is even and the high four when odd (the device's
``LocalTensor<int4b_t>::GetValue``: impl/basic_api/kernel_tensor_impl.h, cannmirror/asc-devkit at
0da921b).  fp16 -> int4b_t rounds under CAST_RINT, FLOOR, CEIL, ROUND, TRUNC or NONE (as RINT) and
saturates to [-8, 7] (a NaN gives 0); int4b_t -> fp16 is exact (CAST_NONE).  The device takes an
even count (the page); an odd one writes the last element's nibble and leaves its byte's other
nibble, as an even count's neighbour would.  Not yet: the level-0 form.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.rules import MODES, PRIMITIVE
from ...host.primitives import CAST_MODES, PRIMITIVES
from ...host.trace import EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import f16_to_f32, f32_to_f16
from ..lane import _address
from .cmpsel import NO_OPERAND, _trace, check_with_mode
from .convert import ODD, _to_integer, store_low8
from .masks import count_form_done
from .preload import advance_preload
from .vector import declared

__all__ = ["cast_int4"]

_CAST, _CODE = PRIMITIVE["Cast"], EVENT["cast_int4"]
_ROUND_MODE = MODES.index("RoundMode")
_PACK_MODES = sum(1 << int(m) for m in CAST_MODES[("float16", "int4b_t")])
_UNPACK_MODES = sum(1 << int(m) for m in CAST_MODES[("int4b_t", "float16")])


@jit(always_inline=True)
def nibble(tile, i):
    """int4b_t element ``i`` of a byte tile, sign-extended."""
    v = (np.int64(tile[i // 2]) >> (4 * (i % 2))) & 0xF
    return v - 16 if v >= 8 else v


@jit(always_inline=True)
def set_nibble(tile, i, value):
    shift = 4 * (i % 2)
    byte = np.int64(tile[i // 2]) & 0xFF
    store_low8(tile, i // 2, (byte & ~(0xF << shift)) | ((np.int64(value) & 0xF) << shift))


def _packs(dst, src):
    raise NotImplementedError  # compiled only


@overload(_packs, jit_options=OVERLOAD_OPTIONS)
def _ov_packs(dst, src):
    # True: fp16 (a uint16 tile) into int4b_t (a byte tile); False: the other way.
    if src.dtype == types.uint16 and dst.dtype in (types.int8, types.uint8):
        return lambda dst, src: True
    if dst.dtype == types.uint16 and src.dtype in (types.int8, types.uint8):
        return lambda dst, src: False
    raise TypingError(f"cast_int4 takes fp16 (uint16) and int4b_t (an int8 or uint8 tile) tiles; got {src.dtype} -> "
                      f"{dst.dtype}")


def _cast_int4(ctx, dst, src, mode, count):
    m = np.int64(mode)
    n = max(count, 0)
    packs = _packs(dst, src)
    taken = _PACK_MODES if packs else _UNPACK_MODES
    nibbles = (n + 1) // 2  # the int4b_t side's bytes
    if not check_with_mode(ctx, _CAST, count, 2, 0, m, _ROUND_MODE, 0 <= m <= ODD and (taken >> m) & 1 == 1,
                           _address(dst), dst.nbytes, nibbles if packs else 2 * n, _address(src), src.nbytes,
                           2 * n if packs else nibbles, 0, 0, NO_OPERAND, 0, 0, NO_OPERAND, not packs):
        return
    _trace(ctx, _CODE, n, dst, nibbles if packs else 2 * n, src, 2 * n if packs else nibbles, src,
           2 * n if packs else nibbles)
    advance_preload(ctx)
    count_form_done(ctx)
    if packs:
        for i in range(min(n, src.size, 2 * dst.size)):
            set_nibble(dst, i, _to_integer(np.float64(f16_to_f32(src[i])), -8, 7, m))
    else:
        for i in range(min(n, dst.size, 2 * src.size)):
            dst[i] = f32_to_f16(np.float32(nibble(src, i)))


cast_int4 = declared(_cast_int4, PRIMITIVES["cast_int4"], __name__)
