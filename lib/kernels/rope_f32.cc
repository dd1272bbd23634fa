// Dispatch TU: RoPE and M-RoPE on f32 tensors (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE F32
#define HWY_TARGET_INCLUDE "lib/kernels/rope_f32.cc"
#include "lib/kernels/rope_static-inl.h"
