// Dispatch TU: fused re-rotation (RerotateRope) on f16 tensors.
#define POSENC_DTYPE F16
#define HWY_TARGET_INCLUDE "lib/kernels/rerotate_f16.cc"
#include "lib/kernels/rerotate_static-inl.h"
