// The posenc command-line tool, run as a user would: exit codes, messages, output files.
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "posenc/freqs.h"
#include "posenc/half.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "posenc/targets.h"
#include "posenc/vision.h"
#include "tests/cli_test_util.h"
#include "tests/rope_test_util.h"
#include "tests/shared_data.h"
#include "tools/posenc/npy.h"

namespace posenc {
namespace {

using Result = test::CliResult;
using test::RunCli;

std::string TempPath(const std::string& name) {
  return test::CliTempPath("posenc_cli_test", name);
}

const std::string kConfigs = std::string(POSENC_SOURCE_DIR) + "/tools/configs/";

TEST(CliTest, InfoListsTargets) {
  const Result r = RunCli("info");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("compiled targets:"), std::string::npos);
  EXPECT_NE(r.output.find("chosen target:"), std::string::npos);
}

TEST(CliTest, MaxTargetEnvironmentCapsAndRejectsUnknownNames) {
  const std::vector<std::string> compiled = CompiledTargets();  // best first
  Result r;
  // SSE4 is left out of a build with POSENC_HWY_DISABLED_TARGETS (the sanitizer stage).
  if (std::find(compiled.begin(), compiled.end(), "SSE4") != compiled.end()) {
    r = RunCli("info", "POSENC_MAX_TARGET=SSE4");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("chosen target:     SSE4"), std::string::npos) << r.output;
  }
  r = RunCli("info", "POSENC_MAX_TARGET=SCALAR");  // the least capable compiled target:
  // SCALAR (g++) or EMU128 (clang)
  EXPECT_NE(r.output.find("chosen target:     " + compiled.back()), std::string::npos) << r.output;
  r = RunCli("info", "POSENC_MAX_TARGET=AVX9");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(test::CountLines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("POSENC_MAX_TARGET = \"AVX9\""), std::string::npos) << r.output;
}

// The ONNX case with position ids through the CLI, compared with ONNX's expected output.
TEST(CliTest, RopeOnOnnxCaseWithPositionIds) {
  POSENC_REQUIRE_SHARED("conformance/onnx/test_rotary_embedding");
  const std::string dir = test::SharedPath("conformance/onnx/test_rotary_embedding/");
  const std::string out = TempPath("onnx_y.npy");
  const Result r = RunCli("rope --q " + dir + "input_0_X.npy --layout bhsd --cos " + dir +
                       "input_1_cos_cache.npy --sin " + dir + "input_2_sin_cache.npy --positions " +
                       dir + "input_3_position_ids.npy --out-q " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  npy::Array got, expected, x;
  ASSERT_EQ(npy::Load(out, &got), "");
  ASSERT_EQ(npy::Load(dir + "output_0_Y.npy", &expected), "");
  ASSERT_EQ(npy::Load(dir + "input_0_X.npy", &x), "");
  ASSERT_EQ(got.shape, expected.shape);
  double max_abs = 0, worst = 0;
  for (int64_t i = 0; i < x.size(); ++i) max_abs = std::max(max_abs, double{std::fabs(x.as<float>()[i])});
  for (int64_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::fabs(double{got.as<float>()[i]} - expected.as<float>()[i]));
  }
  EXPECT_LE(worst, 4 * test::UlpOf(max_abs));  // as in rope_conformance_test
  std::remove(out.c_str());
}

// 3-D input with --num-heads, per-token caches (no position ids).
TEST(CliTest, RopeOnOnnx3dCase) {
  POSENC_REQUIRE_SHARED("conformance/onnx/test_rotary_embedding_3d_input");
  const std::string dir = test::SharedPath("conformance/onnx/test_rotary_embedding_3d_input/");
  const std::string out = TempPath("onnx3d_y.npy");
  const Result r = RunCli("rope --q " + dir + "input_0_X.npy --layout bsd --num-heads 4 --cos " + dir +
                       "input_1_cos_cache.npy --sin " + dir + "input_2_sin_cache.npy --positions " +
                       dir + "input_3_position_ids.npy --out-q " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  npy::Array got, expected;
  ASSERT_EQ(npy::Load(out, &got), "");
  ASSERT_EQ(npy::Load(dir + "output_0_Y.npy", &expected), "");
  for (int64_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got.as<float>()[i], expected.as<float>()[i], 2e-6) << i;
  }
  std::remove(out.c_str());
}

