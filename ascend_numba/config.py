"""Tunables: every number chosen by measurement rather than by the device, in one place.

Each says what it trades and the measurement behind it (this project's 2-core x86 machines;
``bench/`` re-measures the effects).  Values the device fixes (block size, UB size, lanes) live
in :mod:`ascend_numba.host.platform`; layouts (trace rows, lane state) beside their readers.
Compiled code reads these as compile-time constants: changing one recompiles (the cache tag
covers this file).
"""

# ---- copies (kernels/primitives/dma.py) ---------------------------------------------------------

# Below this many bytes a copy is a byte loop instead of a libc memmove call.  Measured (a
# micro-benchmark of the two intrinsics, copies at 59 offsets of a 4 KB buffer, 2026-12-01): within
# a nanosecond of each other from 4 to 48 bytes (1.1-2.7 ns), the byte loop 1.5x slower at 128.
SMALL_COPY = 32

# UB -> GM rows shorter than this are written with plain stores even in a streaming launch: a row
# must cover whole 64-byte lines for non-temporal stores to pay, and a line written by both kinds
# of store cost 5x (a9e15e0, a misaligned ``out=``).  Not re-measured since.
STREAM_MIN_ROW_BYTES = 256

# Launches whose GM tensors add up to this many bytes write GM with streaming (non-temporal)
# stores: output that big would only push the inputs and the UB out of the CPU caches.  A 4096^2
# fp32 transpose (128 MB of GM) went from 12 to 7.5 ms with them (a9e15e0).
STREAM_BYTES = 32 << 20

# In such a launch a gapless UB -> GM copy of at least this many bytes is streamed too, when it
# covers whole lines (starts on one, a multiple of 64 bytes long): same-process A/B, ms, 4 runs
# each: NC1HWC0 -> FRACTAL_Z 13.3-19.4 -> 9.7-11.3, GNC1HWC0 -> FRACTAL_Z 6.0-7.6 -> 4.3-4.5, Tile
# big_2D 22.4-22.8 -> 14.6-15.9, the rest within the noise.  Streaming every gapless copy, partial
# lines and short rows included, had made Tile's small_inner 2.0 -> 9.4 ms (#54's second round).
STREAM_MIN_GAPLESS_BYTES = 16 << 10

# ---- kernel prints (kernels/primitives/debug.py) ------------------------------------------------

# Words (int64) of each lane's print row: a kprint takes 4 + its format's words + its arguments, a
# dump_tensor 6 + a few + its elements.  512 KB a lane, allocated only for kernels that print.
KERNEL_PRINT_WORDS = 1 << 16

# ---- Tile (ops/tile/kernel.py) -------------------------------------------------------------------

# SplitMult lanes double their row in UB only this far: lanes that share a host thread each redo
# their doubling one after another (on the device they run side by side), and past a few KB a
# bigger doubled block saves fewer writes than the doubling costs (c5153a4: the SplitMult bench
# cases were slowest with the whole buffer, fastest at 8 KB).
SPLIT_MULT_DOUBLING_BYTES = 8192

# ---- ApplyAdamW (ops/adamw/kernel.py) ------------------------------------------------------------

# The vector ops of one tile's Compute over which the next tile's inputs are preloaded: each op
# fetches 1/COMPUTE_OPS of them.  The Compute has 16-19 ops; preloading over them took 16M fp32
# from ~31 to ~26 ms and bf16 from ~31 to ~28 ms with op-by-op Compute (6c2e65d, same-process A/B).
# With the fused Compute (one pass, a fraction of the copies' time) a spread of 1, 16 or 10^5
# measured the same within this machine's noise at 16M fp32 and fp16.  The fused tile program
# (CopyIn, Compute and CopyOut in one pass) streams its inputs itself and does not preload: only
# the op-by-op path (fused=False) does.
COMPUTE_OPS = 16

