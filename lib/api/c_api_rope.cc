// The C API of RoPE (posenc_rope_*): thin translation to posenc/rope.h, every entry inside the
// shared guard of c_api_internal.h.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "lib/api/c_api_internal.h"
#include "posenc/posenc.h"
#include "posenc/reference.h"
#include "posenc/rope.h"

static_assert(POSENC_ARITH_F64 == static_cast<int>(posenc::RotationArithmetic::kF64) &&
                  POSENC_ARITH_F32 == static_cast<int>(posenc::RotationArithmetic::kF32) &&
                  POSENC_ARITH_FMA_CHAIN ==
                      static_cast<int>(posenc::RotationArithmetic::kFmaChain),
              "posenc_arithmetic must match posenc::RotationArithmetic");
// posenc_source has no one C++ twin: ToRopeParams maps each value explicitly (CosSinSource::Kind
// and CosSinCache::Kind), and rejects any other value.

namespace posenc {
namespace capi {

namespace {
// `name`.kind must be a posenc_positions_kind (ToPositions casts it).
Status CheckPositionsKind(const posenc_positions& p, const char* name) {
  const int kind = RawEnum(p.kind);
  if (kind >= POSENC_POSITIONS_OFFSET && kind <= POSENC_POSITIONS_STREAM_IDS64) return Status::Ok();
  return Status(StatusCode::kInvalidArgument, std::string(name) + ".kind = " +
                                                  std::to_string(kind) +
                                                  ": not a posenc_positions_kind");
}
}  // namespace

Status ToRopeParams(const posenc_rope_params* p, RopeParams* out) {
  if (p == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
  Status st = CheckPositionsKind(p->positions, "params.positions");
  if (!st.ok()) return st;
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

using posenc::Status;
using posenc::StatusCode;
using posenc::capi::Guard;
using posenc::capi::ToTensor;

template <class Apply>
posenc_status RopeEntry(const posenc_tensor* q, const posenc_tensor* q_out, const posenc_tensor* k,
                       const posenc_tensor* k_out, const posenc_rope_params* params,
                       const char* what, const Apply& apply) {
  return Guard(what, [&] {
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

}  // namespace

extern "C" {

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
  return RopeEntry(q, q_out, k, k_out, params, __func__,
                  [](const posenc::RopeTensors& t, const posenc::RopeParams& p,
                     const posenc_config* config) {
                    return config != nullptr ? posenc::ApplyRope(t, config->config, p)
                                             : posenc::ApplyRope(t, p);
                  });
}

posenc_status posenc_rope_apply_reference(const posenc_tensor* q, const posenc_tensor* q_out,
                                          const posenc_tensor* k, const posenc_tensor* k_out,
                                          const posenc_rope_params* params) {
  return RopeEntry(q, q_out, k, k_out, params, __func__,
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
  return posenc_rope_table_create_for(rotary_dim, base, inv_freq, inv_freq_len, attention_factor,
                                      max_positions, POSENC_ARITH_F64, out);
}

posenc_status posenc_rope_table_create_for(int64_t rotary_dim, double base,
                                           const double* inv_freq, int64_t inv_freq_len,
                                           double attention_factor, int64_t max_positions,
                                           posenc_arithmetic arithmetic, posenc_rope_table** out) {
  return Guard(__func__, [&] {
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    posenc::Frequencies f;
    f.base = base;
    f.inv_freq = inv_freq;
    f.inv_freq_len = inv_freq_len;
    f.attention_factor = attention_factor;
    std::shared_ptr<const posenc::RopeTable> table;
    Status st = posenc::RopeTable::Create(
        rotary_dim, f, max_positions,
        static_cast<posenc::RotationArithmetic>(posenc::capi::RawEnum(arithmetic)), &table);
    if (!st.ok()) return st;
    *out = new posenc_rope_table{std::move(table)};
    return Status::Ok();
  });
}

void posenc_rope_table_destroy(posenc_rope_table* table) { delete table; }

posenc_status posenc_rope_call_create(const posenc_tensor* q, const posenc_tensor* q_out,
                                      const posenc_tensor* k, const posenc_tensor* k_out,
                                      const posenc_rope_params* params, posenc_rope_call** out) {
  return RopeEntry(q, q_out, k, k_out, params, __func__,
                   [out](const posenc::RopeTensors& t, const posenc::RopeParams& p,
                         const posenc_config* config) {
                     if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
                     if (config != nullptr) {
                       return Status(StatusCode::kUnsupported,
                                     "params.config: a config's frequencies may depend on the "
                                     "positions, so it has no prepared call; use "
                                     "posenc_config_frequencies for explicit inv_freq");
                     }
                     std::unique_ptr<posenc::RopeCall> call;
                     Status st = posenc::RopeCall::Create(t, p, &call);
                     if (!st.ok()) return st;
                     *out = new posenc_rope_call{std::move(call)};
                     return Status::Ok();
                   });
}

posenc_status posenc_rope_call_apply(const posenc_rope_call* call,
                                     const posenc_positions* positions) {
  return Guard(__func__, [&] {
    if (call == nullptr) return Status(StatusCode::kInvalidArgument, "call is null");
    if (positions == nullptr) return Status(StatusCode::kInvalidArgument, "positions is null");
    Status st = posenc::capi::CheckPositionsKind(*positions, "positions");
    if (!st.ok()) return st;
    return call->call->Apply(posenc::capi::ToPositions(*positions));
  });
}

void posenc_rope_call_destroy(posenc_rope_call* call) { delete call; }

}  // extern "C"
