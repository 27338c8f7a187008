"""GatherMask (issue #52) against its reference: one kernel (fp16-as-uint16 and fp32 tiles, the
built-in patterns and bit tensors, normal and counter mode, strides), compiled and interpreted;
the count returned and kept in the register; checked mode names a pattern past its tensor."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascend_numba as an
from ascend_numba.host.references.gather_mask import gather_mask as reference
from ascend_numba.kernels import (GatherMaskParams, KernelCheckError, alloc_buffer, data_copy, gather_mask,
                                  get_gather_mask_remain_count, set_value)

SRC, DST, PAT = 4096, 4096, 1024  # bytes


@an.kernel
def mask_kernel(ctx, d16, s16, p16, d32, s32, p32, counts, builtin, reduce_mode, mask, blk, repeat, rep, pat_rep):
    a16 = alloc_buffer(ctx, SRC // 2, np.uint16)
    b16 = alloc_buffer(ctx, DST // 2, np.uint16)
    q16 = alloc_buffer(ctx, PAT // 2, np.uint16)
    a32 = alloc_buffer(ctx, SRC // 4, np.float32)
    b32 = alloc_buffer(ctx, DST // 4, np.float32)
    q32 = alloc_buffer(ctx, PAT // 4, np.uint32)
    c = alloc_buffer(ctx, 8, np.int64)
    data_copy(ctx, a16, 0, s16, 0, SRC // 2)
    data_copy(ctx, b16, 0, d16, 0, DST // 2)
    data_copy(ctx, q16, 0, p16, 0, PAT // 2)
    data_copy(ctx, a32, 0, s32, 0, SRC // 4)
    data_copy(ctx, b32, 0, d32, 0, DST // 4)
    data_copy(ctx, q32, 0, p32, 0, PAT // 4)
    data_copy(ctx, c, 0, counts, 0, 8)
    params = GatherMaskParams(blk, repeat, rep, pat_rep)
    if builtin > 0:
        n16 = gather_mask(ctx, b16, a16, builtin, reduce_mode, mask, params)
        n32 = gather_mask(ctx, b32, a32, builtin, reduce_mode, mask, params)
    else:
        n16 = gather_mask(ctx, b16, a16, q16, reduce_mode, mask, params)
        n32 = gather_mask(ctx, b32, a32, q32, reduce_mode, mask, params)
    set_value(ctx, c, 0, n16)
    set_value(ctx, c, 1, n32)
    set_value(ctx, c, 2, get_gather_mask_remain_count(ctx))
    data_copy(ctx, d16, 0, b16, 0, DST // 2)
    data_copy(ctx, d32, 0, b32, 0, DST // 4)
    data_copy(ctx, counts, 0, c, 0, 8)


def _case(seed, builtin, reduce_mode, mask, blk, repeat, rep, pat_rep, **mode):
    rng = np.random.default_rng(seed)
    s16 = rng.integers(0, 1 << 16, SRC // 2, dtype=np.uint16)
    s32 = rng.integers(0, 1 << 32, SRC // 4, dtype=np.uint32).view(np.float32)
    p = rng.integers(0, 256, PAT, dtype=np.uint8)
    d16, d32 = np.full(DST // 2, 0xEEEE, np.uint16), np.full(DST // 4, -5.0, np.float32)
    counts = np.zeros(8, np.int64)
    mask_kernel.launch(d16, s16, p.view(np.uint16), d32, s32, p.view(np.uint32), counts, builtin, reduce_mode, mask,
                       blk, repeat, rep, pat_rep, block_dim=1, **mode)
    return d16, d32, counts, (s16, s32, p)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 999), builtin=st.integers(0, 7), reduce_mode=st.booleans(), mask=st.integers(1, 200),
       blk=st.integers(1, 2), repeat=st.integers(0, 3), rep=st.integers(0, 12), pat_rep=st.integers(0, 4))
def test_gather_mask_is_the_reference(seed, builtin, reduce_mode, mask, blk, repeat, rep, pat_rep):
    d16, d32, counts, (s16, s32, p) = _case(seed, builtin, reduce_mode, mask, blk, repeat, rep, pat_rep)
    pattern = builtin if builtin else None
    want16, n16 = reference(np.full(DST // 2, 0xEEEE, np.uint16), s16, pattern or p.view(np.uint16), reduce_mode,
                            mask, blk, repeat, rep, pat_rep)
    want32, n32 = reference(np.full(DST // 4, -5.0, np.float32).view(np.uint32), s32.view(np.uint32),
                            pattern or p.view(np.uint32), reduce_mode, mask, blk, repeat, rep, pat_rep)
    assert d16.tobytes() == want16.tobytes() and d32.view(np.uint32).tobytes() == want32.tobytes()
    assert list(counts[:3]) == [n16, n32, n32]


def test_compiled_and_interpreted_agree():
    compiled = _case(5, 0, True, 150, 1, 2, 9, 1)
    interpreted = _case(5, 0, True, 150, 1, 2, 9, 1, interpret=True)
    assert all(c.tobytes() == i.tobytes() for c, i in zip(compiled[:3], interpreted[:3]))


def test_checked_mode_names_a_pattern_past_its_tensor():
    with pytest.raises(KernelCheckError, match=r"GatherMask: \[ub-outside-buffer\] src1"):
        _case(1, 0, False, 0, 1, 3, 8, 20, checked=True)  # 3 repeats 640 bytes apart: the tensor holds 1024
