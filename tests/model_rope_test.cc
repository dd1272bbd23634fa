// The loaded model description (posenc/model.h) and the config rules of issue 11, each shown on
// the smallest config that exhibits it, with expected values written down by hand from HF's code
// (the function named in each test); the hostile-config rules of issue 13; RopeConfig equality.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lib/freqs/det_math.h"
#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "tests/rope_test_util.h"

namespace posenc {
namespace {

const std::string kConfigs = std::string(POSENC_SOURCE_DIR) + "/tools/configs/";

ModelRope Model(const std::string& text) {
  ModelRope m;
  const Status st = ParseHfModel(text, &m);
  EXPECT_TRUE(st.ok()) << st.message() << "\n" << text;
  return m;
}

RopeConfig Config(const std::string& text) {
  RopeConfig c;
  const Status st = ParseHfConfig(text, &c);
  EXPECT_TRUE(st.ok()) << st.message() << "\n" << text;
  return c;
}

RopeFrequencies Freqs(const RopeConfig& c, int64_t seq_len = 0) {
  RopeFrequencies f;
  const Status st = ComputeFrequencies(c, seq_len, &f);
  EXPECT_TRUE(st.ok()) << st.message();
  return f;
}

const RopeConfig& TypeConfig(const ModelRope& m, const std::string& name) {
  const RopeConfig* c = nullptr;
  const Status st = LayerRope(m, name, &c);
  EXPECT_TRUE(st.ok()) << st.message();
  static const RopeConfig kNone;
  return c != nullptr ? *c : kNone;
}

std::string ParseError(const std::string& text) {
  ModelRope m;
  const Status st = ParseHfModel(text, &m);
  EXPECT_FALSE(st.ok()) << text;
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  return st.message();
}

void ExpectContains(const std::string& message, const std::string& needle) {
  EXPECT_NE(message.find(needle), std::string::npos) << "\"" << message << "\" lacks \"" << needle << "\"";
}

// ---- Issue 11, defect 1: the decoder's fields under text_config (PreTrainedConfig.get_text_config).
TEST(HfRulesTest, TextConfigNesting) {
  const RopeConfig c = Config(R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text",
      "head_dim": 128, "num_attention_heads": 40, "num_key_value_heads": 8, "rope_theta": 500000.0}})");
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.rope_theta, 500000.0);
}

// Defect 2: transformers-5 rope_parameters per layer type ("Case 2" of standardize_rope_params).
TEST(HfRulesTest, PerLayerTypeRopeParameters) {
  const std::string text = R"({"model_type": "gemma3_text", "head_dim": 8, "num_hidden_layers": 3,
      "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
      "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                          "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}}})";
  const ModelRope m = Model(text);
  ASSERT_EQ(m.layer_types.size(), 2u);
  EXPECT_EQ(m.layers, (std::vector<int>{0, 0, 1}));
  const RopeConfig& full = TypeConfig(m, "full_attention");
  EXPECT_EQ(full.rope_type, RopeType::kLinear);
  EXPECT_EQ(full.rope_theta, 1e6);
  EXPECT_EQ(Freqs(full).inv_freq[1], freqs::DetPow(1e6, -2.0 / 8) / 8.0);
  EXPECT_EQ(TypeConfig(m, "sliding_attention").rope_theta, 1e4);
  EXPECT_EQ(full.dict_key, "rope_parameters.full_attention");
  // The single-config API refuses it on one line, naming the types and the model API.
  RopeConfig c;
  const Status st = ParseHfConfig(text, &c);
  ASSERT_FALSE(st.ok());
  ExpectContains(st.message(), "sliding_attention, full_attention");
  ExpectContains(st.message(), "LoadHfModel");
  EXPECT_EQ(st.message().find('\n'), std::string::npos);
}

