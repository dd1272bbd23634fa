// Dispatch TU: sinusoidal encodings on f32 tensors (one TU per dtype so -j2 overlaps compilation).
#define POSENC_DTYPE F32
#define HWY_TARGET_INCLUDE "lib/kernels/sinusoidal_f32.cc"
#include "lib/kernels/sinusoidal_static-inl.h"
