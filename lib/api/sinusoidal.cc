// Sinusoidal encodings: validation and planning, the parallel split, the table object.
#include <cmath>
#include <memory>
#include <utility>

#include "lib/core/guard.h"
#include "lib/api/kernel_choice.h"
#include "lib/api/positions.h"
#include "lib/api/sinusoidal_prepare.h"
#include "lib/api/table_build.h"
#include "lib/api/targets_internal.h"
#include "lib/api/tensor_checks.h"
#include "lib/freqs/inv_freq.h"
#include "lib/core/sinusoidal_plan.h"
#include "lib/parallel/split.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace api {
namespace {

constexpr auto kInvalid = StatusCode::kInvalidArgument;

// A 3-D embedding view as the 4-D [batch, seq, 1, d_model] tensor the overlap checks take.
Tensor AsTensor(const EmbeddingView& v) {
  Tensor t;
  t.data = v.data;
  t.dtype = v.dtype;
  t.shape[0] = v.batch;
  t.shape[1] = v.seq;
  t.shape[2] = 1;
  t.shape[3] = v.d_model;
  t.strides[0] = v.stride_batch;
  t.strides[1] = v.stride_seq;
  t.strides[2] = v.d_model;
  t.strides[3] = 1;
  return t;
}

Status CheckEmbedding(const EmbeddingView& v, const char* name) {
  const int64_t shape[3] = {v.batch, v.seq, v.d_model};
  const int64_t strides[3] = {v.stride_batch, v.stride_seq, 1};
  Status st = CheckView(v.data, v.dtype, shape, strides, 3, name);
  if (!st.ok()) return st;
  if (v.d_model % 2 != 0) {
    return Err(kInvalid, name, ".d_model = ", v.d_model, ": must be even");
  }
  return Status::Ok();
}

}  // namespace