// q and k with a base, an offset and --inverse: bitwise equal to the library call.
TEST(CliTest, RopeMatchesLibraryBitwise) {
  npy::Array q{"<f4", {1, 3, 2, 8}, std::vector<unsigned char>(48 * 4)};
  npy::Array k{"<f4", {1, 3, 1, 8}, std::vector<unsigned char>(24 * 4)};
  test::FillNormal(q.as<float>(), 48, 5);
  test::FillNormal(k.as<float>(), 24, 6);
  const std::string qp = TempPath("q.npy"), kp = TempPath("k.npy");
  const std::string oq = TempPath("oq.npy"), ok = TempPath("ok.npy");
  ASSERT_EQ(npy::Save(qp, q), "");
  ASSERT_EQ(npy::Save(kp, k), "");
  const Result r = RunCli("rope --q " + qp + " --k " + kp + " --pairs interleaved --rotary-dim 6 "
                       "--base 500000 --offset 77 --inverse --attention-factor 1.25 --out-q " +
                       oq + " --out-k " + ok);
  ASSERT_EQ(r.code, 0) << r.output;
  RopeTensors t;
  t.q = TensorBSHD(q.as<float>(), 1, 3, 2, 8);
  t.k = TensorBSHD(k.as<float>(), 1, 3, 1, 8);
  RopeParams p;
  p.pairs = PairLayout::kInterleaved;
  p.rotary_dim = 6;
  p.freqs.base = 500000;
  p.freqs.attention_factor = 1.25;
  p.inverse = true;
  p.positions = Positions::Offset(77);
  ASSERT_TRUE(ApplyRope(t, p).ok());
  npy::Array gq, gk;
  ASSERT_EQ(npy::Load(oq, &gq), "");
  ASSERT_EQ(npy::Load(ok, &gk), "");
  EXPECT_EQ(gq.bytes, q.bytes);
  EXPECT_EQ(gk.bytes, k.bytes);
  for (const std::string& f : {qp, kp, oq, ok}) std::remove(f.c_str());
}

TEST(CliTest, BadArgumentsExitTwoWithOneLineAndNoOutput) {
  npy::Array q{"<f4", {1, 2, 1, 8}, std::vector<unsigned char>(16 * 4)};
  const std::string qp = TempPath("bad_q.npy"), out = TempPath("bad_out.npy");
  ASSERT_EQ(npy::Save(qp, q), "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rope --out-q " + out, "--q"},
      {"rope --q " + qp + " --out-q " + out + " --rotary-dim 7", "rotary_dim = 7"},
      {"rope --q " + qp + " --out-q " + out + " --layout xyz", "--layout"},
      {"rope --q " + qp + " --out-q " + out + " --layout bsd", "--num-heads"},
      {"rope --q /nonexistent.npy --out-q " + out, "cannot open"},
      {"rope --q " + qp + " --out-q " + out + " --base 10 --inv-freq " + qp, "excludes"},
      {"rope --q " + qp + " --out-q " + out + " --base -1", "freqs.base = -1"},
      {"rope --q " + qp + " --out-q " + out + " --inv-freq " + qp, "--inv-freq"},
      {"rope --q " + qp + " --k " + qp + " --out-q " + out, "--out-k"},
  };
  for (const auto& [args, needle] : cases) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_EQ(test::CountLines(r.output), 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(test::FileExists(out)) << args;
    std::remove(out.c_str());
  }
  std::remove(qp.c_str());
}

