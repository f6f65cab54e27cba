"""The ``fbench`` command line (Typer): thin commands over the harness's steps. Each
module registers its commands on ``app``."""

from runner.cli.arrow_pool import configure

configure()  # Arrow's pool, before any command module loads pyarrow

from runner.cli import board as _board  # noqa: E402, F401  (registers)
from runner.cli import calibrate as _calibrate  # noqa: E402, F401  (registers)
from runner.cli import check as _check  # noqa: E402, F401  (registers)
from runner.cli import explain as _explain  # noqa: E402, F401  (registers)
from runner.cli import job as _job  # noqa: E402, F401  (registers)
from runner.cli import listing as _listing  # noqa: E402, F401  (registers)
from runner.cli import results as _results  # noqa: E402, F401  (registers)
from runner.cli import trace as _trace  # noqa: E402, F401  (registers)
from runner.cli import train as _train  # noqa: E402, F401  (registers)
from runner.cli.app import app, main  # noqa: E402

__all__ = ["app", "main"]