Status PrepareSinusoidal(const SinusoidalParams& params, const EmbeddingView* x,
                         const EmbeddingView& out, PreparedSinusoidal* prep) {
  kernels::SinusoidalPlan* plan = &prep->plan;
  const bool add = x != nullptr;
  Status st;
  if (add && !(st = CheckEmbedding(*x, "x")).ok()) return st;
  if (!(st = CheckEmbedding(out, "out")).ok()) return st;
  if (add) {
    if (out.dtype != x->dtype) {
      return Err(kInvalid, "out.dtype = ", DTypeName(out.dtype), ": must equal x.dtype = ",
                 DTypeName(x->dtype));
    }
    if (out.batch != x->batch || out.seq != x->seq || out.d_model != x->d_model) {
      return Err(kInvalid, "out shape [", out.batch, ", ", out.seq, ", ", out.d_model,
                 "]: must equal x shape [", x->batch, ", ", x->seq, ", ", x->d_model, "]");
    }
    const Tensor tx = AsTensor(*x), to = AsTensor(out);
    if (!SameView(tx, to) && ViewsOverlap(tx, to)) {
      return Err(kInvalid, "out partially overlaps x: outputs must be exactly x (in place) or "
                           "disjoint from it");
    }
  }
  const Tensor to = AsTensor(out);
  if (!HasNoSelfOverlap(to.shape, to.strides, 4)) {
    return Err(kInvalid, "out: strides [", out.stride_batch, ", ", out.stride_seq,
               ", 1] make elements alias each other; an output must not overlap itself");
  }
  if (params.layout != SinusoidalLayout::kInterleaved &&
      params.layout != SinusoidalLayout::kConcatSinCos &&
      params.layout != SinusoidalLayout::kConcatCosSin) {
    return Err(kInvalid, "layout = ", static_cast<int>(params.layout), ": not a SinusoidalLayout");
  }
  if (params.spacing != FrequencySpacing::kPaper &&
      params.spacing != FrequencySpacing::kTensor2Tensor) {
    return Err(kInvalid, "spacing = ", static_cast<int>(params.spacing), ": not a FrequencySpacing");
  }
  if (!std::isfinite(params.base) || !(params.base > 0.0)) {
    return Err(kInvalid, "base = ", params.base, ": must be finite and > 0");
  }
  if (add && !std::isfinite(params.x_scale)) {
    return Err(kInvalid, "x_scale = ", params.x_scale, ": must be finite");
  }
  if (params.exec.max_threads < 0) {
    return Err(kInvalid, "exec.max_threads = ", params.exec.max_threads, ": must be >= 0");
  }
  // From here on only the copy of the positions is read (see PositionSnapshot), written straight
  // into the plan.
  st = prep->positions.Take(params.positions, out.batch, out.seq, "positions", &plan->positions);
  if (!st.ok()) return st;
  const PositionRange r = RangeOf(plan->positions, out.batch, out.seq);
  const PositionBytes ids = CallerPositionBytes(params.positions, out.batch, out.seq);
  if (ViewOverlapsBytes(to, ids.data, ids.bytes)) {
    return Err(kInvalid, ids.name, " overlaps out: an input must not share memory with an output");
  }

  plan->batch = out.batch;
  plan->seq = out.seq;
  plan->d_model = out.d_model;
  plan->dtype = out.dtype;
  plan->layout = params.layout;
  plan->add = add;
  plan->x_scale = params.x_scale;
  if (add) {
    plan->x = x->data;
    plan->x_stride[0] = x->stride_batch;
    plan->x_stride[1] = x->stride_seq;
  }
  plan->out = out.data;
  plan->out_stride[0] = out.stride_batch;
  plan->out_stride[1] = out.stride_seq;

  if (params.table != nullptr) {
    const SinusoidalTable& table = *params.table;
    if (table.d_model() != out.d_model) {
      return Err(kInvalid, "table->d_model() = ", table.d_model(),
                 ": must equal d_model = ", out.d_model);
    }
    // The table's rows already hold one layout, spacing, base and offset: a call asking for
    // others would silently get the table's.
    if (params.layout != table.layout()) {
      return Err(kInvalid, "layout = ", SinusoidalLayoutName(params.layout),
                 ": the table was built with ", SinusoidalLayoutName(table.layout()));
    }
    if (params.spacing != table.spacing()) {
      return Err(kInvalid, "spacing = ", FrequencySpacingName(params.spacing),
                 ": the table was built with ", FrequencySpacingName(table.spacing()));
    }
    if (!(params.base == table.base())) {
      return Err(kInvalid, "base = ", params.base, ": the table was built with base = ",
                 table.base());
    }
    if (params.position_offset != table.position_offset()) {
      return Err(kInvalid, "position_offset = ", params.position_offset,
                 ": the table was built with position_offset = ", table.position_offset());
    }
    const uint64_t table_bytes = static_cast<uint64_t>(table.max_positions()) *
                                 static_cast<uint64_t>(table.d_model()) * 4;
    if (ViewOverlapsBytes(to, table.row(0), table_bytes)) {
      return Err(kInvalid, "table rows overlap out: an input must not share memory with an output");
    }
    if (!(st = CheckRowsCover(r, params.table->max_positions(), out.seq, "table's")).ok()) return st;
    plan->table_rows = params.table->row(0);
    return Status::Ok();
  }
  int64_t lo, hi;
  if (__builtin_add_overflow(r.min, params.position_offset, &lo) ||
      __builtin_add_overflow(r.max, params.position_offset, &hi)) {
    return Err(kInvalid, "position_offset = ", params.position_offset,
               ": position + position_offset overflows int64");
  }
  plan->position_offset = params.position_offset;
  freqs::FreqFacts facts;
  prep->freqs = freqs::CachedSinusoidalFreqs(params.base, out.d_model,
                                             static_cast<int>(params.spacing), &facts);
  plan->freqs = prep->freqs->data();
  if (const int64_t i = facts.first_nonfinite; i < out.d_model / 2) {
    return Err(kInvalid, "base = ", params.base, ": frequency w[", i, "] = ", plan->freqs[i],
               " is not finite");
  }
  return CheckPositionAngle(r, params.position_offset, facts.max_abs, out.seq,
                            "|(p + position_offset) * w|");
}

}  // namespace api

const char* SinusoidalLayoutName(SinusoidalLayout layout) {
  switch (layout) {
    case SinusoidalLayout::kInterleaved: return "interleaved";
    case SinusoidalLayout::kConcatSinCos: return "concat_sin_cos";
    case SinusoidalLayout::kConcatCosSin: return "concat_cos_sin";
  }
  return "unknown";
}

