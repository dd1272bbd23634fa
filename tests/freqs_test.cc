// RoPE scaling types and the config.json loader: HF golden frequencies, properties derived by
// hand from the definitions (docs/math.md), every loader error, the shipped model configs, and
// ApplyRope with a config.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lib/freqs/det_math.h"
#include "lib/core/distance_map.h"  // DeterministicLn
#include "posenc/freqs.h"
#include "posenc/rope.h"
#include "tests/rope_test_util.h"
#include "tests/shared_data.h"

namespace posenc {
namespace {

const std::string kShared = POSENC_SHARED_DIR;
const std::string kConfigs = std::string(POSENC_SOURCE_DIR) + "/tools/configs/";

RopeConfig Parse(const std::string& text) {
  RopeConfig c;
  const Status st = ParseHfConfig(text, &c);
  EXPECT_TRUE(st.ok()) << st.message();
  return c;
}

RopeFrequencies Compute(const RopeConfig& c, int64_t seq_len = 0) {
  RopeFrequencies f;
  const Status st = ComputeFrequencies(c, seq_len, &f);
  EXPECT_TRUE(st.ok()) << st.message();
  return f;
}

// HF computes base ** (arange(0, r, 2).float() / r) and the scalings in float32: the exponent's
// rounding (relative 2^-24, scaled by ln(base) through the power), pow's own error (~1 ulp) and
// up to ~6 further float32 roundings (reciprocal, factor division, YaRN blend, LongRoPE product).
// Tolerance relative to the value: (ln(base) + 16) * 2^-24, i.e. 2^-24 per rounding plus the
// exponent term. We compute everything in double, so the difference is HF's error.
TEST(FreqsGoldenTest, EveryHfEntry) {
  POSENC_REQUIRE_SHARED("golden/hf_freqs.json");
  std::ifstream f(test::SharedPath("golden/hf_freqs.json"));
  ASSERT_TRUE(f.good()) << test::SharedPath("golden/hf_freqs.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  ASSERT_GE(g["entries"].size(), 9u);
  for (const auto& e : g["entries"]) {
    const std::string name = e["name"];
    const RopeConfig c = Parse(e["config"].dump());
    const int64_t seq_len = e["seq_len"].is_null() ? 0 : e["seq_len"].get<int64_t>();
    const RopeFrequencies fr = Compute(c, seq_len);
    EXPECT_EQ(fr.rotary_dim, e["rotary_dim"].get<int64_t>()) << name;
    EXPECT_STREQ(RopeTypeName(fr.rope_type), e["rope_type"].get<std::string>().c_str()) << name;
    const std::vector<double> hf = e["inv_freq"].get<std::vector<double>>();
    ASSERT_EQ(fr.inv_freq.size(), hf.size()) << name;
    // The effective base (dynamic rescales it) sets the exponent term of the tolerance.
    double base = c.rope_theta;
    if (c.rope_type == RopeType::kDynamic && seq_len > c.max_position_embeddings) {
      const double s = *c.factor, r = static_cast<double>(fr.rotary_dim);
      base *= std::pow(s * static_cast<double>(seq_len) / static_cast<double>(*c.max_position_embeddings) - (s - 1), r / (r - 2));
    }
    const double rel_tol = (std::log(base) + 16.0) * std::ldexp(1.0, -24);
    double worst_ulp = 0;
    for (size_t i = 0; i < hf.size(); ++i) {
      EXPECT_LE(std::fabs(fr.inv_freq[i] - hf[i]), rel_tol * hf[i]) << name << " i=" << i;
      worst_ulp = std::max(worst_ulp, std::fabs(fr.inv_freq[i] - hf[i]) / test::UlpOf(hf[i]));
    }
    const double af = e["attention_factor"];
    EXPECT_NEAR(fr.attention_factor, af, 4e-16 * af) << name;
    std::printf("%-40s rotary %3lld  max |ours - HF| = %5.2f f32 ulp (tol %.1f)  attention %.17g\n",
                name.c_str(), static_cast<long long>(fr.rotary_dim), worst_ulp,
                rel_tol * std::ldexp(1.0, 23), fr.attention_factor);
  }
}

RopeConfig Llama2() {
  RopeConfig c;
  c.head_dim = 128;
  c.max_position_embeddings = 4096;
  return c;
}

TEST(FreqsPropertiesTest, DefaultIsBasePower) {
  const RopeFrequencies f = Compute(Llama2());
  ASSERT_EQ(f.inv_freq.size(), 64u);
  EXPECT_EQ(f.inv_freq[0], 1.0);
  EXPECT_NEAR(f.inv_freq[32], 0.01, 1e-17);  // 10000^(-64/128)
  EXPECT_EQ(f.attention_factor, 1.0);
}

TEST(FreqsPropertiesTest, LinearIsDefaultOverFactor) {
  RopeConfig c = Llama2();
  const RopeFrequencies base = Compute(c);
  c.rope_type = RopeType::kLinear;
  c.factor = 4.0;
  const RopeFrequencies lin = Compute(c);
  for (size_t i = 0; i < base.inv_freq.size(); ++i) EXPECT_EQ(lin.inv_freq[i], base.inv_freq[i] / 4.0);
}

TEST(FreqsPropertiesTest, DynamicEqualsDefaultUpToMaxPositions) {
  RopeConfig c = Llama2();
  const RopeFrequencies base = Compute(c);
  c.rope_type = RopeType::kDynamic;
  c.factor = 2.0;
  for (int64_t L : {0, 1, 4095, 4096}) EXPECT_EQ(Compute(c, L).inv_freq, base.inv_freq) << L;
  const RopeFrequencies longer = Compute(c, 4097);
  EXPECT_EQ(longer.inv_freq[0], 1.0);
  EXPECT_LT(longer.inv_freq[63], base.inv_freq[63]);  // a larger base lowers every frequency
  // At L = 2M: base' = base * (2 * 2 - 1)^(128 / 126).
  const RopeFrequencies at2m = Compute(c, 8192);
  const double base2 = 10000.0 * std::pow(3.0, 128.0 / 126.0);
  EXPECT_NEAR(at2m.inv_freq[1], std::pow(base2, -2.0 / 128.0), 1e-16);
}

TEST(FreqsPropertiesTest, StaticNtkScalesTheBase) {
  RopeConfig c = Llama2();
  c.rope_type = RopeType::kNtk;
  c.alpha = 8.0;
  const RopeFrequencies f = Compute(c);
  const double base2 = 10000.0 * std::pow(8.0, 128.0 / 126.0);
  EXPECT_NEAR(f.inv_freq[10], std::pow(base2, -20.0 / 128.0), 1e-16);
}

TEST(FreqsPropertiesTest, YarnRampEndpointsKeepOrDivideExactly) {
  RopeConfig c;
  c.rope_type = RopeType::kYarn;
  c.head_dim = 128;
  c.rope_theta = 10000.0;
  c.factor = 16.0;
  c.original_max_position_embeddings = 4096;
  c.max_position_embeddings = 65536;
  const RopeFrequencies def = [] { RopeConfig d; d.head_dim = 128; return Compute(d); }();
  const RopeFrequencies y = Compute(c);
  // low = floor(128 ln(4096 / (32 * 2pi)) / (2 ln 10000)) = floor(20.9) = 20,
  // high = ceil(128 ln(4096 / (1 * 2pi)) / (2 ln 10000)) = ceil(45.0) = 46 (by hand).
  for (size_t i = 0; i <= 20; ++i) EXPECT_EQ(y.inv_freq[i], def.inv_freq[i]) << i;
  for (size_t i = 46; i < 64; ++i) EXPECT_EQ(y.inv_freq[i], def.inv_freq[i] / 16.0) << i;
  for (size_t i = 21; i < 46; ++i) {
    EXPECT_LT(y.inv_freq[i], def.inv_freq[i]) << i;
    EXPECT_GT(y.inv_freq[i], def.inv_freq[i] / 16.0) << i;
  }
  EXPECT_DOUBLE_EQ(y.attention_factor, 0.1 * std::log(16.0) + 1.0);
  c.mscale = 0.707;
  c.mscale_all_dim = 0.707;
  EXPECT_EQ(Compute(c).attention_factor, 1.0);
  c.attention_factor = 1.5;
  EXPECT_EQ(Compute(c).attention_factor, 1.5);
  // Factor derived from the lengths when absent: 65536 / 4096 = 16, same frequencies.
  c.factor.reset();
  c.attention_factor.reset();
  c.mscale.reset();
  EXPECT_EQ(Compute(c).inv_freq, y.inv_freq);
}

TEST(FreqsPropertiesTest, Llama3BandEdges) {
  RopeConfig c;
  c.rope_type = RopeType::kLlama3;
  c.head_dim = 128;
  c.rope_theta = 500000.0;
  c.factor = 8.0;
  c.low_freq_factor = 1.0;
  c.high_freq_factor = 4.0;
  c.original_max_position_embeddings = 8192;
  RopeConfig d;
  d.head_dim = 128;
  d.rope_theta = 500000.0;
  const RopeFrequencies def = Compute(d), l3 = Compute(c);
  int kept = 0, divided = 0, smoothed = 0;
  for (size_t i = 0; i < 64; ++i) {
    const double wavelen = 2 * M_PI / def.inv_freq[i];
    if (wavelen < 8192.0 / 4.0) {
      EXPECT_EQ(l3.inv_freq[i], def.inv_freq[i]) << i;
      ++kept;
    } else if (wavelen > 8192.0) {
      EXPECT_EQ(l3.inv_freq[i], def.inv_freq[i] / 8.0) << i;
      ++divided;
    } else {
      EXPECT_LT(l3.inv_freq[i], def.inv_freq[i]) << i;
      EXPECT_GT(l3.inv_freq[i], def.inv_freq[i] / 8.0) << i;
      ++smoothed;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(smoothed, 0);
}

TEST(FreqsPropertiesTest, LongRopeSwitchesAtOriginalPlusOne) {
  RopeConfig c;
  c.rope_type = RopeType::kLongRope;
  c.head_dim = 8;
  c.max_position_embeddings = 131072;
  c.original_max_position_embeddings = 4096;
  c.short_factor = {1, 1, 1, 1};
  c.long_factor = {2, 4, 8, 16};
  const RopeFrequencies s = Compute(c, 4096), l = Compute(c, 4097);
  RopeConfig d;
  d.head_dim = 8;
  const RopeFrequencies def = Compute(d);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(s.inv_freq[i], def.inv_freq[i], 1e-16);
    EXPECT_NEAR(l.inv_freq[i], def.inv_freq[i] / (*c.long_factor)[i], 1e-16);
  }
  EXPECT_DOUBLE_EQ(s.attention_factor, std::sqrt(1 + std::log(32.0) / std::log(4096.0)));
}

TEST(FreqsPropertiesTest, PartialRotaryLengths) {
  RopeConfig c;
  c.head_dim = 64;
  c.partial_rotary_factor = 0.25;
  EXPECT_EQ(Compute(c).rotary_dim, 16);
  c.head_dim = 80;
  c.partial_rotary_factor = 0.4;
  EXPECT_EQ(Compute(c).rotary_dim, 32);
  EXPECT_EQ(Compute(c).inv_freq.size(), 16u);
}

void ExpectLoadError(const std::string& text, const std::string& needle) {
  RopeConfig c;
  c.head_dim = 12345;  // sentinel: must stay untouched
  const Status st = ParseHfConfig(text, &c);
  EXPECT_FALSE(st.ok()) << text;
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find(needle), std::string::npos)
      << "message \"" << st.message() << "\" lacks \"" << needle << "\"";
  EXPECT_EQ(c.head_dim, 12345);
}

TEST(ConfigLoaderTest, EveryError) {
  const std::string h = R"("hidden_size": 4096, "num_attention_heads": 32, )";
  ExpectLoadError("{", "invalid JSON");
  ExpectLoadError("[1]", "expected a JSON object");
  ExpectLoadError(R"({"num_attention_heads": 32})", "head_dim: missing");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "magic"}})",
                  "rope_scaling.rope_type = \"magic\": unknown rope type");
  ExpectLoadError("{" + h + R"("rope_parameters": {"type": 7}})", "rope_parameters.type: expected a string");
  ExpectLoadError("{" + h + R"("rope_scaling": 3})", "rope_scaling: expected an object or null");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "linear"}})",
                  "rope_scaling.factor: missing (required by rope_type linear)");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "linear", "factor": "4"}})",
                  "rope_scaling.factor: expected a number, got string");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "linear", "factor": -4}})",
                  "rope_scaling.factor = -4: must be finite and > 0");
  ExpectLoadError("{" + h + R"("rope_theta": 0})", "rope_theta = 0: must be finite and > 0");
  ExpectLoadError("{" + h + R"("rope_theta": "big"})", "rope_theta: expected a number");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "dynamic", "factor": 2}})",
                  "max_position_embeddings: missing (required by rope_type dynamic)");
  ExpectLoadError("{" + h + R"("max_position_embeddings": 4.5})",
                  "max_position_embeddings: expected an integer");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "llama3", "factor": 8, "high_freq_factor": 4,
                  "original_max_position_embeddings": 8192}})",
                  "rope_scaling.low_freq_factor: missing");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4,
                  "high_freq_factor": 1, "original_max_position_embeddings": 8192}})",
                  "high_freq_factor = 1: must be finite and >= low_freq_factor = 4");
  ExpectLoadError("{" + h + R"("max_position_embeddings": 8192, "rope_scaling": {"rope_type": "longrope",
                  "short_factor": [1, 2]}})", "rope_scaling.long_factor: missing");
  ExpectLoadError("{" + h + R"("max_position_embeddings": 8192, "rope_scaling": {"rope_type": "longrope",
                  "short_factor": [1, 2], "long_factor": [1, 2]}})",
                  "rope_scaling.short_factor has 2 values: must have rotary_dim / 2 = 64");
  ExpectLoadError("{" + h + R"("max_position_embeddings": 8192, "rope_scaling": {"rope_type": "longrope",
                  "short_factor": [1, "x"], "long_factor": [1, 2]}})", "rope_scaling.short_factor[1]: expected a number");
  ExpectLoadError(R"({"head_dim": 10, "partial_rotary_factor": 0.3})", "head_dim = 10 with partial_rotary_factor = 0.29999999999999999 gives rotary_dim = int(head_dim * partial_rotary_factor) = 3");
  ExpectLoadError(R"({"head_dim": 10, "partial_rotary_factor": 1.5})", "partial_rotary_factor = 1.5: must be in (0, 1]");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "ntk"}})", "rope_scaling.alpha: missing");
  ExpectLoadError("{" + h + R"("rope_scaling": {"rope_type": "yarn", "factor": 4}})",
                  "missing (required by rope_type yarn)");
  ExpectLoadError("{" + h + R"("max_position_embeddings": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 4,
                  "truncate": 1}})", "rope_scaling.truncate: expected a boolean");
  RopeConfig c;
  const Status st = LoadHfConfig("/nonexistent/config.json", &c);
  EXPECT_NE(st.message().find("cannot open"), std::string::npos);
}