TEST(CliTest, FreqsPrintsRoundTrippableJson) {
  const Result r = RunCli("freqs --config " + kConfigs + "phi-3-mini-128k.json --seq-len 5000");
  ASSERT_EQ(r.code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  RopeConfig c;
  ASSERT_TRUE(LoadHfConfig(kConfigs + "phi-3-mini-128k.json", &c).ok());
  RopeFrequencies f;
  ASSERT_TRUE(ComputeFrequencies(c, 5000, &f).ok());
  EXPECT_EQ(j["rope_type"], "longrope");
  EXPECT_EQ(j["head_dim"], 96);
  EXPECT_EQ(j["rotary_dim"], 96);
  EXPECT_EQ(j["inv_freq"].get<std::vector<double>>(), f.inv_freq);  // bit-exact round trip
  EXPECT_EQ(j["attention_factor"].get<double>(), f.attention_factor);
  const Result bad = RunCli("freqs --config " + kConfigs + "nonexistent.json");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(test::CountLines(bad.output), 1) << bad.output;
}

TEST(CliTest, RopeWithConfigMatchesLibrary) {
  npy::Array q{"<f4", {1, 4, 2, 96}, std::vector<unsigned char>(4 * 2 * 96 * 4)};
  test::FillNormal(q.as<float>(), 4 * 2 * 96, 8);
  const std::string qp = TempPath("cfg_q.npy"), oq = TempPath("cfg_oq.npy");
  ASSERT_EQ(npy::Save(qp, q), "");
  const Result r = RunCli("rope --q " + qp + " --config " + kConfigs +
                          "phi-3-mini-128k.json --offset 4094 --out-q " + oq);
  ASSERT_EQ(r.code, 0) << r.output;
  RopeConfig c;
  ASSERT_TRUE(LoadHfConfig(kConfigs + "phi-3-mini-128k.json", &c).ok());
  RopeTensors t;
  t.q = TensorBSHD(q.as<float>(), 1, 4, 2, 96);
  RopeParams p;
  p.positions = Positions::Offset(4094);  // largest position 4097 -> L = 4098 > 4096: long factors
  ASSERT_TRUE(ApplyRope(t, c, p).ok());
  npy::Array got;
  ASSERT_EQ(npy::Load(oq, &got), "");
  EXPECT_EQ(got.bytes, q.bytes);
  const Result conflict = RunCli("rope --q " + qp + " --config " + kConfigs +
                                 "phi-3-mini-128k.json --base 100 --out-q " + oq);
  EXPECT_EQ(conflict.code, 2);
  for (const std::string& f : {qp, oq}) std::remove(f.c_str());
}

// M-RoPE: --positions [3, batch, seq] with a Qwen2.5-VL / Qwen3-VL config applies the model's
// sections (equal to the library call); without a config --mrope-section gives them; 1-D ids
// with stream ids but no sections fail with exit code 2 and no output.
TEST(CliTest, RopeMRopeStreamPositions) {
  const int64_t batch = 1, seq = 5, heads = 2, head_dim = 128;
  npy::Array q{"<f4", {batch, seq, heads, head_dim},
               std::vector<unsigned char>(static_cast<size_t>(seq * heads * head_dim * 4))};
  test::FillNormal(q.as<float>(), static_cast<size_t>(seq * heads * head_dim), 21);
  const std::vector<int64_t> ids = {0, 1, 2, 2, 5,   // t
                                    0, 1, 2, 3, 5,   // h
                                    0, 1, 3, 2, 5};  // w
  npy::Array pos{"<i8", {3, batch, seq}, std::vector<unsigned char>(ids.size() * 8)};
  std::memcpy(pos.bytes.data(), ids.data(), ids.size() * 8);
  const std::string qp = TempPath("mrope_q.npy"), pp = TempPath("mrope_pos.npy"),
                    oq = TempPath("mrope_oq.npy");
  ASSERT_EQ(npy::Save(qp, q), "");
  ASSERT_EQ(npy::Save(pp, pos), "");
  for (const char* file : {"qwen2.5-vl-7b-instruct.json", "qwen3-vl-8b-instruct.json"}) {
    const Result r = RunCli("rope --q " + qp + " --config " + kConfigs + file + " --positions " +
                            pp + " --out-q " + oq);
    ASSERT_EQ(r.code, 0) << r.output;
    RopeConfig c;
    ASSERT_TRUE(LoadHfConfig(kConfigs + file, &c).ok());
    ASSERT_TRUE(c.mrope.present());
    std::vector<float> want(q.as<float>(), q.as<float>() + seq * heads * head_dim);
    RopeTensors t;
    t.q = TensorBSHD(want.data(), batch, seq, heads, head_dim);
    RopeParams p;
    p.positions = Positions::StreamIds(ids.data(), 3);
    ASSERT_TRUE(ApplyRope(t, c, p).ok());
    npy::Array got;
    ASSERT_EQ(npy::Load(oq, &got), "");
    EXPECT_EQ(0, std::memcmp(got.bytes.data(), want.data(), want.size() * 4)) << file;
    std::remove(oq.c_str());
  }
  // By hand: --mrope-section with --base.
  Result r = RunCli("rope --q " + qp + " --positions " + pp +
                    " --mrope-section 16,24,24 --mrope-interleaved --base 500000 --out-q " + oq);
  ASSERT_EQ(r.code, 0) << r.output;
  {
    std::vector<float> want(q.as<float>(), q.as<float>() + seq * heads * head_dim);
    RopeTensors t;
    t.q = TensorBSHD(want.data(), batch, seq, heads, head_dim);
    RopeParams p;
    const int64_t section[3] = {16, 24, 24};
    p.freqs.base = 500000;
    p.mrope = {section, 3, true};
    p.positions = Positions::StreamIds(ids.data(), 3);
    ASSERT_TRUE(ApplyRope(t, p).ok());
    npy::Array got;
    ASSERT_EQ(npy::Load(oq, &got), "");
    EXPECT_EQ(0, std::memcmp(got.bytes.data(), want.data(), want.size() * 4));
    std::remove(oq.c_str());
  }
  r = RunCli("rope --q " + qp + " --positions " + pp + " --out-q " + oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("multi-stream ids need mrope sections"), std::string::npos) << r.output;
  EXPECT_FALSE(test::FileExists(oq));
  r = RunCli("rope --q " + qp + " --positions " + pp + " --mrope-section 16,24,23 --out-q " + oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sums to 63"), std::string::npos) << r.output;
  EXPECT_FALSE(test::FileExists(oq));
  for (const std::string& f : {qp, pp}) std::remove(f.c_str());
}

// vision-rope: --grid in HF's patch order and --positions give the library's bits; bad input
// exits 2 with no output.
TEST(CliTest, VisionRopeGridAndPositions) {
  const int64_t patches = 24, heads = 2, head_dim = 80;
  npy::Array q{"<f4", {1, patches, heads, head_dim},
               std::vector<unsigned char>(static_cast<size_t>(patches * heads * head_dim * 4))};
  test::FillNormal(q.as<float>(), static_cast<size_t>(patches * heads * head_dim), 12);
  std::vector<int64_t> grid;
  ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kQwenVL, 1, 4, 6, 2, &grid).ok());
  std::vector<float> want(q.as<float>(), q.as<float>() + patches * heads * head_dim);
  RopeTensors t;
  t.q = TensorBSHD(want.data(), 1, patches, heads, head_dim);
  VisionRopeParams vp;
  vp.rows_cols64 = grid.data();
  ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
  npy::Array pos{"<i8", {1, patches, 2}, std::vector<unsigned char>(grid.size() * 8)};
  std::memcpy(pos.bytes.data(), grid.data(), grid.size() * 8);
  const std::string qp = TempPath("vis_q.npy"), pp = TempPath("vis_pos.npy"),
                    oq = TempPath("vis_oq.npy");
  ASSERT_EQ(npy::Save(qp, q), "");
  ASSERT_EQ(npy::Save(pp, pos), "");
  for (const std::string& source : {std::string(" --grid 1,4,6"), " --positions " + pp}) {
    const Result r = RunCli("vision-rope --q " + qp + source + " --out-q " + oq);
    ASSERT_EQ(r.code, 0) << r.output;
    npy::Array got;
    ASSERT_EQ(npy::Load(oq, &got), "");
    EXPECT_EQ(0, std::memcmp(got.bytes.data(), want.data(), want.size() * 4)) << source;
    std::remove(oq.c_str());
  }
  Result r = RunCli("vision-rope --q " + qp + " --grid 1,4,5 --out-q " + oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("spatial_merge_size = 2"), std::string::npos) << r.output;
  EXPECT_FALSE(test::FileExists(oq));
  r = RunCli("vision-rope --q " + qp + " --grid 1,4,4 --out-q " + oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_FALSE(test::FileExists(oq));
  for (const std::string& f : {qp, pp}) std::remove(f.c_str());
}

// q [1, patches, heads, head_dim] (patches = rc's pairs) is saved to qp; `posenc vision-rope`
// with `flags` must write to oq exactly the bits ApplyVisionRope gives with kind and rc. q stays
// at qp for the caller's error cases.
void ExpectVisionCliMatchesLibrary(const std::string& qp, const std::string& oq,
                                   const std::string& flags, VisionRopeKind kind, int64_t heads,
                                   int64_t head_dim, const std::vector<int64_t>& rc, uint32_t seed) {
  const int64_t patches = static_cast<int64_t>(rc.size() / 2);
  const size_t n = static_cast<size_t>(patches * heads * head_dim);
  npy::Array q{"<f4", {1, patches, heads, head_dim}, std::vector<unsigned char>(n * 4)};
  test::FillNormal(q.as<float>(), n, seed);
  std::vector<float> want(q.as<float>(), q.as<float>() + n);
  RopeTensors t;
  t.q = TensorBSHD(want.data(), 1, patches, heads, head_dim);
  VisionRopeParams vp;
  vp.kind = kind;
  vp.rows_cols64 = rc.data();
  ASSERT_TRUE(ApplyVisionRope(t, vp).ok());
  ASSERT_EQ(npy::Save(qp, q), "");
  const Result r = RunCli("vision-rope --q " + qp + flags + " --out-q " + oq);
  ASSERT_EQ(r.code, 0) << flags << ": " << r.output;
  npy::Array got;
  ASSERT_EQ(npy::Load(oq, &got), "");
  EXPECT_EQ(0, std::memcmp(got.bytes.data(), want.data(), n * 4)) << flags;
  std::remove(oq.c_str());
}

// vision-rope --kind llama4 --grid (the CLS token last) and --kind qwen --window-size (Qwen2.5-VL's
// window order) give the library's bits; mismatched flags exit 2 with no output.
TEST(CliTest, VisionRopeLlama4AndWindowOrder) {
  const std::string qp = TempPath("vis4_q.npy"), oq = TempPath("vis4_oq.npy");
  struct Case {
    std::string flags;
    VisionRopeKind kind;
    int64_t head_dim;
    std::vector<int64_t> rc;
  };
  std::vector<int64_t> llama;
  ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kLlama4, 1, 4, 6, 1, &llama).ok());
  VisionWindowOrder order;
  ASSERT_TRUE(VisionWindowedGridPositions(1, 12, 10, 2, 56, 14, &order).ok());
  const Case cases[2] = {{" --kind llama4 --grid 1,4,6", VisionRopeKind::kLlama4, 88, llama},
                         {" --grid 1,12,10 --window-size 56", VisionRopeKind::kQwenVL, 80,
                          order.rows_cols}};
  for (const Case& c : cases) {
    ExpectVisionCliMatchesLibrary(qp, oq, c.flags, c.kind, 2, c.head_dim, c.rc, 13);
  }
  // q has the windowed grid's 120 patches: a llama4 grid of 120 + 1 tokens does not fit it.
  Result r = RunCli("vision-rope --q " + qp + " --kind llama4 --grid 1,10,12 --out-q " + oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--grid gives 121 patches but --q has 120"), std::string::npos)
      << r.output;
  r = RunCli("vision-rope --q " + qp + " --kind llama4 --grid 1,12,10 --window-size 112 --out-q " +
             oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--window-size: only with --kind qwen"), std::string::npos) << r.output;
  r = RunCli("vision-rope --q " + qp + " --grid 1,12,10 --window-size 20 --out-q " + oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("window_size = 20"), std::string::npos) << r.output;
  EXPECT_FALSE(test::FileExists(oq));
  std::remove(qp.c_str());
}

// vision-rope --config: the model's vision tower (Qwen2.5-VL: its window order with --grid;
// Llama 4: its kind) gives the library's bits; a q whose head_dim is not the tower's exits 2.
TEST(CliTest, VisionRopeFromConfig) {
  const std::string qp = TempPath("visc_q.npy"), oq = TempPath("visc_oq.npy");
  VisionWindowOrder order;
  ASSERT_TRUE(VisionWindowedGridPositions(1, 12, 10, 2, 112, 14, &order).ok());
  std::vector<int64_t> llama;
  ASSERT_TRUE(VisionGridPositions(VisionRopeKind::kLlama4, 1, 4, 6, 1, &llama).ok());
  struct Case {
    std::string config, grid;
    VisionRopeKind kind;
    int64_t head_dim;
    std::vector<int64_t> rc;
  };
  const Case cases[2] = {
      {"qwen2.5-vl-7b-instruct.json", "1,12,10", VisionRopeKind::kQwenVL, 80, order.rows_cols},
      {"llama-4-scout-17b-16e.json", "1,4,6", VisionRopeKind::kLlama4, 88, llama}};
  for (const Case& c : cases) {
    ExpectVisionCliMatchesLibrary(qp, oq, " --config " + kConfigs + c.config + " --grid " + c.grid,
                                  c.kind, 3, c.head_dim, c.rc, 14);
  }
  // q now has head_dim 88; Mistral Small 3.1's Pixtral tower has 64.
  const Result r = RunCli("vision-rope --q " + qp + " --config " + kConfigs +
                          "mistral-small-3.1-24b.json --grid 1,5,5 --out-q " + oq);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("the vision tower's head_dim is 64 but --q has head_dim 88"), std::string::npos)
      << r.output;
  EXPECT_FALSE(test::FileExists(oq));
  std::remove(qp.c_str());
}

