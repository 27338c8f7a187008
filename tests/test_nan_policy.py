"""The NaN policy (issue #55; docs/kernels/primitives.md, Bits): every NaN an arithmetic op gives
is the default NaN (positive, quiet, payload 0), on every host and in every mode, so golden files
from an x86 and an aarch64 host are byte-identical.  These tests need no ARM machine: they pin the
exact bits an x86 host used to get wrong (the negative default NaN of an invalid operation, the
CPU's choice between two NaN operands); ``scripts/test-aarch64.sh`` runs them on arm64 too."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import ascend_numba as an
from ascend_numba.dtypes import dtype_by_name
from ascend_numba.golden import compute_case, parse_cases

DEFAULT_NAN = {"float32": 0x7FC00000, "float16": 0x7E00, "bfloat16": 0x7FC0}
N = 1000


def _nan_inputs(dtype):
    """ApplyAdamW inputs whose step meets every invalid operation and NaN of both signs."""
    rng = np.random.default_rng(0)
    var, m, v, grad = (rng.normal(size=N).astype(np.float32) for _ in range(4))
    v = np.abs(v)
    var[:50], grad[50:100], m[100:150], grad[150:200] = np.inf, np.inf, -np.inf, 0.0
    v[200:250] = -1.0  # sqrt of a negative
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFF800123], np.uint32).view(np.float32)
    var[250:300], grad[300:350] = np.resize(nans, 50), np.resize(nans[::-1], 50)
    m[250:350] = -np.inf  # NaN meets inf
    return [a.astype(dtype) for a in (var, m, v, grad)]


# Every dtype plain and interpreted; checked mode (a kernel of its own to compile) in fp32.
@pytest.mark.parametrize("name, mode", [(n, m) for n in DEFAULT_NAN for m in ("plain", "interpreted")]
                         + [("float32", "checked")])
def test_every_nan_adamw_gives_is_the_default_nan(name, mode):
    dtype = dtype_by_name(name)
    var, m, v, grad = _nan_inputs(dtype)
    kwargs = {"checked": mode == "checked", "interpret": mode == "interpreted"}
    with np.errstate(all="ignore"):
        outs = an.apply_adamw(var, m, v, 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, grad, inplace=False, **kwargs)
    bits = f"u{dtype.itemsize}"
    for out in outs:
        nan = np.isnan(out.astype(np.float32))
        assert nan.sum() >= 50
        assert set(out[nan].view(bits).tolist()) == {DEFAULT_NAN[name]}


# The sha256 of the golden of a case whose inputs produce NaNs: one value on every host.
PINNED = {
    "float32": "1a8b3709e884e07197b5d7439e6a8ff86b7d456db20326072043fd562ff7fb10",
    "float16": "d88174232e26a5a8337e809224b20772f45b6bc5cb77ca8ccda229baf56ba958",
    "bfloat16": "c0be1fd81b796cd33561aadd3c4d16f402b4b14a7a25b6110ae4f2b1ad9c0350",
}


@pytest.mark.parametrize("name", list(PINNED))
def test_a_golden_with_nans_has_one_sha256_on_every_host(name):
    doc = {"cases": [{
        "name": f"adamw_nans_{name}", "op": "apply_adamw", "dtype": name, "seed": 9,
        "inputs": {n: {"shape": [512], "dist": {"special": [0.0, 1.0, -1.0, "inf", "-inf", "nan"]}}
                   for n in ("var", "m", "v", "grad")},
        "attrs": {"beta1_power": 0.9, "beta2_power": 0.99, "lr": 1e-3, "weight_decay": 0.01, "beta1": 0.9,
                  "beta2": 0.99, "epsilon": 1e-8}}]}
    _, outputs, _ = compute_case(parse_cases(doc)[0], None)
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(outputs[k]).tobytes() for k in sorted(outputs)))
    golden = outputs[sorted(outputs)[0]]
    assert np.isnan(golden.astype(np.float32)).sum() > 100
    assert digest.hexdigest() == PINNED[name]
