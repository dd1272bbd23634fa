// posenc/rope.h: rotary position embeddings (RoPE) applied to q and k in one call.
//
// Math (docs/math.md). For each token at integer position p and each rotated pair i < r/2
// (r = rotary_dim):
//   theta   = p * inv_freq[i]            (double, one rounding)
//   c, s    = m * cos(theta), m * sin(theta)   (m = attention factor; rounded once to f32)
//   (x, y) -> (x*c - y*s, x*s + y*c)     forward;  inverse uses -theta.
// Pairs are (x[i], x[i + r/2]) for PairLayout::kHalf (GPT-NeoX / HF rotate_half) and
// (x[2i], x[2i+1]) for kInterleaved (GPT-J / Meta). Elements [r, head_dim) pass through.
//
// Contracts:
// - Accuracy, one measure for every dtype (reference::MaxPairUlpError): for each rotated pair
//   with inputs (x, y) and M = max(|x|, |y|), each output differs from the exact result (the
//   rotation by the double angle with exact cos and sin, as posenc::reference computes it) by
//   less than B ulp of the output's type at M, ulp_T(M):
//     B = 2 (f32, RotationArithmetic::kF64 and kFmaChain), 3 (f32, kF32), 1 + 3*2^-13 (f16),
//     1 + 3*2^-16 (bf16)
//   (bf16 / f16: f32 arithmetic, the result rounded once to nearest even; the last rounding alone
//   can cost a full ulp_T(M) when the output lies in the binade above M, hence the small excess
//   over 1). Holds for |attention factor| <= 1 (caller caches: |cos|, |sin| <= 1), angles below
//   2^29 (positions up to 2^24 with inv_freq <= 1 are tested) and 2M at most the type's largest
//   finite value; proof in docs/math.md §9 (and lib/kernels/rope-inl.h). For angles between 2^29
//   and 2^50 a bound that grows with the angle holds instead (f32: B + 2^-28 (|angle| + 81) ulp;
//   docs/math.md §9.4). Outside that domain results follow IEEE arithmetic (overflow gives +-Inf,
//   Inf and NaN inputs propagate) without a bound.
// - Special values: every NaN a rotation produces is the canonical quiet NaN (f32 0x7FC00000,
//   f16 0x7E00, bf16 0x7FC0); elements past rotary_dim are copied bit for bit.
// - Reproducibility: the same inputs give bitwise identical outputs on every SIMD target and for
//   any thread count; on-the-fly, table and reference-free paths share one cos/sin engine.
// - Errors: every argument is validated before anything is written; a failed call leaves all
//   outputs untouched and returns a Status naming the argument and its value. Inputs that share
//   memory with an output (position ids, inv_freq, caches) are rejected; the position ids are
//   copied once at the start of the call, and only the copy is used.
#ifndef POSENC_ROPE_H_
#define POSENC_ROPE_H_

#include "posenc/export.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "posenc/aligned.h"
#include "posenc/positions.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {

// kFromConfig (the default of RopeParams::pairs) means: with a model config (ApplyRope(tensors,
// config or model, ...)) the config's layout; without one, kHalf. kHalf and kInterleaved given
// explicitly override a config's layout.
enum class PairLayout { kHalf = 0, kInterleaved = 1, kFromConfig = 2 };
POSENC_API const char* PairLayoutName(PairLayout pairs);  // "half", "interleaved", "from_config"

// Multimodal RoPE (M-RoPE): which position stream each rotary pair i < rotary_dim / 2 takes its
// angle from; angle_i = p[stream(i)] * inv_freq[i], everything else as plain RoPE.
//   sectioned (Qwen2-VL, Qwen2.5-VL; HF apply_multimodal_rotary_pos_emb): section j covers the
//     next section[j] pairs: pairs [0, s0) stream 0 (t), [s0, s0 + s1) stream 1 (h), ...
//   interleaved (Qwen3-VL; HF Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope): stream 0
//     everywhere except pair i with i % n == j and i < n * section[j] (j >= 1, n = num_sections),
//     which takes stream j: for n = 3, h on pairs 1, 4, 7, ... and w on 2, 5, 8, ...
// section[] sums to rotary_dim / 2 either way. Positions are kStreamIds32/64 with
// streams == num_sections, or any 1-D kind: then every stream equals that position (text-only
// tokens) and the result is plain RoPE bit for bit. With equal streams a token's cos/sin row is
// bitwise the one plain RoPE uses, on every target. Not with CosSinCache::Kind::kPerToken
// (its rows already are per-token angles).
struct MRopeSections {
  const int64_t* section = nullptr;  // num_sections values >= 0 (read during the call only)
  int64_t num_sections = 0;          // 0: plain RoPE; else 1..4 (the number of streams)
  bool interleaved = false;
  bool present() const { return num_sections != 0; }
};