// Defect 3: Gemma 3's older format (Gemma3TextConfig.convert_rope_params_to_dict): sliding layers
// default RoPE at rope_local_base_freq (default 1e4); rope_scaling only on full attention.
TEST(HfRulesTest, Gemma3LocalAndGlobalBases) {
  const std::string layers = R"("model_type": "gemma3_text", "head_dim": 16, "num_hidden_layers": 12,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0})";
  ModelRope m = Model("{" + layers + "}");
  ASSERT_EQ(m.layers.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(m.layer_types[m.layers[i]].name, (i + 1) % 6 ? "sliding_attention" : "full_attention");
  EXPECT_EQ(TypeConfig(m, "sliding_attention").rope_theta, 1e4);
  EXPECT_EQ(TypeConfig(m, "sliding_attention").rope_type, RopeType::kDefault);
  EXPECT_EQ(TypeConfig(m, "full_attention").rope_theta, 1e6);
  EXPECT_EQ(TypeConfig(m, "full_attention").rope_type, RopeType::kLinear);
  m = Model("{" + layers + R"(, "rope_local_base_freq": 20000, "rope_theta": 2e6, "sliding_window_pattern": 3})");
  EXPECT_EQ(TypeConfig(m, "sliding_attention").rope_theta, 20000.0);
  EXPECT_EQ(TypeConfig(m, "full_attention").rope_theta, 2e6);
  EXPECT_EQ(m.layers[2], 1);  // every 3rd layer full
}

// Defect 4: ChatGLM remote code: RotaryEmbedding(kv_channels // 2), base 10000 * rope_ratio,
// pairs (x[2i], x[2i+1]).
TEST(HfRulesTest, ChatGlm) {
  const RopeConfig c = Config(R"({"model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32,
      "kv_channels": 128, "rope_ratio": 50, "num_layers": 28, "seq_length": 32768,
      "multi_query_attention": true, "multi_query_group_num": 2})");
  const RopeFrequencies f = Freqs(c);
  EXPECT_EQ(f.head_dim, 128);
  EXPECT_EQ(f.rotary_dim, 64);
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.pairs, PairLayout::kInterleaved);
  EXPECT_EQ(c.num_key_value_heads, 2);
  EXPECT_EQ(c.max_position_embeddings, 32768);
  EXPECT_NEAR(f.inv_freq[1], std::pow(500000.0, -2.0 / 64), 1e-16);
}

// Defect 5: GPT-J's keys (GPTJConfig.attribute_map), rotary_dim, base 10000 fixed in
// modeling_gptj.create_sinusoidal_positions, rotate_every_two.
TEST(HfRulesTest, GptJ) {
  const RopeConfig c = Config(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 28,
      "n_positions": 2048, "rotary_dim": 64, "rope_theta": 123.0})");
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(Freqs(c).rotary_dim, 64);
  EXPECT_EQ(c.rope_theta, 10000.0);  // HF ignores a rope_theta in a GPT-J config
  EXPECT_EQ(c.pairs, PairLayout::kInterleaved);
  EXPECT_EQ(c.max_position_embeddings, 2048);
}

// Defect 6: _compute_longrope_parameters uses an explicit factor first, M / M0 only without it.
TEST(HfRulesTest, LongRopeExplicitFactor) {
  const std::string lists = R"("short_factor": [1, 1, 1, 1], "long_factor": [2, 2, 2, 2])";
  RopeConfig c = Config(R"({"head_dim": 8, "max_position_embeddings": 32768,
      "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope", "factor": 32.0, )" + lists + "}}");
  EXPECT_EQ(Freqs(c).attention_factor, std::sqrt(1 + freqs::DetLog(32.0) / freqs::DetLog(4096.0)));
  c = Config(R"({"head_dim": 8, "max_position_embeddings": 32768,
      "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope", )" + lists + "}}");
  EXPECT_EQ(Freqs(c).attention_factor, std::sqrt(1 + freqs::DetLog(8.0) / freqs::DetLog(4096.0)));
}

// Defect 7: standardize_rope_params lets a top-level original_max_position_embeddings win over the
// rope dict's for llama3, yarn and longrope.
TEST(HfRulesTest, TopLevelOriginalLengthWins) {
  const RopeConfig top = Config(R"({"head_dim": 128, "max_position_embeddings": 32768,
      "original_max_position_embeddings": 16384,
      "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})");
  EXPECT_EQ(top.original_max_position_embeddings, 16384);
  const RopeConfig inner = Config(R"({"head_dim": 128, "max_position_embeddings": 32768,
      "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16384}})");
  EXPECT_EQ(Freqs(top).inv_freq, Freqs(inner).inv_freq);
  // Without an original length anywhere, llama3 / yarn / longrope take max_position_embeddings.
  const RopeConfig none = Config(R"({"head_dim": 128, "max_position_embeddings": 8192,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}})");
  EXPECT_EQ(none.original_max_position_embeddings, 8192);
}

// Defect 8: without rope_theta, the model class's default (configuration_*.py).
TEST(HfRulesTest, RopeThetaDefaultsByModelType) {
  const std::pair<const char*, double> expected[] = {
      {"smollm3", 2e6}, {"olmo3", 5e5}, {"llama4_text", 5e5}, {"qwen2_5_vl", 1e6}, {"qwen2_vl", 1e6},
      {"gpt_oss", 1.5e5}, {"mixtral", 1e6}, {"llama", 1e4}, {"some_new_model", 1e4}};
  for (const auto& [type, theta] : expected) {
    const ModelRope m = Model(std::string(R"({"head_dim": 64, "num_hidden_layers": 4, "model_type": ")") + type +
                              R"(", "no_rope_layers": [1, 1, 1, 1]})");
    EXPECT_EQ(m.layer_types.back().config.rope_theta, theta) << type;
  }
  const ModelRope g = Model(R"({"model_type": "gemma3_text", "head_dim": 64, "num_hidden_layers": 6})");
  EXPECT_EQ(TypeConfig(g, "full_attention").rope_theta, 1e6);
  EXPECT_EQ(TypeConfig(g, "sliding_attention").rope_theta, 1e4);
  // OLMo 3 sliding layers keep default_theta even when rope_theta is given: Olmo3Config pops
  // rope_theta for full_attention first (reproduced as HF computes it).
  const ModelRope o = Model(R"({"model_type": "olmo3", "head_dim": 64, "num_hidden_layers": 4, "rope_theta": 1e6})");
  EXPECT_EQ(TypeConfig(o, "full_attention").rope_theta, 1e6);
  EXPECT_EQ(TypeConfig(o, "sliding_attention").rope_theta, 5e5);
}

