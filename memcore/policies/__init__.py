"""Forgetting policies, registered by name. Adding a policy is one file here."""

from memcore.policies import ebbinghaus as _ebbinghaus  # noqa: F401  (registers)
from memcore.policies import keep_all as _keep_all  # noqa: F401
from memcore.policies import last_write_wins as _last_write_wins  # noqa: F401
from memcore.policies import learned_forget as _learned_forget  # noqa: F401
from memcore.policies.base import POLICIES, NoParams, Policy, Removal, register_policy

__all__ = ["POLICIES", "NoParams", "Policy", "Removal", "register_policy"]
