#!/usr/bin/env bash
# Compiles every public header of the SDK on its own, the way a client includes it, against
# the SDK's include/ directory only (so a public header that reaches a private one fails).
#
#   check_headers.sh <c++ compiler> <sdk include dir> <header list>
#
# Each line of the header list is "host <path>" or "codelet <path>" (path relative to the
# include dir). Host headers must compile under -std=c++11 and -std=c++17; codelet headers
# are compiled as popc compiles codelets, with __POPC__ defined. Each header is included twice
# in one translation unit, which also checks its include guard.
set -euo pipefail

cxx=$1
include_dir=$2
header_list=$3

if [[ ! -d $include_dir ]]; then
  echo "SDK include directory $include_dir does not exist (build the aspen_sdk_headers target)" >&2
  exit 1
fi

while read -r kind header; do
  if [[ -n ${header:-} && ! -e $include_dir/$header ]]; then
    echo "$include_dir/$header is missing: the SDK tree is out of date; build the project" \
      "(target aspen_sdk_headers) before running this test" >&2
    exit 1
  fi
done <"$header_list"

# Prints nothing when <header> compiles under <std> with <extra flags>; the compiler's
# complaint (prefixed with the header and the flags) otherwise.
compile_one() {
  local std=$1 kind=$2 header=$3
  local flags=(-std="$std" -fsyntax-only -Wall -Wextra -Werror -I"$include_dir")
  if [[ $kind == codelet ]]; then
    flags+=(-D__POPC__)
  fi
  local output
  if ! output=$(printf '#include <%s>\n#include <%s>\n' "$header" "$header" |
      env -u CPATH -u CPLUS_INCLUDE_PATH "$cxx" "${flags[@]}" -x c++ - 2>&1); then
    printf 'FAIL %s (%s, %s)\n%s\n' "$header" "$std" "$kind" "$output"
  fi
}
export -f compile_one
export cxx include_dir

jobs=$(nproc)
failures=$(
  while read -r kind header; do
    [[ -z ${kind:-} ]] && continue
    for std in c++11 c++17; do
      printf '%s\n%s\n%s\n' "$std" "$kind" "$header"
    done
  done <"$header_list" |
    xargs -d '\n' -n 3 -P "$jobs" bash -c 'compile_one "$@"' _
)
checked=$(grep -c . "$header_list" || true)

if [[ -n $failures ]]; then
  printf '%s\n' "$failures"
  echo "Some public headers do not compile on their own (of $checked headers)." >&2
  exit 1
fi
if [[ $checked -eq 0 ]]; then
  echo "No public headers listed in $header_list" >&2
  exit 1
fi
echo "All $checked public headers compile on their own under -std=c++11 and -std=c++17."
