// 2-D vision RoPE (posenc/vision.h) on every SIMD target: against the double reference of the
// rotation HF's formulas define (frequencies computed here with std::pow, streams and pair layout
// written from the header's formulas, independently of the library) within test::MaxUlp (and the
// bf16 / f16 bounds) for every kind, on strided, misaligned views of every dtype; bitwise
// identity across thread counts; HF's own cos/sin for the Qwen-VL towers and Pixtral (float64
// port, tests/data/hf_vision_rope_port.json by tools/hf_vision_rope_port.py) within 2^-24; the
// grid positions of HF's rot_pos_emb order; validation; the C API. Llama 4 and the Qwen2.5-VL
// window order against the port: tests/vision_order_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "posenc/half.h"
#include "tests/json_util.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "posenc/vision.h"
#include "tests/rope_test_util.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/vision_rope_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"

#ifndef POSENC_TESTS_VISION_HELPERS_
#define POSENC_TESTS_VISION_HELPERS_
namespace posenc {
namespace vision_test {
// HF's per-pair frequencies, written from the formulas (posenc/vision.h) with std::pow.
inline std::vector<double> HfFrequencies(VisionRopeKind kind, int64_t d, double theta) {
  std::vector<double> w(static_cast<size_t>(d / 2));
  for (int64_t i = 0; i < d / 4; ++i) {
    if (kind == VisionRopeKind::kQwenVL) {
      w[i] = w[d / 4 + i] =
          1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(d / 2));
    } else if (kind == VisionRopeKind::kLlama4) {  // rope_freq: arange(0, freq_dim, 2) / freq_dim
      w[i] = w[d / 4 + i] =
          1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(d / 2));
    } else {
      w[i] = 1.0 / std::pow(theta, static_cast<double>(4 * i) / static_cast<double>(d));
      w[d / 4 + i] = 1.0 / std::pow(theta, static_cast<double>(4 * i + 2) / static_cast<double>(d));
    }
  }
  return w;
}

// The M-RoPE call the header defines for `kind`, built here from its formulas: streams
// [2, batch, patches] (row, col); kLlama4: (col + 1, row + 1) and interleaved pairs.
struct ExactCall {
  std::vector<double> w;
  std::vector<int64_t> streams;
  int64_t section[2] = {0, 0};
  PairLayout pairs = PairLayout::kHalf;
  RopeParams Params() const {
    RopeParams p;
    p.pairs = pairs;
    p.freqs.inv_freq = w.data();
    p.freqs.inv_freq_len = static_cast<int64_t>(w.size());
    p.mrope = {section, 2, false};
    p.positions = Positions::StreamIds(static_cast<const int64_t*>(streams.data()), 2);
    return p;
  }
};
inline void MakeExact(VisionRopeKind kind, int64_t d, double theta, const std::vector<int64_t>& rc,
                      ExactCall* e) {
  e->w = HfFrequencies(kind, d, theta);
  const int64_t n = static_cast<int64_t>(rc.size() / 2);
  const bool llama4 = kind == VisionRopeKind::kLlama4;
  e->streams.assign(static_cast<size_t>(2 * n), 0);
  for (int64_t i = 0; i < n; ++i) {
    e->streams[i] = llama4 ? rc[2 * i + 1] + 1 : rc[2 * i];
    e->streams[n + i] = llama4 ? rc[2 * i] + 1 : rc[2 * i + 1];
  }
  e->section[0] = e->section[1] = d / 4;
  e->pairs = llama4 ? PairLayout::kInterleaved : PairLayout::kHalf;
}

