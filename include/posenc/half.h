// posenc/half.h: bf16 and f16 conversions, round to nearest even on every SIMD target.
//
// Storage formats: bf16 = the upper 16 bits of an IEEE f32; f16 = IEEE binary16. posenc stores
// them as uint16_t bit patterns. Rounding to either is round-to-nearest-even of the f32 value;
// overflow becomes +-Inf, +-Inf stays, subnormals are produced and read exactly. NaN stays NaN:
// bf16 keeps the sign and top payload bits and sets the quiet bit ((bits >> 16) | 0x0040); f16
// does the same (sign | 0x7E00 | top 10 mantissa bits, as x86 F16C), and f16 -> f32 quiets NaNs.
#ifndef POSENC_HALF_H_
#define POSENC_HALF_H_

#include "posenc/export.h"

#include <cstddef>
#include <cstdint>

#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {

// n elements of `dtype` (f32, bf16 or f16 bits) to f32 / from f32, with the best SIMD target.
// Bitwise identical on every target. src and dst must not partially overlap.
POSENC_API Status ConvertToF32(const void* src, DType dtype, size_t n, float* dst);
POSENC_API Status ConvertFromF32(const float* src, size_t n, DType dtype, void* dst);

}  // namespace posenc

// The double-precision oracles of this header's calls (posenc::reference).
#include "posenc/reference.h"

#endif  // POSENC_HALF_H_
