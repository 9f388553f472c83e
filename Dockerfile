# polyg-mcp: the MCP server over Streamable HTTP, talking to a FalkorDB server.
# Base image and uv pinned, so a rebuild installs what was tested (.dockerignore keeps
# the build context to what is copied below).
FROM python:3.12.12-slim-bookworm AS build
RUN pip install --no-cache-dir uv==0.13.9
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
COPY src ./src
COPY packages ./packages
# The polyg-mcp application and what it needs; not the benchmarks (polyg-bench).
# Bytecode compiled here: the runtime user cannot write __pycache__ into /app/.venv, and
# compiling every module from source on each start doubles the start-up time.
RUN uv sync --frozen --no-dev --no-editable --compile-bytecode

FROM python:3.12.12-slim-bookworm
RUN useradd --create-home --uid 10001 polyg
COPY --from=build /app/.venv /app/.venv
ENV PATH="/app/.venv/bin:$PATH" \
    POLYG_HOST=0.0.0.0 \
    POLYG_PORT=3000 \
    POLYG_DATA_DIR=/home/polyg/data
USER polyg
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:3000/health', timeout=4).status == 200 else 1)"
CMD ["polyg-mcp", "--http"]
