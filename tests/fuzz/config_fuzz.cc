// Fuzz target for the config.json loader (libFuzzer): any text through the public
// posenc::ParseHfConfig and posenc::ParseHfModel, then ComputeFrequencies of every layer type the
// text yields at a few sequence lengths. It must never crash, throw or hit undefined behaviour (the
// build runs it under ASan + UBSan); a rejected text must leave *out unchanged (posenc/freqs.h,
// posenc/model.h); computed frequencies and attention factors are finite or the call fails.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "posenc/freqs.h"
#include "posenc/model.h"

namespace {

void Fail(const char* what, const posenc::Status& st) {
  std::fprintf(stderr, "config fuzz: %s: %s\n", what, st.message().c_str());
  std::abort();
}

void CheckFrequencies(const posenc::RopeConfig& config) {
  for (int64_t seq_len : {int64_t{0}, int64_t{8192}, int64_t{1} << 40}) {
    posenc::RopeFrequencies f;
    const posenc::Status st = posenc::ComputeFrequencies(config, seq_len, &f);
    if (!st.ok()) continue;
    if (!std::isfinite(f.attention_factor)) Fail("non-finite attention factor accepted", st);
    for (double w : f.inv_freq) {
      if (!std::isfinite(w)) Fail("non-finite inv_freq accepted", st);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  posenc::RopeConfig config;
  config.rope_theta = -123.0;  // sentinels no valid config has
  config.head_dim = -7;
  config.dict_key = "untouched";
  posenc::Status st = posenc::ParseHfConfig(text, &config);
  if (!st.ok() &&
      (config.rope_theta != -123.0 || config.head_dim != -7 || config.dict_key != "untouched")) {
    Fail("a rejected config wrote *out", st);
  }
  if (st.ok()) CheckFrequencies(config);

  posenc::ModelRope model;
  model.model_type = "untouched";
  st = posenc::ParseHfModel(text, &model);
  if (!st.ok() && (model.model_type != "untouched" || !model.layer_types.empty())) {
    Fail("a rejected model wrote *out", st);
  }
  if (st.ok()) {
    for (const posenc::RopeLayerType& t : model.layer_types) CheckFrequencies(t.config);
  }
  return 0;
}