// Defect 9: GPTNeoXConfig.convert_rope_params_to_dict: rotary_pct defaults to 0.25.
TEST(HfRulesTest, GptNeoxRotaryPctDefault) {
  const RopeConfig c = Config(R"({"model_type": "gpt_neox", "hidden_size": 768, "num_attention_heads": 12})");
  EXPECT_EQ(Freqs(c).rotary_dim, 16);
  const RopeConfig plain = Config(R"({"hidden_size": 768, "num_attention_heads": 12})");
  EXPECT_EQ(Freqs(plain).rotary_dim, 64);
}

// Defect 10: "type": "mrope" is default RoPE plus mrope_section (Qwen2_5_VLTextConfig).
TEST(HfRulesTest, MRopeType) {
  const RopeConfig c = Config(R"({"model_type": "qwen2_5_vl", "hidden_size": 3584, "num_attention_heads": 28,
      "rope_theta": 1000000.0, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})");
  EXPECT_EQ(c.rope_type, RopeType::kDefault);
  EXPECT_EQ(c.mrope.section, (std::vector<int64_t>{16, 24, 24}));
  EXPECT_FALSE(c.mrope.interleaved);
  ExpectContains(ParseError(R"({"head_dim": 128, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 16]}})"),
                 "rope_scaling.mrope_section sums to 56: must be rotary_dim / 2 = 64");
  ExpectContains(ParseError(R"({"head_dim": 128, "rope_scaling": {"type": "mrope"}})"),
                 "rope_scaling.mrope_section: missing");
  ExpectContains(ParseError(R"({"head_dim": 128, "rope_scaling": {"mrope_section": [64], "mrope_interleaved": true}})"),
                 "mrope_section has 1 values: must have 3");
}

// Defect 11: the config's pair layout, used by ApplyRope(config) unless the caller overrides it.
TEST(HfRulesTest, PairLayoutFollowsTheConfig) {
  const RopeConfig gptj = Config(R"({"model_type": "gptj", "n_embd": 64, "n_head": 4, "rotary_dim": 8})");
  ASSERT_EQ(gptj.pairs, PairLayout::kInterleaved);
  std::vector<float> q(3 * 4 * 16);
  test::FillNormal(q.data(), q.size(), 11);
  auto rotate = [&](const RopeConfig* config, PairLayout pairs) {
    std::vector<float> out = q;
    RopeTensors t;
    t.q = TensorBSHD(out.data(), 1, 3, 4, 16);
    RopeParams p;
    p.pairs = pairs;
    p.positions = Positions::Offset(5);
    if (config == nullptr) {
      p.rotary_dim = 8;
      EXPECT_TRUE(ApplyRope(t, p).ok());
    } else {
      EXPECT_TRUE(ApplyRope(t, *config, p).ok());
    }
    return out;
  };
  const std::vector<float> from_config = rotate(&gptj, PairLayout::kFromConfig);
  EXPECT_EQ(from_config, rotate(nullptr, PairLayout::kInterleaved));
  EXPECT_NE(from_config, rotate(nullptr, PairLayout::kHalf));
  EXPECT_EQ(rotate(&gptj, PairLayout::kHalf), rotate(nullptr, PairLayout::kHalf));  // explicit override
  EXPECT_EQ(rotate(nullptr, PairLayout::kFromConfig), rotate(nullptr, PairLayout::kHalf));  // no config: half
  EXPECT_STREQ(PairLayoutName(PairLayout::kFromConfig), "from_config");
  // Families (their modeling code): interleaved or half.
  const std::pair<const char*, PairLayout> families[] = {
      {"glm4", PairLayout::kInterleaved}, {"glm", PairLayout::kInterleaved}, {"cohere", PairLayout::kInterleaved},
      {"deepseek_v2", PairLayout::kInterleaved}, {"deepseek_v3", PairLayout::kInterleaved},
      {"kimi_k2", PairLayout::kInterleaved}, {"llama4_text", PairLayout::kInterleaved},
      {"llama", PairLayout::kHalf}, {"qwen2", PairLayout::kHalf}, {"gemma2", PairLayout::kHalf},
      {"phi3", PairLayout::kHalf}, {"gpt_neox", PairLayout::kHalf}, {"gpt_oss", PairLayout::kHalf}};
  for (const auto& [type, pairs] : families) {
    const ModelRope m = Model(std::string(R"({"head_dim": 64, "qk_rope_head_dim": 64, "model_type": ")") + type + "\"}");
    EXPECT_EQ(m.layer_types[0].config.pairs, pairs) << type;
  }
  EXPECT_EQ(Model(R"({"model_type": "deepseek_v3", "rope_interleave": false})").layer_types[0].config.pairs,
            PairLayout::kHalf);
}

