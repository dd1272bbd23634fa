// Dispatch TU: fused re-rotation (RerotateRope) on bf16 tensors.
#define POSENC_DTYPE BF16
#define HWY_TARGET_INCLUDE "lib/kernels/rerotate_bf16.cc"
#include "lib/kernels/rerotate_static-inl.h"
