# gputop's image: the wheel built from this tree in a first stage, installed alone in a
# slim Python; `gputop serve` by default (the DaemonSet in contrib/kubernetes/base).
#   docker build -t gputop:0.1.0 .
#   docker build -t gputop:0.1.0-ebpf --build-arg EBPF=1 .   (bcc, for --ebpf)
# The NVIDIA container runtime mounts libnvidia-ml.so.1 at run time: nothing of the driver
# is in the image. docs/containers.md has the docker run and kubectl commands.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gputop ./gputop
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
ARG EBPF=0
# bcc from Debian (its Python package is pure Python over libbcc; gputop imports it from
# /usr/lib/python3/dist-packages); versions follow the base image's Debian release
# hadolint ignore=DL3008
RUN if [ "$EBPF" = "1" ]; then \
        apt-get update && \
        apt-get install -y --no-install-recommends python3-bpfcc && \
        rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /wheels /wheels
# with the serve extra (PyYAML, bcrypt): the image is an exporter, --web-config included;
# the versions are the ranges the wheel's metadata declares
# hadolint ignore=DL3013
RUN for wheel in /wheels/*.whl; do pip install --no-cache-dir "${wheel}[serve]"; done && \
    rm -rf /wheels
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=utility
EXPOSE 9464
ENTRYPOINT ["gputop"]
CMD ["serve", "--listen", ":9464"]
