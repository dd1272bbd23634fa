// `posenc rerope` run as a user would: output equal to the library call bit for bit (every mode,
// pairs, dtypes, --q-offset, --config), causal masking, and bad arguments (exit code 2, one line
// naming the problem, no output file).
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/half.h"
#include "posenc/rerope.h"
#include "tools/posenc/npy.h"

namespace posenc {
namespace {

using Result = test::CliResult;
using test::RunCli;

std::string TempPath(const std::string& name) {
  return test::CliTempPath("posenc_cli_rerope", name);
}

const std::string kConfigs = std::string(POSENC_SOURCE_DIR) + "/tools/configs/";

// Deterministic values in [-2, 2) as an .npy of `descr` ('<f4', '<f2' or '<u2' bf16 bits).
npy::Array Values(const std::string& descr, std::vector<int64_t> shape, uint32_t seed) {
  npy::Array a{descr, shape, {}};
  std::vector<float> v(static_cast<size_t>(a.size()));
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int32_t>(s >> 8) - (1 << 23)) * (1.0f / (1 << 22));
  }
  a.bytes.resize(v.size() * a.item_size());
  if (descr == "<f4") {
    std::memcpy(a.bytes.data(), v.data(), v.size() * 4);
  } else {
    EXPECT_TRUE(ConvertFromF32(v.data(), v.size(), descr == "<f2" ? DType::kF16 : DType::kBF16,
                               a.bytes.data())
                    .ok());
  }
  return a;
}

DType DTypeOf(const npy::Array& a) {
  return a.descr == "<f2" ? DType::kF16 : a.descr == "<u2" ? DType::kBF16 : DType::kF32;
}

struct Files {
  std::string q = TempPath("q.npy"), k = TempPath("k.npy"), out = TempPath("scores.npy");
  ~Files() {
    for (const std::string* f : {&q, &k, &out}) std::remove(f->c_str());
  }
};

// The library's scores for the CLI's semantics (keys at 0.., queries at q_offset.., causal).
std::vector<unsigned char> LibraryScores(npy::Array& q, npy::Array& k, RelativeRopeParams p,
                                         int64_t q_offset, const RopeConfig* config = nullptr) {
  const int64_t B = q.shape[0], LQ = q.shape[1], H = q.shape[2], LK = k.shape[1];
  std::vector<unsigned char> bytes(static_cast<size_t>(B * H * LQ * LK) * 4);
  RelativeRopeTensors t;
  t.q = TensorBSHD(q.bytes.data(), DTypeOf(q), B, LQ, H, q.shape[3]);
  t.k = TensorBSHD(k.bytes.data(), DTypeOf(k), B, LK, k.shape[2], k.shape[3]);
  t.scores = TensorBSHD(bytes.data(), DType::kF32, B, H, LQ, LK);
  p.q_positions = Positions::Offset(q_offset);
  p.causal = true;
  const Status st = config ? RelativeRopeScores(t, *config, p) : RelativeRopeScores(t, p);
  EXPECT_TRUE(st.ok()) << st.message();
  return bytes;
}

TEST(CliReropeTest, MatchesLibraryBitwise) {
  struct Case {
    std::string descr, mode, flags;
    DistanceMap map;
    PairLayout pairs;
    double base;
    bool q_offset;
  };
  const Case cases[] = {
      {"<f4", "cap", "--window 6", {DistanceMode::kCap, 6, 0.0}, PairLayout::kHalf, 10000.0, false},
      {"<f4",
       "exact",
       "--window 6 --pairs interleaved --base 500000",
       {DistanceMode::kExact, 6, 0.0},
       PairLayout::kInterleaved,
       500000.0,
       false},
      {"<f2",
       "leaky",
       "--window 4 --leak 8",
       {DistanceMode::kLeaky, 4, 8.0},
       PairLayout::kHalf,
       10000.0,
       false},
      {"<u2",
       "log",
       "--window 3 --q-offset 5",
       {DistanceMode::kLog, 3, 0.0},
       PairLayout::kHalf,
       10000.0,
       true},
  };
  for (const Case& c : cases) {
    Files f;
    npy::Array q = Values(c.descr, {2, 3, 4, 16}, 1), k = Values(c.descr, {2, 11, 2, 16}, 2);
    ASSERT_EQ(npy::Save(f.q, q), "");
    ASSERT_EQ(npy::Save(f.k, k), "");
    const Result r = RunCli("rerope --q " + f.q + " --k " + f.k + " --mode " + c.mode + " " +
                            c.flags + " --out " + f.out);
    ASSERT_EQ(r.code, 0) << c.flags << "\n" << r.output;
    npy::Array got;
    ASSERT_EQ(npy::Load(f.out, &got), "");
    EXPECT_EQ(got.descr, "<f4");
    EXPECT_EQ(got.shape, (std::vector<int64_t>{2, 4, 3, 11}));
    RelativeRopeParams p;
    p.map = c.map;
    p.pairs = c.pairs;
    p.freqs.base = c.base;
    EXPECT_EQ(got.bytes, LibraryScores(q, k, p, c.q_offset ? 5 : 11 - 3)) << c.mode;
    // Causal: query i (at q_offset + i) sees keys 0 .. q_offset + i.
    const int64_t q_offset = c.q_offset ? 5 : 8;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 11; ++j) {
        const float s = got.as<float>()[(0 * 3 + i) * 11 + j];  // batch 0, head 0
        EXPECT_EQ(std::isinf(s) && s<0, j> q_offset + i) << c.mode << " i " << i << " j " << j;
      }
  }
}