// Defect 12: layers without RoPE (Llama4TextConfig / SmolLM3Config no_rope_layers, Cohere2).
TEST(HfRulesTest, NoRopeLayers) {
  ModelRope m = Model(R"({"model_type": "llama4_text", "head_dim": 16, "num_hidden_layers": 8, "no_rope_layers": []})");
  EXPECT_EQ(m.layers, (std::vector<int>{0, 0, 0, -1, 0, 0, 0, -1}));
  EXPECT_EQ(m.layer_types[0].name, "chunked_attention");
  m = Model(R"({"model_type": "smollm3", "head_dim": 16, "num_hidden_layers": 4, "no_rope_layers": [1, 0, 1, 1]})");
  EXPECT_EQ(m.layers, (std::vector<int>{0, -1, 0, 0}));
  m = Model(R"({"model_type": "smollm3", "head_dim": 16, "num_hidden_layers": 6, "no_rope_layer_interval": 3})");
  EXPECT_EQ(m.layers, (std::vector<int>{0, 0, -1, 0, 0, -1}));
  m = Model(R"({"model_type": "cohere2", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 8})");
  EXPECT_EQ(m.layers, (std::vector<int>{0, 0, 0, -1, 0, 0, 0, -1}));
  ASSERT_EQ(m.layer_types.size(), 1u);
  EXPECT_EQ(m.layer_types[0].name, "sliding_attention");
  const RopeConfig* c = nullptr;
  ExpectContains(LayerRope(m, 3, &c).message(), "layer = 3: has no RoPE");
  ExpectContains(LayerRope(m, 8, &c).message(), "layer = 8: must be in [0, 8)");
  EXPECT_TRUE(LayerRope(m, 4, &c).ok());
  std::vector<float> q(64, 1.0f), before = q;
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, 1, 1, 64);
  ExpectContains(ApplyRope(t, m, int64_t{3}, RopeParams()).message(), "has no RoPE");
  EXPECT_EQ(q, before);
  ExpectContains(ParseError(R"({"model_type": "smollm3", "head_dim": 16, "num_hidden_layers": 4, "no_rope_layers": [1]})"),
                 "no_rope_layers has 1 entries: needs one per layer (4)");
}

// Defect 13: DeepseekV3Attention scales the softmax by mscale(factor, mscale_all_dim)^2.
TEST(HfRulesTest, DeepSeekSoftmaxScale) {
  ModelRope m;
  ASSERT_TRUE(LoadHfModel(kConfigs + "deepseek-v3.json", &m).ok());
  const double ms = 0.1 * 1.0 * std::log(40.0) + 1.0;
  EXPECT_NEAR(m.softmax_scale_factor, ms * ms, 1e-15);
  EXPECT_NEAR(m.softmax_scale_factor, 1.8738542, 1e-7);
  EXPECT_EQ(Freqs(m.layer_types[0].config).attention_factor, 1.0);  // mscale == mscale_all_dim
  ASSERT_TRUE(LoadHfModel(kConfigs + "llama-3.1-8b.json", &m).ok());
  EXPECT_EQ(m.softmax_scale_factor, 1.0);
}

