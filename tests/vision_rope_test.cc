// 2-D vision RoPE (posenc/vision.h) on every SIMD target: against the double reference of the
// rotation HF's formulas define (frequencies computed here with std::pow, streams and pair layout
// written from the header's formulas, independently of the library) within test::MaxUlp (and the
// bf16 / f16 bounds); HF's own cos/sin and vision_apply_rotary_emb (float64 port,
// tests/data/hf_vision_rope_port.json by tools/hf_vision_rope_port.py) within 2^-24 (2^-21 * M
// for rotated heads); the grid positions of HF's rot_pos_emb, get_window_index and Llama 4
// img_idx orders; bitwise identity across thread counts; validation; the C API.
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
          for (size_t e = 0; e < inside.size(); ++e)
            if (!inside[e] && std::memcmp(&now[e * es], &before[e * es], es) != 0) untouched = false;
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

// Qwen2.5-VL's window order: positions, window_index and cu_window_seqlens equal the port of
// get_window_index (grids with full, partial and empty padded windows, two window sizes); HF's
// cos/sin in window order within 2^-24 as above.
TEST(VisionRopeHfTest, QwenWindowOrderMatchesPortedHf) {
  const nlohmann::json data =
      ReadJson(std::string(POSENC_SOURCE_DIR) + "/tests/data/hf_vision_rope_port.json");
  int cases = 0, with_cos = 0;
  for (const auto& c : data["cases"]) {
    if (c["model"] != "qwen2_5_vl_vision_windowed") continue;
    ++cases;
    const auto& thw = c["grid_thw"];
    VisionWindowOrder order;
    ASSERT_TRUE(VisionWindowedGridPositions(thw[0], thw[1], thw[2], c["spatial_merge_size"],
                                            c["window_size"], c["patch_size"], &order)
                    .ok());
    std::vector<int64_t> rc;
    for (const auto& pair : c["rows_cols"]) {
      rc.push_back(pair[0]);
      rc.push_back(pair[1]);
    }
    EXPECT_EQ(order.rows_cols, rc) << thw;
    EXPECT_EQ(order.window_index, c["window_index"].get<std::vector<int64_t>>()) << thw;
    EXPECT_EQ(order.cu_window_seqlens, c["cu_window_seqlens"].get<std::vector<int64_t>>()) << thw;
    // The window order is a reordering of rot_pos_emb's, not that order itself.
    std::vector<int64_t> plain;
    ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kQwenVL, thw[0], thw[1], thw[2],
                                    c["spatial_merge_size"], &plain)
                    .ok());
    EXPECT_NE(plain, rc) << thw;
    if (!c.contains("cos")) continue;
    ++with_cos;
    const int64_t d = c["head_dim"], half = d / 2, patches = static_cast<int64_t>(rc.size() / 2);
    std::vector<float> q(static_cast<size_t>(patches * d), 0.f);
    for (int64_t p = 0; p < patches; ++p)
      for (int64_t i = 0; i < half; ++i) q[static_cast<size_t>(p * d + i)] = 1.f;
    RopeTensors t;
    t.q = TensorBSHD(q.data(), 1, patches, 1, d);
    VisionRopeParams vp;
    vp.theta = c["theta"];
    vp.rows_cols64 = order.rows_cols.data();
    ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
    double worst = 0;
    for (int64_t p = 0; p < patches; ++p)
      for (int64_t i = 0; i < d; ++i) {
        const size_t at = static_cast<size_t>(p * d + i % half);
        worst = std::max({worst, std::fabs(q[at] - c["cos"][p][i].get<double>()),
                          std::fabs(q[at + half] - c["sin"][p][i].get<double>())});
      }
    EXPECT_LE(worst, std::ldexp(1.0, -24));
  }
  EXPECT_EQ(cases, 4);
  EXPECT_EQ(with_cos, 1);
}