TEST(CliReropeTest, ConfigGivesTheConfigsFrequencies) {
  Files f;
  npy::Array q = Values("<f4", {1, 2, 4, 128}, 3), k = Values("<f4", {1, 9, 1, 128}, 4);
  ASSERT_EQ(npy::Save(f.q, q), "");
  ASSERT_EQ(npy::Save(f.k, k), "");
  const std::string config = kConfigs + "llama-3.1-8b.json";
  const Result r = RunCli("rerope --q " + f.q + " --k " + f.k + " --mode cap --window 4 --config " +
                          config + " --out " + f.out);
  ASSERT_EQ(r.code, 0) << r.output;
  npy::Array got;
  ASSERT_EQ(npy::Load(f.out, &got), "");
  RopeConfig c;
  ASSERT_TRUE(LoadHfConfig(config, &c).ok());
  RelativeRopeParams p;
  p.map = {DistanceMode::kCap, 4, 0.0};
  EXPECT_EQ(got.bytes, LibraryScores(q, k, p, 7, &c));
}

TEST(CliReropeTest, BadArgumentsExitTwoWithOneLineAndNoOutput) {
  Files f;
  ASSERT_EQ(npy::Save(f.q, Values("<f4", {1, 2, 4, 8}, 5)), "");
  ASSERT_EQ(npy::Save(f.k, Values("<f4", {1, 5, 2, 8}, 6)), "");
  const std::string k3 = TempPath("k3.npy");
  ASSERT_EQ(npy::Save(k3, Values("<f4", {1, 5, 3, 8}, 8)), "");
  const std::string qk = "rerope --q " + f.q + " --k " + f.k + " --out " + f.out + " ";
  npy::Array half = Values("<f2", {1, 5, 2, 8}, 7);
  const std::string kh = TempPath("k_half.npy");
  ASSERT_EQ(npy::Save(kh, half), "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rerope --q " + f.q + " --out " + f.out + " --mode cap --window 2", "--k"},
      {qk + "--mode cap", "--window"},
      {qk + "--window 4", "--mode"},
      {qk + "--mode banana --window 4", "--mode"},
      {qk + "--mode leaky --window 4", "--mode leaky needs --leak K"},
      {qk + "--mode cap --window 4 --leak 3", "--leak is only used by --mode leaky"},
      {qk + "--mode leaky --window 4 --leak 1", "map.leak = 1: must be finite and > 1"},
      {qk + "--mode cap --window 0", "map.window = 0: must be > 0 for mode cap"},
      {"rerope --q " + f.q + " --k " + k3 + " --out " + f.out + " --mode cap --window 4",
       "q.shape[2] (heads) = 4 is not a multiple of k.shape[2] (kv_heads) = 3"},
      {"rerope --q " + f.q + " --k " + kh + " --out " + f.out + " --mode cap --window 4",
       "--k: dtype '<f2' differs from --q's '<f4'"},
      {qk + "--mode cap --window 4 --base 0", "freqs.base = 0"},
      {qk + "--mode cap --window 4 --base 2 --config " + kConfigs + "llama-3.1-8b.json",
       "excludes"},
      {"rerope --q /nonexistent.npy --k " + f.k + " --out " + f.out + " --mode cap --window 4",
       "cannot open"},
  };
  for (const auto& [args, needle] : cases) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << "\n" << r.output;
    EXPECT_FALSE(test::FileExists(f.out)) << args;
    std::remove(f.out.c_str());
  }
  std::remove(kh.c_str());
  std::remove(k3.c_str());
}

}  // namespace
}  // namespace posenc
