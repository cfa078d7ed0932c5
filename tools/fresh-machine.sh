#!/bin/sh
# fresh-machine.sh: check that each of the README's two commands works alone on a fresh Debian 12,
# where nothing was installed by hand: a minimal bookworm (debootstrap --variant=minbase) is made
# once, then copied for each command, so the second command starts from nothing too.  The
# repository goes in as a clean clone of HEAD (what CI gets), never this working tree.
#
#   sudo tools/fresh-machine.sh [WORKDIR]        (root; needs debootstrap and the Debian mirror)
#
# Prints, last, one line per command with its exit status and time.  Exit 0 when both passed.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
work=${1:-/tmp/tilec-fresh}
mirror=${TILEC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine.sh: run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-machine.sh: apt-get install debootstrap" >&2; exit 2; }
mkdir -p "$work"
base=$work/base
if [ ! -x "$base/bin/sh" ]; then
  echo "== debootstrap bookworm (minbase) into $base"
  debootstrap --variant=minbase bookworm "$base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
fi
summary=""
# one_command NAME SCRIPT: a copy of the base system, a clean clone, the command, its status
one_command() {
  name=$1; script=$2
  sys=$work/$name
  rm -rf "$sys"; cp -a "$base" "$sys"
  git clone -q "$root" "$sys/src"
  cp /etc/resolv.conf "$sys/etc/resolv.conf"
  mount -t proc proc "$sys/proc"
  t0=$(date +%s)
  set +e
  chroot "$sys" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    sh -c "cd /src && $script" >"$work/$name.log" 2>&1
  rc=$?
  set -e
  umount "$sys/proc"
  t=$(( $(date +%s) - t0 ))
  tail -5 "$work/$name.log"
  summary="$summary
$name: $script on a clean clone of $(git -C "$sys/src" rev-parse --short HEAD): exit $rc in ${t}s (log $work/$name.log)"
}
one_command main-job tools/main-job.sh
one_command test tools/test.sh
echo "== fresh Debian 12 (debootstrap minbase), each command in its own copy$summary"
case "$summary" in *"exit 0 in"*"exit 0 in"*) exit 0 ;; *) exit 1 ;; esac
