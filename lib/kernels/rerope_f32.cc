// Dispatch TU: RelativeRopeScores tiles on f32 q/k (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE F32
#define HWY_TARGET_INCLUDE "lib/kernels/rerope_f32.cc"
#include "lib/kernels/rerope_static-inl.h"
