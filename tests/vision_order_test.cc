// Llama 4 vision RoPE and Qwen2.5-VL's window order (posenc/vision.h) against the float64 port
// of HF's functions (tests/data/hf_vision_rope_port.json, written by
// `python3 tools/hf_vision_rope_port.py > tests/data/hf_vision_rope_port.json`): the orders
// (Llama 4 img_idx with the CLS token, get_window_index's window_index and cu_window_seqlens),
// HF's cos/sin within 2^-24 and vision_apply_rotary_emb within 2^-21 * M per pair; the window
// order's invariants on many grids; validation naming argument and value. The per-target,
// dtype, stride and thread-count tests of these kinds are in tests/vision_rope_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "posenc/rope.h"
#include "tests/json_util.h"
#include "posenc/vision.h"

namespace posenc {
namespace {

// Qwen2.5-VL's window order: positions, window_index and cu_window_seqlens equal the port of
// get_window_index (grids with full, partial and empty padded windows, two window sizes); HF's
// cos/sin in window order within 2^-24 as above.
TEST(VisionRopeHfTest, QwenWindowOrderMatchesPortedHf) {
  const nlohmann::json data =
      test::ReadJsonFile(std::string(POSENC_SOURCE_DIR) + "/tests/data/hf_vision_rope_port.json");
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
      test::ReadJsonFile(std::string(POSENC_SOURCE_DIR) + "/tests/data/hf_vision_rope_port.json");
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
    for (bool ref : {false, true}) {  // the library and posenc::reference
      std::vector<float> out(x.size());
      RopeTensors t;
      t.q = TensorBSHD(x.data(), 1, n, 1, d);
      t.q_out = TensorBSHD(out.data(), 1, n, 1, d);
      VisionRopeParams vp;
      vp.kind = VisionRopeKind::kLlama4;
      vp.theta = c["theta"];
      vp.rows_cols64 = rc.data();
      ASSERT_TRUE((ref ? reference::ApplyVisionRope(t, vp) : ApplyVisionRope(t, vp)).ok());
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
      EXPECT_LE(worst, 1.0) << ref;
    }
  }
  EXPECT_EQ(cases, 2);
  EXPECT_EQ(with_out, 1);
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

}  // namespace
}  // namespace posenc
