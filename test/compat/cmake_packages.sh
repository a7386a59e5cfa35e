#!/usr/bin/env bash
# Issue 10 items 6 and 7: a Poplar user's build, unchanged, against Aspen's SDK tree:
#  - find_package(poplar) then target_link_libraries(app poplar popops poputil poplin popnn
#    poprand), and the same with find_package(poplibs);
#  - the PopLibs libraries record their dependencies (libpoplin.so NEEDs libpopops,
#    libpoputil, libpoplar), so `g++ prog.cpp -lpoplar -lpoputil -lpoplin` links;
#  - find_package(poplar) alone defines no target named popops, poputil, ... (a PopLibs build
#    defines its own), while the plain names still link as -lpopops;
#  - a project shaped like PopLibs' CMake (compat/poplibs_cmake): find_package(pva),
#    find_package(libpvti), find_package(GCCS) (targets gccs, popsolver, GCCS_CMAKE_DIR's
#    helpers), popc_bin, and its own popops/poputil libraries, built and its tests run;
#  - `popc --version`: the third word of the first line is the Poplar version, as build
#    scripts parse it (`popc --version | cut -d ' ' -f3 | head -1`).
#
# The find_package checks run against the build tree's SDK and against a `cmake --install` prefix.
#
#   cmake_packages.sh <sdk dir> <client source dir> <generator> <c++> <aspen build dir>
set -euo pipefail

sdk=$(cd "$1" && pwd -P)
client_src=$2
generator=$3
cxx=${ASPEN_CLIENT_CXX:-$4} # a sanitized SDK needs its clients built with the same runtime
build_dir=$5
read -r -a client_flags <<<"${ASPEN_CLIENT_FLAGS:-}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/aspen-compat-cmake.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp -r "$client_src" "$scratch/client"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

unset POPLAR_SDK_ENABLED CPATH LIBRARY_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH Aspen_DIR poplar_DIR poplibs_DIR \
  pva_DIR libpvti_DIR GCCS_DIR

prefix=$scratch/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$scratch/install.log" 2>&1 ||
  { cat "$scratch/install.log"; fail "cmake --install"; }

for root in "$sdk" "$prefix"; do
  for package in poplar poplibs; do
    dir=$scratch/build-$package-$(basename "$root")
    flag=OFF
    [[ $package == poplibs ]] && flag=ON
    echo "+ find_package($package) with CMAKE_PREFIX_PATH=$root"
    cmake -S "$scratch/client" -B "$dir" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_FLAGS="${ASPEN_CLIENT_FLAGS:-}" -DCMAKE_PREFIX_PATH="$root" -DUSE_POPLIBS_PACKAGE=$flag >"$dir.configure.log" 2>&1 ||
      { cat "$dir.configure.log"; fail "configuring with find_package($package) against $root"; }
    found=$(sed -n "s/^${package}_DIR:PATH=//p" "$dir/CMakeCache.txt")
    [[ $found == "$root/lib/cmake/$package" ]] || fail "found $package in '$found', not in $root/lib/cmake/$package"
    cmake --build "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; fail "building with find_package($package)"; }
    "$dir/app" | tee "$dir.out"
    grep -q '^client OK' "$dir.out" || fail "the find_package($package) client against $root did not report success"
  done
done

