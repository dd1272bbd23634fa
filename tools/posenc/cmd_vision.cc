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
  double theta = 10000.0;
};

npy::Array Load(const std::string& flag, const std::string& path) {
  npy::Array a;
  const std::string err = npy::Load(path, &a);
  if (!err.empty()) throw UsageError(flag + " " + path + ": " + err);
  if (flag != "--positions" && (a.descr != "<f4" || a.shape.size() != 4)) {
    throw UsageError(flag + " " + path + ": must be float32 [batch, patches, heads, head_dim]");
  }
  return a;
}

void RunVision(const VisionArgs& args) {
  if (!args.k.empty() && args.out_k.empty()) throw UsageError("--k needs --out-k FILE");
  if (args.positions.empty() == args.grid.empty()) {
    throw UsageError("exactly one of --positions FILE and --grid T,H,W is required");
  }
  npy::Array q = Load("--q", args.q), k;
  RopeTensors t;
  t.q = TensorBSHD(q.bytes.data(), DType::kF32, q.shape[0], q.shape[1], q.shape[2], q.shape[3]);
  if (!args.k.empty()) {
    k = Load("--k", args.k);
    t.k = TensorBSHD(k.bytes.data(), DType::kF32, k.shape[0], k.shape[1], k.shape[2], k.shape[3]);
  }
  QKOutputs out = AttachOutputs(q, k, &t);  // t.q_out / t.k_out point into out
  VisionRopeParams p;
  p.kind = args.kind == "pixtral" ? VisionRopeKind::kPixtral : VisionRopeKind::kQwenVL;
  p.theta = args.theta;
  std::vector<int64_t> rc;
  if (!args.grid.empty()) {
    if (args.grid.size() != 3) throw UsageError("--grid: needs three values T,H,W");
    const Status st = VisionGridPositions(p.kind, args.grid[0], args.grid[1], args.grid[2],
                                          p.kind == VisionRopeKind::kPixtral ? 1 : args.merge, &rc);
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
      "2-D vision RoPE (Qwen-VL towers, Pixtral) on f32 .npy [batch, patches, heads, head_dim]");
  cmd->add_option("--q", args->q, "q tensor (.npy)")->required();
  cmd->add_option("--k", args->k, "k tensor (.npy)");
  cmd->add_option("--kind", args->kind, "qwen (Qwen2/2.5/3-VL vision) or pixtral")
      ->check(CLI::IsMember({"qwen", "pixtral"}));
  cmd->add_option("--theta", args->theta, "rope theta (default 10000)");
  cmd->add_option("--positions", args->positions,
                  "(row, col) per patch [batch, patches, 2] (int32/int64)");
  cmd->add_option("--grid", args->grid, "T,H,W patches (HF's patch order)")->delimiter(',');
  cmd->add_option("--merge", args->merge, "spatial_merge_size for qwen --grid (default 2)");
  cmd->add_option("--out-q", args->out_q, "output for q (.npy)")->required();
  cmd->add_option("--out-k", args->out_k, "output for k (.npy)");
  cmd->callback([args] { RunVision(*args); });
}

}  // namespace cli
}  // namespace posenc
