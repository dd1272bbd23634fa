// The bf16 store of the RoPE kernels (lib/kernels/half-inl.h, StoreBF16Pair) on every SIMD
// target, with AVX512_BF16's conversion switched on (where the CPU has it) and off: two f32
// vectors become 2 * Lanes bf16 rounded to nearest even, every NaN 0x7FC0, bit for bit as a
// scalar oracle written here (reference::RoundToBF16 of the exact value; NaN canonical). Inputs:
// every upper half (every sign, exponent and bf16 mantissa) with the lower halves that decide
// the rounding (0, just below, at and above the tie, all ones), then random bit patterns; so
// vectors of normal values (the instruction's path) and vectors holding NaNs, infinities or
// subnormals (which the instruction would flush to zero) are both met.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "posenc/reference.h"
#include "posenc/rope.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/bf16_store_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"
#include "lib/kernels/cpu_features.h"
#include "lib/kernels/half-inl.h"

#ifndef POSENC_TESTS_BF16_STORE_ONCE_
#define POSENC_TESTS_BF16_STORE_ONCE_
namespace posenc {
namespace test {

uint16_t OracleBF16(uint32_t bits) {
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  float f;
  std::memcpy(&f, &bits, 4);
  return reference::RoundToBF16(f);
}

std::vector<uint32_t> StoreInputs() {
  std::vector<uint32_t> in;
  const uint32_t lows[] = {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu};
  for (uint32_t low : lows)
    for (uint32_t high = 0; high <= 0xFFFFu; ++high) in.push_back((high << 16) | low);
  std::mt19937 rng(1234);
  for (int i = 0; i < (1 << 18); ++i) in.push_back(static_cast<uint32_t>(rng()));
  return in;
}

}  // namespace test
}  // namespace posenc
#endif  // POSENC_TESTS_BF16_STORE_ONCE_

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Stores every input through StoreBF16Pair<kAvx512Bf16> (2 * Lanes values at a time) and
// compares.
template <bool kAvx512Bf16>
void CheckStores(const std::vector<uint32_t>& in, const char* what) {
  const hn::ScalableTag<float> d;
  const size_t n2 = 2 * hn::Lanes(d);
  auto out = hwy::AllocateAligned<uint16_t>(n2 + 1);  // + 1: a misaligned destination too
  size_t failures = 0;
  for (size_t i = 0; i + n2 <= in.size() && failures < 10; i += n2) {
    const auto v0 = hn::BitCast(d, hn::LoadU(hn::RebindToUnsigned<decltype(d)>(), in.data() + i));
    const auto v1 = hn::BitCast(
        d, hn::LoadU(hn::RebindToUnsigned<decltype(d)>(), in.data() + i + hn::Lanes(d)));
    uint16_t* dst = out.get() + (i / n2) % 2;
    StoreBF16Pair<kAvx512Bf16>(d, v0, v1, dst);
    for (size_t j = 0; j < n2; ++j) {
      const uint16_t want = test::OracleBF16(in[i + j]);
      if (dst[j] != want) {
        ++failures;
        ADD_FAILURE() << what << ": input 0x" << std::hex << in[i + j] << " stored 0x" << dst[j]
                      << ", want 0x" << want;
      }
    }
  }
}
#endif

HWY_NOINLINE void TestStoreBF16Pair() {
#if HWY_TARGET != HWY_SCALAR
  const std::vector<uint32_t> in = test::StoreInputs();
  // The instruction's path only where the CPU runs it (elsewhere it would fault).
  if (kernels::CpuHasAvx512Bf16()) CheckStores<true>(in, "AVX512_BF16 allowed");
  CheckStores<false>(in, "integer rounding");
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(Bf16StoreTest);
HWY_EXPORT_AND_TEST_P(Bf16StoreTest, TestStoreBF16Pair);

// The kernels read kernels::Avx512Bf16Stores() once per token (rope-inl.h, RotateTokenHeads):
// bf16 RoPE outputs must be the same bits with the instruction allowed and not, on heads whose
// outputs include f32 subnormals (which the instruction alone would flush to zero) and NaNs, in
// place (register-resident rows) and out of place with a head_dim tail (head by head).
TEST(Bf16StoreTest, RopeSameBitsWithAndWithoutTheInstruction) {
  if (!kernels::CpuHasAvx512Bf16()) {
    GTEST_SKIP() << "this CPU has no AVX512_BF16: both runs would take the integer rounding";
  }
  constexpr int64_t kSeq = 5, kHeads = 3;
  for (const int64_t head_dim : {int64_t{128}, int64_t{72}}) {
    const int64_t rotary = head_dim == 128 ? 128 : 64;
    const size_t n = static_cast<size_t>(kSeq * kHeads * head_dim);
    std::vector<uint16_t> input(n);
    std::mt19937 rng(99);
    for (size_t i = 0; i < n; ++i) {
      // Mostly bf16 subnormals and tiny normals (rotated: f32 subnormals), some ordinary values,
      // one NaN.
      const uint32_t r = static_cast<uint32_t>(rng());
      input[i] = static_cast<uint16_t>(((r >> 16) & 0x8000u) |
                                       (i % 7 == 0 ? 0x3F00u + (r & 0xFFu) : (r & 0xFFu)));
    }
    input[n / 2] = 0x7FA1;  // a signalling NaN
    std::vector<uint16_t> outputs[2];
    for (const bool allow : {true, false}) {
      std::vector<uint16_t>& out = outputs[allow ? 0 : 1];
      out = input;
      std::vector<uint16_t> in_copy = input;
      RopeParams params;
      params.rotary_dim = rotary;
      params.positions = Positions::Offset(3);
      RopeTensors t;
      const bool in_place = head_dim == 128;
      t.q = TensorBSHD(in_place ? out.data() : in_copy.data(), DType::kBF16, 1, kSeq, kHeads,
                       head_dim);
      if (!in_place) t.q_out = TensorBSHD(out.data(), DType::kBF16, 1, kSeq, kHeads, head_dim);
      const bool was = kernels::SetAvx512Bf16Stores(allow);
      const Status st = ApplyRope(t, params);
      kernels::SetAvx512Bf16Stores(was);
      ASSERT_TRUE(st.ok()) << st.message();
    }
    size_t subnormal_outputs = 0;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(outputs[0][i], outputs[1][i]) << "element " << i << ", head_dim " << head_dim;
      const uint16_t mag = outputs[0][i] & 0x7FFFu;
      subnormal_outputs += mag != 0 && mag < 0x0080u;
    }
    EXPECT_GT(subnormal_outputs, n / 4) << "the inputs must produce subnormal outputs";
  }
}
}  // namespace posenc
#endif
