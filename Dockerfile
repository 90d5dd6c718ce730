# idv-mock as a container: the API on :8080, the hosted form at /, the dashboard at /__admin/ui/.
#   podman build -t idv-mock .        (or docker build; make image)
#   podman run --rm -p 8080:8080 idv-mock --admin-token secret
# BASE may be any Debian-like image with python3 and its venv module (python:3.12-slim, or a
# local Debian base built offline: see tests/test_image.py).
ARG BASE=python:3.12-slim

FROM ${BASE} AS build
COPY pyproject.toml README.md LICENSE /src/
COPY src /src/src
COPY pytest_plugin /src/pytest_plugin
COPY schemas /src/schemas
COPY scenarios /src/scenarios
COPY profiles /src/profiles
RUN python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check /src

FROM ${BASE}
COPY --from=build /opt/venv /opt/venv
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin idv
USER 10001
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1
EXPOSE 8080
# Inside a container the server must bind beyond loopback, so the control API (/__admin, and
# the dashboard) is refused unless the run adds --admin-token TOKEN (or --admin-open).
ENTRYPOINT ["idv-mock", "serve", "--host", "0.0.0.0", "--port", "8080"]
