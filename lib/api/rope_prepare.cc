#include "lib/api/rope_prepare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "lib/api/positions.h"
#include "lib/api/tensor_checks.h"
#include "lib/freqs/inv_freq.h"

namespace posenc {
namespace api {
namespace {


Status CheckPair(const Tensor& in, const Tensor& out, const char* in_name, const char* out_name) {
  Status st = CheckView(in.data, in.dtype, in.shape, in.strides, 4, in_name);
  if (!st.ok()) return st;
  const Tensor& written = out.present() ? out : in;
  if (out.present()) {
    st = CheckView(out.data, out.dtype, out.shape, out.strides, 4, out_name);
    if (!st.ok()) return st;
    if (out.dtype != in.dtype) {
      return Err(StatusCode::kInvalidArgument, out_name, ".dtype = ", DTypeName(out.dtype),
                 ": must equal ", in_name, ".dtype = ", DTypeName(in.dtype));
    }
    for (int i = 0; i < 4; ++i) {
      if (out.shape[i] != in.shape[i]) {
        return Err(StatusCode::kInvalidArgument, out_name, ".shape = ",
                   ShapeString(out.shape, 4), ": must equal ", in_name, ".shape = ",
                   ShapeString(in.shape, 4));
      }
    }
    if (!SameView(in, out) && ViewsOverlap(in, out)) {
      return Err(StatusCode::kInvalidArgument, out_name,
                 " partially overlaps ", in_name,
                 ": outputs must be exactly the input (in place) or disjoint from it");
    }
  }
  if (!HasNoSelfOverlap(written.shape, written.strides, 4)) {
    return Err(StatusCode::kInvalidArgument, out.present() ? out_name : in_name,
               ": strides ", ShapeString(written.strides, 4), " for shape ",
               ShapeString(written.shape, 4),
               " make elements alias each other; an output must not overlap itself");
  }
  return Status::Ok();
}

// The outputs of a call (q's and k's, in place or not) with the names messages give them.
struct OutputView {
  const Tensor* view;
  const char* name;
};
int OutputsOf(const RopeTensors& t, OutputView out[2]) {
  int n = 0;
  if (t.q.present()) {
    out[n++] = t.q_out.present() ? OutputView{&t.q_out, "q_out"} : OutputView{&t.q, "q (in place)"};
  }
  if (t.k.present()) {
    out[n++] = t.k_out.present() ? OutputView{&t.k_out, "k_out"} : OutputView{&t.k, "k (in place)"};
  }
  return n;
}

// A buffer the call only reads.
struct Input {
  const void* data;
  uint64_t bytes;
  const char* name;
};

// Every buffer the call only reads (positions, inv_freq, a cache or table) must not share memory
// with an output: the kernels would read values they have already overwritten.
Status CheckApartFromOutputs(const RopeTensors& t, const Input* inputs, int n) {
  OutputView outputs[2];
  const int num_outputs = OutputsOf(t, outputs);
  for (int o = 0; o < num_outputs; ++o) {
    const Tensor& view = *outputs[o].view;
    const ByteSpan span = SpanOf(view.data, view.dtype, view.shape, view.strides, 4);
    for (int i = 0; i < n; ++i) {
      if (ViewOverlapsBytes(view, span, inputs[i].data, inputs[i].bytes)) {
        return Err(StatusCode::kInvalidArgument, inputs[i].name, " overlaps ", outputs[o].name,
                   ": an input must not share memory with an output");
      }
    }
  }
  return Status::Ok();
}

// The inputs of the layout (inv_freq, a cache or a table) against the outputs.
Status CheckLayoutInputsApartFromOutputs(const RopeTensors& t, const RopeParams& params,
                                         const PreparedRope& prep) {
  const kernels::RopePlan& plan = prep.plan;
  Input inputs[4];
  int n = 0;
  const uint64_t half = static_cast<uint64_t>(plan.rotary_dim / 2);
  if (plan.source == kernels::RowSource::kCompute && params.freqs.inv_freq != nullptr) {
    inputs[n++] = {params.freqs.inv_freq, half * 8, "freqs.inv_freq"};
  }
  if (params.source.kind == CosSinSource::Kind::kCache) {
    inputs[n++] = {plan.cos_rows, prep.cache_bytes, "source.cache.cos"};
    inputs[n++] = {plan.sin_rows, prep.cache_bytes, "source.cache.sin"};
  } else if (params.source.kind == CosSinSource::Kind::kTable) {
    const uint64_t bytes = static_cast<uint64_t>(params.source.table->max_positions()) * half * 4;
    inputs[n++] = {plan.cos_rows, bytes, "source.table's cos rows"};
    inputs[n++] = {plan.sin_rows, bytes, "source.table's sin rows"};
  }
  return n == 0 ? Status::Ok() : CheckApartFromOutputs(t, inputs, n);
}

// The range of position stream j of the call (j = 0: the 1-D positions). Computed where it is
// checked rather than kept in an array: a decode step then initialises no array of ranges.
PositionRange StreamRange(const kernels::RopePlan& plan, int j) {
  return RangeOf(plan.num_streams > 1 ? plan.streams[j] : plan.positions, plan.batch, plan.seq);
}
// Prefixes a stream's message with the stream ("stream 1 of ...") for M-RoPE calls.
Status NameStream(Status st, const kernels::RopePlan& plan, int j) {
  if (st.ok() || plan.num_streams == 1) return st;
  return Status(st.code(), "stream " + std::to_string(j) + " of " + st.message());
}

}  // namespace

Status BuildPairStreams(const MRopeSections& m, int64_t rotary_dim, std::vector<uint8_t>* out) {
  const int64_t n = m.num_sections, half = rotary_dim / 2;
  if (n < 0 || n > StreamSnapshot::kMaxStreams) {
    return Err(StatusCode::kInvalidArgument, "mrope.num_sections = ", n, ": must be in [0, ",
               StreamSnapshot::kMaxStreams, "] (0: plain RoPE)");
  }
  if (m.section == nullptr) {
    return Err(StatusCode::kInvalidArgument, "mrope.section is null but mrope.num_sections = ", n);
  }
  int64_t sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (m.section[j] < 0 || m.section[j] > half) {
      return Err(StatusCode::kInvalidArgument, "mrope.section[", j, "] = ", m.section[j],
                 ": must be in [0, rotary_dim / 2 = ", half, "]");
    }
    sum += m.section[j];
  }
  if (sum != half) {
    std::string list;
    for (int64_t j = 0; j < n; ++j) list += (j ? ", " : "") + std::to_string(m.section[j]);
    return Err(StatusCode::kInvalidArgument, "mrope.section = [", list, "] sums to ", sum,
               ": must sum to rotary_dim / 2 = ", half);
  }
  out->assign(static_cast<size_t>(half), 0);
  if (m.interleaved) {
    // Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope: stream j >= 1 overwrites the pairs
    // j, j + n, j + 2n, ... below n * section[j].
    for (int64_t j = 1; j < n; ++j) {
      const int64_t limit = std::min(half, n * m.section[j]);
      for (int64_t i = j; i < limit; i += n) (*out)[static_cast<size_t>(i)] = static_cast<uint8_t>(j);
    }
  } else {
    // apply_multimodal_rotary_pos_emb: consecutive sections.
    int64_t i = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t e = 0; e < m.section[j]; ++e) (*out)[static_cast<size_t>(i++)] = static_cast<uint8_t>(j);
  }
  return Status::Ok();
}

