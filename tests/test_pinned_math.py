"""Transcendental element functions are pinned: one implementation (float64 arithmetic rounded
once) for compiled, interpreted and fused code, within a stated bound of float64's, with their
special values' bits fixed (issue #49 item 4; docs/kernels/primitives.md, Bits).  Compiled vs
interpreted vs fused over every declared vector op: tests/test_vector_bits.py."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from ascend_numba.host.primitives import element_expression
from ascend_numba.kernels.interpret import python_function
from ascend_numba.kernels.primitives.vector import element_function

NAMES = {"exp_element": np.exp, "ln_element": np.log, "rsqrt_element": lambda x: 1 / np.sqrt(x)}
BOUND = {"exp_element": 0.5 + 2.0 ** -26, "ln_element": 0.5 + 2.0 ** -26, "rsqrt_element": 0.5 + 2.0 ** -28}


def _exp_the_obvious_way(x):
    return np.exp(x)


def _mod(x, y):
    return x % y


@pytest.mark.parametrize("element", [_exp_the_obvious_way, _mod])
def test_an_element_function_that_is_not_exact_arithmetic_is_refused(element):
    with pytest.raises(ValueError, match=r"is not exact arithmetic: a math library's function gives other last bits "
                                         r"compiled \(LLVM\) than interpreted \(NumPy\)"):
        element_expression(element)


def _compiled(name):
    op = element_function(name, 1, True)  # as the primitive computes it: NaN results the default NaN

    @njit
    def run(x, out):
        for i in range(x.size):
            out[i] = op(x[i])
    return run, op


def _sweep(n=1 << 20):
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return bits.view(np.float32)


@pytest.mark.parametrize("name", list(NAMES))
def test_within_half_an_ulp_and_a_hair_of_float64(name):
    x = _sweep()
    run, _ = _compiled(name)
    got = np.empty_like(x)
    run(x, got)
    with np.errstate(all="ignore"):
        exact = NAMES[name](x.astype(np.float64))
    finite = np.isfinite(exact) & np.isfinite(got) & (np.abs(exact) <= np.finfo(np.float32).max)
    ulp = np.spacing(np.abs(got[finite]).astype(np.float32)).astype(np.float64)
    error = np.abs(got[finite].astype(np.float64) - exact[finite]) / ulp
    assert error.max() <= BOUND[name], error.max()
    assert np.array_equal(np.isnan(got), np.isnan(exact))


@pytest.mark.parametrize("name, cases", [
    ("exp_element", [(0x7FC00001, 0x7FC00000), (0xFFA00001, 0x7FC00000), (0x7F800000, 0x7F800000),
                     (0xFF800000, 0), (0, 0x3F800000), (0x80000000, 0x3F800000), (0x42B20000, 0x7F800000),
                     (0xC2D10000, 0)]),
    ("ln_element", [(0xBF800000, 0x7FC00000), (0xFF800000, 0x7FC00000), (0, 0xFF800000), (0x80000000, 0xFF800000),
                    (0x7F800000, 0x7F800000), (0x3F800000, 0), (0xFFC00001, 0x7FC00000)]),
    ("rsqrt_element", [(0, 0x7F800000), (0x80000000, 0xFF800000), (0x7F800000, 0), (0xBF800000, 0x7FC00000),
                       (0xFF800000, 0x7FC00000), (0x40800000, 0x3F000000), (0xFFC00001, 0x7FC00000)]),
])
def test_special_values_compiled_and_interpreted(name, cases):
    x = np.array([c[0] for c in cases], np.uint32).view(np.float32)
    want = np.array([c[1] for c in cases], np.uint32)
    run, op = _compiled(name)
    got = np.empty_like(x)
    run(x, got)
    assert np.array_equal(got.view(np.uint32), want), [hex(v) for v in got.view(np.uint32)]
    interpreted = python_function(op.py_func)
    with np.errstate(all="ignore"):  # as interpret mode runs a lane: no warnings
        assert np.array_equal(np.array([interpreted(v) for v in x], np.float32).view(np.uint32), want)
