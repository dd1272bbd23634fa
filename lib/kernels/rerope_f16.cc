// Dispatch TU: RelativeRopeScores tiles on f16 q/k (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE F16
#define HWY_TARGET_INCLUDE "lib/kernels/rerope_f16.cc"
#include "lib/kernels/rerope_static-inl.h"
