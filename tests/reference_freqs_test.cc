// The reference's own frequencies (lib/reference/freqs_reference.h, long double from
// docs/math.md section 4) against posenc's (posenc::ComputeFrequencies, lib/freqs) for every rope
// type over a grid of parameters, and against the float64 port of HF's code
// (tests/data/hf_rope_port.json, tools/hf_rope_port.py) for every config in tools/configs.
// Tolerances: posenc within kPosencUlps double ulps of the reference (DetPow and DetLog are
// correctly rounded but for near-ties; the type's few double roundings after them, e.g. YaRN's
// blend, llama3's smoothing, an NTK-rescaled base raised to a power, add a few more: stated
// below, measured maxima printed); the reference against the HF port within the bounds
// hf_configs_test holds posenc to (1e-12 relative for inv_freq, 4e-16 for the attention factor).
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lib/freqs/inv_freq.h"
#include "lib/reference/freqs_reference.h"
#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/reference.h"
#include "posenc/rerope.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace {

constexpr double kPosencUlps = 4.0;
// YaRN and llama3 blend v = base^(-2i/r) and v / s with a weight w in [0, 1]; both sides form w
// in a few roundings, and an error dw moves the frequency by dw |v - v / s|, up to s times more
// than an ulp of the result. So blended frequencies get kPosencUlps ulps plus dw |v - v/s| with
// dw the bound on the weight's absolute error: YaRN with integer (truncated) correction dims and
// llama3's smoothing: three to five roundings of values <= 8: 2^-48; YaRN untruncated, whose
// correction dims (<= r <= 2^8) come from two logs and a division each: 2^-44.
constexpr double kBlendWeightError = 3.552713678800501e-15;           // 2^-48
constexpr double kUntruncatedBlendWeightError = 5.684341886080802e-14;  // 2^-44

// The spacing of doubles at |b| (normal range).
double UlpOfDouble(double b) {
  int e;
  std::frexp(std::max(std::fabs(b), 2.2250738585072014e-308), &e);
  return std::ldexp(1.0, e - 53);
}
// |a - b| in ulps of b (double); both zero: 0.
double UlpDistance(double a, double b) { return a == b ? 0.0 : std::fabs(a - b) / UlpOfDouble(b); }

// Per rope type: the largest distance in ulps, and the largest fraction of its allowance used.
std::map<RopeType, std::pair<double, double>>& MaxUlps() {
  static std::map<RopeType, std::pair<double, double>> m;
  return m;
}

// posenc's frequencies for (c, L) must be accepted and within kPosencUlps of the reference's.
void ExpectAgree(const RopeConfig& c, int64_t seq_len, const std::string& what,
                 double blend_weight_error = 0.0, double s = 1.0) {
  RopeFrequencies mine;
  const Status st = ComputeFrequencies(c, seq_len, &mine);
  ASSERT_TRUE(st.ok()) << what << ": " << st.message();
  const RopeFrequencies ref = reference::FrequenciesOf(c, seq_len);
  ASSERT_EQ(mine.rotary_dim, ref.rotary_dim) << what;
  ASSERT_EQ(mine.inv_freq.size(), ref.inv_freq.size()) << what;
  std::pair<double, double>& worst = MaxUlps()[c.rope_type];
  const std::vector<double> v = reference::InvFreqFromBase(c.rope_theta, ref.rotary_dim);
  for (size_t i = 0; i < ref.inv_freq.size(); ++i) {
    // Only blended frequencies (neither v nor v / s) carry the weight's error.
    const bool blended = blend_weight_error > 0.0 && UlpDistance(ref.inv_freq[i], v[i]) > kPosencUlps &&
                         UlpDistance(ref.inv_freq[i], v[i] / s) > kPosencUlps;
    const double slack = blended ? blend_weight_error * std::fabs(v[i] - v[i] / s) : 0.0;
    const double d = UlpDistance(mine.inv_freq[i], ref.inv_freq[i]);
    const double allowed = kPosencUlps + slack / UlpOfDouble(ref.inv_freq[i]);
    worst.first = std::max(worst.first, d);
    worst.second = std::max(worst.second, d / allowed);
    EXPECT_LE(d, allowed) << what << " L=" << seq_len << " i=" << i << ": posenc "
                              << mine.inv_freq[i] << ", reference " << ref.inv_freq[i];
  }
  const double da = UlpDistance(mine.attention_factor, ref.attention_factor);
  worst.first = std::max(worst.first, da);
  worst.second = std::max(worst.second, da / kPosencUlps);
  EXPECT_LE(da, kPosencUlps) << what << " L=" << seq_len << ": attention factor posenc "
                             << mine.attention_factor << ", reference " << ref.attention_factor;
}

