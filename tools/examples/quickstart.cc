// The README's quick-start example, built and run by ctest (quickstart_example).
#include <cstdio>
#include <memory>
#include <vector>

#include "posenc/rope.h"
#include "posenc/targets.h"

int main() {
  // Llama-3-8B-shaped prefill: 16 tokens, 32 q heads and 8 kv heads of 128, [batch, seq, heads, dim].
  const int64_t tokens = 16, hq = 32, hkv = 8, dim = 128;
  std::vector<float> q(tokens * hq * dim, 0.5f), k(tokens * hkv * dim, 0.25f);

  posenc::RopeTensors t;
  t.q = posenc::TensorBSHD(q.data(), 1, tokens, hq, dim);  // in place (no q_out)
  t.k = posenc::TensorBSHD(k.data(), 1, tokens, hkv, dim);
  posenc::RopeParams p;
  p.pairs = posenc::PairLayout::kHalf;  // HF rotate_half / GPT-NeoX
  p.freqs.base = 500000.0;              // rope_theta
  p.positions = posenc::Positions::Offset(0);
  posenc::Status st = posenc::ApplyRope(t, p);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }

  // Decode step at position 16 from a table shared by all threads.
  std::shared_ptr<const posenc::RopeTable> table;
  st = posenc::RopeTable::Create(dim, p.freqs, 8192, &table);
  if (!st.ok()) return 1;
  std::vector<float> q1(hq * dim, 0.5f), k1(hkv * dim, 0.25f);
  posenc::RopeTensors step;
  step.q = posenc::TensorBSHD(q1.data(), 1, 1, hq, dim);
  step.k = posenc::TensorBSHD(k1.data(), 1, 1, hkv, dim);
  p.positions = posenc::Positions::Offset(tokens);
  p.source = posenc::CosSinSource::Table(table.get());
  st = posenc::ApplyRope(step, p);
  if (!st.ok()) return 1;

  // Errors name the argument and leave every output untouched.
  p.rotary_dim = 7;
  st = posenc::ApplyRope(step, p);
  std::printf("target %s; q[1][0] = %.6f; bad call: %s\n", posenc::ChosenTarget().c_str(),
              q[hq * dim], st.message().c_str());
  return st.ok() ? 1 : 0;
}
