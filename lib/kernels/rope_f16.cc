// Dispatch TU: RoPE and M-RoPE on f16 tensors (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE F16
#define HWY_TARGET_INCLUDE "lib/kernels/rope_f16.cc"
#include "lib/kernels/rope_static-inl.h"
