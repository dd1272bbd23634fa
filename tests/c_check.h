/* The checks of the C API tests (C99): CHECK counts a passed or failed condition and prints the
 * failed ones with the library's last error; CHECK_ERROR: the call fails with `code` and its
 * message contains `needle`. Each test file defines `passed` and `failed` through
 * C_CHECK_COUNTERS and prints "N passed, N failed" at the end. */
#ifndef POSENC_TESTS_C_CHECK_H_
#define POSENC_TESTS_C_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "posenc/posenc.h"

#define C_CHECK_COUNTERS static int passed = 0, failed = 0

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      printf("FAILED %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
             posenc_last_error());                                             \
    }                                                                          \
  } while (0)

#define CHECK_ERROR(call, code, needle)                   \
  do {                                                    \
    posenc_status st_ = (call);                           \
    CHECK(st_ == (code));                                 \
    CHECK(strstr(posenc_last_error(), (needle)) != NULL); \
  } while (0)

#endif /* POSENC_TESTS_C_CHECK_H_ */
