#!/usr/bin/env bash
# Installs lowbit's build and test dependencies, all from Debian 12 packages.
# Nothing is downloaded at build or run time.
set -euo pipefail
pkgs=(
  g++ cmake make ninja-build pkg-config
  libpcre2-dev          # Llama 3 pre-tokenizer regex
  nlohmann-json3-dev    # tokenizer.json reader
  libcli11-dev          # command-line arguments
  libgtest-dev libgmock-dev googletest
  libbenchmark-dev      # bench/ micro-benchmarks
)
# On x86-64, the 64-bit Arm build too (scripts/test.sh's last stage): a cross
# compiler, qemu to run its tests, and the libraries for arm64 (multiarch).
cross=0
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  cross=1
  pkgs+=(g++-aarch64-linux-gnu qemu-user
         libpcre2-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libbenchmark-dev:arm64)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if [ $cross -eq 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
