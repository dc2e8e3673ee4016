import { STORE_ADDRESS_VARIABLES } from '../store/store-address';

/**
 * What the CI login script needs to know about the platform. Everything else (which paths a job
 * reads, which registry it logs in to) comes from the job's variables at run time, so one script
 * serves every job template.
 */
export interface CiLoginScriptOptions {
  /** JWT role to log in as (`registry-ci`). */
  readonly roleName: string;
  /** Mount path of the JWT auth method (`jwt`). */
  readonly authPath: string;
  /** The `aud` the job token must carry (the CI URL), quoted in error messages. */
  readonly audience: string;
  /**
   * Name of the job's ID token variable (spec §2.4a).
   * @default 'SECRETSTORE_ID_TOKEN'
   */
  readonly idTokenVariable?: string;
  /**
   * Registry login command; the job overrides it with `SECRETSTORE_REGISTRY_LOGIN_COMMAND`.
   * @default 'docker login'
   */
  readonly registryLoginCommand?: string;
  /** Name of the hidden job that declares the ID token, quoted in messages (`.secretstore-login`). */
  readonly baseJobName?: string;
}

/** Job variable listing the secrets a job reads (see {@link renderCiLoginScript}). */
export const READ_VARIABLE = 'SECRETSTORE_READ';
/** Job variable listing the registry logins of a job. */
export const REGISTRY_LOGIN_VARIABLE = 'SECRETSTORE_REGISTRY_LOGIN';
/** Job variable naming the registry login command (`docker login`, `podman login`, `buildah login`). */
export const REGISTRY_LOGIN_COMMAND_VARIABLE = 'SECRETSTORE_REGISTRY_LOGIN_COMMAND';
/** The older per-job JWT variable the script falls back to (spec §2.5, older flow). */
export const LEGACY_JOB_JWT_VARIABLE = 'CI_JOB_JWT_V2';

/** Quotes a value for a POSIX shell: `'...'`, with `'` as `'\''`. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Extracts one value from a JSON document on standard input, with nothing but a POSIX awk (mawk,
 * gawk, BusyBox awk): job images may lack jq. `sel` is a dot path (`auth.client_token`,
 * `data.data.password`); a last segment `*` matches every element of an array (`errors.*`, joined by
 * newlines). Strings are decoded (`\"`, `\\`, `\n`, `\uXXXX` with surrogate pairs, to UTF-8).
 *
 * Prints the value without a trailing newline. Exit status: 0 found (a JSON `null` prints nothing),
 * 2 not parsable JSON, 3 not present, 4 present but an object or array. Run it with `LC_ALL=C`, so
 * that strings are handled as bytes.
 */
