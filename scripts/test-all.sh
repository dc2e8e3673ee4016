#!/usr/bin/env bash
# `npm run test:all`: the unit tests, the package check, the framework comparison and the store suites.
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
  "$@" || failed+=("$name")
  echo "test-all: $name done in $((SECONDS - start)) s"
}
suite 'unit tests (npm test)' npm test
suite 'package check (npm run package:check)' npm run package:check
suite 'framework comparison (npm run test:frameworks)' npm run test:frameworks
suite 'store suites (npm run test:store)' npm run test:store
if ((${#failed[@]} > 0)); then
  printf 'test-all: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo 'test-all: every suite passed'