for root in "$sdk" "$prefix"; do
  dir=$scratch/build-poplar-$(basename "$root")
  echo "+ find_package(poplar): plain PopLibs names are not targets, and link as -l<name>"
  grep -q -- '-lpopops' "$dir/build.ninja" "$dir/CMakeFiles/app.dir/link.txt" 2>/dev/null ||
    fail "app's link line against $root does not name -lpopops (popops became a target?)"

  echo "+ a PopLibs-shaped project against $root"
  pdir=$scratch/build-poplibs-shaped-$(basename "$root")
  cp -r "$(dirname "$client_src")/poplibs_cmake" "$scratch/poplibs_cmake"
  cmake -S "$scratch/poplibs_cmake" -B "$pdir" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS="${ASPEN_CLIENT_FLAGS:-}" -DCMAKE_PREFIX_PATH="$root" >"$pdir.configure.log" 2>&1 ||
    { cat "$pdir.configure.log"; fail "configuring the PopLibs-shaped project against $root"; }
  grep -q "IpuModel2_default_UnitSuites_First: TIMEOUT 600 SKIP_RETURN_CODE NOTFOUND" "$pdir.configure.log" &&
    grep -q "IpuModel2_default_Skips: TIMEOUT NOTFOUND SKIP_RETURN_CODE 77 RUN_SERIAL TRUE" "$pdir.configure.log" ||
    { cat "$pdir.configure.log"; fail "add_unit_test/add_multitarget_test properties"; }
  for package in pva libpvti GCCS poplar_test; do
    found=$(sed -n "s/^${package}_DIR:PATH=//p" "$pdir/CMakeCache.txt")
    [[ $found == "$root/lib/cmake/$package" ]] || fail "found $package in '$found', not in $root/lib/cmake/$package"
  done
  cmake --build "$pdir" >"$pdir.build.log" 2>&1 || { cat "$pdir.build.log"; fail "building the PopLibs-shaped project"; }
  "$pdir/app" | tee "$pdir.out"
  grep -q '^poplibs-shaped OK' "$pdir.out" || fail "the PopLibs-shaped app against $root did not report success"
  # PopLibs' test names, <variant>_default_<name>: one per device variant Aspen runs (Sim* and Hw
  # are dropped) and suite; plus the project's own add_test.
  tests=$(cd "$pdir" && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p' | LC_ALL=C sort | tr '\n' ' ')
  [[ $tests == "Cpu_default_System IpuModel2_default_Skips IpuModel2_default_System IpuModel2_default_UnitDefault IpuModel2_default_UnitSuites_First IpuModel2_default_UnitSuites_Second NoTarget_default_UnitNoTarget streams " ]] ||
    fail "the PopLibs-shaped project's tests are '$tests'"
  (cd "$pdir" && ctest --output-on-failure >"$pdir.ctest.log" 2>&1) || { cat "$pdir.ctest.log"; fail "its tests"; }
  grep -q "IpuModel2_default_Skips .*Skipped" "$pdir.ctest.log" || { cat "$pdir.ctest.log"; fail "exit 77 under ALLOW_SKIP is not a skip"; }
  rm -rf "$scratch/poplibs_cmake"
done

echo "+ NEEDED entries of the PopLibs libraries"
needed() { readelf -d "$sdk/lib/$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
for dep in libpopops.so libpoputil.so libpoplar.so; do
  needed libpoplin.so | grep -q "^$dep" || fail "libpoplin.so does not NEED $dep"
  needed libpopnn.so | grep -q "^$dep" || fail "libpopnn.so does not NEED $dep"
done
needed libpopops.so | grep -q '^libpoputil.so' || fail "libpopops.so does not NEED libpoputil.so"

echo "+ g++ matmul_only.cpp -lpoplar -lpoputil -lpoplin"
(
  # shellcheck source=/dev/null
  source "$sdk/enable.sh"
  cd "$scratch/client"
  "$cxx" -std=c++11 "${client_flags[@]}" matmul_only.cpp -lpoplar -lpoputil -lpoplin -o matmul_only ||
    fail "a link line naming poplar poputil poplin"
  ./matmul_only | grep -q '^matmul OK' || fail "matmul_only did not report success"

  echo "+ popc --version"
  first=$(popc --version | head -1)
  echo "$first"
  version=$(popc --version | cut -d ' ' -f3 | head -1)
  [[ $version =~ ^3\.[0-9]+\.[0-9]+$ ]] || fail "popc --version's third word is '$version', not a Poplar version"
  [[ $first == "POPLAR version $version "* ]] || fail "popc --version's first line is '$first'"
)

echo "PASSED: find_package(poplar), find_package(poplibs), pva, libpvti, GCCS, -lpoplar -lpoputil -lpoplin, popc --version"
