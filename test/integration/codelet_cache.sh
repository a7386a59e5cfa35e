#!/usr/bin/env bash
# The codelet cache as popc uses it, across processes:
#  1. two popc processes compiling the same codelet into an empty cache at once both succeed,
#     with identical vertex libraries and one cache entry;
#  2. rebuilding libpoplar without changing the codelet compiler or the codelet headers keeps
#     the cache: popc with a "rebuilt" libpoplar (a copy at another path, with another size,
#     content and timestamp) finds the library in the cache instead of compiling again.
#
#   codelet_cache.sh <sdk dir> <codelet source>
set -euo pipefail

sdk=$(cd "$1" && pwd -P)
codelet_source=$2

scratch=$(mktemp -d "${TMPDIR:-/tmp}/aspen-codelet-cache.XXXXXX")
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

# popc_to <name>: compiles codelets.cpp into <name>.gp, its messages in <name>.log.
popc_to() {
  "$sdk/bin/popc" -O2 "$scratch/codelets.cpp" -o "$scratch/$1.gp" 2>"$scratch/$1.log"
}

echo "+ two popc processes at once with $sdk/lib/libpoplar.so"
popc_to first &
first=$!
popc_to second &
second=$!
wait "$first" || { cat "$scratch/first.log"; fail "the first of two concurrent popc processes failed"; }
wait "$second" || { cat "$scratch/second.log"; fail "the second of two concurrent popc processes failed"; }
cmp -s "$scratch/first.gp" "$scratch/second.gp" || fail "concurrent compiles produced different .gp files"
[[ $(cached_libraries) -eq 1 ]] || fail "concurrent compiles left $(cached_libraries) libraries in the cache, not 1"

# The "rebuilt" library: the same code under the name popc asks for (its SONAME), in another
# directory, with bytes appended (the loader ignores them) and a later timestamp.
needed=$(ldd "$sdk/bin/popc" | awk '/libpoplar/ {print $1}')
[[ -n $needed ]] || fail "popc does not link libpoplar"
mkdir "$scratch/rebuilt"
cp "$(readlink -f "$sdk/lib/$needed")" "$scratch/rebuilt/$needed"
printf 'rebuilt at %s\n' "$(date +%s%N)" >>"$scratch/rebuilt/$needed"
touch -d '+1 minute' "$scratch/rebuilt/$needed"
# An SDK tree has the cycle-counting plugin beside libpoplar (docs/cost-model.md).
if [[ -f $sdk/lib/aspen-cyclecount.so ]]; then cp "$sdk/lib/aspen-cyclecount.so" "$scratch/rebuilt/"; fi
export LD_LIBRARY_PATH=$scratch/rebuilt
loaded=$(ldd "$sdk/bin/popc" | awk '/libpoplar/ {print $3}')
[[ $loaded == "$scratch"/rebuilt/* ]] || fail "popc would load libpoplar from '$loaded', not the rebuilt copy"

echo "+ popc with the rebuilt $loaded"
popc_to rebuilt || { cat "$scratch/rebuilt.log"; fail "popc with the rebuilt libpoplar failed"; }
grep -q 'cache hit' "$scratch/rebuilt.log" ||
  { cat "$scratch/rebuilt.log"; fail "popc with the rebuilt libpoplar did not hit the codelet cache"; }
[[ $(cached_libraries) -eq 1 ]] ||
  fail "the cache holds $(cached_libraries) libraries after the rebuild, not 1: the key changed"
cmp -s "$scratch/first.gp" "$scratch/rebuilt.gp" || fail "the rebuilt libpoplar produced a different .gp"

echo "PASSED: concurrent compiles share one cache entry, and a rebuilt libpoplar reuses it"
