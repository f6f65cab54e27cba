"""keep_all: never forgets; the hoarding baseline."""

from memcore.policies.base import Policy, register_policy


@register_policy("keep_all")
class KeepAll(Policy):
    description = "Never forgets; every entry ranks at strength 1."
