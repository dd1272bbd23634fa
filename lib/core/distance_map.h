// Internal: the distance maps of RelativeRopeScores (posenc/rerope.h) in scalar double, shared by
// the tile kernels, the validation of lib/api and posenc::reference (lib/core/distance_map.cc).
#ifndef POSENC_LIB_CORE_DISTANCE_MAP_H_
#define POSENC_LIB_CORE_DISTANCE_MAP_H_

#include <cstdint>

#include "posenc/rerope.h"

namespace posenc {
namespace kernels {

// f(a) for a distance a >= 0 (DistanceMap semantics), in double: kExact a; kCap min(a, w);
// kLeaky w + (a - w) / leak beyond w; kLog w * (1 + LnOfDistanceRatio(a / w)) beyond w. The map
// is valid (validated by lib/api).
double MappedDistance(const DistanceMap& map, int64_t a);

// Natural logarithm of finite x >= 1 from exactly rounded +, -, *, / only (frexp reduction, an
// atanh series), so every machine gives the same bits; within 3 ulp of ln(x) (tested).
double DeterministicLn(double x);

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_CORE_DISTANCE_MAP_H_
