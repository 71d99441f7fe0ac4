#!/usr/bin/env bash
# Configures and builds lowbit (Release) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/configure.sh
configure build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target lowbit "$@"
