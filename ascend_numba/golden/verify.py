"""Compare a device output with its golden by the CANN precision rules.

fp32: rtol = atol = 1e-4, at least 99.99% of elements within; fp16 and bf16:
1e-3, at least 99.9%; integers and bool: exact.  An element is within when
``|actual - golden| <= atol + rtol * |golden|``, or both are NaN, or both are the
same infinity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RULES", "VerifyReport", "compare"]

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

    @property
    def share(self) -> float:
        return self.within / self.elements if self.elements else 1.0

    def lines(self) -> list[str]:
        status = "PASS" if self.passed else "FAIL"
        out = [f"{status}: {self.within}/{self.elements} elements within tolerance "
               f"({100 * self.share:.4f}%, required {100 * self.required_share:.2f}%)",
               f"max abs error {self.max_abs_error:.6g}, max rel error {self.max_rel_error:.6g}"]
        if self.first_mismatches:
            out.append("first mismatches (index: golden vs actual): " + ", ".join(
                f"{i}: {g!r} vs {a!r}" for i, g, a in self.first_mismatches))
        return out


def compare(golden: np.ndarray, actual: np.ndarray, dtype_name: str, *, show: int = 10) -> VerifyReport:
    """Compare two arrays of the same dtype and size by the rules above."""
    golden, actual = golden.reshape(-1), actual.reshape(-1)
    if golden.size != actual.size:
        raise ValueError(f"sizes differ: golden has {golden.size} elements, actual {actual.size}")
    if dtype_name in RULES:
        rtol, atol, share = RULES[dtype_name]
        g, a = golden.astype(np.float64), actual.astype(np.float64)
        with np.errstate(all="ignore"):
            diff = np.abs(a - g)
            ok = (diff <= atol + rtol * np.abs(g)) | (np.isnan(g) & np.isnan(a)) | (g == a)
            finite = np.isfinite(diff)
            max_abs = float(diff[finite].max()) if finite.any() else 0.0
            rel = diff / np.maximum(np.abs(g), np.finfo(np.float64).tiny)
            max_rel = float(rel[finite].max()) if finite.any() else 0.0
    else:
        share = 1.0
        ok = golden == actual if golden.dtype.kind != "c" else (golden == actual) | (
            np.isnan(golden) & np.isnan(actual))
        diff_idx = ~ok
        if golden.dtype.kind in "iub":
            d = np.abs(golden.astype(np.float64) - actual.astype(np.float64))
            max_abs = float(d.max()) if d.size else 0.0
        else:
            max_abs = float(np.abs(golden - actual)[diff_idx].max()) if diff_idx.any() else 0.0
        max_rel = 0.0 if not diff_idx.any() else float("inf")
    within = int(np.count_nonzero(ok))
    bad = np.flatnonzero(~ok)[:show]
    mismatches = [(int(i), golden[i].item(), actual[i].item()) for i in bad]
    passed = within >= share * golden.size - 1e-9 if share < 1.0 else within == golden.size
    return VerifyReport(passed, int(golden.size), within, max_abs, max_rel, share, mismatches)