export const JSON_VALUE_AWK = String.raw`
function ws() {
  while (pos <= n) {
    c = substr(s, pos, 1)
    if (c == " " || c == "\t" || c == "\n" || c == "\r") pos++
    else return
  }
}
function hex4(h,   i, d, v) {
  if (length(h) != 4) return -1
  v = 0
  for (i = 1; i <= 4; i++) {
    d = index("0123456789abcdef", tolower(substr(h, i, 1)))
    if (d == 0) return -1
    v = v * 16 + d - 1
  }
  return v
}
function utf8(cp) {
  if (cp < 1) return ""
  if (cp < 128) return sprintf("%c", cp)
  if (cp < 2048) return sprintf("%c%c", 192 + int(cp / 64), 128 + cp % 64)
  if (cp < 65536) return sprintf("%c%c%c", 224 + int(cp / 4096), 128 + int(cp / 64) % 64, 128 + cp % 64)
  return sprintf("%c%c%c%c", 240 + int(cp / 262144), 128 + int(cp / 4096) % 64, 128 + int(cp / 64) % 64, 128 + cp % 64)
}
function str(   r, rest, q, b, e, cp, lo) {
  pos++
  r = ""
  while (1) {
    rest = substr(s, pos)
    q = index(rest, "\"")
    b = index(rest, "\\")
    if (q == 0) { bad = 1; return "" }
    if (b == 0 || q < b) { r = r substr(rest, 1, q - 1); pos += q; return r }
    r = r substr(rest, 1, b - 1)
    pos += b
    e = substr(s, pos, 1)
    pos++
    if (e == "\"" || e == "\\" || e == "/") r = r e
    else if (e == "n") r = r "\n"
    else if (e == "t") r = r "\t"
    else if (e == "r") r = r "\r"
    else if (e == "b") r = r "\b"
    else if (e == "f") r = r "\f"
    else if (e == "u") {
      cp = hex4(substr(s, pos, 4))
      if (cp < 0) { bad = 1; return "" }
      pos += 4
      if (cp >= 55296 && cp < 56320) {
        lo = -1
        if (substr(s, pos, 2) == "\\u") lo = hex4(substr(s, pos + 2, 4))
        if (lo >= 56320 && lo < 57344) { cp = 65536 + (cp - 55296) * 1024 + (lo - 56320); pos += 6 }
        else cp = 65533
      } else if (cp >= 56320 && cp < 57344) cp = 65533
      r = r utf8(cp)
    } else { bad = 1; return "" }
  }
}
function hit(d, type, v,   j) {
  if (d != nt) return
  for (j = 1; j <= nt; j++) if (T[j] != "*" && T[j] != K[j]) return
  if (type == "o") { obj = 1; return }
  found++
  if (multi && found > 1) out = out "\n" v
  else out = v
}
function value(d,   c, k, i, lit) {
  ws()
  if (pos > n) { bad = 1; return }
  c = substr(s, pos, 1)
  if (c == "{") {
    pos++
    hit(d, "o", "")
    ws()
    if (substr(s, pos, 1) == "}") { pos++; return }
    while (1) {
      ws()
      if (substr(s, pos, 1) != "\"") { bad = 1; return }
      k = str()
      if (bad) return
      ws()
      if (substr(s, pos, 1) != ":") { bad = 1; return }
      pos++
      K[d + 1] = k
      value(d + 1)
      if (bad) return
      ws()
      c = substr(s, pos, 1)
      pos++
      if (c == "}") return
      if (c != ",") { bad = 1; return }
    }
  }
  if (c == "[") {
    pos++
    hit(d, "o", "")
    ws()
    if (substr(s, pos, 1) == "]") { pos++; return }
    i = 0
    while (1) {
      K[d + 1] = "" i
      i++
      value(d + 1)
      if (bad) return
      ws()
      c = substr(s, pos, 1)
      pos++
      if (c == "]") return
      if (c != ",") { bad = 1; return }
    }
  }
  if (c == "\"") {
    k = str()
    if (!bad) hit(d, "s", k)
    return
  }
  lit = substr(s, pos, 4)
  if (lit == "true") { hit(d, "s", lit); pos += 4; return }
  if (lit == "null") { hit(d, "s", ""); pos += 4; return }
  if (substr(s, pos, 5) == "false") { hit(d, "s", "false"); pos += 5; return }
  if (match(substr(s, pos), /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/)) {
    hit(d, "s", substr(s, pos, RLENGTH))
    pos += RLENGTH
    return
  }
  bad = 1
}
{ s = (NR == 1) ? $0 : s "\n" $0 }
END {
  n = length(s)
  pos = 1
  nt = split(sel, T, ".")
  if (nt == 0) exit 2
  multi = (T[nt] == "*")
  value(0)
  if (!bad) { ws(); if (pos <= n) bad = 1 }
  if (bad) exit 2
  if (found) { printf "%s", out; exit 0 }
  if (obj) exit 4
  exit 3
}
`.trim();

/**
 * Prints a login response for the job log: `client_token` values redacted, at most 4000 characters.
 */
const SHOW_RESPONSE_AWK = String.raw`
{ t = (NR == 1) ? $0 : t "\n" $0 }
END {
  gsub(/"client_token"[ \t]*:[ \t]*"[^"]*"/, "\"client_token\":\"(redacted)\"", t)
  gsub(/"client_token"[ \t]*:[ \t]*"[^"]*$/, "\"client_token\":\"(redacted)", t)
  if (length(t) > 4000) t = substr(t, 1, 4000) "... (truncated)"
  print t
}
`.trim();

