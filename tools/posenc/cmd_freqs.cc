// posenc freqs: a model config's RoPE frequencies as one JSON object.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "posenc/freqs.h"
#include "tools/posenc/cli.h"

namespace posenc {
namespace cli {
namespace {

struct FreqsArgs {
  std::string config;
  int64_t seq_len = 0;
};

void RunFreqs(const FreqsArgs& args) {
  RopeConfig c;
  Status st = LoadHfConfig(args.config, &c);
  if (!st.ok()) throw UsageError(st.message());
  RopeFrequencies f;
  st = ComputeFrequencies(c, args.seq_len, &f);
  if (!st.ok()) throw UsageError(st.message());
  // nlohmann prints doubles with max_digits10 (17) significant digits: round-trippable.
  nlohmann::ordered_json out;
  out["rope_type"] = RopeTypeName(f.rope_type);
  out["head_dim"] = f.head_dim;
  out["rotary_dim"] = f.rotary_dim;
  out["inv_freq"] = f.inv_freq;
  out["attention_factor"] = f.attention_factor;
  std::printf("%s\n", out.dump().c_str());
}

}  // namespace

void AddFreqs(CLI::App& app) {
  auto args = std::make_shared<FreqsArgs>();
  CLI::App* cmd = app.add_subcommand("freqs", "RoPE frequencies of a Hugging Face config.json");
  cmd->add_option("--config", args->config, "config.json")->required();
  cmd->add_option("--seq-len", args->seq_len, "sequence length (dynamic, longrope; default unknown)");
  cmd->callback([args] { RunFreqs(*args); });
}

}  // namespace cli
}  // namespace posenc
