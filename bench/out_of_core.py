"""Golden cases larger than memory, measured (not part of `make bench`: each writes 18-28 GB).

    python bench/out_of_core.py --out /big/disk/dir [--case adamw|tile|both]

For each case: `ascend-numba golden` under `/usr/bin/time -v` (wall time, peak RSS), the bytes
written, then `dd` writing the same number of bytes to the same directory twice: through the page
cache (plain `dd`) and with `oflag=direct` (past it, as a chunked case writes), and the ratios.
Each case's directory is removed after it is measured; `sync` runs before every measurement.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ADAMW = {"name": "adamw_fp32_2e30", "op": "apply_adamw", "dtype": "float32", "seed": 3,
         "inputs": {"var": {"shape": [1 << 30]}, "m": {"shape": [1 << 30], "dist": {"normal": [0, 0.1]}},
                    "v": {"shape": [1 << 30], "dist": {"uniform": [0, 0.01]}}, "grad": {"shape": [1 << 30]}},
         "attrs": {"beta1_power": 0.9, "beta2_power": 0.99, "lr": 0.001, "weight_decay": 0.01, "beta1": 0.9,
                   "beta2": 0.99, "epsilon": 1.0e-8}}
# 1 GiB in, 16 GiB out: 2,147,352,576 elements, under the device's int32 element limit (only
# 8-byte elements reach 16 GiB there).
TILE = {"name": "tile_fp64_16g", "op": "tile", "dtype": "float64", "seed": 1,
        "inputs": {"x": {"shape": [8192, 16383]}}, "attrs": {"reps": [2, 8]}}
CASES = {"adamw": ADAMW, "tile": TILE}


def _golden(case: dict, out: Path) -> dict:
    path = out / f"{case['name']}.yaml"
    path.write_text(yaml.safe_dump({"cases": [case]}))
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "ascend_numba.cli", "golden", str(path),
               "--out", str(out / "golden"), "--no-cache"]
    subprocess.run(["sync"], check=True)  # no dirty pages of an earlier run in the way, as for dd
    run = subprocess.run(command, capture_output=True, text=True)
    report = run.stderr
    if run.returncode:
        raise SystemExit(f"{case['name']}: ascend-numba golden failed:\n{report}")
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", report).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", report).group(1)
    seconds = sum(float(part) * 60 ** i for i, part in enumerate(reversed(wall.split(":"))))
    written = sum(p.stat().st_size for p in (out / "golden" / case["name"]).rglob("*.bin"))
    shutil.rmtree(out / "golden")
    return {"seconds": seconds, "rss_gb": rss_kb / 2**20, "bytes": written}


def _dd(nbytes: int, out: Path, *flags: str) -> float:
    target = out / "dd.bin"
    subprocess.run(["sync"], check=True)
    start = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={target}", "bs=16M", f"count={nbytes >> 24}", *flags], check=True,
                   capture_output=True)
    seconds = time.perf_counter() - start
    target.unlink()
    subprocess.run(["sync"], check=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="a directory on the disk to measure")
    parser.add_argument("--case", choices=[*CASES, "both"], default="both")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print("| case | bytes | golden s | golden GB/s | peak RSS GB | dd s | dd GB/s | dd direct s | dd direct GB/s "
          "| golden / dd | golden / dd direct |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in (CASES if args.case == "both" else [args.case]):
        with tempfile.TemporaryDirectory(dir=args.out) as tmp:
            golden = _golden(CASES[name], Path(tmp))
            dd = _dd(golden["bytes"], Path(tmp))
            direct = _dd(golden["bytes"], Path(tmp), "oflag=direct")
        rate, dd_rate, direct_rate = (golden["bytes"] / s / 1e9 for s in (golden["seconds"], dd, direct))
        print(f"| {CASES[name]['name']} | {golden['bytes'] / 2**30:.1f} GiB | {golden['seconds']:.1f} | {rate:.2f} | "
              f"{golden['rss_gb']:.2f} | {dd:.1f} | {dd_rate:.2f} | {direct:.1f} | {direct_rate:.2f} | "
              f"{rate / dd_rate:.2f}x | {rate / direct_rate:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
