// posenc/sinusoidal.h: sinusoidal absolute position encodings (Vaswani et al.), as tables and
// fused into embeddings, in every convention in use.
//
// For position p (plus params.position_offset) and i < d/2 (d = d_model):
//   w_i = base^(-2i/d)                      FrequencySpacing::kPaper
//   w_i = base^(-i / max(d/2 - 1, 1))       FrequencySpacing::kTensor2Tensor (t2t, fairseq)
//   s_i = sin(p * w_i), c_i = cos(p * w_i)  (double angle, exact reduction: the RoPE engine)
// laid out as
//   kInterleaved    PE[2i] = s_i, PE[2i+1] = c_i               (the paper)
//   kConcatSinCos   PE[i] = s_i,  PE[d/2 + i] = c_i            (tensor2tensor, fairseq)
//   kConcatCosSin   PE[i] = c_i,  PE[d/2 + i] = s_i            (diffusion timestep embeddings)
// Fused add: out = x * x_scale + PE (the paper scales embeddings by sqrt(d_model)).
//
// Contracts (tested): each table entry is the f32 rounding of the double sin/cos, within
// 0.5 ulp + 2^-50 of the exact value of the double angle, for positions up to 2^24; a fused add is
// x * x_scale + PE evaluated in double from the f32 table entry and rounded once, so it equals
// "table, then add" bit for bit. Bitwise identical on every SIMD target and thread count.
// Errors as everywhere in posenc: validated first, nothing written on failure.
#ifndef POSENC_SINUSOIDAL_H_
#define POSENC_SINUSOIDAL_H_

#include "posenc/export.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "posenc/aligned.h"
#include "posenc/rope.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {

enum class SinusoidalLayout { kInterleaved = 0, kConcatSinCos = 1, kConcatCosSin = 2 };
enum class FrequencySpacing { kPaper = 0, kTensor2Tensor = 1 };
POSENC_API const char* SinusoidalLayoutName(SinusoidalLayout layout);  // interleaved, concat_sin_cos, ...
POSENC_API const char* FrequencySpacingName(FrequencySpacing spacing); // paper, t2t

// A [batch, seq, d_model] view, element strides, d_model contiguous.
struct EmbeddingView {
  void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t batch = 0, seq = 0, d_model = 0;
  int64_t stride_batch = 0, stride_seq = 0;  // elements
};
// Contiguous [batch, seq, d_model].
POSENC_API EmbeddingView EmbeddingBSD(void* data, DType dtype, int64_t batch, int64_t seq, int64_t d_model);
inline EmbeddingView EmbeddingBSD(const float* data, int64_t batch, int64_t seq, int64_t d_model) {
  return EmbeddingBSD(const_cast<float*>(data), DType::kF32, batch, seq, d_model);
}

class SinusoidalTable;

struct SinusoidalParams {
  SinusoidalLayout layout = SinusoidalLayout::kInterleaved;
  FrequencySpacing spacing = FrequencySpacing::kPaper;
  double base = 10000.0;
  int64_t position_offset = 0;  // added to every position (fairseq: padding_idx + 1)
  double x_scale = 1.0;         // fused add only: x * x_scale + PE
  Positions positions;          // position of token (b, s), as for RoPE
  // Fused add: read PE rows from here (row = position). layout, spacing, base and
  // position_offset must equal the table's (the rows hold them); x_scale applies as usual.
  const SinusoidalTable* table = nullptr;
  Execution exec;
};

// Writes PE for every token of `out` ([batch, seq, d_model]; a table for positions
// [start, start + n) is batch 1, seq n with Positions::Offset(start), or Positions::Ids(ids)).
POSENC_API Status WriteSinusoidal(const SinusoidalParams& params, const EmbeddingView& out);

// out = x * x_scale + PE(position), in place when `out` is null (or equal to x).
POSENC_API Status AddSinusoidal(const SinusoidalParams& params, const EmbeddingView& x,
                     const EmbeddingView* out = nullptr);

// f32 PE rows for positions [0, max_positions) (position_offset applied), built once with the
// same engine, immutable and shareable between threads.
class POSENC_API SinusoidalTable {
 public:
  // d_model even and > 0, max_positions * d_model <= 2^32; params.table must be null.
  static Status Create(const SinusoidalParams& params, int64_t d_model, int64_t max_positions,
                       std::shared_ptr<const SinusoidalTable>* out);
  int64_t d_model() const { return d_model_; }
  int64_t max_positions() const { return max_positions_; }
  // What the rows were built with; a call reading the table must pass the same values
  // (a mismatch is an error, not silently the table's convention).
  SinusoidalLayout layout() const { return layout_; }
  FrequencySpacing spacing() const { return spacing_; }
  double base() const { return base_; }
  int64_t position_offset() const { return position_offset_; }
  const float* row(int64_t p) const { return values_.data() + p * d_model_; }

 private:
  SinusoidalTable() = default;
  int64_t d_model_ = 0, max_positions_ = 0;
  SinusoidalLayout layout_ = SinusoidalLayout::kInterleaved;
  FrequencySpacing spacing_ = FrequencySpacing::kPaper;
  double base_ = 10000.0;
  int64_t position_offset_ = 0;
  AlignedVector<float> values_;  // rows start 64-byte aligned where d_model % 16 == 0
};

}  // namespace posenc

// The double-precision oracles of this header's calls (posenc::reference).
#include "posenc/reference.h"

#endif  // POSENC_SINUSOIDAL_H_
