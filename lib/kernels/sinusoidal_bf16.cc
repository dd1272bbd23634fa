// Dispatch TU: sinusoidal encodings on bf16 tensors (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE BF16
#define HWY_TARGET_INCLUDE "lib/kernels/sinusoidal_bf16.cc"
#include "lib/kernels/sinusoidal_static-inl.h"