// Prints what each rope type's comparisons used (run at the end of every grid test).
void PrintMaxima() {
  for (const auto& [type, ulps] : MaxUlps()) {
    std::printf("posenc vs reference, %s: max %.3f double ulp, %.3f of the allowance\n",
                RopeTypeName(type), ulps.first, ulps.second);
  }
}

RopeConfig Base(RopeType t, double theta, int64_t head_dim) {
  RopeConfig c;
  c.rope_type = t;
  c.rope_theta = theta;
  c.head_dim = head_dim;
  return c;
}

const double kThetas[] = {10.0, 10000.0, 500000.0, 1000000.0, 5000000.0, 1e8};
const int64_t kDims[] = {4, 6, 10, 32, 64, 96, 128, 256};

TEST(ReferenceFreqsTest, DefaultLinearNtk) {
  for (double theta : kThetas) {
    for (int64_t d : kDims) {
      const std::string at = "theta " + std::to_string(theta) + " dim " + std::to_string(d);
      ExpectAgree(Base(RopeType::kDefault, theta, d), 0, "default " + at);
      RopeConfig partial = Base(RopeType::kDefault, theta, 2 * d);
      partial.partial_rotary_factor = 0.5;
      ExpectAgree(partial, 0, "default partial " + at);
      for (double s : {0.5, 2.0, 4.0, 8.0, 40.0}) {
        RopeConfig c = Base(RopeType::kLinear, theta, d);
        c.factor = s;
        ExpectAgree(c, 0, "linear " + at);
      }
      for (double alpha : {1.5, 2.0, 8.0, 1000.0}) {
        RopeConfig c = Base(RopeType::kNtk, theta, d);
        c.alpha = alpha;
        ExpectAgree(c, 0, "ntk " + at);
      }
    }
  }
  PrintMaxima();
}

TEST(ReferenceFreqsTest, Dynamic) {
  for (double theta : kThetas) {
    for (int64_t d : kDims) {
      for (double s : {2.0, 4.0, 16.0}) {
        for (int64_t m : {2048, 4096}) {
          RopeConfig c = Base(RopeType::kDynamic, theta, d);
          c.factor = s;
          c.max_position_embeddings = m;
          for (int64_t L : {int64_t{0}, m, m + 1, 3 * m + 7, int64_t{10000000}}) {
            ExpectAgree(c, L, "dynamic theta " + std::to_string(theta) + " dim " + std::to_string(d));
          }
        }
      }
    }
  }
  PrintMaxima();
}

TEST(ReferenceFreqsTest, Yarn) {
  for (double theta : kThetas) {
    if (theta < 100.0) continue;  // correction dims of base 10 leave the clamp range
    for (int64_t d : kDims) {
      for (double s : {4.0, 16.0, 32.0, 40.0}) {
        for (int64_t m0 : {2048, 4096, 32768}) {
          for (int variant = 0; variant < 6; ++variant) {
            RopeConfig c = Base(RopeType::kYarn, theta, d);
            c.factor = s;
            c.original_max_position_embeddings = m0;
            c.max_position_embeddings = static_cast<int64_t>(s) * m0;
            if (variant == 1) c.truncate = false;
            if (variant == 2) {
              c.beta_fast = 64.0;
              c.beta_slow = 2.0;
            }
            if (variant == 3) {  // DeepSeek-V3
              c.mscale = 1.0;
              c.mscale_all_dim = 0.707;
            }
            if (variant == 4) c.attention_factor = 0.8;
            if (variant == 5) c.factor.reset();  // factor from max_position_embeddings / M0
            const double dw = c.truncate ? kBlendWeightError : kUntruncatedBlendWeightError;
            ExpectAgree(c, 0, "yarn theta " + std::to_string(theta) + " dim " + std::to_string(d) +
                                  " s " + std::to_string(s) + " variant " + std::to_string(variant),
                        dw, s);
          }
        }
      }
    }
  }
  PrintMaxima();
}

TEST(ReferenceFreqsTest, Llama3) {
  for (double theta : kThetas) {
    for (int64_t d : kDims) {
      for (double s : {8.0, 32.0}) {
        for (auto [low, high] : {std::pair<double, double>{1.0, 4.0}, {1.0, 1.0}, {2.0, 8.0}}) {
          for (int64_t m0 : {8192, 4096}) {
            RopeConfig c = Base(RopeType::kLlama3, theta, d);
            c.factor = s;
            c.low_freq_factor = low;
            c.high_freq_factor = high;
            c.original_max_position_embeddings = m0;
            ExpectAgree(c, 0, "llama3 theta " + std::to_string(theta) + " dim " + std::to_string(d),
                        kBlendWeightError, s);
          }
        }
      }
    }
  }
  PrintMaxima();
}

