#!/bin/sh
# The alarm that does not need nightshift (POSIX sh and curl only). The alert and watch units run
#   sh nightshift-alert.sh alert|watch UNIT COMMAND...
# COMMAND is nightshift's own (`alert --unit` or `doctor --alert`), tried first: its report is the
# rich one, through the outbox. It marks the file named by NIGHTSHIFT_REPORTED when it has reported
# (or had nothing to report). No mark (node missing, the bundle gone, a crash before its report):
# this script posts a plain message to DISCORD_WEBHOOK_URL and to NIGHTSHIFT_WEBHOOK_URL (as JSON,
# or as ntfy's text when NIGHTSHIFT_WEBHOOK_FORMAT=ntfy) itself, with the cause from COMMAND's
# stderr and systemd's MONITOR_* variables, and pings NIGHTSHIFT_PING_URL/fail. A failed unit
# (alert) pings /fail whatever COMMAND did: silence must not pass for health.
# Secrets (the env file's values) are cut out of every text sent or printed; URLs go to curl on
# its stdin, never in argv, which every local user can read.
set -u
mode=${1:-}
unit=${2:-}
if [ $# -lt 3 ] || { [ "$mode" != alert ] && [ "$mode" != watch ]; }; then
  echo "<3>nightshift-alert.sh: usage: nightshift-alert.sh alert|watch UNIT COMMAND..." >&2
  exit 64
fi
shift 2
umask 077
work=$(mktemp -d 2>/dev/null) || work=/tmp/nightshift-alert.$$
mkdir -p "$work" 2>/dev/null
trap 'rm -rf "$work"' EXIT
mark="$work/reported"

# nightshift first; its stderr still reaches the journal.
NIGHTSHIFT_REPORTED="$mark" "$@" 2>"$work/stderr"
code=$?
cat "$work/stderr" >&2

# awk reads bytes, whichever awk it is (mawk, gawk, busybox): under a UTF-8 locale gawk would read
# characters, and an invalid byte would do what each awk pleases.
LC_ALL=C
export LC_ALL

# Every secret value of the environment (as nightshift's redactor names them) replaced, then the
# text made valid UTF-8 (an invalid byte becomes U+FFFD), control characters but tab and newline
# dropped (C1 too), at most $2 bytes, cut between characters. Bytes are looked at one by one:
# no regular expression over bytes above 0x7f, no backslash in a gsub replacement (awks differ).
clean() {
  tr -d '\000' <"$1" | awk -v max="$2" '
    BEGIN { n = 0; for (k in ENVIRON) if (k ~ /(_KEY|_TOKEN|_SECRET|_PASSWORD|_PASSWD|_PAT|_URL)$/ && length(ENVIRON[k]) >= 6) s[n++] = ENVIRON[k]
      for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
      bad = sprintf("%c%c%c", 239, 191, 189) }
    function utf8(line,   out, i, n, c, b, k, need, ok) {
      out = ""; n = length(line); i = 1
      while (i <= n) {
        c = ord[substr(line, i, 1)] + 0
        if (c < 128) { if ((c >= 32 && c != 127) || c == 9) out = out substr(line, i, 1); i++; continue }
        need = (c >= 194 && c <= 223) ? 1 : (c >= 224 && c <= 239) ? 2 : (c >= 240 && c <= 244) ? 3 : 0
        ok = need > 0
        for (k = 1; ok && k <= need; k++) {
          b = ord[substr(line, i + k, 1)] + 0
          if (b < 128 || b > 191) ok = 0
          else if (k == 1 && ((c == 224 && b < 160) || (c == 237 && b > 159) || (c == 240 && b < 144) || (c == 244 && b > 143))) ok = 0
        }
        if (!ok) { out = out bad; i++; continue }
        if (!(c == 194 && ord[substr(line, i + 1, 1)] < 160)) out = out substr(line, i, need + 1)
        i += need + 1
      }
      return out
    }
    { line = $0
      for (i = 0; i < n; i++) { out = ""; while ((p = index(line, s[i])) > 0) { out = out substr(line, 1, p - 1) "[redacted]"; line = substr(line, p + length(s[i])) } line = out line }
      # Redacted first, then bounded (a secret cut in two is found by no one).
      if (length(line) > max + 8) line = substr(line, 1, max + 8)
      line = utf8(line)
      out = ""; for (i = 1; i <= length(line); i++) { c = substr(line, i, 1); out = out (c == "`" ? "\047" : c) }
      text = text (NR > 1 ? "\n" : "") out }
    END { if (length(text) > max) { cut = max - 3; while (cut > 0 && ord[substr(text, cut + 1, 1)] >= 128 && ord[substr(text, cut + 1, 1)] < 192) cut--; text = substr(text, 1, cut) "..." }
      printf "%s", text }'
}

# JSON string body of stdin's text: quotes, backslashes and control bytes escaped one byte at a
# time (lines joined by \n); bytes above 0x7f pass as they are (clean made them valid UTF-8).
json() {
  tr -d '\000' | awk 'BEGIN { ORS = ""; for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i; bs = sprintf("%c", 92); q = sprintf("%c", 34) }
    { out = ""
      for (i = 1; i <= length($0); i++) {
        c = substr($0, i, 1); o = ord[c] + 0
        if (c == q || c == bs) out = out bs c
        else if (o == 9) out = out bs "t"
        else if (o < 32 || o == 127) out = out bs sprintf("u%04x", o)
        else out = out c
      }
      printf "%s%s", (NR > 1 ? bs "n" : ""), out }'
}

# A URL curl may take from a config line: no quote, backslash, space or control character.
plain_url() {
  case "$1" in
    http://* | https://*) ;;
    *) return 1 ;;
  esac
  case "$1" in
    *[\"\\\ ]* | *[![:print:]]*) return 1 ;;
  esac
  return 0
}

# POST file $2 to URL $1 (content type $3, then header lines), 10 s at most; the URL reaches curl
# on stdin.
post() {
  plain_url "$1" || { echo "<4>nightshift-alert.sh: a URL that is not a plain http(s) URL: not used" >&2; return 1; }
  command -v curl >/dev/null 2>&1 || { echo "<3>nightshift-alert.sh: curl is not installed: nothing sent (apt-get install curl)" >&2; return 1; }
  u=$1 f=$2 ct=$3
  shift 3
  set -- -H "Content-Type: $ct" "$@"
  printf 'url = "%s"\n' "$u" | curl -sS -f -m 10 -o /dev/null -K - "$@" --data-binary "@$f" 2>"$work/curl"
  rc=$?
  [ $rc -eq 0 ] || echo "<4>nightshift-alert.sh: post failed: $(clean "$work/curl" 300)" >&2
  return $rc
}

reported=no
[ -f "$mark" ] && reported=yes

# The cause, in words: systemd's view of the failed unit, then COMMAND's own failure.
{
  if [ "$mode" = alert ]; then
    echo "unit $unit failed: result=${MONITOR_SERVICE_RESULT:-?} code=${MONITOR_EXIT_CODE:-?} status=${MONITOR_EXIT_STATUS:-?}"
  else
    echo "the watch ($unit) could not run nightshift doctor"
  fi
  if [ $reported = no ]; then
    echo "nightshift itself could not report it (exit $code):"
    # The lines that say why (node's stack frames left out), else the last ones.
    tr -d '\000' <"$work/stderr" | grep -v -E '^[[:space:]]*at |^[[:space:]]*$' >"$work/said"
    grep -i -m 4 -E 'error|cannot|denied|not found|no such|killed' "$work/said" || tail -n 8 "$work/said"
  fi
} >"$work/cause.raw"
clean "$work/cause.raw" 1500 >"$work/cause"

if [ $reported = no ]; then
  hook=${DISCORD_WEBHOOK_URL:-}
  id=$(printf '%s' "$hook" | sed -n 's#^.*/webhooks/\([0-9][0-9]*\)/\([A-Za-z0-9_.-][A-Za-z0-9_.-]*\)/\{0,1\}$#\1#p')
  token=$(printf '%s' "$hook" | sed -n 's#^.*/webhooks/\([0-9][0-9]*\)/\([A-Za-z0-9_.-][A-Za-z0-9_.-]*\)/\{0,1\}$#\2#p')
  if [ -n "$id" ] && [ -n "$token" ]; then
    api=${NIGHTSHIFT_DISCORD_API:-https://discord.com/api}
    api=${api%/}
    host=$(hostname 2>/dev/null || echo '?')
    {
      printf '{"username":"nightshift","allowed_mentions":{"parse":[]},"content":"'
      { printf '**nightshift alarm on %s** (plain: nightshift could not send its own report)\n```\n' "$host"; cat "$work/cause"; printf '\n```'; } | json
      printf '"}'
    } >"$work/discord.json"
    if post "$api/v10/webhooks/$id/$token?wait=true" "$work/discord.json" application/json; then
      echo "<4>nightshift-alert.sh: nightshift could not report ($unit, exit $code): sent a plain alarm to Discord" >&2
    fi
  else
    echo "<3>nightshift-alert.sh: nightshift could not report ($unit, exit $code) and DISCORD_WEBHOOK_URL is not a webhook URL" >&2
  fi
  # The second channel (config webhook.format, copied by `systemd install`).
  wh=${NIGHTSHIFT_WEBHOOK_URL:-}
  if [ -n "$wh" ]; then
    host=$(hostname 2>/dev/null | tr -cd 'A-Za-z0-9._-')
    title="nightshift alarm on ${host:-?}: $(printf '%s' "$unit" | tr -cd 'A-Za-z0-9@._:-')"
    if [ "${NIGHTSHIFT_WEBHOOK_FORMAT:-json}" = ntfy ]; then
      { cat "$work/cause"; printf '\n(plain: nightshift could not send its own report)'; } >"$work/ntfy.txt"
      post "$wh" "$work/ntfy.txt" 'text/plain; charset=utf-8' -H "Title: $title" -H 'Priority: 5' -H 'Tags: rotating_light,alert' \
        && echo "<4>nightshift-alert.sh: nightshift could not report ($unit, exit $code): sent a plain alarm to the webhook (ntfy)" >&2
    else
      {
        printf '{"source":"nightshift","event":"alarm","plain":true,"title":"'; printf '%s' "$title" | json
        printf '","unit":"'; printf '%s' "$unit" | json
        printf '","mode":"%s","exit":%d,"summary":"' "$mode" "$code"; json <"$work/cause"
        printf '"}'
      } >"$work/webhook.json"
      post "$wh" "$work/webhook.json" application/json \
        && echo "<4>nightshift-alert.sh: nightshift could not report ($unit, exit $code): sent a plain alarm to the webhook" >&2
    fi
  elif [ -z "$id" ]; then
    echo "<3>nightshift-alert.sh: no channel to send on (DISCORD_WEBHOOK_URL, NIGHTSHIFT_WEBHOOK_URL): the journal is all there is" >&2
  fi
fi

# The dead-man's check outside the host hears of a failed unit, or of a watch that could not run.
ping=${NIGHTSHIFT_PING_URL:-}
if [ -n "$ping" ] && { [ "$mode" = alert ] || [ $reported = no ]; }; then
  post "${ping%/}/fail" "$work/cause" 'text/plain; charset=utf-8' && echo "nightshift-alert.sh: pinged the monitor: fail" >&2
fi

if [ $reported = yes ]; then exit "$code"; fi
# Not reported by nightshift: the unit fails, so systemctl shows the broken alarm path too.
exit 1
