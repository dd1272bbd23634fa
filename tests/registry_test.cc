// The kernel registry (lib/kernels/registry.h) on every SIMD target: the table holds exactly one
// entry per (operation, dtype), named "<op>_<dtype>", that FindKernel finds; and every entry,
// called directly on a plan lib/api built for its dtype, agrees with posenc::reference:
//   rope, mrope, rerotate: within B + 1 ulp_T(max(|x|, |y|)) of the rounded reference per rotated
//     element (B the kernel's bound against the exact value, lib/kernels/rope-inl.h: 2 for f32
//     with kF64 arithmetic, 1 + 3 * 2^-13 for f16, 1 + 3 * 2^-16 for bf16; the rounded reference
//     within 0.5 ulp_T of |out| <= sqrt(2) max(|x|, |y|), so 1 ulp_T(M));
//   sinusoidal: the f64 reference within 0.5 ulp_f32 + 2^-50 (f32), 1 ulp_T (bf16 / f16), as
//     tests/sinusoidal_test.cc;
//   rerope tiles: RelativeRopeErrorBound + the reference's own 12 * 2^-53 * magnitude, as
//     tests/rerope_test_util.h.
// A new entry is covered here without a new test: the loop runs whatever the table lists.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/rerope_prepare.h"
#include "lib/api/rerotate_prepare.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/sinusoidal_prepare.h"
#include "lib/kernels/registry.h"
#include "lib/reference/elements.h"
#include "posenc/rerope.h"
#include "posenc/rope.h"
#include "posenc/shift.h"
#include "posenc/sinusoidal.h"
#include "posenc/targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/registry_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

