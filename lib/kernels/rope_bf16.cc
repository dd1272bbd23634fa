// Dispatch TU: RoPE and M-RoPE on bf16 tensors (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE BF16
#define HWY_TARGET_INCLUDE "lib/kernels/rope_bf16.cc"
#include "lib/kernels/rope_static-inl.h"
