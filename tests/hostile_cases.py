"""Bad input for every public entry point, run in a subprocess by test_hostile_input.py.

Each case builds its arguments, snapshots every array among them, calls the entry point and
reports (as one JSON line, printed before the call too, so a crash names its case) the error
class, its message and whether every array is unchanged.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np

import ascend_numba as an
from ascend_numba.ops.adamw.plan import plan_adamw
from ascend_numba.kernels import kernel


@dataclass
class Case:
    name: str
    call: object          # () -> (function, args tuple, kwargs dict)
    error: str            # the class the call must raise (or a base of it)
    names: str            # a word the message must contain: the argument or rule at fault


def _x(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=np.float64).astype(dtype).reshape(shape)


def _adamw(**change):
    args = dict(var=_x(64), m=_x(64), v=_x(64), beta1_power=0.9, beta2_power=0.99, lr=1e-3, weight_decay=0.01,
                beta1=0.9, beta2=0.99, epsilon=1e-8, grad=_x(64))
    args.update(change)
    return an.apply_adamw, (), args


def _shared_mv():
    m = _x(64)
    return _adamw(m=m, v=m)


def _shifted_grad():
    b = _x(65)
    return _adamw(var=b[1:], grad=b[:-1])


@kernel
def _two_tensors(ctx, x, y):
    pass


CASES = [
    Case("tile path list", lambda: (an.tile, (_x(4, 4), (2, 2)), {"path": ["gather"]}), "TypeError", "path"),
    Case("tile zero-size dtype", lambda: (an.tile, (np.zeros(3, np.dtype([])), 2), {}), "TypeError", "zero-size"),
    Case("tile negative reps", lambda: (an.tile, (_x(4), [-1]), {}), "ValueError", "reps"),
    Case("tile float reps", lambda: (an.tile, (_x(4), [2.5]), {}), "TypeError", "reps"),
    Case("tile 2-D reps array", lambda: (an.tile, (_x(4), np.ones((2, 2), int)), {}), "ValueError", "reps"),
    Case("tile out shape", lambda: (an.tile, (_x(4), 2), {"out": _x(9)}), "ValueError", "out"),
    Case("tile out dtype", lambda: (an.tile, (_x(4), 2), {"out": _x(8, dtype=np.int32)}), "TypeError", "out"),
    Case("tile block_dim 0", lambda: (an.tile, (_x(4), 2), {"block_dim": 0}), "ValueError", "block_dim"),
    Case("tile None", lambda: (an.tile, (None, 2), {}), "TypeError", "None"),
    Case("tile objects", lambda: (an.tile, (np.array([1, "a"], object), 2), {}), "TypeError", "object"),
    Case("tile bogus path on empty", lambda: (an.tile, (_x(0), 2), {"path": "bogus"}), "ValueError", "path"),
    Case("tile output past an array", lambda: (an.tile, (_x(2, 2), (2 ** 40, 2 ** 40)), {}), "ValueError",
         "multiples"),
    Case("repeat output past an array", lambda: (an.repeat, (_x(3), [2 ** 31, 2 ** 31]), {}), "ValueError",
         "multiples"),
    Case("tile platform", lambda: (an.tile, (_x(4), 2), {"platform": "Z9"}), "ValueError", "platform"),
    Case("repeat too few", lambda: (an.repeat, (_x(2, 2), [2]), {}), "ValueError", "repeat"),
    Case("repeat negative", lambda: (an.repeat, (_x(2), [-1, 2]), {}), "ValueError", "repeats"),
    Case("transpose2d 3-D", lambda: (an.transpose2d, (_x(2, 2, 2),), {}), "ValueError", "2-D"),
    Case("transpose2d out shape", lambda: (an.transpose2d, (_x(2, 3),), {"out": _x(2, 3)}), "ValueError", "out"),
    Case("transpose2d complex", lambda: (an.transpose2d, (_x(2, 3, dtype=np.complex128),), {}), "ValueError",
         "complex128"),
    Case("convert src None", lambda: (an.convert_format, (_x(1, 16, 2, 2), None, "NC1HWC0"), {}), "TypeError", "src"),
    Case("convert src int", lambda: (an.convert_format, (_x(1, 16, 2, 2), 123, "NC1HWC0"), {}), "TypeError", "src"),
    Case("convert c0 float", lambda: (an.convert_format, (_x(1, 16, 2, 2), "NCHW", "NC1HWC0"), {"c0": 16.0}),
         "TypeError", "c0"),
    Case("convert c float", lambda: (an.convert_format, (_x(1, 2, 2, 2, 8), "NC1HWC0", "NCHW"), {"c": 2.5}),
         "TypeError", "c "),
    Case("convert c0 5", lambda: (an.convert_format, (_x(1, 16, 2, 2), "NCHW", "NC1HWC0"), {"c0": 5}), "ValueError",
         "C0"),
    Case("convert c too big", lambda: (an.convert_format, (_x(1, 2, 2, 2, 8), "NC1HWC0", "NCHW"), {"c": 17}),
         "ValueError", "c must"),
    Case("convert rank", lambda: (an.convert_format, (_x(16, 2, 2), "NCHW", "NC1HWC0"), {}), "ValueError", "4-D"),
    Case("convert unknown", lambda: (an.convert_format, (_x(1, 16, 2, 2), "NCHW", "NHWC"), {}), "ValueError",
         "NHWC"),
    Case("ttrans_tmp_bytes rank", lambda: (an.ttrans_tmp_bytes, ((4,), np.float16), {}), "ValueError", "dims"),
    Case("ttrans_tmp_bytes negative", lambda: (an.ttrans_tmp_bytes, ((-4, 4), np.float16), {}), "ValueError",
         "shape"),
    Case("ttrans_tmp_bytes c0", lambda: (an.ttrans_tmp_bytes, ((1, 16, 4, 4), np.float16, "NCHW", "NC1HWC0"),
                                         {"c0": -16}), "ValueError", "c0"),
    Case("adamw m is v", _shared_mv, "ParamInvalidError", "m and v"),
    Case("adamw var is m", lambda: (lambda a: _adamw(var=a, m=a))(_x(64)), "ParamInvalidError", "var and m"),
    Case("adamw shifted grad", _shifted_grad, "ParamInvalidError", "grad"),
    Case("adamw huge scalar", lambda: _adamw(beta1_power=10 ** 400), "ParamInvalidError", "beta1_power"),
    Case("adamw int dtype", lambda: _adamw(var=_x(64, dtype=np.int32)), "ParamDtypeError", "dtype"),
    Case("adamw shape", lambda: _adamw(m=_x(63)), "ParamInvalidError", "m"),
    Case("adamw amsgrad without max_grad_norm", lambda: (an.apply_adamw, _adamw()[1], {**_adamw()[2], "amsgrad": True}),
         "ParamNullptrError", "max_grad_norm"),
    Case("adamw two-element scalar", lambda: _adamw(lr=np.ones(2, np.float32)), "ParamInvalidError", "lr"),
    Case("adamw variant", lambda: (an.apply_adamw, (), {**_adamw()[2], "variant": "b3"}), "ParamInvalidError",
         "variant"),
    Case("staged_copy None", lambda: (an.staged_copy, (None,), {}), "TypeError", "None"),
    Case("staged_copy objects", lambda: (an.staged_copy, (np.array([1, "a"], object),), {}), "TypeError", "object"),
    Case("Platform ub_size", lambda: (an.Platform, ("T", "t", 2, 4), {"ub_size": 32}), "ValueError", "ub_size"),
    Case("Platform block_bytes", lambda: (an.Platform, ("T", "t", 2, 4), {"ub_size": 65536, "block_bytes": 48}),
         "ValueError", "block_bytes"),
    Case("Platform cores", lambda: (an.Platform, ("T", "t", 10 ** 8, 4), {"ub_size": 65536}), "ValueError",
         "aic_num"),
    Case("Platform ub_size type", lambda: (an.Platform, ("T", "t", 2, 4), {"ub_size": 65536.0}), "TypeError",
         "ub_size"),
    Case("plan_tile negative shape", lambda: (an.plan_tile, ((-2, 3), (1, 1), 4), {}), "ValueError", "input_shape"),
    Case("plan_tile negative multiple", lambda: (an.plan_tile, ((2, 3), (1, -1), 4), {}), "ValueError", "multiples"),
    Case("plan_tile block_dim 0", lambda: (an.plan_tile, ((2, 3), (1, 1), 4), {"block_dim": 0}), "ValueError",
         "block_dim"),
    Case("plan_adamw negative", lambda: (plan_adamw, (-5, "float32", "seed", False, False, None,
                                                      an.host.get_platform("A2")), {}), "ValueError", "total"),
    Case("kernel missing tensor", lambda: (_two_tensors.launch, (_x(4),), {"block_dim": 1}), "TypeError",
         "arguments"),
    Case("kernel extra tensor", lambda: (_two_tensors.launch, (_x(4), _x(4), _x(4)), {"block_dim": 1}), "TypeError",
         "arguments"),
    Case("kernel objects", lambda: (_two_tensors.launch, (_x(4), np.array([1, "a"], object)), {"block_dim": 1}),
         "TypeError", "object"),
    Case("kernel datatype", lambda: (_two_tensors.launch, (_x(4), _x(4)), {"block_dim": 1, "datatype": 5}),
         "TypeError", "datatype"),
]


def _arrays(value, found):
    if isinstance(value, np.ndarray):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _arrays(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _arrays(v, found)
    return found


def main(names: list[str]) -> None:
    for case in CASES:
        if names and case.name not in names:
            continue
        print(json.dumps({"start": case.name}), flush=True)
        fn, args, kwargs = case.call()
        arrays = _arrays((args, kwargs), [])
        before = [a.copy() for a in arrays]
        row = {"case": case.name, "expected": case.error, "names": case.names, "raised": None, "message": ""}
        try:
            fn(*args, **kwargs)
        except Exception as e:  # the point: which class, which message
            row["raised"] = [c.__name__ for c in type(e).__mro__]
            row["message"] = str(e)
        row["unchanged"] = all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) if a.dtype != object
                               else a.tolist() == b.tolist() for a, b in zip(arrays, before))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