// Defect 14: dynamic NTK, stateless per call (ApplyRope's default) or HF's stateful rule
// (dynamic_rope_update.dynamic_frequency_update) through HfDynamicLength and RopeParams::seq_len.
TEST(HfRulesTest, DynamicNtkStatefulness) {
  RopeConfig c;
  c.head_dim = 16;
  c.rope_type = RopeType::kDynamic;
  c.factor = 2.0;
  c.max_position_embeddings = 64;
  // HF's cached length: starts at M, grows with L, resets once L < M.
  int64_t cached = 0;
  const std::pair<int64_t, int64_t> steps[] = {{10, 64}, {100, 100}, {80, 100}, {64, 100}, {63, 64}, {70, 70}};
  for (const auto& [L, want] : steps) {
    cached = HfDynamicLength(c, cached, L);
    EXPECT_EQ(cached, want) << "L=" << L;
  }
  RopeConfig linear = c;
  linear.rope_type = RopeType::kLinear;
  EXPECT_EQ(HfDynamicLength(linear, 100, 10), 10);
  // A call with positions 0..79 after a call of length 100: stateless uses L = 80, HF's rule 100.
  std::vector<float> q(80 * 16);
  test::FillNormal(q.data(), q.size(), 3);
  auto rotate = [&](int64_t seq_len_param, const RopeFrequencies* f) {
    std::vector<float> out = q;
    RopeTensors t;
    t.q = TensorBSHD(out.data(), 1, 80, 1, 16);
    RopeParams p;
    if (f == nullptr) {
      p.seq_len = seq_len_param;
      EXPECT_TRUE(ApplyRope(t, c, p).ok());
    } else {
      p.freqs.inv_freq = f->inv_freq.data();
      p.freqs.inv_freq_len = 8;
      EXPECT_TRUE(ApplyRope(t, p).ok());
    }
    return out;
  };
  const RopeFrequencies at80 = Freqs(c, 80), at100 = Freqs(c, 100);
  EXPECT_EQ(rotate(0, nullptr), rotate(0, &at80));
  EXPECT_EQ(rotate(HfDynamicLength(c, 100, 80), nullptr), rotate(0, &at100));
  EXPECT_NE(at80.inv_freq, at100.inv_freq);
  RopeParams bad;
  bad.seq_len = -1;
  std::vector<float> x(16);
  RopeTensors t;
  t.q = TensorBSHD(x.data(), 1, 1, 1, 16);
  ExpectContains(ApplyRope(t, c, bad).message(), "seq_len = -1");
}

// Issue 12: Gemma 4's proportional RoPE (_compute_proportional_rope_parameters): exponent over the
// full head, pairs from int(partial_rotary_factor * head_dim // 2) on get frequency 0.
TEST(ProportionalRopeTest, Gemma4) {
  ModelRope m;
  ASSERT_TRUE(LoadHfModel(kConfigs + "gemma-4-31b-it.json", &m).ok());
  const RopeConfig& full = TypeConfig(m, "full_attention");
  EXPECT_EQ(full.rope_type, RopeType::kProportional);
  EXPECT_EQ(full.head_dim, 512);  // global_head_dim
  const RopeFrequencies f = Freqs(full);
  ASSERT_EQ(f.rotary_dim, 512);
  ASSERT_EQ(f.inv_freq.size(), 256u);
  for (int i = 0; i < 64; ++i) EXPECT_NEAR(f.inv_freq[i], std::pow(1e6, -2.0 * i / 512), 1e-16) << i;
  for (int i = 64; i < 256; ++i) EXPECT_EQ(f.inv_freq[i], 0.0) << i;
  EXPECT_EQ(TypeConfig(m, "sliding_attention").head_dim, 256);
  EXPECT_EQ(Freqs(TypeConfig(m, "sliding_attention")).rotary_dim, 256);
  // Rotating with it: pairs (i, i + 256) for i >= 64 pass through unchanged.
  std::vector<float> q(2 * 512);
  test::FillNormal(q.data(), q.size(), 7);
  std::vector<float> out = q;
  RopeTensors t;
  t.q = TensorBSHD(out.data(), 1, 2, 1, 512);
  RopeParams p;
  p.positions = Positions::Offset(1000);
  ASSERT_TRUE(ApplyRope(t, m, "full_attention", p).ok());
  for (int s = 0; s < 2; ++s) {
    for (int j = 0; j < 512; ++j) {
      if (j % 256 >= 64) {
        EXPECT_EQ(out[s * 512 + j], q[s * 512 + j]) << j;
      }
    }
    EXPECT_NE(out[s * 512 + 1], q[s * 512 + 1]);
  }
  // A factor divides the rotated frequencies; partial 0.3 of 10: int(3.0 // 2) = 1 rotated pair.
  RopeConfig c;
  c.rope_type = RopeType::kProportional;
  c.head_dim = 10;
  c.partial_rotary_factor = 0.3;
  c.factor = 4.0;
  const RopeFrequencies g = Freqs(c);
  EXPECT_EQ(g.inv_freq, (std::vector<double>{0.25, 0, 0, 0, 0}));
}

