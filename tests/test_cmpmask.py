"""The compare-mask register (issue #51): SetCmpMask / GetCmpMask, Compare into the register and
Select from it, fp32 and fp16, compiled and interpreted, against host/references/compare.py; a
count-form Select in VSEL_CMPMASK_SPR loads the register from its mask.  One kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import ascend_numba as an
from ascend_numba.host.primitives import CMPMODE, SELMODE
from ascend_numba.host.references.compare import compare_register as ref_compare
from ascend_numba.host.references.compare import select_register as ref_select
from ascend_numba.host.references.repeat import lanes
from ascend_numba.kernels import (
    BinaryRepeatParams, KernelCheckError, alloc_buffer, compare_register, data_copy, get_cmp_mask, select,
    select_register, set_cmp_mask,
)

TILE = 512  # elements: 4 repeats of fp16, 8 of fp32
CONTIGUOUS = BinaryRepeatParams(1, 1, 1, 8, 8, 8)


@njit
def _steps(ctx, a, b, d, preset, bits, mode, lo, hi, repeat, spr_count):
    if spr_count > 0:  # a count-form Select in VSEL_CMPMASK_SPR loads the register from its mask
        select(ctx, d, preset, a, b, SELMODE_SPR, spr_count)
    else:
        set_cmp_mask(ctx, preset)
        compare_register(ctx, a, b, mode, (lo, hi), CONTIGUOUS)
        select_register(ctx, d, a, b, repeat, CONTIGUOUS)
    get_cmp_mask(ctx, bits)


SELMODE_SPR = int(SELMODE.VSEL_CMPMASK_SPR)


@an.kernel
def cmpmask_kernel(ctx, x32, y32, d32, x16, y16, d16, preset_in, bits_out, wide, mode, lo, hi, repeat, spr_count):
    a32, b32, t32 = alloc_buffer(ctx, TILE, np.float32), alloc_buffer(ctx, TILE, np.float32), \
        alloc_buffer(ctx, TILE, np.float32)
    a16, b16, t16 = alloc_buffer(ctx, TILE, np.uint16), alloc_buffer(ctx, TILE, np.uint16), \
        alloc_buffer(ctx, TILE, np.uint16)
    preset = alloc_buffer(ctx, 32, np.uint8)
    bits = alloc_buffer(ctx, 32, np.uint8)
    data_copy(ctx, preset, 0, preset_in, 0, 32)
    data_copy(ctx, bits, 0, bits_out, 0, 32)
    if wide:
        data_copy(ctx, a32, 0, x32, 0, TILE)
        data_copy(ctx, b32, 0, y32, 0, TILE)
        data_copy(ctx, t32, 0, d32, 0, TILE)
        _steps(ctx, a32, b32, t32, preset, bits, mode, lo, hi, repeat, spr_count)
        data_copy(ctx, d32, 0, t32, 0, TILE)
    else:
        data_copy(ctx, a16, 0, x16, 0, TILE)
        data_copy(ctx, b16, 0, y16, 0, TILE)
        data_copy(ctx, t16, 0, d16, 0, TILE)
        _steps(ctx, a16, b16, t16, preset, bits, mode, lo, hi, repeat, spr_count)
        data_copy(ctx, d16, 0, t16, 0, TILE)
    data_copy(ctx, bits_out, 0, bits, 0, 32)


def _inputs(seed, dtype):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, TILE).astype(dtype)  # small integers: ties in every mode
    b = rng.integers(-3, 4, TILE).astype(dtype)
    a[rng.integers(0, TILE, 8)] = np.nan
    preset = rng.integers(0, 256, 32, dtype=np.uint8)
    return a, b, np.full(TILE, -9, dtype), preset


def _run(wide, mode, lo, hi, repeat, spr_count, seed, **launch):
    dtype = np.float32 if wide else np.float16
    a, b, d, preset = _inputs(seed, dtype)
    other = np.zeros(TILE, np.float16 if wide else np.float32)
    x32, y32, d32 = (a, b, d) if wide else (other, other, other.copy())
    x16, y16, d16 = (other, other, other.copy()) if wide else (a, b, d)
    bits = np.zeros(32, np.uint8)
    cmpmask_kernel.launch(x32, y32, d32, x16.view(np.uint16), y16.view(np.uint16), d16.view(np.uint16), preset, bits,
                          wide, int(mode), np.uint64(lo), np.uint64(hi), repeat, spr_count, block_dim=1, **launch)
    return (d32 if wide else d16), bits[:16], (a, b, d, preset)


def _lanes_on(n, lo, hi):
    k = np.arange(n)
    words = np.where(k < 64, np.uint64(lo), np.uint64(hi))
    return ((words >> (k % 64).astype(np.uint64)) & np.uint64(1)).astype(bool)


@settings(max_examples=20, deadline=None)
@given(wide=st.booleans(), mode=st.sampled_from(list(CMPMODE)), lo=st.integers(0, 2**64 - 1),
       hi=st.integers(0, 2**64 - 1), repeat=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_compare_into_the_register_then_select_from_it(wide, mode, lo, hi, repeat, seed):
    got, register, (a, b, d, preset) = _run(wide, mode, lo, hi, repeat, 0, seed)
    n = 256 // a.dtype.itemsize
    on = _lanes_on(n, lo, hi if n > 64 else 0)
    want_register = ref_compare(preset[:16], a, b, mode, on)
    assert register.tobytes() == want_register.tobytes()
    want = d.copy()
    index = lanes(a.dtype.itemsize, repeat, hi if n > 64 else 0, lo, False, [(1, 8)])[0]
    want[index] = ref_select(want_register, a, b)[index]
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("wide", [True, False])
def test_compiled_and_interpreted_agree_and_a_spr_select_loads_the_register(wide):
    runs = [_run(wide, CMPMODE.LE, 0xF0F0F0F0F0F0F0F0, 0x0FF00FF00FF00FF0, 3, 0, 7, **mode)
            for mode in ({}, {"interpret": True})]
    assert runs[0][0].tobytes() == runs[1][0].tobytes() and runs[0][1].tobytes() == runs[1][1].tobytes()
    got, register, (_, _, _, preset) = _run(wide, CMPMODE.LT, 0, 0, 0, 200, 7)
    assert register.tobytes() == preset[:16].tobytes()


@an.kernel
def short_mask(ctx, x, out):
    t = alloc_buffer(ctx, 32, np.uint8)
    data_copy(ctx, t, 0, x, 0, 32)
    set_cmp_mask(ctx, t[:8])  # 16 bytes read from an 8-byte tensor
    data_copy(ctx, out, 0, t, 0, 32)


def test_checked_mode_reports_a_register_load_past_its_tensor():
    with pytest.raises(KernelCheckError, match="ub-outside-buffer") as caught:
        short_mask.launch(np.zeros(32, np.uint8), np.zeros(32, np.uint8), block_dim=1, checked=True, interpret=True)
    assert caught.value.primitive == "SetCmpMask"
