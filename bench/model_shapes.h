// Attention shapes of real models, shared by the benchmarks and the CLI.
#ifndef POSENC_BENCH_MODEL_SHAPES_H_
#define POSENC_BENCH_MODEL_SHAPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/rope.h"

namespace posenc {
namespace bench {

struct ModelShape {
  std::string name;     // short id used in benchmark names ("llama3-8b")
  int64_t q_heads;
  int64_t kv_heads;
  int64_t head_dim;
  int64_t rotary_dim;   // == head_dim unless partial rotary
  PairLayout pairs;     // the layout the model itself uses
  double rope_theta;
};

// Llama-2-7B, Llama-3-8B, Mistral-7B, Qwen2.5-7B, Phi-3-mini, GPT-J-6B, Pythia-1.4B.
const std::vector<ModelShape>& ModelShapes();
// The shape named `name`, or nullptr.
const ModelShape* FindModelShape(const std::string& name);

}  // namespace bench
}  // namespace posenc

#endif  // POSENC_BENCH_MODEL_SHAPES_H_
