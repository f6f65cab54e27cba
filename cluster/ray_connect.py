"""Starting the embedded Ray on loopback, and connecting to a cluster (shipping what
its workers need); ``ray`` is imported only inside these functions."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from cluster.base import ExecutorError

CONNECT_TIMEOUT_S = 5.0   # TCP probe of a cluster address before ray.init
RAY_CLIENT_PORT = 10001
QUIET_LOGGERS = ("ray", "ray._private.authentication.authentication_token_setup")



def _quiet() -> None:
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def _loopback_node() -> Iterator[None]:
    """While Ray starts, take 127.0.0.1 as this node's address.

    ``ray.init`` rewrites a loopback ``_node_ip_address`` (or ``127.0.0.1:PORT``) to the
    machine's outward IP, and then listens on every interface. Its single-node switch
    (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, read once at import) keeps it on loopback;
    this sets the constant it reads for the duration of the call.
    """
    try:
        from ray._private import ray_constants
    except ImportError:  # a future Ray without it: default binding, token auth still on
        yield
        return
    old = getattr(ray_constants, "ENABLE_RAY_CLUSTER", True)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = old


def start_local_ray(num_cpus: int | None = None) -> bool:
    """Start the embedded single-node Ray on loopback; False if Ray was already up.

    Its workers run at normal priority, like the inline executor (Ray nices them to 15
    by default, which on a busy machine leaves them a fraction of a core)."""
    import ray

    if ray.is_initialized():
        return False
    _quiet()
    with _loopback_node():
        ray.init(
            address="local",
            num_cpus=os.cpu_count() if num_cpus is None else num_cpus,
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=False,
            _node_ip_address="127.0.0.1",
            _system_config={"worker_niceness": 0},
        )
    return True


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _reachable(host: str, port: int, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# HTTP/2's client connection preface and an empty SETTINGS frame: a gRPC server (Ray's
# GCS, the Ray client server) answers with a SETTINGS frame of its own
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4


def _speaks_grpc(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether the server at ``host:port`` answers HTTP/2's preface with a SETTINGS frame,
    as every gRPC server does: a port that accepts connections but is not Ray fails here
    in at most ``timeout`` instead of ``ray.init``'s long retries. (Skipped under
    ``RAY_USE_TLS``: a TLS server answers a clear-text preface with nothing useful.)"""
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return True
    try:
        with socket.create_connection((host, port), timeout=timeout) as conn:
            conn.settimeout(timeout)
            conn.sendall(_H2_PREFACE)
            head = b""
            while len(head) < 9:
                chunk = conn.recv(9 - len(head))
                if not chunk:
                    break
                head += chunk
    except OSError:
        return False
    return len(head) == 9 and head[3] == _H2_SETTINGS and head[5:9] == bytes(4)


def _host_port(address: str) -> tuple[str, int]:
    """The (host, port) a cluster address names; ``auto`` is looked up like Ray does."""
    if address.startswith("ray://"):
        rest = address[len("ray://"):].split("/", 1)[0]
        host, _, port = rest.rpartition(":") if ":" in rest else (rest, "", str(RAY_CLIENT_PORT))
    elif address == "auto":
        from ray._private.services import canonicalize_bootstrap_address_or_die

        try:
            found = canonicalize_bootstrap_address_or_die("auto")
        except ConnectionError:
            raise ExecutorError(
                "no running Ray cluster found for --address auto: start one with "
                "`ray start --head` or omit --address") from None
        host, _, port = found.rpartition(":")
    else:
        host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise ExecutorError(
            f"bad Ray address {address!r}: give auto, HOST:PORT or ray://HOST:PORT")
    return host, int(port)


def _outward_ip() -> str | None:
    """The address Ray substitutes for 127.0.0.1 when it connects."""
    try:
        from ray._private.services import get_node_ip_address

        return str(get_node_ip_address())
    except Exception:
        return None


def connect(address: str, ship: Sequence[str] = (), env: dict[str, str] | None = None) -> bool:
    """Connect to an existing cluster, shipping ``ship`` (package folders or module
    files) with the job as ``py_modules``; False if this process was already connected
    to it (then leave the connection up). ``env``: the workers' environment variables."""
    host, port = _host_port(address)
    if not _reachable(host, port):
        where = address if address != "auto" else f"{host}:{port} (found by auto)"
        raise ExecutorError(
            f"cannot reach Ray at {where}: start a cluster with `ray start --head` "
            "or omit --address")
    if not _speaks_grpc(host, port):
        raise ExecutorError(
            f"{host}:{port} answers but is not a Ray cluster (no gRPC there): give the "
            "head node's GCS port (`ray start --head` prints it; 6379 by default)")
    import ray

    # Ray connects to the outward IP for 127.0.0.1; a cluster started on loopback only
    # (single node) is reachable solely at 127.0.0.1, so keep the address as given.
    loopback = _is_loopback(host) and not address.startswith("ray://")
    outward = _outward_ip() if loopback else None
    keep_loopback = loopback and (outward is None or not _reachable(outward, port))
    if ray.is_initialized():
        current = ray.get_runtime_context().gcs_address
        if current in {f"{host}:{port}", f"{outward}:{port}"}:
            return False  # already connected to it (a notebook, a test): reuse, leave up
        raise ExecutorError(
            f"Ray is already initialised in this process (at {current}); cannot also "
            f"connect to {address}")
    _quiet()
    _token_auth_if_available()
    runtime_env: dict[str, Any] = {"py_modules": list(ship),
                                   "excludes": ["__pycache__", "*.pyc"]}
    if env:
        runtime_env["env_vars"] = dict(env)
    try:
        if keep_loopback:
            with _loopback_node():
                ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                         logging_level=logging.WARNING, _node_ip_address="127.0.0.1")
        else:
            ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                     logging_level=logging.WARNING)
    except Exception as exc:  # ConnectionError, AuthenticationError, RuntimeError...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        hint = ("; if the cluster uses token auth, set RAY_AUTH_MODE=token and its token "
                "(~/.ray/auth_token or RAY_AUTH_TOKEN)") if "auth" in str(exc).lower() or (
                isinstance(exc, ConnectionError)) else ""
        raise ExecutorError(f"cannot connect to Ray at {address}: {first}{hint}") from None
    return True


def _token_auth_if_available() -> None:
    """Use token auth when a token is at hand and RAY_AUTH_MODE is unset, as Ray itself
    does for ``auto`` (a driver with a token also talks to a cluster without auth)."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


