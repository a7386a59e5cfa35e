#!/usr/bin/env bash
# Rebuilding libpoplar without changing the codelet compiler or the codelet headers keeps the
# codelet cache: popc compiles a codelet once with the SDK's libpoplar, then again with a
# "rebuilt" libpoplar (a copy at another path, with another size, content and timestamp) and
# must find the first result in the cache instead of compiling again.
#
#   codelet_cache_relink.sh <sdk dir> <codelet source>
set -euo pipefail

sdk=$(cd "$1" && pwd -P)
codelet_source=$2

scratch=$(mktemp -d "${TMPDIR:-/tmp}/aspen-cache-relink.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

unset LD_LIBRARY_PATH POPLAR_LOG_LEVEL
export ASPEN_CACHE_DIR=$scratch/cache ASPEN_LOG_LEVEL=DEBUG
cp "$codelet_source" "$scratch/codelets.cpp"

cached_libraries() {
  find "$ASPEN_CACHE_DIR/codelets" -maxdepth 1 -name '*.gp' | wc -l
}

echo "+ popc with $sdk/lib/libpoplar.so"
"$sdk/bin/popc" -O2 "$scratch/codelets.cpp" -o "$scratch/first.gp" 2>"$scratch/first.log" ||
  { cat "$scratch/first.log"; fail "popc could not compile $codelet_source"; }
[[ $(cached_libraries) -eq 1 ]] || fail "the first compile left $(cached_libraries) libraries in the cache, not 1"

# The "rebuilt" library: the same code under the name popc asks for (its SONAME), in another
# directory, with bytes appended (the loader ignores them) and a later timestamp.
needed=$(ldd "$sdk/bin/popc" | awk '/libpoplar/ {print $1}')
[[ -n $needed ]] || fail "popc does not link libpoplar"
mkdir "$scratch/rebuilt"
cp "$(readlink -f "$sdk/lib/$needed")" "$scratch/rebuilt/$needed"
printf 'rebuilt at %s\n' "$(date +%s%N)" >>"$scratch/rebuilt/$needed"
touch -d '+1 minute' "$scratch/rebuilt/$needed"
export LD_LIBRARY_PATH=$scratch/rebuilt
loaded=$(ldd "$sdk/bin/popc" | awk '/libpoplar/ {print $3}')
[[ $loaded == "$scratch"/rebuilt/* ]] || fail "popc would load libpoplar from '$loaded', not the rebuilt copy"

echo "+ popc with the rebuilt $loaded"
"$sdk/bin/popc" -O2 "$scratch/codelets.cpp" -o "$scratch/second.gp" 2>"$scratch/second.log" ||
  { cat "$scratch/second.log"; fail "popc with the rebuilt libpoplar failed"; }
grep -q 'cache hit' "$scratch/second.log" ||
  { cat "$scratch/second.log"; fail "popc with the rebuilt libpoplar did not hit the codelet cache"; }
[[ $(cached_libraries) -eq 1 ]] ||
  fail "the cache holds $(cached_libraries) libraries after the rebuild, not 1: the key changed"
cmp -s "$scratch/first.gp" "$scratch/second.gp" || fail "the rebuilt libpoplar produced a different .gp"

echo "PASSED: a rebuilt libpoplar reuses the codelet cache"
