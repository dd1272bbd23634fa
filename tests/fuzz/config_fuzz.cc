// Fuzz target for the config.json loader (libFuzzer): any text through the public
// posenc::ParseHfConfig. It must never crash, throw or hit undefined behaviour (the build runs it
// under ASan + UBSan), and a rejected text must leave *out unchanged (posenc/freqs.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "posenc/freqs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  posenc::RopeConfig config;
  config.rope_theta = -123.0;  // sentinels no valid config has
  config.head_dim = -7;
  config.dict_key = "untouched";
  const posenc::Status st = posenc::ParseHfConfig(text, &config);
  if (!st.ok() && (config.rope_theta != -123.0 || config.head_dim != -7 || config.dict_key != "untouched")) {
    std::fprintf(stderr, "config fuzz: a rejected config wrote *out: %s\n", st.message().c_str());
    std::abort();
  }
  return 0;
}
