"""ApplyAdamW: one AdamW step as the device kernel computes it, bit for bit (fp32, fp16, bf16)."""

import numpy as np

from ...dtypes import HALF_AND_FLOAT
from ..registry import REQUIRED, Case, OpEntry, choice, flag, number
from .api import SCALAR_NAMES, apply_adamw
from .chunks import CHUNKING
from .plan import VARIANTS
from .reference import apply_adamw_reference

# Realistic hyperparameters of step 5 (beta**(t-1) powers); beta2 = 0.99 so that bf16 (where
# 0.999 rounds to 1.0) still has b2o != 1.
SCALARS = dict(beta1_power=0.9 ** 4, beta2_power=0.99 ** 4, lr=1e-3, weight_decay=1e-2, beta1=0.9, beta2=0.99,
               epsilon=1e-8)
KEYS = ((False, False), (False, True), (True, False), (True, True))  # (amsgrad, maximize)


def _inputs(attrs):
    return ("var", "m", "v", "grad") + (("max_grad_norm",) if attrs["amsgrad"] else ())


def _same_shapes(shapes, attrs):
    for name, shape in shapes.items():
        if shape != shapes["var"]:
            return f"inputs.{name}.shape", f"must equal var's shape {list(shapes['var'])}"
    return None


def _call(function, inputs, attrs, options):
    """(var, m, v) updated on copies: the caller's inputs stay as they were."""
    state = [inputs[n].copy() for n in ("var", "m", "v")]
    flags = {k: attrs[k] for k in ("amsgrad", "maximize", "variant")}
    out = function(*state, *(attrs[k] for k in SCALAR_NAMES), inputs["grad"], inputs.get("max_grad_norm"), **flags,
                   **options)
    if options.get("trace"):
        out, trace = out
        return {name: (a, trace) for name, a in zip(("var", "m", "v"), out)}
    return dict(zip(("var", "m", "v"), out))


def _test_inputs(shapes, dtype, rng):
    """Normal values at each tensor's scale (v and max_grad_norm non-negative, as in training)."""
    scale = {"var": 1.0, "m": 0.1, "v": 0.01, "grad": 1.0, "max_grad_norm": 0.01}
    out = {n: (rng.standard_normal(shape) * scale[n]) for n, shape in shapes.items()}
    for n in ("v", "max_grad_norm"):
        if n in out:
            out[n] = np.abs(out[n])
    return {n: a.astype(dtype) for n, a in out.items()}


def _case(name, n, amsgrad, maximize, variant, modes=("plain",), dtype=None):
    return Case(name, {k: (n,) for k in ("var", "m", "v", "grad", "max_grad_norm")[:5 if amsgrad else 4]},
                {**SCALARS, "amsgrad": amsgrad, "maximize": maximize, "variant": variant}, dtype, modes)


# Each dtype in both variants, checked with the key that allocates and runs the most (every
# dtype x key x variant is a specialization of its own, ~6 s to compile: tests/test_adamw*.py
# run all 24 against the reference on special values).
TEST_CASES = (_case("seed-a0m0", 4099, False, False, "seed"),
              _case("a2-a1m1", 4099, True, True, "a2", ("plain", "checked")))
TRACED_CASE = _case("traced", 4099, False, False, "seed", ("traced",), "bfloat16")


ENTRIES = (
    OpEntry("apply_adamw", apply_adamw, apply_adamw_reference, HALF_AND_FLOAT,
            lambda shapes, attrs, itemsize: {n: tuple(shapes["var"]) for n in ("var", "m", "v")},
            inputs=_inputs, outputs=("var", "m", "v"),
            # What training holds: small moments, a second moment never negative, a normal gradient.
            input_defaults={"var": {"normal": [0, 1]}, "m": {"normal": [0, 0.1]}, "v": {"uniform": [0, 0.01]},
                            "max_grad_norm": {"uniform": [0, 0.01]}, "grad": {"normal": [0, 1]}},
            attrs={**{k: (number, REQUIRED) for k in SCALAR_NAMES}, "amsgrad": (flag, False),
                   "maximize": (flag, False), "variant": (choice(*VARIANTS), "seed")},
            check_shapes=_same_shapes, call=_call, test_inputs=_test_inputs, chunking=CHUNKING,
            test_cases=TEST_CASES + (TRACED_CASE,),
            bench_cases={"1M": (_case("1M", 1 << 20, False, False, "seed"),),
                         "16M": (_case("16M", 1 << 24, False, False, "seed"),)},
            # Each dtype x variant x key is a specialization of its own.
            warmup_cases=tuple(_case(f"{variant}-a{int(a)}m{int(m)}-{dtype}", 64, a, m, variant, dtype=dtype)
                               for dtype in HALF_AND_FLOAT for variant in VARIANTS for a, m in KEYS)),
)

__all__ = ["ENTRIES", "SCALARS", "KEYS", "apply_adamw"]
