#!/usr/bin/env bash
# check_symbols.sh NM GRAPH_OBJECTS COMPILER_OBJECTS RUNTIME_OBJECTS (each a ;-separated list)
# The link-time half of DESIGN.md's layering (libgraph <- compiler <- runtime): no object of a
# lower module references a symbol that only a higher module defines.
set -euo pipefail
nm=$1
IFS=';' read -r -a graph <<<"$2"
IFS=';' read -r -a compiler <<<"$3"
IFS=';' read -r -a runtime <<<"$4"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nm" -j -u "${graph[@]}" 2>/dev/null | sort -u >"$tmp/graph.undefined"
"$nm" -j -u "${compiler[@]}" 2>/dev/null | sort -u >"$tmp/compiler.undefined"
"$nm" -j --defined-only "${compiler[@]}" 2>/dev/null | sort -u >"$tmp/compiler.defined"
"$nm" -j --defined-only "${runtime[@]}" 2>/dev/null | sort -u >"$tmp/runtime.defined"
"$nm" -j --defined-only "${graph[@]}" 2>/dev/null | sort -u >"$tmp/graph.defined"
# A symbol that the lower module also defines (an inline function, a template instance) is its own.
fail=0
check() { # check <module> <undefined> <higher module> <its definitions>
  local wrong
  wrong=$(comm -12 "$2" "$4" | comm -23 - "$tmp/$1.defined" || true)
  if [[ -n $wrong ]]; then
    echo "FAIL: $1 objects reference symbols only $3 defines:"
    echo "$wrong" | c++filt | head -20
    fail=1
  else
    echo "ok: $1 references nothing that only $3 defines ($(wc -l <"$2") undefined symbols checked)"
  fi
}
check graph "$tmp/graph.undefined" compiler "$tmp/compiler.defined"
check graph "$tmp/graph.undefined" runtime "$tmp/runtime.defined"
check compiler "$tmp/compiler.undefined" runtime "$tmp/runtime.defined"
# The checks must have looked at something: libgraph's own calls into the compiler would be
# invisible if the object lists were empty.
[[ $(wc -l <"$tmp/compiler.undefined") -gt 0 && $(wc -l <"$tmp/runtime.defined") -gt 0 ]] || {
  echo "FAIL: no symbols read (object lists empty?)"
  exit 1
}
exit $fail