TEST(ConfigLoaderTest, KeyPlacementsAndAliases) {
  // rope_parameters with rope_theta and partial_rotary_factor inside, original at top level.
  const RopeConfig a = Parse(R"({"head_dim": 64, "max_position_embeddings": 8192,
      "original_max_position_embeddings": 2048,
      "rope_parameters": {"rope_type": "linear", "factor": 2, "rope_theta": 20000,
                          "partial_rotary_factor": 0.5}})");
  EXPECT_EQ(a.rope_type, RopeType::kLinear);
  EXPECT_EQ(a.rope_theta, 20000);
  EXPECT_EQ(a.partial_rotary_factor, 0.5);
  EXPECT_EQ(a.original_max_position_embeddings, 2048);
  EXPECT_EQ(a.dict_key, "rope_parameters");
  EXPECT_EQ(Compute(a).rotary_dim, 32);
  // "type" alias and GPT-NeoX names.
  const RopeConfig b = Parse(R"({"hidden_size": 768, "num_attention_heads": 12, "rotary_pct": 0.25,
      "rotary_emb_base": 5000, "rope_scaling": {"type": "linear", "factor": 3}})");
  EXPECT_EQ(b.rope_type, RopeType::kLinear);
  EXPECT_EQ(b.head_dim, 64);
  EXPECT_EQ(b.rope_theta, 5000);
  EXPECT_EQ(Compute(b).rotary_dim, 16);
}

