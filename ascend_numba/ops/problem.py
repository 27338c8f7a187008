"""The problem: what a call's shapes and attributes fix before any data.

Every op turns its validated arguments into a :class:`Problem` (the kernel, its tiling, lanes,
platform and compile-time constants) and runs it on the GM tensors.  Problems are remembered
(:func:`problem_cache`), so a harness calling an op thousands of times on the same shapes plans
once and then pays little more than the lanes' work.
"""

from __future__ import annotations

import functools

import numpy as np

from ..config import PROBLEM_CACHE_SIZE
from ..host.platform import Platform
from ..host.tiling import numpy_dtype, to_array
from ..kernels.interpret import interpreting
from ..kernels.launch import Kernel, PreparedLaunch

__all__ = ["Problem", "problem_cache"]


class Problem:
    """One launch with everything but the data fixed.

    ``tiling`` is the TilingData instance (or None), serialized once; ``constants`` the
    kernel's compile-time constants (TilingKey fields and datatype).  :meth:`run` takes the GM
    tensors in the kernel's argument order.
    """

    __slots__ = ("kernel", "tiling", "block_dim", "platform", "constants", "tiling_bytes", "tiling_dtype",
                 "_prepared")

    def __init__(self, kernel: Kernel, tiling, block_dim: int, platform: Platform, constants: dict | None = None):
        self.kernel, self.tiling, self.block_dim, self.platform = kernel, tiling, block_dim, platform
        self.constants = dict(constants or {})
        self.tiling_bytes = None if tiling is None else to_array(tiling)
        self.tiling_dtype = None if tiling is None else numpy_dtype(type(tiling))
        self._prepared: PreparedLaunch | None = None

    def run(self, gm_args: tuple, *, trace: bool = False, checked: bool = False, fresh: tuple = (),
            trace_info: dict | None = None, interpret: bool | None = None):
        """Launch on ``gm_args`` (flat GM tensors and scalars, see :func:`~ascend_numba.kernels.as_gm`).

        Plain: returns the lanes' state rows.  ``trace=True``: the LaunchTrace (with ``trace_info``).
        ``checked=True``: raises KernelCheckError on a violation after restoring every argument
        except the fresh outputs named in ``fresh`` (the caller drops those).
        ``interpret``: run as plain Python (see :func:`~ascend_numba.interpret`; None: as the
        ``an.interpret()`` block or ``ASCEND_NUMBA_INTERPRET`` say).
        """
        interpret = interpreting(interpret)
        if trace or checked or interpret:
            return self.kernel.launch_prepared(gm_args, self.tiling_bytes, self.tiling_dtype, self.block_dim,
                                               self.platform, self.constants, trace=trace, checked=checked,
                                               trace_info=trace_info, scratch=fresh, interpret=interpret)
        prepared = self._prepared
        if prepared is None:
            # Built on first use: a traced or checked caller must not compile the plain body.  The
            # GM byte total (it decides streaming stores) is the arguments': a problem fixes every
            # tensor's size.
            gm_bytes = sum(a.nbytes for a in gm_args if isinstance(a, np.ndarray))
            prepared = self._prepared = self.kernel.prepare(self.tiling_bytes, self.tiling_dtype, self.block_dim,
                                                            self.platform, self.constants, gm_bytes=gm_bytes)
        return prepared(gm_args)


def problem_cache(build):
    """Remember ``build``'s result per arguments (hashable: shapes, attributes, platform), the
    most recent :data:`~ascend_numba.config.PROBLEM_CACHE_SIZE` of them."""
    return functools.lru_cache(maxsize=PROBLEM_CACHE_SIZE)(build)