// ---- Issue 13, item 6: config values that were undefined behaviour (casts of NaN / 1e300 / 2^63).
TEST(HostileConfigTest, NoUndefinedConversions) {
  ExpectContains(ParseError(R"({"head_dim": 1e300})"), "head_dim: expected an integer below 2^63");
  ExpectContains(ParseError(R"({"head_dim": 9223372036854775808})"), "head_dim: expected an integer below 2^63");
  ExpectContains(ParseError(R"({"head_dim": 64, "max_position_embeddings": -1e19})"), "max_position_embeddings: expected an integer");
  ExpectContains(ParseError(R"({"head_dim": 64, "rope_scaling": {"rope_type": "ntk", "alpha": 1e308}})"),
                 "give the rescaled base inf");
  RopeConfig c;
  c.head_dim = 64;
  c.rope_type = RopeType::kDynamic;
  c.rope_theta = 1e308;
  c.factor = 2.0;
  c.max_position_embeddings = 4096;
  RopeFrequencies f;
  ExpectContains(ComputeFrequencies(c, 8192, &f).message(), "rescaled base inf at seq_len 8192");
  EXPECT_TRUE(ComputeFrequencies(c, 4096, &f).ok());
  // The deterministic exp / pow are defined for every input.
  EXPECT_TRUE(std::isnan(freqs::DetExp(std::nan(""))));
  EXPECT_EQ(freqs::DetExp(1e308), HUGE_VAL);
  EXPECT_EQ(freqs::DetExp(-1e308), 0.0);
  EXPECT_EQ(freqs::DetPow(2.0, 1e308), HUGE_VAL);
  EXPECT_EQ(freqs::DetPow(1e308, -1e308), 0.0);
  EXPECT_EQ(freqs::DetPow(HUGE_VAL, 0.5), HUGE_VAL);
  EXPECT_TRUE(std::isnan(freqs::DetPow(std::nan(""), 0.5)));
  EXPECT_EQ(freqs::DetLog(0.0), -HUGE_VAL);
}

// Item 7: what a config computes must be finite; the message names the config key.
TEST(HostileConfigTest, NonFiniteResultsNameTheKey) {
  ExpectContains(ParseError(R"({"head_dim": 64, "rope_scaling": {"rope_type": "linear", "factor": 5e-324}})"),
                 "rope_scaling.factor = 4.9406564584124654e-324 gives inv_freq[0] = inf");
  std::string shorts = "[", longs = "[";
  for (int i = 0; i < 32; ++i) {
    shorts += std::string(i ? ", " : "") + "1";
    longs += std::string(i ? ", " : "") + (i == 3 ? "5e-324" : "1");
  }
  ExpectContains(ParseError(R"({"head_dim": 64, "max_position_embeddings": 8192, "original_max_position_embeddings": 4096,
      "rope_scaling": {"type": "longrope", "short_factor": )" + shorts + "], \"long_factor\": " + longs + "]}}"),
                 "rope_scaling.long_factor[3] = 4.9406564584124654e-324 gives inv_freq[3] = inf");
  ExpectContains(ParseError(R"({"head_dim": 64, "max_position_embeddings": 65536,
      "rope_scaling": {"rope_type": "yarn", "factor": 1e300, "original_max_position_embeddings": 4096,
                       "mscale": 1e308, "mscale_all_dim": 1}})"),
                 "rope_scaling.mscale = 1e+308, rope_scaling.mscale_all_dim = 1 gives attention factor inf");
}

// Item 8 and the head_dim message: documented upper bounds, and messages naming the keys given.
TEST(HostileConfigTest, BoundsAndMessages) {
  ExpectContains(ParseError(R"({"head_dim": 500000000})"), "head_dim = 500000000: must be > 0 and <= 65536");
  ExpectContains(ParseError(R"({"head_dim": 4000000000000})"), "head_dim = 4000000000000: must be > 0 and <= 65536");
  ExpectContains(ParseError(R"({"head_dim": 64, "num_hidden_layers": 1000000000})"),
                 "num_hidden_layers = 1000000000: must be in [1, 65536]");
  const std::string one = ParseError(R"({"head_dim": 1})");
  EXPECT_EQ(one.rfind("head_dim = 1 with partial_rotary_factor = 1 gives rotary_dim", 0), 0u) << one;
  ExpectContains(ParseError(R"({"hidden_size": 64, "num_attention_heads": 64, "rotary_pct": 0.25})"),
                 "head_dim = 1 with partial_rotary_factor = 0.25 gives rotary_dim = int(head_dim * partial_rotary_factor) = 0");
  ExpectContains(ParseError(R"({"model_type": "gptj", "n_embd": 64, "n_head": 4, "rotary_dim": 7})"),
                 "rotary_dim = 7: must be even, >= 2 and <= head_dim = 16");
  ExpectContains(ParseError(R"({"head_dim": 64, "layer_types": ["full_attention"], "num_hidden_layers": 2})"),
                 "layer_types has 1 entries: must have num_hidden_layers = 2");
  ExpectContains(ParseError(R"({"head_dim": 64, "num_hidden_layers": 2, "layer_types": ["a", "b"],
      "rope_parameters": {"a": {"rope_type": "default"}}})"),
                 "rope_parameters: has no entry for layer type \"b\"");
}

