#!/usr/bin/env bash
# Entry point of Dockerfile.cuda.
#   docker run IMAGE <config.py> [allenact flags]   -> allenact -b /app <config.py> [flags]
#   docker run IMAGE -o out/x <config.py> ...       -> the same (arguments starting with "-")
#   docker run IMAGE bash | python ... | <command>  -> that command
# THOR_XVFB=1 starts a virtual X server (:99, software GL) first when no X socket is mounted, so
# THOR's Linux64 build can run without a GPU X server; CloudRendering needs no X at all.
set -euo pipefail
cd /app

if [[ "${THOR_XVFB:-0}" == 1 ]] && ! compgen -G "/tmp/.X11-unix/X*" >/dev/null; then
    Xvfb :99 -screen 0 1280x1024x24 -nolisten tcp >/tmp/xvfb.log 2>&1 &
    for _ in $(seq 50); do [[ -S /tmp/.X11-unix/X99 ]] && break; sleep 0.2; done
    [[ -S /tmp/.X11-unix/X99 ]] || { echo "[entrypoint] Xvfb did not start (see /tmp/xvfb.log)" >&2; exit 1; }
    export DISPLAY=:99
    echo "[entrypoint] started Xvfb on :99 (software rendering)" >&2
fi

case "${1:-}" in
    "" | -* | *.py) exec /app/.venv/bin/allenact -b /app "$@" ;;
    *) exec "$@" ;;
esac