/** Joins lines and runs of white space into single spaces; at most 2000 characters. */
const ONE_LINE_AWK = String.raw`
{ t = (NR == 1) ? $0 : t " " $0 }
END {
  gsub(/[ \t\r]+/, " ", t)
  sub(/^ /, "", t)
  sub(/ $/, "", t)
  if (length(t) > 2000) t = substr(t, 1, 2000) "... (truncated)"
  printf "%s", t
}
`.trim();

/**
 * The script body. Written as a raw template so that shell and awk text is exactly what is seen
 * here; shell parameter expansions are spelled `$\{` and turned into `${` by {@link renderCiLoginScript}.
 */
const SCRIPT_BODY = String.raw`
# ---- messages -------------------------------------------------------------------------------------
_ss_say() {
  printf 'secretstore: %s\n' "$1"
}
# _ss_die <what happened> [<line>...]: prints to standard error and stops the job.
_ss_die() {
  printf 'secretstore: ERROR: %s\n' "$1" >&2
  shift
  for _ss_line in "$@"; do
    printf 'secretstore:   %s\n' "$_ss_line" >&2
  done
  exit 1
}
_ss_is_name() {
  case $1 in
    '' | [0-9]* | *[!A-Za-z0-9_]*) return 1 ;;
  esac
  return 0
}

# ---- JSON (no jq needed) --------------------------------------------------------------------------
# _ss_json <dot path> < json: prints the value; status 0 found, 2 unparsable, 3 absent, 4 not a scalar.
_ss_json() {
  LC_ALL=C awk -v sel="$1" '@@JSON_VALUE_AWK@@'
}
# The store's error messages of the last response, on one line; its raw text if it is not JSON.
_ss_errors() {
  if _ss_errs=$(printf '%s' "$_ss_body" | _ss_json 'errors.*'); then
    printf '%s' "$_ss_errs" | LC_ALL=C awk '@@ONE_LINE_AWK@@'
  else
    printf '%s' "$_ss_body" | LC_ALL=C awk '@@ONE_LINE_AWK@@'
  fi
}

# ---- HTTP -----------------------------------------------------------------------------------------
# _ss_curl <standard input> <curl arguments>: runs curl with the common options; sets _ss_status,
# _ss_body and _ss_curl_rc. Request bodies and headers reach curl on its standard input, never on its
# command line, so that neither the job token nor the store token shows in the process list.
_ss_curl() {
  _ss_in=$1
  shift
  set -- -sS --connect-timeout 20 --max-time 60 -w '%{http_code}' "$@"
  if [ -n "$_ss_cacert" ]; then
    set -- --cacert "$_ss_cacert" "$@"
  fi
  _ss_curl_rc=0
  _ss_out=$(printf '%s\n' "$_ss_in" | curl "$@") || _ss_curl_rc=$?
  _ss_in=
  _ss_status=000
  _ss_body=
  if [ "$\{#_ss_out}" -ge 3 ]; then
    _ss_status=$\{_ss_out#"$\{_ss_out%???}"}
    _ss_body=$\{_ss_out%???}
  fi
  _ss_out=
  case $_ss_status in
    [0-9][0-9][0-9]) ;;
    *) _ss_status=000 ;;
  esac
}
_ss_post_login() {
  _ss_curl "{\"role\":\"$_ss_role\",\"jwt\":\"$_ss_jwt\"}" \
    -X POST -H 'Content-Type: application/json' --data-binary @- -- "$1"
}
_ss_get() {
  _ss_curl "header = \"X-Vault-Token: $_ss_token\"" -K - -- "$1"
}
_ss_unreachable() {
  _ss_die "could not reach the secrets store at $_ss_addr ($1: curl exit $_ss_curl_rc, see curl's message above)" \
    "Fix: check $_ss_addr_from (scheme, host, port) and that the runner can reach the store; a private CA goes in SECRETSTORE_CACERT."
}

# ---- 1. store address -----------------------------------------------------------------------------
_ss_find_address() {
  _ss_addr=
  _ss_addr_from=
  for _ss_n in $_ss_addr_vars; do
    eval "_ss_v=\$\{$_ss_n:-}"
    [ -n "$_ss_v" ] || continue
    case $_ss_v in
      *[[:space:]]*) _ss_die "$_ss_n contains white space" "Fix: set $_ss_n to the store's address only, e.g. https://secrets.example:8200." ;;
    esac
    while :; do
      case $_ss_v in
        */) _ss_v=$\{_ss_v%/} ;;
        *) break ;;
      esac
    done
    if [ -z "$_ss_addr" ]; then
      _ss_addr=$_ss_v
      _ss_addr_from=$_ss_n
    elif [ "$_ss_v" != "$_ss_addr" ]; then
      _ss_die "the store address variables disagree: $_ss_addr_from=$_ss_addr but $_ss_n=$_ss_v" \
        "Fix: keep SECRETSTORE_ADDR (group-level CI/CD variable) and unset $_ss_n in the job or image."
    fi
  done
  if [ -z "$_ss_addr" ]; then
    _ss_die "SECRETSTORE_ADDR is unset or empty (so are $_ss_addr_fallbacks): the login call would target an empty host, and curl would report that it cannot resolve the host." \
      "Fix: define SECRETSTORE_ADDR as a group-level CI/CD variable, unmasked (e.g. https://secrets.example:8200), so every project of the group sees it."
  fi
  case $_ss_addr in
    http://?* | https://?*) ;;
    *) _ss_die "$_ss_addr_from=$_ss_addr is not an http(s) URL" "Fix: set it to the store's base address, e.g. https://secrets.example:8200." ;;
  esac
}

# ---- 2. tools -------------------------------------------------------------------------------------
_ss_need_tools() {
  if ! command -v curl >/dev/null 2>&1; then
    if command -v apk >/dev/null 2>&1; then
      _ss_say "curl is missing on this Alpine image (BusyBox wget cannot send headers or POST data): apk add --no-cache curl"
      if ! apk add --no-cache curl; then
        _ss_die "apk add --no-cache curl failed" "Fix: use a job image that has curl, or run the job as root so apk can install it."
      fi
      command -v curl >/dev/null 2>&1 || _ss_die "curl is still missing after apk add" "Fix: use a job image that has curl."
    else
      _ss_die "curl is required to log in to the secrets store and is not installed" "Fix: use a job image with curl (on Alpine the template installs it with apk)."
    fi
  fi
  command -v awk >/dev/null 2>&1 || _ss_die "awk is required and is not installed" "Fix: use a job image with awk (BusyBox provides one)."
}

# ---- 3. JWT login ---------------------------------------------------------------------------------
_ss_login() {
  eval "_ss_jwt=\$\{$_ss_id_token_var:-}"
  if [ -z "$_ss_jwt" ] && [ -n "$\{@@LEGACY_JWT@@:-}" ]; then
    _ss_say "$_ss_id_token_var is empty: using the older @@LEGACY_JWT@@ (older flow); declare the id_tokens block instead (extend $_ss_base_job)"
    _ss_jwt=$@@LEGACY_JWT@@
  fi
  if [ -z "$_ss_jwt" ]; then
    _ss_die "$_ss_id_token_var is unset or empty: the job declares no ID token" \
      "Fix: extend $_ss_base_job, or declare id_tokens: $_ss_id_token_var: aud: $_ss_audience in the job."
  fi
  case $_ss_jwt in
    *[!A-Za-z0-9._-]* | *.*.*.*) _ss_die "$_ss_id_token_var does not hold a JWT" "Fix: do not set $_ss_id_token_var yourself; declare it in id_tokens (extend $_ss_base_job)." ;;
    *.*.*) ;;
    *) _ss_die "$_ss_id_token_var does not hold a JWT" "Fix: do not set $_ss_id_token_var yourself; declare it in id_tokens (extend $_ss_base_job)." ;;
  esac
  _ss_post_login "$_ss_addr/v1/auth/$_ss_auth_path/login"
  _ss_jwt=
  [ "$_ss_curl_rc" -eq 0 ] || _ss_unreachable "JWT login"
  case $_ss_status in
    200) ;;
    400)
      _ss_err=$(_ss_errors)
      case $_ss_err in
        *'invalid audience'*)
          _ss_die "HTTP 400 from JWT login as $_ss_role: wrong aud claim (store said: $_ss_err)" \
            "Fix: use the audience $_ss_audience: id_tokens: $_ss_id_token_var: aud: $_ss_audience (extend $_ss_base_job)." ;;
        *'error validating claims'* | *'bound claim'* | *'claim "'*)
          _ss_die "HTTP 400 from JWT login as $_ss_role: job not bound to the role, its token's claims do not match the role's bound claims (store said: $_ss_err)" \
            "The spec lists this as HTTP 403; this store answers a bound-claim mismatch with 400." \
            "Fix: check the role's bound claims (project or namespace of this job), or run the job in a bound project." ;;
        *'could not be found'*)
          _ss_die "HTTP 400 from JWT login: the role $_ss_role does not exist at auth/$_ss_auth_path (store said: $_ss_err)" \
            "Fix: apply the platform's ci-access configuration to this store." ;;
        *'invalid issuer'* | *'expired'* | *'signature'* | *'not yet valid'*)
          _ss_die "HTTP 400 from JWT login as $_ss_role: the store rejected the job token (store said: $_ss_err)" \
            "Fix: check that the store's JWT method trusts this CI instance (issuer, keys) and that the runner's clock is right." ;;
        *)
          _ss_die "HTTP 400 from JWT login as $_ss_role (store said: $_ss_err)" \
            "Cause: wrong aud claim, or (on this store) the job is not bound to the role." \
            "Fix: use the audience $_ss_audience; check the role's bound claims." ;;
      esac ;;
    403)
      _ss_die "HTTP 403 from JWT login as $_ss_role: job not bound to the role (store said: $(_ss_errors))" \
        "Fix: check the role's bound claims (and its token_bound_cidrs against the runner's address)." ;;
    *)
      _ss_die "HTTP $_ss_status from JWT login as $_ss_role at $_ss_addr (store said: $(_ss_errors))" \
        "Fix: check $_ss_addr_from and the store's health." ;;
  esac
  _ss_token=
  if _ss_token=$(printf '%s' "$_ss_body" | _ss_json auth.client_token); then :; else _ss_token=; fi
  case $_ss_token in
    '' | *[!A-Za-z0-9._~+/=-]*)
      _ss_token=
      printf 'secretstore: ERROR: empty token after parsing: the login response could not be parsed. Login response:\n' >&2
      printf '%s' "$_ss_body" | LC_ALL=C awk '@@SHOW_RESPONSE_AWK@@' >&2
      _ss_die "no store token (HTTP $_ss_status from $_ss_addr/v1/auth/$_ss_auth_path/login)" \
        "Fix: check that $_ss_addr_from points at the store itself (not a proxy or web page) and read the response above." ;;
  esac
  _ss_body=
  _ss_say "logged in to $_ss_addr as role $_ss_role"
}

# ---- 4. reads -------------------------------------------------------------------------------------
# One entry: kv2:<api path>:<key>=<VARIABLE>,...[:when=<VARIABLE>]  (kv1: for a KV version 1 mount)
_ss_read_entry() {
  _ss_entry=$1
  _ss_bad_entry="$_ss_read_var entry \"$_ss_entry\" is not kv2:<api path>:<key>=<VARIABLE>,...[:when=<VARIABLE>]"
  case $_ss_entry in
    kv1:?*:?* | kv2:?*:?*) ;;
    *) _ss_die "$_ss_bad_entry" ;;
  esac
  _ss_kind=$\{_ss_entry%%:*}
  _ss_rest=$\{_ss_entry#*:}
  _ss_path=$\{_ss_rest%%:*}
  _ss_rest=$\{_ss_rest#*:}
  _ss_keys=$\{_ss_rest%%:*}
  _ss_cond=
  case $_ss_rest in
    *:*) _ss_cond=$\{_ss_rest#*:} ;;
  esac
  case $_ss_path in
    '' | /* | */ | *//* | *..* | *[!A-Za-z0-9._/-]*) _ss_die "$_ss_bad_entry (bad path)" ;;
  esac
  if [ -n "$_ss_cond" ]; then
    _ss_cond_var=$\{_ss_cond#when=}
    if [ "$_ss_cond_var" = "$_ss_cond" ] || ! _ss_is_name "$_ss_cond_var"; then
      _ss_die "$_ss_bad_entry (bad condition)"
    fi
    eval "_ss_v=\$\{$_ss_cond_var:-}"
    # Optional read: skipped silently while the variable is unset (e.g. reporting disabled).
    [ -n "$_ss_v" ] || return 0
  fi
  if [ "$_ss_kind" = kv2 ]; then _ss_sel=data.data; else _ss_sel=data; fi

  _ss_get "$_ss_addr/v1/$_ss_path"
  [ "$_ss_curl_rc" -eq 0 ] || _ss_unreachable "reading $_ss_path"
  case $_ss_status in
    200) ;;
    403)
      _ss_die "HTTP 403 reading $_ss_path: path not in the policy of role $_ss_role (store said: $(_ss_errors))" \
        "Fix: update the policy: declare the secret in the platform configuration with this job as a consumer and grant read to $_ss_role, or read only the paths this job's template lists." ;;
    404)
      _ss_die "HTTP 404 reading $_ss_path: no secret there (or its latest version is deleted)" \
        "Fix: ask the infrastructure team to put the secret's values in the store at $_ss_path." ;;
    *)
      _ss_die "HTTP $_ss_status reading $_ss_path (store said: $(_ss_errors))" "Fix: check the store's health and $_ss_addr_from." ;;
  esac

  _ss_names=
  _ss_list=$_ss_keys
  while [ -n "$_ss_list" ]; do
    _ss_item=$\{_ss_list%%,*}
    case $_ss_list in
      *,*) _ss_list=$\{_ss_list#*,} ;;
      *) _ss_list= ;;
    esac
    _ss_key=$\{_ss_item%%=*}
    _ss_name=$\{_ss_item#*=}
    if [ "$_ss_key" = "$_ss_item" ] || ! _ss_is_name "$_ss_key" || ! _ss_is_name "$_ss_name"; then
      _ss_die "$_ss_bad_entry (bad key mapping \"$_ss_item\")"
    fi
    case $_ss_name in
      _ss_*) _ss_die "$_ss_bad_entry (reserved variable name $_ss_name)" ;;
    esac
    _ss_rc=0
    _ss_val=$(printf '%s' "$_ss_body" | _ss_json "$_ss_sel.$_ss_key" && printf .) || _ss_rc=$?
    case $_ss_rc in
      0) ;;
      3) _ss_die "HTTP 200 reading $_ss_path, but the secret has no key \"$_ss_key\"" "Fix: put the key $_ss_key in the secret at $_ss_path." ;;
      4) _ss_die "HTTP 200 reading $_ss_path, but its key \"$_ss_key\" is not a string" "Fix: store $_ss_key as a string." ;;
      *) _ss_die "HTTP 200 reading $_ss_path, but the response could not be parsed ($\{#_ss_body} characters, not shown: it may hold secrets)" \
           "Fix: check that $_ss_addr_from points at the store itself, not a proxy." ;;
    esac
    export "$_ss_name=$\{_ss_val%.}"
    _ss_val=
    _ss_names="$_ss_names $_ss_name"
  done
  _ss_body=
  _ss_say "read $_ss_path: exported$_ss_names"
}

# ---- 5. registry logins ---------------------------------------------------------------------------
# One entry: <host:port>=<USERNAME VARIABLE>,<PASSWORD VARIABLE>; the password goes on standard input.
_ss_registry_login() {
  _ss_target=$\{1%%=*}
  _ss_vars=$\{1#*=}
  _ss_uvar=$\{_ss_vars%%,*}
  _ss_pvar=$\{_ss_vars#*,}
  if [ "$_ss_target" = "$1" ] || [ -z "$_ss_target" ] || ! _ss_is_name "$_ss_uvar" || ! _ss_is_name "$_ss_pvar"; then
    _ss_die "$_ss_login_var entry \"$1\" is not <host:port>=<USERNAME VARIABLE>,<PASSWORD VARIABLE>"
  fi
  case $_ss_target in
    *[!A-Za-z0-9.:-]*) _ss_die "$_ss_login_var entry \"$1\": bad registry host:port" ;;
  esac
  eval "_ss_u=\$\{$_ss_uvar:-}"
  eval "_ss_p=\$\{$_ss_pvar:-}"
  if [ -z "$_ss_u" ] || [ -z "$_ss_p" ]; then
    _ss_die "registry login at $_ss_target: $_ss_uvar or $_ss_pvar is empty" \
      "Fix: read the account's secret first ($_ss_read_var of this job's template)."
  fi
  _ss_cmd=$\{@@LOGIN_COMMAND_VAR@@:-$_ss_login_cmd_default}
  _ss_cmd_word=$\{_ss_cmd%% *}
  command -v "$_ss_cmd_word" >/dev/null 2>&1 ||
    _ss_die "registry login at $_ss_target: \"$_ss_cmd_word\" not found" \
      "Fix: set @@LOGIN_COMMAND_VAR@@ to the image's client (podman login, buildah login) or use an image with $_ss_cmd_word."
  # Word splitting of the command is intended (noglob is on); the password is on standard input only.
  if printf '%s' "$_ss_p" | $_ss_cmd --username "$_ss_u" --password-stdin "$_ss_target"; then
    _ss_u=
    _ss_p=
    _ss_say "registry login at $_ss_target as \$$_ss_uvar (password on standard input)"
  else
    _ss_rc=$?
    _ss_u=
    _ss_p=
    _ss_die "registry login at $_ss_target failed ($_ss_cmd exit $_ss_rc)" \
      "Fix: check the account's credentials in the store and that the account may use this registry port."
  fi
}

# ---- main -----------------------------------------------------------------------------------------
_ss_main() {
  _ss_find_address
  _ss_need_tools
  _ss_cacert=$\{SECRETSTORE_CACERT:-$\{VAULT_CACERT:-}}
  _ss_login
  for _ss_e in $\{@@READ_VAR@@:-}; do
    _ss_read_entry "$_ss_e"
  done
  _ss_token=
  for _ss_e in $\{@@REGISTRY_LOGIN_VAR@@:-}; do
    _ss_registry_login "$_ss_e"
  done
}

_ss_main
# Leave nothing of the script behind but the exported variables.
unset _ss_addr _ss_addr_from _ss_body _ss_cacert _ss_cmd _ss_cmd_word _ss_cond _ss_cond_var _ss_curl_rc \
  _ss_e _ss_in _ss_entry _ss_bad_entry _ss_err _ss_errs _ss_item _ss_jwt _ss_key _ss_keys _ss_kind _ss_line _ss_list \
  _ss_n _ss_name _ss_names _ss_out _ss_p _ss_path _ss_pvar _ss_rc _ss_rest _ss_sel _ss_status _ss_target \
  _ss_token _ss_u _ss_uvar _ss_v _ss_val _ss_vars \
  _ss_role _ss_auth_path _ss_audience _ss_id_token_var _ss_base_job _ss_addr_vars _ss_addr_fallbacks \
  _ss_login_cmd_default _ss_read_var _ss_login_var
unset -f _ss_say _ss_die _ss_is_name _ss_json _ss_errors _ss_curl _ss_post_login _ss_get _ss_unreachable \
  _ss_find_address _ss_need_tools _ss_login _ss_read_entry _ss_registry_login _ss_main
if [ -z "$_ss_noglob" ]; then set +f; fi
unset _ss_noglob
if [ -n "$_ss_xtrace" ]; then unset _ss_xtrace; set -x; else unset _ss_xtrace; fi
`;

