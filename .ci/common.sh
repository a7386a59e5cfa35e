# shellcheck shell=bash
# Shared by .ci/setup and .ci/test (sourced, not run): the Debian packages Aspen builds with,
# installed only when missing, and the configure step.
#
# Environment: ASPEN_BUILD_DIR (default <repo>/build), ASPEN_JOBS (default: all cores).

ASPEN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ASPEN_BUILD_DIR=${ASPEN_BUILD_DIR:-$ASPEN_ROOT/build}
ASPEN_JOBS=${ASPEN_JOBS:-$(nproc)}

# Everything the build, the tests and a Makefile client need, from Debian 12. clang-16 is the
# codelet compiler (docs/codelets.md, "The dialect"); llvm-16-dev the headers its cycle-counting
# plugin is built against (docs/cost-model.md, "Cycles from the code").
ASPEN_DEBIAN_PACKAGES=(
  cmake ninja-build g++ make ccache openmpi-bin libopenmpi-dev
  libboost-graph-dev libeigen3-dev libtbb-dev nlohmann-json3-dev catch2 libclang-14-dev
  chromium chromium-driver python3-selenium
  clang clang-format libclang-rt-14-dev
  clang-16 llvm-16-dev
)
# What .ci/fuzz needs beyond those (docs/fuzzing.md); the sanitizer runtimes are above, for .ci/run.
ASPEN_FUZZ_DEBIAN_PACKAGES=(clang-14 libclang-rt-14-dev)

# Installs the packages that are not installed yet; does no network access when none is missing.
aspen_install_packages() {
  local missing=() package
  for package in "${ASPEN_DEBIAN_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed'; then
      missing+=("$package")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "== All ${#ASPEN_DEBIAN_PACKAGES[@]} Debian packages Aspen needs are installed"
    return
  fi
  echo "== Installing missing Debian packages: ${missing[*]}"
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "Run as root to install: ${missing[*]}" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}

# Configures a Release build with Ninja (a no-op when the build directory is up to date).
aspen_configure() {
  echo "== Configuring $ASPEN_BUILD_DIR"
  cmake -S "$ASPEN_ROOT" -B "$ASPEN_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
}

# Builds everything (libraries, popc, vertex libraries, samples, tests, header checks).
aspen_build() {
  echo "== Building with $ASPEN_JOBS jobs"
  cmake --build "$ASPEN_BUILD_DIR" -j "$ASPEN_JOBS"
}

# aspen_timed <label> <command>...: runs the command and prints how long it took, also when
# it fails; returns its status.
aspen_timed() {
  local label=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  echo "== $label: $((SECONDS - start)) s"
  return "$status"
}