Status CheckFrequencies(const Frequencies& freqs, int64_t rotary_dim, CheckedFrequencies* out) {
  const int64_t half = rotary_dim / 2;
  if (!std::isfinite(freqs.attention_factor)) {
    return Err(StatusCode::kInvalidArgument, "freqs.attention_factor = ", freqs.attention_factor,
               ": must be finite");
  }
  if (freqs.inv_freq != nullptr) {
    Status st = CheckAligned(freqs.inv_freq, 8, "freqs.inv_freq");
    if (!st.ok()) return st;
    if (freqs.inv_freq_len != half) {
      return Err(StatusCode::kInvalidArgument, "freqs.inv_freq_len = ", freqs.inv_freq_len,
                 ": must be rotary_dim / 2 = ", half);
    }
    const freqs::FreqFacts facts = freqs::FactsOf(freqs.inv_freq, half);
    if (const int64_t i = facts.first_nonfinite; i < half) {
      return Err(StatusCode::kInvalidArgument, "freqs.inv_freq[", i, "] = ", freqs.inv_freq[i],
                 ": must be finite");
    }
    out->inv_freq = freqs.inv_freq;
    out->max_freq = facts.max_abs;
    return Status::Ok();
  } else {
    if (freqs.inv_freq_len != 0) {
      return Err(StatusCode::kInvalidArgument, "freqs.inv_freq_len = ", freqs.inv_freq_len,
                 " but freqs.inv_freq is null");
    }
    if (!std::isfinite(freqs.base) || !(freqs.base > 0.0)) {
      return Err(StatusCode::kInvalidArgument, "freqs.base = ", freqs.base,
                 ": must be finite and > 0");
    }
    freqs::FreqFacts facts;
    out->computed = freqs::CachedDefaultInvFreq(freqs.base, rotary_dim, &facts);
    out->inv_freq = out->computed->data();
    if (const int64_t i = facts.first_nonfinite; i < half) {
      return Err(StatusCode::kInvalidArgument, "freqs.base = ", freqs.base, ": inv_freq[", i,
                 "] = base^(-2i/rotary_dim) = ", out->inv_freq[i], " is not finite");
    }
    out->max_freq = facts.max_abs;  // found once when the memo was filled
  }
  return Status::Ok();
}

