"""A real S3-compatible server on loopback for the object-storage tests: moto's
standalone server (``moto[server]``), started as its own process on a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

# What pyarrow (and boto3) read to reach it: no real credentials, a loopback endpoint.
ENV = {"AWS_ACCESS_KEY_ID": "fbench", "AWS_SECRET_ACCESS_KEY": "fbench",
       "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
       "AWS_EC2_METADATA_DISABLED": "true"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def s3_server() -> Iterator[str]:
    """Start the server; yield its endpoint URL (``http://127.0.0.1:PORT``); stop it."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                             "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the moto S3 server did not start") from None
                time.sleep(0.2)
        yield endpoint
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextmanager
def s3_env(endpoint: str) -> Iterator[dict[str, str]]:
    """The process environment pointed at ``endpoint`` (restored after); yields it."""
    env = {**ENV, "AWS_ENDPOINT_URL": endpoint}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield {**os.environ}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def make_bucket(endpoint: str, name: str) -> None:
    import boto3

    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                 aws_access_key_id="fbench", aws_secret_access_key="fbench"
                 ).create_bucket(Bucket=name)