#ifndef POSENC_TESTS_REGISTRY_HELPERS_
#define POSENC_TESTS_REGISTRY_HELPERS_
namespace posenc {
namespace registry_test {

using kernels::KernelEntry;
using kernels::KernelOp;

constexpr KernelOp kOps[] = {KernelOp::kRope, KernelOp::kMRope, KernelOp::kSinusoidal,
                             KernelOp::kReropeTiles, KernelOp::kRerotate};
constexpr DType kDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};

inline std::string DTypeSuffix(DType d) {
  return d == DType::kF32 ? "f32" : d == DType::kBF16 ? "bf16" : "f16";
}

// Values of `dtype` in a byte buffer: random normals rounded to the dtype, read back as doubles.
struct Buffer {
  DType dtype;
  std::vector<uint8_t> bytes;
  Buffer(DType d, size_t n) : dtype(d), bytes(n * DTypeSize(d)) {}
  void* data() { return bytes.data(); }
  size_t size() const { return bytes.size() / DTypeSize(dtype); }
  double at(size_t i) const { return reference::ReadElement(bytes.data(), dtype, static_cast<int64_t>(i)); }
  void Fill(uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> dist(0.0, 1.0);
    for (size_t i = 0; i < size(); ++i) {
      reference::WriteElement(bytes.data(), dtype, static_cast<int64_t>(i), dist(rng));
    }
  }
};

inline Tensor Dense(Buffer& b, int64_t batch, int64_t seq, int64_t heads, int64_t dim) {
  Tensor t;
  t.data = b.data();
  t.dtype = b.dtype;
  const int64_t shape[4] = {batch, seq, heads, dim};
  const int64_t strides[4] = {seq * heads * dim, heads * dim, dim, 1};
  std::copy(shape, shape + 4, t.shape);
  std::copy(strides, strides + 4, t.strides);
  return t;
}

// B + 1 for the dtype (header comment).
inline double RotationBound(DType d) {
  return d == DType::kF32 ? 3.0 : d == DType::kF16 ? 2.0 + 3 * 0x1p-13 : 2.0 + 3 * 0x1p-16;
}

// Largest |got - want| over the rotated elements of [.., head_dim] heads, in ulp_T of the
// larger magnitude of the element's input pair (half layout: partner j +- rotary / 2).
inline double MaxPairUlpApart(const Buffer& got, const Buffer& want, const Buffer& in,
                              int64_t head_dim, int64_t rotary) {
  double worst = 0;
  const int64_t half = rotary / 2;
  for (size_t h = 0; h < in.size() / static_cast<size_t>(head_dim); ++h) {
    for (int64_t j = 0; j < rotary; ++j) {
      const size_t e = h * static_cast<size_t>(head_dim) + static_cast<size_t>(j);
      const size_t p = h * static_cast<size_t>(head_dim) +
                       static_cast<size_t>(j < half ? j + half : j - half);
      const double m = std::max(std::fabs(in.at(e)), std::fabs(in.at(p)));
      worst = std::max(worst, std::fabs(got.at(e) - want.at(e)) / reference::UlpOf(in.dtype, m));
    }
    for (int64_t j = rotary; j < head_dim; ++j) {  // the pass-through tail: copied exactly
      const size_t e = h * static_cast<size_t>(head_dim) + static_cast<size_t>(j);
      if (got.at(e) != in.at(e)) worst = std::max(worst, 1e9);
    }
  }
  return worst;
}

inline std::vector<double> InvFreq(int64_t half, double base) {
  std::vector<double> w(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    w[static_cast<size_t>(i)] = std::pow(base, -2.0 * static_cast<double>(i) / (2.0 * static_cast<double>(half)));
  }
  return w;
}

constexpr int64_t kBatch = 2, kSeq = 7, kHeads = 3, kHeadDim = 38, kRotary = 34;

// RoPE / M-RoPE: q only, out of place, half pairs, kF64 arithmetic (f32), positions by id.
inline void CheckRope(const KernelEntry& e) {
  const bool mrope = e.op == KernelOp::kMRope;
  const size_t n = static_cast<size_t>(kBatch * kSeq * kHeads * kHeadDim);
  Buffer in(e.dtype, n), got(e.dtype, n), want(e.dtype, n);
  in.Fill(11 + static_cast<uint32_t>(e.dtype));
  std::vector<int64_t> ids(static_cast<size_t>(3 * kBatch * kSeq));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 37) % 1000);
  const std::vector<double> w = InvFreq(kRotary / 2, 10000.0);
  const int64_t sections[3] = {5, 6, 6};  // 17 pairs
  RopeParams params;
  params.rotary_dim = kRotary;
  params.freqs.inv_freq = w.data();
  params.freqs.inv_freq_len = kRotary / 2;
  params.freqs.attention_factor = 1.0;
  if (mrope) {
    params.positions = Positions::StreamIds(ids.data(), 3);
    params.mrope.section = sections;
    params.mrope.num_sections = 3;
  } else {
    params.positions = Positions::Ids(ids.data());
  }
  RopeTensors t;
  t.q = Dense(in, kBatch, kSeq, kHeads, kHeadDim);
  t.q_out = Dense(got, kBatch, kSeq, kHeads, kHeadDim);
  api::PreparedRope prep;
  ASSERT_TRUE(api::PrepareRope(t, params, &prep).ok()) << e.name;
  ASSERT_EQ(prep.plan.num_streams > 1, mrope) << e.name;
  ASSERT_EQ(prep.plan.dtype, e.dtype) << e.name;
  e.fn<kernels::RopePlan>()(prep.plan, 0, prep.plan.tokens());
  t.q_out = Dense(want, kBatch, kSeq, kHeads, kHeadDim);
  ASSERT_TRUE(reference::ApplyRope(t, params).ok()) << e.name;
  EXPECT_LE(MaxPairUlpApart(got, want, in, kHeadDim, kRotary), RotationBound(e.dtype)) << e.name;
}

