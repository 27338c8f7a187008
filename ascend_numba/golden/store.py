"""Files of a golden case and the golden cache.

Layout per case (raw little-endian, as CANN ``gen_data.py`` scripts write)::

    <out>/<case>/input/<input>.bin
    <out>/<case>/output/golden.bin          # the op's (first) output
    <out>/<case>/output/golden_<name>.bin   # further outputs (ApplyAdamW: golden_m, golden_v)
    <out>/<case>/case.json                  # shapes, dtypes, seed, attrs, sha256 of every file, version

A case is assembled in a hidden temporary directory and renamed into place, so
an interrupted run never leaves a case that looks complete.  The cache keeps
outputs under a key of (op, attributes, dtype, the inputs' sha256, library
version and source hash).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from .. import __version__
from ..dtypes import dtype_by_name
from ..ops.user import op_source_digest

__all__ = ["sha256_of", "little_endian", "output_file", "case_json", "replace_dir", "work_dir", "cache_key",
           "GoldenCache", "Hashes", "write_case", "default_cache_dir", "sweep_work_dirs"]


def sha256_of(arr: np.ndarray) -> str:
    return hashlib.sha256(little_endian(arr).reshape(-1).view(np.uint8)).hexdigest()


def little_endian(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    if sys.byteorder != "little" and arr.dtype.byteorder in "=>" and arr.itemsize > 1:
        arr = arr.byteswap()
    return arr


def output_file(index: int, name: str) -> str:
    return "golden.bin" if index == 0 else f"golden_{name}.bin"


@functools.cache
def package_source_digest() -> str:
    """The version and a hash of every source file of the package: any change may change a golden,
    so a golden cached by another source is never served (compare ``_numba_compat.jit.compiled_code_digest``,
    which covers only what compiled code depends on)."""
    h = hashlib.sha256(__version__.encode())
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def cache_key(op: str, attrs: dict, dtype: str, input_hashes: dict[str, str]) -> str:
    blob = json.dumps({"op": op, "attrs": attrs, "dtype": dtype, "inputs": input_hashes,
                       "library": package_source_digest(), "op_source": op_source_digest(op)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def default_cache_dir() -> Path:
    env = os.environ.get("ASCEND_NUMBA_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ascend_numba" / "golden"


def _write_bin(path: Path, arr: np.ndarray) -> None:
    little_endian(arr).tofile(path)


# Hidden work directories beside the cases: ".<case>.<pid>.tmp-<random>" while a case is
# assembled, ".<case>.<pid>.old" while a finished case replaces an older one.
_WORK_DIR = re.compile(r"^\.(?P<case>.+)\.(?P<pid>\d+)\.(tmp-.+|old)$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_work_dirs(out_dir: Path, case_names=None) -> list[Path]:
    """Remove the hidden work directories that killed runs left in ``out_dir`` (those of dead
    processes, and with ``case_names`` those of these cases whatever their process); returns them."""
    removed = []
    try:
        entries = list(Path(out_dir).iterdir())
    except OSError:
        return removed
    names = set(case_names or ())
    for entry in entries:
        match = _WORK_DIR.match(entry.name)
        if match and entry.is_dir() and (match["case"] in names or not _alive(int(match["pid"]))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def replace_dir(tmp: Path, final: Path) -> None:
    """Move a finished directory into place, replacing an older one."""
    if final.exists():
        old = final.with_name(f".{final.name}.{os.getpid()}.old")
        os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, final)


class GoldenCache:
    """Outputs on disk by cache key; writes are atomic, a broken entry reads as a miss."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def _dir(self, key: str) -> Path:
        return self.root / key[:2] / key

    def load(self, key: str, shapes_dtype: dict | None = None) -> dict[str, np.ndarray] | None:
        entry = self._dir(key)
        try:
            meta = json.loads((entry / "outputs.json").read_text())
            out = {}
            for name, info in meta.items():
                arr = np.fromfile(entry / f"{name}.bin", dtype=dtype_by_name(info["dtype"])).reshape(info["shape"])
                if sha256_of(arr) != info["sha256"]:
                    return None
                out[name] = arr
            return out
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store(self, key: str, outputs: dict[str, np.ndarray]) -> None:
        final = self._dir(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=final.parent))
        meta = {}
        for name, arr in outputs.items():
            _write_bin(tmp / f"{name}.bin", arr)
            meta[name] = {"shape": list(arr.shape), "dtype": arr.dtype.name, "sha256": sha256_of(arr)}
        (tmp / "outputs.json").write_text(json.dumps(meta))
        replace_dir(tmp, final)


class Hashes:
    """sha256 of each array, computed once, on a thread pool (hashlib releases the GIL)."""

    def __init__(self, pool):
        self._pool = pool
        self._jobs: dict[int, tuple] = {}

    def submit(self, arr: np.ndarray) -> None:
        if id(arr) not in self._jobs:
            self._jobs[id(arr)] = (arr, self._pool.submit(sha256_of, arr))  # keep arr: its id stays unique

    def __call__(self, arr: np.ndarray) -> str:
        self.submit(arr)
        return self._jobs[id(arr)][1].result()


def work_dir(out_dir: Path, name: str) -> Path:
    """A new hidden directory in which case ``name`` is assembled (swept when its writer dies)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{name}.{os.getpid()}.tmp-", dir=out_dir))


def case_json(case_meta: dict, inputs: dict, outputs: dict, dtype_name: str, sums: dict) -> str:
    """case.json: the case, then every file (``inputs``/``outputs``: name -> (relative path,
    shape); ``sums``: relative path -> sha256) and the library that wrote it."""
    def listing(files):
        return {n: {"file": rel, "shape": list(shape), "dtype": dtype_name, "sha256": sums[rel]}
                for n, (rel, shape) in files.items()}
    meta = dict(case_meta, inputs=listing(inputs), outputs=listing(outputs), library="ascend_numba",
                version=__version__, numpy=np.__version__)
    return json.dumps(meta, indent=2, sort_keys=True)


def write_case(out_dir: Path, case_meta: dict, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray],
               dtype_name: str, hashes: Hashes) -> int:
    """Write one case atomically (hashing while writing); returns the bytes written."""
    tmp = work_dir(out_dir, case_meta["name"])
    try:
        (tmp / "input").mkdir()
        (tmp / "output").mkdir()
        ins = {n: (f"input/{n}.bin", a) for n, a in inputs.items()}
        outs = {n: (f"output/{output_file(i, n)}", a) for i, (n, a) in enumerate(outputs.items())}
        files = dict(ins.values()) | dict(outs.values())
        for arr in files.values():
            hashes.submit(arr)
        for rel, arr in files.items():
            _write_bin(tmp / rel, arr)
        sums = {rel: hashes(arr) for rel, arr in files.items()}
        in_shapes, out_shapes = ({n: (rel, a.shape) for n, (rel, a) in group.items()} for group in (ins, outs))
        (tmp / "case.json").write_text(case_json(case_meta, in_shapes, out_shapes, dtype_name, sums))
        replace_dir(tmp, out_dir / case_meta["name"])
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sum(a.nbytes for a in files.values())
