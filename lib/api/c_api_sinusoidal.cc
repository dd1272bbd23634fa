// The C API of sinusoidal encodings (posenc_sinusoidal_*, posenc_embedding_bsd): thin
// translation to posenc/sinusoidal.h, every entry inside the shared guard of c_api_internal.h.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "lib/api/c_api_internal.h"
#include "posenc/posenc.h"
#include "posenc/sinusoidal.h"

static_assert(POSENC_SINUSOIDAL_INTERLEAVED == static_cast<int>(posenc::SinusoidalLayout::kInterleaved) &&
                  POSENC_SINUSOIDAL_CONCAT_SIN_COS == static_cast<int>(posenc::SinusoidalLayout::kConcatSinCos) &&
                  POSENC_SINUSOIDAL_CONCAT_COS_SIN == static_cast<int>(posenc::SinusoidalLayout::kConcatCosSin),
              "posenc_sinusoidal_layout must match posenc::SinusoidalLayout");
static_assert(POSENC_SPACING_PAPER == static_cast<int>(posenc::FrequencySpacing::kPaper) &&
                  POSENC_SPACING_T2T == static_cast<int>(posenc::FrequencySpacing::kTensor2Tensor),
              "posenc_frequency_spacing must match posenc::FrequencySpacing");

namespace {

using posenc::Status;
using posenc::StatusCode;
using posenc::capi::Guard;
using posenc::capi::RawEnum;
using posenc::capi::ToPositions;

posenc::EmbeddingView ToEmbedding(const posenc_embedding& e) {
  posenc::EmbeddingView v;
  v.data = e.data;
  v.dtype = static_cast<posenc::DType>(RawEnum(e.dtype));
  v.batch = e.batch;
  v.seq = e.seq;
  v.d_model = e.d_model;
  v.stride_batch = e.stride_batch;
  v.stride_seq = e.stride_seq;
  return v;
}

Status ToSinusoidalParams(const posenc_sinusoidal_params* p, posenc::SinusoidalParams* out) {
  if (p == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
  const int kind = RawEnum(p->positions.kind);
  if (kind < POSENC_POSITIONS_OFFSET || kind > POSENC_POSITIONS_IDS64) {
    return Status(StatusCode::kInvalidArgument,
                  "params.positions.kind = " + std::to_string(kind) + ": not a posenc_positions_kind");
  }
  out->layout = static_cast<posenc::SinusoidalLayout>(RawEnum(p->layout));
  out->spacing = static_cast<posenc::FrequencySpacing>(RawEnum(p->spacing));
  out->base = p->base;
  out->position_offset = p->position_offset;
  out->x_scale = p->x_scale;
  out->positions = ToPositions(p->positions);
  out->table = p->table != nullptr ? p->table->table.get() : nullptr;
  out->exec.max_threads = p->max_threads;
  return Status::Ok();
}

}  // namespace

extern "C" {

posenc_embedding posenc_embedding_bsd(void* data, posenc_dtype dtype, int64_t batch, int64_t seq,
                                      int64_t d_model) {
  const posenc::EmbeddingView v =
      posenc::EmbeddingBSD(data, static_cast<posenc::DType>(RawEnum(dtype)), batch, seq, d_model);
  return posenc_embedding{v.data, dtype, v.batch, v.seq, v.d_model, v.stride_batch, v.stride_seq};
}

void posenc_sinusoidal_params_init(posenc_sinusoidal_params* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof(*p));
  p->layout = POSENC_SINUSOIDAL_INTERLEAVED;
  p->spacing = POSENC_SPACING_PAPER;
  p->base = 10000.0;
  p->x_scale = 1.0;
  p->positions.kind = POSENC_POSITIONS_OFFSET;
}

posenc_status posenc_sinusoidal_write(const posenc_sinusoidal_params* params,
                                      const posenc_embedding* out) {
  return Guard(__func__, [&] {
    posenc::SinusoidalParams p;
    Status st = ToSinusoidalParams(params, &p);
    if (!st.ok()) return st;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    return posenc::WriteSinusoidal(p, ToEmbedding(*out));
  });
}

posenc_status posenc_sinusoidal_add(const posenc_sinusoidal_params* params,
                                    const posenc_embedding* x, const posenc_embedding* out) {
  return Guard(__func__, [&] {
    posenc::SinusoidalParams p;
    Status st = ToSinusoidalParams(params, &p);
    if (!st.ok()) return st;
    if (x == nullptr) return Status(StatusCode::kInvalidArgument, "x is null");
    if (out == nullptr) return posenc::AddSinusoidal(p, ToEmbedding(*x));
    const posenc::EmbeddingView o = ToEmbedding(*out);
    return posenc::AddSinusoidal(p, ToEmbedding(*x), &o);
  });
}

posenc_status posenc_sinusoidal_table_create(const posenc_sinusoidal_params* params,
                                             int64_t d_model, int64_t max_positions,
                                             posenc_sinusoidal_table** out) {
  return Guard(__func__, [&] {
    posenc::SinusoidalParams p;
    Status st = ToSinusoidalParams(params, &p);
    if (!st.ok()) return st;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    std::shared_ptr<const posenc::SinusoidalTable> table;
    st = posenc::SinusoidalTable::Create(p, d_model, max_positions, &table);
    if (!st.ok()) return st;
    *out = new posenc_sinusoidal_table{std::move(table)};
    return Status::Ok();
  });
}

void posenc_sinusoidal_table_destroy(posenc_sinusoidal_table* table) { delete table; }

const float* posenc_sinusoidal_table_row(const posenc_sinusoidal_table* table, int64_t p) {
  if (table == nullptr || p < 0 || p >= table->table->max_positions()) return nullptr;
  return table->table->row(p);
}

}  // extern "C"
