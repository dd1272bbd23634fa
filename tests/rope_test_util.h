// Shared helpers for the RoPE tests: random tensors in padded, deliberately misaligned buffers,
// and the error measure of the accuracy contract.
#ifndef POSENC_TESTS_ROPE_TEST_UTIL_H_
#define POSENC_TESTS_ROPE_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <random>
#include <vector>

#include "posenc/rope.h"

namespace posenc {
namespace test {

// The accuracy contract (README, docs/math.md §7): each f32 output within this many ulp of
// max(|x|, |y|) of its input pair, measured against reference::ApplyRopeF64 (per rotation
// arithmetic; derivation in lib/kernels/rope-inl.h).
constexpr double kMaxUlp = 2.0;
constexpr double kMaxUlpF32Arithmetic = 3.0;
inline double MaxUlp(RotationArithmetic a) {
  return a == RotationArithmetic::kF32 ? kMaxUlpF32Arithmetic : kMaxUlp;  // kF64, kFmaChain: 2
}

inline double UlpOf(double m) { return reference::UlpF32(m); }

// A float buffer with `lead` floats in front of the data (misalignment) and a guard zone after
// it; every element starts as `fill`.
struct Buffer {
  std::vector<float> storage;
  size_t lead;
  Buffer(size_t n, size_t lead_floats, float fill = 0.f)
      : storage(n + lead_floats + 64, fill), lead(lead_floats) {}
  float* data() { return storage.data() + lead; }
};

inline void FillNormal(float* p, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (size_t i = 0; i < n; ++i) p[i] = dist(rng);
}

// A strided 4-D view over `buf` with padding after each head / token / batch.
struct StridedSpec {
  int64_t batch, seq, heads, head_dim;
  int64_t head_pad = 0, token_pad = 0, batch_pad = 0;
  bool bhsd = false;  // heads outermost after batch
};

inline Tensor MakeView(float* data, const StridedSpec& s) {
  Tensor t;
  t.data = data;
  t.shape[0] = s.batch;
  t.shape[1] = s.seq;
  t.shape[2] = s.heads;
  t.shape[3] = s.head_dim;
  t.strides[3] = 1;
  if (!s.bhsd) {
    t.strides[2] = s.head_dim + s.head_pad;
    t.strides[1] = s.heads * t.strides[2] + s.token_pad;
    t.strides[0] = s.seq * t.strides[1] + s.batch_pad;
  } else {
    t.strides[1] = s.head_dim + s.token_pad;
    t.strides[2] = s.seq * t.strides[1] + s.head_pad;
    t.strides[0] = s.heads * t.strides[2] + s.batch_pad;
  }
  return t;
}

inline size_t ElementsSpanned(const Tensor& t) {
  int64_t m = 0;
  for (int i = 0; i < 4; ++i) m += (t.shape[i] - 1) * t.strides[i];
  return static_cast<size_t>(m + 1);
}

inline const float& At(const Tensor& t, int64_t b, int64_t s, int64_t h, int64_t j) {
  return static_cast<const float*>(t.data)[b * t.strides[0] + s * t.strides[1] +
                                           h * t.strides[2] + j];
}

// Index of the partner of element j in its pair (j < rotary_dim).
inline int64_t Partner(int64_t j, int64_t rotary_dim, PairLayout pairs) {
  if (pairs == PairLayout::kInterleaved) return j ^ 1;
  const int64_t half = rotary_dim / 2;
  return j < half ? j + half : j - half;
}

}  // namespace test
}  // namespace posenc


