#!/usr/bin/env bash
# Writes test/fixtures/pipeline-upgrade/<store kind>/<stack>.cdk.tf.json: the ci-access and app-roles
# stacks of the store tests' platform (test/support/store/platform-fixture.ts: testPlatformConfig with a
# configuration project) as the library synthesized them before the pipeline grants moved into each
# stack (commit 09ddf13, main before 1db1f8c). test/store/pipeline-upgrade.store.test.ts applies them
# as "the store an older version applied", then runs the new version's pipeline on it.
# The CI key is a placeholder (PUBLIC_KEY_PEM_PLACEHOLDER): the test puts its own key there.
# Usage: bash scripts/pipeline-upgrade-fixture.sh   (from the repository; needs node_modules)
set -euo pipefail
COMMIT=09ddf13
top=$(git rev-parse --show-toplevel)
out="$top/test/fixtures/pipeline-upgrade"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pipeline-upgrade-fixture-XXXXXX")
cleanup() { git -C "$top" worktree remove --force "$tmp/worktree" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
git -C "$top" worktree add --detach "$tmp/worktree" "$COMMIT" >/dev/null
ln -s "$top/node_modules" "$tmp/worktree/node_modules"
(cd "$tmp/worktree" && npx tsc -p tsconfig.json && node scripts/copy-assets.js)
# A throw-away key: only its place in the output matters (replaced by the placeholder below).
node -e 'const {generateKeyPairSync}=require("crypto");process.stdout.write(generateKeyPairSync("rsa",{modulusLength:2048}).publicKey.export({type:"spki",format:"pem"}))' > "$tmp/key.pem"
for kind in openbao vault; do
  rm -rf "$tmp/cdktf.out"
  (cd "$tmp/worktree" && KIND="$kind" OUTDIR="$tmp/cdktf.out" PEM_FILE="$tmp/key.pem" node -e '
    const fs = require("fs");
    const lib = require("./dist/lib");
    const app = new lib.SecretStoreApp({ outdir: process.env.OUTDIR });
    // testPlatformConfig of test/support/store/platform-fixture.ts, with the configuration project of the upgrade test.
    lib.definePlatform(app, {
      ciKeySource: lib.JwtKeySource.publicKeys([fs.readFileSync(process.env.PEM_FILE, "utf8")]),
      ciJobTimeout: lib.Duration.minutes(15),
      configurationProject: { projectId: "4242" },
      settings: { organisation: "acme", ciUrl: "https://gitlab.test.example", registryHost: "registry.test.example", registryPorts: { push: 8443, pull: 8444 }, store: { kind: process.env.KIND } },
    });
    app.synth();
  ')
  mkdir -p "$out/$kind"
  for stack in ci-access app-roles; do
    PEM_FILE="$tmp/key.pem" node -e '
      const fs = require("fs");
      const pem = fs.readFileSync(process.env.PEM_FILE, "utf8").trim();
      let text = fs.readFileSync(process.argv[1], "utf8");
      const encoded = JSON.stringify(pem).slice(1, -1);
      if (process.argv[1].includes("/ci-access/") && !text.includes(encoded)) throw new Error("the key is not in " + process.argv[1]);
      text = text.split(encoded).join("PUBLIC_KEY_PEM_PLACEHOLDER");
      fs.writeFileSync(process.argv[2], text);
    ' "$tmp/cdktf.out/stacks/$stack/cdk.tf.json" "$out/$kind/$stack.cdk.tf.json"
  done
done
echo "wrote $out (from $(git -C "$top" rev-parse --short "$COMMIT"))"
