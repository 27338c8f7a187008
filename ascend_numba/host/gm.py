"""GM tensors as the device's allocator lays them out: a host stand-in for aclrtMalloc.

``aclrtMalloc`` rounds a size up to 32 bytes and adds 32 (the CANN ``aclrtMalloc`` page), so a
kernel that reads or writes a tail as whole blocks stays inside the allocation; the samples'
hosts rely on it (``15_sub_frameworklaunch``'s last core writes 18 bytes past its 1998-byte
tensor).  :func:`gm_alloc` gives such an allocation, as a view of the tensor's own shape: a
plain launch's overrun lands in the padding, and checked mode, which knows the view's end,
reports it (``gm-past-end``).

Plain Python: no Numba here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gm_alloc", "gm_copy", "GM_ALIGN"]

GM_ALIGN = 32


def gm_alloc(shape, dtype) -> np.ndarray:
    """An uninitialized GM tensor of ``shape`` and ``dtype`` inside an allocation of its bytes
    rounded up to 32, plus 32 (zeroed, as fresh pages are)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    padded = np.zeros(-(-nbytes // GM_ALIGN) * GM_ALIGN + GM_ALIGN, np.uint8)
    return padded[:nbytes].view(dtype).reshape(shape)


def gm_copy(array) -> np.ndarray:
    """``array``'s values in a :func:`gm_alloc` tensor (aclrtMemcpy host to device)."""
    array = np.asarray(array)
    out = gm_alloc(array.shape, array.dtype)
    out[...] = array
    return out
