"""Compiled code: the primitives, the launch path and checked mode (the ops' kernels live in
their folders under :mod:`ascend_numba.ops`).

Kernel authors import from here::

    from ascend_numba.kernels import kernel, alloc_buffer, data_copy, data_copy_pad, add
"""

from ..host.check import KernelCheckError
from .launch import Kernel, KernelError, as_gm, compile_messages, constant, kernel
from .primitives import (
    CheckedLane,
    Lane,
    TracedLane,
    add,
    adds,
    alloc_buffer,
    big_small_lane_range,
    cast_bf16_to_f32,
    cast_f16_to_f32,
    cast_f32_to_bf16,
    cast_f32_to_f16,
    contiguous_lane_range,
    data_copy,
    data_copy_pad,
    div,
    duplicate,
    gather,
    in_ub,
    mul,
    muls,
    preload,
    reinterpret,
    set_value,
    sub,
    trace_work,
    ttrans,
    vmax,
    vsqrt,
)

__all__ = [
    "Kernel", "KernelError", "KernelCheckError", "as_gm", "kernel", "constant", "compile_messages", "Lane",
    "TracedLane", "CheckedLane", "set_value",
    "alloc_buffer", "reinterpret", "in_ub", "contiguous_lane_range", "big_small_lane_range",
    "data_copy", "data_copy_pad", "gather", "preload",
    "duplicate", "adds", "muls", "add", "sub", "mul", "div", "vmax", "vsqrt",
    "cast_f16_to_f32", "cast_f32_to_f16", "cast_bf16_to_f32", "cast_f32_to_bf16", "ttrans", "trace_work",
]
