FROM python:3.11-slim-bookworm

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 \
    LP_NUM_THREADS=0

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri ffmpeg git \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# Dependencies first, so this layer is reused when only the code changes.
COPY requirements.txt ./
COPY scripts/setup_env.sh scripts/
RUN bash scripts/setup_env.sh
COPY . .
RUN bash scripts/setup_env.sh

CMD ["bash", "scripts/run_tests.sh"]
