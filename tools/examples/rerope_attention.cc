// A tiny attention layer with random weights run at 4x its nominal training length with ReRoPE
// (posenc::RelativeRopeScores, DistanceMode::kCap): what a runtime does with it.
//
//   x [T, d_model] -> q = x Wq, k = x Wk, v = x Wv (k stays UNROTATED in the cache)
//   scores = RelativeRopeScores(q, k): every query-key distance above the window w reuses the
//            angle of distance w, so no angle beyond the trained range is ever seen
//   out = softmax(scores) . v   (causal, scale 1/sqrt(head_dim))
// Prefill computes all T queries at once; then decode steps append one token at a time and
// score it against the whole cache, reading cos/sin from a RelativeRopeTable built once.
//
// Checks printed on the last line (the test's pass condition): every decode step's output equals
// the prefill of the whole sequence bit for bit, the table path equals the on-the-fly path, and
// every score is within the proved bound of posenc::reference.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "posenc/rerope.h"

namespace {

constexpr int64_t kTrain = 64;           // nominal training length
constexpr int64_t kPrompt = 4 * kTrain;  // prefill at 4x
constexpr int64_t kSteps = 4;            // decode steps after it
constexpr int64_t kTotal = kPrompt + kSteps;
constexpr int64_t kModel = 64, kHeads = 4, kKvHeads = 2, kDim = 16;
constexpr int64_t kWindow = kTrain / 2;  // distances <= w exact, beyond: w

struct Layer {
  std::vector<float> wq, wk, wv;  // [d_model, heads * dim], [d_model, kv_heads * dim] x2
};

// y[t, n] = sum_c x[t, c] w[c, n] (double accumulation, rounded to f32).
std::vector<float> MatMul(const std::vector<float>& x, int64_t rows, const std::vector<float>& w,
                          int64_t cols) {
  std::vector<float> y(static_cast<size_t>(rows * cols));
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t n = 0; n < cols; ++n) {
      double s = 0.0;
      for (int64_t c = 0; c < kModel; ++c) s += double{x[t * kModel + c]} * w[c * cols + n];
      y[t * cols + n] = static_cast<float>(s);
    }
  return y;
}

// out[i, h, :] = softmax_j(scores[h, i, j]) . v[j, h / group, :] for the given query rows.
std::vector<float> Attend(const std::vector<float>& scores, int64_t q_len, int64_t k_len,
                          const std::vector<float>& v) {
  std::vector<float> out(static_cast<size_t>(q_len * kHeads * kDim));
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t i = 0; i < q_len; ++i) {
      const float* row = &scores[(h * q_len + i) * k_len];
      double max = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < k_len; ++j) max = std::fmax(max, row[j]);
      std::vector<double> p(static_cast<size_t>(k_len));
      for (int64_t j = 0; j < k_len; ++j) sum += p[j] = std::exp(row[j] - max);  // exp(-inf) = 0
      for (int64_t e = 0; e < kDim; ++e) {
        double acc = 0.0;
        for (int64_t j = 0; j < k_len; ++j)
          acc += p[j] * v[(j * kKvHeads + h / (kHeads / kKvHeads)) * kDim + e];
        out[(i * kHeads + h) * kDim + e] = static_cast<float>(acc / sum);
      }
    }
  return out;
}

posenc::RelativeRopeParams ReRoPE(int64_t first_query) {
  posenc::RelativeRopeParams p;
  p.map.mode = posenc::DistanceMode::kCap;
  p.map.window = kWindow;
  p.freqs.base = 10000.0;
  p.q_positions = posenc::Positions::Offset(first_query);
  p.k_positions = posenc::Positions::Offset(0);
  p.scale = 1.0 / std::sqrt(static_cast<double>(kDim));
  p.causal = true;
  return p;
}

}  // namespace

