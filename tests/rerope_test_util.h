// Shared helpers for the RelativeRopeScores tests: random q / k in padded, misaligned buffers of
// any dtype, a scores view with guard zones, and the error measure of the accuracy contract
// against posenc::reference.
#ifndef POSENC_TESTS_REROPE_TEST_UTIL_H_
#define POSENC_TESTS_REROPE_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "posenc/half.h"
#include "posenc/rerope.h"

namespace posenc {
namespace test {

// posenc::reference's own error, in units of 2^-53 M (proved in docs/rerope.md §5).
constexpr double kReferenceError = 12.0;

struct ReropeCase {
  int64_t batch = 1, q_len = 1, k_len = 1, heads = 1, kv_heads = 1, head_dim = 8;
  DType dtype = DType::kF32;
  RelativeRopeParams params;
  bool bhsd = false;  // q / k memory [batch, heads, seq, head_dim]
  int64_t pad = 0;    // elements after each q / k head row and after each score row
  size_t lead = 0;    // elements in front of every buffer (misalignment)
  uint32_t seed = 1;
  float magnitude = 1.f;  // standard deviation of q and k
};

struct ReropeOutcome {
  Status status;
  std::vector<float> scores;     // gathered, contiguous [batch, heads, q_len, k_len]
  double max_error_ratio = 0.0;  // max |score - exact| / (contract bound + reference error)
  double max_ulp = 0.0;          // max |score - exact| / ulp(exact), |exact| >= 2^-8 M only
  bool masked_ok = true;         // -inf exactly where the reference masks, finite elsewhere
  bool untouched = true;         // q, k and everything outside the scores view unchanged
};

namespace detail {
// One q or k tensor of the case's dtype in a byte buffer with `lead` elements in front.
struct Host {
  std::vector<unsigned char> bytes;
  Tensor view;
};

inline Host MakeHost(const ReropeCase& c, int64_t seq, int64_t heads, uint32_t seed) {
  const size_t elem = DTypeSize(c.dtype);
  const int64_t row = c.head_dim + c.pad;
  Tensor t;
  t.dtype = c.dtype;
  t.shape[0] = c.batch;
  t.shape[1] = seq;
  t.shape[2] = heads;
  t.shape[3] = c.head_dim;
  t.strides[3] = 1;
  if (c.bhsd) {
    t.strides[1] = row;
    t.strides[2] = seq * row;
    t.strides[0] = heads * seq * row;
  } else {
    t.strides[2] = row;
    t.strides[1] = heads * row;
    t.strides[0] = seq * heads * row;
  }
  const size_t n = static_cast<size_t>(c.batch * seq * heads * row);
  std::vector<float> values(n);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, c.magnitude);
  for (float& v : values) v = dist(rng);
  Host h;
  h.bytes.resize((n + c.lead + 16) * elem);
  void* data = h.bytes.data() + c.lead * elem;
  if (c.dtype == DType::kF32) {
    std::memcpy(data, values.data(), n * 4);
  } else {
    (void)ConvertFromF32(values.data(), n, c.dtype, data);
  }
  t.data = data;
  h.view = t;
  return h;
}
}  // namespace detail

// Runs posenc::RelativeRopeScores (or the reference) on fresh random inputs and measures it
// against posenc::reference::RelativeRopeScoresF64.
inline ReropeOutcome RunReropeCase(const ReropeCase& c, bool use_reference = false) {
  detail::Host q = detail::MakeHost(c, c.q_len, c.heads, c.seed);
  detail::Host k = detail::MakeHost(c, c.k_len, c.kv_heads, c.seed * 7919u + 3u);
  const std::vector<unsigned char> q_before = q.bytes, k_before = k.bytes;
  const int64_t row = c.k_len + c.pad;
  const size_t n = static_cast<size_t>(c.batch * c.heads * c.q_len * row);
  std::vector<float> storage(n + c.lead + 16, std::nanf("7"));
  const std::vector<float> storage_before = storage;
  RelativeRopeTensors t;
  t.q = q.view;
  t.k = k.view;
  t.scores.data = storage.data() + c.lead;
  t.scores.dtype = DType::kF32;
  const int64_t shape[4] = {c.batch, c.heads, c.q_len, c.k_len};
  const int64_t strides[4] = {c.heads * c.q_len * row, c.q_len * row, row, 1};
  std::copy(shape, shape + 4, t.scores.shape);
  std::copy(strides, strides + 4, t.scores.strides);

  ReropeOutcome o;
  o.status =
      use_reference ? reference::RelativeRopeScores(t, c.params) : RelativeRopeScores(t, c.params);
  if (!o.status.ok()) return o;
  o.untouched = q.bytes == q_before && k.bytes == k_before;

  const size_t total = static_cast<size_t>(c.batch * c.heads * c.q_len * c.k_len);
  std::vector<double> exact(total), magnitude(total);
  o.status = reference::RelativeRopeScoresF64(t, c.params, exact.data(), magnitude.data());
  if (!o.status.ok()) return o;
  const int64_t rotary = c.params.rotary_dim == 0 ? c.head_dim : c.params.rotary_dim;
  std::vector<char> inside(storage.size(), 0);
  size_t flat = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.q_len; ++i)
        for (int64_t j = 0; j < c.k_len; ++j, ++flat) {
          const size_t at =
              c.lead + static_cast<size_t>(b * strides[0] + h * strides[1] + i * strides[2] + j);
          inside[at] = 1;
          const float s = storage[at];
          o.scores.push_back(s);
          const double e = exact[flat];
          if (std::isinf(e)) {
            o.masked_ok &= std::isinf(s) && s < 0 && e < 0;
            continue;
          }
          if (!std::isfinite(s)) {
            o.masked_ok = false;
            continue;
          }
          const double err = std::fabs(static_cast<double>(s) - e);
          const double bound =
              reference::RelativeRopeErrorBound(s, magnitude[flat], c.head_dim, rotary) +
              kReferenceError * 0x1p-53 * magnitude[flat];
          o.max_error_ratio = std::max(o.max_error_ratio, err / bound);
          if (std::fabs(e) >= magnitude[flat] * 0x1p-8) {
            o.max_ulp = std::max(o.max_ulp, err / reference::UlpF32(e));
          }
        }
  for (size_t i = 0; i < storage.size(); ++i) {
    if (!inside[i] && std::memcmp(&storage[i], &storage_before[i], 4) != 0) o.untouched = false;
  }
  return o;
}

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_REROPE_TEST_UTIL_H_
