#!/bin/sh
# deps.sh: install, with apt-get, the Debian 12 packages tilec needs that are
# missing (nothing is fetched when all are present).  Needs root or sudo.
set -eu
pkgs="cmake make gcc g++ llvm-19-dev llvm-19-tools libcriterion-dev libdlpack-dev python3 zlib1g-dev libzstd-dev pkg-config binutils"
[ "${1:-}" = "--fuzz" ] && pkgs="$pkgs clang-19"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps.sh: installing:$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
# All of them are in Debian 12 (bookworm) main since 12.10 (llvm-19, clang-19).
$sudo apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