int main() {
  std::mt19937 rng(2023);
  std::normal_distribution<float> normal;
  Layer layer;
  for (auto* w : {&layer.wq, &layer.wk, &layer.wv}) {
    w->resize(static_cast<size_t>(kModel * (w == &layer.wq ? kHeads : kKvHeads) * kDim));
    for (float& x : *w) x = normal(rng) / std::sqrt(static_cast<float>(kModel));
  }
  std::vector<float> x(static_cast<size_t>(kTotal * kModel));
  for (float& e : x) e = normal(rng);
  const std::vector<float> q = MatMul(x, kTotal, layer.wq, kHeads * kDim);
  const std::vector<float> k =
      MatMul(x, kTotal, layer.wk, kKvHeads * kDim);  // the cache, unrotated
  const std::vector<float> v = MatMul(x, kTotal, layer.wv, kKvHeads * kDim);

  // Prefill of the whole sequence (the check's reference for the decode steps).
  std::vector<float> scores(static_cast<size_t>(kHeads * kTotal * kTotal));
  posenc::RelativeRopeTensors t;
  t.q = posenc::TensorBSHD(q.data(), 1, kTotal, kHeads, kDim);
  t.k = posenc::TensorBSHD(k.data(), 1, kTotal, kKvHeads, kDim);
  t.scores = posenc::TensorBSHD(scores.data(), 1, kHeads, kTotal, kTotal);
  posenc::Status st = posenc::RelativeRopeScores(t, ReRoPE(0));
  if (!st.ok()) return std::fprintf(stderr, "prefill: %s\n", st.message().c_str()), 1;
  const std::vector<float> prefill = Attend(scores, kTotal, kTotal, v);

  // Every score against the double reference, within the proved bound.
  std::vector<double> exact(scores.size()), magnitude(scores.size());
  st = posenc::reference::RelativeRopeScoresF64(t, ReRoPE(0), exact.data(), magnitude.data());
  if (!st.ok()) return std::fprintf(stderr, "reference: %s\n", st.message().c_str()), 1;
  bool within = true;
  double worst = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (std::isinf(exact[i])) {
      within &= std::isinf(scores[i]) && scores[i] < 0;
      continue;
    }
    const double err = std::fabs(scores[i] - exact[i]);
    // The reference's own error is at most 12 * 2^-53 * M (docs/rerope.md).
    const double bound =
        posenc::reference::RelativeRopeErrorBound(scores[i], magnitude[i], kDim, kDim) +
        12 * 0x1p-53 * magnitude[i];
    within &= err <= bound;
    worst = std::fmax(worst, err / bound);
  }

  // Decode: the prompt's k/v are cached; each step scores one new token against them all with
  // cos/sin rows from a table of distances 0..w (all that kCap ever reads).
  std::shared_ptr<const posenc::RelativeRopeTable> table;
  const posenc::RelativeRopeParams defaults = ReRoPE(0);
  st = posenc::RelativeRopeTable::Create(kDim, defaults.freqs, defaults.map, int64_t{1} << 40,
                                         &table);
  if (!st.ok()) return std::fprintf(stderr, "table: %s\n", st.message().c_str()), 1;
  bool decode_equal = true, table_equal = true;
  for (int64_t step = 0; step < kSteps; ++step) {
    const int64_t pos = kPrompt + step, k_len = pos + 1;
    std::vector<float> row(static_cast<size_t>(kHeads * k_len)), row_fly(row.size());
    posenc::RelativeRopeTensors d;
    d.q = posenc::TensorBSHD(&q[pos * kHeads * kDim], 1, 1, kHeads, kDim);
    d.k = posenc::TensorBSHD(k.data(), 1, k_len, kKvHeads, kDim);
    d.scores = posenc::TensorBSHD(row.data(), 1, kHeads, 1, k_len);
    posenc::RelativeRopeParams p = ReRoPE(pos);
    p.table = table.get();
    st = posenc::RelativeRopeScores(d, p);
    if (!st.ok()) return std::fprintf(stderr, "decode: %s\n", st.message().c_str()), 1;
    d.scores.data = row_fly.data();
    p.table = nullptr;
    st = posenc::RelativeRopeScores(d, p);
    if (!st.ok()) return std::fprintf(stderr, "decode: %s\n", st.message().c_str()), 1;
    table_equal &= row == row_fly;
    const std::vector<float> out = Attend(row, 1, k_len, v);
    decode_equal &= std::memcmp(out.data(), &prefill[pos * kHeads * kDim], out.size() * 4) == 0;
    std::printf("decode step %lld (position %lld, %lld keys): out[0..3] = %.6f %.6f %.6f %.6f\n",
                static_cast<long long>(step), static_cast<long long>(pos),
                static_cast<long long>(k_len), out[0], out[1], out[2], out[3]);
  }

  // What ReRoPE bought: with ordinary RoPE the last query sees distances up to kTotal - 1, far
  // beyond training; with kCap every angle is that of a distance <= w.
  std::printf(
      "trained length %lld, window %lld, sequence %lld: RoPE would use distances up to %lld, "
      "ReRoPE uses at most %.0f\n",
      static_cast<long long>(kTrain), static_cast<long long>(kWindow),
      static_cast<long long>(kTotal), static_cast<long long>(kTotal - 1),
      posenc::reference::MappedDistance(defaults.map, kTotal - 1));
  std::printf("worst score error / proved bound: %.3f\n", worst);
  std::printf("decode == prefill: %s; table == on the fly: %s; within the proved bound: %s\n",
              decode_equal ? "yes" : "no", table_equal ? "yes" : "no", within ? "yes" : "no");
  return decode_equal && table_equal && within ? 0 : 1;
}
