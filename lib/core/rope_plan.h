// Internal (lib/core): the validated, flattened description of one RoPE call that the row kernels,
// the parallel split and the reference all read. Built only by lib/api (PrepareRope); kernels trust
// it. The namespace names its reader (kernels); the kernels are listed in lib/kernels/registry.h.
#ifndef POSENC_LIB_CORE_ROPE_PLAN_H_
#define POSENC_LIB_CORE_ROPE_PLAN_H_

#include <algorithm>
#include <cstdint>

#include "posenc/rope.h"

namespace posenc {
namespace kernels {

// One of q / k. `out` equals `in` (with equal strides) when rotating in place.
struct HeadsIO {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t heads = 0;
  int64_t in_stride[3] = {0, 0, 0};   // batch, seq, head (elements)
  int64_t out_stride[3] = {0, 0, 0};  // batch, seq, head (elements)
};

enum class RowSource {
  kCompute,    // cos/sin from inv_freq and the token's position
  kByPosition, // row `position` of cos_rows / sin_rows (a RopeTable or a by-position cache)
  kPerToken,   // row b * seq + s of cos_rows / sin_rows
};

struct RopePlan {
  int64_t batch = 0, seq = 0, head_dim = 0, rotary_dim = 0;
  DType dtype = DType::kF32;
  bool interleaved = false;
  bool inverse = false;
  RotationArithmetic arithmetic = RotationArithmetic::kF64;  // of f32 heads (half: f32)
  HeadsIO io[2];
  int num_io = 0;

  Positions positions;  // posenc's validated copy (api::PositionSnapshot), never the caller's ids

  // M-RoPE (RopeParams::mrope with multi-stream ids): num_streams > 1, stream j's positions in
  // streams[j] (kIds64 over api::StreamSnapshot's copy; `positions` is streams[0]) and the
  // stream of each rotary pair in pair_stream[0, rotary_dim / 2). num_streams == 1: plain RoPE
  // (`positions`; streams is then unused). A pointer into the snapshot rather than a copy: a
  // decode step builds a plan on every call and should not initialise four Positions it never reads.
  int num_streams = 1;
  const Positions* streams = nullptr;
  const uint8_t* pair_stream = nullptr;

  RowSource source = RowSource::kCompute;
  const double* inv_freq = nullptr;  // kCompute: rotary_dim / 2 values
  double attention_factor = 1.0;     // kCompute
  const void* cos_rows = nullptr;    // kByPosition / kPerToken: rows of rotary_dim / 2
  const void* sin_rows = nullptr;
  DType cache_dtype = DType::kF32;   // of cos_rows / sin_rows (tables are f32)
  // kFmaChain from a RopeTable: its lo rows (f32, rows of rotary_dim / 2). Null for caller
  // caches (exact by definition: lo parts 0) and computed rows (the engine gives them).
  const float* cos_lo_rows = nullptr;
  const float* sin_lo_rows = nullptr;

