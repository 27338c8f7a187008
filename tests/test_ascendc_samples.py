"""The public Ascend C samples ported line for line (examples/ascendc/), each against its own
gen_data.py golden within its verify_result.py tolerance, bit for bit where the math is exact
(the adds and the sub), plain, checked and interpreted."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_numba.kernels import KernelCheckError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "ascendc"))

# sample -> (exact bits, the gen_data shape interpreted lanes run: the sample's own or a smaller one it splits)
SAMPLES = {
    "add_custom": (True, None),
    "add_custom_tiling": (True, (8, 512)),
    "leaky_relu_custom": (False, (8, 2, 128)),  # -0.0 * 0 + 0: the kernel's zero is +0.0 where NumPy's is -0.0
    "sub_custom": (True, None),
    "whole_reduce_sum": (False, None),  # the reduction's order is the device's, not np.sum's
    "softmax_select_reduce": (False, None),  # Exp, the sums' order and fp16 rounding: within the tolerance
}


def _verify(out, golden, tol):
    """verify_result.py: the share of elements outside isclose(rtol, atol) at most error_tol."""
    bad = ~np.isclose(out.astype(np.float64), golden.astype(np.float64), rtol=tol["rtol"], atol=tol["atol"],
                      equal_nan=True)
    return bad.sum() / bad.size <= tol["error_tol"]


@pytest.mark.parametrize("mode", ["plain", "checked", "interpreted"])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_sample_meets_its_golden(name, mode):
    sample = importlib.import_module(name)
    exact, small = SAMPLES[name]
    args, golden = sample.gen_data(seed=1) if mode != "interpreted" or small is None else \
        sample.gen_data(seed=1, shape=small)
    kw = {"checked": True} if mode == "checked" else {"interpret": True} if mode == "interpreted" else {}
    if name == "sub_custom":
        kw["corrected"] = mode == "checked"  # the published tiling's overrun: see the next test
    out = sample.run(*args, **kw)
    assert out.shape == golden.shape and out.dtype == golden.dtype
    assert _verify(out, golden, sample.TOLERANCE)
    if exact:
        assert np.array_equal(out.view(np.uint8), golden.view(np.uint8))


def test_sub_custom_last_core_runs_past_the_tensor_and_the_corrected_tiling_does_not():
    sample = importlib.import_module("sub_custom")
    (x, y), golden = sample.gen_data()
    t = sample.tiling_func(x.size)
    assert (t.formerNum, t.tailNum, t.formerLength, t.tailLength) == (7, 1, 128, 112)
    with pytest.raises(KernelCheckError) as err:
        sample.run(x, y, checked=True)
    assert (err.value.rule, err.value.lane, err.value.primitive) == ("gm-past-end", 7, "DataCopy")
    assert "18 bytes past the tensor's 1998" in str(err.value)
    assert np.array_equal(sample.run(x, y), golden)  # plain: the overrun lands in aclrtMalloc's padding
    assert np.array_equal(sample.run(x, y, corrected=True, checked=True), golden)


def test_a_port_refuses_gm_of_another_type_by_name():
    sample = importlib.import_module("leaky_relu_custom")
    x = np.zeros(2048, np.float64)
    with pytest.raises(TypeError, match=r"argument x is float64.*GlobalTensor<float32>"):
        sample.leaky_relu_custom.launch(x, x, np.zeros(0, np.uint8), sample.tiling_func(x.size, 0.0), block_dim=8)


# The C++ kernels' lines, comments, blanks, includes and the host launcher (#ifndef ASCENDC_CPU_DEBUG)
# aside, counted on the sources each port's docstring cites.
CPP_LINES = {"add_custom": 67, "add_custom_tiling": 68, "leaky_relu_custom": 71, "sub_custom": 77,
             "whole_reduce_sum": 87, "softmax_select_reduce": 135}
HOST_SIDE = ("tiling_func", "tiling_func_corrected", "run", "gen_data", "TOLERANCE")


def port_lines(name: str) -> int:
    """A port's kernel lines: its docstrings, comments, blanks and imports aside, up to its host side."""
    path = Path(importlib.import_module(name).__file__)
    source = path.read_text()
    tree = ast.parse(source)
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            skip.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
    end = min(n.lineno for n in tree.body if getattr(n, "name", None) in HOST_SIDE
              or isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) in HOST_SIDE)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skip.update(range(node.lineno, node.end_lineno + 1))
    return sum(1 for i, line in enumerate(source.splitlines()[:end - 1], 1)
               if line.strip() and not line.strip().startswith("#") and i not in skip)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_port_is_at_most_1_2_times_its_cpp(name):
    assert port_lines(name) <= 1.2 * CPP_LINES[name], (port_lines(name), CPP_LINES[name])
