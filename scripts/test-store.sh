#!/usr/bin/env bash
# The store suite against each store, one after the other (npm run test:store): builds or finds the
# toolchain (scripts/toolchain.sh), then runs jest -c jest.store.config.js --runInBand once per store
# with SECRETSTORE_IAC_STORE set. With SECRETSTORE_IAC_JEST_REPORT_DIR, each run writes its own
# report, store-<store>.json, which scripts/jest-summary.js lists by name. Extra arguments go to jest
# (a test file, -t ...). Fails when any run fails; every store runs even after a failure. Where
# Terraform is absent, each store's run ends with "Terraform absent: N engine-facing tests ran on
# OpenTofu only" (test/support/store/engine-matrix.ts; scripts/jest-summary.js counts them).
#
#   SECRETSTORE_IAC_STORES  stores to run, in order (default: "openbao vault")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stores=${SECRETSTORE_IAC_STORES:-openbao vault}
SECRETSTORE_IAC_STORES=$stores bash scripts/toolchain.sh
status=0
# Each run's report (a temporary one without SECRETSTORE_IAC_JEST_REPORT_DIR): the Terraform line reads it.
reports=${SECRETSTORE_IAC_JEST_REPORT_DIR:-}
if [[ -z $reports ]]; then
  reports=$(mktemp -d)
  trap 'rm -rf "$reports"' EXIT
fi
for store in $stores; do
  case $store in openbao | vault) ;; *) echo "test-store: unknown store \"$store\" (openbao or vault)" >&2; exit 2 ;; esac
  report=$reports/store-$store.json
  rm -f "$report"
  echo "test-store: store suite on $store"
  start=$(date +%s)
  SECRETSTORE_IAC_STORE=$store node node_modules/jest/bin/jest.js -c jest.store.config.js --runInBand --json "--outputFile=$report" "$@" || status=1
  echo "test-store: store suite on $store done in $(($(date +%s) - start)) s"
  if [[ -f $report ]]; then
    node -e 'const line = require("./scripts/jest-summary.js").terraformAbsentLine([require(process.argv[1])]); if (line) console.log(`test-store: ${line}`);' "$report"
  fi
done
exit $status