// Llama 4: VisionGridPositions(kLlama4) is HF's img_idx order (patches row-major, the CLS token
// last as (-1, -1)); unit heads (x[2i] = 1, x[2i+1] = 0) give HF's cos / sin in x[2i] / x[2i+1]
// within 2^-24; vision_apply_rotary_emb of a fixed head within 2^-21 * M per pair (M = max |x|
// of the pair: the < 2 ulp contract plus the port's own double rounding); the other layouts'
// kinds fail the comparison.
TEST(VisionRopeHfTest, Llama4MatchesPortedHf) {
  const nlohmann::json data =
      ReadJson(std::string(POSENC_SOURCE_DIR) + "/tests/data/hf_vision_rope_port.json");
  int cases = 0, with_out = 0;
  for (const auto& c : data["cases"]) {
    if (c["model"] != "llama4_vision") continue;
    ++cases;
    const int64_t idx = c["image_size"].get<int64_t>() / c["patch_size"].get<int64_t>();
    const int64_t d = c["hidden_size"].get<int64_t>() / c["num_attention_heads"].get<int64_t>();
    ASSERT_EQ(d, c["head_dim"].get<int64_t>());
    std::vector<int64_t> grid;
    ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kLlama4, 1, idx, idx, 1, &grid).ok());
    ASSERT_EQ(grid.size(), static_cast<size_t>(2 * (idx * idx + 1)));
    const std::vector<int64_t> tokens = c["tokens"].get<std::vector<int64_t>>();
    const std::vector<int64_t> img_idx = c["img_idx"].get<std::vector<int64_t>>();
    std::vector<int64_t> rc;
    for (size_t k = 0; k < tokens.size(); ++k) {
      // HF's id -> (row, col) = (y, x); the CLS id (-2) -> (-1, -1).
      const int64_t id = img_idx[k];
      const int64_t row = id < 0 ? -1 : id / idx, col = id < 0 ? -1 : id % idx;
      EXPECT_EQ(grid[static_cast<size_t>(2 * tokens[k])], row) << tokens[k];
      EXPECT_EQ(grid[static_cast<size_t>(2 * tokens[k] + 1)], col) << tokens[k];
      rc.push_back(row);
      rc.push_back(col);
    }
    const int64_t n = static_cast<int64_t>(tokens.size()), half = d / 2;
    for (VisionRopeKind kind : {VisionRopeKind::kLlama4, VisionRopeKind::kQwenVL}) {
      std::vector<float> q(static_cast<size_t>(n * d), 0.f);
      for (int64_t p = 0; p < n; ++p)
        for (int64_t i = 0; i < half; ++i) q[static_cast<size_t>(p * d + 2 * i)] = 1.f;
      RopeTensors t;
      t.q = TensorBSHD(q.data(), 1, n, 1, d);
      std::vector<int64_t> pos = rc;
      if (kind != VisionRopeKind::kLlama4) {  // the CLS sentinel is Llama 4's alone
        for (int64_t& v : pos) v = std::max<int64_t>(v, 0);
      }
      VisionRopeParams vp;
      vp.kind = kind;
      vp.theta = c["theta"];
      vp.rows_cols64 = pos.data();
      ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
      double worst = 0;
      for (int64_t p = 0; p < n; ++p)
        for (int64_t i = 0; i < half; ++i) {
          const size_t at = static_cast<size_t>(p * d + 2 * i);
          worst = std::max({worst, std::fabs(q[at] - c["cos"][p][i].get<double>()),
                            std::fabs(q[at + 1] - c["sin"][p][i].get<double>())});
        }
      if (kind == VisionRopeKind::kLlama4) {
        EXPECT_LE(worst, std::ldexp(1.0, -24)) << idx;
      } else {
        EXPECT_GT(worst, 1e-3) << idx;
      }
    }
    if (!c.contains("out")) continue;
    ++with_out;
    std::vector<float> x;
    for (const auto& row : c["x"])
      for (const auto& v : row) x.push_back(static_cast<float>(v.get<double>()));
    ASSERT_EQ(x.size(), static_cast<size_t>(n * d));
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], c["x"][i / d][i % d].get<double>());
    std::vector<float> out(x.size());
    RopeTensors t;
    t.q = TensorBSHD(x.data(), 1, n, 1, d);
    t.q_out = TensorBSHD(out.data(), 1, n, 1, d);
    VisionRopeParams vp;
    vp.kind = VisionRopeKind::kLlama4;
    vp.theta = c["theta"];
    vp.rows_cols64 = rc.data();
    ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
    double worst = 0;  // in units of 2^-21 * M
    for (int64_t p = 0; p < n; ++p)
      for (int64_t i = 0; i < half; ++i) {
        const size_t at = static_cast<size_t>(p * d + 2 * i);
        const double m = std::max(std::fabs(x[at]), std::fabs(x[at + 1]));
        for (size_t e : {at, at + 1}) {
          const double hf = c["out"][p][e - static_cast<size_t>(p * d)].get<double>();
          worst = std::max(worst, std::fabs(out[e] - hf) / (std::ldexp(1.0, -21) * m));
        }
      }
    EXPECT_LE(worst, 1.0);
  }
  EXPECT_EQ(cases, 2);
  EXPECT_EQ(with_out, 1);
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

