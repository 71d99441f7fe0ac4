# Sourced by build.sh and test.sh: `configure DIR CMAKE_ARGS...` configures
# DIR with Ninja when DIR is new. Ninja starts a target's compiles while the
# libraries it links are still building, where make waits target by target;
# on this 2-core machine the whole suite was no faster for it (14.6 against
# 14.3 minutes with make, within the host's run-to-run spread), so it is a
# convenience, not what brought CI under budget (docs/performance.md,
# session 23). A folder made earlier keeps its generator (cmake refuses to
# switch one).
configure() {
  local dir=$1
  shift
  local generator=()
  [ -f "$dir/CMakeCache.txt" ] || generator=(-G Ninja)
  cmake "${generator[@]}" -S . -B "$dir" "$@" >/dev/null
}
