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

# ── what a suite does when it cannot run, and skipped tests ───────────────────────────────────────────
# CI sets CI=true. There, a suite that cannot run on the machine FAILS: CI passes only when every suite ran
# (a fresh Debian 12 machine, root, as .ci/run is). Elsewhere such a suite exits 77 with its reason, and
# scripts/test.sh counts it as skipped, never as passed.
in_ci() { case "${CI:-}" in true|1|yes) return 0 ;; *) return 1 ;; esac }
cannot_run() {
  if in_ci; then log "FAILED: this suite cannot run here, and CI=true does not allow a skip: $*"; exit 1; fi
  log "SKIPPED: $*"
  exit 77
}
# no_skips CMD…: runs a test runner (ctest, node --test) and passes its status through; with CI=true a run
# that skipped any test (a GTEST_SKIP, node's { skip } or todo) fails, as a suite that cannot run does.
no_skips() {
  local out rc
  out=$(mktemp)
  "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ] && in_ci && grep -qE '^The following tests did not run:|^(ℹ|#) (skipped|todo) [1-9]' "$out"; then
    log "FAILED: the run above skipped tests, and CI=true does not allow a skip"
    rc=1
  fi
  rm -f "$out"
  return "$rc"
}
