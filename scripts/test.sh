#!/usr/bin/env bash
# The README's test command. It installs what the tests need (idempotently:
# only what is missing), then checks formatting, vets, runs staticcheck and
# the whole test suite with the race detector, e2e included.
#
#   scripts/test.sh [--no-install] [go test flags…]
#
# What it installs, and why, is the table below: Debian packages (through
# apt-get, as root or with sudo, --no-install-recommends), two Go tools
# (go install, from the Go module proxy) and the npm packages pinned by the
# lockfiles in scripts/node and scripts/cachetests (npm ci). Both need
# network access to those registries. Go 1.26 itself must be installed
# first (https://go.dev/doc/install).
#
# --no-install installs nothing: it checks every tool, names each missing
# one with the package that provides it and exits 2, or runs the tests when
# nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

install=1
if [ "${1:-}" = "--no-install" ]; then
  install=0
  shift
fi

# PATH: Go's usual install folder and the folder go install writes to.
export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
  echo "test.sh: go is not installed: install Go 1.26 (https://go.dev/doc/install), then rerun" >&2
  exit 2
fi
export PATH="$PATH:$(go env GOPATH)/bin"

# Debian packages: command (or file) checked | package | why the tests need it.
debian_tools=(
  "git|git|lists the files gofmt checks; .ci/run clones the checkout"
  "gcc|gcc|the race detector (go test -race) builds with cgo"
  "/usr/include/stdio.h|libc6-dev|C headers for cgo (the race detector)"
  "/etc/ssl/certs/ca-certificates.crt|ca-certificates|HTTPS to the Go module proxy and the npm registry"
  "curl|curl|scripts/cachetests/run.sh waits for its servers with it"
  "b3sum|b3sum|e2e tests compare ron's ids with the reference BLAKE3 tool"
  "ip|iproute2|e2e partition tests build network namespaces, a bridge and blackhole routes (as root; skipped otherwise)"
  "node|nodejs|npm cross-checks: EventSource, RFC 8785 canonicalize, the PMTiles client, the status page's JS (Node.js 18+)"
  "npm|npm|installs those Node programs and the cache-tests suite"
  "systemd-analyze|systemd|verifies the systemd units in scripts/systemd"
  "/bin/kill|procps|the units' ExecReload"
  "chromium|chromium|browser tests of the /ui/ status page (headless)"
  "promtool|prometheus|checks the alert rules and dashboard queries"
)

# have CHECK: whether a command is on PATH or a file exists.
have() {
  case $1 in
    /*) [ -e "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

missing_pkgs=()
missing_lines=()
for row in "${debian_tools[@]}"; do
  IFS='|' read -r check pkg why <<<"$row"
  if ! have "$check"; then
    missing_pkgs+=("$pkg")
    missing_lines+=("  $check — Debian package $pkg: $why")
  fi
done
if have node && ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
  echo "test.sh: Node.js $(node --version) is too old: the tests need Node.js 18 or newer" >&2
  exit 2
fi

STATICCHECK_VERSION=v0.8.2
FSCK_VERSION=v1.0.4 # Tessera's log checker, run against a live registry (docs/registry.md §10)
go_tools=()
staticcheck -version 2>/dev/null | grep -q "(${STATICCHECK_VERSION#v})" ||
  go_tools+=("honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION|the staticcheck step below")
{ [ -x "$(go env GOPATH)/bin/fsck" ] && grep -qx "$FSCK_VERSION" "$(go env GOPATH)/bin/.fsck-version" 2>/dev/null; } ||
  go_tools+=("github.com/transparency-dev/tessera/cmd/fsck@$FSCK_VERSION|checks a live registry's log (docs/registry.md §10)")

npm_dirs=()
for dir in scripts/node scripts/cachetests; do
  # npm ls fails when a pinned package is missing or at another version.
  { have npm && npm ls --prefix "$dir" --depth=0 >/dev/null 2>&1; } || npm_dirs+=("$dir")
done

if [ "$install" = 0 ]; then
  if [ ${#missing_lines[@]} -gt 0 ] || [ ${#go_tools[@]} -gt 0 ] || [ ${#npm_dirs[@]} -gt 0 ]; then
    echo "test.sh --no-install: missing, so the tests would fail:" >&2
    [ ${#missing_lines[@]} -eq 0 ] || printf '%s\n' "${missing_lines[@]}" >&2
    for row in "${go_tools[@]}"; do
      IFS='|' read -r mod why <<<"$row"
      echo "  ${mod%@*} — go install $mod: $why" >&2
    done
    for dir in "${npm_dirs[@]}"; do
      echo "  $dir/node_modules — npm ci --prefix $dir: Node programs the tests run" >&2
    done
    echo "run scripts/test.sh without --no-install to install them (root or sudo, network access)" >&2
    exit 2
  fi
else
  if [ ${#missing_pkgs[@]} -gt 0 ]; then
    echo "== installing Debian packages (apt-get, --no-install-recommends):"
    printf '%s\n' "${missing_lines[@]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
      if ! command -v sudo >/dev/null 2>&1; then
        echo "test.sh: installing these needs root or sudo; run as root, or use --no-install to list them" >&2
        exit 2
      fi
      SUDO="sudo"
    fi
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing_pkgs[@]}"
  fi
  for row in "${go_tools[@]}"; do
    IFS='|' read -r mod why <<<"$row"
    echo "== go install $mod ($why)"
    go install "$mod"
    case $mod in *tessera*) echo "$FSCK_VERSION" >"$(go env GOPATH)/bin/.fsck-version" ;; esac
  done
  for dir in "${npm_dirs[@]}"; do
    echo "== npm ci --prefix $dir (Node programs the tests run, pinned by its package-lock.json)"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  done
fi

# Every outside tool is installed above: tests that need one fail rather than skip.
export RON_REQUIRE_TOOLS=1
# Test artifacts kept after the run (the status page's browser screenshots).
export RON_ARTIFACTS_DIR="${RON_ARTIFACTS_DIR:-$PWD/test-artifacts}"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path '*/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
staticcheck ./...

echo "== go test -race"
go test -race -count=1 -timeout 20m "$@" ./...