inline double HalfBound(DType dt) {
  return dt == DType::kF32    ? test::kMaxUlp
         : dt == DType::kF16 ? 1 + 3 * std::ldexp(1.0, -13)
                              : 1 + 3 * std::ldexp(1.0, -16);
}
}  // namespace vision_test
}  // namespace posenc
#endif

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace HWY_NAMESPACE {

void ExpectDispatchedHere() { EXPECT_STREQ(hwy::TargetName(HWY_TARGET), ChosenTarget().c_str()); }

HWY_NOINLINE void TestVisionMatchesReference() {
  ExpectDispatchedHere();
  for (VisionRopeKind kind :
       {VisionRopeKind::kQwenVL, VisionRopeKind::kPixtral, VisionRopeKind::kLlama4})
    for (int64_t head_dim : {int64_t{4}, int64_t{64}, int64_t{80}, int64_t{88}})
      for (RotationArithmetic a : {RotationArithmetic::kF64, RotationArithmetic::kF32})
        for (bool in_place : {true, false}) {
          const int64_t batch = 2, heads = 3;
          std::vector<int64_t> grid;
          ASSERT_TRUE(
              VisionGridPositions(kind, 1, 4, 6, kind == VisionRopeKind::kQwenVL ? 2 : 1, &grid)
                  .ok());
          const int64_t patches = static_cast<int64_t>(grid.size() / 2);
          std::vector<int64_t> rc = grid;
          rc.insert(rc.end(), grid.begin(), grid.end());
          for (size_t i = grid.size(); i < rc.size(); ++i) {
            if (rc[i] >= 0) rc[i] += 9;  // batch 1: shifted ids (Llama 4's CLS stays (-1, -1))
          }
          const size_t n = static_cast<size_t>(batch * patches * heads * head_dim);
          std::vector<float> q(n), out(n, -1.f);
          test::FillNormal(q.data(), n, static_cast<uint32_t>(head_dim));
          const std::vector<float> in = q;
          RopeTensors t;
          t.q = TensorBSHD(q.data(), batch, patches, heads, head_dim);
          if (!in_place) t.q_out = TensorBSHD(out.data(), batch, patches, heads, head_dim);
          VisionRopeParams vp;
          vp.kind = kind;
          vp.theta = kind == VisionRopeKind::kPixtral ? 1e6 : 10000.0;
          vp.rows_cols64 = rc.data();
          vp.arithmetic = a;
          ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
          // The exact rotation the header's formulas define.
          vision_test::ExactCall ex;
          vision_test::MakeExact(kind, head_dim, vp.theta, rc, &ex);
          std::vector<float> src = in;
          RopeTensors ts;
          ts.q = TensorBSHD(src.data(), batch, patches, heads, head_dim);
          std::vector<double> exact(n);
          ASSERT_TRUE(reference::ApplyRopeF64(ts, ex.Params(), exact.data(), nullptr).ok());
          const Tensor written = in_place ? t.q : t.q_out;
          EXPECT_LE(reference::MaxPairUlpError(written, ts.q, exact.data(), head_dim, ex.pairs),
                    test::MaxUlp(a))
              << static_cast<int>(kind) << " " << head_dim;
          if (!in_place) {
            EXPECT_EQ(q, in);
          }
          if (kind == VisionRopeKind::kLlama4) {  // the CLS token: angle 0, bits unchanged
            const float* w = static_cast<const float*>(written.data);
            const size_t cls = static_cast<size_t>((patches - 1) * heads * head_dim);
            EXPECT_EQ(0, std::memcmp(w + cls, in.data() + cls, heads * head_dim * 4));
          }
        }
}

// Llama 4 (and the other kinds) on strided, misaligned views of every dtype, q and k with
// different (odd) head counts, in place and out: within the dtype's bound of the exact result,
// and nothing outside the output views written.
HWY_NOINLINE void TestVisionStridedAllTypes() {
  ExpectDispatchedHere();
  const int64_t batch = 2, grid_h = 3, grid_w = 5, head_dim = 88, hq = 5, hk = 3;
  for (VisionRopeKind kind : {VisionRopeKind::kLlama4, VisionRopeKind::kPixtral})
    for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
      for (bool in_place : {true, false}) {
        std::vector<int64_t> grid;
        ASSERT_TRUE(VisionGridPositions(kind, 1, grid_h, grid_w, 1, &grid).ok());
        const int64_t patches = static_cast<int64_t>(grid.size() / 2);
        std::vector<int64_t> rc = grid;
        rc.insert(rc.end(), grid.rbegin(), grid.rend());  // batch 1: reversed (col, row) order
        const size_t es = DTypeSize(dt);
        struct Side {
          std::vector<unsigned char> in, out;
          Tensor view_in, view_out;
          int64_t heads;
        } sides[2];
        for (int side = 0; side < 2; ++side) {
          Side& sd = sides[side];
          sd.heads = side == 0 ? hq : hk;
          // head pad 3, token pad 5, batch pad 7 elements; data starts 1 element in.
          const int64_t s2 = head_dim + 3, s1 = sd.heads * s2 + 5, s0 = patches * s1 + 7;
          const size_t elems = static_cast<size_t>(batch * s0 + 1);
          std::vector<float> f(elems);
          test::FillNormal(f.data(), f.size(), static_cast<uint32_t>(17 + side));
          sd.in.resize(elems * es);
          if (dt == DType::kF32) {
            std::memcpy(sd.in.data(), f.data(), elems * 4);
          } else {
            ASSERT_TRUE(ConvertFromF32(f.data(), elems, dt, sd.in.data()).ok());
          }
          sd.out.assign(elems * es, 0xA5);
          for (Tensor* v : {&sd.view_in, &sd.view_out}) {
            unsigned char* base = (v == &sd.view_in ? sd.in : sd.out).data();
            *v = TensorBSHD(base + es, dt, batch, patches, sd.heads, head_dim);
            v->strides[0] = s0;
            v->strides[1] = s1;
            v->strides[2] = s2;
          }
        }
        const std::vector<unsigned char> q_in0 = sides[0].in, k_in0 = sides[1].in;
        const std::vector<unsigned char> q_out0 = sides[0].out, k_out0 = sides[1].out;
        RopeTensors t;
        t.q = sides[0].view_in;
        t.k = sides[1].view_in;
        if (!in_place) {
          t.q_out = sides[0].view_out;
          t.k_out = sides[1].view_out;
        }
        VisionRopeParams vp;
        vp.kind = kind;
        vp.theta = 10000.0;
        vp.rows_cols64 = rc.data();
        ASSERT_TRUE(ApplyVisionRope(t, vp).ok()) << DTypeName(dt);
        vision_test::ExactCall ex;
        vision_test::MakeExact(kind, head_dim, vp.theta, rc, &ex);
        for (int side = 0; side < 2; ++side) {
          std::vector<unsigned char> copy = side == 0 ? q_in0 : k_in0;
          Tensor src = sides[side].view_in;
          src.data = copy.data() + es;
          RopeTensors ts;
          ts.q = src;
          std::vector<double> exact(static_cast<size_t>(batch * patches * sides[side].heads *
                                                        head_dim));
          ASSERT_TRUE(reference::ApplyRopeF64(ts, ex.Params(), exact.data(), nullptr).ok());
          const Tensor& written = in_place ? sides[side].view_in : sides[side].view_out;
          EXPECT_LE(reference::MaxPairUlpError(written, src, exact.data(), head_dim, ex.pairs),
                    vision_test::HalfBound(dt))
              << static_cast<int>(kind) << " " << DTypeName(dt) << " side " << side;
          // Padding and the leading element untouched (the buffers written, in or out).
          const std::vector<unsigned char>& now = in_place ? sides[side].in : sides[side].out;
          const std::vector<unsigned char>& before =
              in_place ? (side == 0 ? q_in0 : k_in0) : (side == 0 ? q_out0 : k_out0);
          std::vector<char> inside(now.size() / es, 0);
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t p = 0; p < patches; ++p)
              for (int64_t h = 0; h < sides[side].heads; ++h)
                for (int64_t j = 0; j < head_dim; ++j)
                  inside[static_cast<size_t>(1 + b * written.strides[0] + p * written.strides[1] +
                                             h * written.strides[2] + j)] = 1;
          bool untouched = true;
          for (size_t e = 0; e < inside.size(); ++e) {
            if (!inside[e] && std::memcmp(&now[e * es], &before[e * es], es) != 0) {
              untouched = false;
            }
          }
          EXPECT_TRUE(untouched) << DTypeName(dt) << " side " << side;
          if (!in_place) {
            EXPECT_EQ(sides[side].in, side == 0 ? q_in0 : k_in0);
          }
        }
      }
}