  int64_t tokens() const { return batch * seq; }
};

// Position of token (b, s). The plan's positions were validated (pointers non-null, no overflow)
// and are a copy no one else writes, so the value is the one validation saw.
inline int64_t PositionOf(const Positions& p, int64_t b, int64_t s, int64_t seq) {
  switch (p.kind) {
    case Positions::Kind::kOffset:
      return p.offset + s;
    case Positions::Kind::kPerBatchOffsets:
      return p.batch_offsets[b] + s;
    case Positions::Kind::kIds32:
      return p.ids32[b * seq + s];
    case Positions::Kind::kIds64:
      return p.ids64[b * seq + s];
    case Positions::Kind::kStreamIds32:  // never in a plan: M-RoPE plans hold one kIds64 per
    case Positions::Kind::kStreamIds64:  // stream (RopePlan::streams)
      break;
  }
  return 0;
}

// Out-of-place calls that write at least this many bytes store their f32 outputs with streaming
// (non-temporal) stores where a head's outputs are 16-byte aligned (x86 targets). Such a call's
// inputs plus outputs (>= 14 MiB) no longer stay in a shared 32 MiB L3 from one call to the next,
// so ordinary stores pay a read-for-ownership of each output line from DRAM; streaming skips it.
// Smaller outputs keep ordinary stores: they stay in the cache for the next kernel (attention).
// Chosen from a sweep on a 2-core AMD EPYC (Zen 4, 32 MiB L3; docs/performance.md §3.11):
// streaming took 1.18x the time of ordinary stores at 6.25 MiB of outputs, 0.81x at 7.5 MiB
// and 0.42x at 10 MiB (a 512-token Llama-3-8B prefill chunk). The quick benchmark suite's
// out-of-place rows at 256 and 512 Llama-3-8B tokens (5 and 10 MiB) sit on either side.
constexpr int64_t kStreamingStoreBytes = 7 << 20;

// The bytes of one element of the call's heads (f32: 4; bf16, f16: 2).
inline int64_t ElementBytes(const RopePlan& plan) { return plan.dtype == DType::kF32 ? 4 : 2; }

// The bytes of the heads of q and k the call reads (out of place it writes as many).
inline int64_t HeadBytes(const RopePlan& plan) {
  int64_t bytes = 0;
  for (int i = 0; i < plan.num_io; ++i) {
    bytes += plan.tokens() * plan.io[i].heads * plan.head_dim * ElementBytes(plan);
  }
  return bytes;
}

// Calls whose q and k heads hold at most this many bytes may take a cos/sin row too long for the
// registers in chunks, each over every head of the token (lib/kernels/rope-inl.h,
// RegisterRowTokenHeads): on AVX2 the 16-token Llama-3-8B calls (320 KiB) took 0.80-0.87x the
// time with chunks, the 512-token ones (10 MiB) 1.13-1.29x (docs/performance.md section 3.13);
// 1 MiB lies between, not swept, and is also the size below which calls run serially.
constexpr int64_t kChunkedRegisterRowsMaxBytes = int64_t{1} << 20;

// Whether the call may take register-resident rows in chunks (kChunkedRegisterRowsMaxBytes).
inline bool ChunksRegisterRows(const RopePlan& plan) {
  return HeadBytes(plan) <= kChunkedRegisterRowsMaxBytes;
}

// Calls whose q and k heads hold at least this many bytes ask for the lines of the heads ahead
// while they rotate (lib/kernels/rope-inl.h, HeadPrefetch): PrefetchAheadBytes ahead in the
// loop's order, into the cache level PrefetchToL2 names; on Intel CPUs only (the kernels also
// ask lib/kernels/cpu_features.h, SoftwareHeadPrefetch: on an AMD Zen 4 VM it cost at every
// distance and cache level tried, docs/performance.md section 3.17). Measured on an AVX-512
// Xeon VM (sections 3.15 and 3.16), in-place Llama-3-8B calls, 1 thread:
// - bf16 / f16, 8 KiB ahead into L1: 4096 tokens (40 MiB; 5.9-6.5 ms without) took 0.42-0.60x
//   the time, 2048 tokens (20 MiB) about the same, 512 tokens 0.9-1.1x. Into L2 it was no better.
// - f32, 32 KiB ahead into L2: 3072 tokens (60 MiB) took 0.54-0.67x the time by default (on the
//   fly, kF64) and 0.63-0.69x from a table with kF32, 4096 tokens (80 MiB) 0.54-0.56x and
//   0.52-0.60x, 4096 tokens out of place 0.87x; but at 10-45 MiB the default took 1.09-1.36x.
//   Between 45 and 60 MiB the calls without prefetching fell off a cliff (the VM's last-level
//   cache) at a size that moved between runs. Into L1 (8-128 KiB ahead) f32 gained <= 8 %.
constexpr int64_t kPrefetchHeadsBytes = int64_t{32} << 20;
constexpr int64_t kPrefetchF32HeadsBytes = int64_t{56} << 20;

// Whether the call prefetches its heads (kPrefetchHeadsBytes, kPrefetchF32HeadsBytes).
inline bool PrefetchesHeads(const RopePlan& plan) {
  return HeadBytes(plan) >=
         (plan.dtype == DType::kF32 ? kPrefetchF32HeadsBytes : kPrefetchHeadsBytes);
}

// How far ahead a prefetching call asks for its heads' lines, and whether into L2 rather than L1
// (PrefetchesHeads).
inline int64_t PrefetchAheadBytes(const RopePlan& plan) {
  return plan.dtype == DType::kF32 ? int64_t{32} << 10 : int64_t{8} << 10;
}
inline bool PrefetchToL2(const RopePlan& plan) { return plan.dtype == DType::kF32; }

// PrefetchAheadBytes as a number of heads (of the rotated elements each head's loop reads), >= 1.
inline int64_t PrefetchAheadHeads(const RopePlan& plan) {
  const int64_t head_bytes = plan.rotary_dim * ElementBytes(plan);
  return std::max<int64_t>(1, PrefetchAheadBytes(plan) / std::max<int64_t>(1, head_bytes));
}

// The elements from a head of io's input to the same head of the next token: the next position,
// or with one position per sequence the next batch entry.
inline int64_t NextTokenStride(const RopePlan& plan, const HeadsIO& io) {
  return plan.seq > 1 ? io.in_stride[1] : io.in_stride[0];
}

// Whether the call writes its outputs out of place and at least kStreamingStoreBytes of them.
inline bool StreamsOutputs(const RopePlan& plan) {
  for (int i = 0; i < plan.num_io; ++i) {
    if (plan.io[i].in == plan.io[i].out) return false;
  }
  return HeadBytes(plan) >= kStreamingStoreBytes;
}

// Whether out-of-place f32 heads of the call ask for the next head's output lines while they
// rotate one (lib/kernels/rope-inl.h, HeadPrefetch::out_next_head; the kernel applies it to the
// tensors written out of place): not when the call streams its outputs. On the AVX-512 Xeon VM
// (docs/performance.md section 3.15), 16 Llama-3-8B tokens with outputs 16 bytes past a 64-byte
// boundary (numpy's alignment) took 18.9 -> 9.1 us with kF32 (aligned 8.3 -> 8.2; AVX2 16.2 ->
// 9.8), 64 tokens 110 -> 70 us; kF64 gained above 1 MiB (64 tokens 83 -> 71 us) but lost below
// (16 tokens 11.4 -> 12.3 us), hence its condition. kFmaChain (f32 lanes) follows kF32's rule
// (not measured apart).
inline bool PrefetchesOutputs(const RopePlan& plan) {
  if (plan.dtype != DType::kF32 || StreamsOutputs(plan)) return false;
  return plan.arithmetic != RotationArithmetic::kF64 ||
         HeadBytes(plan) > kChunkedRegisterRowsMaxBytes;
}

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_CORE_ROPE_PLAN_H_
