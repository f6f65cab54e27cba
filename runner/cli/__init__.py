"""The ``fbench`` command line (Typer): thin commands over the harness's steps. Each
module registers its commands on ``app``."""

from runner.cli import calibrate as _calibrate  # noqa: F401  (registers)
from runner.cli import check as _check  # noqa: F401  (registers)
from runner.cli import explain as _explain  # noqa: F401  (registers)
from runner.cli import job as _job  # noqa: F401  (registers)
from runner.cli import listing as _listing  # noqa: F401  (registers)
from runner.cli import results as _results  # noqa: F401  (registers)
from runner.cli import trace as _trace  # noqa: F401  (registers)
from runner.cli import train as _train  # noqa: F401  (registers)
from runner.cli.app import app, main

__all__ = ["app", "main"]