// Every thread count gives the same bits: a Llama 4 image (24 x 24 patches + CLS, 16 heads of 88)
// and a Qwen2.5-VL image in window order, both large enough to be split.
HWY_NOINLINE void TestVisionThreadCounts() {
  ExpectDispatchedHere();
  VisionWindowOrder order;
  ASSERT_TRUE(VisionWindowedGridPositions(1, 36, 28, 2, 112, 14, &order).ok());
  std::vector<int64_t> llama;
  ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kLlama4, 1, 24, 24, 1, &llama).ok());
  for (VisionRopeKind kind : {VisionRopeKind::kLlama4, VisionRopeKind::kQwenVL}) {
    const std::vector<int64_t>& one = kind == VisionRopeKind::kLlama4 ? llama : order.rows_cols;
    const int64_t batch = 2, patches = static_cast<int64_t>(one.size() / 2), heads = 16,
                  head_dim = kind == VisionRopeKind::kLlama4 ? 88 : 80;
    std::vector<int64_t> rc = one;
    rc.insert(rc.end(), one.begin(), one.end());
    const size_t n = static_cast<size_t>(batch * patches * heads * head_dim);
    std::vector<float> in(n);
    test::FillNormal(in.data(), n, 99);
    std::vector<float> first;
    for (int threads : {1, 2, 3, 0}) {
      std::vector<float> q = in;
      RopeTensors t;
      t.q = TensorBSHD(q.data(), batch, patches, heads, head_dim);
      VisionRopeParams vp;
      vp.kind = kind;
      vp.rows_cols64 = rc.data();
      vp.exec.max_threads = threads;
      ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
      if (first.empty()) {
        first = q;
        EXPECT_NE(first, in);
      } else {
        EXPECT_EQ(0, std::memcmp(q.data(), first.data(), n * 4)) << threads;
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
HWY_BEFORE_TEST(VisionRopeKernelTest);
HWY_EXPORT_AND_TEST_P(VisionRopeKernelTest, TestVisionMatchesReference);
HWY_EXPORT_AND_TEST_P(VisionRopeKernelTest, TestVisionStridedAllTypes);
HWY_EXPORT_AND_TEST_P(VisionRopeKernelTest, TestVisionThreadCounts);

namespace {

// HF's cos/sin: rotate unit heads (first half 1, second 0) so element i / d/2 + i hold cos_i /
// sin_i (exact with f64 arithmetic); within 2^-24 of the float64 port (half an f32 ulp + engine).
TEST(VisionRopeHfTest, MatchesPortedHfCosSin) {
  const nlohmann::json data =
      test::ReadJsonFile(std::string(POSENC_SOURCE_DIR) + "/tests/data/hf_vision_rope_port.json");
  int cases = 0;
  for (const auto& c : data["cases"]) {
    const std::string model = c["model"];
    if (model != "qwen2_5_vl_vision" && model != "pixtral") continue;  // tests below
    ++cases;
    const VisionRopeKind kind =
        model == "pixtral" ? VisionRopeKind::kPixtral : VisionRopeKind::kQwenVL;
    const int64_t d = c["head_dim"], half = d / 2;
    std::vector<int64_t> rc;
    for (const auto& pair : c["rows_cols"]) {
      rc.push_back(pair[0]);
      rc.push_back(pair[1]);
    }
    const int64_t patches = static_cast<int64_t>(rc.size() / 2);
    if (kind == VisionRopeKind::kQwenVL) {  // the grid order of rot_pos_emb
      std::vector<int64_t> grid;
      const auto& thw = c["grid_thw"];
      ASSERT_TRUE(
          VisionGridPositions(kind, thw[0], thw[1], thw[2], c["spatial_merge_size"], &grid).ok());
      EXPECT_EQ(grid, rc) << model;
    }
    std::vector<float> q(static_cast<size_t>(patches * d), 0.f);
    for (int64_t p = 0; p < patches; ++p)
      for (int64_t i = 0; i < half; ++i) q[static_cast<size_t>(p * d + i)] = 1.f;
    RopeTensors t;
    t.q = TensorBSHD(q.data(), 1, patches, 1, d);
    VisionRopeParams vp;
    vp.kind = kind;
    vp.theta = c["theta"];
    vp.rows_cols64 = rc.data();
    ASSERT_TRUE(ApplyVisionRope(t, vp).ok()) << model;
    double worst = 0;
    for (int64_t p = 0; p < patches; ++p)
      for (int64_t i = 0; i < d; ++i) {
        const int64_t pair = i % half;
        worst = std::max(
            {worst, std::fabs(q[static_cast<size_t>(p * d + pair)] - c["cos"][p][i].get<double>()),
             std::fabs(q[static_cast<size_t>(p * d + half + pair)] -
                       c["sin"][p][i].get<double>())});
      }
    EXPECT_LE(worst, std::ldexp(1.0, -24)) << model;
    // The other kind's frequencies are far off: the comparison can fail.
    std::vector<float> q2(static_cast<size_t>(patches * d), 0.f);
    for (int64_t p = 0; p < patches; ++p)
      for (int64_t i = 0; i < half; ++i) q2[static_cast<size_t>(p * d + i)] = 1.f;
    t.q = TensorBSHD(q2.data(), 1, patches, 1, d);
    vp.kind = kind == VisionRopeKind::kQwenVL ? VisionRopeKind::kPixtral : VisionRopeKind::kQwenVL;
    ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
    EXPECT_NE(q2, q) << model;
  }
  EXPECT_EQ(cases, 3);
}

TEST(VisionRopeErrorsTest, NamesArgumentAndWritesNothing) {
  std::vector<float> q(1 * 4 * 2 * 64, 0.5f);
  const std::vector<float> before = q;
  std::vector<int64_t> rc(8, 1);
  std::vector<int32_t> rc32(8, 1);
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, 4, 2, 64);
  VisionRopeParams vp;
  Status st = ApplyVisionRope(t, vp);
  EXPECT_NE(st.message().find("exactly one must be set"), std::string::npos) << st.message();
  vp.rows_cols64 = rc.data();
  vp.rows_cols32 = rc32.data();
  EXPECT_FALSE(ApplyVisionRope(t, vp).ok());
  vp.rows_cols32 = nullptr;
  vp.theta = -2;
  st = ApplyVisionRope(t, vp);
  EXPECT_NE(st.message().find("theta = -2"), std::string::npos) << st.message();
  vp.theta = 1e4;
  vp.kind = static_cast<VisionRopeKind>(5);
  st = ApplyVisionRope(t, vp);
  EXPECT_NE(st.message().find("kind = 5"), std::string::npos) << st.message();
  vp.kind = VisionRopeKind::kPixtral;
  RopeTensors odd;
  std::vector<float> q6(1 * 4 * 1 * 6, 0.5f);
  odd.q = TensorBSHD(q6.data(), 1, 4, 1, 6);
  st = ApplyVisionRope(odd, vp);
  EXPECT_NE(st.message().find("head_dim = 6"), std::string::npos) << st.message();
  vp.rows_cols64 = reinterpret_cast<const int64_t*>(q.data());
  st = ApplyVisionRope(t, vp);
  EXPECT_NE(st.message().find("rows_cols64 overlaps an output"), std::string::npos) << st.message();
  EXPECT_EQ(q, before);
  std::vector<int64_t> grid;
  st = VisionGridPositions(VisionRopeKind::kQwenVL, 1, 5, 4, 2, &grid);
  EXPECT_NE(st.message().find("spatial_merge_size = 2"), std::string::npos) << st.message();
  EXPECT_TRUE(grid.empty());
}

TEST(VisionRopeCApiTest, EqualsCpp) {
  std::vector<int64_t> grid;
  ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kQwenVL, 1, 4, 4, 2, &grid).ok());
  std::vector<float> a(16 * 2 * 80);
  test::FillNormal(a.data(), a.size(), 4);
  std::vector<float> b = a;
  posenc_tensor q = posenc_tensor_bshd(a.data(), POSENC_F32, 1, 16, 2, 80);
  posenc_vision_params cp;
  posenc_vision_params_init(&cp);
  cp.rows_cols64 = grid.data();
  ASSERT_EQ(posenc_vision_rope_apply(&q, nullptr, nullptr, nullptr, &cp), POSENC_OK)
      << posenc_last_error();
  RopeTensors t;
  t.q = TensorBSHD(b.data(), 1, 16, 2, 80);
  VisionRopeParams vp;
  vp.rows_cols64 = grid.data();
  ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
  EXPECT_EQ(a, b);
  // POSENC_VISION_LLAMA4 is kLlama4 (with its CLS token).
  std::vector<int64_t> llama;
  ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kLlama4, 1, 3, 5, 1, &llama).ok());
  std::vector<float> c4(16 * 2 * 88);
  test::FillNormal(c4.data(), c4.size(), 6);
  std::vector<float> cpp4 = c4;
  posenc_tensor q4 = posenc_tensor_bshd(c4.data(), POSENC_F32, 1, 16, 2, 88);
  cp.kind = POSENC_VISION_LLAMA4;
  cp.rows_cols64 = llama.data();
  ASSERT_EQ(posenc_vision_rope_apply(&q4, nullptr, nullptr, nullptr, &cp), POSENC_OK)
      << posenc_last_error();
  t.q = TensorBSHD(cpp4.data(), 1, 16, 2, 88);
  vp.kind = VisionRopeKind::kLlama4;
  vp.rows_cols64 = llama.data();
  ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
  EXPECT_EQ(c4, cpp4);
  llama[3] = -1;  // (0, -1): rejected as in C++
  EXPECT_EQ(posenc_vision_rope_apply(&q4, nullptr, nullptr, nullptr, &cp), POSENC_INVALID_ARGUMENT);
  EXPECT_NE(std::string(posenc_last_error()).find("rows_cols64[0, 1] = (0, -1)"),
            std::string::npos)
      << posenc_last_error();
  EXPECT_EQ(c4, cpp4);
  const int bad_kind = 3;  // a C caller may store any int in the enum field
  std::memcpy(&cp.kind, &bad_kind, sizeof bad_kind);
  EXPECT_EQ(posenc_vision_rope_apply(&q, nullptr, nullptr, nullptr, &cp), POSENC_INVALID_ARGUMENT);
  EXPECT_NE(std::string(posenc_last_error()).find("params.kind = 3"), std::string::npos);
}

}  // namespace
}  // namespace posenc
#endif