// Issue 16 item 5: equality over one field list; every field but dict_key takes part.
TEST(RopeConfigEqualityTest, EveryFieldCounts) {
  RopeConfig a;
  a.head_dim = 64;
  std::vector<void (*)(RopeConfig&)> edits = {
      [](RopeConfig& c) { c.rope_type = RopeType::kLinear; },
      [](RopeConfig& c) { c.rope_theta = 2.0; },
      [](RopeConfig& c) { c.head_dim = 32; },
      [](RopeConfig& c) { c.partial_rotary_factor = 0.5; },
      [](RopeConfig& c) { c.rotary_dim = 32; },
      [](RopeConfig& c) { c.pairs = PairLayout::kInterleaved; },
      [](RopeConfig& c) { c.num_attention_heads = 3; },
      [](RopeConfig& c) { c.num_key_value_heads = 3; },
      [](RopeConfig& c) { c.max_position_embeddings = 3; },
      [](RopeConfig& c) { c.original_max_position_embeddings = 3; },
      [](RopeConfig& c) { c.factor = 3.0; },
      [](RopeConfig& c) { c.alpha = 3.0; },
      [](RopeConfig& c) { c.beta_fast = 3.0; },
      [](RopeConfig& c) { c.beta_slow = 3.0; },
      [](RopeConfig& c) { c.mscale = 3.0; },
      [](RopeConfig& c) { c.mscale_all_dim = 3.0; },
      [](RopeConfig& c) { c.attention_factor = 3.0; },
      [](RopeConfig& c) { c.truncate = false; },
      [](RopeConfig& c) { c.low_freq_factor = 3.0; },
      [](RopeConfig& c) { c.high_freq_factor = 3.0; },
      [](RopeConfig& c) { c.short_factor = std::vector<double>{1.0}; },
      [](RopeConfig& c) { c.long_factor = std::vector<double>{1.0}; },
      [](RopeConfig& c) { c.mrope.section = {1, 2, 3}; },
      [](RopeConfig& c) { c.mrope.interleaved = true; },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    RopeConfig b = a;
    edits[i](b);
    EXPECT_NE(a, b) << "edit " << i;
  }
  RopeConfig b = a;
  b.dict_key = "elsewhere";
  EXPECT_EQ(a, b);
}

// Issue 16 item 5: one registry row per rope type. Every type has a name the loader reads back
// (and HF's legacy "su"); every key a type requires, when removed from a complete config of that
// type, fails validation with the one "missing" message naming it.
TEST(RopeTypeRegistryTest, NamesRoundTripAndRequiredKeysAreNamed) {
  const RopeType all[] = {RopeType::kDefault, RopeType::kLinear, RopeType::kDynamic, RopeType::kNtk,
                          RopeType::kYarn, RopeType::kLlama3, RopeType::kLongRope, RopeType::kProportional};
  const char* names[] = {"default", "linear", "dynamic", "ntk", "yarn", "llama3", "longrope", "proportional"};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_STREQ(RopeTypeName(all[i]), names[i]);
    RopeConfig c;
    const Status st = ParseHfConfig(std::string(R"({"head_dim": 8, "max_position_embeddings": 64,
        "rope_scaling": {"factor": 2, "alpha": 2, "low_freq_factor": 1, "high_freq_factor": 4,
        "short_factor": [1, 1], "long_factor": [2, 2], "partial_rotary_factor": 0.5, "rope_type": ")") +
                                    names[i] + "\"}}",
                                &c);
    ASSERT_TRUE(st.ok()) << names[i] << ": " << st.message();
    EXPECT_EQ(c.rope_type, all[i]);
  }
  EXPECT_STREQ(RopeTypeName(static_cast<RopeType>(99)), "unknown");
  RopeConfig su;
  ASSERT_TRUE(ParseHfConfig(R"({"head_dim": 4, "max_position_embeddings": 64,
      "rope_scaling": {"type": "su", "short_factor": [1, 1], "long_factor": [2, 2]}})", &su).ok());
  EXPECT_EQ(su.rope_type, RopeType::kLongRope);

  // A complete config per type, and each required key's removal with the message it must give.
  struct Case {
    RopeType type;
    void (*remove)(RopeConfig&);
    const char* message;
  };
  const Case cases[] = {
      {RopeType::kLinear, [](RopeConfig& c) { c.factor.reset(); },
       "rope_scaling.factor: missing (required by rope_type linear)"},
      {RopeType::kDynamic, [](RopeConfig& c) { c.factor.reset(); },
       "rope_scaling.factor: missing (required by rope_type dynamic)"},
      {RopeType::kDynamic, [](RopeConfig& c) { c.max_position_embeddings.reset(); },
       "max_position_embeddings: missing (required by rope_type dynamic)"},
      {RopeType::kNtk, [](RopeConfig& c) { c.alpha.reset(); },
       "rope_scaling.alpha: missing (required by rope_type ntk)"},
      {RopeType::kYarn,
       [](RopeConfig& c) {
         c.max_position_embeddings.reset();
         c.original_max_position_embeddings.reset();
       },
       "original_max_position_embeddings / max_position_embeddings: missing (required by rope_type yarn)"},
      {RopeType::kYarn,
       [](RopeConfig& c) {
         c.factor.reset();
         c.max_position_embeddings.reset();
       },
       "rope_scaling.factor: missing, and max_position_embeddings is absent to derive it"},
      {RopeType::kLlama3, [](RopeConfig& c) { c.factor.reset(); },
       "rope_scaling.factor: missing (required by rope_type llama3)"},
      {RopeType::kLlama3,
       [](RopeConfig& c) {
         c.max_position_embeddings.reset();
         c.original_max_position_embeddings.reset();
       },
       "rope_scaling.original_max_position_embeddings: missing (required by rope_type llama3)"},
      {RopeType::kLlama3, [](RopeConfig& c) { c.low_freq_factor.reset(); },
       "rope_scaling.low_freq_factor: missing (required by rope_type llama3)"},
      {RopeType::kLlama3, [](RopeConfig& c) { c.high_freq_factor.reset(); },
       "rope_scaling.high_freq_factor: missing (required by rope_type llama3)"},
      {RopeType::kLongRope,
       [](RopeConfig& c) {
         c.max_position_embeddings.reset();
         c.original_max_position_embeddings.reset();
       },
       "original_max_position_embeddings / max_position_embeddings: missing (required by rope_type longrope)"},
      {RopeType::kLongRope, [](RopeConfig& c) { c.short_factor.reset(); },
       "rope_scaling.short_factor: missing (required by rope_type longrope)"},
      {RopeType::kLongRope, [](RopeConfig& c) { c.long_factor.reset(); },
       "rope_scaling.long_factor: missing (required by rope_type longrope)"},
      {RopeType::kLongRope,
       [](RopeConfig& c) {
         c.factor.reset();
         c.max_position_embeddings.reset();
       },
       "rope_scaling.factor: missing, and max_position_embeddings is absent to derive the attention factor"},
  };
  for (const Case& k : cases) {
    RopeConfig c;
    c.rope_type = k.type;
    c.head_dim = 8;
    c.max_position_embeddings = 64;
    c.original_max_position_embeddings = 32;
    c.factor = 2.0;
    c.alpha = 2.0;
    c.low_freq_factor = 1.0;
    c.high_freq_factor = 4.0;
    c.short_factor = std::vector<double>{1.0, 1.0, 1.0, 1.0};
    c.long_factor = std::vector<double>{2.0, 2.0, 2.0, 2.0};
    RopeFrequencies f;
    ASSERT_TRUE(ComputeFrequencies(c, 0, &f).ok()) << RopeTypeName(k.type);
    k.remove(c);
    const Status st = ComputeFrequencies(c, 0, &f);
    EXPECT_FALSE(st.ok()) << k.message;
    EXPECT_EQ(st.message(), k.message);
  }
}

