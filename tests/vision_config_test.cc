// LoadHfVisionConfig / ParseHfVisionConfig (posenc/vision.h): the vision tower's RoPE of each
// multimodal family, read from the published configs in tools/configs (their vision_config
// blocks) and from configs that leave keys out (the HF config class defaults, written here from
// the classes' __init__ signatures in transformers 5.x); every error names the key and value and
// leaves *out unchanged.
#include <string>

#include <gtest/gtest.h>

#include "posenc/vision.h"

namespace posenc {
namespace {

const std::string kConfigs = std::string(POSENC_SOURCE_DIR) + "/tools/configs/";

VisionRopeConfig Load(const std::string& file) {
  VisionRopeConfig c;
  const Status st = LoadHfVisionConfig(kConfigs + file, &c);
  EXPECT_TRUE(st.ok()) << file << ": " << st.message();
  return c;
}

VisionRopeConfig Parse(const std::string& json) {
  VisionRopeConfig c;
  const Status st = ParseHfVisionConfig(json, &c);
  EXPECT_TRUE(st.ok()) << json << ": " << st.message();
  return c;
}

// The message of a failing parse; *out must stay as it was.
std::string Error(const std::string& json) {
  VisionRopeConfig c;
  c.head_dim = -7;
  const Status st = ParseHfVisionConfig(json, &c);
  EXPECT_FALSE(st.ok()) << json;
  EXPECT_EQ(c.head_dim, -7) << "wrote *out on failure: " << json;
  return st.message();
}

TEST(VisionConfig, PublishedConfigs) {
  // Qwen2-VL: head_dim = embed_dim / num_heads (hidden_size is the merger's output width).
  VisionRopeConfig c = Load("qwen2-vl-7b-instruct.json");
  EXPECT_EQ(c.kind, VisionRopeKind::kQwenVL);
  EXPECT_EQ(c.head_dim, 80);
  EXPECT_EQ(c.num_heads, 16);
  EXPECT_EQ(c.patch_size, 14);
  EXPECT_EQ(c.spatial_merge_size, 2);
  EXPECT_EQ(c.window_size, 0);
  EXPECT_EQ(c.theta, 10000.0);

  c = Load("qwen2.5-vl-7b-instruct.json");
  EXPECT_EQ(c.kind, VisionRopeKind::kQwenVL);
  EXPECT_EQ(c.head_dim, 80);
  EXPECT_EQ(c.window_size, 112);
  EXPECT_EQ(c.spatial_merge_size, 2);

  c = Load("qwen3-vl-8b-instruct.json");
  EXPECT_EQ(c.kind, VisionRopeKind::kQwenVL);
  EXPECT_EQ(c.head_dim, 72);
  EXPECT_EQ(c.patch_size, 16);

  c = Load("mistral-small-3.1-24b.json");
  EXPECT_EQ(c.kind, VisionRopeKind::kPixtral);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.image_size, 1540);
  EXPECT_EQ(c.patch_size, 14);
  EXPECT_EQ(c.spatial_merge_size, 1);
  EXPECT_EQ(c.theta, 10000.0);

