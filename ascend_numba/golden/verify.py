"""Compare a device output with its golden by the CANN precision rules.

fp32: rtol = atol = 1e-4, at least 99.99% of elements within; fp16 and bf16:
1e-3, at least 99.9%; integers and bool: exact.  An element is within when
``|actual - golden| <= atol + rtol * |golden|``, or both are NaN, or both are the
same infinity.

The statistics say what differs: the largest absolute and relative error over elements that
are finite on both sides (relative where the golden is not 0), the largest distance in units in
the last place for floating types, and apart from those the count of NaN mismatches (NaN on one
side only) and of infinity mismatches (an infinity on one side, not the same on the other).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dtypes import device_dtype_name

__all__ = ["RULES", "VerifyReport", "compare", "assert_golden"]

RULES = {  # dtype kind -> (rtol, atol, share of elements that must be within)
    "float32": (1e-4, 1e-4, 0.9999), "float64": (1e-4, 1e-4, 0.9999),
    "float16": (1e-3, 1e-3, 0.999), "bfloat16": (1e-3, 1e-3, 0.999),
}


@dataclass
class VerifyReport:
    passed: bool
    elements: int
    within: int
    max_abs_error: float
    max_rel_error: float
    required_share: float
    first_mismatches: list
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    max_ulp: int | None = None  # floating types: over elements finite on both sides
    notes: list = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.within / self.elements if self.elements else 1.0

    def lines(self) -> list[str]:
        status = "PASS" if self.passed else "FAIL"
        stats = f"max abs error {self.max_abs_error:.6g}, max rel error {self.max_rel_error:.6g}"
        if self.max_ulp is not None:
            stats += f", max {self.max_ulp} ULP"
        out = [f"{status}: {self.within}/{self.elements} elements within tolerance "
               f"({100 * self.share:.4f}%, required {100 * self.required_share:.2f}%)", stats]
        if self.nan_mismatches or self.inf_mismatches:
            out.append(f"{self.nan_mismatches} NaN mismatches (NaN on one side only), {self.inf_mismatches} "
                       "infinity mismatches (not in the error figures above)")
        if self.first_mismatches:
            out.append("first mismatches (index: golden vs actual): " + ", ".join(
                f"{i}: {g!r} vs {a!r}" for i, g, a in self.first_mismatches))
        return out


def _ordered(bits: np.ndarray, width: int) -> np.ndarray:
    """IEEE bit patterns as integers whose difference is the distance in ULP."""
    signed = bits.view(f"i{width}").astype(np.int64)
    return np.where(signed < 0, np.int64(-(1 << (8 * width - 1))) - signed, signed)


def compare(golden: np.ndarray, actual: np.ndarray, dtype_name: str, *, show: int = 10) -> VerifyReport:
    """Compare two arrays of the same dtype and size by the rules above."""
    golden, actual = golden.reshape(-1), actual.reshape(-1)
    if golden.size != actual.size:
        raise ValueError(f"sizes differ: golden has {golden.size} elements, actual {actual.size}")
    nan_bad = inf_bad = 0
    max_ulp = None
    if golden.dtype.kind in "iub":
        g, a = golden.astype(np.float64), actual.astype(np.float64)
    else:
        g, a = (golden, actual) if golden.dtype.kind == "c" else (golden.astype(np.float64), actual.astype(np.float64))
    with np.errstate(all="ignore"):
        g_nan, a_nan = np.isnan(g), np.isnan(a)
        same = (g == a) | (g_nan & a_nan)
        nan_bad = int(np.count_nonzero(g_nan ^ a_nan))
        g_inf, a_inf = np.isinf(g), np.isinf(a)
        inf_bad = int(np.count_nonzero((g_inf | a_inf) & ~same & ~(g_nan | a_nan)))
        finite = np.isfinite(g) & np.isfinite(a)
        diff = np.abs(a - g)
        max_abs = float(diff[finite].max()) if finite.any() else 0.0
        nonzero = finite & (g != 0)
        max_rel = float((diff[nonzero] / np.abs(g[nonzero])).max()) if nonzero.any() else 0.0
        if dtype_name in RULES:
            rtol, atol, share = RULES[dtype_name]
            ok = (diff <= atol + rtol * np.abs(g)) | same
        else:
            share = 1.0
            ok = same
    if dtype_name in RULES and finite.any():  # the floating types: ULP over their bit patterns
        width = golden.dtype.itemsize
        gb, ab = (x.view(f"u{width}") for x in (golden, actual))
        max_ulp = int(np.abs(_ordered(ab[finite], width) - _ordered(gb[finite], width)).max())
    within = int(np.count_nonzero(ok))
    bad = np.flatnonzero(~ok)[:show]
    mismatches = [(int(i), golden[i].item(), actual[i].item()) for i in bad]
    passed = within >= share * golden.size - 1e-9 if share < 1.0 else within == golden.size
    return VerifyReport(passed, int(golden.size), within, max_abs, max_rel, share, mismatches, nan_bad, inf_bad,
                        max_ulp)


def assert_golden(actual, golden, dtype: str | None = None) -> VerifyReport:
    """Assert a device output equals its golden under the CANN precision rules (see
    :func:`compare`): raises AssertionError listing the statistics and the first mismatches,
    else returns the report.  ``dtype``: the element type's name (default: ``golden``'s)."""
    actual, golden = np.asarray(actual), np.asarray(golden)
    if actual.shape != golden.shape:
        raise AssertionError(f"shapes differ: actual {actual.shape}, golden {golden.shape}")
    name = dtype or device_dtype_name(golden.dtype)
    report = compare(golden, actual.astype(golden.dtype, copy=False) if actual.dtype != golden.dtype else actual,
                     name)
    if not report.passed:
        raise AssertionError("\n".join(report.lines()))
    return report
