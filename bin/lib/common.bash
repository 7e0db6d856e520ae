# What the bin/ scripts share, sourced by them (`. bin/lib/common.bash`,
# from the checkout's root): ruzzy's version, cargo, the Debian mirror,
# Debian roots made with mmdebstrap (stamped with what they were made from),
# and the usage text. A script whose calls here may die defines die() first.

# Ruzzy::VERSION, from the checkout.
ruzzy_version() { ruby -e 'require_relative "lib/ruzzy/version"; print Ruzzy::VERSION'; }

# cargo_on_path: rustup's ~/.cargo/bin on PATH when cargo is not on it.
cargo_on_path() {
  if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
}

# The Debian mirror: RUZZY_DEBIAN_MIRROR, else the host's apt sources.
debian_mirror() {
  local m=${RUZZY_DEBIAN_MIRROR:-}
  [ -n "$m" ] || m=$(sed -n 's/^URIs: *\([^ ]*debian\)\/\?$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  [ -n "$m" ] || m=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
  [ -n "$m" ] || die "no Debian mirror found in /etc/apt; set RUZZY_DEBIAN_MIRROR"
  echo "$m"
}

# sid's and experimental's Release files expire; the roots are rebuilt
# from whatever the mirror holds.
NO_VALID_UNTIL='Acquire::Check-Valid-Until "false"'

# stamped DIR STAMP: whether DIR is a root made from exactly STAMP.
stamped() { [ -f "$1/.ruzzy-stamp" ] && [ "$(cat "$1/.ruzzy-stamp")" = "$2" ]; }

# debian_root VARIANT ARCH DIR STAMP SUITE PACKAGES...: DIR made afresh by mmdebstrap
# (--variant=VARIANT) with the ARCH PACKAGES of SUITE, stamped STAMP. sid comes with
# experimental, a backports suite with its release (name a package's as PACKAGE/SUITE).
debian_root() {
  local variant=$1 arch=$2 dir=$3 stamp=$4 suite=$5; shift 5
  local m base include sources
  command -v mmdebstrap >/dev/null || {
    echo "==> apt-get install mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
  }
  m=$(debian_mirror)
  base=${suite%-backports}
  sources=("deb $m $base main")
  [ "$suite" != sid ] || sources+=("deb $m experimental main")
  [ "$suite" = "$base" ] || sources+=("deb $m $suite main")
  include=$(IFS=,; echo "$*")
  rm -rf "$dir.new"
  mkdir -p "$(dirname "$dir")"
  mmdebstrap --quiet --variant="$variant" --arch="$arch" --aptopt="$NO_VALID_UNTIL" \
    --include="$include" "$base" "$dir.new" "${sources[@]}"
  echo "$stamp" >"$dir.new/.ruzzy-stamp"
  rm -rf "$dir"
  mv "$dir.new" "$dir"
}

# relative_links DIR: the absolute symbolic links inside root DIR made
# relative (once), so that a linker (--sysroot) or qemu (-L) never follows
# them out into the host's files.
relative_links() {
  local dir=$1 link target
  [ -f "$dir/.ruzzy-relative" ] && return
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$dir$target")" "$link"
  done < <(find "$dir" -xdev -type l -lname '/*' -print0)
  touch "$dir/.ruzzy-relative"
}

# sysroot_compilers DIR CC CXX FLAGS...: DIR/cc and DIR/c++, the compilers CC and CXX
# (with libstdc++ linked statically) given FLAGS (a sysroot, a target), every
# -lstdc++ (the cc crate's, the preloads') turned into the static library.
sysroot_compilers() {
  local dir=$1 cc=$2 cxx=$3 tool driver; shift 3
  mkdir -p "$dir"
  for tool in cc c++; do
    driver=$cc
    [ "$tool" = c++ ] && driver="$cxx -static-libstdc++"
    cat >"$dir/$tool" <<SH
#!/usr/bin/env bash
args=()
for a in "\$@"; do [ "\$a" = -lstdc++ ] && a=-l:libstdc++.a; args+=("\$a"); done
exec $driver $* "\${args[@]}"
SH
    chmod +x "$dir/$tool"
  done
}

# usage: the calling script's header comment, its usage.
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# needs N COUNT USAGE: dies with "usage: USAGE" unless COUNT (the arguments
# given) is N or more.
needs() { [ "$2" -ge "$1" ] || die "usage: $3"; }