const char* FrequencySpacingName(FrequencySpacing spacing) {
  return spacing == FrequencySpacing::kTensor2Tensor ? "t2t" : "paper";
}

EmbeddingView EmbeddingBSD(void* data, DType dtype, int64_t batch, int64_t seq, int64_t d_model) {
  EmbeddingView v;
  v.data = data;
  v.dtype = dtype;
  v.batch = batch;
  v.seq = seq;
  v.d_model = d_model;
  v.stride_seq = d_model;
  v.stride_batch = seq * d_model;
  return v;
}

namespace {

Status Run(const SinusoidalParams& params, const EmbeddingView* x, const EmbeddingView& out) {
  return api::Guarded("posenc sinusoidal", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    api::PreparedSinusoidal prep;
    Status st = api::PrepareSinusoidal(params, x, out, &prep);
    if (!st.ok()) return st;
    const kernels::SinusoidalPlan& plan = prep.plan;
    const int64_t bytes_per_token =
        (x != nullptr ? 2 : 1) * plan.d_model * static_cast<int64_t>(DTypeSize(plan.dtype));
    kernels::RowKernel<kernels::SinusoidalPlan> rows = nullptr;
    st = api::ChooseKernel(kernels::KernelOp::kSinusoidal, plan.dtype, &rows);
    if (!st.ok()) return st;
    parallel::ForEachToken(plan, bytes_per_token, params.exec, rows);
    return Status::Ok();
  });
}

}  // namespace

Status WriteSinusoidal(const SinusoidalParams& params, const EmbeddingView& out) {
  return Run(params, nullptr, out);
}

Status AddSinusoidal(const SinusoidalParams& params, const EmbeddingView& x,
                     const EmbeddingView* out) {
  return Run(params, &x, out != nullptr ? *out : x);
}

Status SinusoidalTable::Create(const SinusoidalParams& params, int64_t d_model,
                               int64_t max_positions, std::shared_ptr<const SinusoidalTable>* out) {
  return api::Guarded("posenc::SinusoidalTable::Create", [&] {
    const Status& env = api::EnsureTargetsInitialized();
    if (!env.ok()) return env;
    if (out == nullptr) return Status(StatusCode::kInvalidArgument, "out is null");
    if (d_model <= 0 || d_model % 2 != 0) {
      return api::Err(StatusCode::kInvalidArgument, "d_model = ", d_model, ": must be even and > 0");
    }
    if (params.table != nullptr) {
      return Status(StatusCode::kInvalidArgument, "params.table must be null when creating a table");
    }
    const api::TableSize size = {"max_positions", max_positions, max_positions, d_model,
                                 api::kMaxTableElements, "max_positions * d_model <= 2^32"};
    Status st = api::CheckTableSize(size);
    if (!st.ok()) return st;
    std::shared_ptr<SinusoidalTable> table(new SinusoidalTable());
    table->d_model_ = d_model;
    table->max_positions_ = max_positions;
    table->layout_ = params.layout;
    table->spacing_ = params.spacing;
    table->base_ = params.base;
    table->position_offset_ = params.position_offset;
    // Row p is the encoding of position p: a write of positions 0, 1, ... into the rows.
    SinusoidalParams p = params;
    p.positions = Positions::Offset(0);
    api::PreparedSinusoidal prep;
    kernels::RowKernel<kernels::SinusoidalPlan> rows = nullptr;
    st = api::FillTableRows(
        size, {&table->values_}, params.exec,
        [&] {
          const EmbeddingView view =
              EmbeddingBSD(table->values_.data(), DType::kF32, 1, max_positions, d_model);
          Status prepared = api::PrepareSinusoidal(p, nullptr, view, &prep);
          if (!prepared.ok()) return prepared;
          return api::ChooseKernel(kernels::KernelOp::kSinusoidal, DType::kF32, &rows);
        },
        [&prep, &rows](int64_t begin, int64_t end) { rows(prep.plan, begin, end); });
    if (!st.ok()) return st;
    *out = std::move(table);
    return Status::Ok();
  });
}

}  // namespace posenc
