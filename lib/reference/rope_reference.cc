// posenc::reference: the oracle. Plain scalar loops in double: the angle is the double product
// p * inv_freq[i], cos/sin come from libm in double (times the attention factor), the rotation is
// evaluated in double. Frequencies from a base are the reference's own (InvFreqFromBase, long
// double: lib/reference/freqs_reference.h), not posenc's lib/freqs. ApplyRope rounds each result once to the output type; ApplyRopeF64 hands
// the doubles out. Caller caches are read as given (their values widened to double). M-RoPE: pair
// i takes the position of its stream (plan.pair_stream), for the angle or the cache row alike.
#include <cmath>
#include <new>
#include <vector>

#include "lib/core/guard.h"
#include "lib/api/rope_prepare.h"
#include "lib/reference/elements.h"
#include "lib/reference/freqs_reference.h"
#include "posenc/rope.h"

namespace posenc {
namespace reference {
namespace {

// Calls emit(io_index, in_offset, out_offset, flat_index, value) for every element of every
// present tensor, all values of one token computed before any of them is emitted (so in-place
// use is safe).
// The frequencies of an on-the-fly call: the caller's array as given, or, from freqs.base, the
// reference's own (InvFreqFromBase into *own) rather than posenc's (prep.default_freqs).
// Tables carry the inv_freq posenc computed for them: read as given.
const double* FrequenciesFor(const api::PreparedRope& prep, const RopeParams& params,
                             std::vector<double>* own) {
  if (prep.default_freqs == nullptr) return prep.inv_freq;
  *own = InvFreqFromBase(params.freqs.base, prep.plan.rotary_dim);
  return own->data();
}

template <class Emit>
void Run(const api::PreparedRope& prep, const double* inv_freq, const Emit& emit) {
  const kernels::RopePlan& plan = prep.plan;
  const int64_t half = plan.rotary_dim / 2;
  std::vector<double> cos(static_cast<size_t>(half)), sin(static_cast<size_t>(half));
  std::vector<double> head(static_cast<size_t>(plan.head_dim));
  const double sign = plan.inverse ? -1.0 : 1.0;
  for (int64_t t = 0; t < plan.tokens(); ++t) {
    const int64_t b = t / plan.seq, s = t % plan.seq;
    // Pair i's position: its M-RoPE stream's (plan.pair_stream), else the token's.
    auto position = [&](int64_t i) {
      const Positions& p = plan.num_streams > 1 ? plan.streams[plan.pair_stream[i]] : plan.positions;
      return kernels::PositionOf(p, b, s, plan.seq);
    };
    if (prep.caller_cache) {
      for (int64_t i = 0; i < half; ++i) {
        const int64_t row = plan.source == kernels::RowSource::kPerToken ? t : position(i);
        cos[i] = ReadElement(plan.cos_rows, plan.cache_dtype, row * half + i);
        sin[i] = ReadElement(plan.sin_rows, plan.cache_dtype, row * half + i);
      }
    } else {
      for (int64_t i = 0; i < half; ++i) {
        const double theta = static_cast<double>(position(i)) * inv_freq[i];
        cos[i] = prep.attention_factor * std::cos(theta);
        sin[i] = prep.attention_factor * std::sin(theta);
      }
    }
    for (int n = 0; n < plan.num_io; ++n) {
      const kernels::HeadsIO& io = plan.io[n];
      for (int64_t h = 0; h < io.heads; ++h) {
        const int64_t in_off = b * io.in_stride[0] + s * io.in_stride[1] + h * io.in_stride[2];
        const int64_t out_off = b * io.out_stride[0] + s * io.out_stride[1] + h * io.out_stride[2];
        for (int64_t j = 0; j < plan.head_dim; ++j) head[j] = ReadElement(io.in, plan.dtype, in_off + j);
        for (int64_t i = 0; i < half; ++i) {
          const int64_t ix = plan.interleaved ? 2 * i : i;
          const int64_t iy = plan.interleaved ? 2 * i + 1 : i + half;
          const double x = ReadElement(io.in, plan.dtype, in_off + ix);
          const double y = ReadElement(io.in, plan.dtype, in_off + iy);
          const double c = cos[i], sn = sign * sin[i];
          head[ix] = x * c - y * sn;
          head[iy] = x * sn + y * c;
        }
        const int64_t flat = ((b * plan.seq + s) * io.heads + h) * plan.head_dim;
        for (int64_t j = 0; j < plan.head_dim; ++j) emit(n, out_off + j, flat + j, head[j]);
      }
    }
  }
}

}  // namespace

Status ApplyRope(const RopeTensors& tensors, const RopeParams& params) {
  return api::Guarded("posenc::reference::ApplyRope", [&] {
    api::PreparedRope prep;
    Status st = api::PrepareRope(tensors, params, &prep);
    if (!st.ok()) return st;
    std::vector<double> own;
    Run(prep, FrequenciesFor(prep, params, &own), [&prep](int n, int64_t out_off, int64_t, double v) {
      WriteElement(prep.plan.io[n].out, prep.plan.dtype, out_off, v);
    });
    return Status::Ok();
  });
}

Status ApplyRopeF64(const RopeTensors& tensors, const RopeParams& params, double* q_out64,
                    double* k_out64) {
  return api::Guarded("posenc::reference::ApplyRopeF64", [&] {
    api::PreparedRope prep;
    Status st = api::PrepareRope(tensors, params, &prep);
    if (!st.ok()) return st;
    double* dst[2] = {nullptr, nullptr};
    int n = 0;
    if (tensors.q.present()) dst[n++] = q_out64;
    if (tensors.k.present()) dst[n++] = k_out64;
    std::vector<double> own;
    Run(prep, FrequenciesFor(prep, params, &own), [&dst](int io, int64_t, int64_t flat, double v) {
      if (dst[io] != nullptr) dst[io][flat] = v;
    });
    return Status::Ok();
  });
}

}  // namespace reference
}  // namespace posenc
