// Dispatch TU: RelativeRopeScores tiles on bf16 q/k (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE BF16
#define HWY_TARGET_INCLUDE "lib/kernels/rerope_bf16.cc"
#include "lib/kernels/rerope_static-inl.h"