TEST(ReferenceFreqsTest, LongRope) {
  for (double theta : kThetas) {
    for (int64_t d : kDims) {
      RopeConfig c = Base(RopeType::kLongRope, theta, d);
      c.original_max_position_embeddings = 4096;
      c.max_position_embeddings = 131072;
      std::vector<double> shorts, longs;
      for (int64_t i = 0; i < d / 2; ++i) {
        shorts.push_back(1.0 + 0.03 * static_cast<double>(i % 7));
        longs.push_back(1.0 + 1.7 * static_cast<double>(i) + 0.125 * static_cast<double>(i % 3));
      }
      c.short_factor = shorts;
      c.long_factor = longs;
      for (int variant = 0; variant < 3; ++variant) {
        if (variant == 1) c.factor = 32.0;
        if (variant == 2) c.attention_factor = 1.19;
        for (int64_t L : {0, 4096, 4097, 131072}) {
          ExpectAgree(c, L, "longrope theta " + std::to_string(theta) + " dim " + std::to_string(d) +
                                " variant " + std::to_string(variant));
        }
      }
    }
  }
  PrintMaxima();
}

TEST(ReferenceFreqsTest, Proportional) {
  for (double theta : kThetas) {
    for (int64_t d : {64, 128, 256, 512}) {
      for (double prf : {0.25, 0.5, 1.0}) {
        for (int variant = 0; variant < 2; ++variant) {
          RopeConfig c = Base(RopeType::kProportional, theta, d);
          c.partial_rotary_factor = prf;
          if (variant == 1) c.factor = 8.0;
          ExpectAgree(c, 0, "proportional theta " + std::to_string(theta) + " dim " + std::to_string(d));
        }
      }
    }
  }
  PrintMaxima();
}

// The reference's InvFreqFromBase is what reference::ApplyRope uses for freqs.base: the angle of
// pair i at position p is p * InvFreqFromBase(base, r)[i] (checked through ApplyRopeF64 on one
// pair per frequency).
TEST(ReferenceFreqsTest, ApplyRopeUsesTheReferenceFrequencies) {
  const int64_t r = 64;
  const double base = 1e6;
  const std::vector<double> inv = reference::InvFreqFromBase(base, r);
  std::vector<float> q(static_cast<size_t>(r), 0.0f);
  for (int64_t i = 0; i < r / 2; ++i) q[static_cast<size_t>(i)] = 1.0f;  // x = 1, y = 0
  const int64_t pos = 123457;
  RopeTensors t;
  t.q = TensorBSHD(q.data(), DType::kF32, 1, 1, 1, r);
  RopeParams p;
  p.freqs.base = base;
  p.positions = Positions::Offset(pos);
  std::vector<double> out(static_cast<size_t>(r));
  ASSERT_TRUE(reference::ApplyRopeF64(t, p, out.data(), nullptr).ok());
  for (int64_t i = 0; i < r / 2; ++i) {
    const double theta = static_cast<double>(pos) * inv[static_cast<size_t>(i)];
    EXPECT_EQ(out[static_cast<size_t>(i)], std::cos(theta)) << i;
    EXPECT_EQ(out[static_cast<size_t>(i + r / 2)], std::sin(theta)) << i;
  }
}

// The reference's sinusoidal frequencies (SinusoidalFreqs, long double) against posenc's
// (lib/freqs, DetPow / DetLog / DetExp in double): both spacings, small and large d_model, the
// usual base and others; within kPosencUlps.
TEST(ReferenceFreqsTest, SinusoidalFreqsMatchPosenc) {
  double worst = 0.0;
  for (FrequencySpacing spacing : {FrequencySpacing::kPaper, FrequencySpacing::kTensor2Tensor})
    for (double base : {10000.0, 2.0, 500.0, 1e6, 12345.678})
      for (int64_t d : {2, 4, 6, 66, 512, 4096}) {
        const std::vector<double> ref = reference::SinusoidalFreqs(base, d, spacing);
        const freqs::SharedFreqs mine =
            freqs::CachedSinusoidalFreqs(base, d, static_cast<int>(spacing));
        ASSERT_EQ(ref.size(), mine->size());
        ASSERT_EQ(ref.size(), static_cast<size_t>(d / 2));
        for (size_t i = 0; i < ref.size(); ++i) {
          const double u = UlpDistance((*mine)[i], ref[i]);
          worst = std::max(worst, u);
          EXPECT_LE(u, kPosencUlps) << FrequencySpacingName(spacing) << " base " << base << " d "
                                    << d << " i " << i << ": posenc " << (*mine)[i] << ", reference "
                                    << ref[i];
        }
      }
  std::printf("sinusoidal frequencies: posenc within %.2f ulps of the reference\n", worst);
}

