// posenc rerope: ReRoPE attention scores of .npy q and (unrotated) k, causal, queries being the
// last tokens by default.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/rerope.h"
#include "tools/posenc/cli.h"
#include "tools/posenc/npy.h"

namespace posenc {
namespace cli {
namespace {

struct ReropeArgs {
  std::string q, k, mode, pairs = "half", config, out;
  int64_t window = 0, q_offset = 0;
  double leak = 0.0, base = 10000.0;
  bool has_q_offset = false, has_leak = false;
};

npy::Array Load(const std::string& flag, const std::string& path) {
  npy::Array a;
  const std::string err = npy::Load(path, &a);
  if (!err.empty()) throw UsageError(flag + " " + err);
  return a;
}

std::string ShapeOf(const npy::Array& a) {
  std::string s = "(";
  for (size_t i = 0; i < a.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
  return s + ")";
}

// A [batch, seq, heads, head_dim] view of a '<f4' / '<f2' / '<u2' (bf16 bits) array.
Tensor View(const std::string& flag, const std::string& axes, npy::Array& a) {
  DType dtype;
  if (a.descr == "<f4") {
    dtype = DType::kF32;
  } else if (a.descr == "<f2") {
    dtype = DType::kF16;
  } else if (a.descr == "<u2") {
    dtype = DType::kBF16;
  } else {
    throw UsageError(flag + ": dtype '" + a.descr +
                     "' is not '<f4' (f32), '<f2' (f16) or '<u2' (bf16 bit patterns)");
  }
  if (a.shape.size() != 4) {
    throw UsageError(flag + ": shape " + ShapeOf(a) + " has rank " +
                     std::to_string(a.shape.size()) + ", needs [" + axes + "]");
  }
  for (int64_t d : a.shape) {
    if (d <= 0) throw UsageError(flag + ": shape " + ShapeOf(a) + " has an empty axis");
  }
  return TensorBSHD(a.bytes.data(), dtype, a.shape[0], a.shape[1], a.shape[2], a.shape[3]);
}

DistanceMode ModeOf(const std::string& name) {
  if (name == "cap") return DistanceMode::kCap;
  if (name == "leaky") return DistanceMode::kLeaky;
  if (name == "log") return DistanceMode::kLog;
  return DistanceMode::kExact;
}

void RunRerope(const ReropeArgs& args) {
  const DistanceMode mode = ModeOf(args.mode);
  if (mode == DistanceMode::kLeaky && !args.has_leak) {
    throw UsageError("--mode leaky needs --leak K (K > 1)");
  }
  if (mode != DistanceMode::kLeaky && args.has_leak) {
    throw UsageError("--leak is only used by --mode leaky");
  }
  npy::Array q = Load("--q", args.q);
  npy::Array k = Load("--k", args.k);
  RelativeRopeTensors t;
  t.q = View("--q", "batch, q_len, heads, head_dim", q);
  t.k = View("--k", "batch, k_len, kv_heads, head_dim", k);
  if (k.descr != q.descr) {
    throw UsageError("--k: dtype '" + k.descr + "' differs from --q's '" + q.descr + "'");
  }
  const int64_t batch = q.shape[0], q_len = q.shape[1], heads = q.shape[2], k_len = k.shape[1];
  npy::Array out{"<f4", {batch, heads, q_len, k_len}, {}};
  out.bytes.resize(static_cast<size_t>(out.size()) * 4);
  t.scores = TensorBSHD(out.bytes.data(), DType::kF32, batch, heads, q_len, k_len);

  RelativeRopeParams p;
  p.map.mode = mode;
  p.map.window = args.window;
  p.map.leak = args.leak;
  p.pairs = args.pairs == "interleaved" ? PairLayout::kInterleaved : PairLayout::kHalf;
  p.freqs.base = args.base;
  p.k_positions = Positions::Offset(0);
  p.q_positions = Positions::Offset(args.has_q_offset ? args.q_offset : k_len - q_len);
  p.causal = true;
  Status st;
  if (!args.config.empty()) {
    RopeConfig config;
    st = LoadHfConfig(args.config, &config);
    if (!st.ok()) throw UsageError(st.message());
    st = RelativeRopeScores(t, config, p);
  } else {
    st = RelativeRopeScores(t, p);
  }
  if (!st.ok()) throw UsageError(st.message());
  const std::string err = npy::Save(args.out, out);
  if (!err.empty()) throw std::runtime_error(err);
}

}  // namespace

void AddRerope(CLI::App& app) {
  auto args = std::make_shared<ReropeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "rerope",
      "ReRoPE attention scores [batch, heads, q_len, k_len] (f32, causal) of .npy q and "
      "unrotated k");
  cmd->add_option("--q", args->q, "q [batch, q_len, heads, head_dim] (.npy: f32, f16, bf16 bits)")
      ->required();
  cmd->add_option("--k", args->k, "unrotated k [batch, k_len, kv_heads, head_dim], q's dtype")
      ->required();
  cmd->add_option("--window", args->window, "window w: distances up to w are exact")->required();
  cmd->add_option("--mode", args->mode, "exact, cap (ReRoPE), leaky (w + (d - w) / K), log")
      ->required()
      ->check(CLI::IsMember({"exact", "cap", "leaky", "log"}));
  CLI::Option* leak = cmd->add_option("--leak", args->leak, "K > 1: slope 1 / K beyond w (leaky)");
  CLI::Option* base = cmd->add_option("--base", args->base, "rope_theta (default 10000)");
  CLI::Option* config =
      cmd->add_option("--config", args->config, "HF config.json: frequencies, factor, rotary_dim");
  cmd->add_option("--pairs", args->pairs, "half (NeoX/HF) or interleaved (GPT-J/Meta)")
      ->check(CLI::IsMember({"half", "interleaved"}));
  CLI::Option* q_offset = cmd->add_option(
      "--q-offset", args->q_offset,
      "position of the first query (default k_len - q_len); keys sit at 0..k_len-1");
  cmd->add_option("--out", args->out, "scores (.npy, f32)")->required();
  config->excludes(base);
  cmd->callback([args, leak, q_offset] {
    args->has_leak = leak->count() > 0;
    args->has_q_offset = q_offset->count() > 0;
    RunRerope(*args);
  });
}

}  // namespace cli
}  // namespace posenc
