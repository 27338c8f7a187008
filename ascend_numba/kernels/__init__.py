"""Compiled code: the primitives, the launch path and checked mode (the ops' kernels live in
their folders under :mod:`ascend_numba.ops`).

Kernel authors import from here::

    from ascend_numba.kernels import kernel, alloc_buffer, data_copy, data_copy_pad, add
"""

from ..checked.messages import KernelCheckError
from . import primitives
from .interpret import interpret
from .launch import Kernel, KernelError, as_gm, compile_messages, constant, kernel
from .primitives import *  # noqa: F403 - the primitives are the kernel author's vocabulary

__all__ = ["Kernel", "KernelError", "KernelCheckError", "as_gm", "kernel", "constant", "compile_messages", "interpret",
           *primitives.__all__]
