#!/usr/bin/env bash
# A third party builds a CMake project with find_package(Aspen) (its program with the library
# targets, its codelets with Aspen::popc), from a scratch directory outside the source tree: first against the build tree's SDK (build/sdk), then against a
# prefix made by `cmake --install`, which is also checked to be a complete SDK tree.
#
#   client_find_package.sh <sdk dir> <aspen build dir> <client source dir> <generator> <c++>
set -euo pipefail

sdk=$(cd "$1" && pwd -P)
build_dir=$2
client_src=$3
generator=$4
cxx=$5

scratch=$(mktemp -d "${TMPDIR:-/tmp}/aspen-find-package.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp -r "$client_src" "$scratch/client"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The client must find Aspen only through the prefix it is given.
unset POPLAR_SDK_ENABLED CPATH LIBRARY_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH Aspen_DIR

# Configures, builds and runs the client against the Aspen package under <prefix>.
build_and_run() {
  local prefix=$1 dir=$2
  echo "+ find_package(Aspen) with CMAKE_PREFIX_PATH=$prefix"
  cmake -S "$scratch/client" -B "$dir" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; fail "configuring the client against $prefix"; }
  local found
  found=$(sed -n 's/^Aspen_DIR:PATH=//p' "$dir/CMakeCache.txt")
  [[ $found == "$prefix/lib/cmake/Aspen" ]] || fail "found Aspen in '$found', not under $prefix"
  cmake --build "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; fail "building the client"; }
  "$dir/prog" --codelets "$dir/codelets.gp" | tee "$dir.out"
  grep -q '^client OK.*codelets added' "$dir.out" || fail "the client built against $prefix did not report success"
}

build_and_run "$sdk" "$scratch/against-build-tree"

prefix=$scratch/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$scratch/install.log" 2>&1 ||
  { cat "$scratch/install.log"; fail "cmake --install"; }
# The installed tree has the SDK's layout and the same public headers, no private ones.
for path in enable.sh lib/libpoplar.so lib/cmake/Aspen/AspenConfig.cmake include/poplar/Graph.hpp; do
  [[ -e $prefix/$path ]] || fail "the installed prefix has no $path"
done
diff -r "$sdk/include" "$prefix/include" || fail "installed headers differ from the SDK tree's"
for exe in "$sdk"/bin/*; do
  [[ -e $exe ]] || continue
  [[ -x $prefix/bin/$(basename "$exe") ]] || fail "the installed prefix has no bin/$(basename "$exe")"
done
for lib in "$sdk"/lib/*.so "$sdk"/lib/*.gp; do
  [[ -e $lib ]] || continue
  [[ -e $prefix/lib/$(basename "$lib") ]] || fail "the installed prefix has no lib/$(basename "$lib")"
done

build_and_run "$prefix" "$scratch/against-install"

# The installed enable.sh serves a Makefile build too, with no trace of the build tree.
(
  # shellcheck source=/dev/null
  source "$prefix/enable.sh"
  [[ $POPLAR_SDK_ENABLED == "$(cd "$prefix" && pwd -P)" ]] || fail "installed enable.sh points elsewhere"
  cd "$scratch/client"
  read -r -a client_flags <<<"${ASPEN_CLIENT_FLAGS:-}" # a sanitized SDK: see client_enable_sh.sh
  "${ASPEN_CLIENT_CXX:-g++}" -std=c++11 "${client_flags[@]}" prog.cpp -lpoplar -o prog-installed
  ./prog-installed | grep -q '^client OK' || fail "Makefile-style build against the installed prefix"
)

echo "PASSED: find_package(Aspen) from the build tree and from an installed prefix"
