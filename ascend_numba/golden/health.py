"""A golden's health: how many NaN, infinities and subnormals each input and output holds, and
the warning for outputs that hold NaN or infinity their inputs do not (a golden that compares
equal for the wrong reason, or fails for one)."""

from __future__ import annotations

import numpy as np

from ..dtypes import float_bit_layout

__all__ = ["value_counts", "case_health", "health_warning"]

_BLOCK = 1 << 22  # elements per pass: bounds the temporaries


def value_counts(arr: np.ndarray) -> dict:
    """``{"nan", "+inf", "-inf", "subnormal"}`` counts of a floating array (fp16, bf16, fp32,
    fp64 and complex components), read from the bit patterns; ``{}`` for other dtypes."""
    layout = float_bit_layout(arr.dtype)
    if layout is None:
        return {}
    width, sign, exponent, mantissa = layout
    words = np.ascontiguousarray(arr).reshape(-1).view(f"u{width}")
    u = words.dtype.type
    counts = {"nan": 0, "+inf": 0, "-inf": 0, "subnormal": 0}
    smallest_normal = u(exponent & -exponent)  # the exponent field's lowest bit
    for start in range(0, words.size, _BLOCK):
        w = words[start:start + _BLOCK]
        magnitude = w & u(exponent | mantissa)  # one temporary: the classes are ranges of it
        infinities = int(np.count_nonzero(magnitude == u(exponent)))
        negative_infinities = int(np.count_nonzero(w == u(sign | exponent)))
        counts["nan"] += int(np.count_nonzero(magnitude > u(exponent)))
        counts["+inf"] += infinities - negative_infinities
        counts["-inf"] += negative_infinities
        magnitude -= u(1)  # 0 wraps to the top: subnormals are 1 .. smallest normal - 1
        counts["subnormal"] += int(np.count_nonzero(magnitude < smallest_normal - u(1)))
    return counts


def case_health(inputs: dict, outputs: dict) -> dict:
    """``{"inputs": {name: counts}, "outputs": {name: counts}}`` for case.json."""
    return {"inputs": {n: value_counts(a) for n, a in inputs.items()},
            "outputs": {n: value_counts(a) for n, a in outputs.items()}}


def health_warning(health: dict) -> str | None:
    """What the outputs hold that the inputs do not: NaN, or an infinity (of either sign), or None."""
    def total(side, keys):
        return sum(c.get(k, 0) for c in health[side].values() for k in keys)

    found = []
    for what, keys in (("NaN", ("nan",)), ("infinities", ("+inf", "-inf"))):
        out = total("outputs", keys)
        if out and not total("inputs", keys):
            found.append(f"{out} {what}")
    return f"outputs hold {' and '.join(found)} the inputs do not" if found else None