// Llama 4 and the window order: each bad argument is named with its value; nothing is written.
TEST(VisionRopeErrorsTest, Llama4AndWindowOrder) {
  std::vector<float> q(2 * 4 * 3 * 88, 0.5f);
  const std::vector<float> before = q;
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 2, 4, 3, 88);
  VisionRopeParams vp;
  vp.kind = VisionRopeKind::kLlama4;
  struct Bad {
    std::vector<int64_t> rc;
    const char* want;
  };
  const std::vector<int64_t> good = {0, 0, 0, 1, 1, 0, -1, -1};
  for (const Bad& b : {Bad{{0, 0, 0, 1, 1, 0, -1, -1, 0, 0, -1, 3, 1, 1, 2, 2},
                           "rows_cols64[1, 1] = (-1, 3): kLlama4 takes row, col in [0, 2^50 - 1]"},
                       Bad{{0, 0, 0, 1, 1, 0, -1, -1, 0, 0, 1, 1, -2, -2, 2, 2},
                           "rows_cols64[1, 2] = (-2, -2)"},
                       Bad{{0, 0, 0, 1, 1, 0, -1, -1, 0, 0, 1, 1, int64_t{1} << 50, 0, 2, 2},
                           "rows_cols64[1, 2] = (1125899906842624, 0)"}}) {
    vp.rows_cols64 = b.rc.data();
    const Status st = ApplyVisionRope(t, vp);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(b.want), std::string::npos) << st.message();
    const Status sr = reference::ApplyVisionRope(t, vp);
    EXPECT_EQ(sr.message(), st.message());
  }
  std::vector<int32_t> rc32 = {0, 0, 0, 1, 1, 0, -1, -1, 0, 0, 1, 1, 5, -1, 2, 2};
  vp.rows_cols64 = nullptr;
  vp.rows_cols32 = rc32.data();
  Status st = ApplyVisionRope(t, vp);
  EXPECT_NE(st.message().find("rows_cols32[1, 2] = (5, -1)"), std::string::npos) << st.message();
  vp.rows_cols32 = nullptr;
  std::vector<int64_t> two(good);
  two.insert(two.end(), good.begin(), good.end());
  vp.rows_cols64 = two.data();
  std::vector<float> q6(2 * 4 * 1 * 6, 0.5f);
  RopeTensors odd;
  odd.q = TensorBSHD(q6.data(), 2, 4, 1, 6);
  st = ApplyVisionRope(odd, vp);
  EXPECT_NE(st.message().find("head_dim = 6"), std::string::npos) << st.message();
  vp.theta = 0;
  st = ApplyVisionRope(t, vp);
  EXPECT_NE(st.message().find("theta = 0"), std::string::npos) << st.message();
  EXPECT_EQ(q, before);
  vp.theta = 1e4;
  ASSERT_TRUE(ApplyVisionRope(t, vp).ok());  // the same call with good arguments writes
  EXPECT_NE(q, before);

  std::vector<int64_t> grid = {7};
  st = VisionGridPositions(VisionRopeKind::kLlama4, 2, 4, 4, 1, &grid);
  EXPECT_NE(st.message().find("kLlama4: t = 2"), std::string::npos) << st.message();
  st = VisionGridPositions(VisionRopeKind::kLlama4, 1, 4, 4, 2, &grid);
  EXPECT_NE(st.message().find("spatial_merge_size = 2"), std::string::npos) << st.message();
  st = VisionGridPositions(VisionRopeKind::kLlama4, 1, 0, 4, 1, &grid);
  EXPECT_NE(st.message().find("grid (t, h, w) = (1, 0, 4)"), std::string::npos) << st.message();
  EXPECT_EQ(grid, std::vector<int64_t>{7});

  VisionWindowOrder order;
  order.window_index = {7};
  struct BadWindow {
    int64_t t, h, w, merge, window, patch;
    const char* want;
  };
  for (const BadWindow& b :
       {BadWindow{1, 8, 8, 2, 20, 14, "window_size = 20: window_size / spatial_merge_size / "
                                      "patch_size = 20 / 2 / 14 is 0"},
        BadWindow{1, 8, 8, 2, 0, 14, "window_size = 0"},
        BadWindow{1, 8, 8, 2, 112, 0, "patch_size = 0"},
        BadWindow{1, 8, 8, 2, 112, -14, "patch_size = -14"},
        BadWindow{1, 7, 8, 2, 112, 14, "spatial_merge_size = 2: must be > 0 and divide h = 7"},
        BadWindow{1, 8, 8, 0, 112, 14, "spatial_merge_size = 0"},
        BadWindow{0, 8, 8, 2, 112, 14, "grid (t, h, w) = (0, 8, 8)"}}) {
    st = VisionWindowedGridPositions(b.t, b.h, b.w, b.merge, b.window, b.patch, &order);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(b.want), std::string::npos) << st.message();
  }
  EXPECT_EQ(order.window_index, std::vector<int64_t>{7});
  EXPECT_TRUE(order.rows_cols.empty());
  st = VisionWindowedGridPositions(1, 8, 8, 2, 112, 14, nullptr);
  EXPECT_NE(st.message().find("out is null"), std::string::npos) << st.message();
}

