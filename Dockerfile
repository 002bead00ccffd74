# CPU image: thor_lite (no GPU, no Unity), the test suite and the main job.
#
#   docker build -t thor-lite-rearrange .
#   docker run --rm thor-lite-rearrange                                   # bash scripts/run_tests.sh
#   docker run --rm thor-lite-rearrange bash scripts/run_tests.sh -x tests/test_render.py
#   docker run --rm -v "$PWD/out:/app/out" thor-lite-rearrange bash scripts/run_main.sh
#
# Build arguments:
#   BASE_IMAGE       any Debian/Ubuntu image with python3.11 on PATH (default: the official
#                    python:3.11-slim-bookworm)
#   TORCH_INDEX_URL  extra pip index for torch 2.14.1 / torchvision 0.29.1. Default: the PyTorch
#                    CPU index, whose +cpu wheels pip prefers over PyPI's (PyPI's Linux torch
#                    2.14.1 is the CUDA 13.0 build and pulls ~3 GB of nvidia-* wheels). Pass
#                    --build-arg TORCH_INDEX_URL= to take torch from PyPI like scripts/setup_env.sh.
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 \
    PYTHONUNBUFFERED=1 \
    LP_NUM_THREADS=0

# The packages scripts/setup_env.sh checks for (EGL/Mesa for thor_lite, ffmpeg for GIFs), and git
# for the snapshot below.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri ffmpeg git ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# Dependencies first, so this layer is reused when only the code changes. These are all the
# files scripts/setup_env.sh reads (it hashes requirements*.txt and pyproject.toml into its stamp).
COPY requirements.txt requirements-nodeps.txt pyproject.toml ./
COPY scripts/setup_env.sh scripts/
RUN env ${TORCH_INDEX_URL:+PIP_EXTRA_INDEX_URL="$TORCH_INDEX_URL"} bash scripts/setup_env.sh

COPY . .
# setup_env.sh above installed the repo in editable mode before its packages were here, and skips
# that step now (its stamp matches), so redo the editable install against the full tree. Then make
# /app a one-commit git repository (.git is not copied; see .dockerignore).
RUN .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e . \
 && bash scripts/setup_env.sh \
 && git init -q \
 && git add -A \
 && git -c user.name=image -c user.email=image@localhost commit -q -m "image build context"

CMD ["bash", "scripts/run_tests.sh"]