// The model API: layer types by name, models with one RoPE for several types.
TEST(ModelApiTest, LayerTypesAndSingleRope) {
  ModelRope m;
  ASSERT_TRUE(LoadHfModel(kConfigs + "gemma-2-9b.json", &m).ok());
  ASSERT_EQ(m.layer_types.size(), 2u);  // sliding and full layers, one RoPE (Gemma2)
  EXPECT_TRUE(SingleRope(m));
  RopeConfig c;
  EXPECT_TRUE(LoadHfConfig(kConfigs + "gemma-2-9b.json", &c).ok());
  ASSERT_TRUE(LoadHfModel(kConfigs + "gemma-3-4b-it.json", &m).ok());
  EXPECT_FALSE(SingleRope(m));
  EXPECT_EQ(TypeConfig(m, "full_attention").factor, 8.0);
  EXPECT_EQ(TypeConfig(m, "full_attention").head_dim, 256);  // Gemma3TextConfig default
  const RopeConfig* none = nullptr;
  ExpectContains(LayerRope(m, "global", &none).message(),
                 "layer_type = \"global\": not a RoPE layer type of this model (sliding_attention, full_attention)");
  const Status st = LoadHfConfig(kConfigs + "gemma-3-4b-it.json", &c);
  ExpectContains(st.message(), "gemma-3-4b-it.json: config: the model has 2 RoPE layer types");
  // ApplyRope by name and by layer give the type's config.
  std::vector<float> q(4 * 256);
  test::FillNormal(q.data(), q.size(), 5);
  std::vector<float> a = q, b = q, d = q;
  RopeTensors t;
  t.q = TensorBSHD(a.data(), 1, 4, 1, 256);
  RopeParams p;
  p.positions = Positions::Offset(3000);
  ASSERT_TRUE(ApplyRope(t, m, "full_attention", p).ok());
  t.q.data = b.data();
  ASSERT_TRUE(ApplyRope(t, m, int64_t{5}, p).ok());  // layer 5: the first full-attention layer
  t.q.data = d.data();
  ASSERT_TRUE(ApplyRope(t, TypeConfig(m, "full_attention"), p).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, d);
  b = q;
  t.q.data = b.data();
  ASSERT_TRUE(ApplyRope(t, m, int64_t{0}, p).ok());  // a sliding-attention layer: base 1e4, unscaled
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace posenc
