// posenc vision-rope: 2-D vision RoPE (posenc/vision.h) on a .npy q (and k), f32.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "posenc/rope.h"
#include "posenc/vision.h"
#include "tools/posenc/cli.h"
#include "tools/posenc/npy.h"

namespace posenc {
namespace cli {
namespace {

struct VisionArgs {
  std::string q, k, out_q, out_k, positions, kind = "qwen";
  std::vector<int64_t> grid;  // t,h,w
  int64_t merge = 2;
  int64_t window_size = 0;  // qwen --grid: > 0 gives Qwen2.5-VL's window order
  int64_t patch_size = 14;
  double theta = 10000.0;
  std::string config;  // a config.json: kind, theta, merge, window and patch size from it
  bool kind_given = false, theta_given = false, merge_given = false, window_given = false,
       patch_given = false;
};

// --config's vision tower, for the flags the command line does not give.
void ApplyConfig(VisionArgs* args, int64_t head_dim) {
  VisionRopeConfig c;
  const Status st = LoadHfVisionConfig(args->config, &c);
  if (!st.ok()) throw UsageError("--config " + st.message());
  if (c.head_dim != head_dim) {
    throw UsageError("--config " + args->config + ": the vision tower's head_dim is " +
                     std::to_string(c.head_dim) + " but --q has head_dim " + std::to_string(head_dim));
  }
  if (!args->kind_given) {
    args->kind = c.kind == VisionRopeKind::kPixtral  ? "pixtral"
                 : c.kind == VisionRopeKind::kLlama4 ? "llama4"
                                                     : "qwen";
  }
  if (!args->theta_given) args->theta = c.theta;
  if (!args->merge_given) args->merge = c.spatial_merge_size;
  // Qwen2.5-VL applies RoPE in its window order: --grid follows it unless --window-size says.
  if (!args->window_given && !args->grid.empty()) args->window_size = c.window_size;
  if (!args->patch_given) args->patch_size = c.patch_size;
}

npy::Array Load(const std::string& flag, const std::string& path) {
  npy::Array a;
  const std::string err = npy::Load(path, &a);
  if (!err.empty()) throw UsageError(flag + " " + path + ": " + err);
  if (flag != "--positions" && (a.descr != "<f4" || a.shape.size() != 4)) {
    throw UsageError(flag + " " + path + ": must be float32 [batch, patches, heads, head_dim]");
  }
  return a;
}

void RunVision(VisionArgs args) {
  if (!args.k.empty() && args.out_k.empty()) throw UsageError("--k needs --out-k FILE");
  if (args.positions.empty() == args.grid.empty()) {
    throw UsageError("exactly one of --positions FILE and --grid T,H,W is required");
  }
  npy::Array q = Load("--q", args.q), k;
  if (!args.config.empty()) ApplyConfig(&args, q.shape[3]);
  RopeTensors t;
  t.q = TensorBSHD(q.bytes.data(), DType::kF32, q.shape[0], q.shape[1], q.shape[2], q.shape[3]);
  if (!args.k.empty()) {
    k = Load("--k", args.k);
    t.k = TensorBSHD(k.bytes.data(), DType::kF32, k.shape[0], k.shape[1], k.shape[2], k.shape[3]);
  }
  QKOutputs out = AttachOutputs(q, k, &t);  // t.q_out / t.k_out point into out
  VisionRopeParams p;
  p.kind = args.kind == "pixtral"  ? VisionRopeKind::kPixtral
           : args.kind == "llama4" ? VisionRopeKind::kLlama4
                                   : VisionRopeKind::kQwenVL;
  p.theta = args.theta;
  std::vector<int64_t> rc;
  if (args.window_size != 0 && (p.kind != VisionRopeKind::kQwenVL || args.grid.empty())) {
    throw UsageError("--window-size: only with --kind qwen and --grid (Qwen2.5-VL window order)");
  }
  if (!args.grid.empty()) {
    if (args.grid.size() != 3) throw UsageError("--grid: needs three values T,H,W");
    Status st;
    if (args.window_size != 0) {
      VisionWindowOrder order;
      st = VisionWindowedGridPositions(args.grid[0], args.grid[1], args.grid[2], args.merge,
                                       args.window_size, args.patch_size, &order);
      rc = std::move(order.rows_cols);
    } else {
      st = VisionGridPositions(p.kind, args.grid[0], args.grid[1], args.grid[2],
                               p.kind == VisionRopeKind::kQwenVL ? args.merge : 1, &rc);
    }
    if (!st.ok()) throw UsageError(st.message());
    if (static_cast<int64_t>(rc.size() / 2) != q.shape[1]) {
      throw UsageError("--grid gives " + std::to_string(rc.size() / 2) + " patches but --q has " +
                       std::to_string(q.shape[1]));
    }
    const std::vector<int64_t> one = rc;  // every batch row: the same image grid
    for (int64_t b = 1; b < q.shape[0]; ++b) rc.insert(rc.end(), one.begin(), one.end());
  } else {
    const npy::Array a = Load("--positions", args.positions);
    if ((a.descr != "<i4" && a.descr != "<i8") || a.shape.size() != 3 || a.shape[0] != q.shape[0] ||
        a.shape[1] != q.shape[1] || a.shape[2] != 2) {
      throw UsageError("--positions " + args.positions +
                       ": must be int32/int64 [batch, patches, 2] (row, col)");
    }
    rc = npy::ToInt64(a);
  }
  p.rows_cols64 = rc.data();
  const Status st = ApplyVisionRope(t, p);
  if (!st.ok()) throw UsageError(st.message());
  SaveOutputs(out, t.k.present(), args.out_q, args.out_k);
}

}  // namespace

void AddVisionRope(CLI::App& app) {
  auto args = std::make_shared<VisionArgs>();
  CLI::App* cmd = app.add_subcommand(
      "vision-rope",
      "2-D vision RoPE (Qwen-VL towers, Pixtral, Llama 4) on f32 .npy [batch, patches, heads, "
      "head_dim]");
  cmd->add_option("--q", args->q, "q tensor (.npy)")->required();
  cmd->add_option("--k", args->k, "k tensor (.npy)");
  cmd->add_option("--kind", args->kind,
                  "qwen (Qwen2/2.5/3-VL vision), pixtral or llama4 (CLS token: (-1, -1))")
      ->check(CLI::IsMember({"qwen", "pixtral", "llama4"}));
  cmd->add_option("--theta", args->theta, "rope theta (default 10000)");
  cmd->add_option("--positions", args->positions,
                  "(row, col) per patch [batch, patches, 2] (int32/int64)");
  cmd->add_option("--grid", args->grid,
                  "T,H,W patches (HF's patch order; llama4: 1,H,W and the CLS token last)")
      ->delimiter(',');
  cmd->add_option("--merge", args->merge, "spatial_merge_size for qwen --grid (default 2)");
  cmd->add_option("--window-size", args->window_size,
                  "qwen --grid in Qwen2.5-VL's window order (window_size, e.g. 112; default 0: "
                  "rot_pos_emb order)");
  cmd->add_option("--patch-size", args->patch_size, "patch_size for --window-size (default 14)");
  cmd->add_option("--config", args->config,
                  "a model's config.json: the vision tower's kind, theta, merge, window and patch "
                  "size (flags given on the command line win)");
  cmd->add_option("--out-q", args->out_q, "output for q (.npy)")->required();
  cmd->add_option("--out-k", args->out_k, "output for k (.npy)");
  cmd->callback([args, cmd] {
    args->kind_given = cmd->count("--kind") > 0;
    args->theta_given = cmd->count("--theta") > 0;
    args->merge_given = cmd->count("--merge") > 0;
    args->window_given = cmd->count("--window-size") > 0;
    args->patch_given = cmd->count("--patch-size") > 0;
    RunVision(*args);
  });
}

}  // namespace cli
}  // namespace posenc
