#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed (for the browser tests, packages/adapter-http/test/*.browser.test.ts: the
# docs page, the widget and the hosted pages), installing it as root when missing, like .ci/postgres.sh does for
# PostgreSQL.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then echo "Chromium missing; install Debian's chromium (apt-get install -y chromium)" >&2; exit 1; fi
echo "installing Chromium (Debian package)…" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
