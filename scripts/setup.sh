#!/usr/bin/env bash
# One command from a fresh clone: installs what the project needs, then synthesizes or tests.
#
#   bash scripts/setup.sh --synth   Debian packages, npm ci, then `npm run synth` (the main job)
#   bash scripts/setup.sh --test    Debian packages, npm ci, the Go-built toolchain, then every test
#                                   (`npm run test:all`: unit tests, then the real-store suites) and a summary
#
# Debian packages are installed with apt-get when running as root; otherwise the script names the
# packages to install in one line and stops. The toolchain (OpenBao, Vault, OpenTofu, the vault
# provider) is built from Go modules into ${SECRETSTORE_IAC_CACHE:-~/.cache/secretstore-iac} once.
# `.ci/run` is `bash scripts/setup.sh --test`.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in --synth | --test) ;; *) echo "usage: bash scripts/setup.sh --synth | --test" >&2; exit 2 ;; esac
start=$(date +%s)

# Commands and the Debian package that provides each. For --synth only node and npm; for --test also
# dash and busybox (the generated CI login script runs under both), shellcheck (every shell file and
# generated script), git (access-diff on refs), curl (the CI login script), go (the toolchain), rsync
# (gitlab-ci-local copies each job's directory with it), chromium (the generated Playwright files run
# in it), the PostgreSQL server (the remote-state tests run a throwaway one), and docker-registry,
# skopeo and htpasswd (apache2-utils): the CI login script logs in to a real registry with TLS and
# htpasswd accounts (test/store/registry-login).
needed=(node npm)
[ "$mode" = --test ] && needed+=(dash busybox shellcheck git curl go rsync chromium docker-registry skopeo htpasswd)
missing=()
for cmd in "${needed[@]}"; do command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd"); done
if [ "$mode" = --test ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then missing+=(postgresql); fi
if [ "${#missing[@]}" -gt 0 ]; then
  pkgs=()
  for cmd in "${missing[@]}"; do
    case "$cmd" in
      go) pkgs+=(golang-go) ;;
      node | npm) pkgs+=(nodejs npm) ;;
      htpasswd) pkgs+=(apache2-utils) ;;
      *) pkgs+=("$cmd") ;;
    esac
  done
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: install these Debian packages first, then run this again: sudo apt-get install ${pkgs[*]}" >&2
    exit 1
  fi
  echo "setup: installing Debian packages: ${pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi

npm ci --no-audit --no-fund
if [ "$mode" = --synth ]; then
  npm run synth
  exit 0
fi
# The toolchain is built by the tests themselves (scripts/test-all.sh: while the unit tests run; the
# second store's while the first store's tests run, scripts/test-store.sh).
export SECRETSTORE_IAC_JEST_REPORT_DIR="${SECRETSTORE_IAC_JEST_REPORT_DIR:-$(mktemp -d)}"
status=0
npm run test:all || status=$?
node scripts/jest-summary.js "$SECRETSTORE_IAC_JEST_REPORT_DIR" || true
echo "setup: done in $(( $(date +%s) - start )) s"
exit "$status"
