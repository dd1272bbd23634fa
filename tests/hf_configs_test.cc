// Model configs as Hugging Face transformers computes them.
//
// 1. Every real config in ../shared/hf-configs against what transformers 5.24 itself computed
//    from it (.ref.json beside it): at every sequence length and layer type, the same rotary_dim,
//    inv_freq within 1e-12 relative of HF's float64 values, the identical attention factor; and the
//    distance of HF's own float32 values from ours, in float32 ulps (printed; the README quotes it).
// 2. The pair layout and per-layer types of those models, as their HF modeling code applies them
//    (written down by hand from the modeling files named below).
// 3. Every config in tools/configs against tests/data/hf_rope_port.json: the outputs of
//    tools/hf_rope_port.py, a float64 port of the HF functions (it never calls posenc; its own
//    agreement with the shared HF outputs is checked by `tools/hf_rope_port.py --check`).
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

#include "posenc/freqs.h"
#include "tests/json_util.h"
#include "posenc/model.h"
#include "tests/shared_data.h"

namespace posenc {
namespace {

const std::string kSource = POSENC_SOURCE_DIR;

std::vector<std::string> FilesIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The RoPE layer type a reference names: its own name, or "_" for a model with one RoPE.
const RopeConfig* TypeOf(const ModelRope& m, const std::string& name) {
  if (name == "_") {
    EXPECT_TRUE(SingleRope(m));
    return &m.layer_types[0].config;
  }
  const RopeConfig* c = nullptr;
  EXPECT_TRUE(LayerRope(m, name, &c).ok()) << name;
  return c;
}

double F32Ulp(double v) {
  const float f = static_cast<float>(std::fabs(v));
  return static_cast<double>(std::nextafter(f, INFINITY) - f);
}

TEST(HfSharedConfigsTest, EveryReferenceAtEveryLength) {
  POSENC_REQUIRE_SHARED("hf-configs");
  const std::string dir = test::SharedPath("hf-configs") + "/";
  int checked = 0;
  for (const std::string& ref_name : FilesIn(dir, ".ref.json")) {
    const nlohmann::json ref = test::ReadJsonFile(dir + ref_name);
    if (!ref.contains("lengths")) continue;  // the M-RoPE cos/sin file
    const std::string cfg = ref_name.substr(0, ref_name.size() - 9) + ".json";
    ModelRope m;
    const Status st = LoadHfModel(dir + cfg, &m);
    ASSERT_TRUE(st.ok()) << cfg << ": " << st.message();
    double worst_rel = 0, worst_f32_ulp = 0;
    for (const auto& [len, by_prec] : ref["lengths"].items()) {
      const int64_t L = std::stoll(len);
      for (const auto& [type, r64] : by_prec["f64"].items()) {
        const RopeConfig* c = TypeOf(m, type);
        ASSERT_NE(c, nullptr) << cfg << " " << type;
        RopeFrequencies f;
        ASSERT_TRUE(ComputeFrequencies(*c, L, &f).ok()) << cfg;
        const std::vector<double> hf64 = r64["inv_freq"].get<std::vector<double>>();
        const std::vector<double> hf32 = by_prec["f32"][type]["inv_freq"].get<std::vector<double>>();
        ASSERT_EQ(f.rotary_dim, 2 * static_cast<int64_t>(hf64.size())) << cfg << " L=" << L << " " << type;
        for (size_t i = 0; i < hf64.size(); ++i) {
          if (hf64[i] == 0.0) {
            EXPECT_EQ(f.inv_freq[i], 0.0) << cfg << " i=" << i;
            continue;
          }
          const double rel = std::fabs(f.inv_freq[i] - hf64[i]) / hf64[i];
          EXPECT_LE(rel, 1e-12) << cfg << " L=" << L << " " << type << " i=" << i;
          worst_rel = std::max(worst_rel, rel);
          worst_f32_ulp = std::max(worst_f32_ulp, std::fabs(f.inv_freq[i] - hf32[i]) / F32Ulp(hf32[i]));
        }
        // HF computes attention factors in Python floats (math.log / math.sqrt); ours come from
        // correctly rounded DetLog and std::sqrt in the same order: bit-identical.
        EXPECT_EQ(f.attention_factor, r64["attention_factor"].get<double>()) << cfg << " L=" << L << " " << type;
        EXPECT_EQ(f.attention_factor, by_prec["f32"][type]["attention_factor"].get<double>()) << cfg;
        ++checked;
      }
    }
    std::printf("%-40s max rel vs HF f64 %.2e   HF f32 off ours by <= %5.2f f32 ulp\n", cfg.c_str(),
                worst_rel, worst_f32_ulp);
    // HF's float32 evaluation (pow, reciprocal, factor division, blends) stays within 8 ulps of
    // the exact values on every shipped config (measured 6.3 at most).
    EXPECT_LE(worst_f32_ulp, 8.0) << cfg;
  }
  EXPECT_GE(checked, 60);
}

// Pair layouts and layers as each model's HF modeling code applies them.
TEST(HfSharedConfigsTest, PairLayoutsAndLayers) {
  POSENC_REQUIRE_SHARED("hf-configs");
  const std::string dir = test::SharedPath("hf-configs") + "/";
  struct Expect {
    const char* file;
    PairLayout pairs;  // of every RoPE layer type
    std::vector<std::string> types;
    int64_t layers;
    int64_t nope_layers;
  };
  const Expect expected[] = {
      // modeling_chatglm apply_rotary_pos_emb: reshape(..., rot_dim // 2, 2)
      {"chatglm3-6b-32k.json", PairLayout::kInterleaved, {"full_attention"}, 28, 0},
      // DeepseekV3Config.rope_interleave (default true)
      {"deepseek-v3.json", PairLayout::kInterleaved, {"full_attention"}, 61, 0},
      // Gemma3: rotate_half; layer_types 5 sliding : 1 full
      {"gemma-3-270m.json", PairLayout::kHalf, {"sliding_attention", "full_attention"}, 18, 0},
      {"gemma-3-270m.tf5.json", PairLayout::kHalf, {"sliding_attention", "full_attention"}, 18, 0},
      // modeling_gptj rotate_every_two
      {"gpt-j-6b.json", PairLayout::kInterleaved, {"full_attention"}, 28, 0},
      {"llama-3.1-8b-instruct.tf5.json", PairLayout::kHalf, {"full_attention"}, 32, 0},
      // Llama4: view_as_complex; no_rope_layers [] -> every 4th layer NoPE (12 of 48)
      {"llama-4-scout-17b-16e-instruct.json", PairLayout::kInterleaved, {"chunked_attention"}, 48, 12},
      {"phi-3.5-mini-instruct.json", PairLayout::kHalf, {"full_attention"}, 32, 0},
      {"pythia-160m.tf5.json", PairLayout::kHalf, {"full_attention"}, 12, 0},
      {"qwen3-vl-32b-instruct.json", PairLayout::kHalf, {"full_attention"}, 64, 0},
      // SmolLM3: no_rope_layers has 9 zeros
      {"r5-smollm3-no-rope_theta.json", PairLayout::kHalf, {"full_attention"}, 36, 9},
      {"r6-gpt-neox-no-rotary_pct.json", PairLayout::kHalf, {"full_attention"}, 12, 0},
  };
  for (const Expect& e : expected) {
    ModelRope m;
    const Status st = LoadHfModel(dir + e.file, &m);
    ASSERT_TRUE(st.ok()) << e.file << ": " << st.message();
    std::vector<std::string> names;
    for (const RopeLayerType& t : m.layer_types) {
      names.push_back(t.name);
      EXPECT_EQ(t.config.pairs, e.pairs) << e.file;
    }
    EXPECT_EQ(names, e.types) << e.file;
    EXPECT_EQ(static_cast<int64_t>(m.layers.size()), e.layers) << e.file;
    EXPECT_EQ(std::count(m.layers.begin(), m.layers.end(), ModelRope::kNoRope), e.nope_layers) << e.file;
  }
  ModelRope smol;
  ASSERT_TRUE(LoadHfModel(dir + "r5-smollm3-no-rope_theta.json", &smol).ok());
  for (size_t i = 0; i < smol.layers.size(); ++i) {
    EXPECT_EQ(smol.layers[i] == ModelRope::kNoRope, (i + 1) % 4 == 0) << i;  // its list: 1,1,1,0,...
  }
}

TEST(HfSharedConfigsTest, MRopeSpecs) {
  POSENC_REQUIRE_SHARED("hf-configs/mrope_qwen_vl.ref.json");
  const nlohmann::json ref = test::ReadJsonFile(test::SharedPath("hf-configs/mrope_qwen_vl.ref.json"));
  const std::pair<const char*, std::pair<std::vector<int64_t>, bool>> expected[] = {
      {"qwen2.5-vl-7b-instruct", {{16, 24, 24}, false}}, {"qwen3-vl-32b-instruct", {{24, 20, 20}, true}}};
  for (const auto& [name, spec] : expected) {
    RopeConfig c;
    const Status st = ParseHfConfig(ref[name]["config_json"].dump(), &c);
    ASSERT_TRUE(st.ok()) << name << ": " << st.message();
    EXPECT_EQ(c.rope_type, RopeType::kDefault) << name;
    EXPECT_EQ(c.mrope.section, spec.first) << name;
    EXPECT_EQ(c.mrope.interleaved, spec.second) << name;
  }
  RopeConfig typed;  // the older "type": "mrope" form
  ASSERT_TRUE(LoadHfConfig(test::SharedPath("hf-configs/r14-qwen2.5-vl-type-mrope.json"), &typed).ok());
  EXPECT_EQ(typed.mrope.section, (std::vector<int64_t>{16, 24, 24}));
  EXPECT_FALSE(typed.mrope.interleaved);
}

// tools/configs against the float64 port of HF's code (tests/data/hf_rope_port.json).
TEST(RepoConfigsTest, MatchTheHfPort) {
  const nlohmann::json port = test::ReadJsonFile(kSource + "/tests/data/hf_rope_port.json");
  const std::vector<std::string> files = FilesIn(kSource + "/tools/configs", ".json");
  ASSERT_EQ(port["configs"].size(), files.size()) << "regenerate tests/data/hf_rope_port.json";
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    ASSERT_TRUE(port["configs"].contains(file));
    const nlohmann::json& want = port["configs"][file];
    ModelRope m;
    const Status st = LoadHfModel(kSource + "/tools/configs/" + file, &m);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(m.model_type, want["model_type"].get<std::string>());
    EXPECT_EQ(m.layers, want["layers"].get<std::vector<int>>());
    EXPECT_NEAR(m.softmax_scale_factor, want["softmax_scale_factor"].get<double>(), 4e-16 * m.softmax_scale_factor);
    ASSERT_EQ(m.layer_types.size(), want["layer_types"].size());
    for (size_t t = 0; t < m.layer_types.size(); ++t) {
      const RopeLayerType& got = m.layer_types[t];
      const nlohmann::json& w = want["layer_types"][t];
      EXPECT_EQ(got.name, w["name"].get<std::string>());
      EXPECT_STREQ(RopeTypeName(got.config.rope_type), w["rope_type"].get<std::string>().c_str()) << got.name;
      EXPECT_STREQ(PairLayoutName(got.config.pairs), w["pairs"].get<std::string>().c_str()) << got.name;
      EXPECT_EQ(got.config.head_dim, w["head_dim"].get<int64_t>()) << got.name;
      EXPECT_EQ(got.config.mrope.section, w["mrope_section"].get<std::vector<int64_t>>()) << got.name;
      EXPECT_EQ(got.config.mrope.interleaved, w["mrope_interleaved"].get<bool>()) << got.name;
      for (const auto& [len, r] : w["lengths"].items()) {
        RopeFrequencies f;
        ASSERT_TRUE(ComputeFrequencies(got.config, std::stoll(len), &f).ok());
        EXPECT_EQ(f.rotary_dim, w["rotary_dim"].get<int64_t>()) << got.name;
        const std::vector<double> inv = r["inv_freq"].get<std::vector<double>>();
        ASSERT_EQ(f.inv_freq.size(), inv.size()) << got.name << " L=" << len;
        for (size_t i = 0; i < inv.size(); ++i) {
          EXPECT_NEAR(f.inv_freq[i], inv[i], 1e-12 * inv[i]) << got.name << " L=" << len << " i=" << i;
        }
        // The port's math.log against DetLog (correctly rounded): at most an ulp apart.
        const double a = r["attention_factor"].get<double>();
        EXPECT_NEAR(f.attention_factor, a, 4e-16 * a) << got.name << " L=" << len;
      }
    }
  }
}

}  // namespace
}  // namespace posenc
