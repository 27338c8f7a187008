"""DMA atomics (family ``atomic`` of :mod:`ascend_numba.host.primitives`): SetAtomicAdd,
SetAtomicMax, SetAtomicMin, SetAtomicType and DisableDmaAtomic (SetAtomicNone); and
InitGlobalMemory (Fill), whose writes go through the DMA as a copy's and combine under an atomic.

While a lane's atomic is set, every DataCopy / DataCopyPad it makes into GM combines each element
with the one in GM instead of overwriting it: ``gm = gm + src`` (max, min), element by element in
the atomic's type, whatever the copy's tensors hold (the register's type is its own).  Copies into
UB are not affected.  The setting lasts until DisableDmaAtomic or another SetAtomic*, within the
launch (a launch starts with none, as TPipe's construction resets it).  The twin combines with
compare-and-swap, so lanes of one launch accumulating into the same bytes meet as the device's
cores do: every contribution lands, in an order no one chooses; checked mode lets several lanes'
atomic copies meet (only another lane's plain write or read of the bytes is a race).

Types: ``np.float32``, ``np.float16``, ``np.int16``, ``np.int32``, ``np.int8`` or the names
``"float32"``, ``"float16"``, ``"bfloat16"``, ``"int16"``, ``"int32"``, ``"int8"`` (A2/A3's list).
Each combination is rounded to the type (fp16, bf16: the fp32 result rounded to nearest even);
the twin's choices where the pages are silent: an integer sum wraps, a NaN sum is the default NaN,
Max / Min keep GM's value on a tie and a NaN wins (GM's first), as the vector Max / Min.
Bytes past the last whole element of a copy are written as they are.

Semantics: cannmirror/asc-devkit at 0da921b, ``docs/zh/api/SIMD-API/基础API/原子操作/`` (SetAtomicAdd,
SetAtomicMax, SetAtomicMin, SetAtomicType, DisableDmaAtomic), ``include/basic_api/
kernel_operator_set_atomic_intf.h`` and ``impl/basic_api/dav_c220/kernel_operator_set_atomic_impl.h``
(SetAtomicType is the bare ``set_atomic_<type>`` call); the register's fields: the CANN 8.0.RC2
SetStoreAtomicConfig page (``apiref/opdevgapi/atlasascendc_api_07_0282``: type ATOMIC_NONE = 0 is
off, operation ATOMIC_SUM = 0).  SetAtomicType with no operation set therefore adds.
"""

from __future__ import annotations

import numpy as np
from numba import types

from ...checked.auto import enter, moved_data
from ...checked.dispatch import checked_rule
from ...checked.gm_ownership import claim
from ...checked.gm_regions import gm_range
from ...checked.rules import OPERAND_DST, PRIMITIVE
from ...host.primitives import PRIMITIVES
from ...host.trace import DIR_SCALAR, EVENT
from ..._numba_compat.extending import TypingError, overload
from ..._numba_compat.jit import OVERLOAD_OPTIONS, jit
from ..half import bf16_to_f32, f16_to_f32, f32_as_u32, f32_to_bf16, f32_to_f16, u32_as_f32
from ..lane import STATE_ATOMIC, _address, _load_i64, _store_i64, is_plain_lane
from .context import address, trace_event, tracing
from .element_bits import put_bits
from .elements import canonical_nan
from .llvm import compare_exchange
from .vector import declared

__all__ = ["set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_type", "disable_dma_atomic",
           "set_atomic_none", "init_global_memory", "atomic_copy", "atomic_bytes", "atomic_on",
           "NEEDS_ATOMIC_LANE"]

_FILL, _FILL_CODE = PRIMITIVE["InitGlobalMemory"], EVENT["init_global_memory"]