TEST(ConfigLoaderTest, ShippedModelConfigsLoad) {
  struct Expect {
    const char* file;
    RopeType type;
    int64_t rotary_dim;
    int64_t kv_heads;
  };
  const Expect expected[] = {
      {"llama-2-7b.json", RopeType::kDefault, 128, 32},
      {"llama-3.1-8b.json", RopeType::kLlama3, 128, 8},
      {"mistral-7b.json", RopeType::kDefault, 128, 8},
      {"qwen2.5-7b-yarn.json", RopeType::kYarn, 128, 4},
      {"phi-3-mini-128k.json", RopeType::kLongRope, 96, 32},
      {"pythia-160m.json", RopeType::kDefault, 16, 12},
      {"phi-2.json", RopeType::kDefault, 32, 32},
      {"deepseek-v2-lite.json", RopeType::kYarn, 64, 16},
      {"gpt-oss-20b.json", RopeType::kYarn, 64, 8},
  };
  for (const Expect& e : expected) {
    RopeConfig c;
    const Status st = LoadHfConfig(kConfigs + e.file, &c);
    ASSERT_TRUE(st.ok()) << e.file << ": " << st.message();
    EXPECT_EQ(c.rope_type, e.type) << e.file;
    EXPECT_EQ(c.num_key_value_heads, e.kv_heads) << e.file;
    const RopeFrequencies f = Compute(c, 1000);
    EXPECT_EQ(f.rotary_dim, e.rotary_dim) << e.file;
    EXPECT_EQ(static_cast<int64_t>(f.inv_freq.size()), e.rotary_dim / 2) << e.file;
  }
  RopeConfig gpt;
  ASSERT_TRUE(LoadHfConfig(kConfigs + "gpt-oss-20b.json", &gpt).ok());
  EXPECT_FALSE(gpt.truncate);
  RopeConfig ds;
  ASSERT_TRUE(LoadHfConfig(kConfigs + "deepseek-v2-lite.json", &ds).ok());
  EXPECT_EQ(Compute(ds).attention_factor, 1.0);  // mscale == mscale_all_dim
}