inline void CheckRerotate(const KernelEntry& e) {
  const size_t n = static_cast<size_t>(kBatch * kSeq * kHeads * kHeadDim);
  Buffer in(e.dtype, n), got(e.dtype, n), want(e.dtype, n);
  in.Fill(23 + static_cast<uint32_t>(e.dtype));
  std::vector<int64_t> from(static_cast<size_t>(kBatch * kSeq)), to(from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    from[i] = static_cast<int64_t>(i * 13 % 500);
    to[i] = static_cast<int64_t>(i * 29 % 700);
  }
  const std::vector<double> w_from = InvFreq(kRotary / 2, 10000.0), w_to = InvFreq(kRotary / 2, 500000.0);
  RerotateParams rp;
  rp.rotary_dim = kRotary;
  rp.from_freqs.inv_freq = w_from.data();
  rp.from_freqs.inv_freq_len = kRotary / 2;
  rp.to_freqs.inv_freq = w_to.data();
  rp.to_freqs.inv_freq_len = kRotary / 2;
  rp.from_positions = Positions::Ids(from.data());
  rp.to_positions = Positions::Ids(to.data());
  const Tensor k = Dense(in, kBatch, kSeq, kHeads, kHeadDim);
  const Tensor k_out = Dense(got, kBatch, kSeq, kHeads, kHeadDim);
  api::PreparedRerotate prep;
  ASSERT_TRUE(api::PrepareRerotate(k, k_out, rp, &prep).ok()) << e.name;
  ASSERT_EQ(prep.plan.dtype, e.dtype) << e.name;
  e.fn<kernels::RerotatePlan>()(prep.plan, 0, prep.plan.tokens());
  ASSERT_TRUE(reference::RerotateRope(k, Dense(want, kBatch, kSeq, kHeads, kHeadDim), rp).ok());
  EXPECT_LE(MaxPairUlpApart(got, want, in, kHeadDim, kRotary), RotationBound(e.dtype)) << e.name;
}

inline void CheckSinusoidal(const KernelEntry& e) {
  constexpr int64_t kDModel = 70;
  const size_t n = static_cast<size_t>(kBatch * kSeq * kDModel);
  Buffer got(e.dtype, n);
  SinusoidalParams params;
  params.positions = Positions::Offset(3);
  const EmbeddingView out = EmbeddingBSD(got.data(), e.dtype, kBatch, kSeq, kDModel);
  api::PreparedSinusoidal prep;
  ASSERT_TRUE(api::PrepareSinusoidal(params, nullptr, out, &prep).ok()) << e.name;
  ASSERT_EQ(prep.plan.dtype, e.dtype) << e.name;
  e.fn<kernels::SinusoidalPlan>()(prep.plan, 0, prep.plan.tokens());
  std::vector<double> exact(n);
  ASSERT_TRUE(reference::WriteSinusoidalF64(params, out, exact.data()).ok()) << e.name;
  for (size_t i = 0; i < n; ++i) {
    const double bound = e.dtype == DType::kF32
                             ? 0.5 * reference::UlpF32(exact[i]) + std::ldexp(1.0, -50)
                             : reference::UlpOf(e.dtype, exact[i]);
    ASSERT_LE(std::fabs(got.at(i) - exact[i]), bound) << e.name << " element " << i;
  }
}

inline void CheckReropeTiles(const KernelEntry& e) {
  constexpr int64_t kQ = 9, kK = 37, kKvHeads = 1;
  Buffer q(e.dtype, static_cast<size_t>(kBatch * kQ * kHeads * kHeadDim));
  Buffer k(e.dtype, static_cast<size_t>(kBatch * kK * kKvHeads * kHeadDim));
  q.Fill(31 + static_cast<uint32_t>(e.dtype));
  k.Fill(37 + static_cast<uint32_t>(e.dtype));
  const size_t scores_n = static_cast<size_t>(kBatch * kHeads * kQ * kK);
  Buffer scores(DType::kF32, scores_n);
  RelativeRopeTensors t;
  t.q = Dense(q, kBatch, kQ, kHeads, kHeadDim);
  t.k = Dense(k, kBatch, kK, kKvHeads, kHeadDim);
  t.scores = Dense(scores, kBatch, kHeads, kQ, kK);
  RelativeRopeParams params;
  params.rotary_dim = kRotary;
  params.map.mode = DistanceMode::kLeaky;
  params.map.window = 8;
  params.map.leak = 4.0;
  params.q_positions = Positions::Offset(kK - kQ);
  params.k_positions = Positions::Offset(0);
  params.scale = 0.125;
  api::PreparedRerope prep;
  ASSERT_TRUE(api::PrepareRerope(t, params, &prep).ok()) << e.name;
  ASSERT_EQ(prep.plan.dtype, e.dtype) << e.name;
  e.fn<kernels::ReropePlan>()(prep.plan, 0, prep.plan.tiles());
  std::vector<double> exact(scores_n), magnitude(scores_n);
  ASSERT_TRUE(reference::RelativeRopeScoresF64(t, params, exact.data(), magnitude.data()).ok());
  for (size_t i = 0; i < scores_n; ++i) {
    const float s = static_cast<float>(scores.at(i));
    const double bound = reference::RelativeRopeErrorBound(s, magnitude[i], kHeadDim, kRotary) +
                         12.0 * 0x1p-53 * magnitude[i];
    ASSERT_LE(std::fabs(static_cast<double>(s) - exact[i]), bound) << e.name << " score " << i;
  }
}

}  // namespace registry_test
}  // namespace posenc
#endif  // POSENC_TESTS_REGISTRY_HELPERS_

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

