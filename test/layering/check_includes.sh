#!/usr/bin/env bash
# check_includes.sh SOURCE_ROOT
# The include half of DESIGN.md's layering (libgraph <- compiler <- runtime) for public headers:
# every module sees every module's include/ (CMakeLists.txt, aspen_public_headers), so the compile
# probes (layering_includes_*) catch only private headers. This reads each lower module's own files
# and fails on an #include that names a header only a higher module's include/ has.
set -euo pipefail
root=$1
fail=0
# check <module dir> <higher module dirs...>
check() {
  local module=$1 higher header file line checked=0
  shift
  while IFS= read -r line; do
    file=${line%%:*}
    header=$(sed -E 's/^[^:]*:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"].*/\1/' <<<"$line")
    checked=$((checked + 1))
    # Poplar's Graph.hpp brings Device.hpp (programs use Device having included only Graph.hpp);
    # Graph(const Device &) is defined by the runtime (GraphOnDevice.cpp), so no code goes down.
    [[ ${file#"$root"/} == libgraph/include/poplar/Graph.hpp && $header == poplar/Device.hpp ]] && continue
    # A header the module itself or a lower one provides is fine, whoever else has one too.
    [[ -e $root/$module/include/$header || -e $root/libgraph/include/$header ]] && continue
    [[ $module == runtime && -e $root/compiler/include/$header ]] && continue
    for higher in "$@"; do
      if [[ -e $root/$higher/include/$header ]]; then
        echo "FAIL: ${file#"$root"/} includes $header, a header of $higher (above $module)"
        fail=1
      fi
    done
  done < <(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.c' \
             '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$root/$module/src" "$root/$module/include" \
             2>/dev/null || true)
  echo "ok so far: $module's $checked includes checked against $*"
}
check libgraph compiler runtime
check compiler runtime
exit $fail