/**
 * Renders the CI login script (spec §4.1 flow 1 in a job): a POSIX `sh` script, to be sourced by
 * the job (`. ci/secretstore-login.sh`) so that its exports reach the job's script. The GitLab
 * template embeds the same text as the `before_script` of `.secretstore-login`.
 *
 * Run-time inputs, all optional except the address and the ID token:
 * - `SECRETSTORE_ADDR` (falls back to `VAULT_ADDR`, `BAO_ADDR`; they must agree when several are set)
 * - the ID token variable (`SECRETSTORE_ID_TOKEN`; falls back to the older `CI_JOB_JWT_V2`)
 * - `SECRETSTORE_READ`: whitespace-separated `kv2:<api path>:<key>=<VARIABLE>,...[:when=<VARIABLE>]`
 * - `SECRETSTORE_REGISTRY_LOGIN`: whitespace-separated `<host:port>=<USERNAME VAR>,<PASSWORD VAR>`
 * - `SECRETSTORE_REGISTRY_LOGIN_COMMAND` (default `docker login`), `SECRETSTORE_CACERT`
 *
 * It never prints a secret value, keeps the JWT, the store token and the password off every command
 * line (curl reads them on standard input), and switches shell tracing off while it runs.
 */
export function renderCiLoginScript(options: CiLoginScriptOptions): string {
  const idTokenVariable = options.idTokenVariable ?? 'SECRETSTORE_ID_TOKEN';
  const loginCommand = options.registryLoginCommand ?? 'docker login';
  const baseJob = options.baseJobName ?? '.secretstore-login';
  const fallbacks = STORE_ADDRESS_VARIABLES.filter((v) => v !== 'SECRETSTORE_ADDR');
  const header = [
    '# secretstore-login.sh: generated by secretstore-iac from the platform declarations. Do not edit.',
    '#',
    `# CI job login to the secrets store (spec §4.1 flow 1): JWT login as role "${options.roleName}" with the`,
    `# job's ID token ${idTokenVariable} (aud ${options.audience}), reads of the secret paths the job lists in`,
    `# ${READ_VARIABLE}, exports of their keys, registry logins listed in ${REGISTRY_LOGIN_VARIABLE} with the`,
    '# password on standard input. Source it so that the exports reach the job: . ./secretstore-login.sh',
    '# It prints variable names only, never a value, and turns shell tracing (set -x) off while it runs.',
    '# See docs/pipelines.md.',
    '',
    'case $- in *x*) _ss_xtrace=1; set +x ;; *) _ss_xtrace= ;; esac',
    'case $- in *f*) _ss_noglob=1 ;; *) _ss_noglob=; set -f ;; esac',
    `_ss_role=${shellQuote(options.roleName)}`,
    `_ss_auth_path=${shellQuote(options.authPath)}`,
    `_ss_audience=${shellQuote(options.audience)}`,
    `_ss_id_token_var=${shellQuote(idTokenVariable)}`,
    `_ss_base_job=${shellQuote(baseJob)}`,
    `_ss_addr_vars=${shellQuote(STORE_ADDRESS_VARIABLES.join(' '))}`,
    `_ss_addr_fallbacks=${shellQuote(fallbacks.join(', '))}`,
    `_ss_login_cmd_default=${shellQuote(loginCommand)}`,
    `_ss_read_var=${shellQuote(READ_VARIABLE)}`,
    `_ss_login_var=${shellQuote(REGISTRY_LOGIN_VARIABLE)}`,
  ].join('\n');
  const body = SCRIPT_BODY.replace(/\$\\\{/g, '${')
    .replace(/@@JSON_VALUE_AWK@@/g, () => JSON_VALUE_AWK)
    .replace(/@@SHOW_RESPONSE_AWK@@/g, () => SHOW_RESPONSE_AWK)
    .replace(/@@ONE_LINE_AWK@@/g, () => ONE_LINE_AWK)
    .replace(/@@LEGACY_JWT@@/g, LEGACY_JOB_JWT_VARIABLE)
    .replace(/@@READ_VAR@@/g, READ_VARIABLE)
    .replace(/@@REGISTRY_LOGIN_VAR@@/g, REGISTRY_LOGIN_VARIABLE)
    .replace(/@@LOGIN_COMMAND_VAR@@/g, REGISTRY_LOGIN_COMMAND_VARIABLE);
  return `${header}\n${body.replace(/^\n+/, '')}`;
}