# Tile fusion (kernels.vector_program): a fused program's pass takes its tiles in blocks of this
# many elements, advancing the lane's preload between blocks (a branch inside the element loop kept
# it from vectorizing: 10.7 -> 25 ms at 16M fp32).  The part block at the end runs the same loops
# over its length.  1024 and 2048 measured the same as 512 within this machine's noise (ApplyAdamW
# 16M, three dtypes, three alternating runs).
FUSION_BLOCK = 512
# A fused pass over fp16 tiles rounds after every op (two conversions), one long chain of
# dependent instructions per element, which the CPU cannot overlap enough on its own: the pass
# runs this many elements' chains side by side (``_i + k * FUSION_BLOCK // FUSION_INTERLEAVE_F16``).
# ApplyAdamW 16M fp16, its Compute alone / the op (ms, one run each, fresh caches): 1: 12.6 / 16.1,
# 4: 9.3-9.5 / 12.9-13.1, 8: 7.5-8.8 / 11.3-12.2, 16: 9.1 / 13.7.  fp32 and bf16 programs (no fp16
# rounding) got slower interleaved (16M fp32 Compute 2.8 -> 3.2 at 2, 4.0 at 4) and stay at 1.
FUSION_INTERLEAVE_F16 = 8

# ---- launches (kernels/launch.py) ----------------------------------------------------------------

# Events logged per lane in a trace; later ones are only counted.  A size budget, not a speed:
# a trace row is 8 * (17 + 10 * capacity) bytes per lane: 4096 makes a 48-lane trace 16 MB.
TRACE_CAPACITY = 4096

# A plain or traced launch moving less GM data than this runs its lanes on the calling thread, with
# no parallel region (kernels/threads.py).  A region waits for every thread of its team, and with
# one or both CPUs busy (here: a test run beside it) a descheduled worker cost 8.0 ms a launch
# (2026-12-04, Tile fp32 x (2, 1) and ApplyAdamW fp32, 1 thread / 2 threads, ms: Tile 0.8 MB
# 0.16 / 7.99, 12 MB 2.76 / 8.00, 24 MB 5.20 / 8.00; ApplyAdamW 3.5 MB 1.40 / 7.96, 14 MB 5.17 / 8.00).
# Quiet, two threads take ApplyAdamW 28 MB from ~9 to ~3.7 ms; Tile gains little below ~6 MB.  At
# 16 MB a launch is long enough that a stall costs at most about its own time.
SERIAL_LAUNCH_BYTES = 16 << 20

# Launches from this many bytes up to SERIAL_LAUNCH_BYTES run in parallel too when the CPUs they
# would use were idle of other processes' work over the last sample (kernels/threads.py): quiet, a
# 1024^2 fp32 transpose2d (8 MiB) takes 0.74 ms on one thread and 0.43 on two (bench/load.py);
# Tile gains 15% at 4 MiB (the threshold table in docs/benchmarks.md), none at 1 MiB.
IDLE_PARALLEL_BYTES = 4 << 20
# The sample: the CPU time other processes took on this process's CPUs (/proc/stat less
# /proc/self/stat) over at least this many seconds, re-read by the first launch after it ends (two
# reads, ~40 us).  The kernel counts CPU time in 10 ms ticks: a shorter window reads too coarsely.
IDLE_SAMPLE_SECONDS = 0.2
# Idle: other processes took at most this many CPUs beyond the ones the launch leaves them.
IDLE_OTHERS_CPUS = 0.25

# ---- host-side memory (memory.py, ops) -----------------------------------------------------------

# Results of at least this many bytes come from the output pool: below it glibc's heap already
# returns warm pages, and a lease costs ~10 us (f95f645).  A fresh 64 MB result costs ~5 ms of
# page faults, as much as the kernel that fills it.
MIN_POOLED_BYTES = 32 << 20

# Pooled results start on a 64-byte line from this size, so streamed rows are whole lines as often
# as the layout allows; aligning cost ~2 us a call, and streaming needs 32 MB launches (3e2df76).
ALIGNED_RESULT_BYTES = 4 << 20

# Problems (plan, constants, prepared launch) each op remembers, for harnesses that repeat calls
# on the same shapes: a remembered call skips ~10 us of checks and planning (e0f4e6d: the 1 MB
# int8 Tile cases were ~10 us of Python over a ~20 us kernel).
PROBLEM_CACHE_SIZE = 1024

# Checked launches keep their zeroed owner/reader/garbage maps up to this many bytes for the next
# launch (a fresh 16 MB map costs 0.84 ms of page faults, clearing a reused one 0.19 ms); larger
# maps are allocated per launch rather than held for the life of the process.
CHECK_MAP_POOL_BYTES = 256 << 20

# The user's own op modules (ascend_numba.ops.user): module names in this environment variable,
# comma-separated, and entry points in this group.
OPS_ENV = "ASCEND_NUMBA_OPS"
OPS_ENTRY_POINTS = "ascend_numba.ops"
