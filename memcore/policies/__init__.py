"""Forgetting policies, registered by name. Adding a policy is one file here."""

from memcore.policies import ebbinghaus as _ebbinghaus  # noqa: F401  (registers)
from memcore.policies import fifo as _fifo  # noqa: F401
from memcore.policies import keep_all as _keep_all  # noqa: F401
from memcore.policies import last_write_wins as _last_write_wins  # noqa: F401
from memcore.policies import learned_forget as _learned_forget  # noqa: F401
from memcore.policies import lethe as _lethe  # noqa: F401
from memcore.policies import lfu as _lfu  # noqa: F401
from memcore.policies import lifo as _lifo  # noqa: F401
from memcore.policies import lru as _lru  # noqa: F401
from memcore.policies import ttl as _ttl  # noqa: F401
from memcore.policies import window as _window  # noqa: F401
from memcore.policies.base import POLICIES, NoParams, Policy, Removal, register_policy

# isort: off
# Keep last: pinned.py registers a pinned.<name> wrapper for every policy imported above.
from memcore.policies import pinned as _pinned  # noqa: F401
# isort: on

__all__ = ["POLICIES", "NoParams", "Policy", "Removal", "register_policy"]
