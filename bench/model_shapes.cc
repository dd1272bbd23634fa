#include "bench/model_shapes.h"

namespace posenc {
namespace bench {

const std::vector<ModelShape>& ModelShapes() {
  static const std::vector<ModelShape> shapes = {
      {"llama2-7b", 32, 32, 128, 128, PairLayout::kHalf, 10000.0},
      {"llama3-8b", 32, 8, 128, 128, PairLayout::kHalf, 500000.0},
      {"mistral-7b", 32, 8, 128, 128, PairLayout::kHalf, 10000.0},
      {"qwen2.5-7b", 28, 4, 128, 128, PairLayout::kHalf, 1000000.0},
      {"phi3-mini", 32, 32, 96, 96, PairLayout::kHalf, 10000.0},
      {"gptj-6b", 16, 16, 256, 64, PairLayout::kInterleaved, 10000.0},
      {"pythia-1.4b", 16, 16, 128, 32, PairLayout::kHalf, 10000.0},  // rotary_pct 0.25
  };
  return shapes;
}

const ModelShape* FindModelShape(const std::string& name) {
  for (const ModelShape& m : ModelShapes()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace bench
}  // namespace posenc
