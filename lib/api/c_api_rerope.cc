// The ReRoPE part of the C API (posenc/posenc.h): thin translation to posenc::RelativeRopeScores.
// Every entry catches everything, records the message for posenc_last_error() and returns a code.
#include <cstring>
#include <memory>
#include <string>

#include "lib/api/c_api_internal.h"
#include "posenc/posenc.h"
#include "posenc/rerope.h"

// The C enum is the C++ one, value for value.
static_assert(POSENC_DISTANCE_EXACT == static_cast<int>(posenc::DistanceMode::kExact) &&
                  POSENC_DISTANCE_CAP == static_cast<int>(posenc::DistanceMode::kCap) &&
                  POSENC_DISTANCE_LEAKY == static_cast<int>(posenc::DistanceMode::kLeaky) &&
                  POSENC_DISTANCE_LOG == static_cast<int>(posenc::DistanceMode::kLog),
              "posenc_distance_mode must match posenc::DistanceMode");

struct posenc_rerope_table {
  std::shared_ptr<const posenc::RelativeRopeTable> table;
};

namespace {

using posenc::Status;
using posenc::StatusCode;
using posenc::capi::RawEnum;

Status ToPositionsChecked(const posenc_positions& p, const char* name, posenc::Positions* out) {
  const int kind = RawEnum(p.kind);
  if (kind < POSENC_POSITIONS_OFFSET || kind > POSENC_POSITIONS_IDS64) {
    return Status(StatusCode::kInvalidArgument, std::string("params.") + name +
                                                    ".kind = " + std::to_string(kind) +
                                                    ": not a posenc_positions_kind");
  }
  *out = posenc::capi::ToPositions(p);
  return Status::Ok();
}

Status ToParams(const posenc_rerope_params* p, posenc::RelativeRopeParams* out) {
  if (p == nullptr) return Status(StatusCode::kInvalidArgument, "params is null");
  posenc::RelativeRopeParams r;
  Status st = ToPositionsChecked(p->q_positions, "q_positions", &r.q_positions);
  if (!st.ok()) return st;
  if (!(st = ToPositionsChecked(p->k_positions, "k_positions", &r.k_positions)).ok()) return st;
  // Enum fields go through int: RelativeRopeScores rejects values that are not enumerators.
  r.map.mode = static_cast<posenc::DistanceMode>(RawEnum(p->mode));
  r.map.window = p->window;
  r.map.leak = p->leak;
  r.pairs = static_cast<posenc::PairLayout>(RawEnum(p->pairs));
  r.rotary_dim = p->rotary_dim;
  r.freqs.base = p->base;
  r.freqs.inv_freq = p->inv_freq;
  r.freqs.inv_freq_len = p->inv_freq_len;
  r.freqs.attention_factor = p->attention_factor;
  r.scale = p->scale;
  r.causal = p->causal != 0;
  r.table = p->table != nullptr ? p->table->table.get() : nullptr;
  r.exec.max_threads = p->max_threads;
  *out = r;
  return Status::Ok();
}

posenc::RelativeRopeTensors ToTensors(const posenc_tensor* q, const posenc_tensor* k,
                                      const posenc_tensor* scores) {
  posenc::RelativeRopeTensors t;
  t.q = posenc::capi::ToTensor(q);
  t.k = posenc::capi::ToTensor(k);
  t.scores = posenc::capi::ToTensor(scores);
  return t;
}

}  // namespace

extern "C" {

void posenc_rerope_params_init(posenc_rerope_params* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof(*p));
  p->mode = POSENC_DISTANCE_EXACT;
  p->pairs = POSENC_PAIRS_HALF;
  p->base = 10000.0;
  p->attention_factor = 1.0;
  p->scale = 1.0;
  p->q_positions.kind = POSENC_POSITIONS_OFFSET;
  p->k_positions.kind = POSENC_POSITIONS_OFFSET;
}

posenc_status posenc_rerope_scores(const posenc_tensor* q, const posenc_tensor* k,
                                   const posenc_tensor* scores,
                                   const posenc_rerope_params* params) {
  return posenc::capi::Guard(__func__, [&] {
    posenc::RelativeRopeParams p;
    Status st = ToParams(params, &p);
    if (!st.ok()) return st;
    const posenc::RelativeRopeTensors t = ToTensors(q, k, scores);
    return params->config != nullptr ? posenc::RelativeRopeScores(t, params->config->config, p)
                                     : posenc::RelativeRopeScores(t, p);
  });
}

posenc_status posenc_rerope_scores_reference(const posenc_tensor* q, const posenc_tensor* k,
                                             const posenc_tensor* scores,
                                             const posenc_rerope_params* params) {
  return posenc::capi::Guard(__func__, [&] {
    posenc::RelativeRopeParams p;
    Status st = ToParams(params, &p);
    if (!st.ok()) return st;
    if (params->config != nullptr) {
      return Status(StatusCode::kUnsupported,
                    "params.config: the reference takes explicit frequencies; use "
                    "posenc_config_frequencies");
    }
    return posenc::reference::RelativeRopeScores(ToTensors(q, k, scores), p);
  });
}

posenc_status posenc_rerope_table_create(const posenc_rerope_params* params, int64_t rotary_dim,
                                         int64_t max_distance, posenc_rerope_table** out) {
  return posenc::capi::Guard(__func__, [&] {
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    posenc::RelativeRopeParams p;
    Status st = ToParams(params, &p);
    if (!st.ok()) return st;
    if (params->config != nullptr) {
      return Status(StatusCode::kInvalidArgument,
                    "params.config: a table takes explicit frequencies; use "
                    "posenc_config_frequencies");
    }
    std::shared_ptr<const posenc::RelativeRopeTable> table;
    st = posenc::RelativeRopeTable::Create(rotary_dim, p.freqs, p.map, max_distance, &table);
    if (!st.ok()) return st;
    *out = new posenc_rerope_table{std::move(table)};
    return Status::Ok();
  });
}

void posenc_rerope_table_destroy(posenc_rerope_table* table) { delete table; }

}  // extern "C"