// freqs on models with several RoPE layer types, pair layouts, M-RoPE and NoPE layers.
TEST(CliTest, FreqsLayerTypes) {
  const std::string gemma = kConfigs + "gemma-3-4b-it.json";
  Result r = RunCli("freqs --config " + gemma);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(test::CountLines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("(sliding_attention, full_attention): pass --layer-type"), std::string::npos) << r.output;
  r = RunCli("freqs --config " + gemma + " --layer-type full_attention");
  ASSERT_EQ(r.code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output);
  ModelRope m;
  ASSERT_TRUE(LoadHfModel(gemma, &m).ok());
  const RopeConfig* full = nullptr;
  ASSERT_TRUE(LayerRope(m, "full_attention", &full).ok());
  RopeFrequencies f;
  ASSERT_TRUE(ComputeFrequencies(*full, 0, &f).ok());
  EXPECT_EQ(j["rope_type"], "linear");
  EXPECT_EQ(j["inv_freq"].get<std::vector<double>>(), f.inv_freq);
  EXPECT_EQ(j["pairs"], "half");
  EXPECT_EQ(j["layer_type"], "full_attention");
  EXPECT_EQ(j["layer_types"], (nlohmann::json{"sliding_attention", "full_attention"}));
  EXPECT_FALSE(j.contains("mrope_section"));
  r = RunCli("freqs --config " + gemma + " --layer-type global");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(test::CountLines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("--layer-type global: not a RoPE layer type of this model (sliding_attention, full_attention)"),
            std::string::npos) << r.output;
  // A single-type model accepts its one type name and nothing else.
  r = RunCli("freqs --config " + kConfigs + "llama-3.1-8b.json --layer-type full_attention");
  EXPECT_EQ(r.code, 0) << r.output;
  r = RunCli("freqs --config " + kConfigs + "llama-3.1-8b.json --layer-type sliding_attention");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("(full_attention)"), std::string::npos) << r.output;
  j = nlohmann::json::parse(RunCli("freqs --config " + kConfigs + "gpt-j-6b.json").output);
  EXPECT_EQ(j["pairs"], "interleaved");
  EXPECT_EQ(j["rotary_dim"], 64);
  j = nlohmann::json::parse(RunCli("freqs --config " + kConfigs + "qwen3-vl-8b-instruct.json").output);
  EXPECT_EQ(j["mrope_section"], (nlohmann::json{24, 20, 20}));
  EXPECT_EQ(j["mrope_interleaved"], true);
  j = nlohmann::json::parse(RunCli("freqs --config " + kConfigs + "llama-4-scout-17b-16e.json").output);
  EXPECT_EQ(j["layer_types"], (nlohmann::json{"chunked_attention"}));
  EXPECT_EQ(j["no_rope_layers"].size(), 12u);
  EXPECT_EQ(j["no_rope_layers"][0], 3);
  j = nlohmann::json::parse(RunCli("freqs --config " + kConfigs + "deepseek-v3.json").output);
  EXPECT_NEAR(j["softmax_scale_factor"].get<double>(), 1.8738542070926265, 1e-15);
}

