"""The user's own op (issue #53): an OpEntry module loaded by ``--ops`` (and ASCEND_NUMBA_OPS),
then seen by the golden CLI, msopst gen (a case naming it with no calc_expect_func_file) and the
golden pytest machinery, without editing the package; a shipped op's name is refused."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from ascend_numba.cli import main
from ascend_numba.config import OPS_ENV
from ascend_numba.golden import parse_cases
from ascend_numba.ops import REGISTRY, load_ops, register, user

USER_OPS = '''
import numpy as np
from ascend_numba.ops.registry import OpEntry, number, same_shape_as


def scaled_add(x, y, *, alpha=1.0):
    return (x + np.asarray(alpha, x.dtype) * y).astype(x.dtype)


def call(function, inputs, attrs, options):
    return {"z": function(inputs["x"], inputs["y"], **attrs)}


ENTRIES = (OpEntry("scaled_add", scaled_add, scaled_add, ("float32", "float16"), same_shape_as("x", "z"),
                   inputs=("x", "y"), outputs=("z",), attrs={"alpha": (number, 1.0)}, call=call),)
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_npu_ops.py").write_text(USER_OPS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(OPS_ENV, "")  # restored after: the CLI adds --ops modules to it for its workers
    yield "my_npu_ops"
    REGISTRY.pop("scaled_add", None)
    user._LOADED.discard("my_npu_ops")
    sys.modules.pop("my_npu_ops", None)


def test_golden_and_msopst_gen_see_a_user_op(tmp_path, user_module):
    cases = tmp_path / "cases.yaml"
    cases.write_text(json.dumps({"cases": [{"name": "mine", "op": "scaled_add", "dtype": "float32", "seed": 3,
                                            "inputs": {"x": {"shape": [64]}, "y": {"shape": [64]}},
                                            "attrs": {"alpha": 2.0}}]}))
    result = CliRunner().invoke(main, ["--ops", user_module, "golden", str(cases), "--out", str(tmp_path / "g"),
                                       "--no-cache", "--workers", "2"])  # spawned workers load the module too
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "g" / "mine" / "case.json").read_text())
    read = {n: np.fromfile(tmp_path / "g" / "mine" / f["file"], np.float32)
            for part in ("inputs", "outputs") for n, f in meta[part].items()}
    assert np.array_equal(read["z"], read["x"] + np.float32(2.0) * read["y"])

    desc = {"format": ["ND"], "type": ["float32"], "shape": [8, 16]}
    st = tmp_path / "st.json"
    st.write_text(json.dumps([{"case_name": "mine_st", "op": "scaled_add", "attr": [{"name": "alpha", "value": 3.0}],
                               "input_desc": [{"name": "x", **desc}, {"name": "y", **desc}],
                               "output_desc": [{"name": "z", **desc}]}]))
    result = CliRunner().invoke(main, ["--ops", user_module, "msopst", "gen", str(st), "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    data = tmp_path / "m" / "scaled_add" / "data"
    x, y, z = (np.fromfile(data / f"mine_st_subcase_0_{part}_float32.bin", np.float32)
               for part in ("input0", "input1", "expect_np_output0"))
    assert np.array_equal(z, x + np.float32(3.0) * y)


def test_the_environment_loads_it_and_a_shipped_name_is_refused(user_module, monkeypatch):
    monkeypatch.setenv(OPS_ENV, user_module)
    assert "scaled_add" in load_ops()
    case = parse_cases({"cases": [{"name": "c", "op": "scaled_add", "dtype": "float16",
                                   "inputs": {"x": {"shape": [4]}, "y": {"shape": [4]}}}]})[0]
    assert case.op == "scaled_add"
    with pytest.raises(ValueError, match="op 'tile' is one the package ships"):
        register(REGISTRY["tile"])


def test_warmup_takes_a_user_op_by_name(user_module):
    from ascend_numba.warmup import specializations

    result = CliRunner().invoke(main, ["--ops", user_module, "warmup", "--ops", "scaled_add"])
    assert result.exit_code == 0, result.output  # known by name (it has no warmup cases: nothing to compile)
    assert "warmup: 0 specializations" in result.output
    assert specializations() == specializations(list(REGISTRY))  # every registered op, the user's too
