#!/bin/bash
# docs/pipelines.md §9 "Each stack's run carries only its grant": a plan's refresh of one stack (400 applications: an AppRole role and a policy each, 800 objects)
# with the pipeline role's wide token (own policy + the grants of 100 stacks, 1,600 rules each) and
# with the stack's narrowed token (own policy + its grant), on a bao dev server (port 8297), in a temporary directory. A measurement, not a test: run by hand.
set -e
W=$(mktemp -d); cd "$W"; mkdir stack
source ~/.cache/secretstore-iac/toolchain.env
B=$SECRETSTORE_IAC_BAO; T=$SECRETSTORE_IAC_TOFU
PORT=8297
$B server -dev -dev-root-token-id=root -dev-listen-address=127.0.0.1:$PORT >server.log 2>&1 &
echo $! > pid
trap 'kill $(cat "$W/pid"); rm -rf "$W"' EXIT
sleep 2
export BAO_ADDR=http://127.0.0.1:$PORT BAO_TOKEN=root VAULT_ADDR=http://127.0.0.1:$PORT
$B auth enable approle >/dev/null
python3 - <<'PY'
import json, urllib.request
def put(p, body):
    req=urllib.request.Request(f"http://127.0.0.1:8297/v1/{p}",data=json.dumps(body).encode(),method="PUT",headers={"X-Vault-Token":"root"})
    urllib.request.urlopen(req).read()
R="secretstore-iac-pipeline"
put(f"sys/policies/acl/{R}", {"policy": 'path "auth/token/create" {\n  capabilities = ["update"]\n}\npath "sys/auth" {\n  capabilities = ["read"]\n}\npath "sys/mounts" {\n  capabilities = ["read"]\n}\n'})
for s in range(100):
    rules=[]
    for a in range(400):
        n=f"app-{s:02d}-{a:04d}"
        for p in [f"sys/policies/acl/{n}", f"auth/approle/role/{n}", f"auth/approle/role/{n}/role-id", f"auth/approle/role/{n}/policies"]:
            rules.append(f'path "{p}" {{\n  capabilities = ["create", "read", "update", "delete"]\n}}\n')
    put(f"sys/policies/acl/{R}-app-roles-{s:02d}", {"policy":"".join(rules)})
# The stack: 400 applications of shard 00.
res={"vault_policy":{}, "vault_approle_auth_backend_role":{}}
for a in range(400):
    n=f"app-00-{a:04d}"
    res["vault_policy"][n]={"name":n,"policy":f'path "secret/data/{n}" {{\n  capabilities = ["read"]\n}}\n'}
    res["vault_approle_auth_backend_role"][n]={"backend":"approle","role_name":n,"token_policies":[n]}
json.dump({"terraform":{"required_providers":{"vault":{"source":"hashicorp/vault","version":"5.9.0"}}},"provider":{"vault":{}},"resource":res}, open("stack/main.tf.json","w"), indent=1)
PY
cd stack
rm -rf terraform.tfstate* .terraform*
$T init -input=false >/dev/null
s=$(date +%s.%N); $T apply -input=false -auto-approve >/dev/null; echo "apply (root): $(echo "$(date +%s.%N) - $s" | bc) s"
R=secretstore-iac-pipeline
WIDE=$($B token create -policy=$R $(for s in $(seq -w 0 99); do printf -- '-policy=%s-app-roles-%s ' $R $s; done) -field=token)
NARROW=$(BAO_TOKEN=$WIDE $B token create -policy=default -policy=$R -policy=$R-app-roles-00 -field=token)
echo "uptime before: $(uptime)"
for round in 1 2; do
  for which in WIDE NARROW; do
    tok=${!which}
    s=$(date +%s.%N); VAULT_TOKEN=$tok $T plan -input=false -lock=false -detailed-exitcode >/dev/null || { c=$?; [ $c = 2 ] && echo "plan shows changes!"; [ $c = 1 ] && echo "plan failed"; }
    echo "round $round $which plan (refresh of 800 objects): $(echo "$(date +%s.%N) - $s" | bc) s"
  done
done
echo "uptime after: $(uptime)"
