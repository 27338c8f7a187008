// pto-isa's CPU simulator on the TTRANS benchmark's cases (bench/test_bench_ttrans.py builds this
// against the checkout ASCEND_NUMBA_PTO_ISA names; no pto-isa source lives here).  A 2-D fp32
// transpose [h, w] -> [w, h] in 128x128 tiles, TLOAD -> TTRANS (through its tmp tile) -> TSTORE
// per tile, the tiles split in contiguous runs over `blocks` threads, one per block, each with its
// own tiles.  Each thread binds its three tiles (192 KB, the A2 UB) with TASSIGN: pto-isa after
// defdb75f keeps tile data in a per-thread simulated UB that a tile must be assigned into (an
// unassigned tile has no data); before it, a tile holds its data and TASSIGN does nothing.
#include <pto/pto-inst.hpp>

#include <thread>
#include <vector>

using namespace pto;

namespace {
constexpr int kTile = 128;
using TileF = Tile<TileType::Vec, float, kTile, kTile, BLayout::RowMajor>;
using GlobalF = GlobalTensor<float, pto::Shape<-1, -1, -1, -1, -1>, pto::Stride<-1, -1, -1, -1, -1>>;

void run_block(float *out, float *in, int h, int w, int first, int last)
{
    static thread_local TileF src, dst, tmp;  // 192 KB: off the thread's stack
    constexpr int kTileBytes = kTile * kTile * sizeof(float);
    TASSIGN(src, 0);
    TASSIGN(dst, kTileBytes);
    TASSIGN(tmp, 2 * kTileBytes);
    const int col_tiles = w / kTile;
    for (int k = first; k < last; ++k) {
        const int r0 = k / col_tiles * kTile, c0 = k % col_tiles * kTile;
        GlobalF in_tile(in + static_cast<size_t>(r0) * w + c0, pto::Shape(1, 1, 1, kTile, kTile),
                        pto::Stride(1, 1, 1, w, 1));
        GlobalF out_tile(out + static_cast<size_t>(c0) * h + r0, pto::Shape(1, 1, 1, kTile, kTile),
                         pto::Stride(1, 1, 1, h, 1));
        TLOAD(src, in_tile);
        TTRANS(dst, src, tmp);
        TSTORE(out_tile, dst);
    }
}
}  // namespace

// out[w, h] = in[h, w]^T; h and w multiples of 128.
extern "C" void pto_ttrans_f32(float *out, float *in, int h, int w, int blocks)
{
    const int tiles = (h / kTile) * (w / kTile);
    std::vector<std::thread> threads;
    for (int b = 0; b < blocks; ++b) {
        threads.emplace_back(run_block, out, in, h, w, static_cast<int>(static_cast<long>(tiles) * b / blocks),
                             static_cast<int>(static_cast<long>(tiles) * (b + 1) / blocks));
    }
    for (auto &t : threads) {
        t.join();
    }
}