Status CheckRopeTensors(const RopeTensors& t) {
  const bool has_q = t.q.present(), has_k = t.k.present();
  if (!has_q && !has_k) {
    return Err(StatusCode::kInvalidArgument, "q.data and k.data are both null: nothing to rotate");
  }
  if (!has_q && t.q_out.present()) {
    return Err(StatusCode::kInvalidArgument, "q_out is set but q.data is null");
  }
  if (!has_k && t.k_out.present()) {
    return Err(StatusCode::kInvalidArgument, "k_out is set but k.data is null");
  }
  Status st;
  if (has_q && !(st = CheckPair(t.q, t.q_out, "q", "q_out")).ok()) return st;
  if (has_k && !(st = CheckPair(t.k, t.k_out, "k", "k_out")).ok()) return st;
  if (has_q && has_k) {
    static const char* kAxis[4] = {"batch", "seq", "heads", "head_dim"};
    for (int i : {0, 1, 3}) {
      if (t.k.shape[i] != t.q.shape[i]) {
        return Err(StatusCode::kInvalidArgument, "k.shape[", i, "] (", kAxis[i], ") = ",
                   t.k.shape[i], ": must equal q.shape[", i, "] = ", t.q.shape[i]);
      }
    }
    if (t.k.dtype != t.q.dtype) {
      return Err(StatusCode::kInvalidArgument, "k.dtype = ", DTypeName(t.k.dtype),
                 ": must equal q.dtype = ", DTypeName(t.q.dtype));
    }
    if (ViewsOverlap(t.q, t.k)) {
      return Err(StatusCode::kInvalidArgument, "q and k overlap in memory");
    }
    // An output given as its input's own view (in place, as Python's out_q=q passes it) is that
    // input, checked just above; CheckPair left each other output disjoint from its input.
    const bool q_apart = t.q_out.present() && !SameView(t.q, t.q_out);
    const bool k_apart = t.k_out.present() && !SameView(t.k, t.k_out);
    if ((q_apart && k_apart && ViewsOverlap(t.q_out, t.k_out)) ||
        (q_apart && ViewsOverlap(t.q_out, t.k)) || (k_apart && ViewsOverlap(t.k_out, t.q))) {
      return Err(StatusCode::kInvalidArgument,
                 "q's output and k's input/output overlap in memory");
    }
  }
  return Status::Ok();
}

