#!/usr/bin/env bash
# Idempotent environment setup for this repo.
#   - Debian packages for headless EGL rendering (thor_lite) and ffmpeg
#   - .venv (python3.11) with requirements.txt + requirements-nodeps.txt (data-only packages)
# Safe to run repeatedly: each step is skipped when already done.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { echo "[setup_env] $*"; }

# ---------------------------------------------------------------- system packages
APT_PKGS=(libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri ffmpeg)
missing=()
if command -v dpkg >/dev/null 2>&1; then
    for p in "${APT_PKGS[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if ((${#missing[@]})); then
        SUDO=()
        if [[ "$(id -u)" -ne 0 ]]; then
            if command -v sudo >/dev/null 2>&1; then
                SUDO=(sudo)
            else
                log "ERROR: missing system packages (${missing[*]}) and not root / no sudo" >&2
                exit 1
            fi
        fi
        log "installing system packages: ${missing[*]}"
        "${SUDO[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        log "system packages present: ${APT_PKGS[*]}"
    fi
else
    log "WARNING: dpkg not found; not checking system packages (${APT_PKGS[*]})" >&2
fi

# ---------------------------------------------------------------- virtualenv
PY="${PYTHON:-python3.11}"
if [[ ! -x .venv/bin/python ]]; then
    command -v "$PY" >/dev/null 2>&1 || { log "ERROR: $PY not found on PATH" >&2; exit 1; }
    log "creating .venv with $PY"
    "$PY" -m venv .venv
fi

# ---------------------------------------------------------------- python packages
# pip -q still warns about every configured local index folder that is absent; drop
# only those lines.
pip_install() {
    .venv/bin/python -m pip install -q --disable-pip-version-check "$@" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; }
}

STAMP=.venv/.requirements.sha
want="$(cat requirements.txt requirements-nodeps.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
if [[ "$want" == "$have" ]]; then
    log "python packages up to date (requirements.txt sha matches $STAMP)"
else
    log "upgrading pip/wheel/setuptools"
    pip_install --upgrade pip wheel "setuptools<81"
    log "installing requirements.txt (this can take a few minutes the first time)"
    pip_install -r requirements.txt
    log "installing requirements-nodeps.txt without dependencies (scene data for thor_lite)"
    pip_install --no-deps -r requirements-nodeps.txt
    log "installing this repo in editable mode (so 'allenact -b . baseline_configs/...' can import it)"
    pip_install --no-deps --no-build-isolation -e .
    echo "$want" >"$STAMP"
    log "python packages installed"
fi
