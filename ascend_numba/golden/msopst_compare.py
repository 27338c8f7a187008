"""``ascend-numba msopst compare``: the device's outputs against the goldens ``msopst gen`` wrote,
element by element as msOpST compares them (MindStudio msopgen at 685d183,
``tools/msopst/st/interface/compare_data.py``): an element errs when its relative difference (its
absolute one below ``threshold1``) passes ``threshold1``; an output passes when at most
``threshold2`` of its elements err and none errs by ``MAX_RELATIVE`` or more."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..dtypes import dtype_by_name
from .msopst_cases import TYPES, Subcase, expect_file, msopst_threshold, output_file

__all__ = ["compare_output", "compare_msopst", "MAX_RELATIVE"]

MAX_RELATIVE = 0.1  # msOpST's max_diff_hd: any element erring by this much fails the output


def _relative_errors(actual: np.ndarray, expect: np.ndarray, threshold1: float) -> np.ndarray:
    """msOpST's per-element error (its result compare, in float32): the absolute difference where
    it is below ``threshold1``, else the difference over ``max(|actual|, |expect|, 2**-14 /
    threshold1)`` (+1e-9).  NaN against a number, and a NaN or infinity against another value,
    count as an error of infinity (msOpST drops them from the count; a golden tool should not)."""
    a, e = actual.astype(np.float32), expect.astype(np.float32)
    with np.errstate(all="ignore"):
        diff = np.abs(a - e)
        floor = np.float32((1.0 / (1 << 14)) / threshold1) if threshold1 > 0 else np.float32(np.inf)
        scale = np.maximum(np.maximum(np.abs(a), np.abs(e)), floor) + np.float32(1e-9)
        err = np.where(diff < threshold1, diff, diff / scale)
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        return np.where(same, 0.0, np.where(np.isfinite(err), err, np.inf))


def compare_output(actual: np.ndarray, expect: np.ndarray, threshold: tuple) -> dict:
    """One output by msOpST's precision standard: an element errs when its error (see
    :func:`_relative_errors`; integers and bool: any difference) exceeds ``threshold[0]``; the
    output passes when the erring share is at most ``threshold[1]`` and no error reaches 0.1."""
    t1, t2 = threshold
    flat_a, flat_e = actual.reshape(-1), expect.reshape(-1)
    if flat_e.dtype.kind in "iub":
        errors = (flat_a != flat_e).astype(np.float64)
        erring = errors > 0
    else:
        errors = _relative_errors(flat_a, flat_e, t1)
        erring = errors > t1
    count = int(np.count_nonzero(erring))
    ratio = count / flat_e.size if flat_e.size else 0.0
    max_error = float(errors.max()) if errors.size else 0.0
    passed = ratio <= t2 and not (count and errors[erring].max() >= MAX_RELATIVE) if flat_e.dtype.kind not in "iub" \
        else count == 0
    first = int(np.flatnonzero(erring)[0]) if count else None
    return {"status": "pass" if passed else "fail", "error_ratio": ratio, "max_error": max_error,
            "erring_elements": count, "elements": int(flat_e.size), "first_mismatch": first}


def compare_msopst(subcases: list[Subcase], out_dir, actual_dir, threshold: tuple | None = None) -> dict:
    """Compare the device outputs under ``actual_dir`` (msOpST's ``<subcase>_output<i>_<type>.bin``,
    anywhere below it) with the goldens ``gen_msopst`` wrote under ``out_dir``: a report per
    subcase and a summary.  A missing or short output fails its subcase."""
    found = {}
    for path in Path(actual_dir).rglob("*.bin"):
        found.setdefault(path.name, path)
    report, failed = {}, 0
    for sub in subcases:
        outputs, status = [], "pass"
        t = msopst_threshold(sub, threshold)
        for k, desc in enumerate(sub.outputs):
            dtype = dtype_by_name(TYPES[desc["type"]])
            dtype = dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype
            expect_path = Path(out_dir) / sub.op.lower() / "data" / expect_file(sub, k)
            actual_path = found.get(output_file(sub, k))
            entry = {"output": k, "expect": str(expect_path), "actual": str(actual_path) if actual_path else None}
            if not expect_path.is_file():
                entry.update(status="fail", problem=f"no golden {expect_path} (run msopst gen with the same cases)")
            elif actual_path is None:
                entry.update(status="fail", problem=f"no device output {output_file(sub, k)} under {actual_dir}")
            else:
                expect = np.fromfile(expect_path, dtype)
                actual = np.fromfile(actual_path, dtype)
                if actual.size != expect.size:
                    entry.update(status="fail", problem=f"{actual.size} elements, the golden has {expect.size}")
                else:
                    entry.update(compare_output(actual, expect, t))
            outputs.append(entry)
            if entry["status"] != "pass":
                status = "fail"
        failed += status != "pass"
        report[sub.name] = {"case_name": sub.case_name, "op": sub.op, "status": status, "error_threshold": list(t),
                            "outputs": outputs,
                            "error_ratio": max((o.get("error_ratio", 1.0) for o in outputs), default=0.0),
                            "max_error": max((o.get("max_error", math.inf) for o in outputs), default=0.0),
                            "first_mismatch": next((o.get("first_mismatch") for o in outputs
                                                    if o.get("first_mismatch") is not None), None)}
    return {"subcases": report, "summary": {"subcases": len(subcases), "passed": len(subcases) - failed,
                                            "failed": failed}}
