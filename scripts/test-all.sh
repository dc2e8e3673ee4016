#!/usr/bin/env bash
# `npm run test:all`: the unit tests (the toolchain built meanwhile), the package check, the framework
# comparison and the store suites.
# Every suite runs even when an earlier one failed (a shared runner that fails one unit test still
# shows every store result), and the failing ones are named together at the end; exit 1 if any failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
failed=()
# One suite: its name, then its command.
suite() {
  local name=$1 start=$SECONDS
  shift
  echo "test-all: $name"
  local rc=0
  "$@" || rc=$?
  # A failure said where it happens, not only at the end (a long store run hides an early one).
  if ((rc != 0)); then
    failed+=("$name")
    echo "test-all: $name FAILED (exit $rc) after $((SECONDS - start)) s; the other suites still run"
  else
    echo "test-all: $name passed in $((SECONDS - start)) s"
  fi
}
# The unit tests need no toolchain: on a new machine the first store's toolchain (OpenBao, OpenTofu, the
# provider: the cold Go build) is built while they run, and waited for before the suites that use it.
first_store=${SECRETSTORE_IAC_STORES:-openbao vault}
first_store=${first_store%% *}
toolchain_log=$(mktemp)
trap 'rm -f "$toolchain_log"' EXIT
SECRETSTORE_IAC_STORES=$first_store npm run --silent toolchain >"$toolchain_log" 2>&1 &
toolchain_pid=$!
# The toolchain's build, waited for; its output printed.
wait_toolchain() {
  local rc=0
  wait "$toolchain_pid" || rc=$?
  cat "$toolchain_log"
  return $rc
}
suite 'unit tests (npm test)' npm test
suite "toolchain for $first_store (npm run toolchain, built while the unit tests ran)" wait_toolchain
suite 'package check (npm run package:check)' npm run package:check
suite 'framework comparison (npm run test:frameworks)' npm run test:frameworks
suite 'store suites (npm run test:store)' npm run test:store
if ((${#failed[@]} > 0)); then
  printf 'test-all: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo 'test-all: every suite passed'
