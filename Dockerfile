FROM python:3.11-slim
WORKDIR /app
COPY backend/pyproject.toml backend/pyproject.toml
COPY backend/src backend/src
COPY examples examples
RUN pip install --no-cache-dir ./backend
EXPOSE 8000
CMD ["dynamic-tools", "serve"]
