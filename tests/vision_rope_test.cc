// 2-D vision RoPE (posenc/vision.h) on every SIMD target: against the double reference of the
// rotation HF's formulas define (frequencies computed here with std::pow, independently of the
// library) within test::MaxUlp; HF's own cos/sin (float64 port, tests/data/hf_vision_rope_port.json
// by tools/hf_vision_rope_port.py) within 2^-24; the grid positions of HF's rot_pos_emb order;
// validation; the C API.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

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
    } else {
      w[i] = 1.0 / std::pow(theta, static_cast<double>(4 * i) / static_cast<double>(d));
      w[d / 4 + i] = 1.0 / std::pow(theta, static_cast<double>(4 * i + 2) / static_cast<double>(d));
    }
  }
  return w;
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
  for (VisionRopeKind kind : {VisionRopeKind::kQwenVL, VisionRopeKind::kPixtral})
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
          for (size_t i = grid.size(); i < rc.size(); ++i) rc[i] += 9;  // batch 1: shifted ids
          const size_t n = static_cast<size_t>(batch * patches * heads * head_dim);
          std::vector<float> q(n), out(n, -1.f);
          test::FillNormal(q.data(), n, static_cast<uint32_t>(head_dim));
          const std::vector<float> in = q;
          RopeTensors t;
          t.q = TensorBSHD(q.data(), batch, patches, heads, head_dim);
          if (!in_place) t.q_out = TensorBSHD(out.data(), batch, patches, heads, head_dim);
          VisionRopeParams vp;
          vp.kind = kind;
          vp.theta = kind == VisionRopeKind::kQwenVL ? 10000.0 : 1e6;
          vp.rows_cols64 = rc.data();
          vp.arithmetic = a;
          ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
          // The exact rotation: pair i < d/4 by row * w_i, pair d/4 + i by col * w_{d/4+i}.
          const std::vector<double> w = vision_test::HfFrequencies(kind, head_dim, vp.theta);
          std::vector<int64_t> streams(static_cast<size_t>(2 * batch * patches));
          for (int64_t i = 0; i < batch * patches; ++i) {
            streams[i] = rc[2 * i];
            streams[batch * patches + i] = rc[2 * i + 1];
          }
          const int64_t section[2] = {head_dim / 4, head_dim / 4};
          RopeParams p;
          p.freqs.inv_freq = w.data();
          p.freqs.inv_freq_len = head_dim / 2;
          p.mrope = {section, 2, false};
          p.positions = Positions::StreamIds(static_cast<const int64_t*>(streams.data()), 2);
          std::vector<float> src = in;
          RopeTensors ts;
          ts.q = TensorBSHD(src.data(), batch, patches, heads, head_dim);
          std::vector<double> exact(n);
          ASSERT_TRUE(reference::ApplyRopeF64(ts, p, exact.data(), nullptr).ok());
          const Tensor written = in_place ? t.q : t.q_out;
          EXPECT_LE(
              reference::MaxPairUlpError(written, ts.q, exact.data(), head_dim, PairLayout::kHalf),
              test::MaxUlp(a))
              << static_cast<int>(kind) << " " << head_dim;
          if (!in_place) {
            EXPECT_EQ(q, in);
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

namespace {

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// HF's cos/sin: rotate unit heads (first half 1, second 0) so element i / d/2 + i hold cos_i /
// sin_i (exact with f64 arithmetic); within 2^-24 of the float64 port (half an f32 ulp + engine).
TEST(VisionRopeHfTest, MatchesPortedHfCosSin) {
  const nlohmann::json data =
      ReadJson(std::string(POSENC_SOURCE_DIR) + "/tests/data/hf_vision_rope_port.json");
  ASSERT_EQ(data["cases"].size(), 3u);
  for (const auto& c : data["cases"]) {
    const std::string model = c["model"];
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
  const int bad_kind = 3;  // a C caller may store any int in the enum field
  std::memcpy(&cp.kind, &bad_kind, sizeof bad_kind);
  EXPECT_EQ(posenc_vision_rope_apply(&q, nullptr, nullptr, nullptr, &cp), POSENC_INVALID_ARGUMENT);
  EXPECT_NE(std::string(posenc_last_error()).find("params.kind = 3"), std::string::npos);
}

}  // namespace
}  // namespace posenc
#endif
