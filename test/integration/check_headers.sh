#!/usr/bin/env bash
# Checks that every public header of the SDK compiles on its own, the way a client includes
# it, by building the header-check targets of test/sdk.cmake: one generated translation unit
# per header and standard (-std=c++11, -std=c++17) that includes the header twice, compiled
# against the SDK's include/ directory only. The targets are part of the normal build, so
# this is a no-op when they are up to date; after a header changed, only its units compile.
#
#   check_headers.sh <aspen build dir> <cmake generator> <target>...
#
# On failure prints the compiler's messages, then one "FAIL <header> (-std=<standard>)" line
# per header that does not compile.
set -uo pipefail

build_dir=$1
generator=$2
shift 2

targets=()
for target in "$@"; do
  targets+=(--target "$target")
done
# Keep going after the first failure, so that every broken header is named.
keep_going=()
case $generator in
  Ninja*) keep_going=(-- -k 0) ;;
  *Makefiles) keep_going=(-- -k) ;;
esac

# A client's environment must not add include directories.
if output=$(env -u CPATH -u CPLUS_INCLUDE_PATH cmake --build "$build_dir" "${targets[@]}" \
    "${keep_going[@]}" 2>&1); then
  echo "All public headers compile on their own under -std=c++11 and -std=c++17 ($*)."
  exit 0
fi
printf '%s\n' "$output"
failed=$(grep -oE 'sdk_headers/c\+\+[0-9]+/[^ :]+\.cpp\.o' <<<"$output" | sort -u |
  sed -E 's#^sdk_headers/(c\+\+[0-9]+)/(.+)\.cpp\.o$#FAIL \2 (-std=\1)#')
if [[ -n $failed ]]; then
  printf '%s\n' "$failed"
  echo "Some public headers do not compile on their own." >&2
else
  echo "Building the header checks ($*) failed before compiling any header." >&2
fi
exit 1