// rope --config: the config's pair layout by default, --pairs overrides it, --layer-type picks
// the RoPE of a multi-type model.
TEST(CliTest, RopeWithConfigFollowsItsPairsAndLayerTypes) {
  npy::Array q{"<f4", {1, 3, 2, 256}, std::vector<unsigned char>(3 * 2 * 256 * 4)};
  test::FillNormal(q.as<float>(), 3 * 2 * 256, 9);
  const std::string qp = TempPath("pairs_q.npy"), oq = TempPath("pairs_oq.npy");
  ASSERT_EQ(npy::Save(qp, q), "");
  auto library = [&](const RopeConfig& c, PairLayout pairs) {
    std::vector<float> out(q.as<float>(), q.as<float>() + 3 * 2 * 256);
    RopeTensors t;
    t.q = TensorBSHD(out.data(), 1, 3, 2, 256);
    RopeParams p;
    p.pairs = pairs;
    p.positions = Positions::Offset(7);
    EXPECT_TRUE(ApplyRope(t, c, p).ok());
    return out;
  };
  auto cli = [&](const std::string& extra) {
    const Result r = RunCli("rope --q " + qp + " --offset 7 --out-q " + oq + " " + extra);
    EXPECT_EQ(r.code, 0) << extra << "\n" << r.output;
    npy::Array got;
    EXPECT_EQ(npy::Load(oq, &got), "");
    const float* g = reinterpret_cast<const float*>(got.bytes.data());
    return std::vector<float>(g, g + 3 * 2 * 256);
  };
  RopeConfig gptj;
  ASSERT_TRUE(LoadHfConfig(kConfigs + "gpt-j-6b.json", &gptj).ok());
  ASSERT_EQ(gptj.pairs, PairLayout::kInterleaved);
  EXPECT_EQ(cli("--config " + kConfigs + "gpt-j-6b.json"), library(gptj, PairLayout::kInterleaved));
  EXPECT_EQ(cli("--config " + kConfigs + "gpt-j-6b.json --pairs half"), library(gptj, PairLayout::kHalf));
  EXPECT_NE(library(gptj, PairLayout::kInterleaved), library(gptj, PairLayout::kHalf));
  ModelRope gemma;
  ASSERT_TRUE(LoadHfModel(kConfigs + "gemma-3-4b-it.json", &gemma).ok());
  const RopeConfig* sliding = nullptr;
  ASSERT_TRUE(LayerRope(gemma, "sliding_attention", &sliding).ok());
  EXPECT_EQ(cli("--config " + kConfigs + "gemma-3-4b-it.json --layer-type sliding_attention"),
            library(*sliding, PairLayout::kFromConfig));
  const Result multi = RunCli("rope --q " + qp + " --config " + kConfigs + "gemma-3-4b-it.json --out-q " + oq);
  EXPECT_EQ(multi.code, 2);
  EXPECT_EQ(test::CountLines(multi.output), 1) << multi.output;
  EXPECT_NE(multi.output.find("pass --layer-type"), std::string::npos) << multi.output;
  const Result no_config = RunCli("rope --q " + qp + " --layer-type full_attention --out-q " + oq);
  EXPECT_EQ(no_config.code, 2) << no_config.output;
  for (const std::string& f : {qp, oq}) std::remove(f.c_str());
}