// reference::WriteSinusoidalF64 computes sin / cos of p * SinusoidalFreqs(base, d)[i] (interleaved:
// sin at 2i, cos at 2i + 1), both spacings.
TEST(ReferenceFreqsTest, SinusoidalUsesTheReferenceFrequencies) {
  const int64_t d = 64, pos = 98765;
  const double base = 1e5;
  for (FrequencySpacing spacing : {FrequencySpacing::kPaper, FrequencySpacing::kTensor2Tensor}) {
    const std::vector<double> w = reference::SinusoidalFreqs(base, d, spacing);
    std::vector<float> shape(static_cast<size_t>(d));
    SinusoidalParams p;
    p.spacing = spacing;
    p.base = base;
    p.positions = Positions::Offset(pos);
    std::vector<double> out(static_cast<size_t>(d));
    ASSERT_TRUE(reference::WriteSinusoidalF64(p, EmbeddingBSD(shape.data(), 1, 1, d), out.data()).ok());
    for (int64_t i = 0; i < d / 2; ++i) {
      const double theta = static_cast<double>(pos) * w[static_cast<size_t>(i)];
      EXPECT_EQ(out[static_cast<size_t>(2 * i)], std::sin(theta)) << FrequencySpacingName(spacing) << i;
      EXPECT_EQ(out[static_cast<size_t>(2 * i + 1)], std::cos(theta)) << FrequencySpacingName(spacing) << i;
    }
  }
}

// reference::RelativeRopeScoresF64 rotates by d * InvFreqFromBase(base, r)[t] for freqs.base: with
// q = k = the unit x of pair t, the score is cos(d * inv[t]) exactly.
TEST(ReferenceFreqsTest, RelativeRopeUsesTheReferenceFrequencies) {
  const int64_t r = 64, distance = 123457;
  const double base = 1e6;
  const std::vector<double> inv = reference::InvFreqFromBase(base, r);
  for (int64_t t = 0; t < r / 2; ++t) {
    std::vector<float> q(static_cast<size_t>(r), 0.0f), k(static_cast<size_t>(r), 0.0f), s(1);
    q[static_cast<size_t>(t)] = 1.0f;
    k[static_cast<size_t>(t)] = 1.0f;
    RelativeRopeTensors tensors;
    tensors.q = TensorBSHD(q.data(), DType::kF32, 1, 1, 1, r);
    tensors.k = TensorBSHD(k.data(), DType::kF32, 1, 1, 1, r);
    tensors.scores = TensorBSHD(s.data(), DType::kF32, 1, 1, 1, 1);
    RelativeRopeParams p;
    p.freqs.base = base;
    p.q_positions = Positions::Offset(distance);
    p.k_positions = Positions::Offset(0);
    double score = 0.0;
    ASSERT_TRUE(reference::RelativeRopeScoresF64(tensors, p, &score, nullptr).ok());
    EXPECT_EQ(score, std::cos(static_cast<double>(distance) * inv[static_cast<size_t>(t)])) << t;
  }
}

// Every config in tools/configs: the reference's frequencies against the float64 HF port.
TEST(ReferenceFreqsTest, MatchTheHfPort) {
  const std::string source = POSENC_SOURCE_DIR;
  std::ifstream file(source + "/tests/data/hf_rope_port.json");
  ASSERT_TRUE(file.good());
  const nlohmann::json port = nlohmann::json::parse(file);
  size_t checked = 0;
  double worst = 0.0;
  for (const auto& [name, want] : port["configs"].items()) {
    SCOPED_TRACE(name);
    ModelRope m;
    const Status st = LoadHfModel(source + "/tools/configs/" + name, &m);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(m.layer_types.size(), want["layer_types"].size());
    for (size_t t = 0; t < m.layer_types.size(); ++t) {
      const RopeConfig& c = m.layer_types[t].config;
      const nlohmann::json& w = want["layer_types"][t];
      for (const auto& [len, r] : w["lengths"].items()) {
        const RopeFrequencies f = reference::FrequenciesOf(c, std::stoll(len));
        EXPECT_EQ(f.rotary_dim, w["rotary_dim"].get<int64_t>());
        const std::vector<double> inv = r["inv_freq"].get<std::vector<double>>();
        ASSERT_EQ(f.inv_freq.size(), inv.size()) << " L=" << len;
        for (size_t i = 0; i < inv.size(); ++i) {
          EXPECT_NEAR(f.inv_freq[i], inv[i], 1e-12 * inv[i]) << " L=" << len << " i=" << i;
          if (inv[i] != 0.0) worst = std::max(worst, std::fabs(f.inv_freq[i] - inv[i]) / inv[i]);
          ++checked;
        }
        const double a = r["attention_factor"].get<double>();
        EXPECT_NEAR(f.attention_factor, a, 4e-16 * a) << " L=" << len;
      }
    }
  }
  EXPECT_GT(checked, 1000u);
  std::printf("reference vs HF port: %zu frequencies, largest relative difference %.3g\n", checked,
              worst);
}

}  // namespace
}  // namespace posenc
