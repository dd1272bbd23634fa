// A minimal inference-runtime loop around posenc, for a Llama-3-8B-shaped attention layer:
// a fused QKV buffer [tokens, (Hq + 2 Hkv) * head_dim]; RoPE on q and k in place at prefill (the
// model's config.json gives the frequencies); then decode steps that rotate the new token's q and
// k from a table shared by all threads and append k to a KV cache.
//
// Usage: runtime_loop [config.json]   (default: tools/configs/llama-3.1-8b.json)
// Built and run by the tests, against the build tree and against an installed posenc.
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/rope.h"

namespace {

constexpr int64_t kHq = 32, kHkv = 8, kDim = 128;
constexpr int64_t kWidth = (kHq + 2 * kHkv) * kDim;  // one token's fused QKV row
constexpr int64_t kPrefill = 48, kDecodeSteps = 8, kMaxTokens = 8192;

// q and k of `tokens` rows of a fused QKV buffer starting at `qkv` (v is left alone).
posenc::RopeTensors QkViews(float* qkv, int64_t tokens) {
  posenc::RopeTensors t;
  t.q = posenc::TensorBSHD(qkv, 1, tokens, kHq, kDim);
  t.q.strides[1] = kWidth;  // next token: one fused row further
  t.q.strides[0] = tokens * kWidth;
  t.k = t.q;
  t.k.data = qkv + kHq * kDim;  // k follows q inside each row
  t.k.shape[2] = kHkv;
  return t;
}

int Fail(const char* what, const posenc::Status& st) {
  std::fprintf(stderr, "%s: %s\n", what, st.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* config_path = argc > 1 ? argv[1] : "tools/configs/llama-3.1-8b.json";
  posenc::RopeConfig config;
  posenc::Status st = posenc::LoadHfConfig(config_path, &config);
  if (!st.ok()) return Fail("config", st);

  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> qkv((kPrefill + kDecodeSteps) * kWidth);
  for (float& x : qkv) x = normal(rng);
  const std::vector<float> raw = qkv;  // to check the decode steps at the end
  std::vector<float> kv_cache(kMaxTokens * kHkv * kDim);
  auto append_k = [&](const float* qkv_row, int64_t position) {
    std::memcpy(&kv_cache[position * kHkv * kDim], qkv_row + kHq * kDim, kHkv * kDim * sizeof(float));
  };

  // Prefill: positions 0..kPrefill-1, frequencies from the config (llama3 scaling here).
  posenc::RopeParams params;  // half pairs (HF), in place, positions from 0
  st = posenc::ApplyRope(QkViews(qkv.data(), kPrefill), config, params);
  if (!st.ok()) return Fail("prefill", st);
  for (int64_t t = 0; t < kPrefill; ++t) append_k(&qkv[t * kWidth], t);

  // Decode: one table for the whole context, built once from the same config.
  posenc::RopeFrequencies f;
  st = posenc::ComputeFrequencies(config, kMaxTokens, &f);
  if (!st.ok()) return Fail("frequencies", st);
  posenc::Frequencies freqs;
  freqs.inv_freq = f.inv_freq.data();
  freqs.inv_freq_len = static_cast<int64_t>(f.inv_freq.size());
  freqs.attention_factor = f.attention_factor;
  std::shared_ptr<const posenc::RopeTable> table;
  st = posenc::RopeTable::Create(f.rotary_dim, freqs, kMaxTokens, &table);
  if (!st.ok()) return Fail("table", st);
  posenc::RopeParams step = params;
  step.source = posenc::CosSinSource::Table(table.get());
  for (int64_t s = 0; s < kDecodeSteps; ++s) {
    const int64_t position = kPrefill + s;
    float* row = &qkv[position * kWidth];
    step.positions = posenc::Positions::Offset(position);
    st = posenc::ApplyRope(QkViews(row, 1), step);  // a decode step: serial, no task spawned
    if (!st.ok()) return Fail("decode", st);
    append_k(row, position);
  }

  // The decode steps must equal rotating those tokens with the config path: same bits.
  std::vector<float> check(raw.begin() + kPrefill * kWidth, raw.end());
  params.positions = posenc::Positions::Offset(kPrefill);
  st = posenc::ApplyRope(QkViews(check.data(), kDecodeSteps), config, params);
  if (!st.ok()) return Fail("check", st);
  const bool same = std::memcmp(check.data(), &qkv[kPrefill * kWidth], check.size() * sizeof(float)) == 0;
  const bool v_untouched = std::memcmp(&raw[(kHq + kHkv) * kDim], &qkv[(kHq + kHkv) * kDim],
                                       kHkv * kDim * sizeof(float)) == 0;
  std::printf("runtime_loop: %s, rotary_dim %lld, %lld prefill + %lld decode tokens, KV cache %lld "
              "rows; decode == config path: %s; v untouched: %s\n",
              posenc::RopeTypeName(config.rope_type), static_cast<long long>(f.rotary_dim),
              static_cast<long long>(kPrefill), static_cast<long long>(kDecodeSteps),
              static_cast<long long>(kPrefill + kDecodeSteps), same ? "yes" : "NO",
              v_untouched ? "yes" : "NO");
  return same && v_untouched ? 0 : 1;
}
