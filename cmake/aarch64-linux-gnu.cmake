# Cross-compiling posenc for aarch64 (Debian multiarch: g++-aarch64-linux-gnu and the :arm64
# -dev packages), running the tests under QEMU user emulation.
#
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   QEMU_CPU=max,sve-default-vector-length=64 ctest --test-dir build/aarch64
#
# The emulator runs with -L / (the multiarch libc6:arm64 and its own loader). With
# -L /usr/aarch64-linux-gnu the cross toolchain's loader meets the multiarch libc of another
# build and any program that creates a thread hangs. QEMU_CPU (read by qemu-aarch64) picks the
# CPU model and the SVE vector length in bytes (16, 32, 64, 256); every test has a timeout.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
# Headers are shared (/usr/include); libraries and CMake packages come from the arm64 multiarch
# directories only.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
