// Internal: reading and writing single elements of any dtype in the reference, in double.
#ifndef POSENC_LIB_REFERENCE_ELEMENTS_H_
#define POSENC_LIB_REFERENCE_ELEMENTS_H_

#include <cstdint>

#include "posenc/half.h"
#include "posenc/tensor.h"

namespace posenc {
namespace reference {

// Element i of a buffer of `dtype`, widened exactly to double.
inline double ReadElement(const void* base, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::kBF16: return BF16ToDouble(static_cast<const uint16_t*>(base)[i]);
    case DType::kF16: return F16ToDouble(static_cast<const uint16_t*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

// Rounds v once (to nearest even) to `dtype` and stores it as element i.
inline void WriteElement(void* base, DType dtype, int64_t i, double v) {
  switch (dtype) {
    case DType::kBF16: static_cast<uint16_t*>(base)[i] = RoundToBF16(v); break;
    case DType::kF16: static_cast<uint16_t*>(base)[i] = RoundToF16(v); break;
    default: static_cast<float*>(base)[i] = static_cast<float>(v); break;
  }
}

}  // namespace reference
}  // namespace posenc

#endif  // POSENC_LIB_REFERENCE_ELEMENTS_H_
