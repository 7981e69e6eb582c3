# Shared helpers for the project's scripts (sourced, not run).
KOPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KOPT_ROOT

log() { printf '\033[1m[kopt]\033[0m %s\n' "$*" >&2; }

# Install the Debian packages listed in the given files that are not installed yet.
# Lines starting with # are comments. Needs root (CI runs as root) or sudo.
apt_install_lists() {
  local missing=() pkg f
  for f in "$@"; do
    [ -f "$f" ] || continue
    while read -r pkg; do
      pkg=${pkg%%#*}; pkg=$(echo "$pkg" | xargs)
      [ -n "$pkg" ] || continue
      if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        # A command already on PATH counts (e.g. node/npm from another source).
        case "$pkg" in nodejs) command -v node >/dev/null && continue ;; npm) command -v npm >/dev/null && continue ;; esac
        missing+=("$pkg")
      fi
    done < "$f"
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  log "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# tests/browser/node_modules (playwright-core, React) from its lockfile, when missing: the browser
# suite and the report's geometry check drive Debian's chromium through it.
browser_node_modules() {
  local dir="$KOPT_ROOT/tests/browser"
  [ -f "$dir/node_modules/playwright-core/package.json" ] && [ -f "$dir/node_modules/react/umd/react.production.min.js" ] && return 0
  log "npm ci (tests/browser)"
  (cd "$dir" && timeout 600 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
}
