// Dispatch TU: fused re-rotation (RerotateRope) on f32 tensors.
#define POSENC_DTYPE F32
#define HWY_TARGET_INCLUDE "lib/kernels/rerotate_f32.cc"
#include "lib/kernels/rerotate_static-inl.h"
