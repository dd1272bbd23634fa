// The model families posenc reads, one row each, from transformers 5.24 (and the remote code of
// ChatGLM). Each row cites the HF class whose defaults and rules it restates.
#include "lib/freqs/hf_families.h"

#include <cstring>

namespace posenc {
namespace freqs {
namespace {

using P = PairRule;
using L = LayerRule;
using N = NoRopeRule;
using T = TypedRule;
using H = HeadRule;
using R = RotaryRule;
using Th = ThetaRule;

// Columns: model_type, default theta, default partial_rotary_factor, pairs, layer rule, pattern,
// NoPE rule, typed rule, head rule, rotary rule, theta rule, DeepSeek softmax, aliases, defaults.
constexpr HfFamily kFamilies[] = {
    // LlamaConfig; LlamaAttention: apply_rotary_pos_emb / rotate_half.
    {"llama", 10000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    // MistralConfig, MixtralConfig (rope_theta 1e6), Ministral.
    {"mistral", 10000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    {"mixtral", 1000000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    // Qwen2Config, Qwen3Config (rope_theta 10000).
    {"qwen2", 10000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    {"qwen3", 10000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    // Qwen2VLTextConfig / Qwen2_5_VLTextConfig (rope_theta 1e6; rope type "mrope" is default RoPE
    // plus mrope_section); Qwen3VLTextConfig (default_theta 5e5; mrope_interleaved).
    {"qwen2_vl_text", 1000000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    {"qwen2_5_vl_text", 1000000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    {"qwen3_vl_text", 500000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    // GemmaConfig; Gemma2Config: layer_types alternate sliding / full, one RoPE for both.
    {"gemma", 10000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    {"gemma2", 10000.0, 1.0, P::kHalf, L::kSlidingEvery, 2, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    // Gemma3TextConfig: default_theta {global 1e6, local 1e4}, sliding_window_pattern 6,
    // convert_rope_params_to_dict (rope_scaling goes to full_attention only).
    {"gemma3_text", 1000000.0, 1.0, P::kHalf, L::kSlidingEvery, 6, N::kNone, T::kGemma3, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "",
     R"({"head_dim": 256, "num_attention_heads": 8, "num_key_value_heads": 4, "num_hidden_layers": 26,
         "hidden_size": 2304, "max_position_embeddings": 131072})"},
    // Gemma4TextConfig: sliding default 1e4, full proportional (0.25, 1e6) on global_head_dim.
    {"gemma4_text", 1000000.0, 1.0, P::kHalf, L::kSlidingEvery, 6, N::kNone, T::kGemma4, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "",
     R"({"head_dim": 256, "global_head_dim": 512, "num_attention_heads": 8, "num_key_value_heads": 4,
         "num_hidden_layers": 30, "hidden_size": 2304, "max_position_embeddings": 131072})"},
    // PhiConfig (partial_rotary_factor 0.5); Phi3Config / PhimoeConfig (original length 4096
    // declared, so standardize_rope_params always prefers it for longrope).
    {"phi", 10000.0, 0.5, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    {"phi3", 10000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", R"({"original_max_position_embeddings": 4096})"},
    {"phimoe", 1000000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", R"({"original_max_position_embeddings": 4096})"},
    // GPTNeoXConfig.convert_rope_params_to_dict: rotary_emb_base, rotary_pct (default 0.25).
    {"gpt_neox", 10000.0, 0.25, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    // GPTJConfig (attribute_map, rotary_dim 64); modeling_gptj: create_sinusoidal_positions with
    // base 10000 hard-coded, rotate_every_two (interleaved) on x[..., :rotary_dim].
    {"gptj", 10000.0, 1.0, P::kInterleaved, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kGptjRotaryDim, Th::kGptjFixed, false,
     "n_embd=hidden_size,n_head=num_attention_heads,n_layer=num_hidden_layers,n_positions=max_position_embeddings",
     R"({"rotary_dim": 64, "hidden_size": 4096, "num_attention_heads": 16, "num_hidden_layers": 28,
         "max_position_embeddings": 2048})"},
    // ChatGLM2/3 and GLM-4 remote code (modeling_chatglm.RotaryEmbedding): RoPE on kv_channels / 2
    // of each head, base 10000 * rope_ratio, interleaved pairs.
    {"chatglm", 10000.0, 1.0, P::kInterleaved, L::kAllFull, 0, N::kNone, T::kShared, H::kKvChannels,
     R::kHalfOfHead, Th::kChatGlmRatio, false,
     "num_layers=num_hidden_layers,seq_length=max_position_embeddings",
     R"({"kv_channels": 128, "rope_ratio": 1, "hidden_size": 4096, "num_attention_heads": 32,
         "num_hidden_layers": 28, "max_position_embeddings": 2048})"},
    // GlmConfig / Glm4Config (partial_rotary_factor 0.5); apply_rotary_pos_emb repeat_interleave.
    {"glm", 10000.0, 0.5, P::kInterleaved, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    {"glm4", 10000.0, 0.5, P::kInterleaved, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    // CohereConfig (Command-R): rotate_half on x[..., ::2], x[..., 1::2]. Cohere2Config:
    // sliding_window_pattern 4; Cohere2Attention applies RoPE on sliding layers only.
    {"cohere", 10000.0, 1.0, P::kInterleaved, L::kAllFull, 0, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
    {"cohere2", 10000.0, 1.0, P::kInterleaved, L::kSlidingEvery, 4, N::kFullAttention, T::kShared,
     H::kHeadDim, R::kFactor, Th::kConfig, false, "", "{}"},
    // DeepseekV2 (view_as_complex: interleaved), DeepseekV3Config (rope_interleave, default true;
    // head_dim = qk_rope_head_dim); both scale the softmax by mscale^2 (DeepseekV3Attention).
    // Kimi-K2 ships DeepseekV3 code under model_type kimi_k2.
    {"deepseek_v2", 10000.0, 1.0, P::kInterleaved, L::kAllFull, 0, N::kNone, T::kShared,
     H::kQkRopeHeadDim, R::kFactor, Th::kConfig, true, "", R"({"qk_rope_head_dim": 64})"},
    {"deepseek_v3", 10000.0, 1.0, P::kRopeInterleaveKey, L::kAllFull, 0, N::kNone, T::kShared,
     H::kQkRopeHeadDim, R::kFactor, Th::kConfig, true, "",
     R"({"qk_rope_head_dim": 64, "num_attention_heads": 128, "num_key_value_heads": 128,
         "num_hidden_layers": 61, "max_position_embeddings": 4096})"},
    {"kimi_k2", 10000.0, 1.0, P::kRopeInterleaveKey, L::kAllFull, 0, N::kNone, T::kShared,
     H::kQkRopeHeadDim, R::kFactor, Th::kConfig, true, "", R"({"qk_rope_head_dim": 64})"},
    // Llama4TextConfig: default_theta 5e5, no_rope_layers (empty: every 4th layer NoPE),
    // layer_types chunked_attention / full_attention; apply_rotary_emb on a complex view.
    {"llama4_text", 500000.0, 1.0, P::kInterleaved, L::kLlama4, 0, N::kNoRopeLayers, T::kShared,
     H::kHeadDim, R::kFactor, Th::kConfig, false, "",
     R"({"head_dim": 128, "num_attention_heads": 40, "num_key_value_heads": 8, "num_hidden_layers": 48,
         "hidden_size": 5120, "max_position_embeddings": 131072})"},
    // SmolLM3Config: default_theta 2e6, no_rope_layers / no_rope_layer_interval 4.
    {"smollm3", 2000000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNoRopeLayers, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "",
     R"({"num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 36, "hidden_size": 2048,
         "max_position_embeddings": 32768})"},
    // Olmo3Config: default_theta 5e5; every 4th layer full attention; rope_scaling on full only.
    {"olmo3", 500000.0, 1.0, P::kHalf, L::kSlidingEvery, 4, N::kNone, T::kOlmo3, H::kHeadDim, R::kFactor,
     Th::kConfig, false, "", "{}"},
    // GptOssConfig: rope_theta 150000, alternating sliding / full layers, one RoPE.
    {"gpt_oss", 150000.0, 1.0, P::kHalf, L::kSlidingEvery, 2, N::kNone, T::kShared, H::kHeadDim,
     R::kFactor, Th::kConfig, false, "", "{}"},
};

// Any other model_type: RotaryEmbeddingConfigMixin's defaults and the config's own keys.
constexpr HfFamily kGeneric = {"", 10000.0, 1.0, P::kHalf, L::kAllFull, 0, N::kNone, T::kShared,
                               H::kHeadDim, R::kFactor, Th::kConfig, false, "", "{}"};

// Multimodal configs whose decoder sits under text_config (HF get_text_config()).
constexpr const char* kTextModelOf[][2] = {
    {"gemma3", "gemma3_text"},     {"gemma4", "gemma4_text"},       {"llama4", "llama4_text"},
    {"qwen2_vl", "qwen2_vl_text"}, {"qwen2_5_vl", "qwen2_5_vl_text"}, {"qwen3_vl", "qwen3_vl_text"},
    {"mistral3", "mistral"},
};

}  // namespace

std::string TextModelType(const std::string& model_type) {
  for (const auto& m : kTextModelOf) {
    if (model_type == m[0]) return m[1];
  }
  return model_type;
}

const HfFamily& FindFamily(const std::string& model_type) {
  const std::string text = TextModelType(model_type);
  for (const HfFamily& f : kFamilies) {
    if (text == f.model_type) return f;
  }
  return kGeneric;
}

}  // namespace freqs
}  // namespace posenc
