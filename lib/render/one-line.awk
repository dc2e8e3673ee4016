{ t = (NR == 1) ? $0 : t " " $0 }
END {
  gsub(/[ \t\r]+/, " ", t)
  sub(/^ /, "", t)
  sub(/ $/, "", t)
  if (length(t) > 2000) t = substr(t, 1, 2000) "... (truncated)"
  printf "%s", t
}
