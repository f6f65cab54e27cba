"""Forgetting policies, registered by name. Adding a policy is one file here: every
module of this package is imported (in name order), and its ``@register_policy``
registers it; ``pinned.<name>`` wrappers are derived on lookup."""

import importlib
import pkgutil

from memcore.policies.base import POLICIES, NoParams, Policy, Removal, register_policy

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

__all__ = ["POLICIES", "NoParams", "Policy", "Removal", "register_policy"]
