"""The op/mode bits matrix: the sha256 of every output of a fixed set of op calls, in every mode,
so two hosts (an x86 and an aarch64 one: ``make test-aarch64``) can be compared file for file.

    python scripts/bits_matrix.py --out bits.json              # write this host's sums
    python scripts/bits_matrix.py --compare bits_x86.json      # and report every difference

Inputs are seeded and hold the values whose bits depend on a host when nothing pins them:
ApplyAdamW steps with infinities, zeros and negative moments (0 * inf, inf - inf, 0 / 0, sqrt of a
negative: NaNs from invalid operations) and NaN inputs of both signs and several payloads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time

import numpy as np

import ascend_numba as an
from ascend_numba.dtypes import dtype_by_name

MODES = {"plain": {}, "checked": {"checked": True}, "interpreted": {"interpret": True}}
N = 4097


def _adamw_inputs(dtype, seed: int):
    rng = np.random.default_rng(seed)
    var, m, v, grad = (rng.normal(size=N).astype(np.float32) for _ in range(4))
    v = np.abs(v)
    special = rng.choice(N, 64, replace=False)
    var[special[:8]], grad[special[8:16]], m[special[16:24]] = np.inf, np.inf, -np.inf
    grad[special[24:32]] = 0.0
    v[special[32:40]] = -1.0  # sqrt of a negative
    payloads = np.array([0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFF800123], np.uint32).view(np.float32)
    var[special[40:48]] = np.resize(payloads, 8)
    grad[special[48:56]] = np.resize(payloads[::-1], 8)
    mgn = np.abs(rng.normal(size=N)).astype(np.float32)
    return [a.astype(dtype) for a in (var, m, v, grad, mgn)]


def cases():
    """(name, function returning the outputs) for the matrix."""
    out = []
    for name in ("float32", "float16", "bfloat16"):
        dtype = dtype_by_name(name)
        # Two of the four keys and both variants: each key compiles a kernel of its own (slow under
        # emulation), and the NaN sources are the same in all of them.
        for variant, amsgrad, maximize in (("seed", False, False), ("a2", True, True)):
            def run(mode, dtype=dtype, variant=variant, amsgrad=amsgrad, maximize=maximize):
                var, m, v, grad, mgn = _adamw_inputs(dtype, 0)
                return an.apply_adamw(var, m, v, 0.9, 0.99, 1e-3, 0.01, 0.9, 0.99, 1e-8, grad,
                                      mgn if amsgrad else None, amsgrad=amsgrad, maximize=maximize,
                                      variant=variant, inplace=False, **MODES[mode])
            out.append((f"adamw_{name}_{variant}_ams{int(amsgrad)}_max{int(maximize)}", run))
        x = np.random.default_rng(1).integers(0, 1 << 16, (33, 65), dtype=np.uint16).view(np.float16)
        if name != "float16":
            x = np.random.default_rng(1).normal(size=(33, 65)).astype(dtype)
        out.append((f"tile_{name}", lambda mode, x=x: (an.tile(x, (2, 3), **MODES[mode]),)))
        out.append((f"transpose2d_{name}", lambda mode, x=x: (an.transpose2d(x, **MODES[mode]),)))
        y = np.random.default_rng(2).normal(size=(2, 19, 5, 7)).astype(dtype)
        out.append((f"nchw_nc1hwc0_{name}", lambda mode, y=y: (an.convert_format(y, "NCHW", "NC1HWC0",
                                                                                  **MODES[mode]),)))
    return out


def sums(modes=tuple(MODES)) -> dict:
    result = {}
    for name, run in cases():
        for mode in modes:
            with np.errstate(all="ignore"):
                outputs = run(mode)
            for k, a in enumerate(outputs):
                result[f"{name}.{mode}.{k}"] = hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write this host's sums (JSON)")
    parser.add_argument("--compare", help="a JSON of sums from another host: report every difference")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated, of " + ", ".join(MODES))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    found = sums(tuple(args.modes.split(",")))
    host = {"machine": platform.machine(), "python": sys.version.split()[0], "seconds": time.perf_counter() - start}
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"host": host, "sums": found}, f, indent=1, sort_keys=True)
    print(f"{len(found)} outputs on {host['machine']} in {host['seconds']:.0f} s")
    if args.compare:
        with open(args.compare) as f:
            other = json.load(f)
        theirs = other["sums"]
        common = sorted(found.keys() & theirs.keys())
        differ = [k for k in common if found[k] != theirs[k]]
        for k in differ:
            print(f"differs: {k}")
        print(f"{len(common) - len(differ)} of {len(common)} outputs identical to {other['host']['machine']}")
        return 1 if differ or not common else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