ADD, MAX, MIN = 1, 2, 3
# The device's AtomicDtype numbering (kernel_operator_set_atomic_intf.h): NONE, F32, F16, S16, S32, S8, BF16.
F32, F16, S16, S32, S8, BF16 = 1, 2, 3, 4, 5, 6
_CODES = {"float32": F32, "float16": F16, "int16": S16, "int32": S32, "int8": S8, "bfloat16": BF16}
_NAMED = tuple(_CODES.items())


def _type_code(dtype):
    """The AtomicDtype of a type argument (a compile-time constant)."""
    raise NotImplementedError  # compiled only


@overload(_type_code, jit_options=OVERLOAD_OPTIONS)
def _ov_type_code(dtype):
    if isinstance(dtype, types.NumberClass):
        name = str(dtype.instance_type)
        if name not in _CODES:
            raise TypingError(f"a DMA atomic's type is one of {', '.join(_CODES)} (A2/A3); got {name}")
        code = _CODES[name]
        return lambda dtype: code
    if isinstance(dtype, (types.UnicodeType, types.StringLiteral)):
        def by_name(dtype):
            for name, code in _NAMED:
                if dtype == name:
                    return code
            raise ValueError("a DMA atomic's type is float32, float16, bfloat16, int16, int32 or int8")
        return by_name
    raise TypingError(f"a DMA atomic's type: a NumPy type or a name ({', '.join(_CODES)}); got {dtype}")


# Which lanes carry atomics is a compile-time matter (see lane.AtomicLane): a plain Lane's copies
# never combine, so its bodies leave the read-modify-write out.  A body that sets an atomic fails
# typing on a plain Lane with this message, and the launch compiles it for an AtomicLane instead.
NEEDS_ATOMIC_LANE = "sets a DMA atomic: compiled for an AtomicLane"


def atomic_on(ctx):
    """The lane's atomic register: op | type << 8, 0 for none (always 0 in a plain Lane)."""
    raise NotImplementedError  # compiled only


@overload(atomic_on, jit_options=OVERLOAD_OPTIONS)
def _ov_atomic_on(ctx):
    if is_plain_lane(ctx):
        return lambda ctx: 0
    return lambda ctx: _load_i64(ctx.state_addr, STATE_ATOMIC)


def _require_atomic_lane(ctx):
    raise NotImplementedError  # compiled only


@overload(_require_atomic_lane, jit_options=OVERLOAD_OPTIONS)
def _ov_require_atomic_lane(ctx):
    if is_plain_lane(ctx):
        raise TypingError(f"SetAtomicAdd / Max / Min / Type {NEEDS_ATOMIC_LANE}")
    return lambda ctx: None


def _set_op(op: int):
    def set_op(ctx, dtype):
        _require_atomic_lane(ctx)
        _store_i64(ctx.state_addr, STATE_ATOMIC, op | (_type_code(dtype) << 8))
    return set_op


def _set_atomic_type(ctx, dtype):
    # The device's atomic register enables by its type field, and its operation field rests at the
    # sum (SetStoreAtomicConfig: AtomicDtype::ATOMIC_NONE and AtomicOp::ATOMIC_SUM are both 0):
    # a type set with no operation before it makes copies add.
    _require_atomic_lane(ctx)
    op = atomic_on(ctx) & 0xFF
    _store_i64(ctx.state_addr, STATE_ATOMIC, (op if op != 0 else ADD) | (_type_code(dtype) << 8))


def _disable_dma_atomic(ctx):
    _store_i64(ctx.state_addr, STATE_ATOMIC, 0)


set_atomic_add = declared(_set_op(ADD), PRIMITIVES["set_atomic_add"], __name__)
set_atomic_max = declared(_set_op(MAX), PRIMITIVES["set_atomic_max"], __name__)
set_atomic_min = declared(_set_op(MIN), PRIMITIVES["set_atomic_min"], __name__)
set_atomic_type = declared(_set_atomic_type, PRIMITIVES["set_atomic_type"], __name__)
disable_dma_atomic = declared(_disable_dma_atomic, PRIMITIVES["disable_dma_atomic"], __name__)
set_atomic_none = disable_dma_atomic  # the deprecated name