Status PrepareRopeLayout(const RopeTensors& t, const RopeParams& params, PreparedRope* out) {
  Status st = CheckRopeTensors(t);
  if (!st.ok()) return st;
  const Tensor& shape_src = t.q.present() ? t.q : t.k;
  const int64_t batch = shape_src.shape[0], seq = shape_src.shape[1];
  const int64_t head_dim = shape_src.shape[3];

  const int64_t rotary_dim = params.rotary_dim == 0 ? head_dim : params.rotary_dim;
  if (params.rotary_dim < 0 || rotary_dim % 2 != 0 || rotary_dim > head_dim) {
    return Err(StatusCode::kInvalidArgument, "rotary_dim = ", params.rotary_dim,
               ": must be even, > 0 (or 0 for head_dim) and <= head_dim = ", head_dim);
  }
  // kFromConfig without a config (the config entries resolve it before) means kHalf.
  if (params.pairs != PairLayout::kHalf && params.pairs != PairLayout::kInterleaved &&
      params.pairs != PairLayout::kFromConfig) {
    return Err(StatusCode::kInvalidArgument, "pairs = ", static_cast<int>(params.pairs),
               ": not a PairLayout");
  }
  if (!IsRotationArithmetic(params.arithmetic)) {
    return Err(StatusCode::kInvalidArgument, "arithmetic = ", static_cast<int>(params.arithmetic),
               ": not a RotationArithmetic");
  }
  const bool fma_chain = params.arithmetic == RotationArithmetic::kFmaChain;
  if (fma_chain && params.mrope.present()) {
    return Err(StatusCode::kInvalidArgument, "arithmetic = kFmaChain with mrope.num_sections = ",
               params.mrope.num_sections, ": M-RoPE supports kF64 and kF32");
  }
  if (params.exec.max_threads < 0) {
    return Err(StatusCode::kInvalidArgument, "exec.max_threads = ", params.exec.max_threads,
               ": must be >= 0");
  }

  const CosSinSource& src = params.source;
  const bool per_token =
      src.kind == CosSinSource::Kind::kCache && src.cache.kind == CosSinCache::Kind::kPerToken;

  // Filled in place: callers discard *out when this fails.
  PreparedRope& prep = *out;
  kernels::RopePlan& plan = prep.plan;
  // M-RoPE: the pair -> stream map (1-D positions with it are text-only tokens: every stream
  // equal, plain RoPE; multi-stream ids are PrepareRopePositions's).
  if (params.mrope.present()) {
    if (!(st = BuildPairStreams(params.mrope, rotary_dim, &prep.pair_stream)).ok()) return st;
    if (per_token) {
      return Err(StatusCode::kInvalidArgument, "mrope.num_sections = ", params.mrope.num_sections,
                 " with source.cache.kind = kPerToken: per-token rows already hold each token's "
                 "angles (pass mrope.num_sections = 0)");
    }
    prep.mrope_sections = params.mrope.num_sections;
  }
  plan.batch = batch;
  plan.seq = seq;
  switch (src.kind) {
    case CosSinSource::Kind::kOnTheFly: {
      CheckedFrequencies f;
      if (!(st = CheckFrequencies(params.freqs, rotary_dim, &f)).ok()) return st;
      plan.source = kernels::RowSource::kCompute;
      plan.inv_freq = f.inv_freq;
      prep.default_freqs = std::move(f.computed);
      plan.attention_factor = params.freqs.attention_factor;
      prep.limit = {PositionLimit::Kind::kAngle, f.max_freq, 0, nullptr};
      prep.inv_freq = plan.inv_freq;
      prep.attention_factor = plan.attention_factor;
      break;
    }
    case CosSinSource::Kind::kTable: {
      const RopeTable* table = src.table;
      if (table == nullptr) return Err(StatusCode::kInvalidArgument, "source.table is null");
      if (table->rotary_dim() != rotary_dim) {
        return Err(StatusCode::kInvalidArgument, "source.table->rotary_dim() = ",
                   table->rotary_dim(), ": must equal rotary_dim = ", rotary_dim);
      }
      if (fma_chain && !table->has_lo_rows()) {
        return Err(StatusCode::kInvalidArgument,
                   "arithmetic = kFmaChain: source.table has no lo rows (create it with "
                   "RotationArithmetic::kFmaChain)");
      }
      prep.limit = {PositionLimit::Kind::kRows, 0.0, table->max_positions(), "table's"};
      plan.source = kernels::RowSource::kByPosition;
      plan.cos_rows = table->cos_row(0);
      plan.sin_rows = table->sin_row(0);
      if (fma_chain) {
        plan.cos_lo_rows = table->cos_lo_row(0);
        plan.sin_lo_rows = table->sin_lo_row(0);
      }
      plan.cache_dtype = DType::kF32;
      prep.inv_freq = table->inv_freq().data();
      prep.attention_factor = table->attention_factor();
      break;
    }
    case CosSinSource::Kind::kCache: {
      const CosSinCache& c = src.cache;
      if (c.cos == nullptr) return Err(StatusCode::kInvalidArgument, "source.cache.cos is null");
      if (c.sin == nullptr) return Err(StatusCode::kInvalidArgument, "source.cache.sin is null");
      if (c.dtype != DType::kF32 && c.dtype != DType::kBF16 && c.dtype != DType::kF16) {
        return Err(StatusCode::kInvalidArgument, "source.cache.dtype = ", static_cast<int>(c.dtype),
                   ": not a posenc::DType");
      }
      if (!(st = CheckAligned(c.cos, ElementBytes(c.dtype), "source.cache.cos")).ok() ||
          !(st = CheckAligned(c.sin, ElementBytes(c.dtype), "source.cache.sin")).ok()) {
        return st;
      }
      const int64_t half = rotary_dim / 2;
      const int64_t element = static_cast<int64_t>(ElementBytes(c.dtype));
      int64_t rows = 0, cache_bytes = 0;
      if (per_token) {
        plan.source = kernels::RowSource::kPerToken;
        rows = batch * seq;
      } else if (c.kind == CosSinCache::Kind::kByPosition) {
        if (c.rows <= 0) {
          return Err(StatusCode::kInvalidArgument, "source.cache.rows = ", c.rows,
                     ": must be > 0");
        }
        rows = c.rows;
        prep.limit = {PositionLimit::Kind::kRows, 0.0, c.rows, "cache's"};
        plan.source = kernels::RowSource::kByPosition;
      } else {
        return Err(StatusCode::kInvalidArgument, "source.cache.kind = ", static_cast<int>(c.kind),
                   ": not a CosSinCache::Kind");
      }
      // Every row index the kernels form (row * half) then stays inside a buffer whose byte size
      // fits in 64 bits and in the address space.
      uintptr_t end;
      if (__builtin_mul_overflow(rows, half, &cache_bytes) ||
          __builtin_mul_overflow(cache_bytes, element, &cache_bytes) ||
          __builtin_add_overflow(reinterpret_cast<uintptr_t>(c.cos),
                                 static_cast<uintptr_t>(cache_bytes), &end) ||
          __builtin_add_overflow(reinterpret_cast<uintptr_t>(c.sin),
                                 static_cast<uintptr_t>(cache_bytes), &end)) {
        return Err(StatusCode::kInvalidArgument, "source.cache: ", rows, " rows of rotary_dim / 2 = ",
                   half, " ", DTypeName(c.dtype), " values overflow the 64-bit byte size / address space");
      }
      plan.cos_rows = c.cos;
      plan.sin_rows = c.sin;
      plan.cache_dtype = c.dtype;
      prep.caller_cache = true;
      prep.cache_bytes = static_cast<uint64_t>(cache_bytes);
      break;
    }
    default:
      return Err(StatusCode::kInvalidArgument, "source.kind = ", static_cast<int>(src.kind),
                 ": not a CosSinSource::Kind");
  }

  plan.head_dim = head_dim;
  plan.rotary_dim = rotary_dim;
  plan.dtype = shape_src.dtype;
  plan.interleaved = params.pairs == PairLayout::kInterleaved;
  plan.inverse = params.inverse;
  plan.arithmetic = params.arithmetic;
  for (const auto& [in, o] : {std::pair<const Tensor*, const Tensor*>{&t.q, &t.q_out},
                              std::pair<const Tensor*, const Tensor*>{&t.k, &t.k_out}}) {
    if (!in->present()) continue;
    const Tensor& w = o->present() ? *o : *in;
    kernels::HeadsIO& io = plan.io[plan.num_io++];
    io.in = in->data;
    io.out = w.data;
    io.heads = in->shape[2];
    for (int i = 0; i < 3; ++i) {
      io.in_stride[i] = in->strides[i];
      io.out_stride[i] = w.strides[i];
    }
  }
  return CheckLayoutInputsApartFromOutputs(t, params, prep);
}

