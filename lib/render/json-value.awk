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
