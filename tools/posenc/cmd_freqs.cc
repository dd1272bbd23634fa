// posenc freqs: a model config's RoPE frequencies as one JSON object.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "posenc/freqs.h"
#include "posenc/model.h"
#include "tools/posenc/cli.h"

namespace posenc {
namespace cli {

const RopeLayerType& SelectLayerType(const ModelRope& model, const std::string& layer_type) {
  std::string names;
  for (const RopeLayerType& t : model.layer_types) names += (names.empty() ? "" : ", ") + t.name;
  if (layer_type.empty()) {
    if (!SingleRope(model)) {
      throw UsageError("the model has " + std::to_string(model.layer_types.size()) +
                       " RoPE layer types with different RoPE (" + names + "): pass --layer-type");
    }
    return model.layer_types[0];
  }
  for (const RopeLayerType& t : model.layer_types) {
    if (t.name == layer_type) return t;
  }
  throw UsageError("--layer-type " + layer_type + ": not a RoPE layer type of this model (" + names + ")");
}

namespace {

struct FreqsArgs {
  std::string config, layer_type;
  int64_t seq_len = 0;
};

void RunFreqs(const FreqsArgs& args) {
  ModelRope m;
  Status st = LoadHfModel(args.config, &m);
  if (!st.ok()) throw UsageError(st.message());
  const RopeLayerType& type = SelectLayerType(m, args.layer_type);
  const RopeConfig& c = type.config;
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
  out["pairs"] = PairLayoutName(c.pairs);
  out["layer_type"] = type.name;
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (const RopeLayerType& t : m.layer_types) names.push_back(t.name);
  out["layer_types"] = names;
  if (c.mrope.present()) {
    out["mrope_section"] = c.mrope.section;
    out["mrope_interleaved"] = c.mrope.interleaved;
  }
  std::vector<int64_t> nope;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i] == ModelRope::kNoRope) nope.push_back(static_cast<int64_t>(i));
  }
  if (!nope.empty()) out["no_rope_layers"] = nope;
  if (m.softmax_scale_factor != 1.0) out["softmax_scale_factor"] = m.softmax_scale_factor;
  std::printf("%s\n", out.dump().c_str());
}

}  // namespace

void AddFreqs(CLI::App& app) {
  auto args = std::make_shared<FreqsArgs>();
  CLI::App* cmd = app.add_subcommand("freqs", "RoPE frequencies of a Hugging Face config.json");
  cmd->add_option("--config", args->config, "config.json")->required();
  cmd->add_option("--seq-len", args->seq_len, "sequence length (dynamic, longrope; default unknown)");
  cmd->add_option("--layer-type", args->layer_type,
                  "RoPE layer type (e.g. sliding_attention); required when the types differ");
  cmd->callback([args] { RunFreqs(*args); });
}

}  // namespace cli
}  // namespace posenc
