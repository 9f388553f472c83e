#!/usr/bin/env bash
# Build the web explorer's bundle (packages/polyg-server/ui-src) into
# packages/polyg-server/src/polyg_server/ui/static/, which ships in the polyg-server wheel.
# Needs Node.js >= 18 and npm; installs exactly what package-lock.json pins.
set -euo pipefail
cd "$(dirname "$0")/../packages/polyg-server/ui-src"
npm ci --no-audit --no-fund
npm run build
