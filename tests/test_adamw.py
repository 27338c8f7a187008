"""ApplyAdamW: 0 ULP from the op-by-op NumPy reference (float16 here, float32 and bfloat16 in
test_adamw_fp32_bf16.py), checked mode, block_dim independence, UB budget; errors touch nothing."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from adamw_cases import (
    DTYPES, KEYS, SCALARS, VARIANTS, _assert_0ulp, _state, check_zero_ulp, compiled_maximize, runs_zero_ulp,
)

import ascend_numba as an
from ascend_numba.aclnn import (
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_SUCCESS,
    aclGetRecentErrMsg,
    aclnnApplyAdamW,
    aclnnApplyAdamWGetWorkspaceSize,
)
from ascend_numba.kernels.lane import STATE_UB_TOP
from ascend_numba.ops.adamw.api import _problem
from ascend_numba.ops.adamw.plan import adamw_ub_buffers, plan_adamw
from ascend_numba.ops.adamw.reference import apply_adamw_reference


FP16_CASES = [(a, m, var) for a, m in KEYS for var in VARIANTS if runs_zero_ulp(np.float16, a, m, var)]


@pytest.mark.parametrize("amsgrad, maximize, variant", FP16_CASES)
def test_zero_ulp_against_reference_fp16(amsgrad, maximize, variant):
    check_zero_ulp(np.float16, amsgrad, maximize, variant)


# Checked mode (SPEC §8) on the 0-ULP test's shape and 7 lanes: every dtype and every variant with
# the key that allocates and runs the most (amsgrad and maximize), and the plain key once; each is
# a checked specialization of its own to compile.
CHECKED_CASES = [(np.float32, True, True, "seed"), (np.float16, True, True, "a2"),
                 (ml_dtypes.bfloat16, True, True, "seed"), (np.float16, False, False, "seed")]


@pytest.mark.parametrize("dtype, amsgrad, maximize, variant", CHECKED_CASES, ids=str)
def test_checked_mode_passes_and_changes_no_bit(dtype, amsgrad, maximize, variant):
    var, m, v, grad, mgn = _state(dtype, seed=2)
    ref = apply_adamw_reference(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn, amsgrad=amsgrad,
                                maximize=maximize, variant=variant)
    got = an.apply_adamw(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn if amsgrad else None, amsgrad=amsgrad,
                         maximize=maximize, variant=variant, block_dim=7, checked=True)
    _assert_0ulp(got, ref)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_independent_of_block_dim_and_not_inplace(dtype):
    var, m, v, grad, mgn = _state(dtype, n=200_003, seed=1)
    before = [a.copy() for a in (var, m, v)]
    maximize = compiled_maximize(dtype, True, "seed")
    results = [an.apply_adamw(var, m, v, **SCALARS, grad=grad, max_grad_norm=mgn, amsgrad=True, maximize=maximize,
                              inplace=False, block_dim=b) for b in (1, 7, 48)]
    for a, b in zip(before, (var, m, v)):
        assert a.tobytes() == b.tobytes()  # inplace=False leaves the inputs alone
    for r in results[1:]:
        for x, y in zip(results[0], r):
            assert x.tobytes() == y.tobytes()


def test_scalars_as_one_element_arrays_and_any_rank():
    var, m, v, grad, _ = _state(np.float16, n=3 * 5 * 7, seed=2)
    shaped = [a.reshape(3, 5, 7) for a in (var, m, v, grad)]
    scalars = {k: np.array([val], dtype=np.float16) for k, val in SCALARS.items()}
    ref = apply_adamw_reference(*shaped[:3], **SCALARS, grad=shaped[3])
    got = an.apply_adamw(*shaped[:3], **scalars, grad=shaped[3], inplace=False)
    assert all(g.shape == (3, 5, 7) for g in got)
    _assert_0ulp(got, ref)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("variant", VARIANTS)
def test_ub_budget(dtype, amsgrad, variant):
    name = np.dtype(dtype).name
    plat = an.get_platform("A2")
    maximize = compiled_maximize(dtype, amsgrad, variant)  # the plan is maximize's either way
    plan = plan_adamw(100_000, name, variant, amsgrad, maximize, None, plat)
    assert plan.ub_bytes <= 196608
    io = np.dtype(dtype).itemsize
    # One more block per tile would not fit.
    bigger = adamw_ub_buffers(name, variant, amsgrad, plan.tiling.tileDataNum + 32 // io)
    assert sum(bigger.values()) > 196608
    # The kernel binds exactly the planned buffers.
    var, m, v, grad, mgn = _state(dtype, n=100_000, seed=3)
    io_t = np.float32 if io == 4 else np.uint16
    flat = [a.view(io_t) if io == 2 else a for a in (var, m, v, grad, mgn)]
    scal = np.array([np.asarray(s, dtype) for s in SCALARS.values()], dtype).view(io_t)
    problem = _problem(100_000, name, variant, amsgrad, maximize, True, None, plat)
    state = problem.run((*flat, scal, flat[0].copy(), flat[1].copy(), flat[2].copy()))
    assert (state[:, STATE_UB_TOP] == plan.ub_bytes).all()


def test_tiling_split_and_default_block_dim():
    plat = an.get_platform("A2")
    assert plan_adamw(5000, "float32", "seed", False, False, None, plat).block_dim == 5
    assert plan_adamw(10 ** 7, "float32", "seed", False, False, None, plat).block_dim == 48
    plan = plan_adamw(1000, "float16", "seed", False, False, 3, plat)  # 63 blocks over 3 lanes: 21 each
    assert (plan.tiling.blockElems, plan.tiling.bigCores, plan.tiling.smallBlocks) == (16, 0, 21)
    assert plan.core_ranges() == [(0, 336), (336, 672), (672, 1000)]
    plan = plan_adamw(1000, "float16", "seed", False, False, 4, plat)  # 63 blocks over 4: 16, 16, 16, 15
    assert (plan.tiling.bigCores, plan.tiling.smallBlocks) == (3, 15)
    assert plan.core_ranges() == [(0, 256), (256, 512), (512, 768), (768, 1000)]
    plan = plan_adamw(1000, "float32", "seed", False, False, 5, plat)  # 125 blocks: 25 each
    assert plan.core_ranges()[0] == (0, 200) and plan.core_ranges()[-1] == (800, 1000)


def test_repeated_calls_on_one_problem_share_nothing_but_the_plan():
    # A problem seen before reuses its plan and prepared launch; each call's arrays are its own,
    # in plain and checked calls alike, and its arguments are still checked.  (The key and dtype
    # of a checked case above: no new specialization to compile.)
    for seed in (5, 6):
        var, m, v, grad, _ = _state(np.float16, n=5003, seed=seed)
        ref = apply_adamw_reference(var, m, v, **SCALARS, grad=grad)
        for checked in (False, True, False):
            got = an.apply_adamw(var, m, v, **SCALARS, grad=grad, inplace=False, block_dim=3, checked=checked)
            _assert_0ulp(got, ref)
    with pytest.raises(an.ParamDtypeError):
        an.apply_adamw(var, m.astype(np.float32), v, **SCALARS, grad=grad, inplace=False, block_dim=3)


def _args(dtype=np.float32, n=64):
    var, m, v, grad, mgn = _state(dtype, n=n, seed=4)
    return dict(var=var, m=m, v=v, **SCALARS, grad=grad, max_grad_norm=mgn)


ERRORS = [
    ("missing var", dict(var=None), an.ParamNullptrError, ACLNN_ERR_PARAM_NULLPTR),
    ("missing grad", dict(grad=None), an.ParamNullptrError, ACLNN_ERR_PARAM_NULLPTR),
    ("missing lr", dict(lr=None), an.ParamNullptrError, ACLNN_ERR_PARAM_NULLPTR),
    ("amsgrad without max_grad_norm", dict(max_grad_norm=None, amsgrad=True), an.ParamNullptrError,
     ACLNN_ERR_PARAM_NULLPTR),
    ("float64", dict(var=np.zeros(64), m=np.zeros(64), v=np.zeros(64), grad=np.zeros(64)), an.ParamDtypeError,
     ACLNN_ERR_PARAM_INVALID),
    ("m dtype differs", dict(m=np.zeros(64, np.float16)), an.ParamDtypeError, ACLNN_ERR_PARAM_INVALID),
    ("scalar array dtype differs", dict(lr=np.array([1e-3], np.float16)), an.ParamDtypeError,
     ACLNN_ERR_PARAM_INVALID),
    ("grad shape differs", dict(grad=np.zeros(65, np.float32)), an.ParamInvalidError, ACLNN_ERR_PARAM_INVALID),
    ("max_grad_norm shape differs", dict(max_grad_norm=np.zeros(63, np.float32), amsgrad=True),
     an.ParamInvalidError, ACLNN_ERR_PARAM_INVALID),
    ("scalar with two elements", dict(beta1=np.array([0.9, 0.9], np.float32)), an.ParamInvalidError,
     ACLNN_ERR_PARAM_INVALID),
]


@pytest.mark.parametrize("name, change, exc, code", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_raise_return_codes_and_change_nothing(name, change, exc, code):
    args = _args()
    args.update(change)
    amsgrad = args.pop("amsgrad", False)
    snapshot = {k: a.copy() for k, a in args.items() if isinstance(a, np.ndarray)}
    with pytest.raises(exc):
        an.apply_adamw(**args, amsgrad=amsgrad)
    order = ("var", "m", "v", "beta1_power", "beta2_power", "lr", "weight_decay", "beta1", "beta2", "epsilon",
             "grad", "max_grad_norm")
    status, ws, executor = aclnnApplyAdamWGetWorkspaceSize(*(args[k] for k in order), amsgrad, False)
    assert status == code and executor is None and aclGetRecentErrMsg()
    for k, a in snapshot.items():
        assert args[k].tobytes() == a.tobytes(), f"{k} was modified"


def test_aclnn_success_and_empty():
    args = _args(np.float16)  # a key the 0-ULP test compiles
    ref = apply_adamw_reference(**args)
    order = ("var", "m", "v", "beta1_power", "beta2_power", "lr", "weight_decay", "beta1", "beta2", "epsilon",
             "grad", "max_grad_norm")
    status, ws, executor = aclnnApplyAdamWGetWorkspaceSize(*(args[k] for k in order), False, False)
    assert status == ACLNN_SUCCESS and aclnnApplyAdamW(None, ws, executor) == ACLNN_SUCCESS
    _assert_0ulp((args["var"], args["m"], args["v"]), ref)
    empty = np.zeros(0, np.float32)
    status, ws, executor = aclnnApplyAdamWGetWorkspaceSize(empty, empty, empty, *(0.5,) * 7, empty, None,
                                                           False, False)
    assert status == ACLNN_SUCCESS and aclnnApplyAdamW(None, ws, executor) == ACLNN_SUCCESS


def test_against_torch_adamw_fp32_ten_steps():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    n = 10_000
    var0 = rng.standard_normal(n).astype(np.float32)
    grads = [rng.standard_normal(n).astype(np.float32) for _ in range(10)]
    lr, wd, b1, b2, eps = 1e-2, 1e-2, 0.9, 0.999, 1e-8
    for amsgrad, maximize in KEYS:
        p = torch.nn.Parameter(torch.from_numpy(var0.copy()))
        opt = torch.optim.AdamW([p], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd, amsgrad=amsgrad,
                                maximize=maximize)
        var, m, v, mgn = var0.copy(), np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
        for t, g in enumerate(grads, start=1):
            p.grad = torch.from_numpy(g.copy())
            opt.step()
            an.apply_adamw(var, m, v, b1 ** (t - 1), b2 ** (t - 1), lr, wd, b1, b2, eps, g,
                           mgn if amsgrad else None, amsgrad=amsgrad, maximize=maximize)
            if amsgrad:  # the op reads max_grad_norm; the caller keeps the running max
                np.maximum(mgn, v, out=mgn)
        ref = p.detach().numpy()
        assert np.max(np.abs(var - ref)) / max(np.max(np.abs(ref)), 1.0) <= 1e-5
