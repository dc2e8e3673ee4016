{ t = (NR == 1) ? $0 : t "\n" $0 }
END {
  gsub(/"client_token"[ \t]*:[ \t]*"[^"]*"/, "\"client_token\":\"(redacted)\"", t)
  gsub(/"client_token"[ \t]*:[ \t]*"[^"]*$/, "\"client_token\":\"(redacted)", t)
  if (length(t) > 4000) t = substr(t, 1, 4000) "... (truncated)"
  print t
}