TEST(RopeWithConfigTest, DynamicUsesLargestPositionPlusOne) {
  RopeConfig c = Llama2();
  c.head_dim = 16;
  c.max_position_embeddings = 64;
  c.rope_type = RopeType::kDynamic;
  c.factor = 2.0;
  std::vector<float> q(2 * 3 * 16);
  test::FillNormal(q.data(), q.size(), 3);
  const std::vector<int64_t> ids = {5, 6, 100, 0, 1, 2};  // largest 100 -> L = 101
  RopeTensors t;
  std::vector<float> a = q, b = q;
  t.q = TensorBSHD(a.data(), 2, 3, 1, 16);
  RopeParams p;
  p.positions = Positions::Ids(ids.data());
  ASSERT_TRUE(ApplyRope(t, c, p).ok());
  const RopeFrequencies f = Compute(c, 101);
  p.freqs.inv_freq = f.inv_freq.data();
  p.freqs.inv_freq_len = 8;
  t.q.data = b.data();
  ASSERT_TRUE(ApplyRope(t, p).ok());
  EXPECT_EQ(a, b);
  EXPECT_NE(f.inv_freq, Compute(c, 0).inv_freq);
  // Errors: a table source, a conflicting rotary_dim.
  RopeParams bad;
  bad.rotary_dim = 8;
  EXPECT_NE(ApplyRope(t, c, bad).message().find("the config gives rotary_dim = 16"), std::string::npos);
  bad.rotary_dim = 0;
  bad.source = CosSinSource::Table(nullptr);
  bad.source.kind = CosSinSource::Kind::kTable;
  EXPECT_NE(ApplyRope(t, c, bad).message().find("computes cos/sin on the fly"), std::string::npos);
}

}  // namespace
}  // namespace posenc