// Frequencies: inv_freq[i] = base^(-2i/r), or an explicit array of r/2 doubles.
struct Frequencies {
  double base = 10000.0;
  const double* inv_freq = nullptr;  // if set, used instead of base; length inv_freq_len
  int64_t inv_freq_len = 0;
  double attention_factor = 1.0;     // multiplies cos and sin (YaRN mscale, LongRoPE)
};

class RopeTable;

// Caller-owned cos/sin caches (f32, bf16 or f16; ONNX RotaryEmbedding / FlashInfer style), used as given: one
// value per pair, no attention factor applied by posenc.
struct CosSinCache {  // dtype f32, bf16 or f16 (independent of q/k's dtype)
  enum class Kind {
    kByPosition,  // cos/sin [rows, r/2]; token (b, s) reads row position(b, s)
    kPerToken,    // cos/sin [batch, seq, r/2]; token (b, s) reads row b * seq + s; positions unused
  };
  Kind kind = Kind::kByPosition;
  const void* cos = nullptr;
  const void* sin = nullptr;
  DType dtype = DType::kF32;
  int64_t rows = 0;  // kByPosition: number of rows (max_pos); kPerToken: ignored (batch * seq)
};

// Where cos/sin come from.
struct CosSinSource {
  enum class Kind { kOnTheFly, kTable, kCache };
  Kind kind = Kind::kOnTheFly;
  const RopeTable* table = nullptr;  // kTable
  CosSinCache cache;                 // kCache

  static CosSinSource OnTheFly() { return CosSinSource(); }
  static CosSinSource Table(const RopeTable* t) {
    CosSinSource s;
    s.kind = Kind::kTable;
    s.table = t;
    return s;
  }
  static CosSinSource Cache(const CosSinCache& c) {
    CosSinSource s;
    s.kind = Kind::kCache;
    s.cache = c;
    return s;
  }
};

// Threading. Work is split over tokens with oneTBB; a call whose bytes are below an internal
// threshold (a decode step) runs on the calling thread without spawning tasks. Results are
// bitwise identical for every setting.
struct Execution {
  int max_threads = 0;  // 0: the current TBB arena's concurrency; 1: serial on the calling thread
};

// How the rotation itself is evaluated (cos/sin are always exact f32 roundings of the double
// values). Each is bitwise reproducible across targets and thread counts.
enum class RotationArithmetic {
  kF64,  // promote, rotate in double, round once: < 2 ulp of max(|x|, |y|). The default.
  kF32,  // f32 products and sum: < 3 ulp; about 2x faster while the data sit in cache (the same
         // speed once DRAM bandwidth limits both).
  // f32 only, with the cos / sin rows split into f32 hi and lo parts: each output is a chain of
  // f32 products and fused multiply-adds, < 2 ulp as kF64 (docs/math.md section 9.7; not kF64's
  // bits: its own, the same on every target). Where the target fuses (AVX2, AVX3, NEON, SVE) it
  // is faster than kF64 (on a Zen 4 with AVX3, 0.6-0.75x kF64's time in cache; with AVX2 about
  // kF64's); elsewhere (SSE4, SSSE3, EMU128, SCALAR) the fused steps are emulated exactly, about
  // 11x slower than kF64 (docs/performance.md section 3.31). A head holding a pair with
  // max(|x|, |y|) < 2^-124 (a zero pair; the test, on bit patterns, also catches some up to
  // 2^-121) or a non-finite element is rotated with kF64's operations instead, so the bound
  // holds for every input. A RopeTable source must have been created with kFmaChain (it stores
  // the lo parts); caller caches are exact by definition (lo parts 0). bf16 / f16 heads compute
  // in f32 as with kF64. M-RoPE (mrope sections, vision RoPE) and RerotateRope refuse it;
  // ShiftRope takes it (it is ApplyRope).
  kFmaChain,
};

struct RopeParams {
  PairLayout pairs = PairLayout::kFromConfig;  // kHalf unless a config says otherwise
  RotationArithmetic arithmetic = RotationArithmetic::kF64;
  int64_t rotary_dim = 0;  // 0 means head_dim; must be even and <= head_dim
  bool inverse = false;    // rotate by -theta (undoes the forward rotation)
  Frequencies freqs;       // used by kOnTheFly; a table carries its own
  Positions positions;     // ignored by CosSinCache::Kind::kPerToken
  MRopeSections mrope;     // M-RoPE; ApplyRope(config) takes the config's unless set here
  CosSinSource source;
  Execution exec;
  // With a config: the sequence length L its dynamic / longrope frequencies are computed for;
  // 0 (the default): the largest position of the call + 1. Ignored without a config.
  int64_t seq_len = 0;
};

