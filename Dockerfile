# The server image. Stage 1 builds the web UI; stage 2 installs the Python package in place
# (editable, from the lock file), so the server finds the UI bundle at /app/frontend/dist and the examples at
# /app/examples, as in a checkout. docker-compose.yml runs it as replicas on PostgreSQL.
FROM node:20-slim AS ui
WORKDIR /app/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
# Exactly the versions of backend/uv.lock (the server's, without the dev extra).
COPY backend/pyproject.toml backend/uv.lock backend/
COPY backend/src backend/src
RUN pip install --no-cache-dir 'uv==0.13.9' \
    && cd backend && UV_PROJECT_ENVIRONMENT=/usr/local uv sync --locked --inexact --no-cache --quiet --compile-bytecode \
    && python -m compileall -q src > /dev/null
COPY examples examples
COPY --from=ui /app/frontend/dist frontend/dist
# Not root; /data holds the registry and, on SQLite, the run store and its journal.
RUN useradd --system --uid 10001 --home-dir /data dt && mkdir -p /data && chown dt /data
USER dt
ENV HOST=0.0.0.0 PORT=8000 DATA_DIR=/data/state REGISTRY_CONFIG_PATH=/data/registry/config.yaml
EXPOSE 8000
CMD ["dynamic-tools", "serve"]
