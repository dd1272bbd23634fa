// The C API (posenc/posenc.h): thin translation to the C++ API. Every entry catches everything,
// records the message in a thread-local string and returns a status code.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "lib/api/c_api_internal.h"
#include "posenc/freqs.h"
#include "posenc/half.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "posenc/targets.h"

// The C enums are the C++ ones, value for value (the C API casts one to the other).
static_assert(POSENC_OK == static_cast<int>(posenc::StatusCode::kOk) &&
                  POSENC_INVALID_ARGUMENT == static_cast<int>(posenc::StatusCode::kInvalidArgument) &&
                  POSENC_OUT_OF_RANGE == static_cast<int>(posenc::StatusCode::kOutOfRange) &&
                  POSENC_UNSUPPORTED == static_cast<int>(posenc::StatusCode::kUnsupported) &&
                  POSENC_INTERNAL == static_cast<int>(posenc::StatusCode::kInternal),
              "posenc_status must match posenc::StatusCode");
static_assert(POSENC_F32 == static_cast<int>(posenc::DType::kF32) &&
                  POSENC_BF16 == static_cast<int>(posenc::DType::kBF16) &&
                  POSENC_F16 == static_cast<int>(posenc::DType::kF16),
              "posenc_dtype must match posenc::DType");
static_assert(POSENC_ARITH_F64 == static_cast<int>(posenc::RotationArithmetic::kF64) &&
                  POSENC_ARITH_F32 == static_cast<int>(posenc::RotationArithmetic::kF32),
              "posenc_arithmetic must match posenc::RotationArithmetic");
static_assert(POSENC_POSITIONS_OFFSET == static_cast<int>(posenc::Positions::Kind::kOffset) &&
                  POSENC_POSITIONS_PER_BATCH == static_cast<int>(posenc::Positions::Kind::kPerBatchOffsets) &&
                  POSENC_POSITIONS_IDS32 == static_cast<int>(posenc::Positions::Kind::kIds32) &&
                  POSENC_POSITIONS_IDS64 == static_cast<int>(posenc::Positions::Kind::kIds64) &&
                  POSENC_POSITIONS_STREAM_IDS32 == static_cast<int>(posenc::Positions::Kind::kStreamIds32) &&
                  POSENC_POSITIONS_STREAM_IDS64 == static_cast<int>(posenc::Positions::Kind::kStreamIds64),
              "posenc_positions_kind must match posenc::Positions::Kind");
static_assert(POSENC_SINUSOIDAL_INTERLEAVED == static_cast<int>(posenc::SinusoidalLayout::kInterleaved) &&
                  POSENC_SINUSOIDAL_CONCAT_SIN_COS == static_cast<int>(posenc::SinusoidalLayout::kConcatSinCos) &&
                  POSENC_SINUSOIDAL_CONCAT_COS_SIN == static_cast<int>(posenc::SinusoidalLayout::kConcatCosSin),
              "posenc_sinusoidal_layout must match posenc::SinusoidalLayout");
static_assert(POSENC_SPACING_PAPER == static_cast<int>(posenc::FrequencySpacing::kPaper) &&
                  POSENC_SPACING_T2T == static_cast<int>(posenc::FrequencySpacing::kTensor2Tensor),
              "posenc_frequency_spacing must match posenc::FrequencySpacing");
// posenc_source has no one C++ twin: ToRopeParams maps each value explicitly (CosSinSource::Kind
// and CosSinCache::Kind), and rejects any other value.

struct posenc_sinusoidal_table {
  std::shared_ptr<const posenc::SinusoidalTable> table;
};

namespace posenc {
namespace capi {

std::string& LastError() {
  thread_local std::string message;
  return message;
}

posenc_status Report(const Status& st) {
  if (st.ok()) return POSENC_OK;
  LastError() = st.message();
  return static_cast<posenc_status>(st.code());
}

posenc_status Fail(posenc_status code, const std::string& message) {
  LastError() = message;
  return code;
}

posenc::Tensor ToTensor(const posenc_tensor* t) {
  posenc::Tensor out;
  if (t == nullptr) return out;
  out.data = t->data;
  out.dtype = static_cast<posenc::DType>(RawEnum(t->dtype));
  for (int i = 0; i < 4; ++i) {
    out.shape[i] = t->shape[i];
    out.strides[i] = t->strides[i];
  }
  return out;
}

Positions ToPositions(const posenc_positions& p) {
  Positions out;
  out.kind = static_cast<Positions::Kind>(RawEnum(p.kind));
  out.offset = p.offset;
  out.batch_offsets = p.batch_offsets;
  out.ids32 = p.ids32;
  out.ids64 = p.ids64;
  out.streams = p.streams;
  return out;
}

}  // namespace capi
}  // namespace posenc

