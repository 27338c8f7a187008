"""What a vector program's generated code (:mod:`.fusion_codegen`) calls at run time: its names
(:func:`_scope`: the primitives, the element conversions, each tile's element type), the pass's
test that its tiles do not overlap (:func:`_apart`) and its NaN fix-up (:func:`_default_nans`,
:func:`_default_nans_f16`), compiled and cached in this module.
"""

from __future__ import annotations

import numpy as np

from ..._numba_compat.jit import jit
from ..half import (
    bf16_to_f32, f16_to_f32, f16_to_f32_quiet, f32_round_f16, f32_round_f16_quiet, f32_to_bf16, f32_to_f16,
    f32_to_f16_quiet,
)
from ..lane import _address
from . import convert, dma, vector
from .llvm import scalar_loop
from .preload import advance_preload


@jit
def _apart(starts, ends, kinds):
    """Whether the byte ranges ``[starts[k], ends[k])`` do not overlap, but for sources (kind 1:
    only read) with each other and a sink (kind 2: only written) at a source's very bytes (an
    update in place: each element is read before it is written, and never again).  A loop, not
    a test per pair in the pass's code: those cost ~1.4 s of a fp16 ApplyAdamW's cold compile."""
    for i in range(len(starts)):
        for j in range(i + 1, len(starts)):
            if starts[i] < ends[j] and starts[j] < ends[i] and not (kinds[i] == 1 and kinds[j] == 1) \
                    and not (kinds[i] + kinds[j] == 3 and starts[i] == starts[j]):
                return False
    return True


@jit(never_inline=True)
def _default_nans(view, n):
    """The first ``n`` elements of ``view`` with each NaN made the default NaN (the fused pass's
    fix-up: one function compiled per element type, not loops in every pass)."""
    for i in range(n):
        view[i] = vector.canonical_nan(view[i])


@jit(never_inline=True)
def _default_nans_f16(view, n):
    """:func:`_default_nans` of fp16 bits (a uint16 view)."""
    for i in range(n):
        view[i] = f32_to_f16_quiet(vector.canonical_nan(f16_to_f32(view[i])))


def _scope(dtypes: dict) -> dict:
    """The generated code's names: the primitives (``_p``; Cast's: ``_cvt``, with each Cast row's
    element and word as ``_cast_<row>`` and ``_word_<row>``), the conversions, and each tile's NumPy
    element type as ``_dt_<tile>`` (the primitives' stores cast to it)."""
    return {"_p": vector, "_dma": dma, "_cvt": convert,
            **{f"_cast_{name}": element for name, (element, _) in convert.FUSED.items()},
            **{f"_word_{name}": word for name, (_, word) in convert.FUSED.items()},
            "np": np, "_address": _address, "_apart": _apart,
            "advance_preload": advance_preload, "_default_nans": _default_nans, "_default_nans_f16": _default_nans_f16,
            "scalar_loop": scalar_loop,
            **vector.ELEMENT_INTRINSICS,
            "f16_to_f32": f16_to_f32, "f32_to_f16": f32_to_f16, "bf16_to_f32": bf16_to_f32, "f32_to_bf16": f32_to_bf16,
            "f32_round_f16": f32_round_f16, "f32_round_f16_quiet": f32_round_f16_quiet,
            "f32_to_f16_quiet": f32_to_f16_quiet, "f16_to_f32_quiet": f16_to_f32_quiet,
            **{f"_dt_{t}": d for t, d in dtypes.items()}}