namespace posenc {
namespace {

// DetPow / DetExp / DetLog: exact where the result is representable, and correctly rounded
// against a long-double evaluation (0.5 ulp plus the long double's own error) elsewhere.
TEST(DetMathTest, ExactCasesAndCorrectRounding) {
  EXPECT_EQ(freqs::DetPow(4.0, 0.5), 2.0);
  EXPECT_EQ(freqs::DetPow(2.0, -3.0), 0.125);
  EXPECT_EQ(freqs::DetPow(10000.0, 0.0), 1.0);
  EXPECT_EQ(freqs::DetExp(0.0), 1.0);
  EXPECT_EQ(freqs::DetLog(1.0), 0.0);
  EXPECT_EQ(freqs::DetPow(10000.0, -0.5), 0.01);  // the double nearest 0.01
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> base(1.0001, 2e6), expo(-1.0, 1.0), x(-50.0, 50.0);
  double worst = 0;
  for (int i = 0; i < 20000; ++i) {
    const double b = base(rng), e = expo(rng), y = x(rng);
    const double ulp_pow = std::nextafter(freqs::DetPow(b, e), INFINITY) - freqs::DetPow(b, e);
    worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(freqs::DetPow(b, e)) -
                                                          std::pow(static_cast<long double>(b), static_cast<long double>(e)))) / ulp_pow);
    const double ulp_exp = std::nextafter(freqs::DetExp(y), INFINITY) - freqs::DetExp(y);
    worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(freqs::DetExp(y)) -
                                                          std::exp(static_cast<long double>(y)))) / ulp_exp);
    const double l = freqs::DetLog(b);
    const double ulp_log = std::nextafter(l, INFINITY) - l;
    worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(l) -
                                                          std::log(static_cast<long double>(b)))) / ulp_log);
  }
  EXPECT_LE(worst, 0.5 + 1.0 / 256) << "not correctly rounded";
  std::printf("DetPow/DetExp/DetLog: worst %.4f ulp against long double\n", worst);
}

// ReRoPE's kLog distance map (lib/core/distance_map.cc) uses its own ln, not libm's.
TEST(DistanceMapTest, DeterministicLogMatchesLibm) {
  // kLog's ln over [1, 2^62): within 3 ulp of libm's (measured 2.0; libm is within ~0.5).
  uint64_t s = 12345;
  double worst = 0.0;
  for (int n = 0; n < 200000; ++n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double x = std::ldexp(1.0 + static_cast<double>(s >> 11) * 0x1p-53, n % 62);
    const double got = kernels::DeterministicLn(x), want = std::log(x);
    if (want != 0.0) {
      worst = std::max(worst, std::fabs(got - want) / std::ldexp(1.0, std::ilogb(want) - 52));
    }
  }
  EXPECT_EQ(kernels::DeterministicLn(1.0), 0.0);
  EXPECT_LE(worst, 3.0);
  std::printf("DeterministicLn: worst %.3f ulp from libm\n", worst);
}

}  // namespace
}  // namespace posenc