# ---- the read-modify-write ---------------------------------------------------------------------------

@jit(always_inline=True)
def _signed(bits, width):
    shift = 64 - 8 * width
    return (bits << shift) >> shift


@jit(always_inline=True)
def _as_f32(code, bits):
    if code == F32:
        return u32_as_f32(np.uint32(bits))
    if code == F16:
        return f16_to_f32(np.uint16(bits))
    return bf16_to_f32(np.uint16(bits))


@jit(always_inline=True)
def _of_f32(code, x):
    if code == F32:
        return np.int64(f32_as_u32(x))
    if code == F16:
        return np.int64(f32_to_f16(x))
    return np.int64(f32_to_bf16(x))


@jit(always_inline=True)
def _keeps_gm(op, gm, value):
    """Max / Min: GM's element stays (a tie, a NaN in GM, or the value not beyond it)."""
    if gm != gm:
        return True
    if value != value:
        return False
    return not (value > gm if op == MAX else value < gm)


@jit(always_inline=True)
def _combined(op, code, gm, value):
    """The bits GM holds after the atomic combines ``value``'s bits into ``gm``'s."""
    width = _width(code)
    mask = (np.int64(1) << (8 * width)) - 1
    if code in (S16, S32, S8):
        a, b = _signed(gm, width), _signed(value, width)
        if op == ADD:
            return (a + b) & mask
        return gm if _keeps_gm(op, a, b) else value
    x, y = _as_f32(code, gm), _as_f32(code, value)
    if op == ADD:
        return _of_f32(code, canonical_nan(x + y)) & mask
    return gm if _keeps_gm(op, x, y) else value


@jit(always_inline=True)
def _width(code):
    return 4 if code == F32 or code == S32 else 1 if code == S8 else 2


@jit(always_inline=True)
def _swap(array, byte, width, expected, desired):
    """compare_exchange of a ``width``-byte element; returns the bits found.  An element off its
    width's alignment (a GM view at an odd byte) goes byte by byte: no CPU has an atomic
    instruction for it (ARM faults), so it is not atomic as a whole."""
    if (np.int64(_address(array)) + byte) % width != 0:
        found = np.int64(0)
        for b in range(width):
            found |= np.int64(compare_exchange(array, byte + b, np.uint8(0), np.uint8(0))) << (8 * b)
        if found == expected:
            for b in range(width):
                compare_exchange(array, byte + b, np.uint8((found >> (8 * b)) & 0xFF),
                                 np.uint8((desired >> (8 * b)) & 0xFF))
        return found
    if width == 4:
        return np.int64(compare_exchange(array, byte, np.uint32(expected), np.uint32(desired)))
    if width == 2:
        return np.int64(compare_exchange(array, byte, np.uint16(expected), np.uint16(desired)))
    return np.int64(compare_exchange(array, byte, np.uint8(expected), np.uint8(desired)))


@jit(always_inline=True)
def _combine_at(dst, byte, width, op, code, value):
    """Combine ``value``'s bits into the element at ``byte`` of GM ``dst``, retried until no other
    lane came between."""
    gm = np.int64(0)  # a guess: a miss returns GM's bits, and the next round combines those
    while True:
        found = _swap(dst, byte, width, gm, _combined(op, code, gm, value))
        if found == gm:
            return
        gm = found


@jit
def atomic_copy(ctx, dst, d, src, s, n):
    """``n`` bytes of ``src`` from byte ``s`` combined into GM ``dst`` from byte ``d`` under the
    lane's atomic (both ranges inside their arrays)."""
    setting = atomic_on(ctx)
    op, code = setting & 0xFF, (setting >> 8) & 0xFF
    width = _width(code)
    whole = n - n % width
    for j in range(0, whole, width):
        _combine_at(dst, d + j, width, op, code, _swap(src, s + j, width, 0, 0))  # an atomic read of the source
    for j in range(whole, n):
        _swap(dst, d + j, 1, _swap(dst, d + j, 1, 0, 0), _swap(src, s + j, 1, 0, 0))


