#!/usr/bin/env bash
# The ARM run (issue #55, docs/guide/supported-versions.md): this checkout on an arm64 Debian
# (bookworm) root filesystem under qemu user-mode emulation, with PyPI's aarch64 wheels.  It
# compares the op/mode bits matrix (scripts/bits_matrix.py) with this host's, file for file, and
# runs the given tests (default: the NaN-policy and bits tests).  Not part of CI: it needs root,
# Debian's and PyPI's package servers, and takes a while (see the supported-versions page).
#
#   sudo scripts/test-aarch64.sh                 # root filesystem in /opt/arm64root, made once
#   ARM_ROOT=/srv/arm64 ARM_TESTS="tests/test_half.py" scripts/test-aarch64.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${ARM_ROOT:-/opt/arm64root}
TESTS=${ARM_TESTS:-"tests/test_nan_policy.py tests/test_vector_bits.py tests/test_pinned_math.py"}
PY=${PYTHON:-.venv/bin/python}

if ! command -v qemu-aarch64-static >/dev/null || ! command -v debootstrap >/dev/null; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user-static debootstrap binfmt-support
fi
[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
if [ ! -x "$ROOT/usr/bin/python3" ]; then
    debootstrap --arch=arm64 --include=python3,python3-venv,python3-pip,ca-certificates bookworm "$ROOT" \
        http://deb.debian.org/debian
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The host's CA certificates (a TLS-inspecting proxy's among them) for pip inside.
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
trap 'umount "$ROOT/proc" 2>/dev/null || true' EXIT

# This checkout's files (committed or not; -p keeps their times, so Numba's cache in the root
# survives a rerun) and this host's sums.
rm -rf "$ROOT/src" && mkdir -p "$ROOT/src"
git ls-files -co --exclude-standard -z | xargs -0 cp --parents -p -t "$ROOT/src"
"$PY" scripts/bits_matrix.py --out "$ROOT/src/bits-host.json"

start=$(date +%s)
chroot "$ROOT" /bin/bash -euo pipefail -c "
    cd /src
    [ -x /venv/bin/python ] || python3 -m venv /venv
    /venv/bin/pip install -q -e '.[test]'
    /venv/bin/python -c 'import platform, numba, numpy, llvmlite; print(platform.machine(), numba.__version__, llvmlite.__version__, numpy.__version__)'
    NUMBA_CACHE_DIR=/tmp/numba-cache /venv/bin/python scripts/bits_matrix.py --compare bits-host.json
    NUMBA_CACHE_DIR=/tmp/numba-cache /venv/bin/python -m pytest -q -p no:cacheprovider $TESTS
"
echo "aarch64 run: $(( $(date +%s) - start )) s"