namespace posenc {
namespace test {

// One RoPE call on freshly made random tensors.
struct RopeCase {
  StridedSpec q{1, 1, 0, 0};  // heads == 0: q absent
  StridedSpec k{1, 1, 0, 0};  // heads == 0: k absent
  RopeParams params;
  bool in_place = true;
  size_t lead = 0;  // floats in front of every buffer (0 keeps vector alignment of the vector)
  uint32_t seed = 1;
};

struct RopeOutcome {
  Status status;
  double max_ulp = 0.0;           // against reference::ApplyRopeF64
  bool outside_untouched = true;  // no byte outside the output views changed
  std::vector<float> q, k;        // outputs gathered to contiguous BSHD (bitwise comparisons)
};

namespace detail {
struct Side {
  bool present = false;
  Tensor in, out;
  Buffer in_buf{0, 0}, out_buf{0, 0};
  std::vector<float> in_copy;   // input values before the call (whole buffer)
  std::vector<float> out_copy;  // output buffer before the call
};

inline void MakeSide(const StridedSpec& spec, bool in_place, size_t lead, uint32_t seed,
                     Side* side) {
  side->present = spec.heads > 0;
  if (!side->present) return;
  const size_t n = ElementsSpanned(MakeView(nullptr, spec));
  side->in_buf = Buffer(n, lead);
  FillNormal(side->in_buf.storage.data(), side->in_buf.storage.size(), seed);
  side->in = MakeView(side->in_buf.data(), spec);
  side->in_copy = side->in_buf.storage;
  if (!in_place) {
    side->out_buf = Buffer(n, lead, std::nanf(""));
    side->out = MakeView(side->out_buf.data(), spec);
    side->out_copy = side->out_buf.storage;
  }
}

inline std::vector<float> Gather(const Tensor& t) {
  std::vector<float> v;
  for (int64_t b = 0; b < t.shape[0]; ++b)
    for (int64_t s = 0; s < t.shape[1]; ++s)
      for (int64_t h = 0; h < t.shape[2]; ++h)
        for (int64_t j = 0; j < t.shape[3]; ++j) v.push_back(At(t, b, s, h, j));
  return v;
}

// Whether every element of `now` outside view `t` (based at `base`) equals `before`.
inline bool OutsideUntouched(const Tensor& t, const float* base, const std::vector<float>& now,
                             const std::vector<float>& before) {
  std::vector<char> inside(now.size(), 0);
  const size_t origin = static_cast<size_t>(static_cast<const float*>(t.data) - base);
  for (int64_t b = 0; b < t.shape[0]; ++b)
    for (int64_t s = 0; s < t.shape[1]; ++s)
      for (int64_t h = 0; h < t.shape[2]; ++h)
        for (int64_t j = 0; j < t.shape[3]; ++j)
          inside[origin + static_cast<size_t>(b * t.strides[0] + s * t.strides[1] +
                                              h * t.strides[2] + j)] = 1;
  for (size_t i = 0; i < now.size(); ++i) {
    if (!inside[i] && std::memcmp(&now[i], &before[i], 4) != 0) return false;
  }
  return true;
}
}  // namespace detail

// Runs posenc::ApplyRope (or posenc::reference::ApplyRope when `use_reference`) on the case.
inline RopeOutcome RunRopeCase(const RopeCase& c, bool use_reference = false) {
  detail::Side q, k;
  detail::MakeSide(c.q, c.in_place, c.lead, c.seed, &q);
  detail::MakeSide(c.k, c.in_place, c.lead, c.seed * 7919u + 1u, &k);
  RopeTensors t;
  if (q.present) {
    t.q = q.in;
    if (!c.in_place) t.q_out = q.out;
  }
  if (k.present) {
    t.k = k.in;
    if (!c.in_place) t.k_out = k.out;
  }
  RopeOutcome o;
  o.status = use_reference ? reference::ApplyRope(t, c.params) : ApplyRope(t, c.params);
  if (!o.status.ok()) return o;

  // Exact results from the untouched input copies.
  RopeTensors copies;
  std::vector<float> q_src = q.in_copy, k_src = k.in_copy;
  if (q.present) copies.q = MakeView(q_src.data() + c.lead, c.q);
  if (k.present) copies.k = MakeView(k_src.data() + c.lead, c.k);
  std::vector<double> q64, k64;
  if (q.present) q64.resize(static_cast<size_t>(c.q.batch * c.q.seq * c.q.heads * c.q.head_dim));
  if (k.present) k64.resize(static_cast<size_t>(c.k.batch * c.k.seq * c.k.heads * c.k.head_dim));
  o.status = reference::ApplyRopeF64(copies, c.params, q64.data(), k64.data());
  if (!o.status.ok()) return o;

  const int64_t head_dim = q.present ? c.q.head_dim : c.k.head_dim;
  const int64_t rotary = c.params.rotary_dim == 0 ? head_dim : c.params.rotary_dim;
  for (detail::Side* side : {&q, &k}) {
    if (!side->present) continue;
    const std::vector<double>& exact = side == &q ? q64 : k64;
    const Tensor& out = c.in_place ? side->in : side->out;
    const Tensor& src = side == &q ? copies.q : copies.k;
    o.max_ulp = std::max(o.max_ulp, reference::MaxPairUlpError(out, src, exact.data(), rotary,
                                                                 c.params.pairs));
    (side == &q ? o.q : o.k) = detail::Gather(out);
    if (c.in_place) {
      o.outside_untouched &= detail::OutsideUntouched(side->in, side->in_buf.storage.data(),
                                                      side->in_buf.storage, side->in_copy);
    } else {
      o.outside_untouched &= detail::OutsideUntouched(side->out, side->out_buf.storage.data(),
                                                      side->out_buf.storage, side->out_copy);
      o.outside_untouched &= side->in_buf.storage.size() == side->in_copy.size() &&
                             std::memcmp(side->in_buf.storage.data(), side->in_copy.data(),
                                         side->in_copy.size() * 4) == 0;
    }
  }
  return o;
}

// Largest |a - b| over rotated elements in ulp_f32 of max(|x|, |y|) of the input pair.
inline double MaxUlpApart(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& in, int64_t head_dim, int64_t rotary,
                          PairLayout pairs) {
  double worst = 0;
  for (size_t h = 0; h < in.size() / static_cast<size_t>(head_dim); ++h)
    for (int64_t j = 0; j < rotary; ++j) {
      const size_t e = h * static_cast<size_t>(head_dim) + static_cast<size_t>(j);
      const size_t partner =
          h * static_cast<size_t>(head_dim) + static_cast<size_t>(Partner(j, rotary, pairs));
      const double m = std::max(std::fabs(in[e]), std::fabs(in[partner]));
      worst = std::max(worst, std::fabs(static_cast<double>(a[e]) - b[e]) / reference::UlpF32(m));
    }
  return worst;
}

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_ROPE_TEST_UTIL_H_