namespace {

using posenc::Status;
using posenc::StatusCode;
using posenc::capi::Fail;
using posenc::capi::Guard;
using posenc::capi::LastError;
using posenc::capi::RawEnum;
using posenc::capi::ToPositions;
using posenc::capi::ToTensor;

posenc_tensor FromTensor(const posenc::Tensor& t) {
  posenc_tensor out;
  out.data = t.data;
  out.dtype = static_cast<posenc_dtype>(static_cast<int>(t.dtype));
  for (int i = 0; i < 4; ++i) {
    out.shape[i] = t.shape[i];
    out.strides[i] = t.strides[i];
  }
  return out;
}

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

}  // namespace

namespace posenc {
namespace capi {

Status ToRopeParams(const posenc_rope_params* p, RopeParams* out) {
  if (p == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
  const int kind = RawEnum(p->positions.kind);
  if (kind < POSENC_POSITIONS_OFFSET || kind > POSENC_POSITIONS_STREAM_IDS64) {
    return Status(StatusCode::kInvalidArgument,
                  "params.positions.kind = " + std::to_string(kind) + ": not a posenc_positions_kind");
  }
  RopeParams r;
  r.mrope.section = p->mrope_section;
  r.mrope.num_sections = p->mrope_section_len;
  r.mrope.interleaved = p->mrope_interleaved != 0;
  r.pairs = static_cast<PairLayout>(RawEnum(p->pairs));
  r.arithmetic = static_cast<RotationArithmetic>(RawEnum(p->arithmetic));
  r.rotary_dim = p->rotary_dim;
  r.inverse = p->inverse != 0;
  r.freqs.base = p->base;
  r.freqs.inv_freq = p->inv_freq;
  r.freqs.inv_freq_len = p->inv_freq_len;
  r.freqs.attention_factor = p->attention_factor;
  r.positions = ToPositions(p->positions);
  r.exec.max_threads = p->max_threads;
  r.seq_len = p->seq_len;
  const int source = RawEnum(p->source);
  switch (source) {
    case POSENC_SOURCE_ON_THE_FLY:
      break;
    case POSENC_SOURCE_TABLE:
      if (p->table == nullptr) return Status(StatusCode::kInvalidArgument, "params.table is null");
      r.source = CosSinSource::Table(p->table->table.get());
      break;
    case POSENC_SOURCE_CACHE_BY_POSITION:
    case POSENC_SOURCE_CACHE_PER_TOKEN: {
      CosSinCache c;
      c.kind = source == POSENC_SOURCE_CACHE_PER_TOKEN ? CosSinCache::Kind::kPerToken
                                                          : CosSinCache::Kind::kByPosition;
      c.cos = p->cache_cos;
      c.sin = p->cache_sin;
      c.dtype = static_cast<DType>(RawEnum(p->cache_dtype));
      c.rows = p->cache_rows;
      r.source = CosSinSource::Cache(c);
      break;
    }
    default:
      return Status(StatusCode::kInvalidArgument,
                    "params.source = " + std::to_string(source) + ": not a posenc_source");
  }
  *out = r;
  return Status::Ok();
}

}  // namespace capi
}  // namespace posenc

namespace {

template <class Apply>
posenc_status RopeCall(const posenc_tensor* q, const posenc_tensor* q_out, const posenc_tensor* k,
                       const posenc_tensor* k_out, const posenc_rope_params* params,
                       const Apply& apply) {
  return Guard([&] {
    posenc::RopeParams p;
    Status st = posenc::capi::ToRopeParams(params, &p);
    if (!st.ok()) return st;
    posenc::RopeTensors t;
    t.q = ToTensor(q);
    t.q_out = ToTensor(q_out);
    t.k = ToTensor(k);
    t.k_out = ToTensor(k_out);
    return apply(t, p, params->config);
  });
}

size_t JoinNames(const std::vector<std::string>& names, char* buf, size_t capacity) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : " ") + n;
  if (buf != nullptr && capacity > 0) {
    const size_t n = all.size() < capacity - 1 ? all.size() : capacity - 1;
    std::memcpy(buf, all.data(), n);
    buf[n] = '\0';
  }
  return all.size();
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

posenc_tensor posenc_tensor_bshd(void* data, posenc_dtype dtype, int64_t batch, int64_t seq,
                                 int64_t heads, int64_t head_dim) {
  return FromTensor(posenc::TensorBSHD(data, static_cast<posenc::DType>(RawEnum(dtype)), batch, seq,
                                       heads, head_dim));
}

posenc_tensor posenc_tensor_bhsd(void* data, posenc_dtype dtype, int64_t batch, int64_t heads,
                                 int64_t seq, int64_t head_dim) {
  return FromTensor(posenc::TensorBHSD(data, static_cast<posenc::DType>(RawEnum(dtype)), batch, heads,
                                       seq, head_dim));
}

void posenc_rope_params_init(posenc_rope_params* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof(*p));
  p->pairs = POSENC_PAIRS_FROM_CONFIG;  /* half, or the config's layout */
  p->arithmetic = POSENC_ARITH_F64;
  p->base = 10000.0;
  p->attention_factor = 1.0;
  p->positions.kind = POSENC_POSITIONS_OFFSET;
  p->source = POSENC_SOURCE_ON_THE_FLY;
  p->cache_dtype = POSENC_F32;
}