// The window order's invariants on many grids: window_index is a permutation of the merged
// units, cu_window_seqlens strictly increases from 0 to t * h * w, every window holds at most
// (window / merge / patch)^2 units, and rows_cols is rot_pos_emb's order permuted by units.
TEST(VisionRopeWindowTest, Invariants) {
  for (int64_t t : {1, 2})
    for (int64_t h : {2, 4, 8, 14, 16, 34})
      for (int64_t w : {2, 6, 16, 30})
        for (int64_t window : {28, 56, 112, 224}) {
          VisionWindowOrder o;
          ASSERT_TRUE(VisionWindowedGridPositions(t, h, w, 2, window, 14, &o).ok());
          const int64_t units = t * h * w / 4, win = window / 28;
          std::vector<int64_t> sorted = o.window_index;
          std::sort(sorted.begin(), sorted.end());
          for (int64_t u = 0; u < units; ++u) ASSERT_EQ(sorted[static_cast<size_t>(u)], u);
          ASSERT_EQ(o.cu_window_seqlens.front(), 0);
          ASSERT_EQ(o.cu_window_seqlens.back(), t * h * w);
          for (size_t i = 1; i < o.cu_window_seqlens.size(); ++i) {
            const int64_t len = o.cu_window_seqlens[i] - o.cu_window_seqlens[i - 1];
            ASSERT_GT(len, 0);
            ASSERT_LE(len, win * win * 4);
            ASSERT_EQ(len % 4, 0);
          }
          std::vector<int64_t> plain;
          ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kQwenVL, t, h, w, 2, &plain).ok());
          for (size_t j = 0; j < o.window_index.size(); ++j)
            for (size_t k = 0; k < 8; ++k)
              ASSERT_EQ(o.rows_cols[8 * j + k],
                        plain[static_cast<size_t>(8 * o.window_index[j]) + k]);
          // Patches of one window lie in one window_size x window_size pixel square.
          for (size_t i = 1; i < o.cu_window_seqlens.size(); ++i) {
            const size_t a = static_cast<size_t>(o.cu_window_seqlens[i - 1]);
            const size_t b = static_cast<size_t>(o.cu_window_seqlens[i]);
            for (size_t p = a; p < b; ++p) {
              ASSERT_EQ(o.rows_cols[2 * p] / (2 * win), o.rows_cols[2 * a] / (2 * win));
              ASSERT_EQ(o.rows_cols[2 * p + 1] / (2 * win), o.rows_cols[2 * a + 1] / (2 * win));
            }
          }
        }
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
