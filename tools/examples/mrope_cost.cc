// Repeatable cost of M-RoPE against plain RoPE (for valgrind --tool=callgrind, whose instruction
// counts do not depend on other load): Qwen2.5-VL-7B shapes (28 q heads, 4 kv heads, head_dim
// 128, sections [16, 24, 24]), 512 tokens, serial, 10 calls of one variant:
//   mrope_cost_example plain | mrope_text | mrope_image | vision
// (vision: the Qwen2.5-VL vision tower, 16 heads, head_dim 80, 1024 patches). README gives the
// command and the counts.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/rope.h"
#include "posenc/vision.h"

int main(int argc, char** argv) {
  const std::string v = argc > 1 ? argv[1] : "plain";
  const bool vision = v == "vision";
  const int64_t tokens = vision ? 1024 : 512, q_heads = vision ? 16 : 28;
  const int64_t kv_heads = vision ? 16 : 4, head_dim = vision ? 80 : 128;
  std::vector<float> q(static_cast<size_t>(tokens * q_heads * head_dim), 0.5f);
  std::vector<float> k(static_cast<size_t>(tokens * kv_heads * head_dim), 0.25f);
  posenc::RopeTensors t;
  t.q = posenc::TensorBSHD(q.data(), 1, tokens, q_heads, head_dim);
  t.k = posenc::TensorBSHD(k.data(), 1, tokens, kv_heads, head_dim);
  const int64_t section[3] = {16, 24, 24};
  std::vector<int64_t> ids(static_cast<size_t>(3 * tokens));
  for (int64_t s = 0; s < tokens; ++s) {
    const bool image = v == "mrope_image" && s >= 16 && s < tokens - 16;
    ids[s] = image ? 16 : s;
    ids[tokens + s] = image ? 16 + (s - 16) / 32 : s;
    ids[2 * tokens + s] = image ? 16 + (s - 16) % 32 : s;
  }
  posenc::RopeParams p;
  p.freqs.base = 1e6;
  p.exec.max_threads = 1;
  if (v != "plain") {
    p.mrope = {section, 3, false};
    p.positions = posenc::Positions::StreamIds(static_cast<const int64_t*>(ids.data()), 3);
  }
  std::vector<int64_t> grid;
  posenc::VisionRopeParams vp;
  vp.exec.max_threads = 1;
  if (vision) {
    if (!posenc::VisionGridPositions(posenc::VisionRopeKind::kQwenVL, 1, 32, 32, 2, &grid).ok())
      return 1;
    vp.rows_cols64 = grid.data();
  }
  for (int i = 0; i < 10; ++i) {
    const posenc::Status st = vision ? posenc::ApplyVisionRope(t, vp) : posenc::ApplyRope(t, p);
    if (!st.ok()) {
      std::printf("%s\n", st.message().c_str());
      return 1;
    }
  }
  std::printf("%s: 10 calls done (q[1] = %g)\n", v.c_str(), static_cast<double>(q[1]));
  return 0;
}
