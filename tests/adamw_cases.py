"""ApplyAdamW test data shared by test_adamw.py and test_adamw_fp32_bf16.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import ascend_numba as an
from ascend_numba.ops.adamw import KEYS, SCALARS  # the registry entry's: (amsgrad, maximize) keys, step-5 scalars
from ascend_numba.ops.adamw.plan import VARIANTS
from ascend_numba.ops.adamw.reference import apply_adamw_reference

__all__ = ["DTYPES", "KEYS", "VARIANTS", "SCALARS", "N", "check_zero_ulp", "runs_zero_ulp", "compiled_maximize"]

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]
N = (1 << 20) + 37  # >= 1M elements, with a tail that is not a whole block


def _special(dtype, n, rng, scale):
    """Normal values mixed with zeros, subnormals, huge and tiny magnitudes of this dtype."""
    info = ml_dtypes.finfo(dtype)
    x = rng.standard_normal(n) * scale
    kind = rng.integers(0, 10, n)
    x[kind == 0] = 0.0
    x[kind == 1] *= float(info.smallest_subnormal) * 4 / scale          # subnormals
    x[kind == 2] *= float(info.max) ** 0.5 / scale                       # huge (squares overflow)
    x[kind == 3] *= float(info.smallest_normal) * 8 / scale              # tiny
    return x.astype(dtype)


def _state(dtype, n=N, seed=0):
    rng = np.random.default_rng(seed)
    var = _special(dtype, n, rng, 1.0)
    m = _special(dtype, n, rng, 0.1)
    v = np.abs(_special(dtype, n, rng, 0.01))
    v[: n // 16] = 0  # v = 0
    grad = _special(dtype, n, rng, 1.0)
    mgn = np.abs(_special(dtype, n, rng, 0.01))
    return var, m, v, grad, mgn


def _bits(a):
    return a.view(np.uint32 if a.itemsize == 4 else np.uint16)


def _assert_0ulp(got, ref):
    for name, g, r in zip(("var", "m", "v"), got, ref):
        bad = np.nonzero(_bits(g) != _bits(r))[0]
        assert bad.size == 0, f"{name}: {bad.size} differ, first at {bad[:3]}: {g[bad[:3]]} vs {r[bad[:3]]}"


def orthogonal_half(amsgrad, maximize, variant) -> bool:
    """Half the (amsgrad, maximize, variant) combinations, every pair of two flags' values among
    them (an orthogonal array); the other half has the same property."""
    return (amsgrad == maximize) == (variant == VARIANTS[0])


def runs_zero_ulp(dtype, amsgrad, maximize, variant) -> bool:
    """Whether the 0-ULP test runs this combination of this dtype.  Each dtype x key x variant is a
    specialization of its own, a cold compile of 6-10 s in CI: float32 and float16 take one
    orthogonal half of the combinations and bfloat16 the other, so every combination runs and
    each dtype meets every pair of two flags' values."""
    return orthogonal_half(amsgrad, maximize, variant) == (dtype is not ml_dtypes.bfloat16)


def compiled_maximize(dtype, amsgrad, variant) -> bool:
    """The maximize flag whose fused kernel the 0-ULP test compiles for these (the other tests of a
    plan that maximize does not change run on it: nothing more to compile)."""
    return next(m for m in (False, True) if runs_zero_ulp(dtype, amsgrad, m, variant))


def check_zero_ulp(dtype, amsgrad, maximize, variant):
    """One in-place ApplyAdamW on N special values, fused (and op by op where amsgrad == maximize):
    0 ULP from the reference, max_grad_norm untouched."""
    var, m, v, grad, mgn = _state(dtype)
    ref = apply_adamw_reference(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn, amsgrad=amsgrad,
                                maximize=maximize, variant=variant)
    mgn_before = mgn.copy()
    # The op-by-op Compute (whole tiles) first, on copies; then the fused one (strips), in place.
    # Each op-by-op kernel is one more cold compile: two per dtype.
    if amsgrad == maximize:
        unfused = an.apply_adamw(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn if amsgrad else None,
                                 amsgrad=amsgrad, maximize=maximize, variant=variant, inplace=False, fused=False)
        _assert_0ulp(unfused, ref)
    got = an.apply_adamw(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn if amsgrad else None,
                         amsgrad=amsgrad, maximize=maximize, variant=variant)
    assert got[0] is var and got[1] is m and got[2] is v  # updated in place
    _assert_0ulp(got, ref)
    assert mgn.tobytes() == mgn_before.tobytes()  # read, never written
