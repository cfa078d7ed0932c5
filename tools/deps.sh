#!/bin/sh
# deps.sh: install, with apt-get, the Debian 12 packages tilec needs that are
# missing (nothing is fetched when all are present).  Needs root or sudo.
set -eu
pkgs="cmake make gcc g++ llvm-19-dev llvm-19-tools libcriterion-dev libdlpack-dev python3 python3-numpy python3-pytest zlib1g-dev libzstd-dev pkg-config binutils"
[ "${1:-}" = "--fuzz" ] && pkgs="$pkgs clang-19"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# The Python package's tests (ctest -L python) need numpy and pytest in the python3 that is
# first on PATH (CMake's Python3_EXECUTABLE); a python3 other than Debian's (pyenv, a venv)
# does not see python3-numpy, so pip installs them there.
pip_deps() {
  python3 -c "import numpy, pytest" 2>/dev/null && return 0
  [ "$(command -v python3)" = /usr/bin/python3 ] && return 0  # Debian's: python3-numpy / python3-pytest
  echo "deps.sh: pip installing numpy pytest for $(command -v python3)"
  python3 -m pip install --quiet numpy pytest
}
if [ -z "$missing" ]; then pip_deps; exit 0; fi
echo "deps.sh: installing:$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
# All of them are in Debian 12 (bookworm) main since 12.10 (llvm-19, clang-19).
$sudo apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
pip_deps