Status PrepareRopePositions(const PreparedRope& layout, const RopeTensors& t,
                            const Positions& positions, RopePositions* state,
                            kernels::RopePlan* plan) {
  const bool stream_ids = positions.kind == Positions::Kind::kStreamIds32 ||
                          positions.kind == Positions::Kind::kStreamIds64;
  if (stream_ids && layout.mrope_sections == 0) {
    return Err(StatusCode::kInvalidArgument, "positions.kind = ",
               positions.kind == Positions::Kind::kStreamIds32 ? "kStreamIds32" : "kStreamIds64",
               ": multi-stream ids need mrope sections (mrope.num_sections = 0)");
  }
  // Per-token caches have no positions: they are never read.
  if (layout.plan.source == kernels::RowSource::kPerToken) return Status::Ok();
  const int64_t batch = plan->batch, seq = plan->seq;
  Status st;
  // From here on only the copy of the positions is read (see PositionSnapshot). With stream ids,
  // plan->positions is stream 0 (the only stream of a one-section call).
  if (stream_ids) {
    StreamSnapshot& streams = state->streams.emplace();
    if (!(st = streams.Take(positions, batch, seq, layout.mrope_sections)).ok()) return st;
    plan->num_streams = static_cast<int>(streams.streams());
    plan->streams = streams.all_streams();
    plan->pair_stream = layout.pair_stream.data();
    plan->positions = streams.stream(0);
  } else {
    st = state->positions.Take(positions, batch, seq, "positions", &plan->positions);
    if (!st.ok()) return st;
  }
  const PositionLimit& limit = layout.limit;
  for (int j = 0; j < plan->num_streams; ++j) {
    const PositionRange range = StreamRange(*plan, j);
    st = limit.kind == PositionLimit::Kind::kAngle
             ? CheckPositionAngle(range, 0, limit.max_freq, seq, "|p * inv_freq|")
             : CheckRowsCover(range, limit.rows, seq, limit.rows_name);
    if (!st.ok()) return NameStream(st, *plan, j);
  }
  const PositionBytes p = CallerPositionBytes(positions, batch, seq);
  if (p.data == nullptr) return Status::Ok();
  const Input input = {p.data, p.bytes, p.name};
  return CheckApartFromOutputs(t, &input, 1);
}

Status PrepareRope(const RopeTensors& t, const RopeParams& params, PreparedRope* out) {
  Status st = PrepareRopeLayout(t, params, out);
  if (!st.ok()) return st;
  return PrepareRopePositions(*out, t, params.positions, &out->positions, &out->plan);
}

}  // namespace api
}  // namespace posenc