def atomic_bytes(ctx, dst, dst_byte, src, src_byte, nbytes):
    """A copy into GM under the lane's DMA atomic, clamped to both arrays as ``copy_bytes`` is
    (nothing in a plain Lane, whose atomic is never on)."""
    raise NotImplementedError  # compiled only


def _clamped_atomic_copy(ctx, dst, dst_byte, src, src_byte, nbytes):
    if dst_byte >= 0 and src_byte >= 0 and nbytes > 0:
        n = min(nbytes, dst.nbytes - dst_byte, src.nbytes - src_byte)
        if n > 0:
            atomic_copy(ctx, dst, dst_byte, src, src_byte, n)


@overload(atomic_bytes, jit_options=OVERLOAD_OPTIONS)
def _ov_atomic_bytes(ctx, dst, dst_byte, src, src_byte, nbytes):
    if is_plain_lane(ctx):
        return lambda ctx, dst, dst_byte, src, src_byte, nbytes: None
    return _clamped_atomic_copy


# ---- InitGlobalMemory (Fill) ------------------------------------------------------------------------

def _element_bits(gm, value):
    """``value`` as ``gm``'s element, its bits as an int64 (a uint16 tensor: fp16)."""
    raise NotImplementedError  # compiled only


@overload(_element_bits, jit_options=OVERLOAD_OPTIONS)
def _ov_element_bits(gm, value):
    if gm.dtype == types.uint16:
        return lambda gm, value: np.int64(f32_to_f16(np.float32(value)))
    if gm.dtype == types.float32:
        return lambda gm, value: np.int64(f32_as_u32(np.float32(value)))
    if isinstance(gm.dtype, types.Integer) and gm.dtype.bitwidth in (16, 32):
        mask = (1 << gm.dtype.bitwidth) - 1
        return lambda gm, value: np.int64(value) & mask
    raise TypingError(f"InitGlobalMemory takes uint16 (fp16), int16, uint32, int32 and float32 tensors; got {gm.dtype}")


def _init_global_memory(ctx, dst, size, value):
    bits = _element_bits(dst, value)
    n = max(min(np.int64(size), dst.size), 0)
    if not check_fill(ctx, _address(dst), n * dst.itemsize):
        return
    if tracing(ctx):
        a = address(dst)
        trace_event(ctx, _FILL_CODE, DIR_SCALAR, n * dst.itemsize, 1, a, a + n * dst.itemsize, 0, 0, 0, 0)
    setting = atomic_on(ctx)
    if setting == 0:
        for i in range(n):
            put_bits(dst, i, bits)
        return
    op, code = setting & 0xFF, (setting >> 8) & 0xFF
    width = _width(code)
    for j in range(0, n * dst.itemsize - (n * dst.itemsize) % width, width):  # the atomic's type, as a copy's
        _combine_at(dst, j, width, op, code, (bits >> (8 * (j % dst.itemsize))) & ((np.int64(1) << (8 * width)) - 1))


@checked_rule
@jit
def check_fill(ctx, addr, nbytes):
    """InitGlobalMemory: the bytes inside the GM tensor, claimed as a copy's (an atomic one under
    a DMA atomic)."""
    enter(ctx, _FILL)
    moved_data(ctx)
    if nbytes <= 0:
        return True
    r, off = gm_range(ctx, _FILL, OPERAND_DST, addr, 0, nbytes, True)
    return r >= 0 and claim(ctx, _FILL, r, off, nbytes, nbytes, 1, atomic_on(ctx) != 0)


init_global_memory = declared(_init_global_memory, PRIMITIVES["init_global_memory"], __name__)
