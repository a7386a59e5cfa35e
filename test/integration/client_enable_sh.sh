#!/usr/bin/env bash
# A third party builds a Poplar-style program against the SDK tree: from a scratch directory
# outside the source tree, `source <sdk>/enable.sh`, then `g++ -std=c++11 prog.cpp -lpoplar`,
# `popc codelets.cpp -o codelets.gp`, and the same with the program's own Makefile. Also checks enable.sh itself: it can be sourced twice, it
# refuses to be run as a program, and it refuses a second, different SDK.
#
#   client_enable_sh.sh <sdk dir> <client source dir>
set -euo pipefail

sdk=$(cd "$1" && pwd -P)
client_src=$2

scratch=$(mktemp -d "${TMPDIR:-/tmp}/aspen-enable-sh.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp "$client_src/prog.cpp" "$client_src/codelets.cpp" "$client_src/Makefile" "$scratch/"
cd "$scratch"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Start from a shell with no SDK enabled.
unset POPLAR_SDK_ENABLED CPATH LIBRARY_PATH CMAKE_PREFIX_PATH

if bash "$sdk/enable.sh" >/dev/null 2>&1; then
  fail "running enable.sh as a program should fail (it must be sourced)"
fi
if (POPLAR_SDK_ENABLED=/some/other/sdk && source "$sdk/enable.sh") 2>/dev/null; then
  fail "enable.sh should refuse when another SDK is enabled"
fi

# shellcheck source=/dev/null
source "$sdk/enable.sh"
# shellcheck source=/dev/null
source "$sdk/enable.sh" # a second time changes nothing

[[ ${POPLAR_SDK_ENABLED:-} == "$sdk" ]] || fail "POPLAR_SDK_ENABLED is '${POPLAR_SDK_ENABLED:-}', not $sdk"
# Each variable starts with the SDK's directory, which appears in it exactly once.
expect_first_once() {
  local name=$1 dir=$2 value
  value=${!name:-}
  [[ ${value%%:*} == "$dir" ]] || fail "$name does not start with $dir: $value"
  local count
  count=$(tr ':' '\n' <<<"$value" | grep -cxF "$dir")
  [[ $count -eq 1 ]] || fail "$name holds $dir $count times after sourcing twice: $value"
}
expect_first_once PATH "$sdk/bin"
expect_first_once CPATH "$sdk/include"
expect_first_once LIBRARY_PATH "$sdk/lib"
expect_first_once LD_LIBRARY_PATH "$sdk/lib"
expect_first_once CMAKE_PREFIX_PATH "$sdk"
[[ $(command -v popc) == "$sdk/bin/popc" ]] || fail "popc on PATH is '$(command -v popc)', not the SDK's"

# Link every library the SDK has, as a Poplar Makefile does (-lpoplar -lpopops ...), so that
# each one is found at link time and loads at run time.
libs=(-lpoplar)
for lib in popops poplin popnn poputil poprand; do
  if [[ -e $sdk/lib/lib$lib.so ]]; then
    libs+=("-l$lib")
  fi
done

# A sanitized SDK (.ci/sanitize) needs clients compiled by the same compiler with the same
# -fsanitize flags: ASPEN_CLIENT_CXX and ASPEN_CLIENT_FLAGS say so (default: plain g++).
cxx=${ASPEN_CLIENT_CXX:-g++}
read -r -a client_flags <<<"${ASPEN_CLIENT_FLAGS:-}"
echo "+ $cxx -std=c++11 ${client_flags[*]} prog.cpp ${libs[*]} -o prog"
"$cxx" -std=c++11 "${client_flags[@]}" prog.cpp "${libs[@]}" -o prog
./prog | tee prog.out
grep -q '^client OK' prog.out || fail "the client program built with g++ did not report success"
echo "+ popc -O2 codelets.cpp -o codelets.gp"
popc -O2 codelets.cpp -o codelets.gp
./prog --codelets codelets.gp | tee prog.out
grep -q '^client OK.*codelets added' prog.out || fail "the client did not add its popc-built codelets"
# A program written for hardware asks the DeviceManager for an IPU; Aspen offers simulated ones.
./prog --hardware | tee prog.out
grep -q '^client OK: IPU from the DeviceManager' prog.out ||
  fail "the client did not get an IPU from the DeviceManager"

echo "+ make LDLIBS='${libs[*]}'"
rm -f prog codelets.gp
make_args=()
[[ -n ${ASPEN_CLIENT_CXX:-} ]] && make_args+=("CXX=$ASPEN_CLIENT_CXX")
make LDLIBS="${client_flags[*]} ${libs[*]}" "${make_args[@]}"
./prog --codelets codelets.gp | tee prog.out
grep -q '^client OK.*codelets added' prog.out || fail "the client program built with make did not report success"

echo "PASSED: client built against $sdk with enable.sh"
