# Sourced by tools/setup.sh, tools/test-env.sh, tools/test.sh and tools/python-wheel.sh: the
# one place that says where the tool chain and the caches are.
#
# What does not change between runs lives in a cache outside the clone,
# ${RDARROW_CACHE_DIR:-$XDG_CACHE_HOME/rdarrow} (default ~/.cache/rdarrow),
# each entry keyed by the exact versions and lock files it was built from,
# so that a fresh clone on the same machine reuses it and a new machine
# builds it from nothing:
#   venv-<key>/    the Python environment (pyarrow pinned) with the arrow
#                  and nanoarrow R packages in venv-<key>/r-lib; .venv in the
#                  repository is a link to it
#   seurat5-<key>/ SeuratObject 5.3.0 with Matrix 1.6-5 (test-only, for
#                  Seurat v5 objects); .seurat5 in the repository links to it
#   qs-<key>/      qs 0.27.3 and qs2 0.2.1 (test-only, to make .qs, .qs2 and
#                  .qdata files); .qs-lib in the repository links to it
#   target-<key>/  cargo's target directory, shared by the R package build,
#                  cargo test, the command line, the Python wheel and the
#                  DuckDB extension (one profile, and the same features of
#                  every shared crate in each binding), so each crate is
#                  compiled once
# RDARROW_CACHE_DIR=none keeps everything inside the repository instead.

if [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
export PATH="$PATH:$HOME/.cargo/bin"
# R warns about an unknown timezone on machines without one configured.
export TZ="${TZ:-UTC}"

rdarrow_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

rdarrow_hash() { sha256sum | cut -c1-16; }

if [ "${RDARROW_CACHE_DIR:-}" = none ]; then
  rdarrow_cache=""
else
  rdarrow_cache="${RDARROW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rdarrow}"
  mkdir -p "$rdarrow_cache"
fi

# cargo's target directory: keyed by the compiler and the lock file.
if [ -n "$rdarrow_cache" ] && command -v rustc >/dev/null 2>&1; then
  rdarrow_target_key="$( { rustc -vV; cat "$rdarrow_root/src/rust/Cargo.lock"; } | rdarrow_hash)"
  export CARGO_TARGET_DIR="$rdarrow_cache/target-$rdarrow_target_key"
  # src/Makevars builds into this folder when set (a CRAN-style install
  # without it builds inside the package and removes what it built)
  export RDARROW_TARGET_DIR="$CARGO_TARGET_DIR"
fi

# What cargo compiles into the target directory in set-up and tests is
# noted there (builds piped through rdarrow_note_build), so that
# tools/one_build.py --compiled can tell a crate compiled twice.
RDARROW_BUILD_LOG="${CARGO_TARGET_DIR:-$rdarrow_root/src/rust/target}/rdarrow-builds.log"
rdarrow_note_build() {
  mkdir -p "$(dirname "$RDARROW_BUILD_LOG")"
  tee -a "$RDARROW_BUILD_LOG"
}

# Cache entries not used for 14 days go.
rdarrow_prune_cache() {
  [ -n "$rdarrow_cache" ] || return 0
  find "$rdarrow_cache" -mindepth 1 -maxdepth 1 -type d \( -name 'target-*' -o -name 'venv-*' -o -name 'seurat5-*' -o -name 'qs-*' \) \
    -mtime +14 -exec rm -rf {} + 2>/dev/null || true
}

# Install the Debian packages of "$@" that are not installed yet (apt is not
# called when all are); on a system without dpkg, the R on the PATH.
rdarrow_apt() {
  if command -v dpkg-query >/dev/null 2>&1; then
    local missing=() p sudo=()
    for p in "$@"; do
      if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
      fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
      echo "==> Debian packages: all present"
      return 0
    fi
    echo "==> Installing Debian packages: ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
      if ! command -v sudo >/dev/null 2>&1; then
        echo "need root or sudo to install: ${missing[*]}" >&2
        return 1
      fi
      sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y --no-install-recommends "${missing[@]}"
  elif command -v R >/dev/null 2>&1; then
    echo "==> Not a Debian system (no dpkg-query); using the R on the PATH"
  else
    echo "R is not installed and this is not a Debian system; install R (>= 4.2)." >&2
    return 1
  fi
}

# The Python environment (.venv, a link into the cache): Debian's Python
# (with the shared libpython that R's reticulate embeds), keyed by the
# Python and R versions, the test lock and the arrow R sources. Set-up puts
# in it what the package needs (pyarrow, maturin, the wheel); the test
# command the rest of the lock and arrow R (tools/test-env.sh).
rdarrow_venv() {
  local arrow_r_dir="$rdarrow_root/../shared/arrow-r" key
  key="$( {
    /usr/bin/python3 --version
    R --version | head -1
    cat "$rdarrow_root/tools/requirements-test.txt"
    if [ -d "$arrow_r_dir" ]; then sha256sum "$arrow_r_dir"/*.tar.gz "$arrow_r_dir"/install.sh | cut -c1-64; fi
  } | rdarrow_hash)"
  if [ -n "$rdarrow_cache" ]; then
    venv_real="$rdarrow_cache/venv-$key"
    if [ -e "$rdarrow_root/.venv" ] && [ ! -L "$rdarrow_root/.venv" ]; then
      echo "==> .venv is a folder of its own: using it instead of the cache"
      venv_real="$rdarrow_root/.venv"
    else
      ln -sfn "$venv_real" "$rdarrow_root/.venv"
    fi
  else
    venv_real="$rdarrow_root/.venv"
  fi
  if [ ! -x "$venv_real/bin/python" ]; then
    rm -rf "$venv_real"
    /usr/bin/python3 -m venv "$venv_real"
  fi
  touch "$venv_real"
}

# Seconds per step: step_done NAME records the time since the last step;
# the scripts print "${steps[@]}" at the end.
steps=()
step_start=$(date +%s)
step_done() {
  local now
  now=$(date +%s)
  steps+=("$(printf '%6d s  %s' $((now - step_start)) "$1")")
  step_start=$now
}
