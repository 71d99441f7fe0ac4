# Sourced by build.sh and test.sh: `configure DIR CMAKE_ARGS...` configures
# DIR with Ninja when DIR is new. Ninja starts a target's compiles while the
# libraries it links are still building, where make waits target by target:
# the suite's three builds took ~14 minutes of CI with make. A folder made
# earlier keeps its generator (cmake refuses to switch one).
configure() {
  local dir=$1
  shift
  local generator=()
  [ -f "$dir/CMakeCache.txt" ] || generator=(-G Ninja)
  cmake "${generator[@]}" -S . -B "$dir" "$@" >/dev/null
}
