# Cross-compiles lowbit for 64-bit Arm Linux with Debian's g++-aarch64-linux-gnu.
# Libraries come from Debian's arm64 multiarch packages (scripts/install-deps.sh);
# ctest runs the tests under qemu-aarch64 (scripts/test.sh's last stage):
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The loader and libraries come from the arm64 multiarch packages (/lib/ld-linux-aarch64.so.1):
# pointing qemu at the cross toolchain's own sysroot (-L) hung at start-up here.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
