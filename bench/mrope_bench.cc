// Multimodal rows of the suite (issue 12): Qwen2.5-VL-7B text attention (28 q heads, 4 kv heads,
// head_dim 128, M-RoPE sections [16, 24, 24], theta 1e6) with plain RoPE, M-RoPE on text-only
// tokens (three equal streams) and M-RoPE on an image + text row (distinct streams); and the
// Qwen2.5-VL vision tower (16 heads, head_dim 80) on a 1024-patch image (32 x 32 patches, HF's
// merge order). Counters as every row (bench_common.h): % of the same-run bandwidth baseline.
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "posenc/half.h"
#include "posenc/rope.h"
#include "posenc/targets.h"
#include "posenc/vision.h"

namespace posenc {
namespace bench {
namespace {

enum class Variant { kPlain, kMRopeText, kMRopeImage, kVisionQwen };
const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kPlain:
      return "plain";
    case Variant::kMRopeText:
      return "mrope_text_only";
    case Variant::kMRopeImage:
      return "mrope_image";
    case Variant::kVisionQwen:
      return "vision_qwen";
  }
  return "?";
}

const int64_t kSections[3] = {16, 24, 24};

struct MCase {
  Variant variant;
  int64_t tokens;
  std::string target;
  int threads;
};

void RunMCase(benchmark::State& state, const MCase& c, const Rounds& plan) {
  if (!SelectTarget(state, c.target)) return;
  const bool vision = c.variant == Variant::kVisionQwen;
  const int64_t q_heads = vision ? 16 : 28, kv_heads = vision ? 16 : 4;
  const int64_t head_dim = vision ? 80 : 128;
  Floats q(static_cast<size_t>(c.tokens * q_heads * head_dim)),
      k(static_cast<size_t>(c.tokens * kv_heads * head_dim));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& x : q) x = dist(rng);
  for (float& x : k) x = dist(rng);
  RopeTensors rt;
  rt.q = TensorBSHD(q.data(), 1, c.tokens, q_heads, head_dim);
  rt.k = TensorBSHD(k.data(), 1, c.tokens, kv_heads, head_dim);
  RopeParams p;
  p.freqs.base = 1e6;
  p.exec.max_threads = c.threads == 1 ? 1 : 0;
  // Ids [3, 1, tokens]: text-only (equal streams from 4000 on a decode step) or a 32-column
  // image block after 16 text tokens, then text.
  std::vector<int64_t> ids(static_cast<size_t>(3 * c.tokens));
  const int64_t start = c.tokens == 1 ? 4000 : 0;
  for (int64_t s = 0; s < c.tokens; ++s) {
    const bool image = c.variant == Variant::kMRopeImage && s >= 16 && s < c.tokens - 16;
    const int64_t patch = s - 16;
    ids[s] = image ? 16 : start + s;
    ids[c.tokens + s] = image ? 16 + patch / 32 : start + s;
    ids[2 * c.tokens + s] = image ? 16 + patch % 32 : start + s;
  }
  if (c.variant == Variant::kPlain) {
    p.positions = Positions::Offset(start);
  } else {
    p.mrope = {kSections, 3, false};
    p.positions = Positions::StreamIds(static_cast<const int64_t*>(ids.data()), 3);
  }
  std::vector<int64_t> grid;
  VisionRopeParams vp;
  if (vision) {
    (void)VisionGridPositions(VisionRopeKind::kQwenVL, 1, 32, c.tokens / 32, 2, &grid);
    vp.rows_cols64 = grid.data();
    vp.exec.max_threads = p.exec.max_threads;
  }
  auto call = [&] { return vision ? ApplyVisionRope(rt, vp) : ApplyRope(rt, p); };
  Status st = call();
  if (!st.ok()) {
    state.SkipWithError(st.message().c_str());
    return;
  }
  const std::vector<Floats*> buffers{&q, &k};  // built once: a pass allocates nothing
  const RowTimes times = TimeRow(
      state, plan, c.threads, [&] { ScalePass(buffers, c.threads); },
      [&] {
        st = call();
        benchmark::ClobberMemory();
      });
  (void)SetMaxTarget("");
  const double elements = static_cast<double>(q.size() + k.size());
  SetRowCounters(state, 8.0 * elements, elements, times, 0.0);
}

}  // namespace

void RegisterMRopeBenchmarks(bool quick) {
  const std::vector<std::string> targets = SupportedTargets();
  // Quick suite (CI): one thread, the decode step and 512 tokens of each text variant, the image
  // row at 512 and the vision tower: six rows, ~0.1 s each. Full suite: 1 and 2 threads, 4096 too.
  const std::vector<int> thread_counts = quick ? std::vector<int>{1} : std::vector<int>{1, 2};
  const std::vector<int64_t> token_counts =
      quick ? std::vector<int64_t>{1, 512} : std::vector<int64_t>{1, 512, 4096};
  const Rounds plan = RoundsFor(quick);
  for (int threads : thread_counts) {
    for (int64_t tokens : token_counts)
      for (Variant v : {Variant::kPlain, Variant::kMRopeText, Variant::kMRopeImage}) {
        if (tokens == 1 && (threads == 2 || v == Variant::kMRopeImage)) continue;
        Row row;
        row.model = "qwen2.5-vl-7b";
        row.tokens = tokens;
        row.pairs = VariantName(v);
        row.source = "on_the_fly";
        row.arithmetic = "f64";
        row.target = targets.front();
        row.threads = threads;
        const MCase c{v, tokens, targets.front(), threads};
        RegisterRoundsRow(row, [c, plan](benchmark::State& s) { RunMCase(s, c, plan); });
      }
    Row row;
    row.model = "qwen2.5-vl-vision";
    row.tokens = 1024;
    row.pairs = VariantName(Variant::kVisionQwen);
    row.source = "on_the_fly";
    row.arithmetic = "f64";
    row.target = targets.front();
    row.threads = threads;
    const MCase c{Variant::kVisionQwen, 1024, targets.front(), threads};
    RegisterRoundsRow(row, [c, plan](benchmark::State& s) { RunMCase(s, c, plan); });
  }
}

}  // namespace bench
}  // namespace posenc