HWY_NOINLINE void TestEveryEntryAgainstReference() {
  EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str());
  using registry_test::KernelEntry;
  using registry_test::KernelOp;
  size_t checked = 0;
  for (const KernelEntry& e : kernels::AllKernels()) {
    switch (e.op) {
      case KernelOp::kRope:
      case KernelOp::kMRope: registry_test::CheckRope(e); break;
      case KernelOp::kSinusoidal: registry_test::CheckSinusoidal(e); break;
      case KernelOp::kReropeTiles: registry_test::CheckReropeTiles(e); break;
      case KernelOp::kRerotate: registry_test::CheckRerotate(e); break;
    }
    ++checked;
  }
  EXPECT_EQ(checked, kernels::AllKernels().size);
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
namespace {

using registry_test::KernelEntry;
using registry_test::KernelOp;

// One entry per (op, dtype), each found by FindKernel, each with its op's function only.
TEST(RegistryTest, OneEntryPerOpAndDtype) {
  std::set<std::pair<int, int>> seen;
  std::set<std::string> names;
  for (const KernelEntry& e : kernels::AllKernels()) {
    EXPECT_TRUE(seen.insert({static_cast<int>(e.op), static_cast<int>(e.dtype)}).second) << e.name;
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_EQ(std::string(e.name),
              std::string(kernels::KernelOpName(e.op)) + "_" + registry_test::DTypeSuffix(e.dtype));
    EXPECT_EQ(kernels::FindEntry(e.op, e.dtype), &e) << e.name;
    const int set = (e.rope != nullptr) + (e.sinusoidal != nullptr) + (e.rerope != nullptr) +
                    (e.rerotate != nullptr);
    EXPECT_EQ(set, 1) << e.name;
    const bool rope_plan = e.op == KernelOp::kRope || e.op == KernelOp::kMRope;
    EXPECT_EQ(e.fn<kernels::RopePlan>() != nullptr, rope_plan) << e.name;
    EXPECT_EQ(e.fn<kernels::SinusoidalPlan>() != nullptr, e.op == KernelOp::kSinusoidal) << e.name;
    EXPECT_EQ(e.fn<kernels::ReropePlan>() != nullptr, e.op == KernelOp::kReropeTiles) << e.name;
    EXPECT_EQ(e.fn<kernels::RerotatePlan>() != nullptr, e.op == KernelOp::kRerotate) << e.name;
  }
  for (KernelOp op : registry_test::kOps) {
    for (DType d : registry_test::kDTypes) {
      EXPECT_NE(kernels::FindEntry(op, d), nullptr)
          << kernels::KernelOpName(op) << " " << registry_test::DTypeSuffix(d);
    }
  }
  EXPECT_EQ(kernels::AllKernels().size, std::size(registry_test::kOps) * std::size(registry_test::kDTypes));
  EXPECT_EQ(kernels::FindEntry(KernelOp::kRope, static_cast<DType>(99)), nullptr);
}

HWY_BEFORE_TEST(RegistryTest);
HWY_EXPORT_AND_TEST_P(RegistryTest, TestEveryEntryAgainstReference);

}  // namespace
}  // namespace posenc
#endif
