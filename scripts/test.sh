#!/usr/bin/env bash
# The README's test command: installs what the tests need (idempotently), then
# checks formatting, vets, runs staticcheck and the whole test suite with the
# race detector, e2e included.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH)/bin"

need_apt=()
command -v b3sum >/dev/null 2>&1 || need_apt+=(b3sum)
command -v npm >/dev/null 2>&1 || need_apt+=(nodejs npm)
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd) # verifies scripts/systemd units
[ -x /bin/kill ] || need_apt+=(procps)                              # the units' ExecReload
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)          # the /ui/ status page browser tests
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)        # promtool: alert rules and dashboard queries
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

STATICCHECK_VERSION=v0.8.2
if ! staticcheck -version 2>/dev/null | grep -q "(${STATICCHECK_VERSION#v})"; then
  go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi

# Tessera's log checker, run by the registry's external test against a live
# registry (docs/registry.md §10).
FSCK_VERSION=v1.0.4
if ! [ -x "$(go env GOPATH)/bin/fsck" ] || ! grep -q "$FSCK_VERSION" "$(go env GOPATH)/bin/.fsck-version" 2>/dev/null; then
  go install "github.com/transparency-dev/tessera/cmd/fsck@$FSCK_VERSION"
  echo "$FSCK_VERSION" > "$(go env GOPATH)/bin/.fsck-version"
fi

# Node programs of the registry's npm cross-checks (scripts/node: eventsource,
# canonicalize), installed from the committed lockfile.
npm ci --prefix scripts/node --no-audit --no-fund --loglevel=error

# Every outside tool is installed above: tests that need one fail rather than skip.
export RON_REQUIRE_TOOLS=1
# Test artifacts kept after the run (the status page's browser screenshots).
export RON_ARTIFACTS_DIR="${RON_ARTIFACTS_DIR:-$PWD/test-artifacts}"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
staticcheck ./...

echo "== go test -race"
go test -race -count=1 -timeout 20m "$@" ./...