TEST(CliTest, SinusoidalWritesTheLibraryTable) {
  const std::string out = TempPath("pe.npy");
  Result r = RunCli("sinusoidal --dim 6 --count 5 --start 3 --convention concat_sin_cos --spacing t2t "
                    "--base 500 --offset 2 --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  npy::Array got;
  ASSERT_EQ(npy::Load(out, &got), "");
  EXPECT_EQ(got.descr, "<f4");
  EXPECT_EQ(got.shape, (std::vector<int64_t>{5, 6}));
  std::vector<float> want(30);
  SinusoidalParams p;
  p.layout = SinusoidalLayout::kConcatSinCos;
  p.spacing = FrequencySpacing::kTensor2Tensor;
  p.base = 500;
  p.position_offset = 2;
  p.positions = Positions::Offset(3);
  ASSERT_TRUE(WriteSinusoidal(p, EmbeddingBSD(want.data(), 1, 5, 6)).ok());
  EXPECT_EQ(std::memcmp(got.as<float>(), want.data(), 120), 0);
  std::remove(out.c_str());
  // Explicit positions.
  npy::Array ids{"<i8", {3}, std::vector<unsigned char>(24)};
  ids.as<int64_t>()[0] = 9;
  ids.as<int64_t>()[1] = 0;
  ids.as<int64_t>()[2] = 16777216;
  const std::string ip = TempPath("ids.npy");
  ASSERT_EQ(npy::Save(ip, ids), "");
  r = RunCli("sinusoidal --dim 4 --positions " + ip + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_EQ(npy::Load(out, &got), "");
  EXPECT_EQ(got.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(got.as<float>()[4], 0.0f);  // sin(0)
  EXPECT_EQ(got.as<float>()[5], 1.0f);  // cos(0)
  std::remove(out.c_str());
  // Errors: one line, exit 2, no file.
  for (const std::string& args : {std::string("sinusoidal --dim 5 --count 3 --out ") + out,
                                  std::string("sinusoidal --dim 4 --out ") + out,
                                  "sinusoidal --dim 4 --count 2 --positions " + ip + " --out " + out,
                                  std::string("sinusoidal --dim 4 --count 2 --convention x --out ") + out}) {
    r = RunCli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_EQ(test::CountLines(r.output), 1) << args << "\n" << r.output;
    EXPECT_FALSE(test::FileExists(out)) << args;
  }
  std::remove(ip.c_str());
}

// --dtype: bf16 files hold bit patterns ('<u2'), f16 files are '<f2'; bitwise equal to the library.
TEST(CliTest, HalfPrecisionDtypes) {
  for (const auto& [name, dtype, descr] : {std::tuple<const char*, DType, const char*>{"bf16", DType::kBF16, "<u2"},
                                           {"f16", DType::kF16, "<f2"}}) {
    std::vector<float> values(2 * 4 * 16);
    test::FillNormal(values.data(), values.size(), 4);
    npy::Array q{descr, {1, 2, 4, 16}, std::vector<unsigned char>(values.size() * 2)};
    ASSERT_TRUE(ConvertFromF32(values.data(), values.size(), dtype, q.bytes.data()).ok());
    const std::string qp = TempPath("hq.npy"), oq = TempPath("hoq.npy");
    ASSERT_EQ(npy::Save(qp, q), "");
    Result r = RunCli("rope --q " + qp + " --dtype " + name + " --offset 1000 --out-q " + oq);
    ASSERT_EQ(r.code, 0) << r.output;
    RopeTensors t;
    t.q = TensorBSHD(q.bytes.data(), dtype, 1, 2, 4, 16);
    RopeParams p;
    p.positions = Positions::Offset(1000);
    ASSERT_TRUE(ApplyRope(t, p).ok());
    npy::Array got;
    ASSERT_EQ(npy::Load(oq, &got), "");
    EXPECT_EQ(got.descr, descr);
    EXPECT_EQ(got.bytes, q.bytes);
    r = RunCli("rope --q " + qp + " --dtype f32 --out-q " + oq + "x");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("does not match --dtype f32"), std::string::npos) << r.output;
    // Sinusoidal table in the same dtype.
    r = RunCli(std::string("sinusoidal --dim 8 --count 3 --dtype ") + name + " --out " + oq);
    ASSERT_EQ(r.code, 0) << r.output;
    ASSERT_EQ(npy::Load(oq, &got), "");
    EXPECT_EQ(got.descr, descr);
    std::vector<uint16_t> want(24);
    SinusoidalParams sp;
    ASSERT_TRUE(WriteSinusoidal(sp, EmbeddingBSD(want.data(), dtype, 1, 3, 8)).ok());
    EXPECT_EQ(std::memcmp(got.bytes.data(), want.data(), 48), 0);
    for (const std::string& f : {qp, oq}) std::remove(f.c_str());
  }
}

TEST(CliTest, DemoPassesOnEveryTarget) {
  const Result r = RunCli("demo");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("all targets within the bound and bitwise equal to scalar"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace posenc
