// posenc rope: applies RoPE to NumPy .npy files.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "tools/posenc/cli.h"
#include "tools/posenc/npy.h"

namespace posenc {
namespace cli {
namespace {

struct RopeArgs {
  std::string q, k, layout = "bshd", pairs, inv_freq, cos, sin, positions, out_q, out_k;
  std::string config, layer_type, dtype = "f32";
  int64_t num_heads = 0, num_kv_heads = 0, rotary_dim = 0, offset = 0, seq_len = -1;
  double base = 10000.0, attention_factor = 1.0;
  bool inverse = false;
  std::vector<int64_t> mrope_section;
  bool mrope_interleaved = false;
};

npy::Array LoadOrThrow(const std::string& flag, const std::string& path) {
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

// DType of a .npy descr: '<f4' f32, '<f2' f16, '<u2' bf16 bit patterns.
bool DTypeOfDescr(const std::string& descr, DType* out) {
  if (descr == "<f4") *out = DType::kF32;
  else if (descr == "<f2") *out = DType::kF16;
  else if (descr == "<u2") *out = DType::kBF16;
  else return false;
  return true;
}

// View of a q or k array in the chosen layout; its descr must match --dtype.
Tensor ViewOf(const std::string& flag, npy::Array& a, const std::string& layout, int64_t heads,
              const std::string& dtype_name) {
  const char* want = dtype_name == "bf16" ? "<u2" : dtype_name == "f16" ? "<f2" : "<f4";
  if (a.descr != want) {
    throw UsageError(flag + ": dtype '" + a.descr + "' does not match --dtype " + dtype_name +
                     " (expects '" + want + "'; bf16 files hold the bit patterns as '<u2')");
  }
  DType dtype = DType::kF32;
  DTypeOfDescr(a.descr, &dtype);
  const size_t rank = layout == "bsd" ? 3 : 4;
  if (a.shape.size() != rank) {
    throw UsageError(flag + ": shape " + ShapeOf(a) + " has rank " + std::to_string(a.shape.size()) +
                     ", --layout " + layout + " needs rank " + std::to_string(rank));
  }
  for (int64_t d : a.shape) {
    if (d <= 0) throw UsageError(flag + ": shape " + ShapeOf(a) + " has an empty axis");
  }
  void* data = a.bytes.data();
  if (layout == "bshd") return TensorBSHD(data, dtype, a.shape[0], a.shape[1], a.shape[2], a.shape[3]);
  if (layout == "bhsd") return TensorBHSD(data, dtype, a.shape[0], a.shape[1], a.shape[2], a.shape[3]);
  if (a.shape[2] % heads != 0) {
    throw UsageError(flag + ": last axis " + std::to_string(a.shape[2]) +
                     " is not a multiple of the head count " + std::to_string(heads));
  }
  return TensorBSHD(data, dtype, a.shape[0], a.shape[1], heads, a.shape[2] / heads);
}

void RunRope(const RopeArgs& args) {
  if (args.layout == "bsd" && args.num_heads <= 0) {
    throw UsageError("--layout bsd needs --num-heads N (N > 0)");
  }
  if (!args.k.empty() && args.out_k.empty()) throw UsageError("--k needs --out-k FILE");
  if (args.k.empty() && !args.out_k.empty()) throw UsageError("--out-k needs --k FILE");

  npy::Array q = LoadOrThrow("--q", args.q);
  npy::Array k;
  RopeTensors t;
  t.q = ViewOf("--q", q, args.layout, args.num_heads, args.dtype);
  if (!args.k.empty()) {
    k = LoadOrThrow("--k", args.k);
    t.k = ViewOf("--k", k, args.layout, args.num_kv_heads > 0 ? args.num_kv_heads : args.num_heads,
                 args.dtype);
  }
  QKOutputs out = AttachOutputs(q, k, &t);  // t.q_out / t.k_out point into out

  RopeParams p;
  // Default: the config's layout with --config, else half.
  p.pairs = args.pairs.empty() ? PairLayout::kFromConfig
                               : args.pairs == "interleaved" ? PairLayout::kInterleaved : PairLayout::kHalf;
  p.rotary_dim = args.rotary_dim;
  p.inverse = args.inverse;
  p.freqs.base = args.base;
  p.freqs.attention_factor = args.attention_factor;
  const int64_t batch = t.q.shape[0], seq = t.q.shape[1];
  const int64_t half = (args.rotary_dim > 0 ? args.rotary_dim : t.q.shape[3]) / 2;

  std::vector<double> inv_freq;
  if (!args.inv_freq.empty()) {
    const npy::Array a = LoadOrThrow("--inv-freq", args.inv_freq);
    if (a.shape.size() != 1 || (a.descr != "<f8" && a.descr != "<f4")) {
      throw UsageError("--inv-freq " + args.inv_freq + ": must be a 1-D float64 or float32 array, got '" +
                       a.descr + "' " + ShapeOf(a));
    }
    inv_freq = npy::ToDoubles(a);
    p.freqs.inv_freq = inv_freq.data();
    p.freqs.inv_freq_len = static_cast<int64_t>(inv_freq.size());
  }
  std::vector<int64_t> ids;
  if (!args.positions.empty()) {
    const npy::Array a = LoadOrThrow("--positions", args.positions);
    const size_t rank = a.shape.size();
    if ((a.descr != "<i4" && a.descr != "<i8") || (rank != 2 && rank != 3) ||
        a.shape[rank - 2] != batch || a.shape[rank - 1] != seq) {
      throw UsageError("--positions " + args.positions + ": must be int32/int64 [batch, seq] = (" +
                       std::to_string(batch) + ", " + std::to_string(seq) +
                       ") or, for M-RoPE, [streams, batch, seq], got '" + a.descr + "' " +
                       ShapeOf(a));
    }
    ids = npy::ToInt64(a);
    // [3, batch, seq]: M-RoPE streams (t, h, w), for a config with mrope_section or --mrope-section.
    p.positions = rank == 3 ? Positions::StreamIds(ids.data(), a.shape[0])
                            : Positions::Ids(ids.data());
  } else {
    p.positions = Positions::Offset(args.offset);
  }
  npy::Array cos, sin;
  if (!args.cos.empty()) {
    cos = LoadOrThrow("--cos", args.cos);
    sin = LoadOrThrow("--sin", args.sin);
    CosSinCache cache;
    if (cos.shape != sin.shape || cos.descr != sin.descr || !DTypeOfDescr(cos.descr, &cache.dtype)) {
      throw UsageError("--cos/--sin: must be arrays of one shape and one dtype ('<f4', '<f2' or "
                       "'<u2' bf16 bits), got '" + cos.descr + "' " + ShapeOf(cos) + " and '" +
                       sin.descr + "' " + ShapeOf(sin));
    }
    cache.cos = cos.bytes.data();
    cache.sin = sin.bytes.data();
    if (cos.shape.size() == 2 && cos.shape[1] == half) {
      cache.kind = CosSinCache::Kind::kByPosition;
      cache.rows = cos.shape[0];
    } else if (cos.shape.size() == 3 && cos.shape[0] == batch && cos.shape[1] == seq &&
               cos.shape[2] == half) {
      cache.kind = CosSinCache::Kind::kPerToken;
    } else {
      throw UsageError("--cos " + args.cos + ": shape " + ShapeOf(cos) + " is neither [max_pos, " +
                       std::to_string(half) + "] nor [batch, seq, rotary_dim/2] = [" +
                       std::to_string(batch) + ", " + std::to_string(seq) + ", " +
                       std::to_string(half) + "]");
    }
    p.source = CosSinSource::Cache(cache);
  }

  if (!args.mrope_section.empty()) {
    p.mrope = {args.mrope_section.data(), static_cast<int64_t>(args.mrope_section.size()),
               args.mrope_interleaved};
  }
  Status st;
  if (!args.config.empty()) {
    ModelRope model;
    st = LoadHfModel(args.config, &model);
    if (!st.ok()) throw UsageError(st.message());
    const RopeConfig& config = SelectLayerType(model, args.layer_type).config;
    if (p.pairs == PairLayout::kFromConfig) p.pairs = config.pairs;
    RopeFrequencies f;
    if (args.seq_len >= 0) {  // explicit length: frequencies for it
      st = ComputeFrequencies(config, args.seq_len, &f);
      if (!st.ok()) throw UsageError(st.message());
      if (args.rotary_dim != 0 && args.rotary_dim != f.rotary_dim) {
        throw UsageError("--rotary-dim " + std::to_string(args.rotary_dim) +
                         ": the config gives rotary_dim = " + std::to_string(f.rotary_dim));
      }
      p.rotary_dim = f.rotary_dim;
      p.freqs.inv_freq = f.inv_freq.data();
      p.freqs.inv_freq_len = static_cast<int64_t>(f.inv_freq.size());
      p.freqs.attention_factor = f.attention_factor;
      if (!p.mrope.present() && config.mrope.present()) {
        p.mrope = {config.mrope.section.data(), static_cast<int64_t>(config.mrope.section.size()),
                   config.mrope.interleaved};
      }
      st = ApplyRope(t, p);
    } else {  // the library derives the length from the positions
      st = ApplyRope(t, config, p);
    }
  } else {
    st = ApplyRope(t, p);
  }
  if (!st.ok()) throw UsageError(st.message());
  SaveOutputs(out, t.k.present(), args.out_q, args.out_k);
}

}  // namespace

QKOutputs AttachOutputs(const npy::Array& q, const npy::Array& k, RopeTensors* t) {
  QKOutputs out{{q.descr, q.shape, std::vector<unsigned char>(q.bytes.size())},
                {k.descr, k.shape, std::vector<unsigned char>(k.bytes.size())}};
  t->q_out = t->q;
  t->q_out.data = out.q.bytes.data();
  if (t->k.present()) {
    t->k_out = t->k;
    t->k_out.data = out.k.bytes.data();
  }
  return out;
}

void SaveOutputs(const QKOutputs& out, bool with_k, const std::string& path_q,
                 const std::string& path_k) {
  std::string err = npy::Save(path_q, out.q);
  if (err.empty() && with_k) {
    err = npy::Save(path_k, out.k);
    if (!err.empty()) std::remove(path_q.c_str());
  }
  if (!err.empty()) throw std::runtime_error(err);
}

void AddRope(CLI::App& app) {
  auto args = std::make_shared<RopeArgs>();
  CLI::App* cmd = app.add_subcommand("rope", "Apply RoPE to .npy tensors (f32, bf16, f16)");
  cmd->add_option("--q", args->q, "q tensor (.npy)")->required();
  cmd->add_option("--k", args->k, "k tensor (.npy)");
  cmd->add_option("--dtype", args->dtype, "f32 ('<f4'), bf16 ('<u2' bit patterns) or f16 ('<f2')")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  cmd->add_option("--layout", args->layout, "bshd, bhsd or bsd ([batch, seq, heads*head_dim])")
      ->check(CLI::IsMember({"bshd", "bhsd", "bsd"}));
  cmd->add_option("--num-heads", args->num_heads, "q heads (layout bsd)");
  cmd->add_option("--num-kv-heads", args->num_kv_heads, "k heads (layout bsd; default --num-heads)");
  cmd->add_option("--pairs", args->pairs,
                  "half (NeoX/HF) or interleaved (GPT-J/Meta); default: the config's layout, else half")
      ->check(CLI::IsMember({"half", "interleaved"}));
  cmd->add_option("--rotary-dim", args->rotary_dim, "rotated channels (default head_dim)");
  CLI::Option* base = cmd->add_option("--base", args->base, "rope_theta (default 10000)");
  CLI::Option* inv = cmd->add_option("--inv-freq", args->inv_freq, "1-D inv_freq (.npy, f64/f32)");
  CLI::Option* cos = cmd->add_option("--cos", args->cos, "cos cache [max_pos, R/2] or [batch, seq, R/2]");
  CLI::Option* sin = cmd->add_option("--sin", args->sin, "sin cache, same shape as --cos");
  CLI::Option* pos = cmd->add_option(
      "--positions", args->positions,
      "position ids [batch, seq], or M-RoPE streams [3, batch, seq] (int32/int64)");
  CLI::Option* section = cmd->add_option(
      "--mrope-section", args->mrope_section,
      "M-RoPE pairs per stream, e.g. 16,24,24 (default: a config's mrope_section)")->delimiter(',');
  cmd->add_flag("--mrope-interleaved", args->mrope_interleaved,
                "Qwen3-VL interleaved M-RoPE (with --mrope-section)")->needs(section);
  CLI::Option* off = cmd->add_option("--offset", args->offset, "first position (default 0)");
  CLI::Option* factor =
      cmd->add_option("--attention-factor", args->attention_factor, "multiplies cos and sin");
  cmd->add_flag("--inverse", args->inverse, "rotate by -theta");
  CLI::Option* config =
      cmd->add_option("--config", args->config, "HF config.json: frequencies, factor, rotary_dim");
  CLI::Option* seq_len = cmd->add_option(
      "--seq-len", args->seq_len, "sequence length for --config (default: largest position + 1)");
  CLI::Option* layer_type = cmd->add_option(
      "--layer-type", args->layer_type, "RoPE layer type for --config (required when the types differ)");
  layer_type->needs(config);
  config->excludes(base)->excludes(inv)->excludes(cos)->excludes(factor);
  seq_len->needs(config);
  cmd->add_option("--out-q", args->out_q, "output for q (.npy)")->required();
  cmd->add_option("--out-k", args->out_k, "output for k (.npy)");
  base->excludes(inv)->excludes(cos);
  inv->excludes(cos);
  factor->excludes(cos);
  cos->needs(sin);
  sin->needs(cos);
  pos->excludes(off);
  cmd->callback([args] { RunRope(*args); });
}

}  // namespace cli
}  // namespace posenc