// q and/or k with optional separate outputs. A tensor whose data is null is absent (at least one
// of q and k must be present); an absent output means in place. q and k may have different head
// counts (GQA) but share batch, seq and head_dim.
struct RopeTensors {
  Tensor q, k;
  Tensor q_out, k_out;
};

// Applies RoPE with the best SIMD target of this CPU (see posenc/targets.h).
POSENC_API Status ApplyRope(const RopeTensors& tensors, const RopeParams& params);

// A RoPE call prepared once and applied at new positions many times: the decode loop of a
// runtime that rotates the same q / k buffers (the same RopeTensors: pointers, shapes, strides)
// at the next position every step. Create validates the tensors and params exactly as
// ApplyRope(tensors, params) does (params.positions included) and keeps the result; Apply then
// checks only the positions it is given (their kind and pointers, the table's or cache's rows or
// the angle limit, and that position ids do not overlap an output) before the kernels run, so
// a decode step skips the tensor and parameter checks (docs/performance.md section 3.25).
// Apply(positions) writes exactly the bits ApplyRope(tensors, params with those positions)
// writes, and returns the same Status for the same positions.
// Lifetime: the tensors' buffers, a RopeTable and a caller cache named by params must stay
// allocated while the RopeCall is used (their contents may change: they are data); inv_freq and
// mrope.section arrays are copied at Create. Model configs (ApplyRope(tensors, config or model)),
// whose frequencies may depend on the positions, have no prepared form.
// Threads: Apply does not modify the RopeCall, but two Apply calls on one RopeCall at the same
// time write the same outputs (a data race); give each thread its own tensors and RopeCall.
class POSENC_API RopeCall {
 public:
  // On failure *out is left unchanged and the Status is the one ApplyRope returns.
  static Status Create(const RopeTensors& tensors, const RopeParams& params,
                       std::unique_ptr<RopeCall>* out);
  ~RopeCall();
  RopeCall(const RopeCall&) = delete;
  RopeCall& operator=(const RopeCall&) = delete;

  // ApplyRope(tensors, params) with params.positions = positions. Ignored by per-token caches.
  Status Apply(const Positions& positions) const;

 private:
  struct State;
  explicit RopeCall(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Precomputed f32 cos/sin rows for positions [0, max_positions), built with the same engine as the
// on-the-fly path (so results are bitwise identical), immutable and safe to share between threads.
class POSENC_API RopeTable {
 public:
  // rotary_dim even and > 0; freqs as in RopeParams; max_positions * rotary_dim / 2 <= 2^32. On
  // failure *out is left unchanged.
  static Status Create(int64_t rotary_dim, const Frequencies& freqs, int64_t max_positions,
                       std::shared_ptr<const RopeTable>* out);
  // As above, for calls with `arithmetic`: kFmaChain also stores the rows' lo parts (twice the
  // memory); kF64 and kF32 store the f32 rows only (any table serves them).
  static Status Create(int64_t rotary_dim, const Frequencies& freqs, int64_t max_positions,
                       RotationArithmetic arithmetic, std::shared_ptr<const RopeTable>* out);

  int64_t rotary_dim() const { return rotary_dim_; }
  int64_t max_positions() const { return max_positions_; }
  double attention_factor() const { return attention_factor_; }
  const std::vector<double>& inv_freq() const { return inv_freq_; }
  // Row p of cos (sin): rotary_dim / 2 floats, attention factor included.
  const float* cos_row(int64_t p) const { return cos_.data() + p * (rotary_dim_ / 2); }
  const float* sin_row(int64_t p) const { return sin_.data() + p * (rotary_dim_ / 2); }
  // Whether the table holds lo rows (created for RotationArithmetic::kFmaChain). Row p of the
  // cos (sin) lo parts: f32(C - cos_row(p)[i]), C the engine's double m * cos(angle), the value
  // cos_row(p)[i] rounds (docs/math.md section 9.7). Only where has_lo_rows().
  bool has_lo_rows() const { return !cos_lo_.empty(); }
  const float* cos_lo_row(int64_t p) const { return cos_lo_.data() + p * (rotary_dim_ / 2); }
  const float* sin_lo_row(int64_t p) const { return sin_lo_.data() + p * (rotary_dim_ / 2); }

 private:
  RopeTable() = default;
  int64_t rotary_dim_ = 0;
  int64_t max_positions_ = 0;
  double attention_factor_ = 1.0;
  std::vector<double> inv_freq_;
  AlignedVector<float> cos_, sin_;  // rows start 64-byte aligned where rotary_dim % 32 == 0
  AlignedVector<float> cos_lo_, sin_lo_;  // empty unless created for kFmaChain
};

}  // namespace posenc

// The double-precision oracles of this header's calls (posenc::reference).
#include "posenc/reference.h"

#endif  // POSENC_ROPE_H_