posenc_status posenc_rope_apply(const posenc_tensor* q, const posenc_tensor* q_out,
                                const posenc_tensor* k, const posenc_tensor* k_out,
                                const posenc_rope_params* params) {
  return RopeCall(q, q_out, k, k_out, params,
                  [](const posenc::RopeTensors& t, const posenc::RopeParams& p,
                     const posenc_config* config) {
                    return config != nullptr ? posenc::ApplyRope(t, config->config, p)
                                             : posenc::ApplyRope(t, p);
                  });
}

posenc_status posenc_rope_apply_reference(const posenc_tensor* q, const posenc_tensor* q_out,
                                          const posenc_tensor* k, const posenc_tensor* k_out,
                                          const posenc_rope_params* params) {
  return RopeCall(q, q_out, k, k_out, params,
                  [](const posenc::RopeTensors& t, const posenc::RopeParams& p,
                     const posenc_config* config) {
                    if (config == nullptr) return posenc::reference::ApplyRope(t, p);
                    return Status(StatusCode::kUnsupported,
                                  "params.config: the reference takes explicit frequencies; use "
                                  "posenc_config_frequencies");
                  });
}

posenc_status posenc_rope_table_create(int64_t rotary_dim, double base, const double* inv_freq,
                                       int64_t inv_freq_len, double attention_factor,
                                       int64_t max_positions, posenc_rope_table** out) {
  return Guard([&] {
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    posenc::Frequencies f;
    f.base = base;
    f.inv_freq = inv_freq;
    f.inv_freq_len = inv_freq_len;
    f.attention_factor = attention_factor;
    std::shared_ptr<const posenc::RopeTable> table;
    Status st = posenc::RopeTable::Create(rotary_dim, f, max_positions, &table);
    if (!st.ok()) return st;
    *out = new posenc_rope_table{std::move(table)};
    return Status::Ok();
  });
}

void posenc_rope_table_destroy(posenc_rope_table* table) { delete table; }

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
  return Guard([&] {
    posenc::SinusoidalParams p;
    Status st = ToSinusoidalParams(params, &p);
    if (!st.ok()) return st;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    return posenc::WriteSinusoidal(p, ToEmbedding(*out));
  });
}

posenc_status posenc_sinusoidal_add(const posenc_sinusoidal_params* params,
                                    const posenc_embedding* x, const posenc_embedding* out) {
  return Guard([&] {
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
  return Guard([&] {
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

posenc_status posenc_convert_to_f32(const void* src, posenc_dtype dtype, size_t n, float* dst) {
  return Guard([&] { return posenc::ConvertToF32(src, static_cast<posenc::DType>(RawEnum(dtype)), n, dst); });
}

posenc_status posenc_convert_from_f32(const float* src, size_t n, posenc_dtype dtype, void* dst) {
  return Guard([&] { return posenc::ConvertFromF32(src, n, static_cast<posenc::DType>(RawEnum(dtype)), dst); });
}

const char* posenc_version(void) { return posenc::Version(); }

const char* posenc_chosen_target(void) {
  try {
    // Highway's target names are string literals: return the one that matches.
    const std::string chosen = posenc::ChosenTarget();
    for (int64_t t = HWY_TARGETS; t != 0; t &= t - 1) {
      const char* name = hwy::TargetName(t & -t);
      if (chosen == name) return name;
    }
    return "";
  } catch (...) {
    return "";
  }
}

size_t posenc_supported_targets(char* buf, size_t capacity) {
  try {
    return JoinNames(posenc::SupportedTargets(), buf, capacity);
  } catch (...) {
    return 0;
  }
}

size_t posenc_compiled_targets(char* buf, size_t capacity) {
  try {
    return JoinNames(posenc::CompiledTargets(), buf, capacity);
  } catch (...) {
    return 0;
  }
}

posenc_status posenc_set_max_target(const char* name) {
  return Guard([&] { return posenc::SetMaxTarget(name != nullptr ? name : ""); });
}

const char* posenc_last_error(void) { return LastError().c_str(); }

const char* posenc_status_name(posenc_status status) {
  return posenc::StatusCodeName(static_cast<StatusCode>(RawEnum(status)));
}

}  // extern "C"
