"""A checked lane's GM arguments, compiled side: which region an access is in, its bounds, and
the garbage marks UB -> GM copies carry (SPEC §8).

The region table (a row of :data:`.regions.REGION_DTYPE` per GM argument, built by the host) is
at ``ctx.regions_addr``; :func:`region` gives one row, whose fields compiled code reads and
writes by name (``region(ctx, r)["nbytes"]``).  Ownership (who wrote and read each byte) is
:mod:`.gm_ownership`.
"""

from __future__ import annotations

import numpy as np
from numba import carray

from .._numba_compat.jit import jit
from ..kernels.lane import _voidptr
from . import report
from .regions import REGION_DTYPE
from .ub_shadow import GARBAGE_PART, first_garbage, has_garbage

__all__ = ["region", "region_bytes", "gm_range", "carries_garbage", "carry_garbage"]


@jit(always_inline=True, _nrt=True)  # builds a carray view (an array value needs the runtime)
def region(ctx, r):
    """Row ``r`` of the region table (a record: reads and writes go to the table)."""
    return carray(_voidptr(ctx.regions_addr), ctx.n_regions, REGION_DTYPE)[r]


@jit(always_inline=True)
def region_bytes(ctx, r):
    return region(ctx, r)["nbytes"]


@jit
def _region_of(ctx, addr):
    """The GM argument whose bytes hold ``addr``, else one that ends at ``addr`` (an empty view
    may sit at its end), else -1.  Adjacent views of one array (``out[:n]``, ``out[n:]``) meet at
    an address that is the second's."""
    for r in range(ctx.n_regions):
        row = region(ctx, r)
        if row["addr"] <= addr and addr < row["addr"] + row["nbytes"]:
            return r
    for r in range(ctx.n_regions):
        row = region(ctx, r)
        if addr == row["addr"] + row["nbytes"]:
            return r
    return -1


@jit
def gm_range(ctx, prim, operand, addr, start, ext, write):
    """The GM argument holding the access and its byte offset, or (-1, 0) after a violation:
    gm-out-of-bounds past the padding (a write: past the tensor, where the view does not end its
    allocation), gm-past-end inside it unless the kernel declared that it relies on it."""
    r = _region_of(ctx, addr)
    if r < 0:
        report.gm_not_a_tensor(ctx, prim, operand, address=addr)
        return -1, 0
    row = region(ctx, r)
    off = addr - row["addr"] + start
    limit = row["writable"] if write else row["readable"]
    if off < 0 or off > limit or ext > limit - off:  # not off + ext: near 2^63 it wraps
        report.gm_out_of_bounds(ctx, prim, operand, tensor=r, start=off, end=off + ext,
                                tensor_bytes=row["nbytes"], limit=limit)
        return -1, 0
    if off + ext > row["nbytes"] and row["padding"] < (2 if write else 1):
        report.gm_past_end(ctx, prim, operand, tensor=r, access=1 if write else 0, start=off, end=off + ext,
                           tensor_bytes=row["nbytes"])
        return -1, 0
    return r, off


@jit(always_inline=True)
def carries_garbage(ctx, r):
    """Whether a UB -> GM copy into argument ``r`` has garbage marks to move: not unless the lane
    marked some UB bytes garbage or garbage was written to ``r`` before (most launches: never)."""
    return has_garbage(ctx) or region(ctx, r)["dirty"] != 0


@jit(always_inline=True)
def carry_garbage(ctx, prim, r, off, ub_start, n):
    """A UB -> GM block of ``n`` bytes from UB offset ``ub_start`` to byte ``off`` of GM argument
    ``r`` (see :func:`_carry_garbage`)."""
    if carries_garbage(ctx, r):
        _carry_garbage(ctx, prim, r, off, ub_start, n)


@jit(_nrt=True)  # builds carray views (an array value needs the runtime)
def _carry_garbage(ctx, prim, r, off, ub_start, n):
    """A UB -> GM block of ``n`` bytes from UB offset ``ub_start`` to byte ``off`` of GM argument
    ``r``: its bytes inside the tensor take the block's garbage marks (the primitive's code where
    garbage lands, 0 where clean).  What is left at the end of the launch is the violation: a
    kernel may write a whole block and overwrite the garbage part later, as Tile's first aligned
    write of a row does."""
    row = region(ctx, r)
    inside = min(n, row["nbytes"] - off)
    if inside <= 0:
        return
    dirty = first_garbage(ctx, ub_start, inside) >= 0
    if not dirty and row["dirty"] == 0:
        return  # nothing garbage was ever written to this tensor
    row["dirty"] = 1
    gm = carray(_voidptr(row["garbage_map"] + off), inside, np.uint8)
    if not dirty:
        for i in range(inside):
            gm[i] = 0
        return
    marks = carray(_voidptr(ctx.shadow_addr + GARBAGE_PART * ctx.ub_size + ub_start), inside, np.uint8)
    code, epoch = np.uint8(prim), np.uint8(ctx.epoch)
    for i in range(inside):
        gm[i] = code if marks[i] == epoch else np.uint8(0)
