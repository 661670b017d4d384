#!/usr/bin/env bash
# numref — install every missing build/test dependency with apt-get (Debian/Ubuntu).
# Safe to run any number of times: it installs only packages that are not yet installed.
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config git python3 python3-dev
  libmpfr-dev libgmp-dev libboost-dev
  librapidcheck-dev libgtest-dev googletest libbenchmark-dev
  clang-format-14  # scripts/format.sh --check (the default suite): the formatter version is pinned
  pandoc           # scripts/spec-html.sh (test spec_html): docs/spec.md as one standalone HTML file
)
# clang (libFuzzer) is optional: only the fuzz build needs it (-DNUMREF_FUZZ=ON, see README.md).
OPTIONAL=(clang verilator)  # clang: the fuzz build; verilator: the RTL example (docs/hardware.md)

missing=()
for p in "${PACKAGES[@]}" "${OPTIONAL[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

install_python_helpers() {
  # Python helpers from PyPI: numpy, ml_dtypes, gfloat 0.5.2 (differential checks; gfloat is pure
  # Python, ~170 KB, needing numpy, array-api-compat and more-itertools), and for the Python module
  # (python/, `pip install .`) nanobind, scikit-build-core and pytest (its tests, label `python`).
  if ! python3 -c "import numpy, ml_dtypes, gfloat, nanobind, scikit_build_core, pytest" >/dev/null 2>&1; then
    echo "setup: installing Python helpers numpy, ml_dtypes, gfloat, nanobind, scikit-build-core, pytest"
    python3 -m pip install --quiet --disable-pip-version-check numpy ml_dtypes gfloat==0.5.2 nanobind scikit-build-core pytest || \
      python3 -m pip install --quiet --disable-pip-version-check --break-system-packages numpy ml_dtypes gfloat==0.5.2 \
        nanobind scikit-build-core pytest
  fi
  # NUMREF_PEERS=1: the libraries of the `peers` differential tests (jax for xla, torch, torchao
  # for the torchao_* recipe profiles, mmasim 2.1.1 for the mma profiles, triton for the Triton
  # example of numref.conform.check run by its CPU interpreter; several GiB). Then
  # configure with -DNUMREF_PEERS=ON and
  # run `ctest --test-dir build -L peers`.
  if [ "${NUMREF_PEERS:-0}" = 1 ] && ! python3 -c "import jax, torch, torchao, mmasim, triton" >/dev/null 2>&1; then
    echo "setup: NUMREF_PEERS=1: installing jax, torch (CPU), triton, torchao 0.18 and mmasim 2.1.1 for the peers tests"
    python3 -m pip install --quiet --disable-pip-version-check jax torch triton torchao==0.18.0 gfloat==0.5.2 mmasim==2.1.1 || \
      python3 -m pip install --quiet --disable-pip-version-check --break-system-packages jax torch triton torchao==0.18.0 \
        gfloat==0.5.2 mmasim==2.1.1
  fi
  # NUMREF_MICROXCALING_DIR=DIR (with NUMREF_PEERS=1): microxcaling is not on PyPI; clone it there at
  # the commit docs/profiles.md measured (an existing DIR is left as it is), then configure with
  # -DNUMREF_MICROXCALING_DIR=DIR for the test peers_microxcaling.
  if [ "${NUMREF_PEERS:-0}" = 1 ] && [ -n "${NUMREF_MICROXCALING_DIR:-}" ] && [ ! -e "$NUMREF_MICROXCALING_DIR" ]; then
    echo "setup: cloning microxcaling into $NUMREF_MICROXCALING_DIR (commit 3b429a84)"
    git clone --quiet https://github.com/microsoft/microxcaling "$NUMREF_MICROXCALING_DIR" && \
      git -C "$NUMREF_MICROXCALING_DIR" checkout --quiet 3b429a84b2fb4539df9694c76e7b97b05bec2dad || \
      { echo "setup: could not clone microxcaling at 3b429a84" >&2; exit 1; }
  fi
  # NUMREF_DEEPGEMM_DIR=DIR (with NUMREF_PEERS=1): DeepGEMM installs only with CUDA, but its
  # deep_gemm/utils/math.py is plain torch; clone it there at the commit docs/profiles.md measured
  # (an existing DIR is left as it is), then configure with -DNUMREF_DEEPGEMM_DIR=DIR (peers_deepgemm).
  if [ "${NUMREF_PEERS:-0}" = 1 ] && [ -n "${NUMREF_DEEPGEMM_DIR:-}" ] && [ ! -e "$NUMREF_DEEPGEMM_DIR" ]; then
    echo "setup: cloning DeepGEMM into $NUMREF_DEEPGEMM_DIR (commit 54e2261)"
    git clone --quiet https://github.com/deepseek-ai/DeepGEMM "$NUMREF_DEEPGEMM_DIR" && \
      git -C "$NUMREF_DEEPGEMM_DIR" checkout --quiet 54e22612409371d6364144b69086735beb54e98b || \
      { echo "setup: could not clone DeepGEMM at 54e2261" >&2; exit 1; }
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all system packages present"
  install_python_helpers
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Optional packages may be unavailable on some mirrors; required ones must install.
req=(); opt=()
for p in "${missing[@]}"; do
  if [[ " ${OPTIONAL[*]} " == *" $p "* ]]; then opt+=("$p"); else req+=("$p"); fi
done
if [ ${#req[@]} -gt 0 ]; then $SUDO apt-get install -y -qq --no-install-recommends "${req[@]}"; fi
if [ ${#opt[@]} -gt 0 ]; then $SUDO apt-get install -y -qq --no-install-recommends "${opt[@]}" || \
  echo "setup: optional packages not installed: ${opt[*]} (clang: the fuzz build; verilator: the RTL example)"; fi
install_python_helpers
echo "setup: done"