  c = Load("llama-4-scout-17b-16e.json");
  EXPECT_EQ(c.kind, VisionRopeKind::kLlama4);
  EXPECT_EQ(c.head_dim, 88);
  EXPECT_EQ(c.image_size, 336);
  EXPECT_EQ(c.patch_size, 14);
}

TEST(VisionConfig, ClassDefaults) {
  // Qwen2_5_VLVisionConfig's defaults: hidden_size 3584, num_heads 16, window_size 112.
  VisionRopeConfig c = Parse(R"({"model_type": "qwen2_5_vl", "vision_config": {}})");
  EXPECT_EQ(c.head_dim, 224);
  EXPECT_EQ(c.window_size, 112);
  EXPECT_EQ(c.patch_size, 14);
  // Qwen2VLVisionConfig: embed_dim 1280 / num_heads 16.
  EXPECT_EQ(Parse(R"({"model_type": "qwen2_vl", "vision_config": {"hidden_size": 1536}})").head_dim, 80);
  // Qwen3VLVisionConfig: 1152 / 16, patch 16.
  c = Parse(R"({"model_type": "qwen3_vl_moe", "vision_config": {}})");
  EXPECT_EQ(c.head_dim, 72);
  EXPECT_EQ(c.patch_size, 16);
  // PixtralVisionConfig: 1024 / 16, image 1024, patch 16; HF overwrites a head_dim key.
  c = Parse(R"({"model_type": "pixtral", "head_dim": 32})");
  EXPECT_EQ(c.kind, VisionRopeKind::kPixtral);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.image_size, 1024);
  EXPECT_EQ(c.patch_size, 16);
  // Llama4VisionConfig: 768 / 16, image 448, patch 14.
  c = Parse(R"({"model_type": "llama4", "vision_config": {}})");
  EXPECT_EQ(c.kind, VisionRopeKind::kLlama4);
  EXPECT_EQ(c.head_dim, 48);
  EXPECT_EQ(c.image_size, 448);
}

TEST(VisionConfig, Theta) {
  // transformers 5: rope_parameters.rope_theta first, then rope_theta, then 10000.
  EXPECT_EQ(Parse(R"({"model_type": "pixtral", "rope_theta": 500.0})").theta, 500.0);
  EXPECT_EQ(Parse(R"({"model_type": "pixtral", "rope_theta": 500.0,
                      "rope_parameters": {"rope_type": "default", "rope_theta": 250.0}})")
                .theta,
            250.0);
  EXPECT_EQ(Parse(R"({"model_type": "mistral3",
                      "vision_config": {"model_type": "pixtral", "rope_theta": 1e6}})")
                .theta,
            1e6);
  // The Qwen-VL towers' theta is VisionRotaryEmbedding's default, not a config key.
  EXPECT_EQ(Parse(R"({"model_type": "qwen2_vl", "vision_config": {"rope_theta": 5.0}})").theta, 10000.0);
}

TEST(VisionConfig, Errors) {
  EXPECT_NE(Error(R"({"model_type": "llama"})").find("model_type = \"llama\""), std::string::npos);
  EXPECT_NE(Error(R"({"vision_config": {}})").find("model_type: missing"), std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "qwen2_vl"})").find("vision_config: missing"), std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "llava", "vision_config": {"model_type": "clip_vision_model"}})")
                .find("vision_config.model_type = \"clip_vision_model\""),
            std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "qwen2_5_vl", "vision_config": {"hidden_size": 1000, "num_heads": 16}})")
                .find("vision_config.hidden_size = 1000: not a multiple of num_heads = 16"),
            std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "qwen2_5_vl", "vision_config": {"hidden_size": 96, "num_heads": 16}})")
                .find("= 6: the head dim must be a multiple of 4"),
            std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "qwen3_vl", "vision_config": {"num_heads": 0}})")
                .find("vision_config.num_heads = 0: must be >= 1"),
            std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "qwen2_5_vl", "vision_config": {"window_size": 1.5}})")
                .find("vision_config.window_size"),
            std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "qwen2_5_vl", "vision_config": {"patch_size": 1e300}})")
                .find("vision_config.patch_size"),
            std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "pixtral", "rope_theta": -1})").find("rope_theta = -1"), std::string::npos);
  EXPECT_NE(Error(R"({"model_type": "pixtral", "rope_parameters": {"rope_theta": "big"}})")
                .find("rope_parameters.rope_theta"),
            std::string::npos);
  EXPECT_NE(Error("{").find("invalid JSON"), std::string::npos);
  EXPECT_NE(Error("[1, 2]").find("not a JSON object"), std::string::npos);
  VisionRopeConfig c;
  const Status st = LoadHfVisionConfig(kConfigs + "no-such-file.json", &c);
  EXPECT_NE(st.message().find("cannot open"), std::string::npos);
  EXPECT_FALSE(ParseHfVisionConfig("{}", nullptr).ok());
}

}  // namespace
}  // namespace posenc
