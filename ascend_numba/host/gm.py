"""GM tensors as the device's allocator lays them out: a host stand-in for aclrtMalloc.

``aclrtMalloc`` rounds a size up to 32 bytes and adds 32 (the CANN ``aclrtMalloc`` page), so a
kernel that reads or writes a tail as whole blocks stays inside the allocation; the samples'
hosts rely on it (``15_sub_frameworklaunch``'s last core writes 18 bytes past its 1998-byte
tensor).  :func:`gm_alloc` gives such an allocation, as a view of the tensor's own shape: a
plain launch's overrun lands in the padding, and checked mode, which knows the view's end,
reports it (``gm-past-end``).

Plain Python: no Numba here (the allocations are ``ascend_numba.memory``'s).
"""

from __future__ import annotations

import numpy as np

from ..memory import empty, empty_fresh
from .tiling import to_bytes

__all__ = ["gm_alloc", "gm_copy", "gm_tiling", "GM_ALIGN"]

GM_ALIGN = 32


def gm_alloc(shape, dtype) -> np.ndarray:
    """An uninitialized GM tensor of ``shape`` and ``dtype`` inside an allocation of its bytes rounded
    up to 32, plus 32 (the padding zeroed): as ``an.empty``'s, a checked launch reports a read of its
    bytes no lane of the launch wrote first."""
    return _padded(shape, dtype, empty_fresh)


def gm_copy(array) -> np.ndarray:
    """``array``'s values in such a tensor (aclrtMemcpy host to device)."""
    array = np.asarray(array)
    out = _padded(array.shape, array.dtype, empty)
    out[...] = array
    return out


def gm_tiling(tiling) -> np.ndarray:
    """A TilingData instance's bytes as a uint8 GM tensor (the host's SaveToBuffer into the tiling
    argument a framework kernel reads with GET_TILING_DATA)."""
    return gm_copy(np.frombuffer(to_bytes(tiling), np.uint8))


def _padded(shape, dtype, allocate) -> np.ndarray:
    # Large allocations come from the result pool (memory.py): a harness's repeated calls reuse pages
    # already mapped instead of faulting fresh ones in.
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    padded = allocate((-(-nbytes // GM_ALIGN) * GM_ALIGN + GM_ALIGN,), np.uint8)
    padded[nbytes:] = 0
    return padded[:nbytes].view(dtype).reshape(shape)
