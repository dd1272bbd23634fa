// Bandwidth baselines measured on the same bytes as the kernel under test.
#ifndef POSENC_BENCH_BANDWIDTH_H_
#define POSENC_BENCH_BANDWIDTH_H_

#include <cstddef>

namespace posenc {
namespace bench {

// x[i] *= scale for i < n, in place (reads and writes every byte once, like RoPE in place), with
// the best SIMD target of this CPU.
void ScaleInPlace(float* x, size_t n, float scale);

// x[i] += t[i] for i < n, in place (reads x and t, writes x: the traffic of a fused add from a
// table of the same size), with the best SIMD target of this CPU.
void AddInPlace(float* x, const float* t, size_t n);

}  // namespace bench
}  // namespace posenc

#endif  // POSENC_BENCH_BANDWIDTH_H_
